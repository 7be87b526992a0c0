r"""An ensemble: :math:`S` networks of one architecture trained at once, each exactly as alone.

Member :math:`m = 1, \dots, S` is a :class:`~seqlearn.learnability.task.GatedRegressor` with a
seed of its own, and so are its initialisation, training data, batch order, AdamW state, gradient
clipping and best-validation checkpoint: :func:`train_ensemble` gives every member what
:func:`~seqlearn.learnability.task.train_regressor` would give it alone. At the chapter's scale (a
batch of 128 sequences, :math:`H = 32`) a step's operations are small, and much of their time goes
to calling them. So the members' parameters are stacked along a leading *member axis*,
:math:`\Theta = (\theta_1, \dots, \theta_S)`, every tensor ``(S, ...)``, and each operation of a
step runs once for all members, e.g. the batched matrix product

.. math::
    (A_t)_m = b_m + X_{t,m} W_m^\top, \qquad A_t : (S, B, H), \; X_t : (S, B, D), \; W : (S, H, D).

The members never meet: the summed loss :math:`\sum_m L_m(\theta_m)` has the gradient
:math:`\nabla_{\theta_m} L_m` in member :math:`m`'s slice, so one backward pass gives each member
its own gradient, which is then clipped to the norm over that member's parameters only.

**Backpropagation written out.** Recorded by autograd, a step costs some twenty graph nodes. Here
the whole recurrence is one node (:class:`_Recurrence`): its forward runs the step for all members,
its backward runs backpropagation through time by hand, each derivative computed by the kernel that
torch's own backward calls for it (``bmm`` for ``addmm``, ``native_layer_norm_backward``,
``tanh_backward``, ...), and each gradient summed in the order in which torch's engine adds the
contributions of a tensor's consumers. With :math:`\bar x = \partial L / \partial x`, for a leaky cell

.. math::
    \bar h_{t-1} = \Big(\Big(\underbrace{\bar h^{\rm out}_{t-1}}_{\text{readout}}
    + (1 - s_t) \odot \bar h_t\Big) + \underbrace{J_{s}^\top \bar s_t}_{\text{gate}}\Big)
    + W_h^\top \bar a_t

(:math:`a_t` the pre-activation), summed in that order; the weights' gradients add up from the
last step to the first. A member's losses and gradients are then those of separate training
to float32 round-off (the tests hold them to that), and on the CPUs measured bit for bit, which
matters: training amplifies a difference in the last bit into a visibly different network. Bit
for bit is not promised everywhere: on one CPU a batched matrix product summed one gradient in
another order. The readout stays an ordinary per-member :func:`torch.nn.functional.linear`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from ..device import resolve_device
from ..training import History, _check_loss, _weighted_mean
from ..validation import integer, real, seed
from .task import DelayedRegression, GatedRegressor, _adamw, _batches

__all__ = ["train_ensemble"]

Params = dict[str, torch.Tensor]  # the cell's stacked tensors by attribute name (W_x, norm.weight, s), each (S, ...)
Grads = dict[str, torch.Tensor | None]  # their gradients, summed as backpropagation goes

_tanh_backward = torch.ops.aten.tanh_backward.default  # the kernels that autograd's backward nodes call
_sigmoid_backward = torch.ops.aten.sigmoid_backward.default
_layer_norm_backward = torch.ops.aten.native_layer_norm_backward.default


def _add(total: torch.Tensor | None, part: torch.Tensor) -> torch.Tensor:
    """``total + part``, or ``part`` first: how autograd sums the contributions to one gradient."""
    return part if total is None else total + part


def _affine(c: torch.Tensor, x: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    r""":math:`c + x W^\top` as ``addmm``, per member: ``c`` ``(S, K)``, ``x`` ``(S, N, D)``, ``W`` ``(S, K, D)``."""
    return torch.baddbmm(c[:, None], x, W.mT)


def _inputs(c: torch.Tensor, x: torch.Tensor, W: torch.Tensor) -> tuple[torch.Tensor, ...]:
    r""":math:`c + W x_t` of every step at once (the bits of step by step): ``T`` tensors ``(S, B, K)``."""
    S, B, T, D = x.shape
    return _affine(c, x.reshape(S, B * T, D), W).view(S, B, T, -1).unbind(2)


def _steps(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``x`` ``(S, B, T, D)`` as ``T`` contiguous steps ``(S, B, D)``: the weight gradients take them faster."""
    return x.transpose(1, 2).contiguous().unbind(1)


