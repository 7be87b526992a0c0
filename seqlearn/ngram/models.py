r"""The n-gram language models of Chapter 1, vectorised over whole corpora.

The discounted models share one recursion (Chen & Goodman 1999). With :math:`h'` the
context :math:`h` without its first word and :math:`S_k(h) = \sum_x c_k(h x)`,

.. math::
    p_k(w \mid h) = \frac{c_k(h w) - D_k(c_k(h w))}{S_k(h)} + \gamma_k(h)\, p_{k-1}(w \mid h'),
    \qquad
    \gamma_k(h) = \frac{\sum_x D_k(c_k(h x))}{S_k(h)}
                = \frac{D_{k,1} N_1(h \bullet) + D_{k,2} N_2(h \bullet) + D_{k,3+} N_{3+}(h \bullet)}{S_k(h)}

for a context seen followed by some word (:math:`S_k(h) > 0`), :math:`p_k(w \mid h) =
p_{k-1}(w \mid h')` otherwise (:math:`\gamma_k(h) = 1`), down to the uniform
:math:`p_0(w) = 1 / (|V| - 1)` over every word but ``<s>`` (``<unk>`` and ``</s>``
included). ``<s>`` is never predicted: :math:`c_k(h\, \langle s \rangle) = 0` and
:math:`p_0(\langle s \rangle) = 0`. The models differ only in :math:`c_k` and :math:`D_k`:

======================  ===============================  =====================================
model                   :math:`c_k`                      :math:`D_k(c)`, c >= 1
======================  ===============================  =====================================
MLE                     raw counts                       0 (so :math:`\gamma_k = 0`)
AbsoluteDiscounting     raw counts                       :math:`D_k`
KneserNey               adjusted counts (below order N)  :math:`D_k`
ModifiedKneserNey       adjusted counts (below order N)  :math:`D_{k,1}, D_{k,2}, D_{k,3+}`
======================  ===============================  =====================================

Adjusted counts are defined in :func:`seqlearn.ngram.counts.adjusted_counts`. The
conventions (padding with one ``<s>``, adjusted counts, discounts from the count-of-counts
of each order, interpolation down to the uniform distribution) are those of KenLM's
``lmplz``, so :meth:`ModifiedKneserNey.to_arpa` writes the file ``lmplz`` writes.
"""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np

from ..data.vocab import Vocab
from ..validation import choice, real, real_array
from .arpa import LOG10_ZERO, parse_arpa
from .base import BOS, Estimator, LanguageModel, as_stream, check_order
from .counts import NO_CONTEXT, NGramCounts, NGramIndex, adjusted_counts, context_totals, count_of_counts, take

__all__ = [
    "MLE",
    "AddK",
    "AbsoluteDiscounting",
    "KneserNey",
    "ModifiedKneserNey",
    "BackoffModel",
    "InterpolatedModel",
    "METHODS",
    "DiscountEstimationError",
    "make_model",
    "read_arpa",
    "kn_discount",
    "mkn_discounts_from_counts",
]


def _training_stream(data, vocab: Vocab | None) -> tuple[np.ndarray, Vocab]:
    """The training stream and its vocabulary (built from ``data`` when ``vocab`` is None)."""
    if isinstance(data, str):
        raise TypeError("sentences must be a list of token lists, not a str (use seqlearn.data.tokenize(text))")
    if vocab is None:
        if isinstance(data, np.ndarray):
            raise TypeError("fitting on an encoded stream needs the vocabulary that encoded it: pass vocab=")
        data = list(data)
        vocab = Vocab.build(data)
    elif not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.Vocab or None, got {type(vocab).__name__}")
    return as_stream(data, vocab), vocab


def kn_discount(n: np.ndarray) -> float:
    r"""The discount :math:`D = Y = \frac{n_1}{n_1 + 2 n_2}` (Ney, Essen & Kneser 1994).

    ``n`` holds the count-of-counts :math:`n_1, n_2, \dots` of one order (shape ``(4,)``).
    """
    n1, n2 = (float(v) for v in n[:2])
    if n1 + n2 == 0:
        raise ValueError("D = n_1 / (n_1 + 2 n_2) is undefined: no n-gram of this order has count 1 or 2")
    return n1 / (n1 + 2 * n2)


