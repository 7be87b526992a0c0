"""Measurements Chapter 1 makes on corpora and models: sparsity, held-out counts, learning curves.

Each function takes sentences (lists of str) or encoded streams (see
:func:`seqlearn.ngram.base.as_stream`) together with the :class:`~seqlearn.data.vocab.Vocab`
they are encoded with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.vocab import Vocab, sentence_starts
from .base import Estimator, LanguageModel, as_stream, check_order
from .counts import NO_CONTEXT, UNSEEN, NGramCounts

__all__ = [
    "SparsityRow",
    "sparsity",
    "unseen_mask",
    "held_out_counts",
    "learning_curve",
    "truncate_stream",
    "agreement_scorer",
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


def truncate_stream(stream: np.ndarray, n_tokens: int) -> np.ndarray:
    """The first whole sentences of an encoded stream holding at least ``n_tokens`` tokens (or all of it)."""
    if n_tokens < 1:
        raise ValueError(f"n_tokens must be >= 1, got {n_tokens}")
    starts = sentence_starts(stream)
    later = starts[starts >= n_tokens]
    return stream[: later[0]] if later.size else stream


def learning_curve(
    models: Mapping[str, Callable[[], Estimator]], train, test, vocab: Vocab, sizes: Sequence[int]
) -> dict[str, np.ndarray]:
    """Test perplexity of each model trained on the first ``sizes[i]`` tokens of ``train``.

    ``models`` maps a name to a function returning a fresh, unfitted model. Returns, for each
    name, an array of perplexities of shape ``(len(sizes),)``.
    """
    train, test = as_stream(train, vocab), as_stream(test, vocab)
    curves = {name: np.empty(len(sizes)) for name in models}
    for i, size in enumerate(sizes):
        part = truncate_stream(train, size)
        for name, make in models.items():
            curves[name][i] = make().fit(part, vocab).perplexity(test)
    return curves


def agreement_scorer(model: LanguageModel) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    """A ``score_fn(prefix, candidates)`` for :func:`seqlearn.data.synthetic.agreement_accuracy`.

    It returns :math:`\\log P(c \\mid \\langle s \\rangle\\, \\mathrm{prefix})` for each candidate
    next token c; the model sees only the last N - 1 tokens of the prefix.
    """

    def score(prefix, candidates):
        return np.log(model.prob(list(candidates), [Vocab.bos_id, *model.vocab_.encode(list(prefix))]))

    return score