def _weight_grads(g: torch.Tensor, x: torch.Tensor, grads: Grads, w: str, b: str) -> None:
    r"""Add a step's :math:`g^\top x` to ``grads[w]``, :math:`\sum_B g` to ``grads[b]`` (``addmm``'s backward)."""
    grads[w] = _add(grads[w], torch.bmm(g.mT, x))
    grads[b] = _add(grads[b], g.sum(1))


def _mv(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    r""":math:`a v` per member, as ``torch.mv`` computes it: ``a`` ``(S, N, K)``, ``v`` ``(S, K)``; ``(S, N)``."""
    return torch.bmm(v[:, None, :], a.mT)[:, 0]


def _mv_grad(g: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    r""":math:`a^\top g` ``(S, K)``, the gradient of :math:`v` in :func:`_mv`, as ``mv``'s backward computes it."""
    return torch.bmm(a.mT, g[:, :, None])[:, :, 0]


class _Leaky:
    r"""ConstGate, SharedGate or DiagGate for all members: :math:`h_t = (1 - s_t) \odot h_{t-1} + s_t \odot \tilde h_t`.

    :math:`\tilde h_t = \tanh(\mathrm{LN}(W_x x_t + b_x + W_h h_{t-1}))`; the write gate :math:`s_t`
    is the buffer ``s`` (const), :math:`\sigma(w_s^\top x_t + b_s + u_s^\top h_{t-1})` (shared) or
    :math:`\sigma(W_s x_t + b_s + U_s h_{t-1})` (diag), as in :mod:`~seqlearn.learnability.models`.
    Steps count from 0: step :math:`t` maps :math:`h_t` to :math:`h_{t+1}`.
    """

    def __init__(self, gate: str, hidden_size: int, layernorm: bool, eps: float):
        self.gate, self.hidden_size, self.layernorm, self.eps = gate, hidden_size, layernorm, eps

    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        """:math:`h_0 = 0` ``(S, B, H)`` for a step's input ``x`` ``(S, B, D)``."""
        return x.new_zeros(x.shape[0], x.shape[1], self.hidden_size)

    def hidden(self, state) -> torch.Tensor:
        """:math:`h_t` of a state."""
        return state

    def prepare(self, p: Params, x: torch.Tensor) -> dict:
        """What the steps read: every step's input terms, the transposed weights, the constant gate."""
        q: dict[str, Any] = {"x": _steps(x), "p": p, "W_hT": p["W_h"].mT, "input": _inputs(p["b_x"], x, p["W_x"])}
        if self.layernorm:
            q["gamma"], q["beta"] = p["norm.weight"][:, None], p["norm.bias"][:, None]
            q["members"] = [(p["norm.weight"][m], p["norm.bias"][m]) for m in range(x.shape[0])]
        if self.gate == "const":
            q["s"] = p["s"][:, None, None]
            q["retain"] = -q["s"] + 1
        elif self.gate == "shared":
            S, B, T, D = x.shape
            gate_input = _mv(x.reshape(S, B * T, D), p["w_s"]) + p["b_s"][:, None]  # w_s^T x_t + b_s
            q["gate_input"] = gate_input.view(S, B, T).unbind(2)
        else:
            q["gate_input"], q["U_sT"] = _inputs(p["b_s"], x, p["W_s"]), p["U_s"].mT
        return q

    def write_gate(self, q: dict, t: int, h: torch.Tensor) -> torch.Tensor:
        """:math:`s_{t+1}` from :math:`h_t`: ``(S, B, 1)`` (shared) or ``(S, B, H)`` (diag)."""
        if self.gate == "shared":
            return torch.sigmoid(q["gate_input"][t] + _mv(h, q["p"]["u_s"]))[..., None]
        return torch.sigmoid(torch.baddbmm(q["gate_input"][t], h, q["U_sT"]))

    def step(self, q: dict, t: int, h: torch.Tensor):
        """:math:`h_{t+1}` from :math:`h_t` ``(S, B, H)``, and what the backward needs."""
        a = torch.baddbmm(q["input"][t], h, q["W_hT"])  # W_x x + b_x + W_h h
        y, mean, rstd = a, None, None
        if self.layernorm:
            y, mean, rstd = torch.native_layer_norm(a, a.shape[-1:], None, None, self.eps)
            y = torch.addcmul(q["beta"], y, q["gamma"])
        h_tilde = torch.tanh(y)
        if self.gate == "const":
            s, retain = q["s"], q["retain"]
        else:
            s = self.write_gate(q, t, h).expand_as(h_tilde)
            retain = -s + 1
        return retain * h + s * h_tilde, (h, a, mean, rstd, h_tilde, s, retain)

    def layer_norm_grad(self, q: dict, g: torch.Tensor, a, mean, rstd, grads: Grads) -> torch.Tensor:
        r"""LayerNorm's backward from :math:`g`, member by member (torch's kernel takes one :math:`\gamma`)."""
        shape, mask = a.shape[-1:], [True, True, True]
        parts = [
            _layer_norm_backward(g[m], a[m], shape, mean[m], rstd[m], gamma, beta, mask)
            for m, (gamma, beta) in enumerate(q["members"])
        ]
        g_a, g_gamma, g_beta = (torch.stack(part) for part in zip(*parts))
        grads["norm.weight"] = _add(grads["norm.weight"], g_gamma)
        grads["norm.bias"] = _add(grads["norm.bias"], g_beta)
        return g_a

    def gate_grad(self, q: dict, t: int, g_s: torch.Tensor, h, s, grads: Grads, need_h: bool):
        r"""The gate's backward from :math:`\bar s` ``(S, B, H)``: its part of :math:`\partial L/\partial h_t`."""
        x, p = q["x"][t], q["p"]
        if self.gate == "shared":
            g_pre = _sigmoid_backward(g_s.sum(2), s[:, :, 0])  # one gate for all neurons: their parts summed
            grads["u_s"] = _add(grads["u_s"], _mv_grad(g_pre, h))
            grads["b_s"] = _add(grads["b_s"], g_pre.sum(1))
            grads["w_s"] = _add(grads["w_s"], _mv_grad(g_pre, x))
            return g_pre[:, :, None] * p["u_s"][:, None, :] if need_h else None
        g_pre = _sigmoid_backward(g_s, s)
        grads["U_s"] = _add(grads["U_s"], torch.bmm(g_pre.mT, h))
        _weight_grads(g_pre, x, grads, "W_s", "b_s")
        return torch.bmm(g_pre, p["U_s"]) if need_h else None

    def backward(self, q: dict, t: int, saved, g: torch.Tensor, g_c, grads: Grads, need_h: bool):
        r"""Step :math:`t` back from :math:`g = \bar h_{t+1}`: the parts of :math:`\bar h_t`.

        In the order in which autograd adds them: :math:`(1 - s) \odot g`, the gate's, the
        pre-activation's. Also adds the step's weight gradients to ``grads``.
        """
        h, a, mean, rstd, h_tilde, s, retain = saved
        parts = [g * retain] if need_h else []
        if self.gate != "const":  # s's consumers: s * h~ and -s (in 1 - s)
            parts.append(self.gate_grad(q, t, g * h_tilde - g * h, h, s, grads, need_h))
        g_a = _tanh_backward(g * s, h_tilde)
        if self.layernorm:
            g_a = self.layer_norm_grad(q, g_a, a, mean, rstd, grads)
        grads["W_h"] = _add(grads["W_h"], torch.bmm(g_a.mT, h))
        if need_h:
            parts.append(torch.bmm(g_a, q["p"]["W_h"]))
        _weight_grads(g_a, q["x"][t], grads, "W_x", "b_x")
        return [part for part in parts if part is not None], None


class _GRU:
    r"""Torch's GRU (:class:`seqlearn.gated.GRUCell`), all members: :math:`h_t = (1 - z_t) n_t + z_t h_{t-1}`.

    Steps count from 0: step :math:`t` maps :math:`h_t` to :math:`h_{t+1}`.
    """

    def __init__(self, hidden_size: int):
        self.hidden_size = hidden_size

    def initial_state(self, x: torch.Tensor):
        """:math:`h_0 = 0` ``(S, B, H)`` for a step's input ``x`` ``(S, B, D)``."""
        return x.new_zeros(x.shape[0], x.shape[1], self.hidden_size)

    def hidden(self, state) -> torch.Tensor:
        """:math:`h_t` of a state."""
        return state

    def prepare(self, p: Params, x: torch.Tensor) -> dict:
        r"""What the steps read: every step's :math:`W_{ih} x_t + b_{ih}`, the transposed weights."""
        q: dict[str, Any] = {"x": _steps(x), "p": p, "input": _inputs(p["b_ih"], x, p["W_ih"])}
        return q | {"W_hhT": p["W_hh"].mT, "b_hh": p["b_hh"][:, None]}

    def recurrent(self, q: dict, h: torch.Tensor) -> torch.Tensor:
        r""":math:`W_{hh} h + b_{hh}` ``(S, B, n_gates H)``."""
        return torch.baddbmm(q["b_hh"], h, q["W_hhT"])

    def step(self, q: dict, t: int, h: torch.Tensor):
        """:math:`h_{t+1}` from :math:`h_t` ``(S, B, H)``, and what the backward needs."""
        x_r, x_z, x_n = q["input"][t].chunk(3, dim=2)
        h_r, h_z, h_n = self.recurrent(q, h).chunk(3, dim=2)
        r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
        n = torch.tanh(x_n + r * h_n)
        keep_n = -z + 1
        return keep_n * n + z * h, (h, r, z, n, h_n, keep_n)

    def weight_grads(self, q: dict, t: int, g_recurrent, g_input, h, grads: Grads, need_h: bool):
        r"""Add step :math:`t`'s gradients of :math:`W_{hh}, b_{hh}, W_{ih}, b_{ih}`; returns :math:`W_{hh}^\top g`."""
        _weight_grads(g_recurrent, h, grads, "W_hh", "b_hh")
        _weight_grads(g_input, q["x"][t], grads, "W_ih", "b_ih")
        return torch.bmm(g_recurrent, q["p"]["W_hh"]) if need_h else None

    def backward(self, q: dict, t: int, saved, g: torch.Tensor, g_c, grads: Grads, need_h: bool):
        r"""Step :math:`t` back from :math:`g = \bar h_{t+1}`: the parts of :math:`\bar h_t`.

        In the order in which autograd adds them: :math:`z \odot g`, then :math:`W_{hh}`'s.
        """
        h, r, z, n, h_n, keep_n = saved
        parts = [g * z] if need_h else []
        g_z = g * h - g * n  # z's consumers: z * h and -z (in 1 - z)
        g_a_n = _tanh_backward(g * keep_n, n)
        g_a_z = _sigmoid_backward(g_z, z)
        g_a_r = _sigmoid_backward(g_a_n * h_n, r)
        g_recurrent = torch.cat([g_a_r, g_a_z, g_a_n * r], dim=2)  # rows r, z, n of W_hh
        g_input = torch.cat([g_a_r, g_a_z, g_a_n], dim=2)
        parts.append(self.weight_grads(q, t, g_recurrent, g_input, h, grads, need_h))
        return [part for part in parts if part is not None], None


class _LSTM(_GRU):
    r"""Torch's LSTM, all members: :math:`c_t = f_t \odot c_{t-1} + i_t \odot g_t`, :math:`h_t = o_t \tanh c_t`."""

    def initial_state(self, x: torch.Tensor):
        """:math:`(h_0, c_0) = (0, 0)`, each ``(S, B, H)``."""
        h = super().initial_state(x)
        return h, torch.zeros_like(h)

    def hidden(self, state) -> torch.Tensor:
        """:math:`h_t` of a state :math:`(h_t, c_t)`."""
        return state[0]

    def step(self, q: dict, t: int, state):
        """:math:`(h_{t+1}, c_{t+1})` from :math:`(h_t, c_t)`, and what the backward needs."""
        h, c = state
        a_i, a_f, a_g, a_o = (q["input"][t] + self.recurrent(q, h)).chunk(4, dim=2)
        i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
        c_new = f * c + i * g
        tanh_c = torch.tanh(c_new)
        return (o * tanh_c, c_new), (h, c, i, f, g, o, tanh_c)

    def backward(self, q: dict, t: int, saved, g_h: torch.Tensor, g_c, grads: Grads, need_h: bool):
        r"""Step :math:`t` back from :math:`\bar h_{t+1}` and step :math:`t + 1`'s part of :math:`\bar c_{t+1}`.

        Returns the part of :math:`\bar h_t` and the part of :math:`\bar c_t` that :math:`f \odot c_t`
        sends back.
        """
        h, c, i, f, g, o, tanh_c = saved
        g_c = _add(g_c, _tanh_backward(g_h * o, tanh_c))
        gates = [(g_c * g, i, _sigmoid_backward), (g_c * c, f, _sigmoid_backward)]
        gates += [(g_c * i, g, _tanh_backward), (g_h * tanh_c, o, _sigmoid_backward)]
        g_a = torch.cat([backward(grad, out) for grad, out, backward in gates], dim=2)  # rows i, f, g, o
        g_h_prev = self.weight_grads(q, t, g_a, g_a, h, grads, need_h)
        return ([g_h_prev] if need_h else []), (g_c * f if need_h else None)


def _cell_of(model: GatedRegressor):
    """The member-axis cell of ``model``'s architecture."""
    arch, H = model.architecture, model.cell.hidden_size
    if arch == "gru":
        return _GRU(H)
    if arch == "lstm":
        return _LSTM(H)
    norm = model.cell.norm
    return _Leaky(arch, H, norm is not None, 0.0 if norm is None else float(norm.eps))


def _run(cell, q: dict, tape: list | None) -> torch.Tensor:
    r""":math:`h_0 = 0, h_1, \dots, h_T` ``(S, B, T + 1, H)``; each step's saved tensors go on ``tape``."""
    state = cell.initial_state(q["x"][0])
    hs = [cell.hidden(state)]
    for t in range(len(q["x"])):
        state, saved = cell.step(q, t, state)
        hs.append(cell.hidden(state))
        if tape is not None:
            tape.append(saved)
    return torch.stack(hs, dim=2)


def _backpropagate(cell, q: dict, tape: list, g_states: torch.Tensor) -> Grads:
    r"""Backpropagation through time from the readout's :math:`\partial L/\partial h_t` ``(S, B, T + 1, H)``."""
    grads: Grads = dict.fromkeys(q["p"])
    parts: list[torch.Tensor] = []
    g_c = None
    readout = g_states.unbind(2)
    for t in range(len(tape) - 1, -1, -1):
        g_h = readout[t + 1]
        for part in parts:  # the readout's part first, then step t + 1's
            g_h = g_h + part
        parts, g_c = cell.backward(q, t, tape[t], g_h, g_c, grads, t > 0)
    return grads


class _Recurrence(torch.autograd.Function):
    """The cell over the whole sequence, all members, as one autograd node; its backward is :func:`_backpropagate`."""

    @staticmethod
    def forward(ctx, cell, names, x, *tensors):
        ctx.cell, ctx.names, ctx.tape = cell, names, []
        ctx.q = cell.prepare(dict(zip(names, tensors)), x)
        return _run(cell, ctx.q, ctx.tape)

    @staticmethod
    def backward(ctx, g_states):
        grads = _backpropagate(ctx.cell, ctx.q, ctx.tape, g_states)
        ctx.q = ctx.tape = None
        return (None, None, None, *(grads[name] for name in ctx.names))


class _Stacked:
    """The members' parameters stacked along a leading axis (leaf tensors ``(S, ...)``), with their cell."""

    def __init__(self, models: Sequence[GatedRegressor]):
        first = models[0]
        self.cell = _cell_of(first)
        stack = lambda tensors: torch.stack([t.detach() for t in tensors]).clone()  # noqa: E731
        names = [name for name, _ in first.named_parameters()]
        self.params = {name: stack(m.get_parameter(name) for m in models).requires_grad_() for name in names}
        self.buffers = {name: stack(m.get_buffer(name) for m in models) for name, _ in first.named_buffers()}

    def cell_tensors(self) -> Params:
        """The cell's tensors by attribute name (``W_x``, ``norm.weight``, ``s``, ...)."""
        both = {**self.params, **self.buffers}
        return {name.removeprefix("cell."): t for name, t in both.items() if name.startswith("cell.")}

    def predictions(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`\hat y` ``(S, B, T)`` of every member on its own ``x`` ``(S, B, T, D)``."""
        p = self.cell_tensors()
        if torch.is_grad_enabled():
            states = _Recurrence.apply(self.cell, list(p), x, *p.values())
        else:
            states = _run(self.cell, self.cell.prepare(p, x), None)
        w, b = self.params["readout.weight"].unbind(0), self.params["readout.bias"].unbind(0)
        return torch.stack([F.linear(h[:, 1:], w[m], b[m]) for m, h in enumerate(states.unbind(0))]).squeeze(-1)

    def losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Every member's mean squared error on its own batch, ``(S,)``."""
        return ((self.predictions(x) - y) ** 2).mean(dim=(1, 2))

    def clip(self, max_norm: float) -> None:
        """Rescale each member's gradient to a 2-norm over that member's parameters of at most ``max_norm``."""
        grads = [p.grad for p in self.params.values() if p.grad is not None]
        for m in range(grads[0].shape[0]):
            member = [g[m] for g in grads]  # as torch.nn.utils.clip_grad_norm_ on the member alone
            total = torch.nn.utils.get_total_norm(member, 2.0)
            torch._foreach_mul_(member, torch.clamp(max_norm / (total + 1e-6), max=1.0))

    def member(self, m: int) -> dict[str, torch.Tensor]:
        """Member ``m``'s parameters by name (copies)."""
        return {name: t[m].detach().clone() for name, t in self.params.items()}


def _check_members(models, trains, vals, seeds) -> list[int]:
    """The seeds, once the members are regressors of one configuration with data of one shape and dtype."""
    if not isinstance(models, Sequence) or not models:
        raise ValueError("models must be a non-empty sequence of GatedRegressor, one per member")
    for model in models:
        if not isinstance(model, GatedRegressor):
            raise TypeError(f"models must hold GatedRegressor instances, got {type(model).__name__}")
    seeds = [seed(s, "seeds") for s in seeds]
    if len({len(models), len(trains), len(vals), len(seeds)}) != 1:
        raise ValueError(
            f"models, trains, vals and seeds must be of one length (one per member), got "
            f"{len(models)}, {len(trains)}, {len(vals)} and {len(seeds)}"
        )
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct (one per member), got {seeds}")
    layout = lambda m: [(n, p.shape, p.dtype, p.device) for n, p in m.named_parameters()]  # noqa: E731
    if any(m.architecture != models[0].architecture or layout(m) != layout(models[0]) for m in models):
        raise ValueError("the members must share one architecture, size, LayerNorm setting, dtype and device")
    dtype, D = next(models[0].parameters()).dtype, models[0].cell.input_size
    for name, tasks in (("trains", trains), ("vals", vals)):
        for task in tasks:
            if not isinstance(task, DelayedRegression):
                raise TypeError(f"{name} must hold DelayedRegression tasks, got {type(task).__name__}")
            if task.x.dtype != dtype:
                raise TypeError(f"{name} must have the parameters' dtype {dtype}, got {task.x.dtype}")
        shapes = [tuple(task.x.shape) for task in tasks]
        if len(set(shapes)) != 1 or shapes[0][2] != D:
            raise ValueError(f"{name} must share one shape (n, T, D) with D = {D}, got {shapes}")
    return seeds


def _train_epoch(stacked: _Stacked, optimizer, batches: list, clip: float | None, device, bar) -> list[float]:
    """One pass over every member's batches (as :func:`seqlearn.training.fit`); each member's mean training loss."""
    total, weight = [0.0] * len(batches), [0.0] * len(batches)
    for step in zip(*batches):
        x = torch.stack([xb for xb, _ in step]).to(device)
        y = torch.stack([yb for _, yb in step]).to(device)
        losses = stacked.losses(x, y)
        w = [_check_loss(loss, y[0].numel(), "training") for loss in losses]
        optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()
        if clip is not None:
            stacked.clip(clip)
        optimizer.step()
        for m, loss in enumerate(losses.tolist()):
            total[m] += loss * w[m]
            weight[m] += w[m]
        bar.update(1)
    return [_weighted_mean(t, w, "training epoch") for t, w in zip(total, weight)]


def _member_optimizer(model: GatedRegressor, optimizer, m: int, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """An AdamW over ``model``'s parameters holding member ``m``'s slice of ``optimizer``'s state (copied)."""
    own = _adamw(model.parameters(), lr, weight_decay)
    state = optimizer.state_dict()
    sliced = {i: {k: (v if k == "step" else v[m]).clone() for k, v in s.items()} for i, s in state["state"].items()}
    own.load_state_dict({"state": sliced, "param_groups": state["param_groups"]})
    return own


def train_ensemble(
    models: Sequence[GatedRegressor],
    trains: Sequence[DelayedRegression],
    vals: Sequence[DelayedRegression],
    seeds: Sequence[int],
    epochs: int = 60,
    batch_size: int = 128,
    lr: float = 5e-3,
    weight_decay: float = 1e-4,
    clip: float | None = 1.0,
    device=None,
    progress: bool = True,
) -> list[tuple[History, torch.optim.AdamW]]:
    r"""Train every member as ``train_regressor(models[m], trains[m], vals[m], ..., seed=seeds[m])``, all at once.

    Each member has its own batch order (``seeds[m]``), AdamW state, gradient-norm clipping to
    ``clip`` (the norm over its own parameters) and best-validation weights, restored into
    ``models[m]`` at the end. Returns per member ``(history, optimizer)``, as
    :func:`~seqlearn.learnability.task.train_regressor` does: the optimiser is an AdamW over
    ``models[m]``'s parameters holding that member's state after its last step, which
    :func:`~seqlearn.learnability.effective_rates.adaptive_rates` and
    :func:`~seqlearn.learnability.pipeline.diagnose` read unchanged. Every ``history.seconds`` is
    the wall time of the whole ensemble.

    Parameters
    ----------
    models : GatedRegressor per member, all of one architecture, size, dtype and device
    trains, vals : DelayedRegression per member (training sets of one shape, validation sets of one shape)
    seeds : the members' distinct seeds (of their batch orders)
    epochs, batch_size, lr, weight_decay, clip, device, progress : as in :func:`.task.train_regressor`
    """
    from tqdm.auto import tqdm

    trains, vals = list(trains), list(vals)
    seeds = _check_members(models, trains, vals, list(seeds))
    epochs, batch_size = integer(epochs, "epochs", low=1), integer(batch_size, "batch_size", low=1)
    clip = None if clip is None else real(clip, "clip", low=0.0, low_open=True)
    start = time.perf_counter()
    device = resolve_device(device)
    for model in models:
        model.to(device)
    stacked = _Stacked(models)
    optimizer = _adamw(stacked.params.values(), lr, weight_decay)
    batches = [_batches(train, batch_size, s) for train, s in zip(trains, seeds)]
    val_x, val_y = (torch.stack([getattr(val, a) for val in vals]).to(device) for a in ("x", "y"))
    histories = [History() for _ in models]
    best = [stacked.member(m) for m in range(len(models))]
    with tqdm(total=len(batches[0]) * epochs, disable=not progress, desc="training", unit="batch") as bar:
        for epoch in range(epochs):
            train_loss = _train_epoch(stacked, optimizer, batches, clip, device, bar)
            with torch.no_grad():
                val_loss = stacked.losses(val_x, val_y)
            for m, history in enumerate(histories):
                w = _check_loss(val_loss[m], val_y[m].numel(), "evaluation")
                history.train_loss.append(train_loss[m])
                history.val_loss.append(_weighted_mean(val_loss[m].item() * w, w, "evaluate"))
                if history.best_epoch is None or history.val_loss[-1] < history.val_loss[history.best_epoch]:
                    history.best_epoch, best[m] = epoch, stacked.member(m)
            bar.set_description(f"epoch {epoch + 1}: val {min(h.val_loss[-1] for h in histories):.4f}")
    with torch.no_grad():
        for model, params in zip(models, best):
            for name, value in params.items():
                model.get_parameter(name).copy_(value)
    for history in histories:
        history.seconds = time.perf_counter() - start
    return [
        (h, _member_optimizer(model, optimizer, m, lr, weight_decay))
        for m, (h, model) in enumerate(zip(histories, models))
    ]
