r"""Detectability of lagged gradient signal and the learnability window :math:`H_N` (Livi, arXiv 2512.05790).

Lag :math:`\ell`'s evidence is a statistic of mean :math:`m_\ell` with S\ :math:`\alpha`\ S
fluctuations of scale :math:`\sigma_\ell`. The mean of :math:`N` samples estimates it with error
:math:`\sigma N^{-1/\kappa_\alpha} S`, :math:`\kappa_\alpha = \alpha/(\alpha - 1)`, hence

.. math::

    \mathrm{SNR}(\ell, N) = \frac{|m_\ell|\, N^{1 - 1/\alpha_\ell}}{\sigma_\ell}, \qquad
    N_{req}(\ell) = \min\{N \in \mathcal N : \mathrm{SNR}(\ell, N) > \varepsilon\}, \qquad
    H_N = \max\{\ell : 0 < N_{req}(\ell) \le N\}.

With an envelope :math:`f(\ell)` and :math:`N(\ell) = C f(\ell)^{-\kappa_\alpha}` (the master law),
:math:`H_N = f^{-1}((C/N)^{1/\kappa_\alpha})`: logarithmic, polynomial or exponential in :math:`N`
for exponential, power-law or logarithmic envelopes. NumPy only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..guard import reference
from ..validation import generator, int_array, integer, probability, real, real_array
from .stable import kappa, sample_stable

__all__ = [
    # detectability
    "snr",
    "required_samples",
    "required_samples_continuous",
    "learnability_window",
    # closed forms
    "window_exponential",
    "window_power",
    "window_logarithmic",
    # the master law by Monte Carlo
    "MasterLaw",
    "master_law_monte_carlo",
]


def _alphas(alpha, name: str = "alpha") -> np.ndarray:
    a = real_array(alpha, name)
    if a.size and (a.min() <= 1.0 or a.max() > 2.0):
        bad = a.min() if a.min() <= 1.0 else a.max()
        raise ValueError(f"{name} must hold values in (1, 2], got {bad:g}")
    return a


def _positive(x, name: str) -> np.ndarray:
    arr = real_array(x, name)
    if arr.size and arr.min() <= 0.0:
        raise ValueError(f"{name} must hold values > 0, got {arr.min():g}")
    return arr


def _statistics(mean, alpha, sigma) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(|m|, alpha, sigma)`` broadcast to one shape ``S`` (the lags)."""
    m = np.abs(real_array(mean, "mean"))
    a, s = _alphas(alpha), _positive(sigma, "sigma")
    try:
        return np.broadcast_arrays(m, a, s)  # type: ignore[return-value]
    except ValueError:
        raise ValueError(f"mean, alpha and sigma must broadcast, got shapes {m.shape}, {a.shape}, {s.shape}") from None


def snr(mean, alpha, sigma, N) -> np.ndarray:
    r"""Signal-to-noise ratio :math:`|m|\, N^{1 - 1/\alpha} / \sigma = |m| N^{1/\kappa_\alpha}/\sigma`.

    Parameters
    ----------
    mean, alpha, sigma : arrays broadcasting to one shape ``S`` (e.g. ``(L,)`` lags): the sample
        mean :math:`\bar m_\ell`, the tail index :math:`\alpha_\ell \in (1, 2]` and the scale
        :math:`\sigma_\ell > 0` of each lag's statistic.
    N : sample sizes, array ``(K,)`` or a scalar (``> 0``).

    Returns
    -------
    numpy.ndarray, shape ``S + N.shape`` (``(L, K)`` for lags and a grid).
    """
    m, a, s = _statistics(mean, alpha, sigma)
    N = _positive(N, "N")
    extra = (...,) + (None,) * N.ndim  # append N's axes to the lags'
    return m[extra] * N ** (1.0 - 1.0 / a[extra]) / s[extra]


def required_samples(mean, alpha, sigma, N_grid, eps) -> np.ndarray:
    r""":math:`N_{req}(\ell) = \min\{N \in \mathcal N : \mathrm{SNR}(\ell, N) > \varepsilon\}`, ``-1`` where none.

    Read off the SNR formula, not by resampling: the grid may exceed the number of samples the
    statistics came from, and a lax :math:`\varepsilon` then declares noise detectable (keep
    :math:`\max \mathcal N \lesssim 2n` and :math:`\varepsilon \gtrsim 5`--20; the paper's late runs
    use :math:`\varepsilon = 20`).

    Parameters
    ----------
    mean, alpha, sigma : as in :func:`snr`, shape ``S``.
    N_grid : array ``(K,)`` of integers >= 1 (any order).
    eps : float > 0, the threshold :math:`\varepsilon`.

    Returns
    -------
    numpy.ndarray of int64, shape ``S``.
    """
    N_grid = int_array(N_grid, "N_grid", ndim=1, low=1)
    if N_grid.size == 0:
        raise ValueError("N_grid must hold at least one sample size")
    eps = real(eps, "eps", low=0.0, low_open=True)
    detected = snr(mean, alpha, sigma, N_grid) > eps  # S + (K,)
    N_or_inf = np.where(detected, N_grid.astype(np.float64), np.inf).min(axis=-1)  # S
    return np.where(np.isfinite(N_or_inf), N_or_inf, -1).astype(np.int64)