def mkn_discounts_from_counts(n: np.ndarray) -> np.ndarray:
    r"""Chen & Goodman's modified Kneser-Ney discounts from count-of-counts ``n`` (shape ``(4,)``).

    .. math::
        Y = \frac{n_1}{n_1 + 2 n_2}, \quad D_1 = 1 - 2Y\frac{n_2}{n_1}, \quad
        D_2 = 2 - 3Y\frac{n_3}{n_2}, \quad D_{3+} = 3 - 4Y\frac{n_4}{n_3}

    Returns ``[D_1, D_2, D_3+]``; raises ``ValueError`` if some :math:`n_r` (r <= 3) is zero or
    a discount falls outside its valid range :math:`[0, r]`.
    """
    n1, n2, n3, n4 = (float(v) for v in n[:4])
    if min(n1, n2, n3) == 0:
        raise ValueError(f"the discounts need n_1, n_2, n_3 > 0, got n_1={n1:.0f}, n_2={n2:.0f}, n_3={n3:.0f}")
    Y = n1 / (n1 + 2 * n2)
    D = np.array([1 - 2 * Y * n2 / n1, 2 - 3 * Y * n3 / n2, 3 - 4 * Y * n4 / n3])
    for r, (name, D_r) in enumerate(zip(("D1", "D2", "D3+"), D), start=1):
        if not 0 <= D_r <= r:
            raise ValueError(f"{name} = {D_r:.4g} is outside [0, {r}]")
    return D


class DiscountEstimationError(ValueError):
    """The discounts of one order cannot be estimated from the corpus (``order``: that order, 1-based)."""

    def __init__(self, order: int, reason: str):
        self.order, self.reason = order, reason
        super().__init__(
            f"cannot estimate the discounts of order {order} from this corpus ({reason}); this happens on "
            "small or artificial corpora: pass discounts= (or fallback_discounts=) explicitly"
        )


