"""Vectorised n-gram counting over an integer-encoded corpus.

A corpus is one flat int64 stream ``<s> w_1 ... w_k </s> <s> ...`` (see
:func:`seqlearn.data.vocab.encode_sentences`). An n-gram is a window of the stream that
contains ``<s>`` at most at its first position: windows never cross a sentence boundary,
and ``<s>`` is a context, never a predicted word.

The n-grams of each order k get dense ids, built hierarchically: a k-gram is its
(k-1)-gram prefix plus a last word, so it is identified by the int64 key

.. math:: \\mathrm{key}(u_1 \\dots u_k) = \\mathrm{id}(u_1 \\dots u_{k-1}) \\cdot |V| + u_k,

and its id is its rank among the sorted keys of order k. Ids of order 1 are the word ids
themselves (every word of the vocabulary is a unigram, seen or not). Keys stay below
(number of (k-1)-grams) x |V|, so they fit in int64 for any realistic corpus. A lookup
goes through a hash table of each order's keys (:class:`KeyTable`, built on the first
lookup): a few array gathers per query instead of a binary search's ~log2(n_k) dependent
memory reads.
"""

from __future__ import annotations

import numpy as np

from ..data.vocab import Vocab
from ..validation import token_ids

__all__ = [
    "UNSEEN",
    "NO_CONTEXT",
    "KeyTable",
    "NGramIndex",
    "NGramCounts",
    "adjusted_counts",
    "count_of_counts",
    "context_totals",
    "take",
]

UNSEEN = -1
"""Id of a valid window that is not in the index (an n-gram never seen in training)."""

NO_CONTEXT = -2
"""Id of an invalid window: it reaches left of the stream or past the ``<s>`` that opens its sentence."""

BOS = Vocab.bos_id


def _bos_before(stream: np.ndarray) -> np.ndarray:
    """``b[j]`` = number of ``<s>`` in ``stream[:j]``; shape ``(T + 1,)``."""
    return np.concatenate([[0], np.cumsum(stream == BOS)])


def _valid_windows(b: np.ndarray, k: int) -> np.ndarray:
    """Validity of the windows ``stream[i : i + k]``, i = 0..T-k: no ``<s>`` after position i.

    ``b`` is :func:`_bos_before` of the stream; result shape ``(T - k + 1,)``.
    """
    T = len(b) - 1
    if k > T:
        return np.zeros(0, dtype=bool)
    return b[k : T + 1] - b[1 : T - k + 2] == 0


_GOLDEN_INT = 0x9E3779B97F4A7C15
"""2^64 / golden ratio, odd: the multiplier of Fibonacci hashing."""
_GOLDEN = np.int64(_GOLDEN_INT - 2**64)
"""The same bits as an int64 (NumPy's product wraps modulo 2^64)."""


_INSERT_CHUNK = 1 << 18
"""Keys inserted into a :class:`KeyTable` at a time."""


