"""The interface every n-gram language model of Chapter 1 shares.

A model of order N predicts each token of a sentence ``<s> w_1 ... w_k </s>`` (the words
and ``</s>``, never ``<s>``) from at most N - 1 preceding tokens, never reaching left of
the sentence's ``<s>``: the context of ``w_1`` is just ``<s>``. Subclasses implement one
vectorised method, :meth:`LanguageModel._logp`, the log-probability of many (word,
context) queries at once; everything else (token and sentence log-probabilities,
perplexity, next-word distributions, sampling, ARPA export) is written once, here.
Backoff models (every model ARPA can hold) score whole streams faster through
:meth:`LanguageModel._stream_logp` (see :mod:`seqlearn.ngram.backoff`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..data.vocab import Vocab, encode_sentences
from ..validation import integer, token_ids
from .arpa import write_arpa
from .backoff import BackoffTables
from .counts import NGramIndex
from .npz import write_npz

__all__ = ["LanguageModel", "Estimator", "PerplexityReport", "as_stream", "check_order"]

BOS, EOS, UNK = Vocab.bos_id, Vocab.eos_id, Vocab.unk_id


def check_order(order) -> int:
    """``order`` (the n of an n-gram model) as an int >= 1."""
    return integer(order, "order n", low=1)


def as_stream(data, vocab: Vocab) -> np.ndarray:
    """The encoded stream ``<s> w_1 ... </s> <s> ...`` of ``data``; shape ``(T,)``, int64.

    ``data`` is either a list of sentences (lists of str tokens; unknown tokens become
    ``<unk>``) or an already encoded stream: a 1-D integer ``np.ndarray`` that starts with
    ``<s>`` (as made by :func:`seqlearn.data.vocab.encode_sentences`).
    """
    if not isinstance(data, np.ndarray):
        return encode_sentences(data, vocab)
    if data.ndim != 1 or (data.size and not np.issubdtype(data.dtype, np.integer)):
        raise TypeError(f"an encoded stream must be a 1-D integer array, got shape {data.shape} and dtype {data.dtype}")
    if data.size == 0:
        raise ValueError("the encoded stream is empty (no sentences)")
    token_ids(data, "the encoded stream", len(vocab))
    if data[0] != BOS:
        raise ValueError(f"an encoded stream must start with <s> (id {BOS}), got {int(data[0])}; see encode_sentences")
    return data.astype(np.int64, copy=False)


@dataclass(frozen=True)
class PerplexityReport:
    """Perplexity of a corpus, with and without its out-of-vocabulary positions.

    ``n_tokens`` counts the predicted tokens (words and ``</s>``, not ``<s>``); ``n_oov``
    those that are ``<unk>``. ``perplexity = exp(-logprob / n_tokens)``; the OOV-free figure
    leaves the OOV positions out of both the sum and the count (as KenLM's ``query`` does).
    """

    n_sentences: int
    n_tokens: int
    n_oov: int
    logprob: float
    perplexity: float
    perplexity_without_oov: float

    def __str__(self) -> str:
        return (
            f"Perplexity including OOVs:\t{self.perplexity:.6g}\n"
            f"Perplexity excluding OOVs:\t{self.perplexity_without_oov:.6g}\n"
            f"OOVs:\t{self.n_oov}\n"
            f"Tokens:\t{self.n_tokens}\n"
            f"Sentences:\t{self.n_sentences}"
        )


def _perplexity(logp: np.ndarray) -> float:
    """exp(-mean(logp)); NaN for no tokens, inf if any token has probability 0."""
    return math.exp(-logp.mean()) if logp.size else math.nan


class LanguageModel:
    """Base class: an n-gram model of order N over a :class:`~seqlearn.data.vocab.Vocab`.

    ``order`` (N) is a hyperparameter; learned by ``fit`` (or read by a loader), with a
    trailing underscore as in scikit-learn: ``vocab_`` and ``index_``
    (an :class:`~seqlearn.ngram.counts.NGramIndex` of the n-grams the model knows).
    """

    order: int
    vocab_: Vocab
    index_: NGramIndex

    # -- what a subclass implements -------------------------------------------------------

    def _logp(self, w: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """Natural-log probabilities of the queries; ``w`` (m,), ``ctx`` (N, m) -> (m,).

        ``ctx[k - 1]`` is the id of each query's (k-1)-word context in ``index`` (order k - 1),
        ``UNSEEN`` or ``NO_CONTEXT`` (see :meth:`NGramIndex.context_ids`).
        """
        raise NotImplementedError

    def _backoff_tables(self) -> BackoffTables:
        """The model as a backoff model (what ARPA writes); ``ValueError`` if it is not one."""
        raise NotImplementedError

    def _stream_logp(self, stream: np.ndarray) -> np.ndarray:
        """Natural-log probabilities of the predicted tokens (not ``<s>``) of an encoded stream; ``(T',)``."""
        ctx = self.index_.context_ids(stream, self.order)  # (N, len(stream))
        predicted = stream != BOS
        return self._logp(stream[predicted], ctx[:, predicted])

    # -- shared API -----------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "index_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit(sentences) first")

    @property
    def V(self) -> int:
        """|V|, the vocabulary size (specials included)."""
        return len(self.vocab_)

    def _word_ids(self, words) -> np.ndarray:
        """Ids of ``words``: str tokens (unknown -> ``<unk>``) or integer ids (checked)."""
        if isinstance(words, str):
            return np.array(self.vocab_[words])
        if isinstance(words, Sequence) and words and all(isinstance(t, str) for t in words):
            return self.vocab_.encode(words)
        return token_ids(words, "words (when not str tokens)", self.V)

    def _context_column(self, context) -> np.ndarray:
        """Context ids of one context at every order; shape ``(N, 1)``."""
        h = self._word_ids(list(context)).ravel()
        return self.index_.context_ids(np.append(h, EOS), self.order)[:, -1:]

    def prob(self, words, context=()):
        r"""P(w | h) of each word in ``words`` after the one context ``h``.

        ``words``: a token, an id, or an array/list of them; ``context``: a sequence of tokens
        or ids. Only its last N - 1 tokens matter, and none left of its last ``<s>`` (put
        ``<s>`` first to condition on a sentence start; ``()`` is the unigram distribution).
        Returns a float for a single word, else an array shaped like ``words``.
        """
        self._check_fitted()
        w = self._word_ids(words)
        ctx = np.broadcast_to(self._context_column(context), (self.order, w.size))
        p = np.exp(self._logp(w.ravel(), ctx)).reshape(w.shape)
        return float(p) if p.ndim == 0 else p

    def next_distribution(self, context=()) -> np.ndarray:
        """P(. | h) over the whole vocabulary; shape ``(|V|,)``, sums to 1, zero at ``<s>``."""
        self._check_fitted()
        return self.prob(np.arange(self.V), context)

    def token_logprobs(self, data) -> np.ndarray:
        r"""Natural-log :math:`\log P(w_t \mid h_t)` of every predicted token of ``data``.

        ``data``: sentences or an encoded stream (see :func:`as_stream`). One entry per token
        of the stream that is not ``<s>`` (words and ``</s>``), in order; shape ``(T,)``.
        Computed for all positions at once.
        """
        self._check_fitted()
        return self._stream_logp(as_stream(data, self.vocab_))

    def sentence_logprobs(self, data) -> np.ndarray:
        r"""Natural-log probability :math:`\sum_t \log P(w_t \mid h_t)` of each sentence; shape ``(S,)``."""
        self._check_fitted()
        stream = as_stream(data, self.vocab_)
        sentence = np.cumsum(stream == BOS)[stream != BOS] - 1  # (T,) sentence of each predicted token
        return np.bincount(sentence, weights=self.token_logprobs(stream), minlength=int((stream == BOS).sum()))

    def sentence_logprob(self, sentence) -> float:
        r"""Natural-log probability of one sentence (a list of str tokens; unknown ones are ``<unk>``).

        The same number as ``sentence_logprobs([sentence])[0]``; backoff models compute it
        in plain Python, without NumPy's fixed cost per call (for scoring sentences one by one).
        """
        return float(self.sentence_logprobs([sentence])[0])

    def logprob(self, data) -> float:
        """Natural-log probability of the whole corpus ``data`` (sum over its tokens)."""
        return float(self.token_logprobs(data).sum())

    def evaluate(self, data) -> PerplexityReport:
        """Perplexity of ``data`` with and without OOV positions, and its token counts."""
        self._check_fitted()
        stream = as_stream(data, self.vocab_)
        logp = self.token_logprobs(stream)  # (T,)
        oov = stream[stream != BOS] == UNK
        return PerplexityReport(
            n_sentences=int((stream == BOS).sum()),
            n_tokens=logp.size,
            n_oov=int(oov.sum()),
            logprob=float(logp.sum()),
            perplexity=_perplexity(logp),
            perplexity_without_oov=_perplexity(logp[~oov]),
        )

    def perplexity(self, data, include_oov: bool = True) -> float:
        r"""Perplexity :math:`\exp(-\frac{1}{T}\sum_t \log P(w_t \mid h_t))` of ``data``.

        Counts ``</s>`` and not ``<s>``; unknown words are ``<unk>``. With
        ``include_oov=False`` the ``<unk>`` positions are left out. A token of probability 0
        makes it ``inf``.
        """
        report = self.evaluate(data)
        return report.perplexity if include_oov else report.perplexity_without_oov

    def sample(self, n: int, rng=None, max_len: int = 100) -> list[list[str]]:
        """Generate ``n`` sentences by drawing each next word from :meth:`next_distribution`.

        A sentence ends at ``</s>`` or after ``max_len`` words. ``rng``: a seed or a
        ``np.random.Generator``.
        """
        self._check_fitted()
        rng = np.random.default_rng(rng)
        sentences = []
        for _ in range(n):
            h = [BOS]
            while len(h) <= max_len:
                w = rng.choice(self.V, p=self.next_distribution(h[len(h) - self.order + 1 :]))
                if w == EOS:
                    break
                h.append(int(w))
            sentences.append(self.vocab_.decode(h[1:]))
        return sentences

    def to_arpa(self, file) -> None:
        """Write the model in ARPA format to ``file`` (a path or a text file object).

        Querying the file with the standard backoff rule gives back this model's
        probabilities (see :mod:`seqlearn.ngram.arpa`).
        """
        self._check_fitted()
        write_arpa(file, self._backoff_tables())

    def to_npz(self, file) -> None:
        """Write the model in seqlearn's binary format (see :mod:`seqlearn.ngram.npz`), which loads
        many times faster than ARPA text; ``file``: a path or a binary file object."""
        self._check_fitted()
        write_npz(file, self._backoff_tables())


class Estimator(Protocol):
    """An unfitted n-gram model: :meth:`fit` estimates it from data and returns it."""

    def fit(self, data, vocab: Vocab | None = None) -> LanguageModel: ...
