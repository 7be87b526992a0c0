r"""LSTM and GRU cells written for reading, with exactly the conventions of ``torch.nn``.

With input :math:`x_t \in \mathbb R^D`, state :math:`h_{t-1} \in \mathbb R^H` (and for the
LSTM the cell :math:`c_{t-1} \in \mathbb R^H`), :math:`\sigma` the logistic function and
:math:`\odot` the elementwise product, the LSTM (Hochreiter & Schmidhuber 1997, with the
forget gate of Gers, Schmidhuber & Cummins 2000) computes, gate order **i, f, g, o**,

.. math::
    i_t &= \sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi}) \\
    f_t &= \sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf}) \\
    g_t &= \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) \\
    o_t &= \sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho}) \\
    c_t &= f_t \odot c_{t-1} + i_t \odot g_t, \qquad h_t = o_t \odot \tanh(c_t),

and the GRU (Cho et al. 2014, as ``torch.nn.GRU``), gate order **r, z, n**,

.. math::
    r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\
    z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
    n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})) \\
    h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}.

:math:`z_t` weights the *old* state, and :math:`b_{hn}` sits inside the reset product, so it
cannot be merged into :math:`b_{in}`: the two traps of a GRU that must equal ``nn.GRU``.

**Parameters are stacked exactly as torch stacks them**: ``W_ih`` is
:math:`[W_{ii}; W_{if}; W_{ig}; W_{io}]` of shape ``(4H, D)`` (GRU: :math:`[W_{ir}; W_{iz};
W_{in}]`, ``(3H, D)``), ``W_hh`` likewise ``(4H, H)`` / ``(3H, H)``, and the two biases
``b_ih`` and ``b_hh`` ``(4H,)`` / ``(3H,)``. So ``weight_ih_l0`` of an ``nn.LSTM`` is ``W_ih``
as it stands, and a sequence layer can hand the same tensors to the fused torch kernel.
Each gate equation reads its rows through :meth:`LSTMCell.gate_rows` / a named slice.

Extending the gates (Chapter 5: a constant gate, one shared across neurons, a per-neuron
diagonal one): a subclass overrides :meth:`LSTMCell.gates` (or :meth:`GRUCell.gates`), which
returns the gate values as a :class:`LSTMGates` / :class:`GRUGates`; the state update in
``forward`` then uses them unchanged. ``forward(..., return_gates=True)`` returns them too,
which is what the diagnostics read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..seeding import torch_generator
from ..validation import flag, integer, real

__all__ = ["LSTMGates", "GRUGates", "LSTMCell", "GRUCell", "init_forget_bias", "check_input", "check_state"]


@dataclass(frozen=True)
class LSTMGates:
    r"""One LSTM step's gate values, each of shape ``(B, H)``: :math:`i_t, f_t, g_t, o_t`."""

    i: torch.Tensor
    f: torch.Tensor
    g: torch.Tensor
    o: torch.Tensor


@dataclass(frozen=True)
class GRUGates:
    r"""One GRU step's gate values, each of shape ``(B, H)``: :math:`r_t, z_t, n_t`."""

    r: torch.Tensor
    z: torch.Tensor
    n: torch.Tensor


def check_input(x, size: int, ndim: int, dtype: torch.dtype, what: str) -> torch.Tensor:
    """``x`` if it is a floating tensor of ``ndim`` dimensions, last ``size``, of ``dtype``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype != dtype:
        raise TypeError(f"x must have the parameters' dtype {dtype}, got {x.dtype}")
    if x.ndim != ndim or x.shape[-1] != size:
        raise ValueError(f"x must have shape {what} with D={size}, got {tuple(x.shape)}")
    return x


def check_state(s, name: str, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """``s`` if it is a tensor of ``shape`` with ``like``'s dtype (``None``: zeros)."""
    if s is None:
        return like.new_zeros(shape)
    if not isinstance(s, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(s).__name__}")
    if s.dtype != like.dtype:
        raise TypeError(f"{name} must have dtype {like.dtype}, got {s.dtype}")
    if tuple(s.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(s.shape)}")
    return s


