r"""Evaluating language models: one path for every language model of the course.

Every language model of the course predicts the same tokens of an encoded stream
``<s> w_1 .. w_k </s> <s> ..``: each word and ``</s>``, never ``<s>``, each from its own
sentence only. A model takes part in everything below by having one method,

.. code-block:: python

    model.token_logprobs(stream)  # -> numpy float64 array (T,): log P(w_t | h_t), stream order

as the n-gram models (:class:`seqlearn.ngram.LanguageModel`), Bengio's NLM
(:class:`seqlearn.nlm.BengioNLM`) and the recurrent ones (:class:`seqlearn.rnn.RecurrentLM`)
do; :math:`h_t` is whatever of the sentence before :math:`w_t` the model sees. From it:

* :func:`token_logprobs` and :func:`perplexity`,
  :math:`\mathrm{PP} = \exp\big(-\frac1T \sum_t \log P(w_t \mid h_t)\big)`, on a chosen device;
* :func:`agreement_scorer` (:func:`next_token_logprobs`), the ``score_fn`` of
  :func:`seqlearn.data.agreement_accuracy`;
* :class:`LMHistory` (:func:`fit_lm`): the training history of :func:`seqlearn.training.fit`
  in perplexities, and the training speed;
* :func:`model_device` and :func:`evaluating`: where and how a torch model is evaluated;
* :func:`next_token_distribution`, :func:`generate` and :func:`k_step_logprobs`: free-running
  generation from a prefix, and how a model predicts a token after it has had to fill the
  last :math:`k - 1` tokens with its own guesses (teacher forcing is :math:`k = 1`).

Importing this module does not import torch.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .data.streams import check_stream
from .data.vocab import Vocab
from .device import resolve_device
from .training import History, fit
from .validation import integer

__all__ = [
    "SupportsTokenLogprobs",
    "model_device",
    "evaluating",
    "token_logprobs",
    "perplexity",
    "next_token_logprobs",
    "agreement_scorer",
    "LMHistory",
    "fit_lm",
    "next_token_distribution",
    "generate",
    "k_step_logprobs",
]


class SupportsTokenLogprobs(Protocol):
    """A language model: ``token_logprobs(stream)`` gives ``log P`` of every predicted token."""

    def token_logprobs(self, stream) -> np.ndarray: ...


# ----------------------------------------------------------------------------- where and how


def model_device(model):
    """The ``torch.device`` of a torch model's parameters (where it computes)."""
    return next(model.parameters()).device


@contextmanager
def evaluating(model) -> Iterator:
    """Run a torch model in evaluation mode without gradients; its training mode is restored after."""
    import torch

    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)


def _language_model(model, device=None) -> SupportsTokenLogprobs:
    """``model``, checked to be a language model, moved to ``device`` if one is given."""
    if not callable(getattr(model, "token_logprobs", None)):
        raise TypeError(
            f"model must be a language model with a token_logprobs(stream) method (an n-gram model, "
            f"BengioNLM, RNNLM), got {type(model).__name__}"
        )
    if device is not None:
        if not callable(getattr(model, "to", None)):
            raise TypeError(f"device= is for torch models; a {type(model).__name__} computes with NumPy")
        model.to(resolve_device(device))
    return model


# ----------------------------------------------------------------------------- perplexity


def token_logprobs(model: SupportsTokenLogprobs, stream, device=None, batch_size: int | None = None) -> np.ndarray:
    r"""Natural-log :math:`\log P(w_t \mid h_t)` of every predicted token of ``stream``.

    One entry per token that is not ``<s>`` (the words and ``</s>``), in stream order, each
    conditioned on its own sentence only: aligned 1:1 across the course's language models.

    Parameters
    ----------
    model : language model
        Anything with a method ``token_logprobs(stream)`` (see the module docstring).
    stream : array of int, shape ``(L,)``
        An encoded stream (:func:`seqlearn.data.vocab.encode_sentences`).
    device : optional
        Move a torch model there first (it stays there); default: where it is.
    batch_size : int, optional
        Passed on to a torch model's method (default: the model's own).

    Returns
    -------
    numpy.ndarray, float64, shape ``(T,)``
    """
    options = {} if batch_size is None else {"batch_size": batch_size}
    return _language_model(model, device).token_logprobs(stream, **options)


