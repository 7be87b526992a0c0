r"""Elman recurrent networks in torch: the layer, the language model and the task model.

The Elman RNN (Elman 1990) with input :math:`x_t \in \mathbb R^D` and state
:math:`h_t \in \mathbb R^H` computes

.. math::
    h_t = \phi(W_{xh} x_t + W_{hh} h_{t-1} + b_h), \qquad y_t = W_{hy} h_t + b_y,

with :math:`\phi` one of :data:`TORCH_NONLINEARITIES` and :math:`h_0 = 0` unless given.
Gradients are computed by torch autograd through the unrolled loop (backpropagation
through time, BPTT); for tanh and relu the layer hands its parameters to torch's fused step
loop (``torch.rnn_tanh`` / ``torch.rnn_relu``, the kernel of ``nn.RNN``: the same states,
about twice as fast on a CPU), unless ``fast=False`` asks for the readable Python loop.
The constructors' arguments follow torch (``input_size`` is :math:`D`, ``hidden_size``
:math:`H`, ``output_size`` :math:`O`, ``embedding_dim`` the embedding size :math:`m`); the
parameters keep the chapter's names (``W_hh``, ``b_h``).

* :class:`ElmanRNN`: one layer over a batch (equal to a one-layer ``torch.nn.RNN``);
* :class:`RecurrentLM`: what every recurrent language model shares: reading a stream
  sentence by sentence, the state reset at every ``<s>`` (:meth:`RecurrentLM.token_logprobs`,
  through which :mod:`seqlearn.lm` evaluates it);
* :class:`RNNLM`: embedding, Elman layer and softmax output, a :class:`RecurrentLM`;
* :class:`SequenceRNN`: an Elman layer with a linear readout, for the synthetic tasks.

Batches are in :mod:`seqlearn.rnn.data`, training in :mod:`seqlearn.rnn.train`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ..lm import evaluating, model_device
from ..seeding import child_seed, torch_generator
from ..validation import choice, flag, integer, real
from .data import SentenceBatches

__all__ = [
    "TORCH_NONLINEARITIES",
    "INITS",
    "recurrent_init",
    "ElmanRNN",
    "RecurrentLM",
    "RNNLM",
    "SequenceRNN",
]


def _identity(a: torch.Tensor) -> torch.Tensor:
    return a


TORCH_NONLINEARITIES = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu, "linear": _identity}
r""":math:`\phi` by name: the names of the NumPy reference (``seqlearn.rnn.NONLINEARITIES``), and
``"relu"``, the units of the IRNN (Le et al. 2015: relu and :math:`W_{hh} = I` at the start)."""

_FUSED = {"tanh": torch.rnn_tanh, "relu": torch.rnn_relu}  # nn.RNN's kernels, by phi

INITS = ("random", "orthogonal", "identity")


def recurrent_init(
    hidden_size: int, init: str = "orthogonal", rho: float = 1.0, seed: int | None = None
) -> torch.Tensor:
    r"""An :math:`H \times H` recurrent matrix :math:`W_{hh}` with spectral radius :math:`\rho` (float64).

    * ``"random"``: :math:`W = \rho \, G / \max_i |\lambda_i(G)|`, :math:`G_{ij} \sim N(0, 1/H)`;
    * ``"orthogonal"``: :math:`W = \rho Q`, :math:`Q` a random orthogonal matrix (all
      singular values :math:`\rho`);
    * ``"identity"``: :math:`W = \rho I` (Le et al. 2015, IRNN with relu).

    ``hidden_size`` is :math:`H`.
    """
    H = integer(hidden_size, "hidden_size H", low=1)
    init = choice(init, "init", INITS)
    rho = real(rho, "the spectral radius rho", low=0)
    g = torch_generator(seed)
    if init == "identity":
        return rho * torch.eye(H, dtype=torch.float64)
    G = torch.randn(H, H, generator=g, dtype=torch.float64) / math.sqrt(H)
    if init == "orthogonal":
        Q, R = torch.linalg.qr(G)
        return rho * Q * torch.sign(torch.diagonal(R))  # (H, H), Haar-distributed
    radius = torch.linalg.eigvals(G).abs().max()
    return rho * G / radius


class ElmanRNN(nn.Module):
    r"""One Elman layer, :math:`h_t = \phi(W_{xh} x_t + W_{hh} h_{t-1} + b_h)`, over a batch.

    Parameters
    ----------
    input_size, hidden_size : int
        :math:`D` and :math:`H`.
    nonlinearity : {"tanh", "sigmoid", "relu", "linear"}
        :math:`\phi` (:data:`TORCH_NONLINEARITIES`).
    init : {"random", "orthogonal", "identity"}
        Of :math:`W_{hh}` (see :func:`recurrent_init`); :math:`W_{xh}` has entries
        :math:`N(0, 1/D)` and :math:`b_h = 0`.
    rho : float
        Spectral radius of the initial :math:`W_{hh}`.
    seed : int, optional
    fast : bool
        Run the fused kernel of ``nn.RNN`` where :math:`\phi` is tanh or relu (the default);
        ``False`` runs the Python loop of :meth:`forward`. Both give the same states.

    Attributes
    ----------
    W_xh : Parameter, shape ``(H, D)``
    W_hh : Parameter, shape ``(H, H)``
    b_h : Parameter, shape ``(H,)``
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        nonlinearity: str = "tanh",
        init: str = "orthogonal",
        rho: float = 1.0,
        seed: int | None = None,
        fast: bool = True,
    ):
        super().__init__()
        self.input_size = D = integer(input_size, "input_size D", low=1)
        self.hidden_size = H = integer(hidden_size, "hidden_size H", low=1)
        self.nonlinearity = choice(nonlinearity, "nonlinearity", TORCH_NONLINEARITIES)
        self.phi = TORCH_NONLINEARITIES[nonlinearity]
        g = torch_generator(seed)
        self.W_xh = nn.Parameter(torch.randn(H, D, generator=g) / math.sqrt(D))
        self.W_hh = nn.Parameter(recurrent_init(H, init, rho, seed=child_seed(g)).float())
        self.b_h = nn.Parameter(torch.zeros(H))
        self.fast = flag(fast, "fast")

    def extra_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, nonlinearity={self.nonlinearity}"

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> ElmanRNN:
        r"""The same layer as a one-layer, unidirectional ``torch.nn.RNN(batch_first=True)``.

        :math:`W_{xh}` = ``weight_ih_l0``, :math:`W_{hh}` = ``weight_hh_l0``,
        :math:`b_h` = ``bias_ih_l0 + bias_hh_l0``.
        """
        if not isinstance(rnn, nn.RNN) or rnn.num_layers != 1 or rnn.bidirectional:
            raise TypeError("rnn must be a one-layer, unidirectional torch.nn.RNN")
        p = dict(rnn.named_parameters())  # weight_ih_l0, weight_hh_l0[, bias_ih_l0, bias_hh_l0]
        layer = cls(rnn.input_size, rnn.hidden_size, rnn.nonlinearity, seed=0).to(p["weight_hh_l0"])
        with torch.no_grad():
            layer.W_xh.copy_(p["weight_ih_l0"])
            layer.W_hh.copy_(p["weight_hh_l0"])
            layer.b_h.copy_(p["bias_ih_l0"] + p["bias_hh_l0"] if rnn.bias else torch.zeros_like(layer.b_h))
        return layer

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Run the layer over ``x`` of shape ``(B, T, D)``.

        Returns ``(h, h_T)``: all states, shape ``(B, T, H)``, and the last, shape ``(B, H)``.
        ``h0`` of shape ``(B, H)`` defaults to zeros. The input terms
        :math:`W_{xh} x_t + b_h` of all steps are one matrix product; only
        :math:`W_{hh} h_{t-1}` is in the loop over :math:`t` (in C++ on the fast path, where
        ``nn.RNN``'s second bias :math:`b_{hh}` is zero).
        """
        D, H = self.input_size, self.hidden_size
        if not isinstance(x, torch.Tensor) or x.ndim != 3 or x.shape[-1] != D:
            shown = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"x must be a tensor of shape (B, T, D={D}), got {shown}")
        B, T, _ = x.shape
        h = x.new_zeros(B, H) if h0 is None else h0  # (B, H)
        if h.shape != (B, H):
            raise ValueError(f"h0 must have shape (B, H) = {(B, H)}, got {tuple(h.shape)}")
        if self.fast and self.nonlinearity in _FUSED:
            params = (self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h))
            # (input, h0 (1, B, H), params, has_biases, layers, dropout, train, bidirectional, batch_first)
            fused, h_last = _FUSED[self.nonlinearity](x, h[None].contiguous(), params, True, 1, 0.0, True, False, True)
            return fused, h_last[0]
        a_x = x @ self.W_xh.T + self.b_h  # (B, T, H)
        states = []
        for t in range(T):
            h = self.phi(a_x[:, t] + h @ self.W_hh.T)  # (B, H)
            states.append(h)
        return torch.stack(states, dim=1), h


class RecurrentLM(nn.Module):
    r"""What every recurrent language model shares: it reads whole sentences from a zero state.

    A subclass sets ``vocab_size`` (:math:`|V|`) and defines ``forward(ids, h0=None)``
    returning ``(logits, h_T)``: for token ids ``(B, T)``, the logits ``(B, T, |V|)`` of the
    next token after each, :math:`P(w_{t+1} \mid w_{\le t}) = \mathrm{softmax}(y_t)`. It
    inherits :meth:`token_logprobs`, so :mod:`seqlearn.lm` evaluates it (perplexity,
    agreement) with no code of its own, and :func:`seqlearn.rnn.train_rnn_lm` trains it.
    """

    vocab_size: int

    def token_logprobs(self, stream, batch_size: int = 256) -> np.ndarray:
        r"""Natural-log :math:`\log P(w_t \mid \langle s\rangle w_1 .. w_{t-1})` of every predicted token.

        One entry per token of ``stream`` that is not ``<s>`` (words and ``</s>``), in stream
        order, each conditioned on its own sentence only (the state is reset at ``<s>``):
        aligned 1:1 with Chapter 1's ``LanguageModel.token_logprobs`` on the same stream.
        Computed where the model is, on padded batches of ``batch_size`` whole sentences
        (:class:`~seqlearn.rnn.data.SentenceBatches`), in evaluation mode without gradients;
        the log-softmax in float64.

        Parameters
        ----------
        stream : array of int, shape ``(L,)``
            An encoded stream of :math:`S` sentences and :math:`T` predicted tokens.
        batch_size : int
            Sentences per forward pass.

        Returns
        -------
        numpy.ndarray, float64, shape ``(T,)``
        """
        batches = SentenceBatches(stream, batch_size, vocab_size=self.vocab_size, device=model_device(self))
        offsets = np.concatenate([[0], np.cumsum(batches.lengths)])  # (S+1,) first target of each sentence
        out = np.empty(batches.n_targets)
        with evaluating(self):
            for idx in batches.batch_indices():
                inputs, targets, _ = batches.batch(idx)
                logp = torch.log_softmax(self(inputs)[0].double(), dim=-1)  # (B, L, |V|)
                picked = logp.gather(2, targets[..., None])[..., 0].cpu().numpy()  # (B, L)
                for row, i in enumerate(idx):
                    out[offsets[i] : offsets[i + 1]] = picked[row, : batches.lengths[i]]
        return out


class RNNLM(RecurrentLM):
    r"""Embedding, Elman RNN and softmax output: :math:`x_t = E[w_t]`, :math:`y_t = W_{hy} h_t + b_y`.

    It predicts exactly the tokens of Chapters 1 and 2 (every word and ``</s>``, never
    ``<s>``), with the same loss :func:`seqlearn.losses.masked_cross_entropy`, so its
    perplexities compare directly with theirs (:mod:`seqlearn.lm`).

    Parameters
    ----------
    vocab_size : int
        :math:`|V|`.
    embedding_dim : int
        :math:`m`, the embedding size (the RNN's :math:`D`).
    hidden_size : int
        :math:`H`.
    nonlinearity, init, rho
        Of the :class:`ElmanRNN`.
    seed : int, optional

    Attributes
    ----------
    E : Parameter ``(|V|, m)``; rnn : ElmanRNN; W_hy : Parameter ``(|V|, H)``; b_y : Parameter ``(|V|,)``
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_dim: int = 32,
        hidden_size: int = 64,
        nonlinearity: str = "tanh",
        init: str = "orthogonal",
        rho: float = 1.0,
        seed: int | None = None,
    ):
        super().__init__()
        self.vocab_size = V = integer(vocab_size, "vocab_size", low=4)
        self.embedding_dim = m = integer(embedding_dim, "embedding_dim m", low=1)
        g = torch_generator(seed)
        self.E = nn.Parameter(torch.randn(V, m, generator=g) * 0.1)
        self.rnn = ElmanRNN(m, hidden_size, nonlinearity, init, rho, seed=child_seed(g))
        self.hidden_size = H = self.rnn.hidden_size
        self.W_hy = nn.Parameter(torch.randn(V, H, generator=g) / math.sqrt(H))
        self.b_y = nn.Parameter(torch.zeros(V))

    def forward(self, ids: torch.Tensor, h0: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``(B, T, |V|)`` of the next token after each of ``ids`` ``(B, T)``, and :math:`h_T`."""
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.is_floating_point():
            raise ValueError("ids must be an integer tensor of shape (B, T)")
        h, h_T = self.rnn(self.E[ids], h0)  # (B, T, H)
        return h @ self.W_hy.T + self.b_y, h_T


class SequenceRNN(nn.Module):
    r"""An Elman RNN with a linear readout, sequence-to-one or sequence-to-sequence.

    ``many_to_one=True``: :math:`\hat y = W_{hy} h_T + b_y`, shape ``(B, O)`` (the adding
    problem, agreement); else :math:`\hat y_t = W_{hy} h_t + b_y` for every :math:`t`,
    shape ``(B, T, O)`` (the copy task). With ``lengths`` (``(B,)``), :math:`h_T` is the
    state at each sequence's last real step. ``input_size``, ``hidden_size`` and
    ``output_size`` are :math:`D`, :math:`H` and :math:`O`; the other arguments are the
    :class:`ElmanRNN`'s.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        many_to_one: bool = True,
        nonlinearity: str = "tanh",
        init: str = "orthogonal",
        rho: float = 1.0,
        seed: int | None = None,
    ):
        super().__init__()
        g = torch_generator(seed)
        self.rnn = ElmanRNN(input_size, hidden_size, nonlinearity, init, rho, seed=child_seed(g))
        self.output_size = O = integer(output_size, "output_size O", low=1)
        self.W_hy = nn.Parameter(torch.randn(O, hidden_size, generator=g) / math.sqrt(hidden_size))
        self.b_y = nn.Parameter(torch.zeros(O))
        self.many_to_one = bool(many_to_one)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        h, h_T = self.rnn(x)  # (B, T, H), (B, H)
        if not self.many_to_one:
            return h @ self.W_hy.T + self.b_y  # (B, T, O)
        if lengths is not None:
            h_T = h[torch.arange(h.shape[0], device=h.device), lengths - 1]  # (B, H)
        return h_T @ self.W_hy.T + self.b_y  # (B, O)
