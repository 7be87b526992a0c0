r"""Katz backoff with Good-Turing discounts (Katz 1987): a true backoff model.

Good-Turing re-assigns the probability mass of the n-grams seen r + 1 times to those seen r
times: with :math:`n_r` the number of n-gram types of one order seen exactly r times, an
n-gram seen r times gets the adjusted count

.. math:: r^* = (r + 1)\, \frac{n_{r+1}}{n_r}.

Katz keeps the counts above K as they are (large counts are reliable) and discounts the
others by the ratio :math:`d_r`, renormalised so that the mass taken from counts 1..K is the
Good-Turing estimate :math:`n_1 / \sum_r r\, n_r` of the unseen mass:

.. math::
    d_r = \frac{r^*/r - \mu}{1 - \mu}, \qquad \mu = \frac{(K + 1)\, n_{K+1}}{n_1},
    \qquad c^*(h\,w) = \begin{cases} d_r\, r & 1 \le r = c(h\,w) \le K \\ r & r > K \end{cases}

Then, with :math:`h'` the context :math:`h` without its first word and
:math:`c(h \bullet) = \sum_x c(h\,x)`,

.. math::
    p_k(w \mid h) = \begin{cases} c^*(h\,w) / c(h \bullet) & c(h\,w) > 0 \\
                                  \gamma_k(h)\, p_{k-1}(w \mid h') & c(h\,w) = 0 \end{cases},
    \qquad
    \gamma_k(h) = \frac{1 - \sum_{x: c(hx) > 0} c^*(h\,x) / c(h \bullet)}
                       {1 - \sum_{x: c(hx) > 0} p_{k-1}(x \mid h')}:

the left-over mass of h goes to the lower order, but only over the words *unseen* after h
(the denominator renormalises the lower order over them). The recursion runs on raw counts
at every order, down to the unigram, which backs off to the uniform
:math:`p_0(w) = 1 / (|V| - 1)` over every word but ``<s>``, like the other models of
:mod:`seqlearn.ngram.models`; a context never seen is skipped (:math:`\gamma_k(h) = 1`). Its
backoff tables are the model itself: the :math:`p_k` of the seen n-grams and the
:math:`\gamma_k` of the seen contexts.
"""

from __future__ import annotations

import numpy as np

from ..data.vocab import Vocab
from ..validation import int_array, integer
from .backoff import BackoffTables
from .base import BOS, check_order
from .counts import NGramCounts, context_totals, count_of_counts
from .models import _BackoffScored, _training_stream

__all__ = ["good_turing_counts", "katz_discounts", "KatzBackoff"]

_NO_MASS = 1e-12
"""Lower-order mass of the unseen words below which it counts as none (rounding of 1 - sum)."""


def _count_of_counts_arg(n, name: str, length: int) -> np.ndarray:
    """``n`` as the int64 count-of-counts ``n_1, n_2, ...``: 1-D, entries >= 0, at least ``length`` of them."""
    n = int_array(n, name, ndim=1, low=0)
    if len(n) < length:
        raise ValueError(f"{name} must hold n_1 .. n_{length} (at least {length} entries), got {len(n)}")
    return n


