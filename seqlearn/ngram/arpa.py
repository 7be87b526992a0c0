r"""The ARPA text format of backoff n-gram models: writing and reading, whole columns at a time.

An ARPA file lists, for each order k, n-grams with the log10 of their probability and
(below the highest order) the log10 of their backoff weight::

    \data\
    ngram 1=<number of 1-grams>
    ngram 2=<number of 2-grams>

    \1-grams:
    <log10 p(w)>	<w>	<log10 bo(w)>
    ...
    \2-grams:
    <log10 p(w | v)>	<v w>
    ...
    \end\

It is queried with the backoff rule of :mod:`seqlearn.ngram.backoff`. A log10 value of
-99 or less stands for probability (or weight) zero.

Both directions work on NumPy arrays of bytes, not on Python objects per n-gram. Writing
formats every number of a block of n-grams at once (:func:`format_log10`: 17 significant
digits by exact integer arithmetic, so reading gives back the same float64 bit for bit)
and assembles the lines from their pieces (a word or a number with the separator after
it), each moved as one 32-byte unit (:func:`_concatenate`), two blocks at a time in
threads. Reading streams the file in blocks of lines (memory bounded by the model, not the
file), finds the fields by
their whitespace boundaries, parses the numbers of a whole block at once (fixed-point texts
eight digits at a time and correctly rounded, :func:`_fixed_point`; any other layout by one
NumPy conversion) and maps words to ids through a hash of their bytes (:class:`_WordIds`).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._files import replacing
from ..data.vocab import Vocab, decode_utf8
from .backoff import BackoffTables
from .counts import KeyTable, NGramIndex

__all__ = ["write_arpa", "parse_arpa", "format_log10", "LOG10_ZERO"]

LOG10_ZERO = -99.0
"""What an ARPA file writes for log10(0); values at or below it are read back as zero."""

_HEADER_LINE = re.compile(r"ngram\s+(\d+)\s*=\s*(\d+)$")
_SECTION_LINE = re.compile(r"\\(\d+)-grams:$")
_BLOCK_LINES = 1 << 15
"""N-grams formatted per block when writing."""
_WORKERS = 2
"""Threads that assemble blocks of lines when writing."""
_BLOCK_BYTES = 1 << 20
"""Bytes of text parsed per block when reading."""

# -- writing ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _writing(file):
    """Yield a function that writes bytes of UTF-8 text to ``file``: to an open text file as text, or
    for a path to a temporary file beside it that replaces the path only when the block completes
    (never a half-written file)."""
    if not isinstance(file, (str, os.PathLike)):
        yield lambda data: file.write(data.decode("utf-8"))
        return
    with replacing(file) as tmp, open(tmp, "xb") as f:
        yield f.write


_DIGITS = 17
"""Significant digits written: enough for any float64 to read back as itself."""
_WIDTH = 27
"""Bytes of a formatted number's row: sign, two integer digits, point, 22 decimals, and a spare byte
(for the separator that follows the text in a line)."""
_SPLIT = 134217729.0
"""2^27 + 1, Dekker's constant for splitting a float64 into two 26-bit halves."""


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's split ``a = hi + lo``, each half with at most 26 significant bits; shapes of ``a``."""
    hi = _SPLIT * a - (_SPLIT * a - a)
    return hi, a - hi


