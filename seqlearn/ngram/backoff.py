r"""The compact backoff model every n-gram model that ARPA can hold is scored with.

Per order k it keeps the sorted keys of the listed k-grams (an
:class:`~seqlearn.ngram.counts.NGramIndex`), their :math:`\log_{10} p` and, below the
highest order, their :math:`\log_{10} bo`: three flat arrays, about 24 bytes per n-gram,
and the hash table of the keys that lookups go through (8 to 16 bytes per n-gram).
A model fitted by :mod:`seqlearn.ngram.models` compiles itself into one, and
:func:`seqlearn.ngram.arpa.parse_arpa` reads one from a file, so both are scored by the
same code: the backoff rule

.. math::
    \log_{10} P(w \mid h) = \begin{cases} \log_{10} p(h\, w) & \text{if } h\, w \text{ is listed} \\
                  \log_{10} bo(h) + \log_{10} P(w \mid h') & \text{otherwise} \end{cases}

where h' drops the first word of h, :math:`\log_{10} bo(h) = 0` for an h that is not
listed, and the recursion ends at the unigram :math:`\log_{10} p(w)`. -inf stands for
probability (or weight) zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.vocab import Vocab
from .counts import NGramIndex, take

__all__ = ["BackoffTables"]

BOS, EOS = Vocab.bos_id, Vocab.eos_id


@dataclass
class BackoffTables:
    """A backoff n-gram model as arrays.

    ``vocab``: the words; ``index``: the listed n-grams of orders 1..N (every word is a
    unigram); ``log10_p[k-1]`` (shape ``(n_k,)``) and ``log10_bo[k-1]`` (shape ``(n_k,)``,
    orders k < N only) in the id order of ``index``.
    """

    vocab: Vocab
    index: NGramIndex
    log10_p: list[np.ndarray]
    log10_bo: list[np.ndarray]

    @property
    def order(self) -> int:
        return self.index.order

    def entries(self) -> dict[tuple[str, ...], tuple[float, float]]:
        """``{(u_1, ..., u_k): (log10 p, log10 bo)}`` of every listed n-gram (bo 0 at order N).

        One Python object per n-gram: for looking at small models, not for scoring.
        """
        entries = {}
        for k in range(1, self.order + 1):
            bo = self.log10_bo[k - 1] if k < self.order else np.zeros(self.index.size(k))
            for ids, p, b in zip(self.index.words(k).tolist(), self.log10_p[k - 1].tolist(), bo.tolist()):
                entries[tuple(self.vocab.itos[i] for i in ids)] = (p, b)
        return entries

    def backoff(self, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        """The backoff rule for queries given by ids; ``g`` (K, m), ``h`` (K - 1, m) -> log10 P, ``(m,)``.

        ``g[k-1]``: id of the k-gram ``h_k w`` of each query (row 0: the word ids), negative
        if not listed; ``h[k-2]``: id of its (k-1)-word context ``h_k`` (k >= 2), negative if
        not listed. Computed from the unigram up, one order per step.
        """
        log10 = self.log10_p[0][g[0]]  # (m,)
        for k in range(2, len(g) + 1):
            backed_off = log10 + take(self.log10_bo[k - 2], h[k - 2], 0.0)
            log10 = np.where(g[k - 1] >= 0, take(self.log10_p[k - 1], g[k - 1], 0.0), backed_off)
        return log10

    def query(self, w: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """log10 P(w | h) of queries given by word ids ``w`` (m,) and context ids ``ctx`` (K, m)."""
        g = np.stack([w, *(self.index.lookup(k, ctx[k - 1], w) for k in range(2, len(ctx) + 1))])
        return self.backoff(g, ctx[1:])

    def sentence(self, words: list[int]) -> list[float]:
        """log10 P of each word of one sentence and of its ``</s>``, in plain Python (no NumPy call).

        ``words``: word ids. The same rule as :meth:`backoff`, one token at a time, for a short
        input where NumPy's fixed cost per call would dominate. ``ends[k-1]`` is the id of
        the k-gram ending at the previous token (negative if not listed; after ``<s>`` only
        the unigram), so the context of order k is ``ends[k-2]``.
        """
        N, V = self.order, self.index.V
        p, bo = self._values()
        tables = [None, None, *(self.index.table(k) if self.index.size(k) else None for k in range(2, N + 1))]
        ends = [BOS] + [-1] * (N - 1)
        out: list[float] = []
        for w in [*words, EOS]:
            log10, found = p[0][w], [w]
            for k in range(2, N + 1):
                h, table = ends[k - 2], tables[k]
                g = table.find(h * V + w) if h >= 0 and table is not None else -1
                log10 = p[k - 1][g] if g >= 0 else log10 + bo[k - 2][h] if h >= 0 else log10
                found.append(g)
            out.append(log10)
            ends = found
        return out

    def _values(self) -> tuple[list[memoryview], list[memoryview]]:
        """``log10_p`` and ``log10_bo`` as memoryviews (Python floats by index), made on the first call."""
        if not hasattr(self, "_views"):
            self._views = [x.data for x in self.log10_p], [x.data for x in self.log10_bo]
        return self._views

    def stream(self, stream: np.ndarray) -> np.ndarray:
        """log10 P of every predicted token (not ``<s>``) of an encoded stream; shape ``(T',)``.

        One hash lookup per order and position: the k-gram ending at t is ``h_k w`` of
        token t, and the (k-1)-gram ending at t - 1 its context. Every position after the
        first is scored (the ``<s>`` ones for nothing) and the predicted ones are kept.
        """
        ends = self.index.ending_ids(stream)  # (N, T)
        return self.backoff(ends[:, 1:], ends[:-1, :-1])[stream[1:] != BOS]
