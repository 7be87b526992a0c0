r"""The five gated architectures of Livi (arXiv 2512.05790), with the gate values per step.

**The leaky gated family** (ConstGate, SharedGate, DiagGate) shares one update, with input
:math:`x_t \in \mathbb R^D`, state :math:`h_t \in \mathbb R^H`, :math:`h_0 = 0`:

.. math::
    a_t = \mathrm{LN}(W_x x_t + b_x + W_h h_{t-1}), \qquad \tilde h_t = \tanh(a_t), \qquad
    h_t = (1 - s_t) \odot h_{t-1} + s_t \odot \tilde h_t,

(LN, LayerNorm, only with ``layernorm=True``) and differs only in the *write gate*
:math:`s_t` (the retention, or *leak*, is :math:`1 - s_t`):

* :class:`ConstGate`: :math:`s_t \equiv s`, a fixed scalar (a buffer, not trained);
* :class:`SharedGate`: :math:`s_t = \sigma(w_s^\top x_t + b_s + u_s^\top h_{t-1}) \in (0, 1)`,
  one number broadcast to all :math:`H` neurons;
* :class:`DiagGate`: :math:`s_t = \sigma(W_s x_t + b_s + U_s h_{t-1}) \in (0, 1)^H`, one gate per
  neuron (the gating matrix :math:`\mathrm{diag}(s_t)` is diagonal; :math:`U_s` is full).

Initialisation: :math:`W_h` orthogonal, :math:`W_x` torch's default (the paper's code also makes
:math:`W_x` orthogonal; here it is not), :math:`b_x = 0`, the gate weights zero and
:math:`b_s = \mathrm{logit}(s_0)`, so at initialisation all three are the *same* dynamical system,
:math:`s_t \equiv s_0`.

**GRU and LSTM** are :class:`seqlearn.gated.GRUCell` and :class:`seqlearn.gated.LSTMCell`
themselves (Chapter 4's cells, equal to ``torch.nn``), not copies. Two differences from the
paper's hand-written cells follow: torch's GRU keeps the *old* state with :math:`z_t`
(:math:`h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}`, so its leak is :math:`z_t`, where the
paper writes :math:`1 - z_t`) and applies the reset gate to :math:`W_{hn} h_{t-1} + b_{hn}`;
and neither cell has the paper's LayerNorm on the candidate. :func:`gru` and :func:`lstm` build
them with the paper's gate initialisation (retention :math:`z_0 = 1 - s_0`, forget
:math:`f_0`). The transport factors of :mod:`~seqlearn.learnability.effective_rates` are derived for
these cells as they are.

**Why the leaky family is not a** :class:`~seqlearn.gated.GRUCell` **subclass.** The GRU's
update *is* the leaky update with :math:`z_t = 1 - s_t`, and the ``gates`` hook of
:mod:`seqlearn.gated.cells` was left for this. But a ``GRUCell`` owns torch's stacked
``(3H, D)`` / ``(3H, H)`` weights and two biases per gate, and its constructor draws them; the
leaky family has one candidate matrix pair, no reset gate and no recurrent bias, so a subclass
would carry parameters the equations do not have (and train them). The leaky cells here are
therefore their own small :class:`torch.nn.Module`, with the *same interface*: a
``gates(x, h)`` hook (the only thing the three families override) and
``forward(x, h, return_gates=True)``, so that :func:`run_cell` drives all five architectures with
one loop and returns what the transport factor needs, stacked over time, in a
:class:`Trajectory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ..device import resolve_device
from ..gated.cells import GRUCell, LSTMCell, check_input, check_state
from ..seeding import torch_generator
from ..validation import choice, flag, integer, real

__all__ = [
    "LeakyGates",
    "LeakyGatedCell",
    "ConstGate",
    "SharedGate",
    "DiagGate",
    "gru",
    "lstm",
    "ARCHITECTURES",
    "build_cell",
    "Trajectory",
    "run_cell",
    # the former names, kept: Chapter 5 imports them from seqlearn.learnability
    "build",
    "run",
    "architecture_of",
]

ARCHITECTURES = ("const", "shared", "diag", "gru", "lstm")


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class LeakyGates:
    r"""One leaky step's intermediates, each ``(B, H)``: write gate :math:`s_t`, candidate :math:`\tilde h_t`.

    For :class:`ConstGate` and :class:`SharedGate` ``s`` is broadcast to ``(B, H)``.
    """

    s: torch.Tensor
    h_tilde: torch.Tensor


class LeakyGatedCell(nn.Module):
    r"""One step :math:`h_t = (1 - s_t) \odot h_{t-1} + s_t \odot \tanh(\mathrm{LN}(W_x x_t + b_x + W_h h_{t-1}))`.

    The base of :class:`ConstGate`, :class:`SharedGate` and :class:`DiagGate`, which override
    :meth:`write_gate` only.

    Parameters
    ----------
    input_size, hidden_size : int
        :math:`D` and :math:`H`.
    s0 : float
        The write gate at initialisation, in (0, 1) (the paper's ``--const_s``; 0.05 gives the
        time scale :math:`\tau = -1/\ln(1 - s_0) = 19.5` steps).
    layernorm : bool
        Put a LayerNorm (with its affine parameters) on :math:`a_t`, as in all the paper's runs.
    seed, dtype : optional
    device : optional
        Default :func:`seqlearn.device.default_device`.

    Attributes
    ----------
    W_x : Parameter ``(H, D)``;  b_x : Parameter ``(H,)``;  W_h : Parameter ``(H, H)``, orthogonal at init
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        s0: float = 0.05,
        layernorm: bool = False,
        seed: int | None = None,
        dtype=None,
        device=None,
    ):
        super().__init__()
        self.input_size = D = integer(input_size, "input_size D", low=1)
        self.hidden_size = H = integer(hidden_size, "hidden_size H", low=1)
        self.s0 = real(s0, "s0", low=0.0, high=1.0, low_open=True, high_open=True)
        self.layernorm = flag(layernorm, "layernorm")
        factory = {"dtype": dtype or torch.get_default_dtype(), "device": resolve_device(device)}
        self.W_x = nn.Parameter(torch.empty(H, D, **factory))  # (H, D)
        self.b_x = nn.Parameter(torch.zeros(H, **factory))  # (H,)
        self.W_h = nn.Parameter(torch.empty(H, H, **factory))  # (H, H)
        self.norm = nn.LayerNorm(H, **factory) if self.layernorm else None
        self._init_gate(**factory)
        self.reset_parameters(seed)

    def _init_gate(self, **factory) -> None:
        """Create the gate's parameters or buffers (subclasses)."""

    def reset_gate(self) -> None:
        r"""Gate weights zero, bias :math:`\mathrm{logit}(s_0)` (subclasses)."""

    def reset_parameters(self, seed: int | None = None) -> None:
        r""":math:`W_x \sim U(-1/\sqrt D, 1/\sqrt D)`, :math:`b_x = 0`, :math:`W_h` orthogonal, gate at :math:`s_0`."""
        g = torch_generator(seed)
        D, H = self.input_size, self.hidden_size
        with torch.no_grad():
            u = torch.rand((H, D), generator=g, dtype=torch.float64)
            self.W_x.copy_((2 * u - 1) / math.sqrt(D))
            self.b_x.zero_()
            q, r = torch.linalg.qr(torch.randn((H, H), generator=g, dtype=torch.float64))
            self.W_h.copy_(q * torch.sign(torch.diagonal(r)))  # Haar-orthogonal
            if self.norm is not None:
                self.norm.reset_parameters()
            self.reset_gate()

    def write_gate(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        r""":math:`s_t` from ``x`` ``(B, D)`` and :math:`h_{t-1}` ``(B, H)``: ``(B, H)``, or ``(B, 1)`` if shared."""
        raise NotImplementedError

    def gates(self, x: torch.Tensor, h: torch.Tensor) -> LeakyGates:
        r""":math:`s_t` and :math:`\tilde h_t` for ``x`` ``(B, D)`` and ``h`` :math:`= h_{t-1}` ``(B, H)``."""
        a = torch.addmm(torch.addmm(self.b_x, x, self.W_x.T), h, self.W_h.T)  # W_x x + b_x + W_h h, (B, H)
        if self.norm is not None:
            a = self.norm(a)
        h_tilde = torch.tanh(a)  # (B, H)
        s = self.write_gate(x, h).expand_as(h_tilde)  # (B, H)
        return LeakyGates(s=s, h_tilde=h_tilde)

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None, return_gates: bool = False):
        r"""One step on ``x`` ``(B, D)`` from :math:`h_{t-1}` ``(B, H)`` (zeros if ``None``).

        Returns :math:`h_t`, and with ``return_gates`` ``(h_t, gates)`` (:class:`LeakyGates`).
        """
        x = check_input(x, self.input_size, 2, self.W_x.dtype, "(B, D)")
        h = check_state(h, "h", (x.shape[0], self.hidden_size), x)
        q = self.gates(x, h)
        h = (-q.s + 1) * h + q.s * q.h_tilde  # retain 1 - s, write s (-s + 1: see GRUCell.forward)
        return (h, q) if flag(return_gates, "return_gates") else h

    def extra_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, s0={self.s0}, layernorm={self.layernorm}"