def perplexity(model: SupportsTokenLogprobs, stream, device=None, batch_size: int | None = None) -> float:
    r"""Perplexity :math:`\exp\big(-\frac1T \sum_{t=1}^T \log P(w_t \mid h_t)\big)` of ``stream``.

    The arguments are those of :func:`token_logprobs`.
    """
    return math.exp(-float(np.mean(token_logprobs(model, stream, device, batch_size))))


# ----------------------------------------------------------------------------- agreement


def next_token_logprobs(
    model: SupportsTokenLogprobs, vocab: Vocab, prefix: Sequence[str], candidates: Sequence[str]
) -> np.ndarray:
    r""":math:`\log P(c \mid \langle s \rangle\, \mathrm{prefix})` of each candidate next token :math:`c`.

    The model's own ``token_logprobs`` on the stream of the :math:`C` sentences
    ``<s> prefix c`` (one per candidate): the last entry of each. A window model sees the
    last :math:`n - 1` tokens of ``<s> prefix``, a recurrent one all of it.

    Parameters
    ----------
    model : language model
    vocab : Vocab
        Encodes the tokens (unknown ones become ``<unk>``).
    prefix : sequence of str, length :math:`P`
    candidates : sequence of str, length :math:`C`

    Returns
    -------
    numpy.ndarray, float64, shape ``(C,)``
    """
    prefix_ids, candidate_ids = vocab.encode(list(prefix)), vocab.encode(list(candidates))  # (P,), (C,)
    if Vocab.bos_id in prefix_ids or Vocab.bos_id in candidate_ids:
        raise ValueError("<s> opens a sentence and is never predicted: it cannot be in the prefix or a candidate")
    C, P = len(candidate_ids), len(prefix_ids)
    sentences = np.column_stack([np.full(C, Vocab.bos_id), np.tile(prefix_ids, (C, 1)), candidate_ids])  # (C, P+2)
    return model.token_logprobs(sentences.ravel()).reshape(C, P + 1)[:, -1]


def agreement_scorer(
    model: SupportsTokenLogprobs, vocab: Vocab, device=None
) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    r"""A ``score_fn(prefix, candidates)`` for :func:`seqlearn.data.agreement_accuracy`.

    ``score_fn`` is :func:`next_token_logprobs` of ``model`` and ``vocab``: it returns
    :math:`\log P(c \mid \langle s \rangle\, \mathrm{prefix})` of each candidate :math:`c`, as
    a NumPy array. ``device``: as in :func:`token_logprobs`.
    """
    model = _language_model(model, device)
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.Vocab, got {type(vocab).__name__}")
    size = getattr(model, "vocab_size", None)
    if size is not None and len(vocab) != size:
        raise ValueError(f"vocab must be the model's Vocab of {size} tokens, got one of {len(vocab)}")
    return functools.partial(next_token_logprobs, model, vocab)


# ----------------------------------------------------------------------------- training history


@dataclass
class LMHistory(History):
    r""":class:`seqlearn.training.History` of a language model, in perplexities, with its speed.

    The losses are mean negative log-likelihoods :math:`\bar L` in nats per predicted token,
    so the perplexity of an epoch is :math:`e^{\bar L}`.
    """

    tokens_per_epoch: int = 0  # predicted tokens of one pass over the training data
    evals_per_epoch: int = 1  # validation points (entries of the losses) per pass over the training data

    @property
    def epochs(self) -> list[float]:
        """Passes over the training data done at each entry of the losses (1/evals_per_epoch, 2/..., ...)."""
        return [(i + 1) / self.evals_per_epoch for i in range(len(self.train_loss))]

    @property
    def train_perplexity(self) -> list[float]:
        """Training perplexity of each epoch (of the running model, as it trained)."""
        return [math.exp(loss) for loss in self.train_loss]

    @property
    def val_perplexity(self) -> list[float]:
        r"""Validation perplexity :math:`e^{\bar L}` after each epoch."""
        return [math.exp(loss) for loss in self.val_loss]

    @property
    def best_val_perplexity(self) -> float | None:
        """The lowest validation perplexity (that of the restored weights)."""
        best = self.best_val_loss
        return None if best is None else math.exp(best)

    @property
    def tokens_per_second(self) -> float:
        """Predicted training tokens per second of the whole fit (validation in the time)."""
        tokens = self.tokens_per_epoch * len(self.train_loss) / self.evals_per_epoch
        return tokens / self.seconds if self.seconds > 0 else math.nan


