"""Vocabulary, tokenisation and integer encoding shared by every chapter.

Conventions (used by the n-gram models of Chapter 1 and every later language model):

* ids 0, 1, 2 are always ``<unk>``, ``<s>`` and ``</s>``; word ids follow, most frequent
  first (ties broken alphabetically), so a vocabulary is a pure function of the corpus;
* a sentence is encoded as ``<s> w_1 ... w_k </s>``: one ``<s>`` (never predicted) and one
  ``</s>`` (predicted like a word); a corpus is the concatenation of its encoded sentences,
  one flat integer array (see :func:`encode_sentences`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import chain, repeat

import numpy as np

from ..validation import integer, token_ids

__all__ = [
    "UNK",
    "BOS",
    "EOS",
    "Vocab",
    "tokenize",
    "decode_utf8",
    "read_text",
    "read_sentences",
    "encode_sentences",
    "sentence_starts",
]

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
SPECIALS = (UNK, BOS, EOS)


def tokenize(text: str, lower: bool = False) -> list[list[str]]:
    """Split ``text`` into sentences (one per non-blank line) of whitespace-separated tokens."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if lower:
        text = text.lower()
    return [tokens for tokens in map(str.split, text.splitlines()) if tokens]


def decode_utf8(data: bytes, source: str) -> str:
    """``data`` decoded as UTF-8; ``ValueError`` naming ``source`` and the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ValueError(
            f"{source}, line {line}, column {column}: byte 0x{data[e.start]:02x} is not UTF-8 text "
            "(convert the file to UTF-8, e.g. with iconv)"
        ) from None


def read_text(path) -> str:
    """The text of a UTF-8 file; ``ValueError`` naming the file and line if it is not UTF-8."""
    with open(path, "rb") as f:
        return decode_utf8(f.read(), str(path))


def read_sentences(path, lower: bool = False) -> list[list[str]]:
    """Read a UTF-8 text file with one sentence per line (see :func:`tokenize`)."""
    return tokenize(read_text(path), lower=lower)


def _sentence_list(sentences) -> list:
    """``sentences`` as a list, after checking it is a collection of token lists."""
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of token lists, not a str (use tokenize(text) first)")
    sentences = list(sentences)
    for i, s in enumerate(sentences):
        if isinstance(s, str):
            raise TypeError(f"sentence {i} is a str; each sentence must be a list of tokens")
    return sentences


class Vocab:
    """A bijection between tokens and integer ids, with ``<unk>``, ``<s>``, ``</s>`` at 0, 1, 2.

    Parameters
    ----------
    tokens : iterable of str
        The word types, in id order (duplicates and specials are skipped).
    """

    unk_id, bos_id, eos_id = 0, 1, 2

    def __init__(self, tokens: Iterable[str] = ()):
        self.itos: list[str] = list(SPECIALS)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(SPECIALS)}
        for t in tokens:
            if not isinstance(t, str):
                raise TypeError(f"vocabulary tokens must be str, got {type(t).__name__}")
            if t not in self.stoi:
                self.stoi[t] = len(self.itos)
                self.itos.append(t)

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_freq: int = 1, max_size: int | None = None) -> Vocab:
        """Vocabulary of the tokens seen at least ``min_freq`` times, most frequent first.

        ``max_size`` caps the number of word types (specials not counted). Tokens left out map
        to ``<unk>`` when encoding.
        """
        min_freq = integer(min_freq, "min_freq", low=1)
        if max_size is not None:
            max_size = integer(max_size, "max_size", low=0)
        sentences = _sentence_list(sentences)
        counts = Counter(chain.from_iterable(sentences))  # counted in C; the specials dropped after
        for special in SPECIALS:
            counts.pop(special, None)
        if not counts:
            raise ValueError("cannot build a vocabulary from an empty corpus (no tokens)")
        kept = _by_frequency([t for t, c in counts.items() if c >= min_freq], counts.__getitem__)
        return cls(kept[:max_size] if max_size is not None else kept)

    @classmethod
    def build_and_encode(cls, sentences: Iterable[Sequence[str]]) -> tuple[Vocab, np.ndarray]:
        """``Vocab.build(sentences)`` and ``encode_sentences(sentences, vocab)``, in one pass over the tokens.

        Each token is numbered on first sight (ids 3, 4, ... in order of appearance; the specials
        keep theirs); the counts of those ids order the vocabulary, and a gather renumbers them.
        """
        sentences = _sentence_list(sentences)
        lengths = _lengths(sentences)
        return cls._numbered(chain.from_iterable(sentences), lengths)

    @classmethod
    def build_and_encode_text(cls, text: str) -> tuple[Vocab, np.ndarray]:
        """``Vocab.build_and_encode(tokenize(text))`` without a list per sentence.

        The tokens come from one ``text.split()``; the number of tokens of each non-blank line,
        from the characters' codes (:func:`_line_lengths`).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return cls._numbered(text.split(), _line_lengths(text))

    @classmethod
    def _numbered(cls, tokens: Iterable[str], lengths: np.ndarray) -> tuple[Vocab, np.ndarray]:
        """The vocabulary of ``tokens`` and the stream of the sentences of ``lengths`` (S,) they make up."""
        seen = defaultdict(None, {t: i for i, t in enumerate(SPECIALS)})
        seen.default_factory = seen.__len__  # an unseen token gets the next id
        first_seen = np.fromiter(map(seen.__getitem__, tokens), np.int64, int(lengths.sum()))
        if len(seen) == len(SPECIALS):
            raise ValueError("cannot build a vocabulary from an empty corpus (no tokens)")
        counts = np.bincount(first_seen, minlength=len(seen))
        types = list(seen)[len(SPECIALS) :]
        vocab = cls(_by_frequency(types, lambda t: counts[seen[t]]))
        renumber = np.arange(len(seen))  # first-seen id -> vocabulary id
        renumber[[seen[t] for t in vocab.itos[len(SPECIALS) :]]] = np.arange(len(SPECIALS), len(seen))
        return vocab, _framed(lengths, renumber[first_seen])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        """The id of ``token``, or ``unk_id`` if it is not in the vocabulary."""
        return self.stoi.get(token, self.unk_id)

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} types: {self.itos[3:8]}{'...' if len(self) > 8 else ''})"

    def encode(self, tokens: Sequence[str], strict: bool = False) -> np.ndarray:
        """Ids of ``tokens`` (shape ``(len(tokens),)``, int64); unknown tokens become ``<unk>``.

        With ``strict=True`` an unknown token raises ``ValueError`` instead.
        """
        if isinstance(tokens, str):
            raise TypeError("encode takes a list of tokens, not a str (split it first)")
        if strict:
            missing = [t for t in tokens if t not in self.stoi]
            if missing:
                raise ValueError(f"unknown token(s) not in the vocabulary: {missing[:5]}")
        return np.fromiter((self.stoi.get(t, self.unk_id) for t in tokens), dtype=np.int64, count=len(tokens))

    def decode(self, ids) -> list[str]:
        """Tokens of integer ``ids``; raises ``ValueError`` for ids outside ``[0, len(self))``."""
        ids = token_ids(ids, "ids", len(self))
        return [self.itos[i] for i in ids.ravel().tolist()]