class KeyTable:
    r"""An open-addressing hash table over distinct int64 keys: ``lookup(q)`` is the i with ``keys[i] == q``.

    The table has :math:`2^b \ge 2 n` slots (load at most 1/2); key x goes to slot
    :math:`\lfloor (x \cdot \phi \bmod 2^{64}) / 2^{64 - b} \rfloor` (Fibonacci hashing,
    :math:`\phi` = ``_GOLDEN``) or, if taken, the next free one (linear probing). A slot
    holds the position of its key in ``keys`` (-1 when free), so the table costs 4 bytes per
    slot. Insertion and lookup are vectorised: each round handles every key still probing.
    ``keys`` must not be empty.
    """

    def __init__(self, keys: np.ndarray):
        self.keys = keys = keys.astype(np.int64, copy=False)
        self.bits = max(int(2 * len(keys) - 1).bit_length(), 1)
        self.slots = np.full(1 << self.bits, -1, dtype=np.int32 if len(keys) < 2**31 else np.int64)
        for start in range(0, len(keys), _INSERT_CHUNK):  # chunks bound the temporary arrays
            self._insert(np.arange(start, min(start + _INSERT_CHUNK, len(keys)), dtype=self.slots.dtype))

    def _insert(self, ids: np.ndarray) -> None:
        """Put the keys ``keys[ids]`` in the table."""
        slot = self._home(self.keys[ids])
        while ids.size:  # each round: the keys whose slot is free claim it; the losers probe on
            free = self.slots[slot] == -1
            self.slots[slot[free]] = ids[free]
            placed = self.slots[slot] == ids
            ids, slot = ids[~placed], self._next(slot[~placed])

    def _home(self, x: np.ndarray) -> np.ndarray:
        """The first slot of each key (int64 keys; the product wraps modulo 2^64); shape of ``x``."""
        return ((x * _GOLDEN).view(np.uint64) >> np.uint64(64 - self.bits)).view(np.int64)

    def _next(self, slot: np.ndarray) -> np.ndarray:
        return (slot + 1) & (len(self.slots) - 1)

    def lookup(self, q: np.ndarray) -> np.ndarray:
        """Position of each query key in ``keys``, or ``UNSEEN``; shape ``(m,)`` -> ``(m,)``, int64."""
        slot = self._home(q)
        i = self.slots[slot]
        found = (i >= 0) & (self.keys[i] == q)  # a free slot (-1) reads keys[-1]: masked
        out = np.where(found, i, np.int64(UNSEEN))  # int64 whatever the slots hold
        todo = np.flatnonzero((i >= 0) & ~found)  # the queries whose home slot holds another key
        slot = slot[todo]
        while todo.size:  # each round: the next slot of every query not yet resolved
            slot = self._next(slot)
            i = self.slots[slot]
            hit = (i >= 0) & (self.keys[i] == q[todo])
            out[todo[hit]] = i[hit]
            more = (i >= 0) & ~hit
            todo, slot = todo[more], slot[more]
        return out

    def find(self, key: int) -> int:
        """:meth:`lookup` of one key in plain Python (no NumPy call): its position, or ``UNSEEN``.

        Reads the table through memoryviews, made on the first call.
        """
        if not hasattr(self, "_views"):
            self._views = self.slots.data, self.keys.data, len(self.slots) - 1, 64 - self.bits
        slots, keys, mask, shift = self._views
        slot = ((key * _GOLDEN_INT) & 0xFFFFFFFFFFFFFFFF) >> shift
        while (i := slots[slot]) >= 0:
            if keys[i] == key:
                return i
            slot = (slot + 1) & mask
        return UNSEEN


