r"""The fast kernels of :mod:`seqlearn.ngram.arpa`: an exact float codec, SWAR number parsing, byte moves.

:mod:`~seqlearn.ngram.arpa` reads and writes ARPA files by whole columns of NumPy bytes; what
makes that fast, and exact, is here:

- **writing numbers** (:func:`format_log10`): 17 significant digits of each float64, computed
  exactly by integer arithmetic (Dekker's product with a power of ten that float64 holds
  exactly), so that reading gives back the same float64 bit for bit;
- **moving bytes** (:func:`_concatenate`): lines assembled from their pieces, each moved as
  one 32-byte unit;
- **reading numbers** (:func:`_fixed_point`): fixed-point texts parsed eight digits at a time
  (SWAR, :func:`_eight_digits`) and correctly rounded (:func:`_decimal_quotient`);
- **the allocator** (:func:`_keep_freed_memory`): glibc's malloc kept from returning a block's
  temporaries to the system at every block.

The plain-Python reader :func:`seqlearn.ngram.arpa_plain.read_arpa_plain` is the reference the
fast reader is tested against.
"""

from __future__ import annotations

import numpy as np

__all__ = ["format_log10", "LOG10_ZERO"]

LOG10_ZERO = -99.0
"""What an ARPA file writes for log10(0); values at or below it are read back as zero."""


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
