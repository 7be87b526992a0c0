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
* :func:`model_device` and :func:`evaluating`: where and how a torch model is evaluated.

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

from .data.vocab import Vocab
from .device import resolve_device
from .training import History, fit

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
        return self.tokens_per_epoch * len(self.train_loss) / self.seconds if self.seconds > 0 else math.nan


def fit_lm(model, loss_fn: Callable, optimizer, train_batches, val_batches=None, **options) -> LMHistory:
    """:func:`seqlearn.training.fit` for a language model; its history as an :class:`LMHistory`.

    ``train_batches.n_targets``, the tokens predicted in one epoch, gives the speed;
    ``options`` are those of :func:`~seqlearn.training.fit`.
    """
    history = fit(model, loss_fn, optimizer, train_batches, val_batches, **options)
    return LMHistory(**vars(history), tokens_per_epoch=train_batches.n_targets)