def fit_lm(
    model, loss_fn: Callable, optimizer, train_batches, val_batches=None, evals_per_epoch: int = 1, **options
) -> LMHistory:
    """:func:`seqlearn.training.fit` for a language model; its history as an :class:`LMHistory`.

    ``train_batches.n_targets``, the tokens predicted in one pass over the training data,
    gives the speed; ``evals_per_epoch`` says how many of ``fit``'s epochs make one such pass
    (when ``train_batches`` yields a part of a pass per iteration, to validate more often);
    ``options`` are those of :func:`~seqlearn.training.fit`.
    """
    evals_per_epoch = integer(evals_per_epoch, "evals_per_epoch", low=1)
    history = fit(model, loss_fn, optimizer, train_batches, val_batches, **options)
    return LMHistory(**vars(history), tokens_per_epoch=train_batches.n_targets, evals_per_epoch=evals_per_epoch)


# ----------------------------------------------------------------------------- free running


def _vocab_size(model, vocab_size: int | None) -> int:
    if vocab_size is None:
        vocab_size = getattr(model, "vocab_size", None) or getattr(model, "V", None)
    if vocab_size is None:
        raise ValueError(f"give vocab_size: a {type(model).__name__} does not say how many token ids it has")
    return integer(vocab_size, "vocab_size", low=3)


def _prefixes(prefixes, V: int) -> list[np.ndarray]:
    """Each prefix as a 1-D int64 array of word ids (no ``<s>``, no ``</s>``), checked."""
    out = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prefixes]
    ids = np.concatenate(out) if out else np.empty(0, dtype=np.int64)  # every id, checked at once
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        raise ValueError(f"prefix ids must lie in [0, {V}), got {ids.min()}..{ids.max()}")
    if np.isin(ids, (Vocab.bos_id, Vocab.eos_id)).any():
        raise ValueError("a prefix holds the words of one unfinished sentence: no <s> and no </s> in it")
    return out


def _generic_distribution(model, block: np.ndarray, V: int) -> np.ndarray:
    """:func:`next_token_distribution` of ``(G, P)`` equal-length prefixes through ``model.token_logprobs``."""
    candidates = np.array([c for c in range(V) if c != Vocab.bos_id])  # (K,) = (V-1,)
    (G, P), K = block.shape, len(candidates)
    sentences = np.concatenate(
        [
            np.full((G, K, 1), Vocab.bos_id),
            np.broadcast_to(block[:, None, :], (G, K, P)),
            np.broadcast_to(candidates[None, :, None], (G, K, 1)),
        ],
        axis=2,
    )  # (G, K, P + 2): <s> prefix c
    logp = np.asarray(model.token_logprobs(sentences.ravel()), dtype=float)
    out = np.full((G, V), -np.inf)
    out[:, candidates] = logp.reshape(G, K, P + 1)[:, :, -1]
    return out


def _block_distribution(model, block: np.ndarray, V: int, window: int | None) -> np.ndarray:
    """Next-token log-probabilities ``(G, |V|)`` after ``(G, P)`` equal-length prefixes."""
    if window is not None:
        block = block[:, block.shape[1] - min(window, block.shape[1]) :]  # (G, min(P, window))
    fast = getattr(model, "next_token_distribution", None)
    logp = np.asarray(fast(block), dtype=float) if callable(fast) else _generic_distribution(model, block, V)
    if logp.shape != (len(block), V):
        raise ValueError(
            f"the model gave next-token log-probabilities of shape {logp.shape}, expected {(len(block), V)}"
        )
    return logp


