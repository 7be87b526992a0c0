r"""Elman recurrent networks in torch: the cell, a language model, and task models.

The Elman RNN (Elman 1990) with input :math:`x_t \in \mathbb R^D` and state
:math:`h_t \in \mathbb R^H` computes

.. math::
    h_t = \phi(W_{xh} x_t + W_{hh} h_{t-1} + b_h), \qquad y_t = W_{hy} h_t + b_y,

with :math:`\phi \in \{\tanh, \mathrm{relu}, \mathrm{id}\}` and :math:`h_0 = 0` unless given.
Gradients are computed by torch autograd through the unrolled loop (backpropagation
through time, BPTT); :func:`train_rnn_lm` clips their global norm.

Language model (:class:`RNNLM`): token ids go through an embedding :math:`E`, the RNN and
the output layer, :math:`P(w_{t+1} \mid w_{\le t}) = \mathrm{softmax}(y_t)`. It predicts
exactly the tokens of Chapter 1 and 2 (every word and ``</s>``, never ``<s>``), with the
same loss :func:`seqlearn.losses.masked_cross_entropy`, so perplexities compare directly
with :mod:`seqlearn.ngram` and :mod:`seqlearn.nlm`. Two ways to feed it:

* :class:`SentenceBatches` (default): whole sentences, the state reset at every ``<s>``,
  padded to the longest sentence of each batch; batches hold sentences of similar length
  (sorted by length, then cut into batches whose order is shuffled), so little is padding.
* :class:`StreamBatches` with truncated BPTT: the stream cut into :math:`B` parallel
  rows and read in chunks of :math:`k` steps; the state runs on from chunk to chunk (also
  across sentences) but is detached between chunks, so gradients flow back at most
  :math:`k` steps (:class:`TruncatedBPTTLoss`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..data.vocab import Vocab
from ..device import resolve_device
from ..losses import masked_cross_entropy
from ..training import History, fit

__all__ = [
    "NONLINEARITIES",
    "INITS",
    "recurrent_init",
    "ElmanRNN",
    "RNNLM",
    "SequenceRNN",
    "SentenceBatches",
    "StreamBatches",
    "TruncatedBPTTLoss",
    "rnn_lm_loss",
    "RNNLMHistory",
    "train_rnn_lm",
    "token_logprobs",
    "perplexity",
    "agreement_scorer",
    "fit_task",
]

NONLINEARITIES = {"tanh": torch.tanh, "relu": torch.relu, "linear": lambda a: a}
INITS = ("random", "orthogonal", "identity")


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _generator(seed):
    g = torch.Generator()
    g.manual_seed(int(seed) if seed is not None else int(torch.randint(2**62, ()).item()))
    return g


def recurrent_init(H: int, init: str = "orthogonal", rho: float = 1.0, seed: int | None = None) -> torch.Tensor:
    r"""An :math:`H \times H` recurrent matrix :math:`W_{hh}` with spectral radius :math:`\rho`.

    * ``"random"``: :math:`W = \rho \, G / \max_i |\lambda_i(G)|`, :math:`G_{ij} \sim N(0, 1/H)`;
    * ``"orthogonal"``: :math:`W = \rho Q`, :math:`Q` a random orthogonal matrix (all
      singular values :math:`\rho`);
    * ``"identity"``: :math:`W = \rho I` (Le et al. 2015, IRNN with relu).
    """
    H = _check_int(H, "hidden size H", 1)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if not isinstance(rho, (int, float)) or isinstance(rho, bool) or not math.isfinite(rho) or rho < 0:
        raise ValueError(f"the spectral radius rho must be a finite number >= 0, got {rho!r}")
    g = _generator(seed)
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
    nonlinearity : {"tanh", "relu", "linear"}
    init : {"random", "orthogonal", "identity"}
        Of :math:`W_{hh}` (see :func:`recurrent_init`); :math:`W_{xh}` has entries
        :math:`N(0, 1/D)` and :math:`b_h = 0`.
    rho : float
        Spectral radius of the initial :math:`W_{hh}`.
    seed : int, optional

    Attributes
    ----------
    W_xh : Parameter, shape ``(H, D)``
    W_hh : Parameter, shape ``(H, H)``
    b_h : Parameter, shape ``(H,)``
    """

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh", init: str = "orthogonal",
                 rho: float = 1.0, seed: int | None = None):
        super().__init__()
        self.D = _check_int(input_size, "input_size D", 1)
        self.H = _check_int(hidden_size, "hidden_size H", 1)
        if nonlinearity not in NONLINEARITIES:
            raise ValueError(f"nonlinearity must be one of {tuple(NONLINEARITIES)}, got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        self.phi = NONLINEARITIES[nonlinearity]
        g = _generator(seed)
        self.W_xh = nn.Parameter(torch.randn(self.H, self.D, generator=g) / math.sqrt(self.D))
        self.W_hh = nn.Parameter(recurrent_init(self.H, init, rho, seed=int(torch.randint(2**62, (), generator=g)))
                                 .float())
        self.b_h = nn.Parameter(torch.zeros(self.H))

    def extra_repr(self) -> str:
        return f"D={self.D}, H={self.H}, nonlinearity={self.nonlinearity}"

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> "ElmanRNN":
        r"""The same layer as a one-layer, unidirectional ``torch.nn.RNN(batch_first=True)``.

        :math:`W_{xh}` = ``weight_ih_l0``, :math:`W_{hh}` = ``weight_hh_l0``,
        :math:`b_h` = ``bias_ih_l0 + bias_hh_l0``.
        """
        if not isinstance(rnn, nn.RNN) or rnn.num_layers != 1 or rnn.bidirectional:
            raise TypeError("rnn must be a one-layer, unidirectional torch.nn.RNN")
        layer = cls(rnn.input_size, rnn.hidden_size, rnn.nonlinearity, seed=0).to(rnn.weight_hh_l0)
        with torch.no_grad():
            layer.W_xh.copy_(rnn.weight_ih_l0)
            layer.W_hh.copy_(rnn.weight_hh_l0)
            layer.b_h.copy_(rnn.bias_ih_l0 + rnn.bias_hh_l0 if rnn.bias else torch.zeros_like(layer.b_h))
        return layer

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Run the layer over ``x`` of shape ``(B, T, D)``.

        Returns ``(h, h_T)``: all states, shape ``(B, T, H)``, and the last, shape ``(B, H)``.
        ``h0`` of shape ``(B, H)`` defaults to zeros. The input terms
        :math:`W_{xh} x_t + b_h` of all steps are one matrix product; only
        :math:`W_{hh} h_{t-1}` is in the loop over :math:`t`.
        """
        if not isinstance(x, torch.Tensor) or x.ndim != 3 or x.shape[-1] != self.D:
            raise ValueError(f"x must be a tensor of shape (B, T, D={self.D}), got "
                             f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
        B, T, _ = x.shape
        h = x.new_zeros(B, self.H) if h0 is None else h0  # (B, H)
        if h.shape != (B, self.H):
            raise ValueError(f"h0 must have shape (B, H) = {(B, self.H)}, got {tuple(h.shape)}")
        a_x = x @ self.W_xh.T + self.b_h  # (B, T, H)
        states = []
        for t in range(T):
            h = self.phi(a_x[:, t] + h @ self.W_hh.T)  # (B, H)
            states.append(h)
        return torch.stack(states, dim=1), h


class RNNLM(nn.Module):
    r"""Embedding, Elman RNN and softmax output: :math:`y_t = W_{hy} h_t + b_y`, :math:`x_t = E[w_t]`.

    Parameters
    ----------
    vocab_size : int
        :math:`|V|`.
    m : int
        Embedding size (the RNN's :math:`D`).
    H : int
        Hidden size.
    nonlinearity, init, rho
        Of the :class:`ElmanRNN`.
    seed : int, optional

    Attributes
    ----------
    E : Parameter ``(|V|, m)``; rnn : ElmanRNN; W_hy : Parameter ``(|V|, H)``; b_y : Parameter ``(|V|,)``
    """

    def __init__(self, vocab_size: int, m: int = 32, H: int = 64, nonlinearity: str = "tanh",
                 init: str = "orthogonal", rho: float = 1.0, seed: int | None = None):
        super().__init__()
        self.vocab_size = _check_int(vocab_size, "vocab_size", 4)
        g = _generator(seed)
        self.E = nn.Parameter(torch.randn(self.vocab_size, _check_int(m, "m", 1), generator=g) * 0.1)
        self.rnn = ElmanRNN(m, H, nonlinearity, init, rho, seed=int(torch.randint(2**62, (), generator=g)))
        self.W_hy = nn.Parameter(torch.randn(self.vocab_size, H, generator=g) / math.sqrt(H))
        self.b_y = nn.Parameter(torch.zeros(self.vocab_size))

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
    state at each sequence's last real step.
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int, many_to_one: bool = True,
                 nonlinearity: str = "tanh", init: str = "orthogonal", rho: float = 1.0, seed: int | None = None):
        super().__init__()
        g = _generator(seed)
        self.rnn = ElmanRNN(input_size, hidden_size, nonlinearity, init, rho,
                            seed=int(torch.randint(2**62, (), generator=g)))
        O = _check_int(output_size, "output_size", 1)
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


# ----------------------------------------------------------------------------- batches


def _check_stream(stream, vocab_size: int | None) -> np.ndarray:
    from ..nlm.data import check_stream

    return check_stream(stream, vocab_size)


def _sentences(stream: np.ndarray) -> list[np.ndarray]:
    """Split a stream at its ``<s>``: each piece is ``<s> w_1 .. w_k </s>``."""
    starts = np.flatnonzero(stream == Vocab.bos_id)
    return [s for s in np.split(stream, starts[1:]) if len(s) > 1]


class SentenceBatches:
    r"""Re-iterable padded batches ``(inputs, targets, mask)`` of whole sentences.

    A sentence ``<s> w_1 .. w_k </s>`` gives inputs ``<s> w_1 .. w_k`` and targets
    ``w_1 .. w_k </s>`` (length :math:`k + 1`); a batch is padded on the right to its
    longest sentence (padding: id 0, mask 0). Shapes ``(B, L)``, int64, int64, bool.

    Sentences are sorted by length and cut into consecutive batches of ``batch_size``;
    with ``shuffle`` the batch order (and the order of equal-length sentences) is random
    on each pass, from a private generator seeded by ``seed``. Without it, the batches come
    in sorted order and :attr:`order` maps them back to stream order.

    Attributes
    ----------
    n_targets : int
        Predicted tokens (words and ``</s>``) of the stream.
    """

    def __init__(self, stream, batch_size: int = 32, shuffle: bool = False, seed: int = 0,
                 vocab_size: int | None = None, device=None):
        stream = _check_stream(stream, vocab_size)
        self.batch_size = _check_int(batch_size, "batch_size", 1)
        self.shuffle = bool(shuffle)
        self.device = resolve_device(device)
        self._rng = np.random.default_rng(seed)
        self.sentences = _sentences(stream)
        self.lengths = np.array([len(s) - 1 for s in self.sentences])  # (S,) targets per sentence
        self.n_targets = int(self.lengths.sum())

    def _batch(self, idx: np.ndarray):
        L = int(self.lengths[idx].max())
        ids = np.zeros((len(idx), L + 1), dtype=np.int64)
        for row, i in enumerate(idx):
            ids[row, : len(self.sentences[i])] = self.sentences[i]
        mask = np.arange(L)[None, :] < self.lengths[idx][:, None]  # (B, L)
        ids, mask = torch.as_tensor(ids, device=self.device), torch.as_tensor(mask, device=self.device)
        return ids[:, :-1], ids[:, 1:], mask

    def batch_indices(self) -> list[np.ndarray]:
        """Sentence indices of each batch, in the order they are yielded."""
        key = self._rng.random(len(self.lengths)) if self.shuffle else np.arange(len(self.lengths))
        order = np.lexsort((key, self.lengths))  # by length, ties random or in stream order
        batches = [order[i: i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if self.shuffle:
            batches = [batches[i] for i in self._rng.permutation(len(batches))]
        return batches

    def __len__(self) -> int:
        return math.ceil(len(self.lengths) / self.batch_size)

    def __iter__(self):
        for idx in self.batch_indices():
            yield self._batch(idx)


class StreamBatches:
    r"""Chunks ``(inputs, targets, mask, first)`` of a stream for truncated BPTT.

    The stream (length :math:`L`) is cut into :math:`B` rows of :math:`N = \lfloor (L-1)/B
    \rfloor` input steps each (the tail is dropped); chunk :math:`c` holds steps
    :math:`ck .. ck + k - 1` of every row, shape ``(B, k)`` (the last chunk may be
    shorter). Targets equal to ``<s>`` are masked out (the course never scores ``<s>``).
    ``first`` is ``True`` for the first chunk of a pass: the state starts from zero.
    """

    def __init__(self, stream, batch_size: int = 32, k: int = 35, vocab_size: int | None = None, device=None):
        stream = _check_stream(stream, vocab_size)
        self.batch_size = _check_int(batch_size, "batch_size", 1)
        self.k = _check_int(k, "k (truncation length)", 1)
        N = (len(stream) - 1) // self.batch_size
        if N < 1:
            raise ValueError(f"the stream of {len(stream)} tokens is too short for {batch_size} rows")
        self.device = resolve_device(device)
        self._x = torch.as_tensor(stream[: N * self.batch_size].reshape(self.batch_size, N), device=self.device)
        self._y = torch.as_tensor(stream[1: N * self.batch_size + 1].reshape(self.batch_size, N),
                                  device=self.device)
        self.n_targets = int((self._y != Vocab.bos_id).sum())

    def __len__(self) -> int:
        return math.ceil(self._x.shape[1] / self.k)

    def __iter__(self):
        for c, start in enumerate(range(0, self._x.shape[1], self.k)):
            y = self._y[:, start: start + self.k]
            yield self._x[:, start: start + self.k], y, y != Vocab.bos_id, c == 0


def rnn_lm_loss(model: RNNLM, batch) -> tuple[torch.Tensor, int]:
    """``(masked mean NLL, number of real targets)`` of a :class:`SentenceBatches` batch."""
    inputs, targets, mask = batch[:3]
    logits, _ = model(inputs)
    return masked_cross_entropy(logits, targets, mask), int(mask.sum())


class TruncatedBPTTLoss:
    r"""The loss of :class:`StreamBatches` chunks, carrying the state between calls.

    ``h`` starts at zero on a chunk flagged ``first``, else continues from the previous
    chunk's final state, detached: :math:`\partial h_{ck} / \partial \theta` is cut, so BPTT
    runs back at most :math:`k` steps. Pass an instance as ``loss_fn`` to :func:`fit`.
    """

    def __init__(self):
        self.h = None

    def __call__(self, model: RNNLM, batch) -> tuple[torch.Tensor, int]:
        inputs, targets, mask, first = batch
        h0 = None if first or self.h is None or self.h.shape[0] != inputs.shape[0] else self.h
        logits, h_T = model(inputs, h0)
        self.h = h_T.detach()
        return masked_cross_entropy(logits, targets, mask), int(mask.sum())


# ----------------------------------------------------------------------------- training


@dataclass
class RNNLMHistory(History):
    """:class:`seqlearn.training.History` with perplexities and the training speed."""

    seconds: float = 0.0
    tokens_per_second: float = 0.0

    @property
    def val_perplexity(self) -> list[float]:
        return [math.exp(loss) for loss in self.val_loss]

    @property
    def best_val_perplexity(self) -> float | None:
        return None if self.best_val_loss is None else math.exp(self.best_val_loss)


def train_rnn_lm(model: RNNLM, train_stream, val_stream=None, *, lr: float = 3e-3, epochs: int = 2,
                 batch_size: int = 32, clip_grad_norm: float | None = 1.0, bptt: int | None = None,
                 patience: int | None = None, device=None, seed: int = 0, progress: bool = True) -> RNNLMHistory:
    r"""Train an :class:`RNNLM` with Adam through :func:`seqlearn.training.fit`.

    Parameters
    ----------
    model : RNNLM
        Trained in place; with validation data the best epoch's weights are restored.
    train_stream, val_stream : array of int
        Encoded streams (:func:`seqlearn.data.vocab.encode_sentences`).
    lr : float
        Adam's learning rate.
    epochs, patience
        As :func:`seqlearn.training.fit`.
    batch_size : int
        Sentences per batch (or parallel rows with ``bptt``).
    clip_grad_norm : float or None
        Rescale the gradient to global norm at most this before each update.
    bptt : int or None
        ``None``: whole sentences (:class:`SentenceBatches`). An int :math:`k`: truncated
        BPTT over the stream (:class:`StreamBatches`, :class:`TruncatedBPTTLoss`); the
        validation loss is then computed the same way, with the state carried across
        sentences, so it is not Chapter 1's per-sentence perplexity: compare models with
        :func:`perplexity`, which resets the state at every ``<s>``.
    device, seed, progress
        Device (default :func:`seqlearn.device.default_device`), seed of the batch order,
        progress bar.

    Returns
    -------
    RNNLMHistory
    """
    if not isinstance(model, RNNLM):
        raise TypeError(f"model must be an RNNLM, got {type(model).__name__}")
    device = resolve_device(device)
    model.to(device)
    V = model.vocab_size
    if bptt is None:
        train = SentenceBatches(train_stream, batch_size, shuffle=True, seed=seed, vocab_size=V, device=device)
        val = None if val_stream is None else SentenceBatches(val_stream, 256, vocab_size=V, device=device)
        loss_fn = rnn_lm_loss
    else:
        train = StreamBatches(train_stream, batch_size, bptt, vocab_size=V, device=device)
        val = None if val_stream is None else StreamBatches(val_stream, batch_size, bptt, vocab_size=V,
                                                            device=device)
        loss_fn = TruncatedBPTTLoss()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    start = time.perf_counter()
    history = fit(model, loss_fn, opt, train, val, epochs=epochs, patience=patience,
                  clip_grad_norm=clip_grad_norm, device=device, progress=progress)
    seconds = time.perf_counter() - start
    return RNNLMHistory(**vars(history), seconds=seconds,
                        tokens_per_second=train.n_targets * len(history.train_loss) / seconds)


def _model_device(model, device):
    return next(model.parameters()).device if device is None else resolve_device(device)


def token_logprobs(model: RNNLM, stream, device=None, batch_size: int = 256) -> np.ndarray:
    r"""Natural-log :math:`\log P(w_t \mid \langle s\rangle w_1 .. w_{t-1})` of every predicted token.

    One entry per token of ``stream`` that is not ``<s>`` (words and ``</s>``), in stream
    order, each conditioned on its own sentence only (the state is reset at ``<s>``):
    aligned 1:1 with Chapter 1's ``LanguageModel.token_logprobs`` on the same stream.

    Returns
    -------
    numpy.ndarray, float64, shape ``(T,)``
    """
    if not isinstance(model, RNNLM):
        raise TypeError(f"model must be an RNNLM, got {type(model).__name__}")
    device = _model_device(model, device)
    model.to(device)
    batches = SentenceBatches(stream, batch_size, vocab_size=model.vocab_size, device=device)
    offsets = np.concatenate([[0], np.cumsum(batches.lengths)])  # (S+1,) first target of each sentence
    out = np.empty(batches.n_targets)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for idx in batches.batch_indices():
            inputs, targets, mask = batches._batch(idx)
            logp = torch.log_softmax(model(inputs)[0].double(), dim=-1)  # (B, L, |V|)
            picked = logp.gather(2, targets[..., None])[..., 0].cpu().numpy()  # (B, L)
            for row, i in enumerate(idx):
                out[offsets[i]: offsets[i + 1]] = picked[row, : batches.lengths[i]]
    model.train(was_training)
    return out


def perplexity(model: RNNLM, stream, device=None, batch_size: int = 256) -> float:
    r"""Perplexity :math:`\exp(-\frac1T \sum_t \log P(w_t \mid \text{sentence prefix}))` of ``stream``."""
    return math.exp(-float(np.mean(token_logprobs(model, stream, device, batch_size))))


def agreement_scorer(model: RNNLM, vocab: Vocab, device=None):
    r"""A ``score_fn(prefix, candidates)`` for :func:`seqlearn.data.synthetic.agreement_accuracy`.

    Returns :math:`\log P(c \mid \langle s \rangle\, \mathrm{prefix})` for each candidate
    next token :math:`c`, as a NumPy array; the RNN reads the whole prefix.
    """
    if not isinstance(model, RNNLM):
        raise TypeError(f"model must be an RNNLM, got {type(model).__name__}")
    if not isinstance(vocab, Vocab) or len(vocab) != model.vocab_size:
        raise ValueError(f"vocab must be the model's Vocab of {model.vocab_size} tokens")
    device = _model_device(model, device)

    def score(prefix, candidates) -> np.ndarray:
        ids = [Vocab.bos_id] + vocab.encode(list(prefix)).tolist()
        with torch.no_grad():
            logits, _ = model.to(device)(torch.tensor([ids], device=device))
            logp = torch.log_softmax(logits[0, -1].double(), dim=-1)  # (|V|,)
        return logp[torch.as_tensor(vocab.encode(list(candidates)), device=device)].cpu().numpy()

    return score


def fit_task(model: SequenceRNN, x, y, x_val=None, y_val=None, *, loss: str = "mse", lr: float = 1e-2,
             epochs: int = 10, batch_size: int = 64, clip_grad_norm: float | None = 1.0, device=None,
             seed: int = 0, progress: bool = False) -> History:
    r"""Train a :class:`SequenceRNN` on a synthetic task with Adam through :func:`fit`.

    ``loss="mse"``: :math:`\frac1B \sum_b (\hat y_b - y_b)^2` (adding problem, ``y`` of shape
    ``(B,)``); ``loss="ce"``: the mean cross-entropy over all outputs (copy task, ``y``
    integer ``(B, T)``; agreement, ``(B,)``). ``x, y`` are tensors or NumPy arrays.
    """
    if loss not in ("mse", "ce"):
        raise ValueError(f"loss must be 'mse' or 'ce', got {loss!r}")
    device = resolve_device(device)
    model.to(device)
    x, y = (torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a, device=device) for a in (x, y))
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must have the same number of sequences, got {x.shape[0]} and {y.shape[0]}")

    def loss_fn(model, batch):
        xb, yb = batch
        out = model(xb)
        if loss == "mse":
            return ((out.reshape(yb.shape) - yb) ** 2).mean(), yb.shape[0]
        return masked_cross_entropy(out, yb), yb.shape[0]

    def batches(xs, ys, shuffle):
        g = torch.Generator().manual_seed(seed)

        class _Batches:
            def __iter__(self):
                order = torch.randperm(xs.shape[0], generator=g) if shuffle else torch.arange(xs.shape[0])
                for i in range(0, xs.shape[0], batch_size):
                    idx = order[i: i + batch_size].to(xs.device)
                    yield xs[idx], ys[idx]

            def __len__(self):
                return math.ceil(xs.shape[0] / batch_size)

        return _Batches()

    val = None
    if x_val is not None:
        xv, yv = (torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a, device=device)
                  for a in (x_val, y_val))
        val = batches(xv, yv, False)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return fit(model, loss_fn, opt, batches(x, y, True), val, epochs=epochs, clip_grad_norm=clip_grad_norm,
               device=device, progress=progress)
