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

Every model but add-k (of order > 1) and stupid backoff is a backoff model: once fitted it
is compiled into :class:`~seqlearn.ngram.backoff.BackoffTables` (the probability of every
seen n-gram and the weight :math:`\gamma_k(h)` of every seen context, in log10), and it is
scored from those, by the backoff rule, exactly like a model read from an ARPA file
(:class:`BackoffModel`). For an n-gram h w not seen, the recursion above is that rule:
:math:`p_k(w \mid h) = \gamma_k(h)\, p_{k-1}(w \mid h')`.
"""

from __future__ import annotations

import numpy as np

from ..data.vocab import Vocab
from ..validation import choice, real, real_array
from .arpa import parse_arpa
from .backoff import BackoffTables
from .base import BOS, UNK, Estimator, LanguageModel, as_stream, check_order
from .basics import mkn_discounts
from .counts import NO_CONTEXT, NGramCounts, adjusted_counts, context_totals, count_of_counts, take
from .npz import parse_npz

LN10 = float(np.log(10))

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
    "read_npz",
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
        vocab, stream = Vocab.build_and_encode(data)
        return stream, vocab
    if not isinstance(vocab, Vocab):
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
    a discount falls outside its valid range :math:`[0, r]` (the rule of
    :func:`seqlearn.ngram.basics.mkn_discounts`, which computes them).
    """
    return np.array(mkn_discounts({r: int(n[r - 1]) for r in (1, 2, 3, 4)}))


class DiscountEstimationError(ValueError):
    """The discounts of one order cannot be estimated from the corpus (``order``: that order, 1-based)."""

    def __init__(self, order: int, reason: str):
        self.order, self.reason = order, reason
        super().__init__(
            f"cannot estimate the discounts of order {order} from this corpus ({reason}); this happens on "
            "small or artificial corpora: pass discounts= (or fallback_discounts=) explicitly"
        )


class _BackoffScored(LanguageModel):
    """A model scored by the backoff rule from its ``tables_`` (a :class:`BackoffTables`)."""

    tables_: BackoffTables

    def _logp(self, w, ctx):
        return self.tables_.query(w, ctx) * LN10

    def _stream_logp(self, stream):
        return self.tables_.stream(stream) * LN10

    def _backoff_tables(self):
        return self.tables_

    def sentence_logprob(self, sentence) -> float:
        self._check_fitted()
        if isinstance(sentence, str) or not all(isinstance(t, str) for t in sentence):
            raise TypeError("sentence must be a list of str tokens (use seqlearn.data.tokenize(text))")
        total = 0.0
        for log10 in self.tables_.sentence([self.vocab_.stoi.get(t, UNK) for t in sentence]):
            total += log10 * LN10  # token by token, as sentence_logprobs adds them up
        return total


