r"""The Elman RNN of Chapter 3 in plain NumPy (float64), with its backpropagation through time.

.. math::
    z_t = W_{hh} h_{t-1} + W_{xh} x_t + b_h, \qquad h_t = \phi(z_t), \qquad
    y_t = W_{hy} h_t + b_y, \qquad t = 1, \dots, T

Shapes: one sequence is ``x`` (T, D), ``h0`` (H,), ``W_hh`` (H, H), ``W_xh`` (H, D),
``b_h`` (H,), ``W_hy`` (O, H), ``b_y`` (O,); targets are (T, O) floats for the squared
error and (T,) ints in ``[0, O)`` for the cross-entropy. A batch of sequences adds a
leading axis B to ``x``, the targets and (optionally) ``h0``; the loss is then summed over
the batch too, and a shared ``h0`` of shape (H,) gets the gradient summed over the batch.

The gradients come two ways, tested equal: :func:`bptt_gradients_unrolled`, the double
sum over Jacobian products as written in the chapter (slow, readable), and
:func:`bptt_gradients`, the backward recursion on :math:`\delta_t = \partial L / \partial z_t`
(fast). :func:`truncated_bptt_gradients` is truncated BPTT(k1, k2).
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import integer

__all__ = [
    "NONLINEARITIES",
    "LOSSES",
    "activation",
    "activation_derivative",
    "init_elman_params",
    "elman_preactivations",
    "elman_forward",
    "elman_loss",
    "output_error",
    "bptt_gradients",
    "bptt_gradients_unrolled",
    "truncated_bptt_gradients",
]

NONLINEARITIES = ("tanh", "sigmoid", "linear")
LOSSES = ("mse", "cross_entropy")


def _check_phi(phi) -> str:
    if not isinstance(phi, str):
        raise TypeError(f"phi must be the name of a nonlinearity, one of {NONLINEARITIES}, got {type(phi).__name__}")
    if phi not in NONLINEARITIES:
        raise ValueError(f"unknown nonlinearity phi={phi!r}; expected one of {NONLINEARITIES}")
    return phi


def activation(z, phi: str = "tanh") -> np.ndarray:
    r""":math:`\phi(z)` elementwise: ``"tanh"``, ``"sigmoid"`` :math:`1/(1+e^{-z})` or ``"linear"`` (identity)."""
    phi, z = _check_phi(phi), np.asarray(z, dtype=np.float64)
    if phi == "tanh":
        return np.tanh(z)
    if phi == "sigmoid":
        return 0.5 * (1.0 + np.tanh(0.5 * z))  # = 1 / (1 + exp(-z)), without overflow
    return z.copy()


def activation_derivative(z, phi: str = "tanh") -> np.ndarray:
    r""":math:`\phi'(z)` elementwise: :math:`1 - \tanh^2 z`, :math:`\sigma(z)(1 - \sigma(z))` or 1."""
    phi, z = _check_phi(phi), np.asarray(z, dtype=np.float64)
    if phi == "tanh":
        return 1.0 - np.tanh(z) ** 2
    if phi == "sigmoid":
        s = activation(z, "sigmoid")
        return s * (1.0 - s)
    return np.ones_like(z)


def init_elman_params(D: int, H: int, O: int, *, rho: float = 0.9, seed=0) -> dict[str, np.ndarray]:
    r"""Random float64 parameters of an Elman RNN, as a dict for ``f(x, targets, **params)``.

    ``W_hh`` is Gaussian, rescaled to spectral radius ``rho``; ``W_xh`` and ``W_hy`` are
    :math:`\mathcal N(0, 1/\text{fan-in})`; biases and ``h0`` are small Gaussians.
    Keys: ``h0`` (H,), ``W_hh`` (H, H), ``W_xh`` (H, D), ``b_h`` (H,), ``W_hy`` (O, H), ``b_y`` (O,).
    """
    D, H, O = (integer(n, name, low=1) for name, n in (("D", D), ("H", H), ("O", O)))
    rng = np.random.default_rng(seed)
    W_hh = rng.standard_normal((H, H))
    W_hh *= rho / np.max(np.abs(np.linalg.eigvals(W_hh)))
    return {
        "h0": 0.1 * rng.standard_normal(H),
        "W_hh": W_hh,
        "W_xh": rng.standard_normal((H, D)) / np.sqrt(D),
        "b_h": 0.1 * rng.standard_normal(H),
        "W_hy": rng.standard_normal((O, H)) / np.sqrt(H),
        "b_y": 0.1 * rng.standard_normal(O),
    }


def _float_array(name: str, a, ndim: int | tuple[int, ...]) -> np.ndarray:
    a = np.asarray(a)
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    a = a.astype(np.float64)
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if a.ndim not in ndims:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndims))} dimensions, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


def _check_rnn(x, h0, W_hh, W_xh, b_h):
    """Validated float64 arrays with a batch axis: x (B, T, D), h0 (B, H); and whether x had one."""
    x = _float_array("x", x, (2, 3))
    batched = x.ndim == 3
    x = x if batched else x[None]
    W_hh = _float_array("W_hh", W_hh, 2)
    if W_hh.shape[0] != W_hh.shape[1]:
        raise ValueError(f"W_hh must be square (H, H), got shape {W_hh.shape}")
    H, (B, T, D) = W_hh.shape[0], x.shape
    if T < 1:
        raise ValueError("x must hold at least one time step (T >= 1)")
    W_xh, b_h = _float_array("W_xh", W_xh, 2), _float_array("b_h", b_h, 1)
    if W_xh.shape != (H, D):
        raise ValueError(
            f"W_xh must have shape (H, D) = {(H, D)} for W_hh {W_hh.shape} and x {x.shape}, got {W_xh.shape}"
        )
    if b_h.shape != (H,):
        raise ValueError(f"b_h must have shape (H,) = {(H,)}, got {b_h.shape}")
    h0 = _float_array("h0", h0, (1, 2))
    if h0.shape[-1] != H or (h0.ndim == 2 and (not batched or h0.shape[0] != B)):
        expected = f"(H,) = {(H,)}" + (f" or (B, H) = {(B, H)}" if batched else "")
        raise ValueError(f"h0 must have shape {expected}, got {h0.shape}")
    return x, np.broadcast_to(h0, (B, H)), W_hh, W_xh, b_h, batched


def _check_readout(W_hy, b_y, H: int):
    W_hy, b_y = _float_array("W_hy", W_hy, 2), _float_array("b_y", b_y, 1)
    if W_hy.shape[1] != H:
        raise ValueError(f"W_hy must have shape (O, H) with H = {H}, got {W_hy.shape}")
    if b_y.shape != (W_hy.shape[0],):
        raise ValueError(f"b_y must have shape (O,) = {(W_hy.shape[0],)}, got {b_y.shape}")
    return W_hy, b_y


def _check_targets(targets, loss: str, B: int, T: int, O: int, batched: bool) -> np.ndarray:
    if not isinstance(loss, str) or loss not in LOSSES:
        raise ValueError(f"unknown loss={loss!r}; expected one of {LOSSES}")
    targets = np.asarray(targets)
    lead = (B, T) if batched else (T,)
    if loss == "mse":
        targets = _float_array("targets", targets, len(lead) + 1)
        if targets.shape != (*lead, O):
            raise ValueError(f"targets for the squared error must have shape {(*lead, O)}, got {targets.shape}")
        return targets.reshape(B, T, O)
    if not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"targets for the cross-entropy must be integer class ids, got dtype {targets.dtype}")
    if targets.shape != lead:
        raise ValueError(f"targets for the cross-entropy must have shape {lead}, got {targets.shape}")
    if targets.size and (targets.min() < 0 or targets.max() >= O):
        raise ValueError(f"targets must be class ids in [0, {O}), got values in [{targets.min()}, {targets.max()}]")
    return targets.reshape(B, T)


def _run(x, h0, W_hh, W_xh, b_h, phi):
    """z (B, T, H) and h (B, T + 1, H) with h[:, 0] = h0, from validated batched arrays."""
    B, T, _ = x.shape
    u = x @ W_xh.T + b_h  # (B, T, H) input drive W_xh x_t + b_h
    z = np.empty((B, T, len(b_h)))
    h = np.empty((B, T + 1, len(b_h)))
    h[:, 0] = h0
    for t in range(T):
        z[:, t] = h[:, t] @ W_hh.T + u[:, t]
        h[:, t + 1] = activation(z[:, t], phi)
    return z, h


@reference
def elman_preactivations(x, h0, W_hh, W_xh, b_h, phi: str = "tanh") -> np.ndarray:
    r"""The pre-activations :math:`z_t = W_{hh} h_{t-1} + W_{xh} x_t + b_h`, shape (T, H) (or (B, T, H))."""
    x, h0, W_hh, W_xh, b_h, batched = _check_rnn(x, h0, W_hh, W_xh, b_h)
    z, _ = _run(x, h0, W_hh, W_xh, b_h, _check_phi(phi))
    return z if batched else z[0]


@reference
def elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi: str = "tanh") -> tuple[np.ndarray, np.ndarray]:
    r"""Run the Elman RNN over a sequence.

    .. math::
        h_t = \phi(W_{hh} h_{t-1} + W_{xh} x_t + b_h), \qquad y_t = W_{hy} h_t + b_y

    Parameters
    ----------
    x : (T, D) or (B, T, D) inputs :math:`x_1, \dots, x_T`
    h0 : (H,) or (B, H) initial state
    W_hh, W_xh, b_h, W_hy, b_y : (H, H), (H, D), (H,), (O, H), (O,)
    phi : ``"tanh"``, ``"sigmoid"`` or ``"linear"``

    Returns
    -------
    h : (T, H) or (B, T, H), the states :math:`h_1, \dots, h_T` (not :math:`h_0`)
    y : (T, O) or (B, T, O), the outputs :math:`y_1, \dots, y_T`

    Examples
    --------
    A linear unit with :math:`W_{hh} = 0.5` halves an impulse at every step:

    >>> x = np.array([[1.0], [0.0], [0.0]])  # T = 3 steps of D = 1
    >>> one = np.eye(1)
    >>> h, y = elman_forward(x, np.zeros(1), 0.5 * one, one, np.zeros(1), 2 * one, np.zeros(1), phi="linear")
    >>> h[:, 0], y[:, 0]  # h_t = 0.5 h_{t-1} + x_t, y_t = 2 h_t
    (array([1.  , 0.5 , 0.25]), array([2. , 1. , 0.5]))
    """
    x, h0, W_hh, W_xh, b_h, batched = _check_rnn(x, h0, W_hh, W_xh, b_h)
    W_hy, b_y = _check_readout(W_hy, b_y, W_hh.shape[0])
    _, h = _run(x, h0, W_hh, W_xh, b_h, _check_phi(phi))
    h = h[:, 1:]
    y = h @ W_hy.T + b_y
    return (h, y) if batched else (h[0], y[0])


def _log_softmax(y: np.ndarray) -> np.ndarray:
    shifted = y - y.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@reference
def elman_loss(y, targets, loss: str = "mse") -> float:
    r"""The loss summed over time steps (and over the batch, if any).

    ``"mse"``: :math:`L = \sum_t \tfrac12 \lVert y_t - \hat y_t \rVert^2`, targets of ``y``'s shape.
    ``"cross_entropy"``: :math:`L = -\sum_t \log \mathrm{softmax}(y_t)_{c_t}`, integer targets
    :math:`c_t` of shape ``y.shape[:-1]``.
    """
    y = _float_array("y", y, (2, 3))
    batched = y.ndim == 3
    y = y if batched else y[None]
    B, T, O = y.shape
    targets = _check_targets(targets, loss, B, T, O, batched)
    if loss == "mse":
        return float(0.5 * np.sum((y - targets) ** 2))
    return float(-np.sum(np.take_along_axis(_log_softmax(y), targets[..., None], axis=-1)))


def output_error(y, targets, loss: str = "mse") -> np.ndarray:
    r""":math:`e_t = \partial L / \partial y_t`: :math:`y_t - \hat y_t` (squared error) or
    :math:`\mathrm{softmax}(y_t) - \mathrm{onehot}(c_t)` (cross-entropy), same shape as ``y``."""
    y = _float_array("y", y, (2, 3))
    batched = y.ndim == 3
    B, T, O = y.shape if batched else (1, *y.shape)
    e = _output_error(y.reshape(B, T, O), _check_targets(targets, loss, B, T, O, batched), loss)
    return e if batched else e[0]


def _output_error(y: np.ndarray, targets: np.ndarray, loss: str) -> np.ndarray:
    if loss == "mse":
        return y - targets
    e = np.exp(_log_softmax(y))
    np.put_along_axis(e, targets[..., None], np.take_along_axis(e, targets[..., None], axis=-1) - 1.0, axis=-1)
    return e


def _prepare(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi, loss):
    """Validate, run forward, and return everything the backward passes need."""
    h0_shared = np.ndim(h0) == 1
    x, h0, W_hh, W_xh, b_h, batched = _check_rnn(x, h0, W_hh, W_xh, b_h)
    W_hy, b_y = _check_readout(W_hy, b_y, W_hh.shape[0])
    phi = _check_phi(phi)
    B, T, _ = x.shape
    targets = _check_targets(targets, loss, B, T, W_hy.shape[0], batched)
    z, h = _run(x, h0, W_hh, W_xh, b_h, phi)
    e = _output_error(h[:, 1:] @ W_hy.T + b_y, targets, loss)  # (B, T, O)
    return x, h, z, e, W_hh, W_hy, phi, batched, h0_shared


def _pack(dW_hh, dW_xh, db_h, dW_hy, db_y, dh0, batched, h0_shared) -> dict[str, np.ndarray]:
    if h0_shared:
        dh0 = dh0.sum(axis=0)
    elif not batched:
        dh0 = dh0[0]
    return {"h0": dh0, "W_hh": dW_hh, "W_xh": dW_xh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y}


def _readout_grads(h, e):
    r""":math:`\partial L/\partial W_{hy} = \sum_t e_t h_t^\top`, :math:`\partial L/\partial b_y = \sum_t e_t`."""
    return np.einsum("bto,bth->oh", e, h[:, 1:]), e.sum(axis=(0, 1))


@reference
def bptt_gradients(
    x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi: str = "tanh", loss: str = "mse"
) -> dict[str, np.ndarray]:
    r"""All parameter gradients of the loss by backpropagation through time (the backward recursion).

    With :math:`e_t = \partial L_t / \partial y_t` and :math:`g_t = W_{hy}^\top e_t =
    \partial L_t / \partial h_t`, the error at the pre-activations runs backwards:

    .. math::
        \delta_t = \frac{\partial L}{\partial z_t} = \phi'(z_t) \odot
            \left(g_t + W_{hh}^\top \delta_{t+1}\right), \qquad \delta_{T+1} = 0,

    and the gradients collect :math:`\delta_t` times each parameter's immediate input:

    .. math::
        \frac{\partial L}{\partial W_{hh}} = \sum_t \delta_t h_{t-1}^\top, \quad
        \frac{\partial L}{\partial W_{xh}} = \sum_t \delta_t x_t^\top, \quad
        \frac{\partial L}{\partial b_h} = \sum_t \delta_t, \quad
        \frac{\partial L}{\partial h_0} = W_{hh}^\top \delta_1,

    with :math:`\partial L/\partial W_{hy} = \sum_t e_t h_t^\top` and
    :math:`\partial L/\partial b_y = \sum_t e_t`. Cost O(T H^2).

    Arguments as in :func:`elman_forward` and :func:`elman_loss` (``targets`` (T, O) floats
    for ``loss="mse"``, (T,) ints for ``loss="cross_entropy"``).

    Returns
    -------
    dict with keys ``h0``, ``W_hh``, ``W_xh``, ``b_h``, ``W_hy``, ``b_y``; each gradient
    has its parameter's shape.
    """
    x, h, z, e, W_hh, W_hy, phi, batched, h0_shared = _prepare(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi, loss)
    g = e @ W_hy  # (B, T, H) g_t = dL_t/dh_t
    dphi = activation_derivative(z, phi)  # (B, T, H)
    delta = np.zeros_like(z)  # (B, T, H) delta_t = dL/dz_t
    carry = np.zeros_like(z[:, 0])  # W_hh^T delta_{t+1}
    for t in reversed(range(z.shape[1])):
        delta[:, t] = dphi[:, t] * (g[:, t] + carry)
        carry = delta[:, t] @ W_hh
    dW_hy, db_y = _readout_grads(h, e)
    return _pack(
        np.einsum("bti,btj->ij", delta, h[:, :-1]),
        np.einsum("bti,btd->id", delta, x),
        delta.sum(axis=(0, 1)),
        dW_hy,
        db_y,
        carry,
        batched,
        h0_shared,
    )


def _check_truncation(k1, k2) -> tuple[int, int]:
    k1, k2 = integer(k1, "k1", low=1), integer(k2, "k2", low=1)
    if k2 < k1:
        raise ValueError(
            f"k2 (steps backpropagated) must be >= k1 (steps between backward passes), got k1={k1}, k2={k2}"
        )
    return int(k1), int(k2)


def _backward_at(t: int, T: int, k1: int | None, k2: int | None) -> int:
    """The step s at which the loss of step t (1-based) is backpropagated: T for full BPTT."""
    if k1 is None:
        return T
    return min(-(-t // k1) * k1, T)


@reference
def bptt_gradients_unrolled(
    x,
    targets,
    h0,
    W_hh,
    W_xh,
    b_h,
    W_hy,
    b_y,
    phi: str = "tanh",
    loss: str = "mse",
    k1: int | None = None,
    k2: int | None = None,
) -> dict[str, np.ndarray]:
    r"""The same gradients as :func:`bptt_gradients`, from the double sum over Jacobian products.

    Each loss term :math:`L_t` reaches a parameter :math:`\theta` through every earlier state
    :math:`h_k`, :math:`k \le t`:

    .. math::
        \frac{\partial L}{\partial \theta} = \sum_{t=1}^{T} \sum_{k=1}^{t}
            \frac{\partial L_t}{\partial h_t}
            \Bigl(\prod_{j=k+1}^{t} \mathrm{diag}(\phi'(z_j))\, W_{hh}\Bigr)
            \frac{\partial^+ h_k}{\partial \theta},

    where :math:`\partial^+ h_k / \partial \theta = \mathrm{diag}(\phi'(z_k))\,
    \partial^+ z_k / \partial \theta` is the immediate derivative (:math:`h_{k-1}` held
    fixed), and :math:`\partial L_t / \partial h_0 = \frac{\partial L_t}{\partial h_t}
    \prod_{j=1}^{t} \mathrm{diag}(\phi'(z_j)) W_{hh}`. The products are formed as H x H
    matrices: cost O(T^2 H^3), for teaching and testing only.

    With ``k1`` and ``k2`` given, the sum is truncated as in truncated BPTT(k1, k2) (see
    :func:`truncated_bptt_gradients`): the term (t, k) is kept only if
    :math:`k > s_t - k_2`, where :math:`s_t = \min(k_1 \lceil t / k_1 \rceil, T)` is the
    step at which :math:`L_t` is backpropagated (and :math:`\partial L_t/\partial h_0` only if
    :math:`s_t \le k_2`).
    """
    if (k1 is None) != (k2 is None):
        raise ValueError("give both k1 and k2 for truncated BPTT, or neither")
    if k1 is not None:
        k1, k2 = _check_truncation(k1, k2)
    x, h, z, e, W_hh, W_hy, phi, batched, h0_shared = _prepare(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi, loss)
    B, T, H = z.shape
    dphi = activation_derivative(z, phi)  # (B, T, H)
    J = dphi[..., :, None] * W_hh  # (B, T, H, H) J_j = diag(phi'(z_j)) W_hh, J[:, j-1] for step j
    dW_hh, dW_xh, db_h = np.zeros_like(W_hh), np.zeros((H, x.shape[2])), np.zeros(H)
    dh0 = np.zeros((B, H))
    for t in range(1, T + 1):
        g_t = e[:, t - 1] @ W_hy  # (B, H) dL_t/dh_t
        first_k = 1 if k1 is None or k2 is None else _backward_at(t, T, k1, k2) - k2 + 1
        P = np.broadcast_to(np.eye(H), (B, H, H))  # dh_t/dh_k, starting at k = t
        for k in range(t, 0, -1):
            if k < first_k:
                break
            d_k = dphi[:, k - 1] * np.einsum("bi,bij->bj", g_t, P)  # (B, H) dL_t/dh_t . dh_t/dh_k . diag(phi'(z_k))
            dW_hh += d_k.T @ h[:, k - 1]
            dW_xh += d_k.T @ x[:, k - 1]
            db_h += d_k.sum(axis=0)
            P = P @ J[:, k - 1]  # dh_t/dh_{k-1}
        else:
            dh0 += np.einsum("bi,bij->bj", g_t, P)
    dW_hy, db_y = _readout_grads(h, e)
    return _pack(dW_hh, dW_xh, db_h, dW_hy, db_y, dh0, batched, h0_shared)


@reference
def truncated_bptt_gradients(
    x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, k1: int, k2: int, phi: str = "tanh", loss: str = "mse"
) -> dict[str, np.ndarray]:
    r"""Gradients of truncated BPTT(k1, k2) (Williams & Peng 1990; Sutskever 2013).

    The forward pass runs over the whole sequence; every ``k1`` steps, at
    :math:`s = k_1, 2k_1, \dots` (and at :math:`s = T` for a last, shorter block), the
    losses of the block since the previous backward pass at :math:`s'`,
    :math:`L_{s'+1}, \dots, L_s`, are backpropagated through the last ``k2`` steps only,
    :math:`z_s, \dots, z_{s-k_2+1}`:

    .. math::
        \delta^{(s)}_t = \phi'(z_t) \odot \left([t > s']\, g_t + W_{hh}^\top
            \delta^{(s)}_{t+1}\right), \quad s - k_2 < t \le s,

    and the gradients sum :math:`\delta^{(s)}_t` times the immediate inputs over all blocks,
    as in :func:`bptt_gradients`. ``h0`` gets a gradient only from the blocks that reach
    step 1 (:math:`s \le k_2`). Requires :math:`1 \le k_1 \le k_2`; with
    :math:`k_2 \ge T` this is exactly full BPTT. The readout gradients are never truncated.

    Returns
    -------
    dict of gradients, as :func:`bptt_gradients`.
    """
    k1, k2 = _check_truncation(k1, k2)
    x, h, z, e, W_hh, W_hy, phi, batched, h0_shared = _prepare(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi, loss)
    B, T, H = z.shape
    g = e @ W_hy  # (B, T, H)
    dphi = activation_derivative(z, phi)
    dW_hh, dW_xh, db_h, dh0 = np.zeros_like(W_hh), np.zeros((H, x.shape[2])), np.zeros(H), np.zeros((B, H))
    block_ends = sorted({*range(k1, T + 1, k1), T})  # 1-based
    for start, s in zip([0, *block_ends[:-1]], block_ends):
        carry = np.zeros((B, H))
        for t in range(s, max(s - k2, 0), -1):  # 1-based steps s, s-1, ..., s-k2+1
            inject = g[:, t - 1] if t > start else 0.0
            delta_t = dphi[:, t - 1] * (inject + carry)
            dW_hh += delta_t.T @ h[:, t - 1]
            dW_xh += delta_t.T @ x[:, t - 1]
            db_h += delta_t.sum(axis=0)
            carry = delta_t @ W_hh
        if s <= k2:
            dh0 += carry
    dW_hy, db_y = _readout_grads(h, e)
    return _pack(dW_hh, dW_xh, db_h, dW_hy, db_y, dh0, batched, h0_shared)
