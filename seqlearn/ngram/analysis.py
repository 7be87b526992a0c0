"""Measurements Chapter 1 makes on corpora and models: sparsity, held-out counts, learning curves.

Each function takes sentences (lists of str) or encoded streams (see
:func:`seqlearn.ngram.base.as_stream`) together with the :class:`~seqlearn.data.vocab.Vocab`
they are encoded with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..data.vocab import Vocab, sentence_starts
from .base import Estimator, LanguageModel, as_stream, check_order
from .counts import NO_CONTEXT, UNSEEN, NGramCounts

if TYPE_CHECKING:
    from ..data.markov import MarkovSource

__all__ = [
    "SparsityRow",
    "sparsity",
    "unseen_mask",
    "held_out_counts",
    "learning_curve",
    "truncate_stream",
    "split_stream",
    "word_count",
    "agreement_scorer",
    "SourceCrossEntropy",
    "source_cross_entropy",
]


@dataclass(frozen=True)
class SparsityRow:
    """How much of the space of n-grams a training corpus covers, for one order n.

    ``possible`` is :math:`(|V| - 1)^n`, the n-grams of the predictable types (all but
    ``<s>``); ``seen`` the distinct n-grams of the training corpus; ``unseen_test_fraction``
    the fraction of the test corpus's n-gram tokens that never occur in training (each of
    them gets probability zero under maximum likelihood).
    """

    order: int
    possible: int
    seen: int
    unseen_test_fraction: float

    @property
    def seen_fraction(self) -> float:
        """``seen / possible``."""
        return self.seen / self.possible


def sparsity(train, test, vocab: Vocab, max_order: int) -> list[SparsityRow]:
    """One :class:`SparsityRow` for each order n = 1..``max_order``."""
    max_order = check_order(max_order)
    counts = NGramCounts.from_stream(as_stream(train, vocab), len(vocab), max_order)
    test_windows = counts.window_ids(as_stream(test, vocab), max_order)
    rows = []
    for n in range(1, max_order + 1):
        ids = test_windows[n - 1]
        ids = ids[ids != NO_CONTEXT] if n > 1 else ids[ids != Vocab.bos_id]  # the test's n-gram tokens
        unseen = (ids == UNSEEN) if n > 1 else (counts.c[0][ids] == 0)
        seen = int(np.count_nonzero(counts.c[n - 1]))
        rows.append(SparsityRow(n, (len(vocab) - 1) ** n, seen, float(unseen.mean()) if ids.size else 0.0))
    return rows


def unseen_mask(train, test, vocab: Vocab, order: int) -> np.ndarray:
    r"""Which predicted tokens of ``test`` end an n-gram never seen in ``train``.

    For each token :math:`w_t` of the test stream that is not ``<s>`` (aligned with
    :meth:`~seqlearn.ngram.base.LanguageModel.token_logprobs`), the n-gram is its longest
    window :math:`w_{t-k+1} \dots w_t`, :math:`k \le n`, that does not reach left of the
    sentence's ``<s>``. Returns a bool array of shape ``(T,)``.
    """
    order = check_order(order)
    counts = NGramCounts.from_stream(as_stream(train, vocab), len(vocab), order)
    stream = as_stream(test, vocab)
    ctx = counts.context_ids(stream, order)  # (N, T) context ids per order
    k = (ctx != NO_CONTEXT).sum(axis=0)  # (T,) longest order available at each position
    seen = np.zeros(len(stream), dtype=bool)
    for j in range(1, order + 1):
        at = np.flatnonzero(k == j)
        if j == 1:
            seen[at] = counts.c[0][stream[at]] > 0
        else:
            seen[at] = counts.lookup(j, ctx[j - 1, at], stream[at]) != UNSEEN
    return ~seen[stream != Vocab.bos_id]


def held_out_counts(train, held_out, vocab: Vocab, order: int, r_max: int = 8) -> np.ndarray:
    r"""Church & Gale's experiment: the mean held-out count of the n-grams seen r times in training.

    .. math:: \bar c^{\,\mathrm{ho}}(r) = \frac{1}{n_r} \sum_{u:\ c(u) = r} c^{\mathrm{ho}}(u),
        \qquad r = 1, \dots, r_{\max}

    With a held-out corpus as large as the training corpus, :math:`r - \bar c^{\,\mathrm{ho}}(r)`
    is how much each count "should" be discounted; for text it is roughly constant (about
    0.75 for r >= 2), which is what motivates absolute discounting. Returns shape
    ``(r_max,)`` (NaN where no n-gram has count r).
    """
    order = check_order(order)
    counts = NGramCounts.from_stream(as_stream(train, vocab), len(vocab), order)
    ids = counts.window_ids(as_stream(held_out, vocab), order)[order - 1]
    if order == 1:
        ids = ids[ids != Vocab.bos_id]
    c_ho = np.bincount(ids[ids >= 0], minlength=counts.size(order))  # (n_order,) held-out counts
    c = counts.c[order - 1]
    r = np.arange(1, r_max + 1)
    total = np.bincount(np.minimum(c, r_max + 1), weights=c_ho, minlength=r_max + 2)[r]
    n_r = np.bincount(np.minimum(c, r_max + 1), minlength=r_max + 2)[r]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_r > 0, total / np.maximum(n_r, 1), np.nan)


def word_count(stream: np.ndarray) -> int:
    """Number of words of an encoded stream: its tokens other than ``<s>`` and ``</s>``.

    This is the unit of :func:`truncate_stream`, :func:`split_stream` and
    :func:`learning_curve`, and of ``MarkovSource.sample(n_tokens=...)``.
    """
    stream = np.asarray(stream)
    return int(np.count_nonzero((stream != Vocab.bos_id) & (stream != Vocab.eos_id)))


def _part_ends(stream: np.ndarray, n_words: int) -> list[int]:
    """End positions (exclusive) of consecutive runs of whole sentences, each holding >= ``n_words`` words."""
    if n_words < 1:
        raise ValueError(f"n_words must be >= 1, got {n_words}")
    stream = np.asarray(stream)
    is_word = (stream != Vocab.bos_id) & (stream != Vocab.eos_id)
    words_before = np.concatenate([[0], np.cumsum(is_word)])  # (T + 1,) words in stream[:j]
    ends, done = [], 0
    for end in [*sentence_starts(stream)[1:].tolist(), len(stream)]:  # where each sentence ends
        if words_before[end] - done >= n_words:
            ends.append(end)
            done = int(words_before[end])
    return ends


def truncate_stream(stream: np.ndarray, n_words: int) -> np.ndarray:
    """The first whole sentences of an encoded stream holding at least ``n_words`` words (or all of it).

    Words are the tokens other than ``<s>`` and ``</s>`` (see :func:`word_count`).
    """
    ends = _part_ends(stream, n_words)
    return stream[: ends[0]] if ends else stream


def split_stream(stream: np.ndarray, n_words: int, max_parts: int | None = None) -> list[np.ndarray]:
    """Consecutive, disjoint parts of whole sentences, each holding at least ``n_words`` words.

    The first part is :func:`truncate_stream` ``(stream, n_words)``; each next one starts where
    the previous one ended; a remainder with fewer than ``n_words`` words is dropped. A stream
    with fewer than ``n_words`` words is one part. At most ``max_parts`` parts (default all).
    """
    ends = _part_ends(stream, n_words)[:max_parts] or [len(stream)]
    return [stream[a:b] for a, b in zip([0, *ends[:-1]], ends)]


def learning_curve(
    models: Mapping[str, Callable[[], Estimator]],
    train,
    test,
    vocab: Vocab,
    sizes: Sequence[int],
    max_samples: int = 1,
) -> dict[str, np.ndarray]:
    """Test perplexity of each model trained on ``sizes[i]`` words of ``train``, on several samples.

    Sample j of size i is part j of :func:`split_stream` ``(train, sizes[i])``: disjoint runs
    of whole sentences holding at least ``sizes[i]`` words (not counting ``<s>`` and ``</s>``).
    ``models`` maps a name to a function returning a fresh, unfitted model. Returns, for each
    name, an array of shape ``(len(sizes), max_samples)``, NaN where ``train`` holds fewer
    than ``max_samples`` disjoint parts of that size.
    """
    train, test = as_stream(train, vocab), as_stream(test, vocab)
    curves = {name: np.full((len(sizes), max_samples), np.nan) for name in models}
    for i, size in enumerate(sizes):
        for j, part in enumerate(split_stream(train, size, max_samples)):
            for name, make in models.items():
                curves[name][i, j] = make().fit(part, vocab).perplexity(test)
    return curves


def agreement_scorer(model: LanguageModel) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    """A ``score_fn(prefix, candidates)`` for :func:`seqlearn.data.synthetic.agreement_accuracy`.

    It returns :math:`\\log P(c \\mid \\langle s \\rangle\\, \\mathrm{prefix})` for each candidate
    next token c; the model sees only the last N - 1 tokens of the prefix.
    """

    def score(prefix, candidates):
        return np.log(model.prob(list(candidates), [Vocab.bos_id, *model.vocab_.encode(list(prefix))]))

    return score


@dataclass(frozen=True)
class SourceCrossEntropy:
    r"""A model's exact expected cross-entropy on text from a :class:`~seqlearn.data.markov.MarkovSource`.

    One entry per source context :math:`c` with :math:`\pi(c) > 0` (shapes ``(C,)``):
    ``pi`` its stationary probability, ``entropy`` :math:`H(P(\cdot \mid c))` and
    ``cross_entropy`` :math:`-\sum_o P(o \mid c) \log q(o \mid c)` in nats. Their difference
    ``kl`` is :math:`D_{\mathrm{KL}}(P(\cdot \mid c)\,\|\,q(\cdot \mid c)) \ge 0` (Gibbs' inequality).
    """

    pi: np.ndarray
    entropy: np.ndarray
    cross_entropy: np.ndarray

    @property
    def kl(self) -> np.ndarray:
        """Per-context KL divergence, ``cross_entropy - entropy``; shape ``(C,)``."""
        return self.cross_entropy - self.entropy

    @property
    def entropy_rate(self) -> float:
        r""":math:`H = \sum_c \pi(c) H(c)`, the source's entropy rate."""
        return float(self.pi @ self.entropy)

    @property
    def rate(self) -> float:
        r"""The model's expected cross-entropy per token, :math:`\sum_c \pi(c)\, H(P, q \mid c) \ge H`."""
        return float(self.pi @ self.cross_entropy)


def source_cross_entropy(model: LanguageModel, source: MarkovSource, block: int = 2048) -> SourceCrossEntropy:
    r"""Exact per-context cross-entropy of ``model`` on text drawn from ``source``.

    Needs a model that conditions on no more than the source does (``model.order - 1 <=
    source.order``): then the model's context is a function of the source's, the last
    ``model.order - 1`` tokens of it (none left of ``<s>``), and the expectation over the
    source's next token is a finite sum. ``block`` contexts are evaluated at once.
    """
    if model.order - 1 > source.order:
        raise ValueError(
            f"a model of order {model.order} looks further back than the order-{source.order} source; "
            f"the exact cross-entropy needs model.order <= {source.order + 1}"
        )
    pi_all = source.stationary_distribution()
    contexts = np.flatnonzero(pi_all > 0)  # (C,)
    A, k, V = source.n_outcomes, source.order, source.vocab_size
    symbols = (contexts[:, None] // A ** np.arange(k - 1, -1, -1)) % A  # (C, k) oldest first, V = <s>
    vocab = model.vocab_
    to_id = np.array([vocab[w] for w in source.words] + [Vocab.eos_id, Vocab.bos_id])  # outcome/symbol -> id
    P = source.P[contexts]  # (C, A)
    cross = np.empty(len(contexts))
    for a in range(0, len(contexts), block):
        segments = []
        for row in symbols[a : a + block]:
            after_bos = row[np.flatnonzero(row == V).max() + 1 :] if (row == V).any() else row
            segments.append([Vocab.bos_id, *to_id[after_bos].tolist(), Vocab.eos_id])
        stream = np.fromiter((t for seg in segments for t in seg), np.int64)
        at = np.cumsum([len(seg) for seg in segments]) - 1  # (b,) the placeholder after each context
        ctx = model.index_.context_ids(stream, model.order)[:, at]  # (N, b)
        b = len(at)
        logq = model._logp(np.tile(to_id[:A], b), np.repeat(ctx, A, axis=1)).reshape(b, A)  # (b, A)
        Pb = P[a : a + block]
        cross[a : a + b] = -np.where(Pb > 0, Pb * logq, 0.0).sum(axis=1)
    return SourceCrossEntropy(pi_all[contexts] / pi_all[contexts].sum(), source.context_entropies()[contexts], cross)