class _GatedCell(nn.Module):
    """What the two cells share: torch's stacked parameters and initialisation."""

    n_gates: int
    gate_names: tuple[str, ...]

    def __init__(self, input_size: int, hidden_size: int, seed: int | None = None, dtype=None, device=None):
        super().__init__()
        self.input_size = D = integer(input_size, "input_size D", low=1)
        self.hidden_size = H = integer(hidden_size, "hidden_size H", low=1)
        k = self.n_gates * H
        factory = {"dtype": dtype or torch.get_default_dtype(), "device": device}
        self.W_ih = nn.Parameter(torch.empty(k, D, **factory))  # (nH, D)
        self.W_hh = nn.Parameter(torch.empty(k, H, **factory))  # (nH, H)
        self.b_ih = nn.Parameter(torch.empty(k, **factory))  # (nH,)
        self.b_hh = nn.Parameter(torch.empty(k, **factory))  # (nH,)
        self.reset_parameters(seed)

    def reset_parameters(self, seed: int | None = None) -> None:
        r"""Every weight and bias from :math:`U(-1/\sqrt H, 1/\sqrt H)`, as torch initialises them."""
        g = torch_generator(seed)
        bound = 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            for p in (self.W_ih, self.W_hh, self.b_ih, self.b_hh):
                u = torch.rand(p.shape, generator=g, dtype=torch.float64)
                p.copy_((2 * u - 1) * bound)

    def input_terms(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`W_{ih} x + b_{ih}` ``(B, n_gates H)`` for ``x`` ``(B, D)``: every gate's input term at once."""
        return torch.addmm(self.b_ih, x, self.W_ih.T)

    def recurrent_terms(self, h: torch.Tensor) -> torch.Tensor:
        r""":math:`W_{hh} h + b_{hh}` ``(B, n_gates H)`` for ``h`` ``(B, H)``."""
        return torch.addmm(self.b_hh, h, self.W_hh.T)

    def gate_rows(self, name: str) -> slice:
        """The rows of ``W_ih``, ``W_hh``, ``b_ih``, ``b_hh`` that belong to gate ``name``."""
        j, H = self.gate_names.index(name), self.hidden_size
        return slice(j * H, (j + 1) * H)

    def extra_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}"

    def _copy_from(self, module: Any, layer: int) -> None:
        p = dict(module.named_parameters())
        suffix = "" if isinstance(module, (nn.LSTMCell, nn.GRUCell)) else f"_l{layer}"
        with torch.no_grad():
            self.W_ih.copy_(p[f"weight_ih{suffix}"])
            self.W_hh.copy_(p[f"weight_hh{suffix}"])
            if module.bias:
                self.b_ih.copy_(p[f"bias_ih{suffix}"])
                self.b_hh.copy_(p[f"bias_hh{suffix}"])
            else:
                self.b_ih.zero_()
                self.b_hh.zero_()

    @classmethod
    def _from_torch(cls, module: Any, layer: int, seq_type: Any, cell_type: Any):
        if not isinstance(module, (seq_type, cell_type)):
            raise TypeError(
                f"module must be a torch.nn.{seq_type.__name__} or {cell_type.__name__}, got {type(module).__name__}"
            )
        if isinstance(module, seq_type):
            if module.bidirectional or getattr(module, "proj_size", 0):
                raise ValueError("bidirectional modules and LSTM projections are not supported")
            layer = integer(layer, "layer", low=0, high=module.num_layers - 1)
            input_size = module.input_size if layer == 0 else module.hidden_size
        else:
            layer = integer(layer, "layer", low=0, high=0)
            input_size = module.input_size
        w = module.weight_hh_l0 if isinstance(module, seq_type) else module.weight_hh
        cell = cls(input_size, module.hidden_size, seed=0, dtype=w.dtype, device=w.device)
        cell._copy_from(module, layer)
        return cell


