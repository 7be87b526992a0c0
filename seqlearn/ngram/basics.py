"""The textbook formulas of Chapter 1 in plain Python: the references its exercises are graded against.

These are deliberately small and readable (dicts of tuples of tokens, one sentence at a
time). The vectorised models in :mod:`seqlearn.ngram.models` compute the same quantities
for whole corpora. Sentences are padded as ``<s> w_1 ... w_k </s>`` (one ``<s>``, as in
the rest of seqlearn): an n-gram never reaches left of ``<s>``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ..data.vocab import BOS, EOS
from ..guard import reference
from ..validation import integer

__all__ = [
    "count_ngrams",
    "add_k_prob",
    "perplexity",
    "continuation_counts",
    "kn_bigram_prob",
    "mkn_discounts",
]


@reference
def count_ngrams(sentences: Iterable[Sequence[str]], n: int) -> Counter:
    """Counts c(w_1 ... w_n) of the n-grams of the padded sentences ``<s> w_1 ... w_k </s>``.

    The n-grams of a padded sentence of length L are its L - n + 1 windows; ``(<s>,)`` is
    never counted as a unigram, since ``<s>`` is a context, not a predicted token.

    Returns
    -------
    Counter mapping tuples of n tokens to their counts.
    """
    integer(n, "the order n", low=1)
    counts: Counter = Counter()
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError("each sentence must be a list of tokens, not a str")
        padded = [BOS, *sentence, EOS]
        for i in range(len(padded) - n + 1):
            gram = tuple(padded[i : i + n])
            if gram != (BOS,):
                counts[gram] += 1
    return counts


def _context_total(counts: Mapping[tuple, int], context: tuple) -> int:
    return sum(c for gram, c in counts.items() if gram[:-1] == context)


@reference
def add_k_prob(context: Sequence[str], word: str, counts: Mapping[tuple, int], k: float, vocab_size: int) -> float:
    r"""Add-k estimate :math:`P(w \mid h) = \frac{c(h w) + k}{c(h \bullet) + k |V|}`.

    ``counts`` are n-gram counts (all keys of length n = len(context) + 1),
    :math:`c(h \bullet) = \sum_w c(h w)`, and ``vocab_size`` is |V|, the number of tokens
    that can be predicted (words, ``<unk>`` and ``</s>``; not ``<s>``).
    """
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k}")
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be >= 1, got {vocab_size}")
    context = tuple(context)
    return (counts.get((*context, word), 0) + k) / (_context_total(counts, context) + k * vocab_size)


@reference
def perplexity(log_probs: Sequence[float]) -> float:
    r"""Perplexity :math:`\exp\left(-\frac{1}{T}\sum_{t=1}^{T} \log P(w_t \mid h_t)\right)`.

    ``log_probs`` are natural-log probabilities of the T predicted tokens. A probability of
    zero (log-prob ``-inf``) gives an infinite perplexity.
    """
    log_probs = list(log_probs)
    if not log_probs:
        raise ValueError("perplexity of zero tokens is undefined (log_probs is empty)")
    if any(math.isnan(lp) or lp > 0 for lp in log_probs):
        raise ValueError("log_probs must be log-probabilities: <= 0 and not NaN")
    return math.exp(-sum(log_probs) / len(log_probs))


@reference
def continuation_counts(counts: Mapping[tuple, int]) -> Counter:
    r"""Continuation counts :math:`N_{1+}(\bullet\, u) = |\{v : c(v\, u) > 0\}|`.

    ``counts`` are n-gram counts; the result maps each (n-1)-gram suffix u to the number of
    distinct words v seen before it.
    """
    result: Counter = Counter()
    for gram, c in counts.items():
        if len(gram) < 2:
            raise ValueError(f"continuation counts need n-grams of order >= 2, got {gram!r}")
        if c > 0:
            result[gram[1:]] += 1
    return result


@reference
def kn_bigram_prob(context: str, word: str, bigram_counts: Mapping[tuple, int], d: float) -> float:
    r"""Interpolated Kneser-Ney bigram probability (the textbook form).

    .. math::
        P_{KN}(w \mid v) = \frac{\max(c(v w) - d, 0)}{c(v \bullet)}
            + \frac{d\, N_{1+}(v \bullet)}{c(v \bullet)} P_{cont}(w),
        \qquad P_{cont}(w) = \frac{N_{1+}(\bullet w)}{N_{1+}(\bullet \bullet)}

    For a context never seen (:math:`c(v \bullet) = 0`) it is :math:`P_{cont}(w)`.
    """
    if not 0 <= d <= 1:
        raise ValueError(f"the discount d must lie in [0, 1], got {d}")
    n_types_before = continuation_counts(bigram_counts)
    p_cont = n_types_before.get((word,), 0) / sum(n_types_before.values())
    c_context = _context_total(bigram_counts, (context,))
    if c_context == 0:
        return p_cont
    n_follow = sum(1 for gram, c in bigram_counts.items() if gram[0] == context and c > 0)
    discounted = max(bigram_counts.get((context, word), 0) - d, 0) / c_context
    return discounted + d * n_follow / c_context * p_cont


@reference
def mkn_discounts(count_of_counts: Mapping[int, int]) -> tuple[float, float, float]:
    r"""Chen & Goodman's modified Kneser-Ney discounts from the count-of-counts :math:`n_r`.

    .. math::
        Y = \frac{n_1}{n_1 + 2 n_2}, \quad D_1 = 1 - 2Y\frac{n_2}{n_1}, \quad
        D_2 = 2 - 3Y\frac{n_3}{n_2}, \quad D_{3+} = 3 - 4Y\frac{n_4}{n_3}

    ``count_of_counts[r]`` is the number of n-grams seen exactly r times (r = 1..4; a missing r
    counts as :math:`n_r = 0`). Raises ``ValueError`` if :math:`n_1`, :math:`n_2` or :math:`n_3` is
    zero (the formulas divide by them) or if a discount falls outside :math:`[0, r]` (``D3+`` in
    [0, 3]), the range in which no discounted count :math:`c - D_r` of an n-gram seen :math:`c \ge r`
    times is negative and no count gains mass.
    """
    n1, n2, n3, n4 = (count_of_counts.get(r, 0) for r in (1, 2, 3, 4))
    if min(n1, n2, n3) == 0:
        raise ValueError(
            f"modified Kneser-Ney discounts need n_1, n_2, n_3 > 0; got n_1={n1}, n_2={n2}, n_3={n3} "
            "(the corpus is too small for this order)"
        )
    y = n1 / (n1 + 2 * n2)
    discounts = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    for r, (name, d_r) in enumerate(zip(("D1", "D2", "D3+"), discounts), start=1):
        if not 0 <= d_r <= r:
            raise ValueError(f"{name} = {d_r:.4g} is outside [0, {r}] (the corpus is too small for this order)")
    return discounts