def _length_groups(prefixes: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(rows, block)`` for each prefix length: the indices of those prefixes and their ``(G, P)`` stack."""
    lengths = np.array([len(p) for p in prefixes], dtype=np.int64)
    groups = []
    for P in np.unique(lengths):
        rows = np.flatnonzero(lengths == P)  # (G,)
        block = np.stack([prefixes[r] for r in rows]) if P else np.empty((len(rows), 0), dtype=np.int64)
        groups.append((rows, block))
    return groups


def next_token_distribution(model, prefixes, vocab_size: int | None = None, window: int | None = None) -> np.ndarray:
    r""":math:`\log P(c \mid \langle s \rangle\, \mathrm{prefix})` of every token id :math:`c`, for each prefix.

    A model with a method ``next_token_distribution(block)`` (e.g. :class:`seqlearn.nlm.BengioNLM`,
    one forward pass), which takes a ``(G, P)`` array of equal-length prefixes, is asked
    directly, one prefix length at a time; any other language model is asked through its
    ``token_logprobs``, scoring the :math:`|V| - 1` sentences ``<s> prefix c`` (``<s>`` is never
    predicted: its column is :math:`-\infty`).

    Parameters
    ----------
    model : language model
    prefixes : sequence of 1-D int arrays
        The words so far of :math:`S` unfinished sentences (ids; no ``<s>``, no ``</s>``); lengths may differ.
    vocab_size : int, optional
        :math:`|V|`; default the model's ``vocab_size`` (or ``V``).
    window : int, optional
        The model sees at most this many previous tokens (a window model of order :math:`n`:
        :math:`n - 1`); longer prefixes are cut to it first. Only a speed-up.

    Returns
    -------
    numpy.ndarray, float64, shape ``(S, |V|)``
    """
    _language_model(model)
    V = _vocab_size(model, vocab_size)
    prefixes = _prefixes(prefixes, V)
    if window is not None:
        window = integer(window, "window", low=0)
    out = np.empty((len(prefixes), V))
    for rows, block in _length_groups(prefixes):
        out[rows] = _block_distribution(model, block, V, window)
    return out


def _draw(logp: np.ndarray, rng: np.random.Generator, greedy: bool) -> np.ndarray:
    """One token per row of ``logp`` (S, |V|): the most probable, or one drawn by inverse CDF."""
    if greedy:
        return logp.argmax(axis=1)
    p = np.exp(logp - logp.max(axis=1, keepdims=True))  # (S, |V|)
    cdf = np.cumsum(p, axis=1)
    u = rng.random(len(p))[:, None] * cdf[:, -1:]
    return np.minimum((cdf <= u).sum(axis=1), p.shape[1] - 1)


def generate(
    model,
    prefixes,
    max_tokens: int,
    rng=None,
    *,
    vocab_size: int | None = None,
    window: int | None = None,
    stop_at_end: bool = True,
    greedy: bool = False,
) -> list[np.ndarray]:
    r"""Free-running generation: continue each prefix with the model's own tokens.

    Step :math:`s` draws :math:`\hat w_s \sim P(\cdot \mid \langle s \rangle\, \mathrm{prefix}\,
    \hat w_1 \dots \hat w_{s-1})` (or takes its most probable token with ``greedy``): the model
    conditions on what it generated, never on the truth. This is how a language model is used,
    and not how it was trained (teacher forcing conditions on the true previous tokens).

    Parameters
    ----------
    model, prefixes, vocab_size, window
        As in :func:`next_token_distribution`.
    max_tokens : int
        The most tokens generated per prefix.
    rng : seed or numpy.random.Generator, optional
    stop_at_end : bool
        A continuation ends with the first ``</s>`` it draws (included). With ``False``,
        ``</s>`` (and ``<s>``) are never drawn: the distribution is renormalised over the other
        tokens, and every continuation has ``max_tokens`` words.
    greedy : bool
        Take the most probable token instead of drawing one.

    Returns
    -------
    list of numpy.ndarray (int64)
        The generated ids of each prefix (without the prefix).
    """
    _language_model(model)
    V = _vocab_size(model, vocab_size)
    prefixes = _prefixes(prefixes, V)
    max_tokens = integer(max_tokens, "max_tokens", low=0)
    if window is not None:
        window = integer(window, "window", low=0)
    rng = np.random.default_rng(rng)
    generated = np.full((len(prefixes), max_tokens), -1, dtype=np.int64)  # -1: not generated
    groups = _length_groups(prefixes)  # (rows, block) of the unfinished prefixes of each length
    for step in range(max_tokens):
        groups = [(rows, block) for rows, block in groups if len(rows)]
        if not groups:
            break
        for g, (rows, block) in enumerate(groups):
            logp = _block_distribution(model, block, V, window)  # (G, |V|)
            logp[:, Vocab.bos_id] = -np.inf
            if not stop_at_end:
                logp[:, Vocab.eos_id] = -np.inf
            w = _draw(logp, rng, bool(greedy))  # (G,)
            generated[rows, step] = w
            going = w != Vocab.eos_id
            groups[g] = (rows[going], np.column_stack([block[going], w[going]]))
    return [row[row >= 0] for row in generated]


def k_step_logprobs(
    model,
    stream,
    k: int,
    rng=None,
    *,
    vocab_size: int | None = None,
    window: int | None = None,
    n_samples: int = 1,
    marginal: bool = False,
) -> np.ndarray:
    r""":math:`\log P(w_t \mid w_{<t-k+1}, \hat w_{t-k+1} \dots \hat w_{t-1})`: predicting :math:`k` steps ahead.

    For every predicted token :math:`w_t` of the stream (the words and ``</s>``, numbered
    :math:`t = 1, 2, \dots` within their sentence), the model sees the true words
    :math:`w_1 \dots w_{t-k}`, fills the next :math:`k - 1` positions with its own draws
    :math:`\hat w` (free running, :func:`generate` with ``stop_at_end=False``: the true sentence
    has not ended), and scores the true :math:`w_t` after them. :math:`k = 1` is teacher
    forcing: every entry is then that of :func:`token_logprobs`.

    With ``n_samples`` :math:`S` independent fillings :math:`\hat w^{(s)}` per token, an entry is
    their mean :math:`\frac1S \sum_s \log P(w_t \mid \dots \hat w^{(s)})` (the log-likelihood
    of the truth after one committed free-running path), or with ``marginal=True``
    :math:`\log \frac1S \sum_s P(w_t \mid \dots \hat w^{(s)})`, a Monte Carlo estimate of the
    model's :math:`k`-step-ahead prediction :math:`\log P(w_t \mid w_1 \dots w_{t-k})`, which
    averages over its guesses instead of committing to one (biased low for small :math:`S`,
    by Jensen's inequality).

    Parameters
    ----------
    model, vocab_size, window
        As in :func:`next_token_distribution`.
    stream : array of int, shape ``(L,)``
        An encoded stream (:func:`seqlearn.data.vocab.encode_sentences`).
    k : int
        :math:`k \ge 1`.
    rng : seed or numpy.random.Generator, optional
    n_samples : int
        Fillings per token (:math:`S`).
    marginal : bool
        Average the probabilities over the fillings instead of the log-probabilities.

    Returns
    -------
    numpy.ndarray, float64, shape ``(T,)``
        Aligned with :func:`token_logprobs`; ``nan`` where :math:`t < k` (fewer than :math:`k - 1`
        positions before the token to fill).
    """
    V = _vocab_size(model, vocab_size)
    stream = check_stream(stream, V)
    k = integer(k, "k", low=1)
    S = integer(n_samples, "n_samples", low=1)
    rng = np.random.default_rng(rng)
    positions = np.flatnonzero(stream != Vocab.bos_id)  # (T,) stream positions of the targets
    starts = np.maximum.accumulate(np.where(stream == Vocab.bos_id, np.arange(len(stream)), 0))
    t = positions - starts[positions]  # (T,) 1-based position of each target in its sentence
    out = np.full(len(positions), np.nan)
    chosen = np.flatnonzero(t >= k)
    if not len(chosen):
        return out
    prefixes = [stream[starts[p] + 1 : p - k + 1] for p in positions[chosen]] * S  # true w_1 .. w_{t-k}, S times
    if k > 1:
        filled = generate(model, prefixes, k - 1, rng, vocab_size=V, window=window, stop_at_end=False)
        prefixes = [np.concatenate([p, g]) for p, g in zip(prefixes, filled)]
    targets = np.tile(stream[positions[chosen]], S)  # (S * C,)
    logp = next_token_distribution(model, prefixes, V, window)[np.arange(len(targets)), targets]
    logp = logp.reshape(S, len(chosen))  # (S, C)
    out[chosen] = np.logaddexp.reduce(logp, axis=0) - np.log(S) if marginal else logp.mean(axis=0)
    return out