def required_samples_continuous(mean, alpha, sigma, eps) -> np.ndarray:
    r"""The continuous :math:`N^*(\ell) = (\varepsilon\sigma_\ell/|m_\ell|)^{\kappa_{\alpha_\ell}}` (inf where m = 0).

    The root of :math:`\mathrm{SNR}(\ell, N) = \varepsilon`; :math:`N_{req}` is the first grid point
    above it. Shapes as in :func:`snr`, without ``N``.
    """
    m, a, s = _statistics(mean, alpha, sigma)
    eps = real(eps, "eps", low=0.0, low_open=True)
    with np.errstate(divide="ignore"):
        return (eps * s / m) ** (a / (a - 1.0))


@reference
def learnability_window(lags, N_req, N):
    r"""The learnability window :math:`H_N = \max\{\ell : 0 < N_{req}(\ell) \le N\}` (0 if no lag qualifies).

    The set of qualifying lags need not be contiguous: a long lag with a small :math:`N_{req}`
    counts even if a shorter one is undetectable (``-1``) or needs more samples.

    Parameters
    ----------
    lags : array ``(L,)`` of integers >= 1.
    N_req : array ``(L,)`` of integers, ``-1`` (or 0) where the lag is never detectable.
    N : int, or array ``(K,)`` of sample sizes.

    Returns
    -------
    int for a scalar ``N``; numpy.ndarray of int64, shape ``(K,)``, for an array.
    """
    lags = int_array(lags, "lags", ndim=1, low=1)
    N_req = int_array(N_req, "N_req", ndim=1, shape=(lags.size,), low=-1)
    N_arr = real_array(N, "N", ndim=(0, 1))
    ok = (N_req[:, None] > 0) & (N_req[:, None] <= N_arr.reshape(-1)[None, :])  # (L, K)
    H_N = np.where(ok, lags[:, None], 0).max(axis=0, initial=0)  # (K,)
    return int(H_N[0]) if N_arr.ndim == 0 else H_N.astype(np.int64)


# --- closed forms (A = C = 1 by default) --------------------------------------------------------


def _closed_form_args(N, alpha, A, C) -> tuple[np.ndarray, float, float, float]:
    return _positive(N, "N"), kappa(alpha), real(A, "A", low=0.0, low_open=True), real(C, "C", low=0.0, low_open=True)


@reference
def window_exponential(N, tau, alpha, A=1.0, C=1.0):
    r""":math:`H_N` for an exponential envelope :math:`f(\ell) = A e^{-\ell/\tau}` (logarithmic in :math:`N`).

    .. math:: H_N = \tau\,[\ln A + \kappa_\alpha^{-1} \ln(N/C)] = (\tau/\kappa_\alpha) \ln N + \text{const},

    from :math:`C f(\ell)^{-\kappa_\alpha} \le N`; 0 where that bound is negative. ``N`` scalar or
    array; the result has its shape. Example: :math:`\tau = 20`, :math:`N = 10^4`: 92.1
    (:math:`\alpha = 2`), 61.4 (:math:`\alpha = 1.5`).
    """
    N, k, A, C = _closed_form_args(N, alpha, A, C)
    tau = real(tau, "tau", low=0.0, low_open=True)
    return np.maximum(tau * (np.log(A) + np.log(N / C) / k), 0.0)


@reference
def window_power(N, beta, alpha, A=1.0, C=1.0):
    r""":math:`H_N` for a power-law envelope :math:`f(\ell) = A \ell^{-\beta}` (polynomial in :math:`N`).

    .. math:: H_N = (A^{\kappa_\alpha} N/C)^{1/(\beta\kappa_\alpha)} \propto N^{(\alpha - 1)/(\alpha\beta)}.

    Example: :math:`\beta = 1`, :math:`N = 10^4`: 100 (:math:`\alpha = 2`), 21.5 (:math:`\alpha = 1.5`).
    """
    N, k, A, C = _closed_form_args(N, alpha, A, C)
    beta = real(beta, "beta", low=0.0, low_open=True)
    return (A**k * N / C) ** (1.0 / (beta * k))


def window_logarithmic(N, gamma, alpha, A=1.0, C=1.0):
    r""":math:`H_N` for a logarithmic envelope :math:`f(\ell) = A (\ln \ell)^{-\gamma}`, :math:`\ell > 1`.

    .. math:: H_N = \exp[(A^{\kappa_\alpha} N/C)^{1/(\gamma\kappa_\alpha)}].

    Grows faster than any power of :math:`\ln N` (a stretched exponential in :math:`N`);
    overflows to ``inf`` once the exponent passes about 709.
    """
    N, k, A, C = _closed_form_args(N, alpha, A, C)
    gamma = real(gamma, "gamma", low=0.0, low_open=True)
    with np.errstate(over="ignore"):
        return np.exp((A**k * N / C) ** (1.0 / (gamma * k)))


# --- the master law by Monte Carlo --------------------------------------------------------------