class NGramIndex:
    """The n-grams of orders 1..N, as sorted hierarchical keys (see the module docstring).

    Parameters
    ----------
    keys : list of N int64 arrays
        ``keys[k - 1]`` (shape ``(n_k,)``, strictly increasing) are the keys
        ``id(prefix) * V + last_word`` of the k-grams; ``keys[0]`` must be ``arange(V)``.
    V : int
        Vocabulary size |V|.
    """

    def __init__(self, keys: list[np.ndarray], V: int):
        if not np.array_equal(keys[0], np.arange(V)):
            raise ValueError("the unigram keys of an NGramIndex must be arange(V): every word is a unigram")
        self.keys = keys
        self.V = V
        self._tables: dict[int, KeyTable] = {}

    def add_order(self, keys: np.ndarray) -> None:
        """Append the sorted keys of the next order (N + 1)."""
        self.keys.append(keys)

    @property
    def order(self) -> int:
        """N, the highest order indexed."""
        return len(self.keys)

    def size(self, k: int) -> int:
        """n_k, the number of k-grams (n_0 = 1: the empty context)."""
        return 1 if k == 0 else len(self.keys[k - 1])

    def prefix(self, k: int) -> np.ndarray:
        """Id of the (k-1)-gram prefix (context) of each k-gram; shape ``(n_k,)`` (zeros for k = 1)."""
        return self.keys[k - 1] // self.V

    def last(self, k: int) -> np.ndarray:
        """Last word of each k-gram; shape ``(n_k,)``."""
        return self.keys[k - 1] % self.V

    def lookup(self, k: int, h: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Id of the k-gram ``h w`` (h: (k-1)-gram ids, w: word ids, same shape), or ``UNSEEN``.

        A negative h (``UNSEEN``, ``NO_CONTEXT``) gives a negative key, found nowhere: ``UNSEEN``.
        """
        h = np.asarray(h, dtype=np.int64)
        if len(self.keys[k - 1]) == 0:
            return np.full(np.broadcast_shapes(h.shape, np.shape(w)), UNSEEN, dtype=np.int64)
        return self.table(k).lookup(np.where(h >= 0, h * self.V + w, -1))  # key -1: found nowhere

    def prepare(self) -> None:
        """Build the hash tables of every order now (otherwise each is built by its first lookup)."""
        for k in range(1, self.order + 1):
            if len(self.keys[k - 1]):
                self.table(k)

    def table(self, k: int) -> KeyTable:
        """The hash table of the k-gram keys (built on first use)."""
        if k not in self._tables:
            self._tables[k] = KeyTable(self.keys[k - 1])
        return self._tables[k]

    def first(self, k: int) -> np.ndarray:
        """First word of each k-gram; shape ``(n_k,)``."""
        return self.keys[0] if k == 1 else self.first(k - 1)[self.prefix(k)]

    def words(self, k: int, rows: slice = slice(None)) -> np.ndarray:
        """Word ids of the k-grams ``rows`` (default all), ``u_1 .. u_k`` in columns; shape ``(n, k)``."""
        key = self.keys[k - 1][rows]  # (n,) key of u_1 .. u_j as j goes down
        words = np.empty((len(key), k), dtype=np.int64)
        for j in range(k, 0, -1):
            g, words[:, j - 1] = np.divmod(key, self.V)  # g: id of u_1 .. u_{j-1}
            if j > 1:
                key = self.keys[j - 2][g]
        return words

    def window_ids(self, stream: np.ndarray, K: int | None = None) -> list[np.ndarray]:
        """Ids of all windows of the stream, for orders k = 1..K (default N).

        Returns a list whose entry k-1 has shape ``(T - k + 1,)``: the id of the k-gram
        ``stream[i : i + k]``, ``UNSEEN`` if it is a valid window not in the index, or
        ``NO_CONTEXT`` if the window contains ``<s>`` after its first position.
        """
        K = self.order if K is None else K
        stream = np.asarray(stream, dtype=np.int64)
        b = _bos_before(stream)
        ids = [stream]
        for k in range(2, K + 1):
            h, w = ids[-1][:-1], stream[k - 1 :]  # (T-k+1,) prefix ids and last words
            valid = _valid_windows(b, k)
            ids.append(np.where(valid, UNSEEN, NO_CONTEXT))
            known = np.flatnonzero(valid & (h >= 0))  # an unseen prefix has no seen extension
            ids[-1][known] = self.lookup(k, h[known], w[known])
        return ids

    def ending_ids(self, stream: np.ndarray, K: int | None = None) -> np.ndarray:
        """Id of the k-gram that ends at each position of the stream, k = 1..K; shape ``(K, T)``.

        Row k-1 holds, for position t, the id of ``stream[t-k+1 : t+1]`` (row 0: the word
        ids), ``UNSEEN`` or ``NO_CONTEXT`` as in :meth:`window_ids`, and ``NO_CONTEXT`` for
        t < k - 1.
        """
        K = self.order if K is None else K
        windows = self.window_ids(stream, K)
        T = len(stream)
        ends = np.full((K, T), NO_CONTEXT, dtype=np.int64)
        for k in range(1, K + 1):
            ends[k - 1, k - 1 :] = windows[k - 1]
        return ends

    def context_ids(self, stream: np.ndarray, K: int | None = None) -> np.ndarray:
        """Context ids of every position of the stream at orders k = 1..K; shape ``(K, T)``.

        Row k-1 holds, for position t, the id of the (k-1)-gram ``stream[t-k+1 : t]``
        (the context of ``stream[t]`` in a k-gram model): 0 for k = 1 (the empty context),
        ``UNSEEN`` if never seen, ``NO_CONTEXT`` if it reaches left of the stream or of the
        ``<s>`` that opens the sentence of position t. It is :meth:`ending_ids` one
        position earlier.
        """
        K = self.order if K is None else K
        ctx = np.full((K, len(stream)), NO_CONTEXT, dtype=np.int64)
        ctx[0] = 0
        ctx[1:, 1:] = self.ending_ids(stream[:-1], K - 1)
        return ctx


class NGramCounts(NGramIndex):
    """Raw counts c(u_1 ... u_k) of every n-gram of orders 1..N of a corpus.

    Build it with :meth:`from_stream`. ``c[k - 1]`` (shape ``(n_k,)``) are the counts of the
    k-grams in id order; ``c[0]`` has one entry per vocabulary word, and ``c[0][<s>] = 0``.
    ``suffix[k - 1]`` (shape ``(n_k,)``) is the id of the (k-1)-gram ``u_2 ... u_k`` of each
    k-gram (0, the empty context, for k = 1).
    """

    def __init__(self, keys: list[np.ndarray], c: list[np.ndarray], suffix: list[np.ndarray], V: int):
        super().__init__(keys, V)
        self.c = c
        self.suffix = suffix

    @classmethod
    def from_stream(cls, stream: np.ndarray, V: int, N: int) -> NGramCounts:
        """Count the n-grams of orders 1..N of an encoded stream (vectorised, one sort per order).

        For k >= 2 the window ids are ``id_k[i] = rank of id_{k-1}[i] * V + stream[i+k-1]``
        among the distinct keys of the valid k-windows; the suffix of the k-gram at position i
        is the (k-1)-gram at position i + 1. The windows are visited in the order of their
        (k-1)-gram prefixes (the previous order's sort), so the keys arrive sorted but for the
        last word and a stable sort puts them in order in about one pass.
        """
        stream = token_ids(stream, "stream", V)
        b = _bos_before(stream)
        keys = [np.arange(V, dtype=np.int64)]
        c = [np.bincount(stream[stream != BOS], minlength=V)]  # (V,) unigram counts, <s> excluded
        suffix = [np.zeros(V, dtype=np.int64)]
        ids = stream  # (T - k + 2,) ids of the windows of order k - 1
        # the positions of the (valid) windows of order k - 1 in the order of their ids, and those ids
        by_id = np.argsort(stream.astype(np.uint16), kind="stable") if V <= 1 << 16 else np.argsort(stream)
        id_of = stream[by_id]
        for k in range(2, N + 1):
            valid = _valid_windows(b, k)  # (T - k + 1,)
            keep = by_id < len(valid)
            keep[keep] = valid[by_id[keep]]  # the valid k-windows, in the order of their prefixes' ids
            by_id = by_id[keep]
            key = id_of[keep] * V + stream[by_id + k - 1]
            order = np.argsort(key, kind="stable")
            by_id, key = by_id[order], key[order]
            new = np.ones(len(key), dtype=bool)  # where a k-gram's windows begin
            np.not_equal(key[1:], key[:-1], out=new[1:])
            first = np.flatnonzero(new)
            keys.append(key[first])
            c.append(np.diff(first, append=len(key)))
            suffix.append(ids[by_id[first] + 1])
            id_of = np.cumsum(new) - 1
            ids = np.full(max(len(stream) - k + 1, 0), NO_CONTEXT)
            ids[by_id] = id_of
        return cls(keys, c, suffix, V)


def adjusted_counts(counts: NGramCounts) -> list[np.ndarray]:
    r"""Kneser-Ney adjusted counts c'(u_1 ... u_k) of every n-gram, as used by KenLM's lmplz.

    .. math::
        c'(u_1 \dots u_k) = \begin{cases}
            c(u_1 \dots u_k) & k = N \text{ or } u_1 = \langle s \rangle \\
            N_{1+}(\bullet\, u_1 \dots u_k) = |\{v : c(v\, u_1 \dots u_k) > 0\}| & \text{otherwise}
        \end{cases}

    An n-gram that starts a sentence has no left extension, so it keeps its raw count; the
    left extension ``<s> u_1 ...`` counts like any other. Returns one array per order,
    shapes ``(n_k,)``.
    """
    N = counts.order
    c_adj = []
    for k in range(1, N):
        n1plus_left = np.bincount(counts.suffix[k], minlength=counts.size(k))  # (n_k,)
        c_adj.append(np.where(counts.first(k) == BOS, counts.c[k - 1], n1plus_left))
    return [*c_adj, counts.c[N - 1]]


def count_of_counts(c: np.ndarray, r_max: int = 4) -> np.ndarray:
    """n_r, the number of n-grams with count exactly r, for r = 1..r_max; shape ``(r_max,)``."""
    return np.bincount(np.minimum(c, r_max + 1), minlength=r_max + 2)[1 : r_max + 1]


def context_totals(index: NGramIndex, k: int, x: np.ndarray) -> np.ndarray:
    r"""Sum of a per-k-gram quantity over each context: :math:`\sum_v x(h\, v)`; shape ``(n_{k-1},)``.

    With the counts, ``x = c``, this is :math:`S_k(h) = c(h \bullet) = \sum_v c(h\, v)`.
    """
    totals = np.bincount(index.prefix(k), weights=x, minlength=index.size(k - 1))
    return totals.astype(float)  # bincount gives int64 when there are no k-grams at all


def take(a: np.ndarray, ids: np.ndarray, fill) -> np.ndarray:
    """``a[ids]`` where ``ids >= 0``, ``fill`` where ids is ``UNSEEN`` or ``NO_CONTEXT``."""
    if len(a) == 0:  # then no id is valid
        return np.full(np.shape(ids), fill, dtype=np.result_type(a, fill))
    return np.where(ids >= 0, a[np.maximum(ids, 0)], fill)
