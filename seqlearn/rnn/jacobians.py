r"""Jacobian products of an Elman RNN, and when its gradients vanish or may explode.

The state Jacobian of one step is :math:`J_t = \partial h_t / \partial h_{t-1} =
\mathrm{diag}(\phi'(z_t))\, W_{hh}`; over a lag :math:`l` the gradient is carried by

.. math::
    \frac{\partial h_t}{\partial h_{t-l}} = \prod_{j=t-l+1}^{t} J_j = J_t J_{t-1} \cdots J_{t-l+1},

whose norm is at most :math:`(\gamma\, \sigma_{\max}(W_{hh}))^l`, with :math:`\gamma` a bound
on :math:`|\phi'|` (1 for tanh and linear, 1/4 for the sigmoid). Hence (Pascanu, Mikolov &
Bengio 2013): :math:`\sigma_{\max}(W_{hh}) < 1/\gamma` is sufficient for vanishing
gradients, and :math:`\sigma_{\max}(W_{hh}) > 1/\gamma` is necessary for exploding ones.

Step indices are 1-based as in the math: ``J[t - 1]`` holds :math:`J_t`, for t = 1..T.
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import integer
from .elman import _check_phi, _float_array, activation_derivative, elman_preactivations

__all__ = [
    "GAMMA",
    "step_jacobians",
    "jacobian_product",
    "jacobian_products_vs_lag",
    "product_norms_vs_lag",
    "product_singular_values_vs_lag",
    "spectral_radius",
    "sigma_max",
    "vanishing_guaranteed",
    "exploding_possible",
    "gradient_regime",
    "random_recurrent_matrix",
    "orthogonal_matrix",
    "identity_matrix",
    "gradient_norm_vs_lag",
    "lag_gradient_norms",
]

GAMMA = {"tanh": 1.0, "sigmoid": 0.25, "linear": 1.0}
r""":math:`\gamma = \sup_z |\phi'(z)|` for each nonlinearity."""

BOUNDARY_RTOL = 1e-12
r"""Relative tolerance within which :math:`\gamma\,\sigma_{\max}(W_{hh})` counts as exactly 1."""


def _square(name: str, W) -> np.ndarray:
    W = _float_array(name, W, 2)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be a square (H, H) matrix, got shape {W.shape}")
    return W


def _stack_of_jacobians(J) -> np.ndarray:
    J = _float_array("J", J, 3)
    if J.shape[1] != J.shape[2]:
        raise ValueError(f"J must have shape (T, H, H), got {J.shape}")
    if J.shape[0] < 1:
        raise ValueError("J must hold at least one step Jacobian (T >= 1)")
    return J


@reference
def step_jacobians(z, W_hh, phi: str = "tanh") -> np.ndarray:
    r"""The per-step Jacobians :math:`J_t = \partial h_t/\partial h_{t-1} = \mathrm{diag}(\phi'(z_t))\, W_{hh}`.

    Parameters
    ----------
    z : (T, H) pre-activations :math:`z_1, \dots, z_T` (see :func:`~seqlearn.rnn.elman_preactivations`)
    W_hh : (H, H)
    phi : ``"tanh"``, ``"sigmoid"`` or ``"linear"``

    Returns
    -------
    J : (T, H, H), ``J[t - 1]`` is :math:`J_t`
    """
    return _step_jacobians(z, W_hh, phi)


def _step_jacobians(z, W_hh, phi: str) -> np.ndarray:
    W_hh = _square("W_hh", W_hh)
    z = _float_array("z", z, 2)
    if z.shape[1] != W_hh.shape[0]:
        raise ValueError(f"z must have shape (T, H) with H = {W_hh.shape[0]} (from W_hh), got {z.shape}")
    return activation_derivative(z, phi)[:, :, None] * W_hh  # (T, H, H): row i scaled by phi'(z_t)_i


def _check_lags(J: np.ndarray, t, max_lag) -> tuple[int, int]:
    T = J.shape[0]
    t = T if t is None else integer(t, "t", low=0)
    if t > T:
        raise ValueError(f"step t={t} is past the end of the sequence (T = {T})")
    max_lag = t if max_lag is None else integer(max_lag, "lag", low=0)
    if max_lag > t:
        raise ValueError(f"a lag of {max_lag} reaches before h_0: at step t={t} the longest lag is {t}")
    return t, max_lag


@reference
def jacobian_product(J, t: int, lag: int) -> np.ndarray:
    r"""The lagged Jacobian :math:`\partial h_t/\partial h_{t-l} = \prod_{j=t-l+1}^{t} J_j = J_t \cdots J_{t-l+1}`.

    ``J`` (T, H, H) with ``J[j - 1]`` = :math:`J_j`; ``1 <= t <= T`` and ``0 <= lag <= t``
    (lag 0 gives the identity). Returns an (H, H) matrix.
    """
    J = _stack_of_jacobians(J)
    t, lag = _check_lags(J, t, lag)
    P = np.eye(J.shape[1])
    for j in range(t - lag + 1, t + 1):
        P = J[j - 1] @ P
    return P


@reference
def jacobian_products_vs_lag(J, t: int | None = None, max_lag: int | None = None) -> np.ndarray:
    r"""All lagged products :math:`P_l = \partial h_t/\partial h_{t-l}` for :math:`l = 0, \dots, L`.

    Built by :math:`P_0 = I`, :math:`P_{l} = P_{l-1} J_{t-l+1}` (one matrix product per lag).
    ``t`` defaults to T and ``max_lag`` L to t. Returns (L + 1, H, H).
    """
    J = _stack_of_jacobians(J)
    t, max_lag = _check_lags(J, t, max_lag)
    P = np.empty((max_lag + 1, *J.shape[1:]))
    P[0] = np.eye(J.shape[1])
    for lag in range(1, max_lag + 1):
        P[lag] = P[lag - 1] @ J[t - lag]  # J[t - lag] is J_{t-l+1}
    return P


@reference
def product_norms_vs_lag(J, t: int | None = None, max_lag: int | None = None) -> np.ndarray:
    r"""Spectral norms :math:`\lVert \partial h_t/\partial h_{t-l} \rVert_2` for :math:`l = 0, \dots, L`.

    ``J`` (T, H, H) step Jacobians; ``t`` defaults to T, ``max_lag`` L to t. Returns (L + 1,);
    entry 0 is 1 (the identity).
    """
    return _spectral_norms(jacobian_products_vs_lag(J, t, max_lag))


def _spectral_norms(P: np.ndarray) -> np.ndarray:
    return np.linalg.norm(P, ord=2, axis=(-2, -1))  # (..., H, H) -> (...)


@reference
def product_singular_values_vs_lag(J, t: int | None = None, max_lag: int | None = None) -> np.ndarray:
    r"""Singular values of :math:`\partial h_t/\partial h_{t-l}`, largest first, for :math:`l = 0, \dots, L`.

    Returns (L + 1, H); column 0 is :func:`product_norms_vs_lag`.
    """
    return np.linalg.svd(jacobian_products_vs_lag(J, t, max_lag), compute_uv=False)


def spectral_radius(W) -> float:
    r"""The spectral radius :math:`\rho(W) = \max_i |\lambda_i(W)|` of a square matrix."""
    return float(np.max(np.abs(np.linalg.eigvals(_square("W", W)))))


@reference
def sigma_max(W) -> float:
    r"""The largest singular value :math:`\sigma_{\max}(W) = \lVert W \rVert_2` (at least :math:`\rho(W)`)."""
    W = _float_array("W", W, 2)
    return float(np.linalg.norm(W, ord=2))


def _gamma_sigma(W_hh, phi: str) -> float:
    return GAMMA[_check_phi(phi)] * sigma_max(_square("W_hh", W_hh))


@reference
def vanishing_guaranteed(W_hh, phi: str = "tanh") -> bool:
    r"""Pascanu et al.'s sufficient condition for vanishing gradients, :math:`\sigma_{\max}(W_{hh}) < 1/\gamma`.

    Then :math:`\lVert \partial h_t/\partial h_{t-l} \rVert \le (\gamma \sigma_{\max})^l \to 0`
    for every input sequence. Values within a relative ``1e-12`` of the boundary count as on it.
    """
    return _gamma_sigma(W_hh, phi) < 1.0 - BOUNDARY_RTOL


@reference
def exploding_possible(W_hh, phi: str = "tanh") -> bool:
    r"""Pascanu et al.'s necessary condition for exploding gradients, :math:`\sigma_{\max}(W_{hh}) > 1/\gamma`.

    It is not sufficient: saturated units (small :math:`\phi'`) can still make gradients vanish.
    """
    return _gamma_sigma(W_hh, phi) > 1.0 + BOUNDARY_RTOL


@reference
def gradient_regime(W_hh, phi: str = "tanh") -> str:
    r"""What :math:`\sigma_{\max}(W_{hh})` alone says about long-range gradients.

    Returns ``"vanishing"`` if :math:`\gamma\,\sigma_{\max}(W_{hh}) < 1` (vanishing is
    guaranteed), ``"may explode"`` if :math:`\gamma\,\sigma_{\max}(W_{hh}) > 1` (exploding is
    possible, not certain), and ``"boundary"`` when :math:`\gamma\,\sigma_{\max}` equals 1
    to a relative ``1e-12`` (e.g. an orthogonal ``W_hh`` with a linear or tanh unit).
    :math:`\gamma` is 1 for tanh and linear units, 1/4 for the sigmoid.
    """
    if vanishing_guaranteed(W_hh, phi):
        return "vanishing"
    if exploding_possible(W_hh, phi):
        return "may explode"
    return "boundary"


def random_recurrent_matrix(H: int, rho: float, seed=0) -> np.ndarray:
    r"""A Gaussian :math:`H \times H` matrix rescaled to spectral radius :math:`\rho`.

    :math:`W = \rho\, G / \rho(G)` with :math:`G_{ij} \sim \mathcal N(0, 1/H)`. Its largest
    singular value is typically about twice :math:`\rho` (circular law vs. quarter-circle law).
    ``seed`` is anything :func:`numpy.random.default_rng` accepts.
    """
    H = integer(H, "H", low=1)
    if not np.isfinite(rho) or rho < 0:
        raise ValueError(f"the spectral radius rho must be a finite number >= 0, got {rho}")
    G = np.random.default_rng(seed).standard_normal((H, H)) / np.sqrt(H)
    return rho / spectral_radius(G) * G


def orthogonal_matrix(H: int, scale: float = 1.0, seed=0) -> np.ndarray:
    r"""A random orthogonal matrix times ``scale``: :math:`W = a Q`, :math:`Q^\top Q = I`.

    :math:`Q` is Haar-distributed (QR of a Gaussian matrix with the signs of R's diagonal
    moved into Q), so every singular value and every eigenvalue modulus of W equal ``scale``.
    """
    H = integer(H, "H", low=1)
    Q, R = np.linalg.qr(np.random.default_rng(seed).standard_normal((H, H)))
    return scale * Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def identity_matrix(H: int, scale: float = 1.0) -> np.ndarray:
    r"""The identity initialisation :math:`W_{hh} = a I` (Le, Jaitly & Hinton 2015, with ReLU; here for comparison)."""
    return scale * np.eye(integer(H, "H", low=1))


@reference
def gradient_norm_vs_lag(W_hh, max_lag: int, phi: str = "tanh", *, input_std: float = 1.0, seed=0) -> np.ndarray:
    r"""Run a random RNN and measure :math:`\lVert \partial h_T/\partial h_{T-l} \rVert_2` for :math:`l = 0, \dots, L`.

    The network :math:`h_t = \phi(W_{hh} h_{t-1} + x_t)`, :math:`h_0 = 0`, is driven for
    :math:`T = L` steps by Gaussian inputs :math:`x_t \sim \mathcal N(0, \sigma^2 I)`
    (``input_std`` = :math:`\sigma`, drawn from ``seed``); the norms of the lagged Jacobian
    products at the last step are returned, shape (L + 1,). On a log scale they fall on a
    line of slope :math:`\log \rho` for a linear unit with a normal :math:`W_{hh}`, and bend
    down for tanh as the units saturate.
    """
    W_hh = _square("W_hh", W_hh)
    max_lag = integer(max_lag, "max_lag", low=1)
    _check_phi(phi)
    H = W_hh.shape[0]
    x = input_std * np.random.default_rng(seed).standard_normal((max_lag, H))
    z = elman_preactivations(x, np.zeros(H), W_hh, np.eye(H), np.zeros(H), phi)
    return _spectral_norms(jacobian_products_vs_lag(_step_jacobians(z, W_hh, phi)))


def lag_gradient_norms(
    rhos, input_stds, lag: int, phi: str = "tanh", *, H: int = 64, seeds=(0, 1, 2, 3, 4), matrix_seed=0
) -> np.ndarray:
    r"""Mean :math:`\lVert \partial h_T/\partial h_{T-l} \rVert_2` at one lag, over :math:`\rho` and input strength.

    For each spectral radius :math:`\rho` (a Gaussian :math:`W_{hh}` from
    :func:`random_recurrent_matrix` with ``matrix_seed``) and each input standard deviation
    :math:`\sigma`, the network :math:`h_t = \phi(W_{hh} h_{t-1} + x_t)`,
    :math:`x_t \sim \mathcal N(0, \sigma^2 I)`, is run for :math:`T = l` steps from
    :math:`h_0 = 0` (:func:`gradient_norm_vs_lag`), once per input seed in ``seeds``, and the
    norms of the lag-:math:`l` Jacobian product are averaged over the seeds.

    With :math:`\sigma = 0` the state stays at the fixed point :math:`h = 0`, where
    :math:`\phi'(0) = 1` for tanh: the product is :math:`W_{hh}^l` and grows like
    :math:`\rho^l` when :math:`\rho > 1`. Stronger inputs push the units into saturation,
    which shrinks every factor: whether gradients vanish or explode depends on
    :math:`\rho` *and* on how hard the units are driven.

    Returns
    -------
    norms : (len(input_stds), len(rhos))
    """
    lag = integer(lag, "lag", low=1)
    H = integer(H, "H", low=1)
    rhos = np.asarray(rhos, dtype=float).ravel()
    input_stds = np.asarray(input_stds, dtype=float).ravel()
    if rhos.size == 0 or input_stds.size == 0 or len(seeds) == 0:
        raise ValueError("rhos, input_stds and seeds must each hold at least one value")
    if np.any(input_stds < 0) or not np.all(np.isfinite(input_stds)):
        raise ValueError(f"input_stds must be finite and >= 0, got {input_stds}")
    norms = np.empty((input_stds.size, rhos.size))  # (S, R)
    for j, rho in enumerate(rhos):
        W = random_recurrent_matrix(H, rho, seed=matrix_seed)
        for i, sigma in enumerate(input_stds):
            runs = [gradient_norm_vs_lag(W, lag, phi, input_std=sigma, seed=s)[lag] for s in seeds]
            norms[i, j] = np.mean(runs)
    return norms