def _two_product(a: np.ndarray, b: np.ndarray, b_split=None) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's exact product: ``a * b = p + e`` exactly, ``p = fl(a * b)``; shapes of ``a``.
    ``b_split``: ``_split(b)``, when it is known."""
    p = a * b
    (a_hi, a_lo), (b_hi, b_lo) = _split(a), _split(b) if b_split is None else b_split
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


_POW10 = np.array([float(10**i) for i in range(23)])
"""10^0 .. 10^22, the powers of ten a float64 holds exactly."""
_POW10_SPLIT = _split(_POW10)


def _significand(a: np.ndarray, E: np.ndarray) -> np.ndarray:
    r"""D = round(a 10^(16 - E)), exactly (int64), for :math:`10^{-6} \le a < 100` and E in [-6, 1]."""
    k = _DIGITS - 1 - E
    p, e = _two_product(a, _POW10[k], (_POW10_SPLIT[0][k], _POW10_SPLIT[1][k]))
    r = np.rint(p)
    return r.astype(np.int64) + np.rint((p - r) + e).astype(np.int64)


def _windows(buf: np.ndarray, width: int, dtype=None) -> np.ndarray:
    """Every ``width``-byte window of the uint8 array ``buf`` as one element, window i at byte i (a view);
    the elements are raw bytes, or of ``dtype`` (whose size is ``width``)."""
    dtype = np.dtype((np.void, width)) if dtype is None else dtype
    return np.ndarray((max(len(buf) - width + 1, 0),), dtype=dtype, buffer=buf, strides=(1,))


def format_log10(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""ARPA texts of log10 values: characters ``(n, 27)`` uint8, and each text's byte range in them.

    The text of ``x[i]`` is ``chars.ravel()[start[i] : end[i]]``, in row i. A value with
    :math:`10^{-5} \le |x| < 100` is written in fixed point with its 17 significant digits
    :math:`D = \mathrm{round}(|x|\, 10^{16 - E})`, :math:`E = \lfloor \log_{10} |x| \rfloor`,
    computed exactly (Dekker's product with a power of ten that float64 holds exactly),
    trailing zeros dropped. 17 correctly rounded digits identify a float64, so the text reads
    back as x itself. x <= -99 (and -inf) is written ``-99``, 0 as ``0``, and the rare rest
    (tiny, large or NaN) by ``repr``. A fixed-point row holds a sign, the digits of
    :math:`10^1` and :math:`10^0`, the point and the digits of :math:`10^{-1}` to
    :math:`10^{-22}`, then a spare byte that no text uses.
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), LOG10_ZERO)
    a = np.abs(x)
    in_range = (a >= 1e-5) & (a < 100)
    row = _WIDTH * np.arange(len(x))  # where each row starts
    if in_range.all():
        rows, first, stop = _fixed_point_rows(a, x < 0)
        return rows, row + first, row + stop
    fixed = np.flatnonzero(in_range)
    rows, first, stop = _fixed_point_rows(a[fixed], x[fixed] < 0)
    chars = np.empty((len(x), _WIDTH), dtype=np.uint8)
    chars[:, 0], chars[fixed] = ord("0"), rows
    start, end = row.copy(), row + 1  # "0" unless written otherwise
    start[fixed] += first
    end[fixed] = row[fixed] + stop
    for i in np.flatnonzero(~in_range & (x != 0)).tolist():  # tiny, large or NaN: rare
        text = repr(float(x[i])).encode()
        chars[i, : len(text)], end[i] = np.frombuffer(text, np.uint8), start[i] + len(text)
    return chars, start, end


def _fixed_point_rows(a: np.ndarray, negative: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The fixed-point rows of :func:`format_log10` for :math:`10^{-5} \le a < 100` (the sign from
    ``negative``): characters ``(m, 27)``, and the column where each text starts and ends.

    The digit of :math:`10^e` goes to column 2 - e for e >= 0 and 3 - e below the point: the 17
    digits are written from column 3 - E, which is right for every decimal and puts the (at most
    two) integer digits one column too far right, and those are then rewritten. A text starts at
    column ``first``; the column before its first digit holds a minus sign, which is part of the
    text for a negative value.
    """
    E, D = _scientific(a)
    groups = _four_digit_groups(D)  # (m, 5): 20 digits, the first 3 zeros
    text = _FOUR_DIGITS[groups].view(np.uint8)[:, 3:]  # (m, 17) ASCII: 10^E .. 10^(E-16)
    m = len(a)
    rows = np.full((m, _WIDTH), ord("0"), dtype=np.uint8)
    _windows(rows.ravel(), _DIGITS)[_WIDTH * np.arange(m) + 3 - E] = text.view(f"V{_DIGITS}")[:, 0]
    one, zero = E == 1, E == 0
    first = np.where(one, 1, 2) - negative  # the first digit, or the sign before it
    rows[:, 0] = ord("-")  # a sign wherever the text may start with one
    rows[:, 1] = np.where(one, text[:, 0], ord("-"))
    rows[:, 2] = np.where(one, text[:, 1], np.where(zero, text[:, 0], ord("0")))
    rows[:, 3] = ord(".")
    last = E - _DIGITS + 1 + _trailing_zeros(groups)  # exponent of the last nonzero digit
    return rows, first, np.where(last >= 0, 3, 4 - last)  # no decimals: no point