class InterpolatedModel(LanguageModel):
    r"""The interpolated recursion of the module docstring; subclasses choose :math:`c_k` and :math:`D_k`.

    Learned by :meth:`fit`: ``counts_`` (raw counts, an :class:`NGramCounts`), ``c_`` (the counts
    :math:`c_k` the recursion uses, one array per order), ``D_`` (shape ``(N, 3)``: row k-1
    holds :math:`D_k(1), D_k(2), D_k(3+)`), ``S_`` and ``gamma_`` (per order k, indexed by the
    ids of the (k-1)-gram contexts).
    """

    def __init__(self, order: int = 3, discounts=None, fallback_discounts=None):
        self.order = check_order(order)
        self.discounts = None if discounts is None else self._check_discounts(discounts)
        self.fallback_discounts = None if fallback_discounts is None else self._check_discounts(fallback_discounts)

    # -- what subclasses choose -----------------------------------------------------------

    def _level_counts(self, counts: NGramCounts) -> list[np.ndarray]:
        """The counts c_k of each order (raw by default)."""
        return counts.c

    def _check_discounts(self, discounts) -> np.ndarray:
        """User discounts as an (N, 3) array: one D per order (a number or N numbers) in [0, 1]."""
        D = real_array(discounts, "discounts")
        if D.ndim == 0:
            D = np.full(self.order, D)
        if D.shape != (self.order,):
            raise ValueError(f"discounts must be one number or {self.order} (one per order), got shape {D.shape}")
        if not np.all((D >= 0) & (D <= 1)):
            raise ValueError(f"each discount must lie in [0, 1], got {D.tolist()}")
        return np.repeat(D[:, None], 3, axis=1)

    def _discount_formula(self, n: np.ndarray) -> np.ndarray:
        """D_k(1), D_k(2), D_k(3+) from the count-of-counts n of order k."""
        return np.full(3, kn_discount(n))

    # -- estimation -----------------------------------------------------------------------

    def fit(self, data, vocab: Vocab | None = None):
        """Estimate the model from sentences (lists of str) or an encoded stream; returns ``self``.

        ``vocab`` defaults to ``Vocab.build(sentences)``; a stream needs the vocab that encoded it.
        """
        stream, self.vocab_ = _training_stream(data, vocab)
        self.counts_ = NGramCounts.from_stream(stream, self.V, self.order)
        self.index_ = self.counts_
        self.c_ = self._level_counts(self.counts_)
        self.D_ = self.discounts if self.discounts is not None else self._estimate_discounts()
        self.S_ = [context_totals(self.index_, k, self.c_[k - 1]) for k in range(1, self.order + 1)]
        self.gamma_ = [self._gamma(k) for k in range(1, self.order + 1)]
        return self

    def _estimate_discounts(self) -> np.ndarray:
        """D of every order from the count-of-counts of c_k (or the fallback where undefined); shape (N, 3)."""
        D = np.zeros((self.order, 3))
        for k, c_k in enumerate(self.c_, start=1):
            if not c_k.any():
                continue  # no k-grams: no context of order k is ever seen, D_k is never used
            try:
                D[k - 1] = self._discount_formula(count_of_counts(c_k))
            except ValueError as e:
                if self.fallback_discounts is None:
                    raise DiscountEstimationError(k, str(e)) from None
                D[k - 1] = self.fallback_discounts[k - 1]
        return D

    def _D(self, k: int, c: np.ndarray) -> np.ndarray:
        """D_k(c) for counts c (0 for c = 0); same shape as c."""
        return np.where(c > 0, self.D_[k - 1][np.clip(c, 1, 3) - 1], 0.0)

    def _gamma(self, k: int) -> np.ndarray:
        r""":math:`\gamma_k(h) = \sum_x D_k(c_k(hx)) / S_k(h)`, 1 where :math:`S_k(h) = 0`; shape ``(n_{k-1},)``."""
        S = self.S_[k - 1]
        discount_mass = context_totals(self.index_, k, self._D(k, self.c_[k - 1]))
        return np.divide(discount_mass, S, out=np.ones_like(S), where=S > 0)

    # -- probabilities --------------------------------------------------------------------

    def _interpolate(self, k: int, w: np.ndarray, h: np.ndarray, p_lower: np.ndarray) -> np.ndarray:
        r"""One step of the recursion: :math:`p_k(w \mid h)` from :math:`p_{k-1}(w \mid h')`; shapes ``(m,)``."""
        S = take(self.S_[k - 1], h, 0.0)  # (m,) S_k(h), 0 for an unseen context
        c = take(self.c_[k - 1], self.index_.lookup(k, h, w), 0)  # (m,) c_k(hw)
        discounted = np.divide(c - self._D(k, c), S, out=np.zeros_like(S), where=S > 0)
        return discounted + take(self.gamma_[k - 1], h, 1.0) * p_lower

    def _p(self, w: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """p_K(w | h) of each query, K = len(ctx); ``w`` (m,), ``ctx`` (K, m) -> (m,)."""
        p = np.where(w == BOS, 0.0, 1.0 / (self.V - 1))  # p_0: uniform over the predictable words
        for k in range(1, len(ctx) + 1):
            p = self._interpolate(k, w, ctx[k - 1], p)
        return p

    def _logp(self, w, ctx):
        with np.errstate(divide="ignore"):
            return np.log(self._p(w, ctx))

    # -- ARPA export ----------------------------------------------------------------------

    def _ngram_contexts(self, k: int) -> np.ndarray:
        """Context ids of every k-gram u_1..u_k at orders 1..k; shape ``(k, n_k)``.

        Row j-1 is the id of u_{k-j+2} .. u_{k-1}, reached by following suffix links.
        """
        ctx = np.empty((k, self.index_.size(k)), dtype=np.int64)
        g = np.arange(self.index_.size(k))  # ids of u_{k-j+1} .. u_k, order j
        for j in range(k, 0, -1):
            ctx[j - 1] = self.index_.prefix(j)[g]
            g = self.counts_.suffix[j - 1][g]
        return ctx

    def _arpa_tables(self):
        tables = []
        with np.errstate(divide="ignore"):
            for k in range(1, self.order + 1):
                log10_p = np.log10(self._p(self.index_.last(k), self._ngram_contexts(k)))
                log10_bo = np.log10(self.gamma_[k]) if k < self.order else None
                tables.append((np.arange(self.index_.size(k)), log10_p, log10_bo))
        return tables


class MLE(InterpolatedModel):
    r"""Maximum-likelihood estimate :math:`P(w \mid h) = c(h w) / c(h \bullet)`.

    For a context never seen followed by a word (:math:`c(h \bullet) = 0`) it falls back to
    the next shorter context, down to the unigram :math:`c(w) / \sum_x c(x)`. An n-gram seen
    nowhere gets probability 0: log-probability ``-inf`` and infinite perplexity. It is the
    recursion of :mod:`seqlearn.ngram.models` with raw counts and :math:`D = 0`.
    """

    def __init__(self, order: int = 3):
        super().__init__(order)
        self.discounts = np.zeros((self.order, 3))


class AbsoluteDiscounting(InterpolatedModel):
    r"""Interpolated absolute discounting: raw counts at every order, one discount per order.

    :math:`p_k(w \mid h) = \frac{\max(c(h w) - D_k, 0)}{c(h \bullet)} + \frac{D_k N_{1+}(h \bullet)}
    {c(h \bullet)} p_{k-1}(w \mid h')`. ``discounts``: None (default :math:`D_k = n_1 / (n_1 + 2 n_2)`
    from the count-of-counts of order k), one number for every order, or N numbers (unigram
    first), each in [0, 1] (D = 0 gives back MLE; D > 1 would discount singletons below 0).
    ``fallback_discounts`` (same forms) replaces the estimate at the orders where it is
    undefined (like lmplz's ``--discount_fallback``); without it such an order raises
    ``ValueError``.
    """


class KneserNey(AbsoluteDiscounting):
    r"""Interpolated Kneser-Ney: absolute discounting on adjusted (continuation) counts.

    Below the highest order, :math:`c_k` is the number of distinct words seen before the
    n-gram (:func:`~seqlearn.ngram.counts.adjusted_counts`). ``discounts`` as for
    :class:`AbsoluteDiscounting` (and ``fallback_discounts``), the default estimated from the
    adjusted count-of-counts.
    """

    def _level_counts(self, counts):
        return adjusted_counts(counts)


class ModifiedKneserNey(KneserNey):
    r"""Modified Kneser-Ney (Chen & Goodman 1999), with KenLM ``lmplz``'s conventions.

    Three discounts per order for adjusted counts 1, 2 and 3+ (:func:`mkn_discounts_from_counts`
    of the adjusted count-of-counts). ``discounts``: None (estimate), one triple
    ``(D1, D2, D3+)`` for every order, or N triples (unigram first); :math:`D_r \in [0, r]`
    (``D3+`` in [0, 3]), the range in which no discounted count is negative. Small or
    artificial corpora may leave the estimate undefined (some :math:`n_r = 0`) or out of
    range, which raises ``ValueError``: pass ``discounts``, or ``fallback_discounts`` (one
    triple, or N) for just the orders where the estimate fails, e.g. lmplz's
    ``--discount_fallback`` values ``(0.5, 1.0, 1.5)``.
    """

    def _check_discounts(self, discounts) -> np.ndarray:
        D = real_array(discounts, "discounts")
        if D.shape == (3,):
            D = np.tile(D, (self.order, 1))
        if D.shape != (self.order, 3):
            raise ValueError(f"discounts must be one triple (D1, D2, D3+) or {self.order} triples, got shape {D.shape}")
        if not np.all((D >= 0) & (D <= [1, 2, 3])):
            raise ValueError(f"modified Kneser-Ney discounts need 0 <= D_r <= r (r = 1, 2, 3+), got {D.tolist()}")
        return D

    def _discount_formula(self, n):
        return mkn_discounts_from_counts(n)


class AddK(LanguageModel):
    r"""Add-k smoothing :math:`P(w \mid h) = \frac{c(h w) + k}{c(h \bullet) + k (|V| - 1)}`.

    :math:`|V| - 1` is the number of predictable types (all but ``<s>``); ``<s>`` gets 0. The
    context is the longest the sentence allows (at most N - 1 tokens, none left of
    ``<s>``), and the counts are those of its order; an unseen context gives the uniform
    :math:`1 / (|V| - 1)`. k = 1 is Laplace smoothing.
    """

    def __init__(self, order: int = 3, k: float = 1.0):
        self.order = check_order(order)
        self.k = real(k, "k", low=0, low_open=True)

    def fit(self, data, vocab: Vocab | None = None):
        """Count the n-grams of sentences or an encoded stream (see :meth:`InterpolatedModel.fit`)."""
        stream, self.vocab_ = _training_stream(data, vocab)
        self.counts_ = self.index_ = NGramCounts.from_stream(stream, self.V, self.order)
        self.S_ = [context_totals(self.index_, j, self.counts_.c[j - 1]) for j in range(1, self.order + 1)]
        return self

    def _logp(self, w, ctx):
        K = (ctx != NO_CONTEXT).sum(axis=0)  # (m,) order used: the valid contexts are rows 0..K-1
        p = np.empty(ctx.shape)  # (N, m): add-k estimate of every order
        for j in range(1, self.order + 1):
            c = take(self.counts_.c[j - 1], self.index_.lookup(j, ctx[j - 1], w), 0)
            p[j - 1] = (c + self.k) / (take(self.S_[j - 1], ctx[j - 1], 0.0) + self.k * (self.V - 1))
        p = np.where(w == BOS, 0.0, p[K - 1, np.arange(len(w))])
        with np.errstate(divide="ignore"):
            return np.log(p)

    def _arpa_tables(self):
        if self.order > 1:
            raise ValueError(
                "add-k smoothing of order > 1 is not a backoff model: an unseen n-gram h w gets "
                "k / (c(h.) + k(|V| - 1)), not a context weight times a lower-order probability, "
                "so ARPA cannot represent it. Write an order-1 add-k model, or use another method."
            )
        w = np.arange(self.V)
        log10_p = self._logp(w, np.zeros((1, self.V), dtype=np.int64)) / np.log(10)  # empty context for every word
        return [(w, log10_p, None)]


class BackoffModel(LanguageModel):
    r"""A backoff model as listed in an ARPA file (see :mod:`seqlearn.ngram.arpa`).

    :math:`\log P(w \mid h) = \log p(h w)` if :math:`h w` is listed, else
    :math:`\log bo(h) + \log P(w \mid h')`. Build it with :meth:`from_arpa`. The vocabulary
    is that of the unigrams (``<unk>``, ``<s>``, ``</s>`` first; a special missing from the
    file has probability 0). ``log10_p_[k-1]``, ``log10_bo_[k-1]`` (shape ``(n_k,)``) are
    indexed by the ids of ``index_``; -inf stands for zero.
    """

    def __init__(self, vocab: Vocab, index: NGramIndex, log10_p: list[np.ndarray], log10_bo: list[np.ndarray]):
        self.vocab_, self.index_, self.log10_p_, self.log10_bo_ = vocab, index, log10_p, log10_bo
        self.order = index.order

    @classmethod
    def from_arpa(cls, file) -> BackoffModel:
        """Read an ARPA file (path or text file object); ``ValueError`` names the line of any defect."""
        sections = parse_arpa(file)
        unigrams = sections[0]
        vocab = Vocab(w for (w,) in unigrams.ngrams)
        V = len(vocab)
        ids = np.array([vocab.stoi[w] for (w,) in unigrams.ngrams], dtype=np.int64)
        _check_unique(ids, unigrams.lines)
        log10_p, log10_bo = [np.full(V, -np.inf)], [np.zeros(V)]
        log10_p[0][ids], log10_bo[0][ids] = unigrams.log10_p, unigrams.log10_bo
        keys = [np.arange(V, dtype=np.int64)]
        for k, section in enumerate(sections[1:], start=2):
            key = _arpa_keys(section, k, vocab, NGramIndex(keys, V))
            _check_unique(key, section.lines)
            order = np.argsort(key)
            keys.append(key[order])
            log10_p.append(section.log10_p[order])
            log10_bo.append(section.log10_bo[order])
        return cls(vocab, NGramIndex(keys, V), _zero_at_99(log10_p), _zero_at_99(log10_bo))

    def _logp(self, w, ctx):
        log10_p = self.log10_p_[0][w]  # (m,)
        for k in range(2, len(ctx) + 1):
            g = self.index_.lookup(k, ctx[k - 1], w)
            backed_off = log10_p + take(self.log10_bo_[k - 2], ctx[k - 1], 0.0)
            log10_p = np.where(g >= 0, take(self.log10_p_[k - 1], g, 0.0), backed_off)
        return log10_p * np.log(10)

    def _arpa_tables(self):
        return [
            (np.arange(self.index_.size(k)), self.log10_p_[k - 1], self.log10_bo_[k - 1] if k < self.order else None)
            for k in range(1, self.order + 1)
        ]


def _zero_at_99(log10_values: list[np.ndarray]) -> list[np.ndarray]:
    """ARPA's log10 values with those <= -99 (probability or weight 0) set to -inf."""
    return [np.where(x <= LOG10_ZERO, -np.inf, x) for x in log10_values]


def _check_unique(ids: np.ndarray, lines: np.ndarray) -> None:
    """``ValueError`` at the line of the first n-gram listed twice (``ids``: keys, in file order)."""
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if repeated.size:
        line = int(lines[order][repeated + 1].min())
        raise ValueError(f"malformed ARPA file, line {line}: this n-gram is listed twice")


def _arpa_keys(section, k: int, vocab: Vocab, lower: NGramIndex) -> np.ndarray:
    """Hierarchical keys of the k-grams of an ARPA section, in file order; shape ``(n_k,)``."""
    n_words = k * len(section.ngrams)
    words = np.fromiter(map(vocab.stoi.get, chain.from_iterable(section.ngrams), repeat(-1)), np.int64, n_words)
    words = words.reshape(-1, k)  # (n_k, k) word ids, -1 for a word that is not a unigram
    unknown = np.flatnonzero((words < 0).any(axis=1))
    if unknown.size:
        line = section.lines[unknown[0]]
        raise ValueError(f"malformed ARPA file, line {line}: a word of this {k}-gram is not among the 1-grams")
    h = words[:, 0]
    for j in range(2, k):
        h = lower.lookup(j, h, words[:, j - 1])
    missing = np.flatnonzero(h < 0)
    if missing.size:
        line = section.lines[missing[0]]
        raise ValueError(
            f"malformed ARPA file, line {line}: the context of this {k}-gram is not listed among the {k - 1}-grams"
        )
    return h * len(vocab) + words[:, -1]


def read_arpa(file) -> BackoffModel:
    """Read an ARPA file into a queryable :class:`BackoffModel` (same as ``BackoffModel.from_arpa``)."""
    return BackoffModel.from_arpa(file)


METHODS = {"mle": MLE, "addk": AddK, "abs": AbsoluteDiscounting, "kn": KneserNey, "mkn": ModifiedKneserNey}
"""The models by short name (as the command line spells them)."""


def make_model(method: str, order: int, **kwargs) -> Estimator:
    """An unfitted model by short name (see :data:`METHODS`), e.g. ``make_model("mkn", 5)``."""
    return METHODS[choice(method, "method", sorted(METHODS))](order, **kwargs)
