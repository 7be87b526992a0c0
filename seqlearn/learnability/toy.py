r"""An exactly solvable learnability window: a bank of leaky units and :math:`\alpha`-stable evidence.

A bank of :math:`H` leaky linear units with write rates :math:`s_q` (time scales
:math:`\tau_q = -1/\ln(1 - s_q)`) keeps :math:`(1 - s_q)^\ell` of an input for :math:`\ell` steps;
its envelope, normalised to :math:`f(0) = 1`, is

.. math:: f(\ell) = \frac1H \sum_q (1 - s_q)^\ell

(:func:`~seqlearn.learnability.effective_rates.spectrum_envelope`). Each sample of lag-:math:`\ell`
evidence is :math:`m f(\ell) + \sigma X` with :math:`X` symmetric :math:`\alpha`-stable of unit scale,
so the mean of :math:`N` samples is :math:`m f(\ell) + \sigma N^{-1/\kappa_\alpha} S`,
:math:`\kappa_\alpha = \alpha/(\alpha - 1)`, :math:`S` again unit S\ :math:`\alpha`\ S. The lag is
*detected* at :math:`N` when the mean has the sign of :math:`m` in at least a fraction :math:`p`
(``coverage``) of :math:`R` independent replicates: the direction a gradient step on this evidence
takes is the right one with probability :math:`p`. The rule uses neither :math:`\sigma` nor
:math:`\alpha`; the theory follows from the concentration alone,

.. math::
    P_{det}(\ell, N) = F_S\big(m f(\ell)\, N^{1/\kappa_\alpha}/\sigma\big), \qquad
    N_{req}(\ell) = C f(\ell)^{-\kappa_\alpha}, \quad C = (\sigma q_p / m)^{\kappa_\alpha},

with :math:`q_p` the :math:`p`-quantile of :math:`S` (:func:`sign_quantile`): the master law, which
is the SNR rule of :mod:`~seqlearn.learnability.window` with :math:`\varepsilon = q_p` on the true
:math:`m f` and :math:`\sigma`. So :math:`\log N_{req}` on :math:`-\kappa_\alpha\log f` has slope 1
(slope :math:`\kappa_\alpha/\alpha = 1/(\alpha - 1)` on :math:`-\alpha\log f`), and for one time scale,
:math:`f = e^{-\ell/\tau}`, the window is :math:`H_N = (\tau/\kappa_\alpha)\ln(N/C)`
(:func:`~seqlearn.learnability.window.window_exponential`). :func:`toy_detection` measures all of it
by sampling. SciPy loads only for the theory (:func:`sign_quantile`, ``ToyDetection.theory``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import generator, int_array, integer, real, real_array
from .effective_rates import spectrum_envelope
from .fits import LineFit, fit_line
from .stable import kappa, sample_stable
from .window import learnability_window, required_samples

__all__ = ["bank_envelope", "sign_quantile", "ToyDetection", "toy_detection"]

REPLICATE_CHUNK = 64  # replicates drawn at a time: memory ~ REPLICATE_CHUNK * max(N_grid) floats


def bank_envelope(s, lags) -> np.ndarray:
    r"""The bank's normalised envelope :math:`f(\ell) = \frac1H \sum_q (1 - s_q)^\ell`, ``(n_lags,)``.

    ``s`` ``(H,)``: the write rates, each in (0, 1); ``lags`` ``(n_lags,)``, each >= 1.
    """
    s = real_array(s, "s", ndim=1)
    return spectrum_envelope(s, lags, lr=1.0 / max(s.size, 1))


def sign_quantile(alpha, coverage=0.9) -> float:
    r""":math:`q_p`, the ``coverage`` quantile :math:`p` of a unit S\ :math:`\alpha`\ S (:math:`\alpha = 2`:
    :math:`\sqrt2\,\Phi^{-1}(p)`, a Gaussian of variance 2). By SciPy's ``levy_stable``."""
    from scipy.stats import levy_stable

    a, p = real(alpha, "alpha", low=1.0, high=2.0, low_open=True), _coverage(coverage)
    return float(levy_stable.ppf(p, a, 0.0))


