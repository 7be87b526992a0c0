r"""Chapter 4's exercise references in plain NumPy (float64): one LSTM step, one GRU step, one reservoir step.

The gated cells of :mod:`seqlearn.gated.cells` are torch modules; the exercises are written in
NumPy, and these are the references they are graded against (each an
:func:`seqlearn.guard.reference`, so it refuses to run inside a graded answer). They follow
``torch.nn``'s conventions exactly, rows as batch entries:

* :func:`lstm_step`, gate order **i, f, g, o**, parameters stacked as ``torch.nn.LSTM`` stacks them;
* :func:`gru_step`, gate order **r, z, n**, the reset gate applied to :math:`W_{hn} h + b_{hn}`
  and :math:`z` weighting the old state, as ``torch.nn.GRU``;
* :func:`reservoir_update`, one leaky echo-state step as
  :meth:`seqlearn.reservoir.EchoStateNetwork.run` computes it;
* :func:`ridge_readout` and :func:`memory_capacity`, the graded entry points of
  :func:`seqlearn.reservoir.ridge_readout` and :func:`seqlearn.reservoir.memory_capacity`
  (scipy loads on their first call).

Nothing here imports torch or scipy at import time. ``tests/test_gated_reference.py`` tests the
steps against ``torch.nn.LSTM`` / ``torch.nn.GRU`` in float64 and the reservoir step against
the echo state network.
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import real, real_array

__all__ = ["lstm_step", "gru_step", "reservoir_update", "ridge_readout", "memory_capacity"]


def _sigmoid(a: np.ndarray) -> np.ndarray:
    r""":math:`\sigma(a) = 1 / (1 + e^{-a})`, written with tanh so that no exp overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * a))


def _step_arrays(n_gates: int, x, h, W_ih, W_hh, b_ih, b_hh) -> list[np.ndarray]:
    """The arguments of a gated step as float64 arrays, their shapes checked against each other."""
    x, h = real_array(x, "x", ndim=2), real_array(h, "h", ndim=2)
    (B, D), H = x.shape, h.shape[1]
    if h.shape[0] != B:
        raise ValueError(f"x and h must have the same number of rows B, got {B} and {h.shape[0]}")
    W_ih = real_array(W_ih, "W_ih", shape=(n_gates * H, D))
    W_hh = real_array(W_hh, "W_hh", shape=(n_gates * H, H))
    b_ih = real_array(b_ih, "b_ih", shape=(n_gates * H,))
    b_hh = real_array(b_hh, "b_hh", shape=(n_gates * H,))
    return [x, h, W_ih, W_hh, b_ih, b_hh]


@reference
def lstm_step(x, h, c, W_ih, W_hh, b_ih, b_hh) -> tuple[np.ndarray, np.ndarray]:
    r"""One LSTM step :math:`(x_t, h_{t-1}, c_{t-1}) \mapsto (h_t, c_t)`, equal to ``torch.nn.LSTMCell``.

    .. math::
        a &= W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh} = [a_i; a_f; a_g; a_o] \\
        i_t &= \sigma(a_i), \quad f_t = \sigma(a_f), \quad g_t = \tanh(a_g), \quad o_t = \sigma(a_o) \\
        c_t &= f_t \odot c_{t-1} + i_t \odot g_t, \qquad h_t = o_t \odot \tanh(c_t)

    Parameters
    ----------
    x : array ``(B, D)``
        The inputs :math:`x_t`, one row per sequence of the batch.
    h, c : arrays ``(B, H)``
        :math:`h_{t-1}` and :math:`c_{t-1}`.
    W_ih : array ``(4H, D)``
        :math:`[W_{ii}; W_{if}; W_{ig}; W_{io}]`, ``weight_ih_l0`` of a ``torch.nn.LSTM``.
    W_hh : array ``(4H, H)``
        :math:`[W_{hi}; W_{hf}; W_{hg}; W_{ho}]`.
    b_ih, b_hh : arrays ``(4H,)``
        The two biases, same order.

    Returns
    -------
    (h_new, c_new) : new float64 arrays ``(B, H)``
    """
    x, h, W_ih, W_hh, b_ih, b_hh = _step_arrays(4, x, h, W_ih, W_hh, b_ih, b_hh)
    c = real_array(c, "c", shape=h.shape)
    a = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh  # (B, 4H): rows of W act on column vectors
    a_i, a_f, a_g, a_o = np.split(a, 4, axis=-1)  # (B, H) each, gate order i, f, g, o
    i, f, g, o = _sigmoid(a_i), _sigmoid(a_f), np.tanh(a_g), _sigmoid(a_o)
    c_new = f * c + i * g  # the additive update: the constant error carousel when f = 1, i = 0
    h_new = o * np.tanh(c_new)
    return h_new, c_new


