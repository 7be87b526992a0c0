r"""A plain-Python ARPA reader, line by line: the reference the fast reader is tested against.

An ARPA file is a header, then one section per order k, then an end mark::

    \data\
    ngram 1=<number of 1-grams>
    ngram 2=<number of 2-grams>

    \1-grams:
    <log10 p(w)>	<w>	[<log10 bo(w)>]
    \2-grams:
    <log10 p(w | v)>	<v w>	[<log10 bo(v w)>]
    \end\

:func:`read_arpa_plain` reads it one line at a time with ``str.split`` and ``float``, into
``{(w_1, ..., w_k): (log10 p, log10 bo)}``, with the conventions of
:func:`seqlearn.ngram.arpa.parse_arpa`, which reads the same files by whole columns of bytes:

- text before ``\data\`` and after ``\end\`` is ignored, and so are blank lines;
- a missing backoff is 0 (weight 1), and the highest order's backoffs are read and dropped;
- a log10 value at or below -99 (and ``-inf``) is -inf (probability or weight zero);
- the specials ``<unk>``, ``<s>``, ``</s>`` are always words: one the file does not list is a
  unigram with log10 p = -inf.

A malformed file is a ``ValueError`` naming its line. Fields are split at Python's whitespace,
which for the ASCII bytes a file of words uses is the fast reader's (every byte up to 32).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..data.vocab import BOS, EOS, UNK
from ._arpa_kernels import LOG10_ZERO

__all__ = ["ArpaListing", "read_arpa_plain"]

_COUNT = re.compile(r"ngram\s+(\d+)\s*=\s*(\d+)$")
_SECTION = re.compile(r"\\(\d+)-grams:$")


@dataclass
class ArpaListing:
    """What an ARPA file lists: ``counts[k-1]``, the number of k-grams the header announces, and
    ``entries``, ``{(w_1, ..., w_k): (log10 p, log10 bo)}`` for every n-gram of every order."""

    counts: list[int] = field(default_factory=list)
    entries: dict[tuple[str, ...], tuple[float, float]] = field(default_factory=dict)

    @property
    def order(self) -> int:
        """N, the highest order."""
        return len(self.counts)


def _log10(text: str, line_no: int) -> float:
    """A log10 value; -inf at or below -99."""
    try:
        value = float(text)
    except ValueError:
        raise _error(line_no, f"{text!r} is not a number") from None
    if math.isnan(value):
        raise _error(line_no, "invalid log10 value (NaN)")
    return -math.inf if value <= LOG10_ZERO else value


def _error(line_no: int, message: str) -> ValueError:
    return ValueError(f"malformed ARPA file, line {line_no}: {message}")


def _lines(file) -> Iterable[tuple[int, str]]:
    """``(line number, stripped text)`` of each line of a path or an open text file."""
    if isinstance(file, (str, os.PathLike)):
        with open(file, encoding="utf-8") as f:
            yield from ((i, line.strip()) for i, line in enumerate(f, 1))
    else:
        yield from ((i, line.strip()) for i, line in enumerate(file, 1))


def _entry(listing: ArpaListing, k: int, fields: list[str], line_no: int) -> None:
    """One line ``log10p w_1 ... w_k [log10bo]`` of the k-grams section, checked and added."""
    if len(fields) not in (k + 1, k + 2):
        raise _error(line_no, f"a {k}-gram line needs a log10 probability, {k} words and an optional backoff")
    log10_p = _log10(fields[0], line_no)
    if log10_p > 0:
        raise _error(line_no, "invalid log10 value (a log10 probability must be <= 0)")
    log10_bo = _log10(fields[k + 1], line_no) if len(fields) == k + 2 else 0.0
    words = tuple(fields[1 : k + 1])
    if k > 1 and any((w,) not in listing.entries for w in words):
        raise _error(line_no, f"a word of this {k}-gram is not among the 1-grams")
    if k > 2 and words[:-1] not in listing.entries:
        raise _error(line_no, f"the context of this {k}-gram is not listed among the {k - 1}-grams")
    if words in listing.entries:
        raise _error(line_no, "this n-gram is listed twice")
    listing.entries[words] = (log10_p, log10_bo if k < listing.order else 0.0)


def read_arpa_plain(file) -> ArpaListing:
    r"""Read an ARPA file (a path or a text file object) line by line into an :class:`ArpaListing`.

    Parameters
    ----------
    file : str, os.PathLike or a text file object

    Returns
    -------
    ArpaListing
        the header's counts and ``{(w_1, ..., w_k): (log10 p, log10 bo)}`` (bo 0 where the file
        gives none and at the highest order; -inf for -99 or less).

    Raises
    ------
    ValueError
        naming the line, for a missing ``\data\`` or ``\end\``, a bad header line, a section out
        of order, a bad field count or number, a log10 p > 0, a word that is not a 1-gram, a
        context that is not listed, an n-gram listed twice, or a section whose size is not the
        header's count.

    Examples
    --------
    >>> import io
    >>> text = "\\data\\\nngram 1=2\nngram 2=1\n\n\\1-grams:\n-0.5\ta\t-0.25\n-99\tb\n"
    >>> text += "\n\\2-grams:\n-0.125\ta b\n\n\\end\\\n"
    >>> listing = read_arpa_plain(io.StringIO(text))
    >>> listing.counts
    [2, 1]
    >>> listing.entries[("a",)], listing.entries[("b",)], listing.entries[("a", "b")]
    ((-0.5, -0.25), (-inf, 0.0), (-0.125, 0.0))
    >>> listing.entries[("<unk>",)]  # a special the file does not list
    (-inf, 0.0)
    """
    listing, k, line_no, seen = ArpaListing(), 0, 0, 0  # k: the open section (0: the header)
    phase = "preamble"
    for line_no, text in _lines(file):
        if phase == "preamble":
            phase = "header" if text == "\\data\\" else phase
        elif not text:
            continue
        elif text.startswith("\\"):
            _close(listing, k, seen, line_no)
            if text == "\\end\\" and k == listing.order:
                phase = "done"
                break
            match = _SECTION.match(text)
            if not match or int(match[1]) != k + 1 or k + 1 > listing.order:
                raise _error(line_no, f"unexpected section {text!r} (expected \\{k + 1}-grams: or \\end\\)")
            k, seen = k + 1, 0
        elif k == 0:
            match = _COUNT.match(text)
            if not match or int(match[1]) != listing.order + 1:
                raise _error(line_no, f"expected 'ngram {listing.order + 1}=count', got {text!r}")
            listing.counts.append(int(match[2]))
        else:
            _entry(listing, k, text.split(), line_no)
            seen += 1
    if phase != "done":
        raise _error(
            line_no, "no \\data\\ line: this is not an ARPA file" if phase == "preamble" else "missing \\end\\"
        )
    for special in (UNK, BOS, EOS):
        listing.entries.setdefault((special,), (-math.inf, 0.0))
    return listing


def _close(listing: ArpaListing, k: int, seen: int, line_no: int) -> None:
    """Check the section of the k-grams (or, for k = 0, the header) before the mark on ``line_no``."""
    if k == 0 and not listing.counts:
        raise _error(line_no, "no 'ngram k=count' lines after \\data\\")
    if k > 0 and seen != listing.counts[k - 1]:
        raise _error(line_no, f"the {k}-grams section has {seen} entries; the header announces {listing.counts[k - 1]}")