class ConstGate(LeakyGatedCell):
    r"""The leaky cell with a constant write gate :math:`s_t \equiv s` (buffer ``s``, not trained).

    Its memory time is :math:`\tau = -1/\ln(1 - s)` (:func:`~seqlearn.learnability.effective_rates.tau_const`).
    """

    s: torch.Tensor

    def _init_gate(self, **factory) -> None:
        self.register_buffer("s", torch.tensor(self.s0, **factory))

    def reset_gate(self) -> None:
        self.s.fill_(self.s0)

    def write_gate(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.s.expand(x.shape[0], 1)  # (B, 1)


class SharedGate(LeakyGatedCell):
    r"""The leaky cell with one gate for all neurons, :math:`s_t = \sigma(w_s^\top x_t + b_s + u_s^\top h_{t-1})`.

    Attributes: ``w_s`` ``(D,)``, ``u_s`` ``(H,)``, ``b_s`` ``()``; zero, zero and
    :math:`\mathrm{logit}(s_0)` at initialisation.
    """

    def _init_gate(self, **factory) -> None:
        self.w_s = nn.Parameter(torch.zeros(self.input_size, **factory))  # (D,)
        self.u_s = nn.Parameter(torch.zeros(self.hidden_size, **factory))  # (H,)
        self.b_s = nn.Parameter(torch.zeros((), **factory))  # ()

    def reset_gate(self) -> None:
        self.w_s.zero_()
        self.u_s.zero_()
        self.b_s.fill_(_logit(self.s0))

    def write_gate(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x @ self.w_s + self.b_s + h @ self.u_s)[:, None]  # (B, 1)


class DiagGate(LeakyGatedCell):
    r"""The leaky cell with a gate per neuron, :math:`s_t = \sigma(W_s x_t + b_s + U_s h_{t-1})`.

    Attributes: ``W_s`` ``(H, D)``, ``U_s`` ``(H, H)``, ``b_s`` ``(H,)``; zero, zero and
    :math:`\mathrm{logit}(s_0)` at initialisation (set ``b_s`` per neuron for a spectrum of
    time scales).
    """

    def _init_gate(self, **factory) -> None:
        D, H = self.input_size, self.hidden_size
        self.W_s = nn.Parameter(torch.zeros(H, D, **factory))  # (H, D)
        self.U_s = nn.Parameter(torch.zeros(H, H, **factory))  # (H, H)
        self.b_s = nn.Parameter(torch.zeros(H, **factory))  # (H,)

    def reset_gate(self) -> None:
        self.W_s.zero_()
        self.U_s.zero_()
        self.b_s.fill_(_logit(self.s0))

    def write_gate(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.addmm(torch.addmm(self.b_s, x, self.W_s.T), h, self.U_s.T))  # (B, H)


def _pin_gate(cell: GRUCell | LSTMCell, gate: str, value: float):
    """Zero the weights of ``gate`` and set its bias so that it starts at ``value``; returns ``cell``."""
    rows = cell.gate_rows(gate)
    with torch.no_grad():
        cell.W_ih[rows] = 0.0
        cell.W_hh[rows] = 0.0
        cell.b_ih[rows] = _logit(value)
        cell.b_hh[rows] = 0.0
    return cell


def gru(input_size: int, hidden_size: int, z0: float = 0.95, seed: int | None = None, dtype=None, device=None):
    r"""A :class:`seqlearn.gated.GRUCell` whose retention gate starts at :math:`z_t \equiv z_0`.

    As the paper's ``--gru_init_update 0.05`` (write :math:`1 - z_0`): :math:`W_{iz} = W_{hz} = 0`,
    :math:`b_{iz} = \mathrm{logit}(z_0)`, :math:`b_{hz} = 0`; the rest is torch's initialisation.
    """
    z0 = real(z0, "z0", low=0.0, high=1.0, low_open=True, high_open=True)
    cell = GRUCell(input_size, hidden_size, seed=seed, dtype=dtype, device=resolve_device(device))
    return _pin_gate(cell, "z", z0)


def lstm(input_size: int, hidden_size: int, f0: float = 0.95, seed: int | None = None, dtype=None, device=None):
    r"""A :class:`seqlearn.gated.LSTMCell` whose forget gate starts at :math:`f_t \equiv f_0`.

    As the paper's later code: :math:`W_{if} = W_{hf} = 0`, :math:`b_{if} = \mathrm{logit}(f_0)`,
    :math:`b_{hf} = 0`; the rest is torch's initialisation.
    """
    f0 = real(f0, "f0", low=0.0, high=1.0, low_open=True, high_open=True)
    cell = LSTMCell(input_size, hidden_size, seed=seed, dtype=dtype, device=resolve_device(device))
    return _pin_gate(cell, "f", f0)


def build_cell(
    name: str,
    input_size: int,
    hidden_size: int,
    s0: float = 0.05,
    layernorm: bool = False,
    seed: int | None = None,
    dtype=None,
    device=None,
):
    r"""One of :data:`ARCHITECTURES`, every gate writing :math:`s_0` at first (the module's initialisation).

    ``"const"``, ``"shared"``, ``"diag"``: the leaky cells (``layernorm`` applies to them only);
    ``"gru"``: :func:`gru` with :math:`z_0 = 1 - s_0`; ``"lstm"``: :func:`lstm` with
    :math:`f_0 = 1 - s_0`.
    """
    name = choice(name, "name", ARCHITECTURES)
    s0 = real(s0, "s0", low=0.0, high=1.0, low_open=True, high_open=True)
    if name == "gru":
        return gru(input_size, hidden_size, z0=1 - s0, seed=seed, dtype=dtype, device=device)
    if name == "lstm":
        return lstm(input_size, hidden_size, f0=1 - s0, seed=seed, dtype=dtype, device=device)
    cls = {"const": ConstGate, "shared": SharedGate, "diag": DiagGate}[name]
    return cls(input_size, hidden_size, s0=s0, layernorm=layernorm, seed=seed, dtype=dtype, device=device)


def architecture_of(cell: nn.Module) -> str:
    """The :data:`ARCHITECTURES` name of ``cell`` (``TypeError`` for any other module)."""
    for cls, name in ((ConstGate, "const"), (SharedGate, "shared"), (DiagGate, "diag")):
        if isinstance(cell, cls):
            return name
    if type(cell) is GRUCell:
        return "gru"
    if type(cell) is LSTMCell:
        return "lstm"
    raise TypeError(
        "cell must be a ConstGate, SharedGate, DiagGate or a plain seqlearn.gated GRUCell / LSTMCell, "
        f"got {type(cell).__name__}"
    )


Cell = LeakyGatedCell | GRUCell | LSTMCell  # what run_cell() drives


@dataclass(frozen=True)
class Trajectory:
    r"""One run of a cell over ``x`` ``(B, T, D)``: the states and every gate, stacked over time.

    Attributes
    ----------
    cell : the module that ran
    architecture : str, one of :data:`ARCHITECTURES`
    x : ``(B, T, D)``, the input
    h : ``(B, T + 1, H)``, :math:`h_0, h_1, \dots, h_T` (``h[:, t]`` is :math:`h_t`)
    gates : dict of ``(B, T, H)`` tensors, ``gates[name][:, t - 1]`` at step :math:`t`:
        ``s``, ``h_tilde`` (leaky family); ``r``, ``z``, ``n`` (GRU); ``i``, ``f``, ``g``, ``o`` (LSTM)
    c : ``(B, T + 1, H)``, :math:`c_0, \dots, c_T` (LSTM; ``None`` otherwise)
    """

    cell: Cell
    architecture: str
    x: torch.Tensor
    h: torch.Tensor
    gates: dict[str, torch.Tensor]
    c: torch.Tensor | None = None


def run_cell(
    cell: Cell, x: torch.Tensor, h0: torch.Tensor | None = None, c0: torch.Tensor | None = None, gates: bool = True
) -> Trajectory:
    r"""Run ``cell`` over ``x`` ``(B, T, D)`` (batch first) from :math:`h_0` (and :math:`c_0`), zeros if ``None``.

    Returns a :class:`Trajectory` with the states and the per-step gate values (differentiable:
    nothing is detached); with ``gates=False`` its ``gates`` are empty (training needs the states
    only, and stacking the gates costs time and memory).

    Examples
    --------
    >>> cell = build_cell("diag", input_size=1, hidden_size=4, s0=0.05, seed=0, dtype=torch.float64)
    >>> traj = run_cell(cell, torch.zeros(2, 5, 1, dtype=torch.float64))  # (B, T, D)
    >>> tuple(traj.h.shape), sorted(traj.gates)
    ((2, 6, 4), ['h_tilde', 's'])
    >>> round(traj.gates["s"].mean().item(), 4)  # from zero input and state, every gate writes s0
    0.05
    """
    arch = architecture_of(cell)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim != 3:
        raise ValueError(f"x must have shape (B, T, D), got {tuple(x.shape)}")
    if x.shape[1] < 1:
        raise ValueError("x must have at least one time step (T >= 1)")
    B, T, _ = x.shape
    H = cell.hidden_size
    h = check_state(h0, "h0", (B, H), x)
    if arch != "lstm" and c0 is not None:
        raise ValueError(f"c0 is for the LSTM only, got one for {arch!r}")
    c = check_state(c0, "c0", (B, H), x) if arch == "lstm" else None
    gates = flag(gates, "gates")
    hs, cs, steps = [h], [] if c is None else [c], []
    for t in range(T):
        out = cell(x[:, t], h if c is None else (h, c), return_gates=gates)
        state, q = out if gates else (out, None)
        if c is None:
            h = state
        else:
            h, c = state
            cs.append(c)
        hs.append(h)
        steps.append(q)
    names = list(vars(steps[0])) if gates else []
    stacked = {n: torch.stack([getattr(q, n) for q in steps], dim=1) for n in names}  # each (B, T, H)
    C = torch.stack(cs, dim=1) if arch == "lstm" else None  # (B, T + 1, H)
    return Trajectory(cell=cell, architecture=arch, x=x, h=torch.stack(hs, dim=1), gates=stacked, c=C)


build, run = build_cell, run_cell  # the former names (Chapter 5 imports them)
