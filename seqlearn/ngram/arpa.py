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
formats every number of a block of n-grams at once (:func:`format_log10`, exact: reading gives
back the same float64 bit for bit) and assembles the lines from their pieces (a word or a number
with the separator after it, :class:`_LineAssembler`), two blocks at a time in threads. Reading
streams the file in blocks of lines (memory bounded by the model, not the file), finds the fields
by their whitespace boundaries (:class:`_Lines`), parses the numbers of a whole block at once and
maps words to ids through a hash of their bytes (:class:`_WordIds`). The byte-level kernels
(the float codec, SWAR parsing, the allocator's setting) are in :mod:`seqlearn.ngram._arpa_kernels`;
:mod:`seqlearn.ngram.arpa_plain` reads the same format line by line in plain Python, the reference
:func:`parse_arpa` is tested against. ``format_log10`` and ``LOG10_ZERO`` are re-exported from the
kernels: the package and the tests import them from here.
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
from ._arpa_kernels import (
    _CHUNK,
    _WIDTH,
    LOG10_ZERO,
    _concatenate,
    _fixed_point,
    _is_number,
    _keep_freed_memory,
    _windows,
    format_log10,
)
from .backoff import BackoffTables
from .counts import KeyTable, NGramIndex

__all__ = ["write_arpa", "parse_arpa", "format_log10", "LOG10_ZERO"]


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

    Examples
    --------
    >>> import io
    >>> from seqlearn.ngram import ModifiedKneserNey
    >>> model = ModifiedKneserNey(2, discounts=(0.5, 1, 1.5)).fit([["a", "b"], ["b", "a", "b"]])
    >>> text = io.StringIO()
    >>> model.to_arpa(text)
    >>> tables = parse_arpa(io.StringIO(text.getvalue()))
    >>> tables.order, tables.vocab.itos
    (2, ['<unk>', '<s>', '</s>', 'b', 'a'])
    >>> round(10 ** tables.entries()[("a", "b")][0], 4)  # P(b | a), listed
    0.6625
    """
    _keep_freed_memory()
    reader = _Reader(str(file) if isinstance(file, (str, os.PathLike)) else "the ARPA text")
    for block in _blocks(file):
        reader.feed(block)
        if reader.phase == "done":
            break
    return reader.tables()
