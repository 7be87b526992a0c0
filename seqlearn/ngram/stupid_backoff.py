r"""Stupid backoff (Brants et al. 2007): relative frequencies, a fixed backoff factor, no normalisation.

.. math::
    S(w \mid h) = \begin{cases} \dfrac{c(h w)}{c(h)} & c(h w) > 0 \\
                                \alpha\, S(w \mid h') & \text{otherwise}\end{cases},
    \qquad S(w) = \frac{c(w)}{\sum_x c(x)},

with :math:`\alpha = 0.4`. The scores of one context sum to more than 1 (the seen words keep
all their mass and the unseen ones get more on top), so :math:`S` is not a probability and
its "perplexity" means nothing. It is cheap on web-scale data, where it ranks translations
about as well as Kneser-Ney. To compare it here, :class:`StupidBackoff`'s probabilities are
the scores normalised per context, :math:`P(w \mid h) = S(w \mid h) / Z(h)`,
:math:`Z(h) = \sum_x S(x \mid h)`, which stupid backoff itself never computes.
"""

from __future__ import annotations

import numpy as np

from ..data.vocab import Vocab
from ..validation import real
from .base import BOS, LanguageModel, as_stream, check_order
from .counts import NO_CONTEXT, NGramCounts, context_totals, take
from .models import _training_stream

__all__ = ["StupidBackoff"]

_BLOCK = 2048
"""Contexts normalised at once (bounds the temporary (block, |V|) arrays)."""


class StupidBackoff(LanguageModel):
    r"""Stupid backoff scores :math:`S(w \mid h)` and their per-context normalisation.

    ``alpha``: the backoff factor in (0, 1] (Brants et al.: 0.4). The longest context the
    sentence allows is used (at most N - 1 tokens, none left of ``<s>``); backing off from a
    context that does not exist costs nothing. Learned: ``counts_`` and ``S_`` (the totals
    :math:`c(h \bullet)` of every order).
    """

    def __init__(self, order: int = 3, alpha: float = 0.4):
        self.order = check_order(order)
        self.alpha = real(alpha, "alpha", low=0.0, high=1.0, low_open=True)

    def fit(self, data, vocab: Vocab | None = None):
        """Count the n-grams of sentences or an encoded stream; returns ``self``."""
        stream, self.vocab_ = _training_stream(data, vocab)
        self.counts_ = self.index_ = NGramCounts.from_stream(stream, self.V, self.order)
        self.S_ = [context_totals(self.index_, k, self.counts_.c[k - 1]) for k in range(1, self.order + 1)]
        return self

    def _scores(self, w: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """S(w | h) of each query; ``w`` (m,), ``ctx`` (N, m) -> (m,)."""
        s = self.counts_.c[0][w] / self.S_[0][0]  # (m,) unigram relative frequency
        for k in range(2, len(ctx) + 1):
            c = take(self.counts_.c[k - 1], self.index_.lookup(k, ctx[k - 1], w), 0)
            S = take(self.S_[k - 1], ctx[k - 1], 1.0)
            backed_off = np.where(ctx[k - 1] == NO_CONTEXT, s, self.alpha * s)  # no context: nothing to back off from
            s = np.where(c > 0, c / S, backed_off)
        return s

    def score(self, words, context=()):
        r"""The unnormalised :math:`S(w \mid h)` of each word after one context (shapes as :meth:`prob`)."""
        self._check_fitted()
        w = self._word_ids(words)
        ctx = np.broadcast_to(self._context_column(context), (self.order, w.size))
        s = self._scores(w.ravel(), ctx).reshape(w.shape)
        return float(s) if s.ndim == 0 else s

    def token_scores(self, data) -> np.ndarray:
        """:math:`S(w_t \\mid h_t)` of every predicted token of ``data`` (aligned with ``token_logprobs``)."""
        self._check_fitted()
        stream = as_stream(data, self.vocab_)
        predicted = stream != BOS
        return self._scores(stream[predicted], self.index_.context_ids(stream, self.order)[:, predicted])

    def _normalizers(self, ctx: np.ndarray) -> np.ndarray:
        r""":math:`Z(h) = \sum_x S(x \mid h)` of each query's context; ``ctx`` (N, m) -> (m,)."""
        unique, inverse = np.unique(ctx, axis=1, return_inverse=True)  # (N, u) distinct contexts
        Z = np.empty(unique.shape[1])
        words = np.arange(self.V)
        for a in range(0, unique.shape[1], _BLOCK):
            block = unique[:, a : a + _BLOCK]  # (N, b)
            b = block.shape[1]
            s = self._scores(np.tile(words, b), np.repeat(block, self.V, axis=1))  # (b * V,)
            Z[a : a + b] = s.reshape(b, self.V).sum(axis=1)
        return Z[np.ravel(inverse)]

    def _logp(self, w, ctx):
        with np.errstate(divide="ignore"):
            return np.log(self._scores(w, ctx)) - np.log(self._normalizers(ctx))

    def _backoff_tables(self):
        raise ValueError(
            "stupid backoff scores are not probabilities, and their normalisation per context is not a "
            "backoff model with one weight per context and order: ARPA cannot represent it"
        )