def _scientific(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""E and D of :func:`format_log10` for :math:`10^{-5} \le a < 100`; shapes ``(m,)``, int64.

    E counts the powers of ten :math:`10^{-4} .. 10^1` at or below a (as float64 holds them);
    where that rounding puts D outside :math:`[10^{16}, 10^{17})`, E moves by one.
    """
    E = np.full(len(a), -5, dtype=np.int64)
    for e in range(-4, 2):
        E += a >= 10.0**e
    D = _significand(a, E)
    off = np.flatnonzero((D >= 10**_DIGITS) | (D < 10 ** (_DIGITS - 1)))
    E[off] += np.where(D[off] >= 10**_DIGITS, 1, -1)
    D[off] = _significand(a[off], E[off])
    return E, D


_FOUR_DIGITS = (np.arange(10_000)[:, None] // [1000, 100, 10, 1] % 10 + ord("0")).astype(np.uint8).view(np.uint32)[:, 0]
"""The ASCII digits of 0000 .. 9999, four bytes as one uint32 each; shape ``(10000,)``."""
_TRAILING_ZEROS = (np.arange(10_000)[:, None] % [10, 100, 1000, 10_000] == 0).sum(axis=1)
"""The trailing zeros of 0000 .. 9999 written with four digits; shape ``(10000,)``."""


def _four_digit_groups(D: np.ndarray) -> np.ndarray:
    """Each D < 10^20 as five numbers of four decimal digits, most significant first; ``(m,)`` -> ``(m, 5)``.

    Two int64 divisions split D into halves below 10^8 and 10^12; uint32 divisions (by a constant,
    as multiplications) do the rest.
    """
    groups = np.empty((len(D), 5), dtype=np.uint32)
    high = D // 10**8
    low = (D - high * 10**8).astype(np.uint32)
    groups[:, 3] = low // 10_000
    groups[:, 4] = low - groups[:, 3] * np.uint32(10_000)
    top = high // 10**8
    high = (high - top * 10**8).astype(np.uint32)
    groups[:, 1] = high // 10_000
    groups[:, 2] = high - groups[:, 1] * np.uint32(10_000)
    groups[:, 0] = top
    return groups


def _trailing_zeros(groups: np.ndarray) -> np.ndarray:
    """The trailing decimal zeros of numbers given by :func:`_four_digit_groups` whose first group is
    not zero; shape ``(m,)``."""
    n = groups.shape[1]
    zeros, last = np.full(len(groups), 4 * (n - 1)), groups[:, 0]  # the zeros after the last nonzero group
    for c in range(1, n):
        nonzero = groups[:, c] != 0
        zeros, last = np.where(nonzero, 4 * (n - 1 - c), zeros), np.where(nonzero, groups[:, c], last)
    return zeros + _TRAILING_ZEROS[last]


_CHUNK = 32
"""Bytes moved at once when lines are assembled from their pieces (:func:`_concatenate`)."""


def _concatenate(src: np.ndarray, start: np.ndarray, length: np.ndarray) -> bytes:
    """The byte ranges ``src[start[i] : start[i] + length[i]]``, concatenated; shapes ``(m,)``.

    Each piece is moved as whole ``_CHUNK``-byte windows (a longer piece as several), all in one
    assignment in the order of the output (NumPy assigns in index order): the bytes a window
    carries past its piece land where the next pieces go, and those are written after it.
    ``src`` ends with ``_CHUNK`` spare bytes.
    """
    chunks = -(-length // _CHUNK)
    if chunks.max(initial=0) > 1:  # a piece longer than one window (a long word): one piece per window
        piece = np.repeat(np.arange(len(length)), chunks)
        j = np.arange(len(piece)) - (np.cumsum(chunks) - chunks)[piece]  # the window's place in its piece
        start, length = start[piece] + _CHUNK * j, np.minimum(length[piece] - _CHUNK * j, _CHUNK)
    out_start = np.cumsum(length) - length
    size = int(length.sum())
    out = np.empty(size + _CHUNK, dtype=np.uint8)
    _windows(out, _CHUNK)[out_start] = _windows(src, _CHUNK)[start]
    return out[:size].tobytes()


def _word_bytes(vocab: Vocab) -> list[bytes]:
    """The UTF-8 bytes of each word, in id order."""
    return [w.encode("utf-8") for w in vocab.itos]


class _LineAssembler:
    r"""The text of blocks of ARPA lines ``p<TAB>w_1 w_2 ... w_k[<TAB>bo]<NL>``, in UTF-8.

    A line is assembled from k + 1 or k + 2 pieces, each ending with the separator that follows
    it: ``p<TAB>``, ``w_j<SPACE>``, the last word with ``<TAB>`` or ``<NL>``, ``bo<NL>``. They
    are read from one buffer: the vocabulary three times (each word followed by a space, a tab
    or a newline), then the numbers of the block as :func:`format_log10` writes them.
    """

    SEPARATORS = b" \t\n"

    def __init__(self, vocab: Vocab, max_lines: int):
        words = _word_bytes(vocab)
        self.word_len = np.array([len(w) + 1 for w in words], dtype=np.int64)
        table = int(self.word_len.sum())
        first = np.cumsum(self.word_len) - self.word_len
        self.word_start = first + table * np.arange(3)[:, None]  # (3, |V|): followed by space, tab, newline
        self.numbers_at = 3 * table
        self.src = np.zeros(self.numbers_at + 2 * max_lines * _WIDTH + _CHUNK, dtype=np.uint8)
        text = b"".join(w + bytes([sep]) for sep in self.SEPARATORS for w in words)
        self.src[: self.numbers_at] = np.frombuffer(text, np.uint8)

    def __call__(self, words: np.ndarray, log10_p: np.ndarray, log10_bo: np.ndarray | None) -> bytes:
        """The lines of a block of n-grams; ``words`` (b, k) ids, ``log10_p`` and ``log10_bo`` (b,)."""
        b, k = words.shape
        numbers = [(0, log10_p, 1)] + ([] if log10_bo is None else [(k + 1, log10_bo, 2)])  # column, x, separator
        start = np.empty((b, k + len(numbers)), dtype=np.int64)
        length = np.empty_like(start)
        at = self.numbers_at
        for column, x, sep in numbers:
            # backoff weights take few distinct values (functions of a context's small counts): each is written once
            values, which = (x, slice(None)) if column == 0 else np.unique(x, return_inverse=True)
            chars, first, end = format_log10(values)
            chars = chars.ravel()
            chars[end] = self.SEPARATORS[sep]
            self.src[at : at + chars.size] = chars
            start[:, column], length[:, column] = (at + first)[which], (end + 1 - first)[which]
            at += chars.size
        last = 2 if log10_bo is None else 1  # the last word is followed by the newline, or by a tab and bo
        for j in range(k):
            sep = 0 if j < k - 1 else last
            start[:, 1 + j], length[:, 1 + j] = self.word_start[sep, words[:, j]], self.word_len[words[:, j]]
        return _concatenate(self.src, start.ravel(), length.ravel())


def write_arpa(file, tables: BackoffTables) -> None:
    """Write a backoff model in ARPA format to ``file`` (a path or a text file object).

    The k-grams are written in the id order of ``tables.index``, a block of
    ``_BLOCK_LINES`` lines at a time, the blocks assembled by ``_WORKERS`` threads (NumPy
    releases the interpreter in its loops); a path is replaced only once the file is complete.
    """
    index, N = tables.index, tables.order
    per_thread = threading.local()

    def block(k: int, rows: slice) -> bytes:
        if not hasattr(per_thread, "lines"):
            per_thread.lines = _LineAssembler(tables.vocab, _BLOCK_LINES)
        bo = tables.log10_bo[k - 1][rows] if k < N else None
        return per_thread.lines(index.words(k, rows), tables.log10_p[k - 1][rows], bo)

    with _writing(file) as write, ThreadPoolExecutor(_WORKERS) as pool:
        write(("\\data\\\n" + "".join(f"ngram {k}={index.size(k)}\n" for k in range(1, N + 1))).encode())
        for k in range(1, N + 1):
            write(f"\n\\{k}-grams:\n".encode())
            blocks = [(k, slice(a, a + _BLOCK_LINES)) for a in range(0, index.size(k), _BLOCK_LINES)]
            for text in _in_order(pool, block, blocks):
                write(text)
        write(b"\n\\end\\\n")


def _in_order(pool: ThreadPoolExecutor, func, jobs: list[tuple]) -> Iterator:
    """``func(*job)`` for each job, in order, computed by ``pool`` at most ``2 * _WORKERS`` jobs ahead."""
    pending: deque = deque()
    for job in jobs:
        pending.append(pool.submit(func, *job))
        if len(pending) > 2 * _WORKERS:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


# -- reading ----------------------------------------------------------------------------------


def _error(line_no: int, message: str) -> ValueError:
    return ValueError(f"malformed ARPA file, line {line_no}: {message}")


def _blocks(file) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines (each ends with a newline; text files as UTF-8)."""
    f = open(file, "rb") if isinstance(file, (str, os.PathLike)) else file  # noqa: SIM115 (closed below)
    rest = b""
    try:
        while block := f.read(_BLOCK_BYTES):
            block = rest + (block.encode("utf-8") if isinstance(block, str) else block)
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield block[:cut]
        if rest:
            yield rest + b"\n"
    finally:
        if f is not file:
            f.close()


class _Lines:
    """The whitespace-separated tokens of a block of lines, located in its bytes.

    Whitespace is every byte up to 32 (space, tab, newline, carriage return and the other
    control characters). ``buf``: the bytes (after a newline, with 8 zero bytes appended);
    ``start``, ``end`` (shape ``(t,)``): each token's byte range in ``buf``; ``first``,
    ``count`` (shape ``(n,)``): per line, the index of its first token and its number of
    tokens. Lines are numbered from ``line0`` (1-based).
    """

    def __init__(self, block: bytes, line0: int):
        self.buf = np.frombuffer(b"\n" + block + bytes(8), np.uint8)  # a newline before: every token has an edge
        self.line0 = line0
        space = self.buf <= 32
        edges = np.flatnonzero(space[1:] != space[:-1]) + 1  # a token's start, then its end, ...
        self.start, self.end = edges[0::2], edges[1::2]
        before = np.searchsorted(self.start, np.flatnonzero(self.buf == 10))  # tokens before each newline
        self.first, self.count = before[:-1], np.diff(before)  # per line (each ends with a newline)
        # the 8 bytes from every offset, as one little-endian uint64 (overlapping views of buf)
        self.words8 = _windows(self.buf, 8, "<u8")

    def __len__(self) -> int:
        return len(self.count)

    def text(self, line: int) -> str:
        """The line, stripped (decoded; ``line`` counts from 0 within the block)."""
        if not self.count[line]:
            return ""
        a, b = self.start[self.first[line]], self.end[self.first[line] + self.count[line] - 1]
        return self.buf[a:b].tobytes().decode("utf-8")

    def marks(self, lo: int, hi: int) -> np.ndarray:
        """The lines in [lo, hi) that start with a backslash (section marks)."""
        nonblank = lo + np.flatnonzero(self.count[lo:hi])
        return nonblank[self.buf[self.start[self.first[nonblank]]] == ord("\\")]

    def padded(self, tokens: np.ndarray, width: int) -> np.ndarray:
        """The bytes of ``tokens`` (indices), zero-padded to ``width`` (a multiple of 8); ``(m, width // 8)`` '<u8'."""
        s, n = self.start[tokens], self.end[tokens] - self.start[tokens]
        columns = []
        for c in range(0, width, 8):
            keep = np.clip(n - c, 0, 8)  # bytes of this 8-byte column that belong to the token
            mask = np.where(keep == 8, ~np.uint64(0), (np.uint64(1) << (8 * keep).astype(np.uint64)) - np.uint64(1))
            columns.append(self.words8[np.minimum(s + c, len(self.words8) - 1)] & mask)
        return np.stack(columns, axis=1).astype("<u8", copy=False)

    def numbers(self, tokens: np.ndarray) -> np.ndarray:
        """The tokens as float64; ``ValueError`` at the line of the first that is not a number."""
        value, ok = _fixed_point(self.buf, self.words8, self.start[tokens], self.end[tokens])
        rest = np.flatnonzero(~ok)
        if rest.size == 0:
            return value
        tokens = tokens[rest]
        width = -(-int((self.end[tokens] - self.start[tokens]).max()) // 8) * 8
        try:
            if width > 64:
                raise ValueError
            value[rest] = self.padded(tokens, width).view(f"S{width}").ravel().astype(np.float64)
            return value
        except ValueError:
            for t in tokens.tolist():
                text = self.buf[self.start[t] : self.end[t]].tobytes().decode("utf-8")
                if len(text) > 64 or not _is_number(text):
                    line = int(np.searchsorted(self.first, t, side="right")) - 1
                    raise _error(self.line0 + line, f"{text!r} is not a number") from None
            raise


_ZEROS8 = np.uint64(0x3030303030303030)  # "00000000"
_HIGH_NIBBLES = np.uint64(0xF0F0F0F0F0F0F0F0)
_POW10_U = np.array([10**i for i in range(19)], dtype=np.uint64)
_TWO_53 = np.uint64(2**53)


def _eight_digits(word: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` ASCII digits of each little-endian 8-byte ``word``, the rest read as zeros.

    Returns ``(value, ok)``: the 8-digit integer (uint64; the first byte is the most
    significant digit) and whether those ``n`` bytes were all digits. Three multiply-shift
    steps combine pairs, quadruples and octets of digits (SWAR, as fast number parsers do).
    """
    keep_bytes = np.clip(n, 0, 8).astype(np.uint64)
    keep = np.where(keep_bytes == 8, ~np.uint64(0), (np.uint64(1) << (np.uint64(8) * keep_bytes)) - np.uint64(1))
    w = (word & keep) | (_ZEROS8 & ~keep)
    ok = ((w & _HIGH_NIBBLES) == _ZEROS8) & (((w + np.uint64(0x0606060606060606)) & _HIGH_NIBBLES) == _ZEROS8)
    v = w - _ZEROS8
    v = ((v * np.uint64(10)) + (v >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    v = ((v * np.uint64(100)) + (v >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    return ((v * np.uint64(10_000)) + (v >> np.uint64(32))) & np.uint64(0xFFFFFFFF), ok


def _decimal_quotient(M: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Correctly rounded :math:`M / 10^f` for integers ``M`` < 2^63 (uint64) and f <= 22; ``(value, ok)``.

    :math:`10^f` is a float64 exactly, so for :math:`M \le 2^{53}` one division rounds the exact
    quotient once. Above, :math:`M = M_h + M_l` (float64 and a small exact rest), :math:`q = fl(M_h / P)`,
    the remainder :math:`r = M_h - qP` exactly (Dekker's product) and the quotient is
    :math:`q + (r + M_l)/P` to about :math:`2^{-51}` ulp; its rounding is the correct one
    unless it lies that close to a midpoint between two float64 (or at a power of two), the
    rows ``ok`` is False for (of the order of one in :math:`10^{9}`).
    """
    P = _POW10[f]
    Mh = M.astype(np.float64)
    Ml = (M.astype(np.int64) - Mh.astype(np.int64)).astype(np.float64)  # |Ml| <= 512, exact
    q = Mh / P
    qP, qP_err = _two_product(q, P)
    c = (((Mh - qP) - qP_err) + Ml) / P
    t = q + c
    e = (q - t) + c  # q + c = t + e
    ulp = np.spacing(np.abs(t))
    near_midpoint = np.abs(np.abs(e) - ulp / 2) <= ulp * 2.0**-30
    at_power_of_two = np.frexp(t)[0] == 0.5
    exact = M <= _TWO_53  # M and 10^f exact: one rounding
    return np.where(exact, Mh / P, t), exact | ~(near_midpoint | at_power_of_two)


def _fixed_point(buf: np.ndarray, words8: np.ndarray, start: np.ndarray, end: np.ndarray):
    r"""Parse tokens ``[-]I[.F]`` (I at most two digits, F at most 22) without a per-number conversion.

    ``buf``: the bytes; ``words8``: the little-endian uint64 at every offset of ``buf``;
    ``start``, ``end``: each token's byte range. Returns ``(value, ok)``: the float64 of
    each token, correctly rounded (equal bit for bit to ``float(text)``), where ``ok``; the
    other tokens (another layout, too many digits, not a number, or a quotient too close to
    a rounding boundary) are left to :meth:`numpy.ndarray.astype`. The integer
    :math:`M = I\,10^{|F|} + F` is read eight digits at a time (:func:`_eight_digits`), then
    divided by :math:`10^{|F|}` (:func:`_decimal_quotient`).
    """
    negative = buf[start] == ord("-")
    s = start + negative
    digit = [(buf[s + i] - np.uint8(48)) < 10 for i in range(3)]
    L = np.where(~digit[0], 0, np.where(~digit[1], 1, np.where(~digit[2], 2, 3)))
    d0, d1 = buf[s].astype(np.uint64) - np.uint64(48), buf[s + 1].astype(np.uint64) - np.uint64(48)
    I = np.where(L == 2, d0 * np.uint64(10) + d1, np.where(L == 1, d0, np.uint64(0)))
    point = s + L
    has_point = (point < end) & (buf[np.minimum(point, len(buf) - 1)] == ord("."))
    f = np.where(has_point, end - point - 1, 0)
    ok = (L <= 2) & (L + f >= 1) & ((point == end) | has_point) & (f <= 22)
    f = np.minimum(f, 22)
    last = len(words8) - 1
    v0, ok0 = _eight_digits(words8[np.minimum(point + 1, last)], f)
    v1, ok1 = _eight_digits(words8[np.minimum(point + 9, last)], f - 8)
    v2, ok2 = _eight_digits(words8[np.minimum(point + 17, last)], f - 16)
    head = v0 * np.uint64(100_000_000) + v1  # the first 16 digits of F, zero padded
    F = np.where(
        f <= 16,
        head // _POW10_U[np.clip(16 - f, 0, 16)],
        head * _POW10_U[np.clip(f - 16, 0, 6)] + v2 // _POW10_U[np.clip(24 - f, 2, 8)],
    )
    size = I.astype(np.float64) * _POW10[f] + head.astype(np.float64) * _POW10[np.clip(f - 16, 0, 6)]  # >= M
    ok &= ok0 & ok1 & ok2 & (size < 2.0**62)
    M = np.where(ok, I * _POW10_U[np.minimum(f, 18)] + F, np.uint64(0))
    value, exact = _decimal_quotient(M, f)
    return np.where(negative, -value, value), ok & exact


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class _WordIds:
    """Vocabulary ids of tokens, by an exact match of their bytes through a 64-bit hash of them.

    Every word is zero-padded to ``width`` bytes (the longest word's, rounded up to 8) and
    hashed with its length; a table of the words' hashes (:class:`KeyTable`, the salt chosen
    so that no two words share one) gives a candidate id, which counts only if its bytes and
    length equal the token's.
    """

    def __init__(self, vocab: Vocab):
        words = _word_bytes(vocab)
        length = np.array([len(w) for w in words], dtype=np.int64)
        self.width = max(-(-int(length.max()) // 8) * 8, 8)
        lines = _Lines(b"\n".join(words) + b"\n", 1)
        self.rows, self.length = lines.padded(lines.first, self.width), length
        self.salt = 0
        while _repeats(hashes := self._hash(self.rows, length)):
            self.salt += 1
        self.table = KeyTable(hashes)

    def _hash(self, rows: np.ndarray, length: np.ndarray) -> np.ndarray:
        """A 64-bit hash of each padded row and its length (xor, multiply and shift per 8 bytes)."""
        h = (length.astype(np.uint64) + np.uint64(self.salt)) * np.uint64(0xFF51AFD7ED558CCD)
        for c in range(rows.shape[1]):
            h = (h ^ rows[:, c]) * np.uint64(0xC4CEB9FE1A85EC53)
            h ^= h >> np.uint64(29)
        return h.view(np.int64)

    def __call__(self, lines: _Lines, tokens: np.ndarray) -> np.ndarray:
        """Ids of the tokens (indices into ``lines``), -1 where not in the vocabulary; shape ``(m,)``."""
        length = lines.end[tokens] - lines.start[tokens]
        fits = length <= self.width
        rows = lines.padded(tokens[fits], self.width)
        ids = np.full(len(tokens), -1, dtype=np.int64)
        found = self.table.lookup(self._hash(rows, length[fits]))
        same = (found >= 0) & (self.rows[found] == rows).all(axis=1) & (self.length[found] == length[fits])
        ids[np.flatnonzero(fits)[same]] = found[same]
        return ids


def _repeats(x: np.ndarray) -> bool:
    """Whether two entries of ``x`` are equal."""
    x = np.sort(x)
    return bool((x[1:] == x[:-1]).any())


class _Section:
    """The entries of one section in file order, as columns: ``lines`` (line numbers, for error
    messages), ``log10_p``, ``log10_bo`` (if kept) and ``keys`` (the k-gram keys, k >= 2; the
    words of k = 1 are a list, ``words``).

    The columns hold up to the number of entries the header announces, so that a section of
    the announced size is gathered without a copy; they start at ``_FIRST_ROWS`` rows at most
    and double as needed. Entries past the announced number are counted, not kept (the section
    is then refused).
    """

    def __init__(self, k: int, mark: int, announced: int, keep_bo: bool):
        self.k, self.mark, self.announced, self.size = k, mark, announced, 0
        dtypes = {"lines": np.int32, "log10_p": np.float64}  # lines: int64 once past 2^31 - 1
        dtypes |= {"log10_bo": np.float64} if keep_bo else {}
        dtypes |= {"keys": np.int64} if k > 1 else {}
        self.columns = {name: np.empty(min(announced, _FIRST_ROWS), dtype) for name, dtype in dtypes.items()}
        self.words: list[str] = []

    def add(self, **values: np.ndarray) -> None:
        """Append a block's entries: one array (shape ``(m,)``) per column."""
        a, b = self.size, self.size + len(values["lines"])
        self.size = b
        if b > self.announced:
            return
        if b > len(self.columns["lines"]):
            self._grow(min(self.announced, max(b, 2 * len(self.columns["lines"]))))
        if values["lines"][-1] >= 2**31 and self.columns["lines"].dtype == np.int32:
            self.columns["lines"] = self.columns["lines"].astype(np.int64)
        for name, column in self.columns.items():
            column[a:b] = values[name]

    def _grow(self, rows: int) -> None:
        for name, column in self.columns.items():
            self.columns[name] = np.empty(rows, column.dtype)
            self.columns[name][: len(column)] = column

    def column(self, name: str) -> np.ndarray:
        """The entries' values of one column, in file order; shape ``(size,)``."""
        return self.columns[name][: self.size]


_FIRST_ROWS = 1 << 20
"""Rows a column of :class:`_Section` holds at first (at most; fewer if fewer are announced)."""


class _Reader:
    """An ARPA file parsed block by block: the header line by line, the sections by arrays."""

    def __init__(self, source: str):
        self.source = source
        self.line = 0  # lines read so far
        self.phase = "preamble"  # -> "header" (after \data\) -> "sections" (after the first mark) -> "done"
        self.counts: list[int] = []
        self.header_lines: list[int] = []
        self.header_done = False
        self.section: _Section | None = None
        self.log10_p: list[np.ndarray] = []
        self.log10_bo: list[np.ndarray] = []
        self.vocab: Vocab
        self.index: NGramIndex
        self.word_ids: _WordIds

    def feed(self, block: bytes) -> None:
        try:
            block.decode("utf-8")
        except UnicodeDecodeError:
            decode_utf8(b"\n" * self.line + block, self.source)  # raises, naming the line in the whole file
        lines = _Lines(block, self.line + 1)
        self.line += len(lines)
        at = 0
        while self.phase in ("preamble", "header") and at < len(lines):
            self._header_line(lines, at)
            at += 1
        if self.phase == "sections":
            self._section_lines(lines, at)

    def _header_line(self, lines: _Lines, i: int) -> None:
        """One line before the first section: text before ``\\data\\``, or a header line."""
        text, line_no = lines.text(i), lines.line0 + i
        if self.phase == "preamble":
            self.phase = "header" if text == "\\data\\" else "preamble"
        elif text.startswith("\\"):
            if not self.counts:
                raise _error(line_no, "no 'ngram k=count' lines after \\data\\")
            self.phase = "sections"
            self._mark(text, line_no)
        elif text and self.header_done:
            raise _error(line_no, f"n-gram line before any \\1-grams: section: {text!r}")
        elif text:
            self._count_line(text, line_no)
        else:
            self.header_done = bool(self.counts) or self.header_done

    def _count_line(self, text: str, line_no: int) -> None:
        match = _HEADER_LINE.match(text)
        if not match:
            raise _error(line_no, f"expected 'ngram k=count', got {text!r}")
        k, n = int(match[1]), int(match[2])
        if k != len(self.counts) + 1:
            raise _error(line_no, f"expected the count of the {len(self.counts) + 1}-grams, got 'ngram {k}=...'")
        self.counts.append(n)
        self.header_lines.append(line_no)

    def _section_lines(self, lines: _Lines, at: int) -> None:
        """Lines ``at..`` of a block: entries of the current section, and section marks."""
        for mark in [*lines.marks(at, len(lines)).tolist(), len(lines)]:
            if self.phase == "done":
                return
            nonblank = at + np.flatnonzero(lines.count[at:mark])
            if nonblank.size:
                self._entries(lines, nonblank)
            if mark < len(lines):
                self._mark(lines.text(mark), lines.line0 + mark)
            at = mark + 1

    def _mark(self, text: str, line_no: int) -> None:
        """A section mark: close the open section, open the next one or end the file."""
        if self.section is not None:
            self._close(line_no)
        k = len(self.log10_p) + 1
        if text == "\\end\\":
            if k - 1 != len(self.counts):
                raise _error(line_no, f"\\end\\ after {k - 1} sections; the header announces {len(self.counts)}")
            self.phase = "done"
            return
        match = _SECTION_LINE.match(text)
        if not match or int(match[1]) != k or k > len(self.counts):
            raise _error(line_no, f"unexpected section {text!r} (expected \\{k}-grams: or \\end\\)")
        # the highest order's backoffs (if any) are checked, not kept
        self.section = _Section(k, line_no, self.counts[k - 1], keep_bo=k == 1 or k < len(self.counts))

    def _entries(self, lines: _Lines, rows: np.ndarray) -> None:
        """The entries ``log10p w_1 ... w_k [log10bo]`` on the non-blank lines ``rows`` of a block."""
        section = self.section
        assert section is not None
        k, count, first = section.k, lines.count[rows], lines.first[rows]
        bad = np.flatnonzero((count != k + 1) & (count != k + 2))
        if bad.size:
            raise _error(
                lines.line0 + rows[bad[0]],
                f"a {k}-gram line needs a log10 probability, {k} words and an optional backoff",
            )
        line_no = lines.line0 + rows
        has_bo = count == k + 2
        numbers = lines.numbers(np.concatenate([first, first[has_bo] + k + 1]))  # one conversion for both
        log10_p, log10_bo = numbers[: len(rows)], np.zeros(len(rows))
        log10_bo[has_bo] = numbers[len(rows) :]
        bad = np.flatnonzero(np.isnan(log10_p) | np.isnan(log10_bo) | (log10_p > 0))
        if bad.size:
            raise _error(line_no[bad[0]], "invalid log10 value (a log10 probability must be <= 0, and none may be NaN)")
        words = first[:, None] + np.arange(1, k + 1)  # (m, k) token indices
        if k == 1:
            section.words += [lines.buf[lines.start[t] : lines.end[t]].tobytes().decode("utf-8") for t in words[:, 0]]
        keys = {"keys": self._keys(lines, words, line_no)} if k > 1 else {}
        section.add(lines=line_no, log10_p=log10_p, log10_bo=log10_bo, **keys)

    def _keys(self, lines: _Lines, tokens: np.ndarray, line_no: np.ndarray) -> np.ndarray:
        """Hierarchical keys of k-grams whose words are the tokens ``(m, k)``; shape ``(m,)``."""
        m, k = tokens.shape
        words = self.word_ids(lines, tokens.ravel()).reshape(m, k)
        unknown = np.flatnonzero((words < 0).any(axis=1))
        if unknown.size:
            raise _error(line_no[unknown[0]], f"a word of this {k}-gram is not among the 1-grams")
        h = words[:, 0]
        if k > 2:  # consecutive k-grams often share their context (a sorted file): look each run up once
            new = np.flatnonzero(np.r_[True, (words[1:, :-1] != words[:-1, :-1]).any(axis=1)])
            for j in range(2, k):
                h = self.index.lookup(j, h[new] if j == 2 else h, words[new, j - 1])
            h = np.repeat(h, np.diff(np.r_[new, m]))
        missing = np.flatnonzero(h < 0)
        if missing.size:
            raise _error(line_no[missing[0]], f"the context of this {k}-gram is not listed among the {k - 1}-grams")
        return h * len(self.vocab) + words[:, -1]

    def _close(self, next_mark: int) -> None:
        """Check the section's size against the header and add its order to the model."""
        section = self.section
        assert section is not None
        k = section.k
        if section.size != self.counts[k - 1]:
            raise _error(
                next_mark,
                f"the {k}-grams section (from line {section.mark}) has {section.size} entries; "
                f"the header (line {self.header_lines[k - 1]}) announces {self.counts[k - 1]}",
            )
        if k == 1:
            self._unigrams(section)
        else:
            keys, order = _sorted(section.column("keys"), section)
            self.index.add_order(keys)
            self.log10_p.append(section.column("log10_p")[order])
            if k < len(self.counts):
                self.log10_bo.append(section.column("log10_bo")[order])
        self.section = None

    def _unigrams(self, section: _Section) -> None:
        """The vocabulary (the unigrams, specials first) and the order-1 arrays, by word id."""
        self.vocab = Vocab(section.words)
        V = len(self.vocab)
        ids = np.array([self.vocab.stoi[w] for w in section.words], dtype=np.int64)
        _sorted(ids, section)
        self.log10_p.append(np.full(V, -np.inf))
        self.log10_p[0][ids] = section.column("log10_p")
        if len(self.counts) > 1:
            self.log10_bo.append(np.zeros(V))
            self.log10_bo[0][ids] = section.column("log10_bo")
        self.index = NGramIndex([np.arange(V, dtype=np.int64)], V)
        self.word_ids = _WordIds(self.vocab)

    def tables(self) -> BackoffTables:
        if self.phase == "preamble":
            raise _error(self.line, "no \\data\\ line: this is not an ARPA file")
        if self.phase != "done":
            raise _error(self.line, "missing \\end\\")
        for x in self.log10_p + self.log10_bo:
            x[x <= LOG10_ZERO] = -np.inf  # in place: no second copy of the model
        self.index.prepare()  # a loaded model is ready to score
        return BackoffTables(self.vocab, self.index, self.log10_p, self.log10_bo)


def _sorted(keys: np.ndarray, section: _Section) -> tuple[np.ndarray, np.ndarray | slice]:
    """``keys`` sorted, and the sorting permutation (``slice(None)`` for keys already in order, as a
    sorted file lists them); ``ValueError`` at the line of an n-gram listed twice."""
    if np.all(keys[1:] > keys[:-1]):
        return keys, slice(None)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    repeated = np.flatnonzero(keys[1:] == keys[:-1])
    if repeated.size:
        raise _error(int(section.column("lines")[order][repeated + 1].min()), "this n-gram is listed twice")
    return keys, order


def parse_arpa(file) -> BackoffTables:
    """Read an ARPA file (path or text file object) into the arrays of a backoff model.

    Anything before ``\\data\\`` is ignored. Raises ``ValueError`` naming the line for a
    missing ``\\data\\`` or ``\\end\\``, bad header, unknown or out-of-order section, bad
    number, wrong number of fields, a section whose size differs from its header count, a
    word that is not a unigram, a k-gram whose context is not listed, an n-gram listed
    twice, or a byte that is not UTF-8. The vocabulary is that of the unigrams
    (``<unk>``, ``<s>``, ``</s>`` first; a special missing from the file has probability 0).
    """
    _keep_freed_memory()
    reader = _Reader(str(file) if isinstance(file, (str, os.PathLike)) else "the ARPA text")
    for block in _blocks(file):
        reader.feed(block)
        if reader.phase == "done":
            break
    return reader.tables()


_HEAP_WARMUP = 8 << 20
"""Bytes of the allocation :func:`_keep_freed_memory` makes and frees."""


def _keep_freed_memory() -> None:
    """Let the allocator keep the memory of one block's temporaries for the next block.

    glibc's malloc returns freed memory to the system eagerly until the process frees a large
    block made by ``mmap``; it then raises its thresholds to that block's size (its dynamic mmap
    threshold, at most 32 MiB). A block of the file has a few MiB of temporaries, below what
    triggers that, so without help they are given back and faulted in again at every block. One
    untouched 8 MiB array, made and freed, moves the thresholds as a larger temporary would: a
    3-gram load then takes about 12,000 page faults instead of 120,000. Elsewhere it costs nothing.
    """
    untouched = np.empty(_HEAP_WARMUP, dtype=np.uint8)  # no page of it is ever touched: no memory used
    del untouched