class LSTMCell(_GatedCell):
    r"""One LSTM step, :math:`(x_t, h_{t-1}, c_{t-1}) \mapsto (h_t, c_t)`, equal to ``torch.nn.LSTMCell``.

    Parameters
    ----------
    input_size, hidden_size : int
        :math:`D` and :math:`H`.
    forget_bias : float, optional
        If given, :math:`b_{if} = ` ``forget_bias`` and :math:`b_{hf} = 0` at initialisation, so
        the forget gate starts near :math:`\sigma(\text{forget\_bias})` (Jozefowicz et al. 2015
        use 1; torch has no such option). ``None``: torch's initialisation.
    seed : int, optional
        Of the initialisation, :math:`U(-1/\sqrt H, 1/\sqrt H)` for every weight and bias.
    dtype, device : optional

    Attributes
    ----------
    W_ih : Parameter, shape ``(4H, D)``, rows :math:`[W_{ii}; W_{if}; W_{ig}; W_{io}]`
    W_hh : Parameter, shape ``(4H, H)``, rows :math:`[W_{hi}; W_{hf}; W_{hg}; W_{ho}]`
    b_ih, b_hh : Parameter, shape ``(4H,)``, same order

    Examples
    --------
    >>> cell = LSTMCell(2, 3, seed=0, dtype=torch.float64)
    >>> ref = torch.nn.LSTMCell(2, 3, dtype=torch.float64)
    >>> weights = {"weight_ih": cell.W_ih, "weight_hh": cell.W_hh, "bias_ih": cell.b_ih, "bias_hh": cell.b_hh}
    >>> _ = ref.load_state_dict(weights)
    >>> x = torch.ones(4, 2, dtype=torch.float64)  # a batch of 4 inputs of size D = 2
    >>> h, c = cell(x)
    >>> tuple(h.shape), torch.allclose(h, ref(x)[0]), torch.allclose(c, ref(x)[1])
    ((4, 3), True, True)
    """

    n_gates = 4
    gate_names = ("i", "f", "g", "o")

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        forget_bias: float | None = None,
        seed: int | None = None,
        dtype=None,
        device=None,
    ):
        super().__init__(input_size, hidden_size, seed=seed, dtype=dtype, device=device)
        self.forget_bias = None if forget_bias is None else real(forget_bias, "forget_bias")
        if self.forget_bias is not None:
            init_forget_bias(self, self.forget_bias)

    @classmethod
    def from_torch(cls, module: nn.LSTM | nn.LSTMCell, layer: int = 0) -> LSTMCell:
        """The cell with the weights of ``module``'s layer ``layer`` (copied; unidirectional, no projections)."""
        return cls._from_torch(module, layer, nn.LSTM, nn.LSTMCell)

    def gates(self, x: torch.Tensor, h: torch.Tensor) -> LSTMGates:
        r""":math:`i_t, f_t, g_t, o_t` for ``x`` ``(B, D)`` and ``h`` :math:`= h_{t-1}` ``(B, H)``."""
        a_i, a_f, a_g, a_o = (self.input_terms(x) + self.recurrent_terms(h)).chunk(4, dim=1)  # each (B, H)
        return LSTMGates(i=torch.sigmoid(a_i), f=torch.sigmoid(a_f), g=torch.tanh(a_g), o=torch.sigmoid(a_o))

    def forward(
        self,
        x: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
        return_gates: bool = False,
    ):
        r"""One step on ``x`` of shape ``(B, D)`` from ``state`` :math:`= (h_{t-1}, c_{t-1})`, each ``(B, H)``.

        Returns :math:`(h_t, c_t)` (zeros for a missing state), and with ``return_gates`` also
        the :class:`LSTMGates`: ``((h_t, c_t), gates)``.
        """
        x = check_input(x, self.input_size, 2, self.W_ih.dtype, "(B, D)")
        shape = (x.shape[0], self.hidden_size)
        h, c = (None, None) if state is None else state
        h = check_state(h, "h", shape, x)
        c = check_state(c, "c", shape, x)
        q = self.gates(x, h)
        c = q.f * c + q.i * q.g  # the additive update
        h = q.o * torch.tanh(c)
        return ((h, c), q) if flag(return_gates, "return_gates") else (h, c)