class InterpolatedModel(_BackoffScored):
    r"""The interpolated recursion of the module docstring; subclasses choose :math:`c_k` and :math:`D_k`.

    Learned by :meth:`fit`: ``counts_`` (raw counts, an :class:`NGramCounts`), ``c_`` (the counts
    :math:`c_k` the recursion uses, one array per order), ``D_`` (shape ``(N, 3)``: row k-1
    holds :math:`D_k(1), D_k(2), D_k(3+)`), ``S_`` and ``gamma_`` (per order k, indexed by the
    ids of the (k-1)-gram contexts), and ``tables_``, the model compiled for scoring.
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
        self.tables_ = self._compile()
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
        """D_k(c) for counts c >= 0 (0 for c = 0); same shape as c."""
        return np.concatenate([[0.0], self.D_[k - 1]]).take(c, mode="clip")  # c > 3 clipped to 3: D_k(3+)

    def _gamma(self, k: int) -> np.ndarray:
        r""":math:`\gamma_k(h) = \sum_x D_k(c_k(hx)) / S_k(h)`, 1 where :math:`S_k(h) = 0`; shape ``(n_{k-1},)``."""
        S = self.S_[k - 1]
        discount_mass = context_totals(self.index_, k, self._D(k, self.c_[k - 1]))
        return np.divide(discount_mass, S, out=np.ones_like(S), where=S > 0)

    # -- compilation ----------------------------------------------------------------------

    def _compile(self) -> BackoffTables:
        r"""The backoff tables: :math:`\log_{10} p_k(u)` and :math:`\log_{10} \gamma_{k+1}(u)` of every seen k-gram u.

        Bottom up, one gather per order: for the k-gram :math:`u = h\, w`,
        :math:`p_k(u) = (c_k(u) - D_k(c_k(u))) / S_k(h) + \gamma_k(h)\, p_{k-1}(u')` where
        :math:`u'` (its suffix, also seen) was done at order k - 1, and :math:`p_0(w) = 1 / (|V| - 1)`
        (0 for ``<s>``).
        """
        p = np.where(np.arange(self.V) == BOS, 0.0, 1.0 / (self.V - 1))  # (V,) p_0 of every word
        log10_p, log10_bo = [], []
        with np.errstate(divide="ignore"):
            for k in range(1, self.order + 1):
                h, c = self.index_.prefix(k), self.c_[k - 1]  # (n_k,) contexts and counts
                S = self.S_[k - 1][h]
                lower = p if k == 1 else p[self.counts_.suffix[k - 1]]  # p_{k-1}(u'), (n_k,)
                p = np.divide(c - self._D(k, c), S, out=np.zeros_like(S), where=S > 0) + self.gamma_[k - 1][h] * lower
                log10_p.append(np.log10(p))
                if k < self.order:
                    log10_bo.append(np.log10(self.gamma_[k]))
        return BackoffTables(self.vocab_, self.index_, log10_p, log10_bo)


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

    def _backoff_tables(self):
        if self.order > 1:
            raise ValueError(
                "add-k smoothing of order > 1 is not a backoff model: an unseen n-gram h w gets "
                "k / (c(h.) + k(|V| - 1)), not a context weight times a lower-order probability, "
                "so ARPA cannot represent it. Write an order-1 add-k model, or use another method."
            )
        log10_p = self._logp(np.arange(self.V), np.zeros((1, self.V), dtype=np.int64)) / LN10  # the empty context
        return BackoffTables(self.vocab_, self.index_, [log10_p], [])


class BackoffModel(_BackoffScored):
    r"""A backoff model as listed in an ARPA file (see :mod:`seqlearn.ngram.arpa`).

    :math:`\log P(w \mid h) = \log p(h w)` if :math:`h w` is listed, else
    :math:`\log bo(h) + \log P(w \mid h')`. Build it with :meth:`from_arpa` (or
    :func:`read_npz` from seqlearn's binary format). The vocabulary
    is that of the unigrams (``<unk>``, ``<s>``, ``</s>`` first; a special missing from the
    file has probability 0). ``tables_`` holds the listed n-grams and their log10 values.
    """

    def __init__(self, tables: BackoffTables):
        self.tables_, self.vocab_, self.index_, self.order = tables, tables.vocab, tables.index, tables.order

    @classmethod
    def from_arpa(cls, file) -> BackoffModel:
        """Read an ARPA file (path or text file object); ``ValueError`` names the line of any defect."""
        return cls(parse_arpa(file))


def read_arpa(file) -> BackoffModel:
    """Read an ARPA file into a queryable :class:`BackoffModel` (same as ``BackoffModel.from_arpa``)."""
    return BackoffModel.from_arpa(file)


def read_npz(file) -> BackoffModel:
    """Read a model written by :meth:`~seqlearn.ngram.base.LanguageModel.to_npz` (path or binary file object)."""
    return BackoffModel(parse_npz(file))


METHODS = {"mle": MLE, "addk": AddK, "abs": AbsoluteDiscounting, "kn": KneserNey, "mkn": ModifiedKneserNey}
"""The models by short name (as the command line spells them)."""


def make_model(method: str, order: int, **kwargs) -> Estimator:
    """An unfitted model by short name (see :data:`METHODS`), e.g. ``make_model("mkn", 5)``."""
    return METHODS[choice(method, "method", sorted(METHODS))](order, **kwargs)
