r"""The ARPA text format of backoff n-gram models: writing and parsing.

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

It is queried with the backoff rule

.. math::
    P(w \mid h) = \begin{cases} p(h\, w) & \text{if } h\, w \text{ is listed} \\
                  bo(h)\, P(w \mid h') & \text{otherwise} \end{cases}

where h' drops the first word of h and bo(h) = 1 for an h that is not listed. A log10
value of -99 or less stands for probability (or weight) zero. The model that reads a file
back, :class:`seqlearn.ngram.models.BackoffModel`, lives with the other models.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass

import numpy as np

from .._files import replacing
from ..data.vocab import read_text
from .counts import NGramIndex

__all__ = ["ArpaSection", "write_arpa", "parse_arpa", "LOG10_ZERO"]

LOG10_ZERO = -99.0
"""What an ARPA file writes for log10(0); values at or below it are read back as zero."""

_HEADER_LINE = re.compile(r"ngram\s+(\d+)\s*=\s*(\d+)$")
_SECTION_LINE = re.compile(r"\\(\d+)-grams:$")


@contextlib.contextmanager
def _writing(file):
    """Yield a text file object to write: an open file as it is, or for a path a temporary file
    beside it that replaces the path only when the block completes (never a half-written file)."""
    if not isinstance(file, (str, os.PathLike)):
        yield file
        return
    with replacing(file) as tmp, open(tmp, "x", encoding="utf-8") as f:
        yield f


def _format(x: np.ndarray) -> list[str]:
    """log10 values as text: shortest round-trip decimals, -99 for zero probability."""
    return ["-99" if v <= LOG10_ZERO else repr(v) for v in x.tolist()]


def _ngram_texts(itos: list[str], index: NGramIndex) -> list[list[str]]:
    """The text ``"u_1 ... u_k"`` of every k-gram of the index, order by order."""
    texts = [list(itos)]
    for k in range(2, index.order + 1):
        prev = texts[-1]
        texts.append([f"{prev[h]} {itos[w]}" for h, w in zip(index.prefix(k).tolist(), index.last(k).tolist())])
    return texts


def write_arpa(file, itos: list[str], index: NGramIndex, tables) -> None:
    """Write an ARPA file.

    Parameters
    ----------
    file : path or text file object
    itos : list of str
        The word of each id.
    index : NGramIndex
        The n-grams (their words) of orders 1..N.
    tables : list of N tuples ``(ids, log10_p, log10_bo)``
        Per order k: the ids of the k-grams to write (shape ``(m_k,)``), their log10
        probabilities and their log10 backoff weights (same shape; ``None`` at order N).
    """
    texts = _ngram_texts(itos, index)
    with _writing(file) as f:
        f.write("\\data\\\n")
        for k, (ids, _, _) in enumerate(tables, start=1):
            f.write(f"ngram {k}={len(ids)}\n")
        for k, (ids, log10_p, log10_bo) in enumerate(tables, start=1):
            f.write(f"\n\\{k}-grams:\n")
            words = [texts[k - 1][i] for i in ids.tolist()]
            if log10_bo is None:
                lines = [f"{p}\t{u}\n" for p, u in zip(_format(log10_p), words)]
            else:
                lines = [f"{p}\t{u}\t{b}\n" for p, u, b in zip(_format(log10_p), words, _format(log10_bo))]
            f.writelines(lines)
        f.write("\n\\end\\\n")


@dataclass
class ArpaSection:
    """The k-grams of one ARPA section, in file order.

    ``ngrams``: tuples of k words; ``log10_p``, ``log10_bo`` (shape ``(n_k,)``; backoffs
    not given are 0); ``lines``: the 1-based line number of each entry.
    """

    ngrams: list[tuple[str, ...]]
    log10_p: np.ndarray
    log10_bo: np.ndarray
    lines: np.ndarray


def _error(line_no: int, message: str) -> ValueError:
    return ValueError(f"malformed ARPA file, line {line_no}: {message}")


def _parse_header(lines: list[str], start: int) -> tuple[list[int], list[int], int]:
    """Read the ``ngram k=n`` lines after ``\\data\\``: the counts, their line numbers, the next line index."""
    counts: list[int] = []
    header_lines: list[int] = []
    i = start
    while i < len(lines) and lines[i] and not lines[i].startswith("\\"):
        match = _HEADER_LINE.match(lines[i])
        if not match:
            raise _error(i + 1, f"expected 'ngram k=count', got {lines[i]!r}")
        k, n = int(match[1]), int(match[2])
        if k != len(counts) + 1:
            raise _error(i + 1, f"expected the count of the {len(counts) + 1}-grams, got 'ngram {k}=...'")
        counts.append(n)
        header_lines.append(i + 1)
        i += 1
    if not counts:
        raise _error(i + 1, "no 'ngram k=count' lines after \\data\\")
    return counts, header_lines, i


def _numbers(texts: list[str], rows: np.ndarray) -> np.ndarray:
    """Floats of ``texts`` (one per row); ``ValueError`` at the line of the first that is not a number."""
    try:
        return np.array(texts, dtype=float)
    except ValueError:
        bad = next(i for i, t in enumerate(texts) if not _is_number(t))
        raise _error(rows[bad] + 1, f"{texts[bad]!r} is not a number") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_section(lines: list[str], rows: np.ndarray, k: int) -> ArpaSection:
    """The k-grams on lines ``rows`` (0-based indices of non-blank lines ``log10p w_1 ... w_k [log10bo]``)."""
    fields = [tuple(lines[i].split()) for i in rows.tolist()]  # tuples of str: no garbage-collector work
    n_fields = np.fromiter(map(len, fields), dtype=np.int64, count=len(fields))
    bad = np.flatnonzero((n_fields != k + 1) & (n_fields != k + 2))
    if bad.size:
        raise _error(rows[bad[0]] + 1, f"a {k}-gram line needs a log10 probability, {k} words and an optional backoff")
    log10_p = _numbers([f[0] for f in fields], rows)
    log10_bo = _numbers([f[k + 1] if len(f) == k + 2 else "0" for f in fields], rows)
    bad = np.flatnonzero(np.isnan(log10_p) | np.isnan(log10_bo) | (log10_p > 0))
    if bad.size:
        raise _error(rows[bad[0]] + 1, "invalid log10 value (a log10 probability must be <= 0, and none may be NaN)")
    return ArpaSection([tuple(f[1 : k + 1]) for f in fields], log10_p, log10_bo, rows + 1)


def parse_arpa(file) -> list[ArpaSection]:
    """Parse an ARPA file (path or text file object) into one :class:`ArpaSection` per order.

    Anything before ``\\data\\`` is ignored. Raises ``ValueError`` naming the line for a
    missing ``\\data\\`` or ``\\end\\``, bad header, unknown or out-of-order section, bad
    number, wrong number of fields, or a section whose size differs from its header count.
    """
    text = read_text(file) if isinstance(file, (str, os.PathLike)) else file.read()
    lines = [line.strip() for line in text.splitlines()]
    if "\\data\\" not in lines:
        raise _error(len(lines), "no \\data\\ line: this is not an ARPA file")
    counts, header_lines, start = _parse_header(lines, lines.index("\\data\\") + 1)
    marks = [i for i in range(start, len(lines)) if lines[i][:1] == "\\"]  # section and \end\ lines
    entries = [i for i in range(start, marks[0] if marks else len(lines)) if lines[i]]
    if entries:
        raise _error(entries[0] + 1, f"n-gram line before any \\1-grams: section: {lines[entries[0]]!r}")
    sections: list[ArpaSection] = []
    for k, (mark, end) in enumerate(zip(marks, [*marks[1:], len(lines)]), start=1):
        if lines[mark] == "\\end\\":
            if len(sections) != len(counts):
                raise _error(mark + 1, f"\\end\\ after {len(sections)} sections; the header announces {len(counts)}")
            return sections
        match = _SECTION_LINE.match(lines[mark])
        if not match or int(match[1]) != k or k > len(counts):
            raise _error(mark + 1, f"unexpected section {lines[mark]!r} (expected \\{k}-grams: or \\end\\)")
        rows = np.array([i for i in range(mark + 1, end) if lines[i]], dtype=np.int64)
        if len(rows) != counts[k - 1]:
            raise _error(
                end + 1,
                f"the {k}-grams section (from line {mark + 1}) has {len(rows)} entries; "
                f"the header (line {header_lines[k - 1]}) announces {counts[k - 1]}",
            )
        sections.append(_parse_section(lines, rows, k))
    raise _error(len(lines), "missing \\end\\")
