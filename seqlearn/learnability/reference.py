r"""Chapter 5's exercise references in plain NumPy (float64): :math:`\kappa_\alpha`, the ECF estimate of
:math:`\alpha`, the transport factor :math:`\Gamma` of ConstGate and DiagGate, the window :math:`H_N` and the
cross-fitted oriented statistic.

Each is a :func:`seqlearn.guard.reference`, so it refuses to run inside a graded answer:

* :func:`kappa_alpha`, :math:`\kappa_\alpha = \alpha / (\alpha - 1)`
  (:func:`seqlearn.learnability.stable.kappa`);
* :func:`ecf_alpha_estimate`, Koutrouvelis' regression on the empirical characteristic function,
  the estimate of :func:`seqlearn.learnability.stable.ecf_alpha` wherever the band
  :math:`0.01 < |\hat\varphi|^2 < 0.95` holds at least 5 points of the grid (elsewhere it raises
  ``ValueError`` instead of relaxing the band or falling back to McCulloch's quantiles);
* :func:`gamma_const` and :func:`gamma_diag`, the first-order transport factor by prefix sums for one
  sequence, equal to :func:`seqlearn.learnability.effective_rates.transport` (which works on torch
  trajectories) for ``B = 1``;
* :func:`window_from_table`, :math:`H_N` from a table of :math:`N_{req}(\ell)`
  (:func:`seqlearn.learnability.window.learnability_window`);
* :func:`window_closed_form`, :math:`H_N` for exponential and power-law envelopes with
  :math:`A = C = 1` (:func:`~seqlearn.learnability.window.window_exponential`,
  :func:`~seqlearn.learnability.window.window_power`);
* :func:`oriented_statistic`, one lag's cross-fitted oriented statistic by loops
  (:func:`seqlearn.learnability.masterlaw.oriented_statistic`).

Nothing here imports torch or scipy. ``tests/test_learnability_reference.py`` holds them to the
package's implementations.
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import choice, int_array, real, real_array
from . import stable, window

__all__ = [
    "kappa_alpha",
    "ecf_alpha_estimate",
    "gamma_const",
    "gamma_diag",
    "window_from_table",
    "window_closed_form",
    "oriented_statistic",
]

ECF_MIN_POINTS = 5
"""The fewest grid points in the band 0.01 < |phi|^2 < 0.95 that :func:`ecf_alpha_estimate` regresses on."""


@reference
def kappa_alpha(alpha) -> float:
    r""":math:`\kappa_\alpha = \alpha / (\alpha - 1)` for :math:`\alpha \in (1, 2]`, a float.

    The mean of :math:`N` S\ :math:`\alpha`\ S samples concentrates as :math:`N^{-1/\kappa_\alpha}`:
    :math:`\kappa_2 = 2` (the CLT), :math:`\kappa_{1.5} = 3`, :math:`\kappa_\alpha \to \infty` as
    :math:`\alpha \to 1`. ``ValueError`` outside :math:`(1, 2]`.
    """
    return stable.kappa(alpha)


@reference
def ecf_alpha_estimate(x) -> float:
    r"""Koutrouvelis' (1980) ECF estimate of :math:`\alpha` (symmetric, :math:`\beta = 0`) from samples ``x`` ``(n,)``.

    For S\ :math:`\alpha`\ S data :math:`y = \log(-\log|\varphi(t)|^2) = \log(2\sigma^\alpha) + \alpha \log t`:

    1. :math:`\hat s = \mathrm{IQR}/1.349` (``np.percentile``'s default interpolation);
    2. 50 equally spaced :math:`t \in [0.05/\hat s,\ 3/\hat s]`;
    3. :math:`|\hat\varphi(t)|^2 = (\overline{\cos tx})^2 + (\overline{\sin tx})^2`;
    4. keep the :math:`t` with :math:`0.01 < |\hat\varphi|^2 < 0.95` (at least 5 of them);
    5. weights :math:`w = \exp(-2(\log|\hat\varphi|^2 + 0.7)^2)`; the weighted least-squares slope of
       :math:`y` on :math:`X = \log t`,
       :math:`\sum w (X - \bar X_w)(y - \bar y_w) / \sum w (X - \bar X_w)^2`;
    6. :math:`\hat\alpha` = the slope clipped to :math:`[1, 2]`.

    ``ValueError`` for fewer than 20 samples, a zero IQR or fewer than 5 points in the band.
    Returns a float.
    """
    x = stable._samples(x)
    s_hat = stable._iqr(x) / 1.349
    t = np.linspace(0.05 / s_hat, 3.0 / s_hat, stable._ECF_POINTS)  # (50,)
    phi2 = stable._ecf_squared_modulus(x, t)  # (50,)
    keep = (phi2 > 0.01) & (phi2 < 0.95)
    if keep.sum() < ECF_MIN_POINTS:
        raise ValueError(
            f"x must give at least {ECF_MIN_POINTS} grid points with 0.01 < |phi|^2 < 0.95, got {keep.sum()}"
        )
    X, log_phi2 = np.log(t[keep]), np.log(phi2[keep])
    y = np.log(-log_phi2)
    w = np.exp(-2.0 * (log_phi2 + 0.7) ** 2)
    X_c, y_c = X - np.average(X, weights=w), y - np.average(y, weights=w)
    slope = np.sum(w * X_c * y_c) / np.sum(w * X_c**2)
    return float(np.clip(slope, 1.0, 2.0))


def _prefix_gamma(leak: np.ndarray, rho: np.ndarray, lags) -> np.ndarray:
    r""":math:`\Gamma_{t,\ell} = e^{L_t - L_{t-\ell}} (1 + P_t - P_{t-\ell})` for leak and rho ``(T, H)``.

    :math:`L_t = \sum_{j \le t} \ln \lambda_j`, :math:`P_t = \sum_{j \le t} \rho_j/\lambda_j`,
    :math:`L_0 = P_0 = 0`. Returns ``(n, T, H)``, ``[i, t - 1]`` for the window end :math:`t` and
    lag ``lags[i]``, NaN where :math:`t < \ell`.
    """
    T, H = leak.shape
    lags = int_array(lags, "lags", ndim=1, low=1, high=T)
    zero = np.zeros((1, H))
    L = np.concatenate([zero, np.cumsum(np.log(leak), axis=0)])  # L_0..L_T, (T + 1, H)
    P = np.concatenate([zero, np.cumsum(rho / leak, axis=0)])  # P_0..P_T, (T + 1, H)
    t = np.arange(1, T + 1)  # window ends, (T,)
    start = np.maximum(t[None, :] - lags[:, None], 0)  # t - l, (n, T)
    gamma = np.exp(L[t][None] - L[start]) * (1.0 + P[t][None] - P[start])  # (n, T, H)
    valid = (t[None, :] >= lags[:, None])[:, :, None]  # (n, T, 1)
    return np.where(valid, gamma, np.nan)


def _gate(s, name: str, shape) -> np.ndarray:
    """``s`` as float64 of ``shape`` with every entry a write gate in (0, 1)."""
    s = real_array(s, name, shape=shape)
    if s.size and (s.min() <= 0.0 or s.max() >= 1.0):
        bad = s.min() if s.min() <= 0.0 else s.max()
        raise ValueError(f"{name} must hold write gates in (0, 1), got {bad:g}")
    return s


def _sequence(h_tilde) -> np.ndarray:
    r""":math:`\tilde h` as float64 ``(T, H)`` with entries in [-1, 1] (a tanh)."""
    h_tilde = real_array(h_tilde, "h_tilde", ndim=2)
    if h_tilde.shape[0] == 0:
        raise ValueError("h_tilde must hold at least one step, got shape (0, H)")
    if h_tilde.size and np.abs(h_tilde).max() > 1.0:
        raise ValueError(f"h_tilde must hold tanh values in [-1, 1], got {np.abs(h_tilde).max():g}")
    return h_tilde


@reference
def gamma_const(s, h_tilde, w_hh_diag, lags) -> np.ndarray:
    r"""The first-order transport factor :math:`\Gamma^{(q)}_{t,\ell}` of a ConstGate on one sequence.

    .. math::
        \lambda = 1 - s, \qquad \rho^{(q)}_k = s\,(1 - (\tilde h^{(q)}_k)^2)\, [W_h]_{qq}, \qquad
        \Gamma^{(q)}_{t,\ell} = \prod_{j=t-\ell+1}^{t} \lambda
        \Big[1 + \sum_{k=t-\ell+1}^{t} \frac{\rho^{(q)}_k}{\lambda}\Big],

    by prefix sums (see :func:`seqlearn.learnability.effective_rates.transport`).

    Parameters
    ----------
    s : float in (0, 1)
        The constant write gate.
    h_tilde : array ``(T, H)``
        The candidates :math:`\tilde h_k`, row ``k - 1`` for step :math:`k`.
    w_hh_diag : array ``(H,)``
        The diagonal of :math:`W_h`.
    lags : array ``(n,)`` of ints in ``[1, T]``

    Returns
    -------
    new float64 array ``(n, T, H)``
        ``[i, t - 1, q]`` is :math:`\Gamma^{(q)}_{t, \ell_i}`, NaN where :math:`t < \ell_i`.
    """
    s = real(s, "s", low=0.0, high=1.0, low_open=True, high_open=True)
    h_tilde = _sequence(h_tilde)
    w = real_array(w_hh_diag, "w_hh_diag", shape=(h_tilde.shape[1],))
    rho = s * (1.0 - h_tilde**2) * w  # (T, H)
    return _prefix_gamma(np.full_like(h_tilde, 1.0 - s), rho, lags)


@reference
def gamma_diag(s, h_tilde, h_prev, w_hh_diag, u_s_diag, lags) -> np.ndarray:
    r"""The first-order transport factor :math:`\Gamma^{(q)}_{t,\ell}` of a DiagGate on one sequence.

    .. math::
        \lambda^{(q)}_k = 1 - s^{(q)}_k, \qquad
        \rho^{(q)}_k = s^{(q)}_k (1 - (\tilde h^{(q)}_k)^2) [W_h]_{qq}
        + (\tilde h^{(q)}_k - h^{(q)}_{k-1})\, s^{(q)}_k (1 - s^{(q)}_k)\, [U_s]_{qq},

    and :math:`\Gamma` as in :func:`gamma_const`, by prefix sums.

    Parameters
    ----------
    s, h_tilde, h_prev : arrays ``(T, H)``
        Per step :math:`k` (row ``k - 1``): the write gates :math:`s_k \in (0, 1)`, the candidates
        :math:`\tilde h_k` and the previous states :math:`h_{k-1}`.
    w_hh_diag, u_s_diag : arrays ``(H,)``
        The diagonals of :math:`W_h` and :math:`U_s`.
    lags : array ``(n,)`` of ints in ``[1, T]``

    Returns
    -------
    new float64 array ``(n, T, H)``, as :func:`gamma_const`.
    """
    h_tilde = _sequence(h_tilde)
    T, H = h_tilde.shape
    s = _gate(s, "s", (T, H))
    h_prev = real_array(h_prev, "h_prev", shape=(T, H))
    w = real_array(w_hh_diag, "w_hh_diag", shape=(H,))
    u = real_array(u_s_diag, "u_s_diag", shape=(H,))
    rho = s * (1.0 - h_tilde**2) * w + (h_tilde - h_prev) * s * (1.0 - s) * u  # (T, H)
    return _prefix_gamma(1.0 - s, rho, lags)


@reference
def window_from_table(lags, N_req, N):
    r"""The learnability window :math:`H_N = \max\{\ell : 0 < N_{req}(\ell) \le N\}` (0 if no lag qualifies).

    Parameters
    ----------
    lags : array ``(L,)`` of ints >= 1, in any order.
    N_req : array ``(L,)`` of ints, ``-1`` where the lag is never detectable.
    N : a sample size, or an array ``(K,)`` of them.

    Returns
    -------
    int for a scalar ``N``; int64 array ``(K,)`` for an array. The qualifying lags need not be
    contiguous (see :func:`seqlearn.learnability.window.learnability_window`).
    """
    return window.learnability_window(lags, N_req, N)


_CLOSED_FORMS = {"exponential": window.window_exponential, "power": window.window_power}


@reference
def window_closed_form(N, envelope, param, alpha):
    r""":math:`H_N` of an envelope under the master law :math:`N(\ell) = f(\ell)^{-\kappa_\alpha}` (A = C = 1).

    .. math::
        f(\ell) = e^{-\ell/\tau}: \ H_N = \frac{\tau}{\kappa_\alpha} \ln N, \qquad
        f(\ell) = \ell^{-\beta}: \ H_N = N^{1/(\beta\kappa_\alpha)}.

    Parameters
    ----------
    N : sample size(s) >= 1, a number or an array
    envelope : ``"exponential"`` (``param`` = :math:`\tau > 0`) or ``"power"`` (``param`` = :math:`\beta > 0`)
    param : float > 0
    alpha : float in (1, 2]

    Returns
    -------
    float for a number ``N``, float64 array of ``N``'s shape otherwise. Example: :math:`N = 10^4`,
    :math:`\tau = 20`: 92.1 (:math:`\alpha = 2`), 61.4 (:math:`\alpha = 1.5`); :math:`\beta = 1`:
    100 and 21.5.
    """
    N = real_array(N, "N")
    if N.size and N.min() < 1.0:
        raise ValueError(f"N must hold sample sizes >= 1, got {N.min():g}")
    closed_form = _CLOSED_FORMS[choice(envelope, "envelope", _CLOSED_FORMS)]
    H_N = closed_form(N, real(param, "param", low=0.0, low_open=True), alpha)
    return float(H_N) if N.ndim == 0 else np.asarray(H_N, dtype=np.float64)


N_FOLDS = 3
"""Folds of the cross-fitting: sequence n is in fold n mod 3 and is oriented by fold (n + 1) mod 3."""


@reference
def oriented_statistic(phi) -> np.ndarray:
    r"""The cross-fitted oriented statistic of one lag, by loops: :math:`\chi_n = \sum_q s_q^{(k_n)} \varphi_{n,q}`.

    ``phi`` ``(N, H)``: the per-neuron terms :math:`\varphi_{n,q}` of :math:`N \ge 6` sequences and
    :math:`H` neurons. Sequence :math:`n` (0-based) is in fold :math:`k_n = n \bmod 3` and
    :math:`s_q^{(k)} = \mathrm{sgn}(\mathrm{mean}_{m:\, k_m = (k + 1) \bmod 3}\, \varphi_{m,q})`. Returns
    ``(N,)`` float64; ``ValueError`` for another shape, fewer than 6 rows or non-finite terms. Loop by loop, for
    reading: :func:`seqlearn.learnability.masterlaw.oriented_statistic` vectorises it.
    """
    phi = real_array(phi, "phi", ndim=2)
    N, H = phi.shape
    if N < 2 * N_FOLDS:
        raise ValueError(f"phi must hold at least {2 * N_FOLDS} sequences (2 per fold), got {N}")
    members = [[m for m in range(N) if m % N_FOLDS == k] for k in range(N_FOLDS)]
    signs = [[np.sign(sum(phi[m, q] for m in fold) / len(fold)) for q in range(H)] for fold in members]
    chi = np.zeros(N)
    for n in range(N):
        orient = signs[(n % N_FOLDS + 1) % N_FOLDS]
        chi[n] = sum(orient[q] * phi[n, q] for q in range(H))
    return chi
