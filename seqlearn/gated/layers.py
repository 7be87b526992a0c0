r"""Multi-layer LSTM and GRU sequence layers over the cells of :mod:`seqlearn.gated.cells`.

Layer :math:`k` reads the states :math:`h^{(k-1)}_{1..T}` of the layer below (layer 0 reads
:math:`x_{1..T}`) and runs its cell over :math:`t = 1..T`, as ``torch.nn.LSTM`` / ``nn.GRU``
with ``dropout=0`` and one direction. Shapes follow torch: ``x`` is ``(B, T, D)`` with
``batch_first=True`` (this package's default, the course's layout) and ``(T, B, D)`` otherwise;
the state ``h`` (and ``c``) is ``(L, B, H)`` for :math:`L` layers.

**Two paths, equal results.** When every cell is a plain :class:`~seqlearn.gated.cells.LSTMCell`
/ :class:`~seqlearn.gated.cells.GRUCell` (no subclass with other gates) and no gates are asked
for, ``forward`` hands the cells' own parameters to the fused ``torch.nn.LSTM`` / ``nn.GRU``
kernel (cuDNN on a GPU) through :func:`torch.func.functional_call`, so gradients reach the
cells' parameters; otherwise it loops over the cells step by step. ``fast=False`` forces the
loop; the tests check both paths agree. A layer class for other gates (Chapter 5) subclasses
:class:`LSTM` / :class:`GRU` with ``cell_type`` set to a cell subclass that overrides ``gates``;
it always runs the loop.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.func import functional_call

from ..seeding import child_seed, torch_generator
from ..validation import flag, integer, real
from .cells import GRUCell, LSTMCell, check_input, check_state, init_forget_bias

__all__ = ["LSTM", "GRU"]


class _GatedLayers(nn.Module):
    cell_type: type[LSTMCell] | type[GRUCell]  # a subclass may set its own (other gates)
    standard_cell: type[LSTMCell] | type[GRUCell]  # the cell the fused torch kernel computes
    torch_type: Any  # nn.LSTM or nn.GRU
    has_cell_state: bool

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        batch_first: bool = True,
        fast: bool = True,
        seed: int | None = None,
        dtype=None,
        device=None,
    ):
        super().__init__()
        self.input_size = D = integer(input_size, "input_size D", low=1)
        self.hidden_size = H = integer(hidden_size, "hidden_size H", low=1)
        self.num_layers = L = integer(num_layers, "num_layers L", low=1)
        self.batch_first = flag(batch_first, "batch_first")
        self.fast = flag(fast, "fast")
        g = torch_generator(seed)
        seeds = [child_seed(g) for _ in range(L)]
        self.cells = nn.ModuleList(
            self.cell_type(D if k == 0 else H, H, seed=seeds[k], dtype=dtype, device=device) for k in range(L)
        )

    def extra_repr(self) -> str:
        return (
            f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
            f"batch_first={self.batch_first}, fast={self.fast}"
        )

    @classmethod
    def _from_torch(cls, module: Any):
        if not isinstance(module, cls.torch_type):
            raise TypeError(f"module must be a torch.nn.{cls.torch_type.__name__}, got {type(module).__name__}")
        if module.bidirectional or getattr(module, "proj_size", 0) or module.dropout:
            raise ValueError("bidirectional modules, dropout and LSTM projections are not supported")
        w = module.weight_hh_l0
        layers = cls(
            module.input_size,
            module.hidden_size,
            module.num_layers,
            batch_first=module.batch_first,
            seed=0,
            dtype=w.dtype,
            device=w.device,
        )
        for k, cell in enumerate(layers._cells()):
            cell._copy_from(module, k)
        return layers

    def _cells(self) -> list[LSTMCell | GRUCell]:
        return list(self.cells)  # type: ignore[arg-type]

    def uses_fast_path(self, return_gates: bool = False) -> bool:
        """Whether ``forward`` runs the fused torch kernel: ``fast``, plain cells, no gates asked for."""
        return self.fast and not return_gates and all(type(c) is self.standard_cell for c in self.cells)

    def _torch_parameters(self) -> dict[str, torch.Tensor]:
        names = {"W_ih": "weight_ih", "W_hh": "weight_hh", "b_ih": "bias_ih", "b_hh": "bias_hh"}
        return {f"{names[n]}_l{k}": getattr(c, n) for k, c in enumerate(self._cells()) for n in names}

    def _shell(self) -> nn.Module:
        """A parameterless-in-effect torch module (on the meta device) whose parameters we substitute."""
        return self.torch_type(
            self.input_size, self.hidden_size, self.num_layers, batch_first=self.batch_first, device="meta"
        )

    def _prepare(self, x, state_names: tuple[str, ...], state):
        W = self._cells()[0].W_ih
        x = check_input(x, self.input_size, 3, W.dtype, "(B, T, D)" if self.batch_first else "(T, B, D)")
        B = x.shape[0] if self.batch_first else x.shape[1]
        shape = (self.num_layers, B, self.hidden_size)
        if state is None:
            state = (None,) * len(state_names)
        return x, B, tuple(check_state(s, n, shape, x) for s, n in zip(state, state_names))

    def _loop(self, x, states, return_gates):
        xs = x if self.batch_first else x.transpose(0, 1)  # (B, T, D)
        finals, all_gates = [], []
        for k, cell in enumerate(self.cells):
            s = tuple(st[k] for st in states)
            outs, gates = [], []
            for t in range(xs.shape[1]):
                arg = s if self.has_cell_state else s[0]
                new, q = cell(xs[:, t], arg, return_gates=True)
                s = new if self.has_cell_state else (new,)
                outs.append(s[0])
                gates.append(q)
            xs = torch.stack(outs, dim=1)  # (B, T, H), the input of the layer above
            finals.append(s)
            all_gates.append(gates)
        y = xs if self.batch_first else xs.transpose(0, 1)
        final = tuple(torch.stack([f[j] for f in finals]) for j in range(len(states)))
        return y, final, all_gates


class LSTM(_GatedLayers):
    r"""An :math:`L`-layer LSTM over a sequence, equal to ``torch.nn.LSTM`` with the same weights.

    Parameters
    ----------
    input_size, hidden_size, num_layers : int
        :math:`D`, :math:`H`, :math:`L`.
    batch_first : bool
        ``x`` is ``(B, T, D)`` if true (the default, unlike torch), ``(T, B, D)`` otherwise.
    fast : bool
        Run the fused torch kernel when the cells are standard (see the module docstring).
    forget_bias : float, optional
        :math:`b_{if} + b_{hf}` at initialisation, every layer (:func:`init_forget_bias`).
    seed, dtype, device : optional

    Attributes
    ----------
    cells : ModuleList of :class:`~seqlearn.gated.cells.LSTMCell`, layer :math:`k` with
        ``W_ih`` ``(4H, D)`` for :math:`k = 0`, ``(4H, H)`` above.
    """

    cell_type = standard_cell = LSTMCell
    torch_type = nn.LSTM
    has_cell_state = True

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        batch_first: bool = True,
        fast: bool = True,
        forget_bias: float | None = None,
        seed: int | None = None,
        dtype=None,
        device=None,
    ):
        super().__init__(input_size, hidden_size, num_layers, batch_first, fast, seed, dtype, device)
        if forget_bias is not None:
            init_forget_bias(self, real(forget_bias, "forget_bias"))

    @classmethod
    def from_torch(cls, module: nn.LSTM) -> LSTM:
        """The layers with the weights (copied) and ``batch_first`` of a unidirectional ``nn.LSTM``."""
        return cls._from_torch(module)

    def forward(
        self,
        x: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
        return_gates: bool = False,
    ):
        r"""Run over ``x``; ``state`` :math:`= (h_0, c_0)`, each ``(L, B, H)``, zeros if ``None``.

        Returns ``(y, (h_T, c_T))`` with ``y`` the top layer's states ``(B, T, H)`` (batch
        first) and :math:`h_T, c_T` ``(L, B, H)``; with ``return_gates`` also the gates,
        ``gates[k][t]`` an :class:`~seqlearn.gated.cells.LSTMGates` (always the step loop).
        """
        return_gates = flag(return_gates, "return_gates")
        x, _, states = self._prepare(x, ("h0", "c0"), state)
        if self.uses_fast_path(return_gates):
            y, (h, c) = functional_call(self._shell(), self._torch_parameters(), (x, states))
            return y, (h, c)
        y, (h, c), gates = self._loop(x, states, return_gates)
        return (y, (h, c), gates) if return_gates else (y, (h, c))


class GRU(_GatedLayers):
    r"""An :math:`L`-layer GRU over a sequence, equal to ``torch.nn.GRU`` with the same weights.

    Parameters
    ----------
    input_size, hidden_size, num_layers : int
        :math:`D`, :math:`H`, :math:`L`.
    batch_first : bool
        ``x`` is ``(B, T, D)`` if true (the default, unlike torch), ``(T, B, D)`` otherwise.
    fast : bool
        Run the fused torch kernel when the cells are standard (see the module docstring).
    seed, dtype, device : optional

    Attributes
    ----------
    cells : ModuleList of :class:`~seqlearn.gated.cells.GRUCell`, layer :math:`k` with
        ``W_ih`` ``(3H, D)`` for :math:`k = 0`, ``(3H, H)`` above.
    """

    cell_type = standard_cell = GRUCell
    torch_type = nn.GRU
    has_cell_state = False

    @classmethod
    def from_torch(cls, module: nn.GRU) -> GRU:
        """The layers with the weights (copied) and ``batch_first`` of a unidirectional ``nn.GRU``."""
        return cls._from_torch(module)

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None, return_gates: bool = False):
        r"""Run over ``x`` from ``h0`` ``(L, B, H)`` (zeros if ``None``).

        Returns ``(y, h_T)``: the top layer's states ``(B, T, H)`` (batch first) and
        :math:`h_T` ``(L, B, H)``; with ``return_gates`` also ``gates[k][t]``, a
        :class:`~seqlearn.gated.cells.GRUGates` (always the step loop).
        """
        return_gates = flag(return_gates, "return_gates")
        x, _, (h,) = self._prepare(x, ("h0",), None if h0 is None else (h0,))
        if self.uses_fast_path(return_gates):
            y, h = functional_call(self._shell(), self._torch_parameters(), (x, h))
            return y, h
        y, (h,), gates = self._loop(x, (h,), return_gates)
        return (y, h, gates) if return_gates else (y, h)
