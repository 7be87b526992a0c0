r"""Gated networks as language models and as task models, the counterparts of Chapter 3's.

* :class:`GatedLM`: embedding, one LSTM or GRU layer and a softmax output,
  :math:`x_t = E[w_t]`, :math:`y_t = W_{hy} h_t + b_y`; a
  :class:`~seqlearn.rnn.model.RecurrentLM`, so :mod:`seqlearn.lm` evaluates it (perplexity,
  agreement) and :func:`seqlearn.rnn.train_rnn_lm` trains it, exactly like the Elman
  :class:`~seqlearn.rnn.model.RNNLM`.
* :class:`SequenceGated`: one LSTM or GRU layer with a linear readout, for the synthetic tasks
  (the adding problem, the copy task), trained by :func:`seqlearn.rnn.fit_task` like the
  Elman :class:`~seqlearn.rnn.model.SequenceRNN`.

The recurrent state is the layer's: :math:`(h, c)`, each ``(1, B, H)``, for the LSTM and
:math:`h` ``(1, B, H)`` for the GRU. Both run the fused torch kernel
(:mod:`seqlearn.gated.layers`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..rnn.model import RecurrentLM
from ..seeding import child_seed, torch_generator
from ..validation import choice, flag, integer, real
from .layers import GRU, LSTM

__all__ = ["CELLS", "gated_layer", "GatedLM", "SequenceGated"]

CELLS = {"lstm": LSTM, "gru": GRU}
"""The gated layers by name."""


def gated_layer(
    cell: str, input_size: int, hidden_size: int, forget_bias: float | None = None, seed: int | None = None
) -> LSTM | GRU:
    r"""One batch-first :class:`~seqlearn.gated.layers.LSTM` or :class:`~seqlearn.gated.layers.GRU` layer (``cell``).

    ``forget_bias`` sets :math:`b_{if} + b_{hf}` of the LSTM at initialisation (Jozefowicz et
    al. 2015 use 1); it has no meaning for the GRU, whose update gate is not a forget gate of
    the same sign, and is refused there.
    """
    cell = choice(cell, "cell", CELLS)
    if cell == "gru":
        if forget_bias is not None:
            raise ValueError("forget_bias is an LSTM option; the GRU has no forget gate (pass forget_bias=None)")
        return GRU(input_size, hidden_size, seed=seed)
    fb = None if forget_bias is None else real(forget_bias, "forget_bias")
    return LSTM(input_size, hidden_size, forget_bias=fb, seed=seed)


class GatedLM(RecurrentLM):
    r"""Embedding, an LSTM or GRU layer and softmax output: :math:`x_t = E[w_t]`, :math:`y_t = W_{hy} h_t + b_y`.

    It predicts the tokens of Chapters 1-3 (every word and ``</s>``) with the same loss, so its
    perplexity compares directly with the :class:`~seqlearn.rnn.model.RNNLM`'s.

    Parameters
    ----------
    vocab_size : int
        :math:`|V|`.
    embedding_dim : int
        :math:`m`.
    hidden_size : int
        :math:`H`.
    cell : {"lstm", "gru"}
    forget_bias : float, optional
        LSTM only (:func:`gated_layer`).
    seed : int, optional

    Attributes
    ----------
    E : Parameter ``(|V|, m)``; rnn : LSTM or GRU; W_hy : Parameter ``(|V|, H)``; b_y : Parameter ``(|V|,)``
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_dim: int = 32,
        hidden_size: int = 64,
        cell: str = "lstm",
        forget_bias: float | None = None,
        seed: int | None = None,
    ):
        super().__init__()
        self.vocab_size = V = integer(vocab_size, "vocab_size", low=4)
        self.embedding_dim = m = integer(embedding_dim, "embedding_dim m", low=1)
        self.hidden_size = H = integer(hidden_size, "hidden_size H", low=1)
        g = torch_generator(seed)
        self.E = nn.Parameter(torch.randn(V, m, generator=g) * 0.1)
        self.rnn = gated_layer(cell, m, H, forget_bias, seed=child_seed(g))
        self.cell = cell
        self.W_hy = nn.Parameter(torch.randn(V, H, generator=g) / math.sqrt(H))
        self.b_y = nn.Parameter(torch.zeros(V))

    def forward(self, ids: torch.Tensor, state=None):
        """Logits ``(B, T, |V|)`` of the next token after each of ``ids`` ``(B, T)``, and the final state."""
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.is_floating_point():
            raise ValueError("ids must be an integer tensor of shape (B, T)")
        h, state = self.rnn(self.E[ids], state)  # (B, T, H)
        return h @ self.W_hy.T + self.b_y, state


class SequenceGated(nn.Module):
    r"""An LSTM or GRU layer with a linear readout, sequence-to-one or sequence-to-sequence.

    ``many_to_one=True``: :math:`\hat y = W_{hy} h_T + b_y`, shape ``(B, O)`` (the adding
    problem); else :math:`\hat y_t = W_{hy} h_t + b_y`, shape ``(B, T, O)`` (the copy task).
    The same interface as :class:`~seqlearn.rnn.model.SequenceRNN`, so the same training
    (:func:`seqlearn.rnn.fit_task`) and experiments (:func:`seqlearn.rnn.adding_cliff`) run it.

    Parameters
    ----------
    input_size, hidden_size, output_size : int
        :math:`D`, :math:`H`, :math:`O`.
    cell : {"lstm", "gru"}
    many_to_one : bool
    forget_bias : float, optional
        LSTM only (:func:`gated_layer`).
    seed : int, optional
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        cell: str = "lstm",
        many_to_one: bool = True,
        forget_bias: float | None = None,
        seed: int | None = None,
    ):
        super().__init__()
        g = torch_generator(seed)
        self.rnn = gated_layer(cell, input_size, hidden_size, forget_bias, seed=child_seed(g))
        self.cell = cell
        H = self.rnn.hidden_size
        self.output_size = O = integer(output_size, "output_size O", low=1)
        self.W_hy = nn.Parameter(torch.randn(O, H, generator=g) / math.sqrt(H))
        self.b_y = nn.Parameter(torch.zeros(O))
        self.many_to_one = flag(many_to_one, "many_to_one")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(x)  # (B, T, H)
        return (h[:, -1] if self.many_to_one else h) @ self.W_hy.T + self.b_y