class MasterLaw(NamedTuple):
    r"""Monte-Carlo master law: means ``m`` ``(L,)``, ``N_req`` ``(L,)`` (-1: not reached), the fitted
    ``slope`` and ``intercept`` of :math:`\log N_{req}` on :math:`\log(1/m)`, and the predicted ``kappa``."""

    m: np.ndarray
    N_req: np.ndarray
    slope: float
    intercept: float
    kappa: float


def _noise_means(alpha: float, scale: float, N_grid: np.ndarray, replicates: int, rng) -> np.ndarray:
    """Sample means of the first N of ``N_max`` S-alpha-S draws, per replicate: ``(R, K)``."""
    N_max = int(N_grid.max())
    noise = sample_stable(alpha, replicates * N_max, scale, rng).reshape(replicates, N_max)  # (R, N_max)
    return np.cumsum(noise, axis=1)[:, N_grid - 1] / N_grid  # (R, K)


def master_law_monte_carlo(
    alpha, envelope, N_grid, *, scale=1.0, replicates=400, fraction=0.5, coverage=0.9, rng=None
) -> MasterLaw:
    r"""Monte-Carlo test of the master law :math:`N(\ell) \propto f(\ell)^{-\kappa_\alpha}`.

    Each lag's statistic is :math:`m_\ell + \xi` with :math:`m_\ell = f(\ell)` (``envelope``) and
    :math:`\xi` S\ :math:`\alpha`\ S of scale ``scale``. Its mean over :math:`N` samples detects
    :math:`m_\ell` once it exceeds ``fraction`` :math:`\cdot\, m_\ell` in at least ``coverage`` of
    ``replicates`` independent runs; :math:`N_{req}(\ell)` is the smallest such :math:`N` in
    ``N_grid``. Because the noise mean :math:`\bar\xi_N` does not depend on :math:`m`, the event is
    :math:`\bar\xi_N > -(1 - \text{fraction})\, m_\ell`; one set of draws serves every lag, and the
    means at every :math:`N` come from cumulative sums (:math:`R \cdot \max\mathcal N` draws in all).

    Theory: :math:`\bar\xi_N \overset{d}{=} \sigma N^{-1/\kappa_\alpha} S`, so
    :math:`N_{req} \approx (\sigma q / ((1 - \text{fraction}) m))^{\kappa_\alpha}` with :math:`q` the
    ``coverage`` quantile of :math:`-S`: the slope of :math:`\log N_{req}` on :math:`\log(1/m)` is
    :math:`\kappa_\alpha`. The sampler never uses the stability of sums; the slope is fitted by
    least squares over the lags with :math:`N_{req} > 0` (at least 2 needed). Use a dense grid
    (e.g. ``np.arange(1, N_max + 1)``) and means whose :math:`N_{req}` spans a decade or more.

    Parameters
    ----------
    alpha : float in (1, 2]
    envelope : array ``(L,)`` of means :math:`m_\ell > 0`.
    N_grid : array ``(K,)`` of integers >= 1.
    scale : float > 0, :math:`\sigma`.
    replicates : int >= 10, :math:`R`.
    fraction, coverage : floats in (0, 1).
    rng : numpy.random.Generator, int seed or None.
    """
    a, k = real(alpha, "alpha"), kappa(alpha)
    m = _positive(envelope, "envelope")
    if m.ndim != 1 or m.size < 2:
        raise ValueError(f"envelope must be 1-D with at least 2 means, got shape {m.shape}")
    N_grid = np.unique(int_array(N_grid, "N_grid", ndim=1, low=1))  # sorted
    if N_grid.size == 0:
        raise ValueError("N_grid must hold at least one sample size")
    R = integer(replicates, "replicates", low=10)
    c, p = probability(fraction, "fraction"), probability(coverage, "coverage")
    if not (0.0 < c < 1.0 and 0.0 < p < 1.0):
        raise ValueError(f"fraction and coverage must be in (0, 1), got {c:g} and {p:g}")
    xi_bar = _noise_means(a, real(scale, "scale", low=0.0, low_open=True), N_grid, R, generator(rng))  # (R, K)
    j = int(np.ceil(p * R - 1e-9))  # at least j of the R runs must exceed the bar
    xi_j = -np.sort(-xi_bar, axis=0)[j - 1]  # (K,): the j-th largest noise mean at each N
    hit = xi_j[None, :] > -(1.0 - c) * m[:, None]  # (L, K)
    N_req = np.where(hit.any(axis=1), N_grid[hit.argmax(axis=1)], -1)  # (L,)
    return MasterLaw(m, N_req, *_fit_slope(m, N_req), k)


def _fit_slope(m: np.ndarray, N_req: np.ndarray) -> tuple[float, float]:
    """Least-squares ``(slope, intercept)`` of log N_req on log(1/m) over the reached lags."""
    reached = N_req > 0
    if reached.sum() < 2 or np.unique(N_req[reached]).size < 2:
        raise ValueError("fewer than 2 means reached distinct N_req within N_grid: widen N_grid or the envelope")
    slope, intercept = np.polyfit(np.log(1.0 / m[reached]), np.log(N_req[reached]), 1)
    return float(slope), float(intercept)
