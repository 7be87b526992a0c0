r"""Echo-state-property check, memory capacity (Jaeger 2002) and the NRMSE."""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import generator, integer, real, real_array
from .esn import EchoStateNetwork, ridge_readout

__all__ = ["echo_state_distance", "memory_capacity", "nrmse"]


def nrmse(y_true, y_pred) -> float:
    r"""Normalised root-mean-square error :math:`\sqrt{\overline{(y - \hat y)^2}} / \operatorname{std}(y)`.

    Jaeger's normalisation by the standard deviation of the target (not ReservoirPy's
    default peak-to-peak, nor its ``norm="var"``). Arrays of any equal shape; pooled over
    all entries. Persistence on a smooth series scores far below 1; the mean scores 1.
    """
    y = real_array(y_true, "y_true")
    p = real_array(y_pred, "y_pred")
    if y.shape != p.shape:
        raise ValueError(f"y_true and y_pred must have the same shape, got {y.shape} and {p.shape}")
    if y.size < 2 or float(y.std()) == 0.0:
        raise ValueError("y_true must have at least two distinct values")
    return float(np.sqrt(np.mean((y - p) ** 2)) / y.std())


def echo_state_distance(esn: EchoStateNetwork, u, *, scale: float = 1.0, seed=None) -> np.ndarray:
    r"""Distance :math:`\|x_t - x'_t\|_2` between two runs from different initial states under the same input.

    The initial states are drawn :math:`U(-s, s)^N` (``scale`` :math:`s > 0`). The echo state
    property says the distance goes to 0 for every input; :math:`\sigma_{\max}(W) < 1` makes the
    tanh update a contraction (sufficient), :math:`\rho(W) < 1` is only a heuristic.

    Returns
    -------
    numpy.ndarray, shape ``(T + 1,)``: the distance at steps :math:`0..T` (step 0: the initial states).
    """
    if not isinstance(esn, EchoStateNetwork):
        raise TypeError(f"esn must be an EchoStateNetwork, got {type(esn).__name__}")
    s = real(scale, "scale", low=0.0, low_open=True)
    rng = generator(seed, "seed")
    U = esn._inputs(real_array(u, "u", ndim=(1, 2)))[0]  # (T, d)
    x0 = rng.uniform(-s, s, (2, esn.hidden_size))
    states, _ = esn.run(np.broadcast_to(U, (2, *U.shape)), x0)
    first = np.linalg.norm(x0[0] - x0[1])
    return np.concatenate([[first], np.linalg.norm(states[0] - states[1], axis=-1)])


@reference
def memory_capacity(states, u, k_max: int, *, train_fraction: float = 0.5, ridge: float = 0.0):
    r"""Jaeger's (2002) memory capacity :math:`MC = \sum_{k=1}^{k_{max}} r^2(u_{t-k}, \hat u_{t-k})`.

    For every delay :math:`k` a linear readout :math:`\hat u_{t-k} = w_k^\top [1; x_t]` is fitted
    by least squares (ridge ``ridge``) on the first ``train_fraction`` of the steps
    :math:`t \ge k_{max}` and scored by the squared correlation on the rest. For i.i.d. input,
    :math:`MC \le N`; a linear reservoir with a well-conditioned (e.g. orthogonal) :math:`W`
    approaches :math:`N`.

    Parameters
    ----------
    states : array ``(T, N)``
        Reservoir states driven by ``u`` (washout already removed or not: steps before
        ``k_max`` are dropped).
    u : array ``(T,)``
        The scalar input, i.i.d. for the bound to hold.
    k_max : int
        Largest delay, ``1 <= k_max`` (usually :math:`2N`).

    Returns
    -------
    mc : float
    mc_k : numpy.ndarray, shape ``(k_max,)``, the per-delay :math:`r^2`.
    """
    X = real_array(states, "states", ndim=2)
    u = real_array(u, "u", ndim=1)
    if len(u) != len(X):
        raise ValueError(f"states and u must have the same length, got {len(X)} and {len(u)}")
    K = integer(k_max, "k_max", low=1)
    frac = real(train_fraction, "train_fraction", low=0.0, high=1.0, low_open=True, high_open=True)
    T = len(u)
    if T - K < 4:
        raise ValueError(f"k_max must leave at least 4 steps, got k_max={K} for {T} steps")
    t = np.arange(K, T)
    targets = np.stack([u[t - k] for k in range(1, K + 1)], axis=1)  # (T - K, K)
    Z = np.concatenate([np.ones((len(t), 1)), X[t]], axis=1)
    n_train = round(frac * len(t))
    if not 2 <= n_train <= len(t) - 2:
        raise ValueError("train_fraction leaves fewer than 2 steps for training or testing")
    W = ridge_readout(Z[:n_train], targets[:n_train], ridge)  # (1 + N, K)
    pred, true = Z[n_train:] @ W, targets[n_train:]
    pc, tc = pred - pred.mean(0), true - true.mean(0)
    denom = (pc**2).sum(0) * (tc**2).sum(0)
    r2 = np.where(denom > 0, (pc * tc).sum(0) ** 2 / np.where(denom > 0, denom, 1.0), 0.0)
    return float(r2.sum()), r2
