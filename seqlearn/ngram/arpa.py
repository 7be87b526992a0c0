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
and assembles the lines by one gather from the word and number texts. Reading streams the
file in blocks of lines (memory bounded by the model, not the file), finds the fields by
their whitespace boundaries, parses the numbers of a whole block at once (fixed-point texts
eight digits at a time and correctly rounded, :func:`_fixed_point`; any other layout by one
NumPy conversion) and maps words to ids through a hash of their bytes (:class:`_WordIds`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

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
_BLOCK_LINES = 1 << 16
"""N-grams formatted per block when writing."""
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
_WIDTH = 26
"""Characters of a formatted number: sign, two integer digits, point, 22 decimals."""
_SPLIT = 134217729.0
"""2^27 + 1, Dekker's constant for splitting a float64 into two 26-bit halves."""
_POW10 = np.array([float(10**i) for i in range(23)])
"""10^0 .. 10^22, the powers of ten a float64 holds exactly."""


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's exact product: ``a * b = p + e`` exactly, ``p = fl(a * b)``; shapes of ``a``."""
    p = a * b
    a_hi = _SPLIT * a - (_SPLIT * a - a)
    b_hi = _SPLIT * b - (_SPLIT * b - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _significand(a: np.ndarray, E: np.ndarray) -> np.ndarray:
    r"""D = round(a 10^(16 - E)), exactly (int64), for :math:`10^{-6} \le a < 100` and E in [-6, 1]."""
    p, e = _two_product(a, _POW10[_DIGITS - 1 - E])
    r = np.rint(p)
    return r.astype(np.int64) + np.rint((p - r) + e).astype(np.int64)


def format_log10(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""ARPA texts of log10 values: characters ``(n, 26)`` uint8, and each text's byte range in them.

    The text of ``x[i]`` is ``chars.ravel()[start[i] : end[i]]``. A value with
    :math:`10^{-5} \le |x| < 100` is written in fixed point with its 17 significant digits
    :math:`D = \mathrm{round}(|x|\, 10^{16 - E})`, :math:`E = \lfloor \log_{10} |x| \rfloor`,
    computed exactly (Dekker's product with a power of ten that float64 holds exactly),
    trailing zeros dropped. 17 correctly rounded digits identify a float64, so the text reads
    back as x itself. x <= -99 (and -inf) is written ``-99``, 0 as ``0``, and the rare rest
    (tiny, large or NaN) by ``repr``. A row holds a sign, the digits of :math:`10^1` and
    :math:`10^0`, the point and the digits of :math:`10^{-1}` to :math:`10^{-22}`; the
    fixed-point rows come first, grouped by E, so that each group is written by slices.
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), LOG10_ZERO)
    a = np.abs(x)
    in_range = (a >= 1e-5) & (a < 100)
    E, D = _scientific(a[in_range])
    by_E = np.concatenate([np.flatnonzero(np.equal(E, e)) for e in range(-6, 2)])  # E is in [-6, 1]
    value = np.concatenate([np.flatnonzero(in_range)[by_E], np.flatnonzero(~in_range)])  # the value of each row
    E, m = E[by_E], len(by_E)
    digits = np.full((m, 24), ord("0"), dtype=np.uint8)  # ASCII digits of 10^1 .. 10^-22
    text = _decimal_digits(D[by_E])  # (m, 17): 10^E .. 10^(E-16)
    bounds = np.searchsorted(E, np.arange(-6, 3))
    for e, lo, hi in zip(range(-6, 2), bounds[:-1], bounds[1:]):
        digits[lo:hi, 1 - e : 1 - e + _DIGITS] = text[lo:hi]
    chars = np.empty((len(x), _WIDTH), dtype=np.uint8)
    chars[:m, 1:3], chars[:m, 3], chars[:m, 4:] = digits[:, :2], ord("."), digits[:, 2:]
    last = E - (_DIGITS - 1 - np.argmax(text[:, ::-1] != ord("0"), axis=1))  # exponent of the last nonzero digit
    negative = x[value[:m]] < 0
    start = np.zeros(len(x), dtype=np.int64)
    end = np.ones(len(x), dtype=np.int64)  # the other rows: "0" unless written below
    start[:m] = np.where(E >= 1, 1, 2) - negative  # the first digit, or the sign before it
    chars[np.flatnonzero(negative), start[:m][negative]] = ord("-")
    end[:m] = np.where(last >= 0, 3, 4 - last)  # no decimals: no point
    chars[m:, 0] = ord("0")
    for row in (m + np.flatnonzero(x[value[m:]] != 0)).tolist():  # tiny, large or NaN: rare
        text_i = repr(float(x[value[row]])).encode()
        chars[row, : len(text_i)], end[row] = np.frombuffer(text_i, np.uint8), len(text_i)
    row_of = np.empty(len(x), dtype=np.int64)
    row_of[value] = np.arange(len(x))
    return chars, _WIDTH * row_of + start[row_of], _WIDTH * row_of + end[row_of]


def _scientific(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""E and D of :func:`format_log10` for :math:`10^{-5} \le a < 100`; shapes ``(m,)``, int64."""
    E = np.floor(np.log10(a)).astype(np.int64)
    D = _significand(a, E)
    off = np.flatnonzero((D >= 10**_DIGITS) | (D < 10 ** (_DIGITS - 1)))  # log10 rounded across a power of ten
    E[off] += np.where(D[off] >= 10**_DIGITS, 1, -1)
    D[off] = _significand(a[off], E[off])
    return E, D


_FOUR_DIGITS = np.frombuffer("".join(f"{i:04d}" for i in range(10_000)).encode(), dtype=np.uint32)
"""The ASCII digits of 0000 .. 9999, four bytes as one uint32 each; shape ``(10000,)``."""


def _decimal_digits(D: np.ndarray) -> np.ndarray:
    """The 17 ASCII decimal digits of each D < 10^17, most significant first; ``(m,)`` -> ``(m, 17)`` uint8."""
    groups = np.empty((len(D), 5), dtype=np.uint32)  # four digits each, as four bytes
    for j in range(4, -1, -1):
        D, groups[:, j] = np.divmod(D, 10_000)
        groups[:, j] = _FOUR_DIGITS[groups[:, j]]
    return groups.view(np.uint8)[:, 3:]


def _gather(src: np.ndarray, start: np.ndarray, length: np.ndarray) -> bytes:
    """The byte ranges ``src[start[i] : start[i] + length[i]]``, concatenated; shapes ``(m,)``."""
    out_start = np.cumsum(length) - length
    index = np.intp if len(src) + length.sum() >= 2**31 else np.int32  # half the bytes to move when it fits
    shift = np.repeat((start - out_start).astype(index), length)
    shift += np.arange(len(shift), dtype=index)
    return src[shift].tobytes()


def _section_text(words: np.ndarray, log10_p: np.ndarray, log10_bo: np.ndarray | None, vocab_text) -> bytes:
    """The lines ``p<TAB>w_1 ... w_k[<TAB>bo]`` of a block of n-grams (UTF-8); ``words`` (b, k) ids."""
    text, word_start, word_len = vocab_text
    b, k = words.shape
    numbers = [format_log10(log10_p), *([] if log10_bo is None else [format_log10(log10_bo)])]
    src = np.concatenate([text, np.frombuffer(b"\t \n", np.uint8), *(chars.ravel() for chars, _, _ in numbers)])
    tab, space, newline = len(text), len(text) + 1, len(text) + 2
    # the line's pieces in columns: p, tab, (w_j, space or tab) for j = 1..k, [bo, tab]
    starts = np.empty((b, 2 * (k + len(numbers))), dtype=np.int64)
    lengths = np.empty_like(starts)
    for i, (_, start, end) in enumerate(numbers):
        column = 0 if i == 0 else 2 * (k + 1)
        starts[:, column], lengths[:, column] = len(text) + 3 + i * b * _WIDTH + start, end - start
    for j in range(k):
        starts[:, 2 + 2 * j], lengths[:, 2 + 2 * j] = word_start[words[:, j]], word_len[words[:, j]]
    starts[:, 1::2], lengths[:, 1::2] = tab, 1
    starts[:, 3 : 2 * k : 2] = space  # between the words
    starts[:, -1] = newline  # the last separator of a line is its newline
    return _gather(src, starts.ravel(), lengths.ravel())


def _vocab_text(vocab: Vocab) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The words' UTF-8 bytes end to end, and the start and length of each word's."""
    data = [w.encode("utf-8") for w in vocab.itos]
    length = np.array([len(d) for d in data], dtype=np.int64)
    return np.frombuffer(b"".join(data), np.uint8), np.cumsum(length) - length, length


def write_arpa(file, tables: BackoffTables) -> None:
    """Write a backoff model in ARPA format to ``file`` (a path or a text file object).

    The k-grams are written in the id order of ``tables.index``, a block of
    ``_BLOCK_LINES`` lines at a time; a path is replaced only once the file is complete.
    """
    index, N = tables.index, tables.order
    vocab_text = _vocab_text(tables.vocab)
    with _writing(file) as write:
        write(("\\data\\\n" + "".join(f"ngram {k}={index.size(k)}\n" for k in range(1, N + 1))).encode())
        for k in range(1, N + 1):
            write(f"\n\\{k}-grams:\n".encode())
            words = index.words(k)  # (n_k, k)
            for a in range(0, index.size(k), _BLOCK_LINES):
                rows = slice(a, a + _BLOCK_LINES)
                bo = tables.log10_bo[k - 1][rows] if k < N else None
                write(_section_text(words[rows], tables.log10_p[k - 1][rows], bo, vocab_text))
        write(b"\n\\end\\\n")


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
        self.words8 = np.ndarray((len(self.buf) - 7,), dtype="<u8", buffer=self.buf, strides=(1,))

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
        length = _vocab_text(vocab)[2]
        self.width = max(-(-int(length.max()) // 8) * 8, 8)
        lines = _Lines(b"\n".join(w.encode("utf-8") for w in vocab.itos) + b"\n", 1)
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
