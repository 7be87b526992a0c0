"""seqlearn's own binary format of a backoff model: the arrays of its tables in one ``.npz`` file.

An ARPA file is text that every tool reads; loading it means parsing every number. This
format stores :class:`~seqlearn.ngram.backoff.BackoffTables` as they are in memory (an
uncompressed NumPy ``.npz``): the words, and per order k the sorted keys ``keys{k}``,
``log10_p{k}`` and, below the highest order, ``log10_bo{k}`` (float64, -inf for zero), so
loading is reading the arrays and building the hash tables of the keys. Only seqlearn
reads it; it is checked on loading (a damaged or foreign file raises ``ValueError``).
"""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from .._files import replacing
from ..data.vocab import Vocab
from .backoff import BackoffTables
from .counts import NGramIndex

__all__ = ["write_npz", "parse_npz", "is_npz", "FORMAT"]

FORMAT = "seqlearn backoff n-gram model, version 1"
"""The ``format`` entry of every file: what it is, and the layout's version."""


def write_npz(file, tables: BackoffTables) -> None:
    """Write ``tables`` to ``file`` (a path, replaced only once the file is complete, or a binary file object)."""
    arrays: dict[str, Any] = {"format": np.array(FORMAT), "words": np.array(tables.vocab.itos)}
    for k in range(1, tables.order + 1):
        arrays[f"keys{k}"] = tables.index.keys[k - 1]
        arrays[f"log10_p{k}"] = tables.log10_p[k - 1]
        if k < tables.order:
            arrays[f"log10_bo{k}"] = tables.log10_bo[k - 1]
    if not isinstance(file, (str, os.PathLike)):
        np.savez(file, **arrays)
        return
    with replacing(file) as tmp, open(tmp, "xb") as f:
        np.savez(f, **arrays)


def is_npz(path) -> bool:
    """Whether the file at ``path`` is a zip archive (an ``.npz``), not ARPA text."""
    return zipfile.is_zipfile(path)


def _error(file, message: str) -> ValueError:
    return ValueError(f"{file} is not a valid seqlearn n-gram model file: {message}")


def _array(z, name: str, dtype, file) -> np.ndarray:
    """The 1-D array ``name`` of the archive, of ``dtype``."""
    if name not in z.files:
        raise _error(file, f"{name!r} is missing")
    x = z[name]
    if x.ndim != 1 or x.dtype != dtype:
        raise _error(file, f"{name!r} must be a 1-D {np.dtype(dtype)} array, got shape {x.shape} and dtype {x.dtype}")
    return x


def _vocab(z, file) -> Vocab:
    """The vocabulary of the ``words`` entry: str, specials first, each once."""
    words = z["words"] if "words" in z.files else np.zeros(0)
    itos = [str(w) for w in words.tolist()] if words.ndim == 1 and words.dtype.kind == "U" else []
    if not itos or Vocab(itos).itos != itos:
        raise _error(file, "'words' must list the vocabulary as str, <unk> <s> </s> first, each word once")
    return Vocab(itos)


def _check_order(k: int, keys: np.ndarray, log10_p: np.ndarray, n_prefixes: int, V: int, file) -> None:
    """Order k's keys are strictly increasing with known prefixes, and its values are log10 probabilities."""
    if len(log10_p) != len(keys):
        raise _error(file, f"order {k} has {len(keys)} keys but {len(log10_p)} log10 probabilities")
    if len(keys) and (np.any(np.diff(keys) <= 0) or keys[0] < 0 or keys[-1] >= n_prefixes * V):
        raise _error(file, f"the keys of order {k} are not strictly increasing keys of known {k - 1}-grams")
    if np.any(np.isnan(log10_p) | (log10_p > 0)):
        raise _error(file, f"order {k} has a log10 probability that is NaN or above 0")


def parse_npz(file) -> BackoffTables:
    """Read tables written by :func:`write_npz` (a path or a binary file object); ``ValueError`` if invalid."""
    try:
        z = np.load(file, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise _error(file, str(e)) from None
    with z:
        if "format" not in z.files or str(z["format"]) != FORMAT:
            raise _error(file, f"its 'format' entry is not {FORMAT!r}")
        vocab = _vocab(z, file)
        N = sum(name.startswith("keys") for name in z.files)
        keys, log10_p, log10_bo = [], [], []
        for k in range(1, N + 1):
            keys.append(_array(z, f"keys{k}", np.int64, file))
            log10_p.append(_array(z, f"log10_p{k}", np.float64, file))
            _check_order(k, keys[-1], log10_p[-1], 1 if k == 1 else len(keys[-2]), len(vocab), file)
            if k < N:
                log10_bo.append(_array(z, f"log10_bo{k}", np.float64, file))
                if len(log10_bo[-1]) != len(keys[-1]) or np.any(np.isnan(log10_bo[-1])):
                    raise _error(file, f"the log10 backoffs of order {k} do not match its keys, or one is NaN")
    if N == 0 or not np.array_equal(keys[0], np.arange(len(vocab))):
        raise _error(file, "the unigram keys must be the word ids 0 .. |V| - 1")
    index = NGramIndex(keys, len(vocab))
    index.prepare()
    return BackoffTables(vocab, index, log10_p, log10_bo)
