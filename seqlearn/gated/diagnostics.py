r"""Gate and memory diagnostics: forget-gate statistics, time scales and the cell-state Jacobian.

**Time scales.** A unit whose state is multiplied by a constant :math:`f \in (0, 1)` each step
forgets as :math:`f^l = e^{-l/\tau}` over a lag :math:`l`, with

.. math::
    \tau = -1 / \log f,

so the forget gate (LSTM :math:`f_t`, GRU :math:`z_t`, the weight of the old state) is a
learned, per-neuron, per-step time constant. :func:`gate_statistics` summarises gate values
per neuron and :func:`time_scales` turns them into :math:`\tau`.

**The constant error carousel.** The LSTM cell update :math:`c_s = f_s \odot c_{s-1} + i_s
\odot g_s`, with :math:`h_{s-1} = o_{s-1} \odot \tanh(c_{s-1})` feeding the gates, gives

.. math::
    \frac{\partial c_s}{\partial c_{s-1}} = \mathrm{diag}(f_s) + \text{gate terms},

the gate terms coming through :math:`h_{s-1}` (they vanish when :math:`W_{hh} = 0`). Without
them :math:`\partial c_T / \partial c_t = \prod_{s=t+1}^{T} \mathrm{diag}(f_s)`: the identity
when :math:`f = 1`, Hochreiter & Schmidhuber's (1997) fixed self-loop of weight 1.
:func:`cell_state_jacobians` computes :math:`\partial c_T / \partial c_{T-l}` for every lag
:math:`l`, exactly (through the joint Jacobian of :math:`(h_s, c_s)`) or on the carousel only.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..validation import flag
from .cells import GRUCell, LSTMCell, check_input, check_state

__all__ = [
    "GateStatistics",
    "gate_statistics",
    "time_scales",
    "cell_state_jacobians",
    "state_jacobians",
    "jacobian_norms",
    "input_gradient_norms",
]


@dataclass(frozen=True)
class GateStatistics:
    r"""Per-neuron summaries of a gate's values, each of shape ``(H,)``.

    ``mean``, ``std``, ``min``, ``max`` over all steps and sequences, and ``tau``
    :math:`= -1/\log(\text{mean})`, the time scale of the mean gate.
    """

    mean: torch.Tensor
    std: torch.Tensor
    min: torch.Tensor
    max: torch.Tensor
    tau: torch.Tensor


def time_scales(f: torch.Tensor) -> torch.Tensor:
    r""":math:`\tau = -1/\log f` elementwise, for gate values ``f`` in :math:`(0, 1]` (:math:`+\infty` at 1)."""
    if not isinstance(f, torch.Tensor) or not f.is_floating_point():
        raise TypeError(f"f must be a floating torch.Tensor, got {type(f).__name__}")
    if f.numel() and (f.min() <= 0 or f.max() > 1):
        raise ValueError("f must lie in (0, 1]")
    return torch.where(f == 1, torch.inf, -1.0 / torch.log(f))  # log(1) = +0 would give -inf


def gate_statistics(values: torch.Tensor) -> GateStatistics:
    r"""Per-neuron statistics of gate values of shape ``(..., H)`` (e.g. ``(B, T, H)`` stacked from the gates).

    Pass the LSTM's :math:`f_t` or the GRU's :math:`z_t` (the weight of the old state) to
    read off the time scales.
    """
    if not isinstance(values, torch.Tensor) or not values.is_floating_point() or values.ndim < 1:
        raise TypeError("values must be a floating torch.Tensor of shape (..., H)")
    v = values.detach().reshape(-1, values.shape[-1])  # (N, H)
    if v.shape[0] == 0:
        raise ValueError("values must hold at least one step")
    mean = v.mean(0)
    return GateStatistics(
        mean=mean,
        std=v.std(0, unbiased=False),
        min=v.min(0).values,
        max=v.max(0).values,
        tau=time_scales(mean),
    )


def cell_state_jacobians(
    cell: LSTMCell,
    x: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor] | None = None,
    gate_terms: bool = True,
) -> torch.Tensor:
    r""":math:`\partial c_T / \partial c_{T-l}` for lags :math:`l = 0..T-1`, shape ``(T, H, H)``, for one sequence.

    ``x`` has shape ``(T, D)``; ``state`` :math:`= (h_0, c_0)`, each ``(H,)``, zeros if ``None``.
    :math:`c_{T-l}` is perturbed with :math:`o_{T-l}` held fixed (it depends on :math:`h_{T-l-1}`,
    not on :math:`c_{T-l}`), so :math:`\partial h_t / \partial c_t = \mathrm{diag}(o_t
    (1 - \tanh^2 c_t))`. With ``gate_terms`` the product runs over the joint Jacobians of
    :math:`(h_s, c_s)` with respect to :math:`(h_{s-1}, c_{s-1})`:

    .. math::
        \frac{\partial c_s}{\partial c_{s-1}} = \mathrm{diag}(f_s), \quad
        \frac{\partial c_s}{\partial h_{s-1}} = \mathrm{diag}(c_{s-1}) F' W_{hf}
            + \mathrm{diag}(g_s) I' W_{hi} + \mathrm{diag}(i_s) G' W_{hg},

    :math:`\partial h_s/\partial(\cdot) = \mathrm{diag}(\tanh c_s)\, \partial o_s/\partial(\cdot)
    + \mathrm{diag}(o_s (1 - \tanh^2 c_s))\, \partial c_s/\partial(\cdot)`, with
    :math:`F' = \mathrm{diag}(f_s(1-f_s))`, :math:`I'`, :math:`O'` alike and :math:`G' =
    \mathrm{diag}(1 - g_s^2)`. Without them it is :math:`\prod_s \mathrm{diag}(f_s)`.
    Computed without autograd (the tests compare with it).
    """
    if not isinstance(cell, LSTMCell):
        raise TypeError(f"cell must be a seqlearn.gated.LSTMCell, got {type(cell).__name__}")
    gate_terms = flag(gate_terms, "gate_terms")
    x = check_input(x, cell.input_size, 2, cell.W_ih.dtype, "(T, D)")
    H, T = cell.hidden_size, x.shape[0]
    if T == 0:
        raise ValueError("x must have at least one step")
    h0, c0 = (None, None) if state is None else state
    h = check_state(h0, "h0", (H,), x)[None]  # (1, H)
    c = check_state(c0, "c0", (H,), x)[None]
    W = {n: cell.W_hh[cell.gate_rows(n)].detach() for n in cell.gate_names}  # (H, H) each
    steps, hs_over_cs = [], []  # joint Jacobians J_s (2H, 2H); dh_s/dc_s (H,)
    with torch.no_grad():
        for t in range(T):
            (h_new, c_new), q = cell(x[t : t + 1], (h, c), return_gates=True)
            i, f, g, o = (v[0] for v in (q.i, q.f, q.g, q.o))
            c_prev, tc = c[0], torch.tanh(c_new[0])
            dh_dc_new = o * (1 - tc**2)  # (H,), dh_s/dc_s with o_s fixed
            dc_dc = torch.diag(f)
            if gate_terms:
                dc_dh = (c_prev * f * (1 - f))[:, None] * W["f"]
                dc_dh += (g * i * (1 - i))[:, None] * W["i"] + (i * (1 - g**2))[:, None] * W["g"]
                dh_dh = (tc * o * (1 - o))[:, None] * W["o"] + dh_dc_new[:, None] * dc_dh
            else:
                dc_dh = torch.zeros(H, H, dtype=x.dtype, device=x.device)
                dh_dh = torch.zeros_like(dc_dh)
            dh_dc = dh_dc_new[:, None] * dc_dc
            steps.append(torch.cat([torch.cat([dh_dh, dh_dc], 1), torch.cat([dc_dh, dc_dc], 1)], 0))
            hs_over_cs.append(dh_dc_new)
            h, c = h_new, c_new
        out = []
        P = torch.eye(2 * H, dtype=x.dtype, device=x.device)  # d(h_T, c_T) / d(h_s, c_s)
        for s in range(T - 1, -1, -1):  # lag l = T-1-s, perturbing c_s (0-based step s)
            lift = hs_over_cs[s][:, None] if gate_terms else torch.zeros_like(hs_over_cs[s])[:, None]
            out.append(P[H:, :H] * lift.T + P[H:, H:])  # d c_T / d c_s
            P = P @ steps[s]
    return torch.stack(out)  # (T, H, H), index l = lag


def jacobian_norms(jacobians: torch.Tensor) -> torch.Tensor:
    r"""Spectral norms :math:`\|\partial c_T / \partial c_{T-l}\|_2` of ``(L, H, H)`` Jacobians, shape ``(L,)``."""
    if not isinstance(jacobians, torch.Tensor) or jacobians.ndim != 3:
        raise TypeError("jacobians must be a torch.Tensor of shape (L, H, H)")
    return torch.linalg.matrix_norm(jacobians, ord=2)


def state_jacobians(cell: LSTMCell | GRUCell, x: torch.Tensor, state=None) -> torch.Tensor:
    r""":math:`\partial s_T / \partial s_{T-l}` of the whole state for lags :math:`l = 0..T-1`, one sequence.

    :math:`s = (h, c)` stacked to :math:`2H` for an :class:`LSTMCell`, :math:`s = h` for a
    :class:`GRUCell`; returns shape ``(T, S, S)``, :math:`S` = 2H or H. The product of the
    step Jacobians :math:`\partial s_t / \partial s_{t-1}` (each by autograd), so its
    norms (:func:`jacobian_norms`) are the gated counterpart of Chapter 3's
    :math:`\lVert \partial h_T / \partial h_{T-l} \rVert_2`
    (:func:`seqlearn.rnn.gradient_norm_vs_lag`). ``x`` is ``(T, D)``; ``state`` the initial
    :math:`(h_0, c_0)` (LSTM) or :math:`h_0` (GRU), each ``(H,)``, zeros if ``None``.
    """
    if not isinstance(cell, (LSTMCell, GRUCell)):
        raise TypeError(f"cell must be a seqlearn.gated LSTMCell or GRUCell, got {type(cell).__name__}")
    x = check_input(x, cell.input_size, 2, cell.W_ih.dtype, "(T, D)")
    H, T = cell.hidden_size, x.shape[0]
    if T == 0:
        raise ValueError("x must have at least one step")
    lstm = isinstance(cell, LSTMCell)
    if lstm:
        h0, c0 = (None, None) if state is None else state
        s = torch.cat([check_state(h0, "h0", (H,), x), check_state(c0, "c0", (H,), x)])
    else:
        s = check_state(state, "h0", (H,), x)

    def step(s_prev: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        if lstm:
            h, c = cell(x_t[None], (s_prev[None, :H], s_prev[None, H:]))
            return torch.cat([h[0], c[0]])
        return cell(x_t[None], s_prev[None])[0]

    steps = []
    s = s.detach()
    for t in range(T):
        steps.append(torch.autograd.functional.jacobian(lambda v, t=t: step(v, x[t].detach()), s))
        with torch.no_grad():
            s = step(s, x[t])
    out, P = [], torch.eye(s.shape[0], dtype=x.dtype, device=x.device)
    for J in reversed(steps):
        out.append(P)
        P = P @ J
    return torch.stack(out)  # (T, S, S), index l = lag


def input_gradient_norms(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    r"""How strongly a trained many-to-one model's output depends on each input step: shape ``(T,)``.

    For a model mapping ``x`` ``(B, T, D)`` to one number per sequence, :math:`\hat y_b`
    (shape ``(B,)`` or ``(B, 1)``), the mean over the batch of
    :math:`\lVert \partial \hat y_b / \partial x_{b,t} \rVert_2` for every step :math:`t`.
    Read at lag :math:`l = T - t` it is, for any architecture (Elman, LSTM, GRU), the
    gradient that reaches back :math:`l` steps from the output: what Chapter 3's
    :math:`\lVert \partial h_T / \partial h_{T-l} \rVert` bounds. One backward pass of
    :math:`\sum_b \hat y_b` (the sequences are independent), in evaluation mode.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(x, torch.Tensor) or x.ndim != 3 or not x.is_floating_point():
        raise ValueError("x must be a floating tensor of shape (B, T, D)")
    x = x.detach().clone().requires_grad_(True)
    was_training = model.training
    model.eval()
    try:
        y = model(x)
    finally:
        model.train(was_training)
    if y.shape not in ((x.shape[0],), (x.shape[0], 1)):
        raise ValueError(f"the model must give one number per sequence, shape (B,) or (B, 1); got {tuple(y.shape)}")
    (grad,) = torch.autograd.grad(y.sum(), x)  # (B, T, D)
    return grad.norm(dim=2).mean(0).detach()