@reference
def gru_step(x, h, W_ih, W_hh, b_ih, b_hh) -> np.ndarray:
    r"""One GRU step :math:`(x_t, h_{t-1}) \mapsto h_t`, equal to ``torch.nn.GRUCell``.

    .. math::
        r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\
        z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
        n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})) \\
        h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}

    The reset gate multiplies :math:`W_{hn} h_{t-1} + b_{hn}` (after the matrix product, bias
    included), and :math:`z_t` weights the *old* state.

    Parameters
    ----------
    x : array ``(B, D)``
    h : array ``(B, H)``
        :math:`h_{t-1}`.
    W_ih : array ``(3H, D)``
        :math:`[W_{ir}; W_{iz}; W_{in}]`, ``weight_ih_l0`` of a ``torch.nn.GRU``.
    W_hh : array ``(3H, H)``
        :math:`[W_{hr}; W_{hz}; W_{hn}]`.
    b_ih, b_hh : arrays ``(3H,)``
        :math:`[b_{ir}; b_{iz}; b_{in}]` and :math:`[b_{hr}; b_{hz}; b_{hn}]`.

    Returns
    -------
    h_new : new float64 array ``(B, H)``
    """
    x, h, W_ih, W_hh, b_ih, b_hh = _step_arrays(3, x, h, W_ih, W_hh, b_ih, b_hh)
    x_r, x_z, x_n = np.split(x @ W_ih.T + b_ih, 3, axis=-1)  # (B, H) each, gate order r, z, n
    h_r, h_z, h_n = np.split(h @ W_hh.T + b_hh, 3, axis=-1)
    r = _sigmoid(x_r + h_r)
    z = _sigmoid(x_z + h_z)
    n = np.tanh(x_n + r * h_n)  # h_n = W_hn h + b_hn: reset after the product
    return (1.0 - z) * n + z * h


@reference
def reservoir_update(x, u, W, W_in, b, leak_rate) -> np.ndarray:
    r"""One leaky echo-state step :math:`x_t = (1 - a)\, x_{t-1} + a \tanh(W x_{t-1} + W_{in} u_t + b)`.

    The update of :class:`seqlearn.reservoir.EchoStateNetwork` (tanh units), one step.

    Parameters
    ----------
    x : array ``(N,)`` or ``(B, N)``
        :math:`x_{t-1}`: one state, or one per row.
    u : array ``(d,)`` or ``(B, d)``
        :math:`u_t`, matching ``x``.
    W : array ``(N, N)``
        The reservoir matrix.
    W_in : array ``(N, d)``
        The input weights.
    b : array ``(N,)``
        The bias.
    leak_rate : float
        :math:`a \in (0, 1]`; :math:`a = 1` is the non-leaky network.

    Returns
    -------
    x_new : new float64 array of ``x``'s shape
    """
    x = real_array(x, "x", ndim=(1, 2))
    u = real_array(u, "u", ndim=x.ndim)
    N, d = x.shape[-1], u.shape[-1]
    if x.shape[:-1] != u.shape[:-1]:
        raise ValueError(f"x and u must have the same number of rows, got shapes {x.shape} and {u.shape}")
    W = real_array(W, "W", shape=(N, N))
    W_in = real_array(W_in, "W_in", shape=(N, d))
    b = real_array(b, "b", shape=(N,))
    a = real(leak_rate, "leak_rate", low=0.0, high=1.0, low_open=True)
    drive = x @ W.T + u @ W_in.T + b  # (N,) or (B, N): W x + W_in u + b for each row
    return (1.0 - a) * x + a * np.tanh(drive)


@reference
def ridge_readout(Z, Y, ridge):
    r"""The ridge readout :math:`W = (Z^\top Z + \beta I)^{-1} Z^\top Y`: :func:`seqlearn.reservoir.ridge_readout`."""
    from ..reservoir import esn

    return esn.ridge_readout(Z, Y, ridge)


@reference
def memory_capacity(states, u, k_max):
    r"""Jaeger's memory capacity ``(mc, r2)``: :func:`seqlearn.reservoir.memory_capacity` with its defaults.

    Half of the steps :math:`t \ge k_{max}` train the least-squares readouts (``ridge = 0``),
    the other half score them; see :func:`seqlearn.reservoir.memory_capacity`.
    """
    from ..reservoir import diagnostics

    return diagnostics.memory_capacity(states, u, k_max)
