r"""A master-law test that can see the envelope: cross-fitted orientation, one spread, a sign-flip null.

The master law says the sample size needed at lag :math:`\ell` grows as :math:`N(\ell) \propto
f(\ell)^{-\kappa}`. Read off the matched statistic as :math:`N^* = (\varepsilon\hat\sigma(\ell) /
|\bar m(\ell)|)^\kappa`, it cannot show that: mean and spread come from the same
:math:`\mu`-weighted :math:`\psi`, so every factor shared by all neurons, the envelope :math:`f`
itself, cancels from the ratio (measured: :math:`\hat\sigma \propto f^{0.7 \dots 1.2}`). This
module keeps the per-neuron terms of the per-sequence means
(:func:`~seqlearn.learnability.matched.matched_terms`),

.. math:: \varphi_{n,q}(\ell) = \mathrm{mean}_t\, \mu^{(q)}_{n,t,\ell}\, \delta^{(q)}_{n,t}\,
          v^{(q)}_{n,t-\ell}, \qquad \textstyle\sum_q \varphi_{n,q}(\ell) = \bar\psi_n(\ell),

and builds the statistic the theory has in mind, each neuron oriented by the sign of its mean
:math:`\mathrm{sgn}(m_q(\ell))`, with that sign estimated on *other* sequences (cross-fitting):
the sequences are split into folds :math:`0, \dots, F - 1` and fold :math:`k` is oriented by fold
:math:`k + 1 \bmod F`,

.. math:: s^{(k)}_q(\ell) = \mathrm{sgn}\Big(\mathrm{mean}_{m \in \text{fold } k + 1}\,
          \varphi_{m,q}(\ell)\Big), \qquad
          \chi_n(\ell) = \sum_q s^{(k_n)}_q(\ell)\, \varphi_{n,q}(\ell).

A sign estimated on independent sequences gives :math:`\mathbb E\,\chi = 0` without signal. The
default is :math:`F = 3`: with two folds oriented by each other the two fold means share
:math:`\sum_q |\bar\varphi^A_q| |\bar\varphi^B_q|`, which widens the null spread of
:math:`t` to about :math:`\sqrt{1 + 2/\pi} \approx 1.28`; in a cycle of three no two fold means
share a term and :math:`t` is :math:`\mathcal N(0, 1)` under the null, or narrower.

With one lag-independent spread :math:`\sigma_0` (the median over lags of :math:`\mathrm{sd}\,\chi(\ell)`)
and :math:`\kappa = 2` (the per-sequence means are averages of many steps, close to Gaussian),

.. math:: N^*(\ell) = \big(\varepsilon\sigma_0 / |\tilde m(\ell)|\big)^\kappa, \qquad
          \tilde m(\ell) = \mathrm{mean}_n\, \chi_n(\ell),

and the slope of :math:`\log N^*` on :math:`-\kappa \log f` is that of :math:`\log|\tilde m|` on
:math:`\log f` (:math:`\sigma_0` and :math:`\kappa` set only the intercept): 1 if the evidence
grows as the envelope. Two readings go beside it. The *sign-flip null* multiplies every
sequence's terms by an independent Rademacher sign :math:`r_n` before the orientation: no signal
is left, the magnitudes are, so its slope is what :math:`\mu`'s own dependence on :math:`f` puts
into :math:`|\tilde m|` through the noise alone. And :math:`t(\ell) = \tilde m(\ell) /
(\mathrm{sd}\,\chi(\ell)/\sqrt N)` per lag, for both: a slope says something about the law only
over lags whose :math:`|t|` stands clearly above the null's. Where the signal is weak the
estimated signs are partly wrong and :math:`\mathbb E\,\tilde m` falls faster than the ideal
:math:`\sum_q |m_q|` (quadratically in the signal for small signals): such lags steepen the slope.
NumPy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import generator, int_array, integer, real, real_array
from .fits import LineFit, fit_line

__all__ = [
    "fold_labels",
    "cross_fitted_orientation",
    "oriented_statistic",
    "sign_flip_null",
    "LagStatistic",
    "MasterLawTest",
    "master_law_test",
]

MIN_FOLD = 2  # sequences per fold: a mean to orient by, and a spread


def fold_labels(N: int, n_folds: int = 3, seed=None) -> np.ndarray:
    r"""Fold of each of ``N`` sequences, ``(N,)`` int64 in :math:`0, \dots, F - 1`, as equal as can be.

    ``seed=None``: fixed, :math:`n \bmod F`; an int seed (or a ``numpy.random.Generator``): the
    same sizes, the sequences shuffled.
    """
    N, F = integer(N, "N", low=1), integer(n_folds, "n_folds", low=2)
    labels = np.arange(N, dtype=np.int64) % F
    return labels if seed is None else generator(seed, "seed").permutation(labels)


def _terms(terms) -> np.ndarray:
    """``terms`` as a finite float64 array ``(N, n_lags, H)``."""
    return real_array(terms, "terms", ndim=3)


def _folds(folds, N: int) -> tuple[np.ndarray, int]:
    """Fold labels ``(N,)`` (default :func:`fold_labels`) and their number; each fold >= MIN_FOLD sequences."""
    labels = fold_labels(N) if folds is None else int_array(folds, "folds", ndim=1, low=0)
    if labels.shape != (N,):
        raise ValueError(f"folds must hold one label per sequence ({N}), got shape {labels.shape}")
    F = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=F)
    if F < 2 or sizes.min() < MIN_FOLD:
        raise ValueError(
            f"cross-fitting needs at least 2 folds of at least {MIN_FOLD} sequences each (labels 0, 1, ...), "
            f"got {N} sequences in folds of sizes {sizes.tolist()}"
        )
    return labels, F


def cross_fitted_orientation(terms, folds=None) -> np.ndarray:
    r"""Each sequence's neuron signs, estimated on the next fold: :math:`s^{(k_n)}_q(\ell)`, ``(N, n_lags, H)``.

    ``terms`` ``(N, n_lags, H)``: :math:`\varphi_{n,q}(\ell)`; ``folds``: ``(N,)`` labels
    :math:`0, \dots, F - 1` (default :func:`fold_labels` with :math:`F = 3`). Sequence :math:`n` in
    fold :math:`k` gets :math:`\mathrm{sgn}(\mathrm{mean}_{m \in \text{fold } (k + 1) \bmod F}\,
    \varphi_{m,q}(\ell))` (0 for a mean of exactly 0).
    """
    phi = _terms(terms)
    labels, F = _folds(folds, phi.shape[0])
    signs = np.sign(np.stack([phi[labels == k].mean(axis=0) for k in range(F)]))  # (F, n_lags, H)
    return signs[(labels + 1) % F]


def oriented_statistic(terms, folds=None) -> np.ndarray:
    r"""The cross-fitted samples :math:`\chi_n(\ell) = \sum_q s^{(k_n)}_q(\ell)\, \varphi_{n,q}(\ell)`, ``(N, n_lags)``.

    Arguments as in :func:`cross_fitted_orientation`.
    """
    return (_terms(terms) * cross_fitted_orientation(terms, folds)).sum(axis=-1)


def sign_flip_null(terms, seed=0, folds=None) -> np.ndarray:
    r"""The oriented statistic of :math:`r_n \varphi_{n,q}(\ell)`, :math:`r_n = \pm 1` at random: ``(N, n_lags)``.

    One Rademacher sign per sequence (seeded by ``seed``), shared by its lags and neurons, taken
    before the orientation: the magnitudes stay, the signal goes, and :math:`\mathbb E\,\chi = 0`
    exactly (given the orientation, each :math:`r_n` still averages out).
    """
    phi = _terms(terms)
    r = generator(seed, "seed").choice(np.array([-1.0, 1.0]), phi.shape[0])  # (N,)
    return oriented_statistic(phi * r[:, None, None], folds)


@dataclass(frozen=True, eq=False)
class LagStatistic:
    r"""One statistic's per-lag reading (arrays ``(n_lags,)``).

    ``mean`` :math:`\tilde m(\ell)`; ``sd`` the sample standard deviation over sequences;
    ``t`` :math:`\tilde m / (\mathrm{sd}/\sqrt N)`; ``scale`` the spread in :math:`N^*`
    (:math:`\sigma_0` at every lag, or the lag's own ``sd``); ``N_star``
    :math:`(\varepsilon\, \mathrm{scale} / |\tilde m|)^\kappa`; ``fit`` :math:`\log N^*` on
    :math:`-\kappa \log f` over the lags with a finite :math:`N^*`.
    """

    mean: np.ndarray
    sd: np.ndarray
    t: np.ndarray
    scale: np.ndarray
    N_star: np.ndarray
    fit: LineFit


def _master_law_line(N_star: np.ndarray, f: np.ndarray, kappa: float, keep: np.ndarray) -> LineFit:
    r"""Least squares of :math:`\log N^*` on :math:`-\kappa\log f` over ``keep`` (and a finite :math:`N^*`)."""
    keep = keep & np.isfinite(N_star) & (N_star > 0)
    if keep.sum() < 2:
        raise ValueError(f"a master-law line needs at least 2 lags with a non-zero mean, got {int(keep.sum())}")
    return fit_line(-kappa * np.log(f[keep]), np.log(N_star[keep]))


def _lag_statistic(samples: np.ndarray, f: np.ndarray, kappa: float, eps: float, pooled: bool) -> LagStatistic:
    """Mean, sd, t and N* of ``samples`` ``(N, n_lags)``; ``pooled``: the scale is the median sd over lags."""
    N = samples.shape[0]
    mean, sd = samples.mean(axis=0), samples.std(axis=0, ddof=1)
    scale = np.full_like(sd, np.median(sd)) if pooled else sd
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(N))
        N_star = (eps * scale / np.abs(mean)) ** kappa
    return LagStatistic(mean, sd, t, scale, N_star, _master_law_line(N_star, f, kappa, np.ones(f.size, bool)))


@dataclass(frozen=True, eq=False)
class MasterLawTest:
    r"""Three readings of the master law on one set of terms (see the module text).

    Attributes
    ----------
    f : ``(n_lags,)`` the envelope;  kappa, eps : the exponent and the SNR threshold of :math:`N^*`
    oriented : :class:`LagStatistic` of the cross-fitted :math:`\chi`, scale :math:`\sigma_0`
    null : the same for the sign-flip null (its own :math:`\sigma_0`), draw ``seed``
    null_slopes : ``(n_null,)`` the null's master-law slope for the draws ``seed, seed + 1, ...``: one
        draw's slope scatters by about :math:`\pm 0.5` over a dozen lags (:math:`\log|\tilde m|` of a
        mean with no signal is :math:`\log|Z|` plus a trend), their median does not
    naive : the summed :math:`\bar\psi_n = \sum_q \varphi_{n,q}` with its own sd at each lag, the
        reading in which a neuron-common :math:`f` cancels
    """

    f: np.ndarray
    kappa: float
    eps: float
    oriented: LagStatistic
    null: LagStatistic
    null_slopes: np.ndarray
    naive: LagStatistic

    def slope_over(self, keep, which: str = "oriented") -> LineFit:
        r""":math:`\log N^*` on :math:`-\kappa\log f` over the lags where ``keep`` ``(n_lags,)`` is True.

        E.g. ``test.slope_over(np.abs(test.oriented.t) > 3)``: the lags with clear evidence.
        ``which``: ``"oriented"``, ``"null"`` or ``"naive"``.
        """
        if which not in ("oriented", "null", "naive"):
            raise ValueError(f"which must be one of ['oriented', 'null', 'naive'], got {which!r}")
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.shape != self.f.shape:
            raise ValueError(f"keep must be a boolean mask of shape {self.f.shape}, got {keep.dtype} {keep.shape}")
        return _master_law_line(getattr(self, which).N_star, self.f, self.kappa, keep)

    def spread_exponent(self) -> LineFit:
        r""":math:`\log \mathrm{sd}\,\bar\psi(\ell)` on :math:`\log f`: the power of :math:`f` that the naive
        reading cancels."""
        return fit_line(np.log(self.f), np.log(self.naive.sd))


def master_law_test(
    terms, f, eps: float = 20.0, seed: int = 0, folds=None, kappa: float = 2.0, n_null: int = 20
) -> MasterLawTest:
    r"""The oriented, null and naive master-law readings of per-neuron terms :math:`\varphi_{n,q}(\ell)`.

    Parameters
    ----------
    terms : ``(N, n_lags, H)``, :math:`\varphi_{n,q}(\ell)` (e.g. ``Diagnostics.unit_terms``).
    f : ``(n_lags,)``, the envelope :math:`\hat f(\ell) > 0`.
    eps : SNR threshold :math:`\varepsilon > 0` (the paper's 20).
    seed : the first sign-flip null's seed (draw :math:`j` has ``seed + j``).
    folds : ``(N,)`` fold labels (default: :math:`n \bmod 3`, :func:`fold_labels`).
    kappa : :math:`\kappa \ge 2` of :math:`N^*`, one for all lags.
    n_null : number of sign-flip draws in ``null_slopes`` (>= 1).

    Returns
    -------
    MasterLawTest
    """
    phi = _terms(terms)
    f = real_array(f, "f", ndim=1)
    if f.shape != (phi.shape[1],):
        raise ValueError(f"f must have one value per lag of terms ({phi.shape[1]}), got shape {f.shape}")
    if f.min() <= 0:
        raise ValueError(f"f must hold values > 0, got {f.min():g}")
    eps, kappa = real(eps, "eps", low=0.0, low_open=True), real(kappa, "kappa", low=2.0)
    seed, n_null = integer(seed, "seed", low=0), integer(n_null, "n_null", low=1)
    reading = lambda samples, pooled: _lag_statistic(samples, f, kappa, eps, pooled)  # noqa: E731
    nulls = [reading(sign_flip_null(phi, seed + j, folds), True) for j in range(n_null)]
    return MasterLawTest(
        f=f,
        kappa=kappa,
        eps=eps,
        oriented=reading(oriented_statistic(phi, folds), True),
        null=nulls[0],
        null_slopes=np.array([null.fit.slope for null in nulls]),
        naive=reading(phi.sum(axis=-1), False),
    )