def good_turing_counts(n) -> np.ndarray:
    r"""Good-Turing adjusted counts :math:`r^* = (r + 1)\, n_{r+1} / n_r` for r = 1 .. R - 1.

    ``n``: the count-of-counts :math:`n_1 \dots n_R` of one order (shape ``(R,)``, R >= 2,
    integers >= 0). Returns shape ``(R - 1,)``; NaN where :math:`n_r = 0` (no n-gram was seen
    r times, so none needs an adjusted count).
    """
    n = _count_of_counts_arg(n, "n (the count-of-counts)", 2).astype(float)
    r = np.arange(1, len(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n[:-1] > 0, (r + 1) * n[1:] / n[:-1], np.nan)


def katz_discounts(n, max_count: int = 5) -> np.ndarray:
    r"""Katz's discount ratios :math:`d_1 \dots d_K` from the count-of-counts of one order.

    .. math:: d_r = \frac{r^*/r - \mu}{1 - \mu}, \qquad \mu = \frac{(K + 1)\, n_{K+1}}{n_1},

    with :math:`r^*` from :func:`good_turing_counts` and K = ``max_count``. ``n``: the
    count-of-counts :math:`n_1 \dots n_{K+1}` (at least K + 1 entries; more are ignored).
    Returns shape ``(K,)``.

    Degenerate cases fall back to *no discount* (:math:`d_r = 1`) instead of raising: the
    whole order when :math:`n_1 = 0` or :math:`\mu \ge 1` (the renormalisation is undefined),
    and each r for which :math:`n_r = 0` or :math:`d_r` falls outside (0, 1] (a discount that
    would remove a whole count, or add to it). Small corpora produce these (e.g.
    :math:`n_{r+1} = 0` gives :math:`r^* = 0` and :math:`d_r \le 0`), and so does K = 1,
    where :math:`\mu = r^*_1` and :math:`d_1 = 0` always; an order without discounts gives
    its unseen words nothing.
    """
    K = integer(max_count, "max_count", low=1)
    n = _count_of_counts_arg(n, "n (the count-of-counts)", K + 1)[: K + 1]
    d = np.ones(K)
    if n[0] == 0 or (K + 1) * n[K] >= n[0]:
        return d  # mu undefined or >= 1: no discounting at this order
    mu = (K + 1) * n[K] / n[0]
    ratio = good_turing_counts(n) / np.arange(1, K + 1)  # (K,) r*/r, NaN where n_r = 0
    with np.errstate(invalid="ignore"):
        d_r = (ratio - mu) / (1 - mu)
        valid = (d_r > 0) & (d_r <= 1)  # False for NaN
    d[valid] = d_r[valid]
    return d


class KatzBackoff(_BackoffScored):
    r"""Katz backoff with Good-Turing discounts (the module docstring has the equations).

    ``max_count``: Katz's K, the largest count that is discounted (Katz: 5). Learned by
    :meth:`fit`: ``counts_`` (raw counts of every order), ``d_`` (shape ``(N, K)``: row k-1
    holds :math:`d_1 \dots d_K` of order k, see :func:`katz_discounts` for the fallbacks),
    ``gamma_`` (per order k, the weights :math:`\gamma_k(h)` indexed by the ids of the
    (k-1)-gram contexts) and ``tables_``, the model as backoff tables.

    Where the words unseen after a context have no lower-order mass (every word was seen after
    it, or the unseen ones have probability 0 below), the left-over mass has nowhere to go: the
    seen words are renormalised, :math:`p_k(w \mid h) = c^*(h\,w) / \sum_x c^*(h\,x)`, and
    :math:`\gamma_k(h) = 0`. Where the left-over mass is zero (no count of the context was
    discounted), the unseen words get probability 0: Katz's model can give a word 0.
    """

    def __init__(self, order: int = 3, max_count: int = 5):
        self.order = check_order(order)
        self.max_count = integer(max_count, "max_count", low=1)

    def fit(self, data, vocab: Vocab | None = None):
        """Estimate the model from sentences (lists of str) or an encoded stream; returns ``self``.

        ``vocab`` defaults to ``Vocab.build(sentences)``; a stream needs the vocab that encoded it.
        """
        stream, self.vocab_ = _training_stream(data, vocab)
        self.counts_ = self.index_ = NGramCounts.from_stream(stream, self.V, self.order)
        K = self.max_count
        self.d_ = np.stack([katz_discounts(count_of_counts(c, K + 1), K) for c in self.counts_.c])  # (N, K)
        self.tables_ = self._compile()
        return self

    def _c_star(self, k: int) -> np.ndarray:
        """Katz's counts c* of the k-grams: d_r r for 1 <= r <= K, r above K (0 stays 0); shape ``(n_k,)``."""
        c = self.counts_.c[k - 1]
        d = np.concatenate([[0.0], self.d_[k - 1]])  # d[r] = d_r, d[0] unused
        return np.where(c <= self.max_count, d.take(np.minimum(c, self.max_count)) * c, c)

    def _order(self, k: int, lower: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`p_k` of every k-gram and :math:`\gamma_k` of every (k-1)-gram context.

        ``lower``: :math:`p_{k-1}(u')` of each k-gram's suffix u', shape ``(n_k,)``. Returns
        shapes ``(n_k,)`` and ``(n_{k-1},)``.
        """
        h, c, c_star = self.index_.prefix(k), self.counts_.c[k - 1], self._c_star(k)
        seen = c > 0  # every k-gram for k >= 2; the unigrams of the words seen in training
        S = context_totals(self.index_, k, c)  # c(h .)
        S_star = context_totals(self.index_, k, c_star)  # sum of c*(h x) over the seen x
        lower_seen = context_totals(self.index_, k, np.where(seen, lower, 0.0))  # sum of p_{k-1}(x | h')
        left_over = np.divide(S - S_star, S, out=np.zeros_like(S), where=S > 0)
        unseen_mass = 1.0 - lower_seen
        nowhere = unseen_mass <= _NO_MASS  # the left-over mass has no unseen word to go to
        gamma = np.divide(left_over, unseen_mass, out=np.zeros_like(S), where=~nowhere)
        gamma[S == 0] = 1.0  # a context never seen: skip to the lower order
        total = np.where(nowhere, S_star, S)[h]  # renormalise the seen words where gamma = 0
        p = np.where(seen, np.divide(c_star, total, out=np.zeros_like(c_star, dtype=float), where=total > 0), 0.0)
        return p + np.where(seen, 0.0, gamma[h] * lower), gamma

    def _compile(self) -> BackoffTables:
        r"""The backoff tables, bottom up: :math:`\log_{10} p_k(u)` of every k-gram u and
        :math:`\log_{10} \gamma_{k+1}(u)` of every k-gram as a context."""
        p = np.where(np.arange(self.V) == BOS, 0.0, 1.0 / (self.V - 1))  # (V,) p_0
        probs, self.gamma_ = [], []
        for k in range(1, self.order + 1):
            lower = p if k == 1 else p[self.counts_.suffix[k - 1]]  # (n_k,) p_{k-1}(u')
            p, gamma = self._order(k, lower)
            probs.append(p)
            self.gamma_.append(gamma)
        with np.errstate(divide="ignore"):  # probability or weight 0: -inf
            log10_p, log10_bo = [np.log10(x) for x in probs], [np.log10(g) for g in self.gamma_[1:]]
        return BackoffTables(self.vocab_, self.index_, log10_p, log10_bo)