def _coverage(coverage) -> float:
    return real(coverage, "coverage", low=0.5, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True, eq=False)
class ToyDetection:
    r"""What :func:`toy_detection` measured, with the closed forms beside it.

    Attributes
    ----------
    s : ``(H,)`` the write rates;  lags : ``(L,)``;  f : ``(L,)`` :func:`bank_envelope`
    N_grid : ``(K,)`` sorted sample sizes
    alpha, m, sigma, coverage : the evidence :math:`m f + \sigma X` and the detection level :math:`p`
    replicates : :math:`R`
    p_detect : ``(L, K)`` fraction of replicates whose mean of :math:`N` samples has the sign of :math:`m`
    N_req : ``(L,)`` smallest grid :math:`N` with ``p_detect >= coverage`` (-1: none on the grid)
    """

    s: np.ndarray
    lags: np.ndarray
    f: np.ndarray
    N_grid: np.ndarray
    alpha: float
    m: float
    sigma: float
    coverage: float
    replicates: int
    p_detect: np.ndarray
    N_req: np.ndarray

    @property
    def kappa(self) -> float:
        r""":math:`\kappa_\alpha = \alpha/(\alpha - 1)`."""
        return kappa(self.alpha)

    @property
    def tau(self) -> np.ndarray:
        r"""The units' time scales :math:`\tau_q = -1/\ln(1 - s_q)`, ``(H,)``."""
        return -1.0 / np.log1p(-self.s)

    def constant(self) -> float:
        r""":math:`C = (\sigma q_p/m)^{\kappa_\alpha}` of :math:`N_{req} = C f^{-\kappa_\alpha}` (SciPy)."""
        return (self.sigma * sign_quantile(self.alpha, self.coverage) / self.m) ** self.kappa

    def theory(self) -> np.ndarray:
        r"""The exact :math:`P_{det}(\ell, N) = F_S(m f(\ell) N^{1/\kappa_\alpha}/\sigma)`, ``(L, K)``.

        By SciPy's ``levy_stable.cdf``, which integrates numerically for :math:`\alpha < 2`: about
        0.13 ms of CPU a point (0.7 s for 80 lags by 70 sample sizes), 4 us at :math:`\alpha = 2`.
        """
        from scipy.stats import levy_stable

        snr = self.m * self.f[:, None] * self.N_grid[None, :] ** (1.0 / self.kappa) / self.sigma
        return levy_stable.cdf(snr, self.alpha, 0.0)

    def window(self) -> np.ndarray:
        r"""The measured window :math:`H_N = \max\{\ell : 0 < N_{req}(\ell) \le N\}` at each grid ``N``, ``(K,)``."""
        return learnability_window(self.lags, self.N_req, self.N_grid)

    def window_theory(self) -> np.ndarray:
        r""":math:`H_N` on the same grids from :math:`N^* = C f^{-\kappa_\alpha}`
        (:func:`~seqlearn.learnability.window.required_samples` with :math:`\varepsilon = q_p`), ``(K,)``."""
        eps = sign_quantile(self.alpha, self.coverage)
        N_req = required_samples(self.m * self.f, self.alpha, self.sigma, self.N_grid, eps)
        return learnability_window(self.lags, N_req, self.N_grid)

    def master_law(self, exponent: float | None = None) -> LineFit:
        r""":math:`\log N_{req}` on :math:`-k\log f`, :math:`k` = ``exponent`` (default :math:`\kappa_\alpha`): slope 1.

        Lags enter when :math:`N_{req}` lies inside the grid: not -1, and above its first point (a
        lag detected at the smallest :math:`N` says only that :math:`N^* \le \min\mathcal N`). At
        least 2 distinct values are needed (else ``ValueError``).
        """
        k = self.kappa if exponent is None else real(exponent, "exponent", low=0.0, low_open=True)
        inside = self.N_req > self.N_grid[0]
        if np.unique(self.N_req[inside]).size < 2:
            raise ValueError(
                f"fewer than 2 distinct N_req inside the grid ({int(inside.sum())} lags): widen N_grid or the lags"
            )
        return fit_line(-k * np.log(self.f[inside]), np.log(self.N_req[inside]))