def encode_sentences(sentences: Iterable[Sequence[str]], vocab: Vocab) -> np.ndarray:
    """Encode sentences as one flat stream ``<s> w_1 ... w_k </s> <s> ...`` of int64 ids.

    Shape ``(sum_i (len(s_i) + 2),)``; unknown tokens become ``<unk>``. Sentence ``i`` starts
    at ``sentence_starts(stream)[i]``.
    """
    sentences = _sentence_list(sentences)
    if not sentences:
        raise ValueError("cannot encode an empty corpus (no sentences)")
    lengths = _lengths(sentences)
    ids = map(vocab.stoi.get, chain.from_iterable(sentences), repeat(Vocab.unk_id))
    return _framed(lengths, np.fromiter(ids, dtype=np.int64, count=int(lengths.sum())))


def _lengths(sentences: list) -> np.ndarray:
    """The number of tokens of each sentence; shape ``(S,)``."""
    return np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))


_CODES = 0x3001
"""Every whitespace character (``str.isspace``) has a code below this."""


@cache
def _whitespace_and_breaks() -> tuple[np.ndarray, np.ndarray]:
    """Which codes below ``_CODES`` are whitespace (``str.split``) and which break lines (``str.splitlines``);
    two boolean tables of shape ``(_CODES + 1,)``, the last entry (every code above) False."""
    chars = [chr(c) for c in range(_CODES)]
    space = np.array([c.isspace() for c in chars] + [False])
    breaks = np.array([len(f"a{c}a".splitlines()) == 2 for c in chars] + [False])
    return space, breaks


def _line_lengths(text: str) -> np.ndarray:
    """The number of tokens of each non-blank line of ``text``, as :func:`tokenize` splits it; shape ``(S,)``.

    A token starts at a character that is not whitespace and follows whitespace (or the start).
    A line holds the tokens that start between two line breaks (``\\r\\n`` is two breaks around
    an empty line, which, like every blank line, is dropped).
    """
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), np.uint8)
    else:
        codes = np.minimum(np.frombuffer(text.encode("utf-32-le"), np.uint32), _CODES)
    space, breaks = _whitespace_and_breaks()
    is_space = space[codes]
    starts = np.flatnonzero(~is_space & np.concatenate([[True], is_space[:-1]]))  # (tokens,)
    tokens_before_break = np.searchsorted(starts, np.flatnonzero(breaks[codes]))
    lengths = np.diff(tokens_before_break, prepend=0, append=len(starts))
    return lengths[lengths > 0]


def _framed(lengths: np.ndarray, word_ids: np.ndarray) -> np.ndarray:
    """The stream ``<s> w_1 ... w_k </s> <s> ...`` of sentences of ``lengths`` (S,) whose words' ids are
    ``word_ids`` (end to end); shape ``(sum(lengths) + 2 S,)``."""
    starts = np.cumsum(lengths + 2) - (lengths + 2)  # (S,) positions of the <s> tokens
    stream = np.empty(len(word_ids) + 2 * len(lengths), dtype=np.int64)
    is_word = np.ones(len(stream), dtype=bool)
    is_word[starts] = is_word[starts + lengths + 1] = False
    stream[starts], stream[starts + lengths + 1] = Vocab.bos_id, Vocab.eos_id
    stream[is_word] = word_ids
    return stream


def _by_frequency(types: list, count) -> list:
    """``types`` most frequent first (``count(t)``), ties in alphabetical order."""
    return sorted(types, key=lambda t: (-count(t), t))


def sentence_starts(stream: np.ndarray) -> np.ndarray:
    """Positions of the ``<s>`` tokens that open each sentence of an encoded stream."""
    return np.flatnonzero(np.asarray(stream) == Vocab.bos_id)