class GRUCell(_GatedCell):
    r"""One GRU step, :math:`(x_t, h_{t-1}) \mapsto h_t`, equal to ``torch.nn.GRUCell``.

    Parameters
    ----------
    input_size, hidden_size : int
        :math:`D` and :math:`H`.
    seed : int, optional
        Of the initialisation, :math:`U(-1/\sqrt H, 1/\sqrt H)` for every weight and bias.
    dtype, device : optional

    Attributes
    ----------
    W_ih : Parameter, shape ``(3H, D)``, rows :math:`[W_{ir}; W_{iz}; W_{in}]`
    W_hh : Parameter, shape ``(3H, H)``, rows :math:`[W_{hr}; W_{hz}; W_{hn}]`
    b_ih, b_hh : Parameter, shape ``(3H,)``, same order
    """

    n_gates = 3
    gate_names = ("r", "z", "n")

    @classmethod
    def from_torch(cls, module: nn.GRU | nn.GRUCell, layer: int = 0) -> GRUCell:
        """The cell with the weights of ``module``'s layer ``layer`` (copied; unidirectional)."""
        return cls._from_torch(module, layer, nn.GRU, nn.GRUCell)

    def gates(self, x: torch.Tensor, h: torch.Tensor) -> GRUGates:
        r""":math:`r_t, z_t, n_t` for ``x`` ``(B, D)`` and ``h`` :math:`= h_{t-1}` ``(B, H)``."""
        x_r, x_z, x_n = self.input_terms(x).chunk(3, dim=1)  # W_i* x + b_i*, each (B, H)
        h_r, h_z, h_n = self.recurrent_terms(h).chunk(3, dim=1)  # W_h* h + b_h*
        r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
        return GRUGates(r=r, z=z, n=torch.tanh(x_n + r * h_n))

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None, return_gates: bool = False):
        r"""One step on ``x`` of shape ``(B, D)`` from :math:`h_{t-1}` ``(B, H)`` (zeros if ``None``).

        Returns :math:`h_t`, and with ``return_gates`` ``(h_t, gates)`` (:class:`GRUGates`).
        """
        x = check_input(x, self.input_size, 2, self.W_ih.dtype, "(B, D)")
        h = check_state(h, "h", (x.shape[0], self.hidden_size), x)
        q = self.gates(x, h)
        # z weights the old state; -z + 1 is 1 - z bit for bit, and torch.func.jvp runs 1 - z (rsub with a
        # number) through a Python decomposition, ten times slower
        h = (-q.z + 1) * q.n + q.z * h
        return (h, q) if flag(return_gates, "return_gates") else h


def init_forget_bias(module: nn.Module, value: float = 1.0) -> nn.Module:
    r"""Set every LSTM forget-gate bias so that :math:`b_{if} + b_{hf} =` ``value`` exactly; returns ``module``.

    :math:`b_{if} =` ``value`` and :math:`b_{hf} = 0`; the other gates are unchanged. Works on
    :class:`LSTMCell`, the sequence :class:`~seqlearn.gated.layers.LSTM`, and ``torch.nn.LSTM``
    / ``torch.nn.LSTMCell`` (rows :math:`H..2H` of ``bias_ih*`` / ``bias_hh*``).
    """
    value = real(value, "value")
    found = False
    for m in module.modules():
        if isinstance(m, LSTMCell):
            pairs = [(m.b_ih, m.b_hh, m.hidden_size)]
        elif isinstance(m, (nn.LSTM, nn.LSTMCell)) and m.bias:
            p = dict(m.named_parameters(recurse=False))
            pairs = [(p[n], p[n.replace("bias_ih", "bias_hh")], m.hidden_size) for n in p if n.startswith("bias_ih")]
        else:
            continue
        found = True
        with torch.no_grad():
            for b_ih, b_hh, H in pairs:
                b_ih[H : 2 * H] = value
                b_hh[H : 2 * H] = 0.0
    if not found:
        raise TypeError(f"module must contain an LSTM with biases, got {type(module).__name__}")
    return module