def _positive_means(noise_means: np.ndarray, m_f: np.ndarray) -> np.ndarray:
    r"""Fraction of replicates with :math:`m f(\ell) + \bar\xi_N > 0`, ``(L, K)``.

    ``noise_means`` ``(R, K)``: :math:`\bar\xi_N` per replicate and grid :math:`N`; ``m_f`` ``(L,)``.
    """
    R, K = noise_means.shape
    ordered = np.sort(noise_means, axis=0)  # (R, K)
    below = np.stack([np.searchsorted(ordered[:, k], -m_f, side="right") for k in range(K)], axis=1)  # (L, K)
    return 1.0 - below / R


def _noise_means(alpha: float, sigma: float, N_grid: np.ndarray, R: int, rng) -> np.ndarray:
    r"""Means of the first :math:`N` of :math:`\max\mathcal N` draws :math:`\sigma X`, per replicate: ``(R, K)``."""
    N_max, rows = int(N_grid[-1]), []
    for start in range(0, R, REPLICATE_CHUNK):
        r = min(REPLICATE_CHUNK, R - start)
        draws = sample_stable(alpha, r * N_max, sigma, rng).reshape(r, N_max)
        rows.append(np.cumsum(draws, axis=1)[:, N_grid - 1] / N_grid)
    return np.concatenate(rows)


def toy_detection(s, lags, N_grid, alpha, m=1.0, sigma=1.0, *, replicates=400, coverage=0.9, rng=0) -> ToyDetection:
    r"""Detection probability, :math:`N_{req}(\ell)` and :math:`H_N` of the leaky bank, by sampling.

    For each of :math:`R` replicates, :math:`\max\mathcal N` draws :math:`\sigma X_i`
    (:func:`~seqlearn.learnability.stable.sample_stable`) give the noise means at every grid
    :math:`N` by one cumulative sum; one set of draws serves every lag (lag :math:`\ell`'s samples
    are :math:`m f(\ell) + \sigma X_i`), so each lag's detection is exact in distribution and
    :math:`N_{req}` falls as :math:`f` grows. Cost: :math:`R \max\mathcal N` draws, 0.2 s of one
    core for :math:`R = 400`, :math:`\max\mathcal N = 10^4` (80 lags, 70 sample sizes).

    Parameters
    ----------
    s : ``(H,)`` write rates in (0, 1).
    lags : ``(L,)`` integers >= 1.
    N_grid : ``(K,)`` sample sizes >= 1 (sorted and made unique here).
    alpha : float in (1, 2];  m, sigma : floats > 0.
    replicates : int >= 10, :math:`R`.
    coverage : float in (0.5, 1), the detection level :math:`p` (0.5 is chance).
    rng : numpy.random.Generator, int seed or None.

    Returns
    -------
    ToyDetection
    """
    lags = int_array(lags, "lags", ndim=1, low=1)
    f = bank_envelope(s, lags)
    N_grid = np.unique(int_array(N_grid, "N_grid", ndim=1, low=1))
    if N_grid.size == 0:
        raise ValueError("N_grid must hold at least one sample size")
    a, p = real(alpha, "alpha", low=1.0, high=2.0, low_open=True), _coverage(coverage)
    m, sigma = real(m, "m", low=0.0, low_open=True), real(sigma, "sigma", low=0.0, low_open=True)
    R = integer(replicates, "replicates", low=10)
    p_detect = _positive_means(_noise_means(a, sigma, N_grid, R, generator(rng)), m * f)  # (L, K)
    hit = p_detect >= p
    N_req = np.where(hit.any(axis=1), N_grid[hit.argmax(axis=1)], -1)
    return ToyDetection(real_array(s, "s", ndim=1), lags, f, N_grid, a, m, sigma, p, R, p_detect, N_req)
