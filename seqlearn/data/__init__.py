"""Data for the course: vocabularies and encoding, synthetic corpora, optional downloads.

Nothing here touches the network unless a downloader is called explicitly. The checks of
encoded streams that the neural language models share, and their splitting into
sentences, are in :mod:`seqlearn.data.streams` (NumPy only). The module
:mod:`seqlearn.data.download` keeps its name here (its function ``download`` is not
re-exported, so that ``seqlearn.data.download`` is always the module). The synthetic
corpora (scipy: the Markov source of :mod:`seqlearn.data.markov` and the toy English of
:mod:`seqlearn.data.synthetic`), their long-distance agreement variant (:mod:`seqlearn.data.agreement`) and
the downloaders (urllib) load on first use, so that ``import
seqlearn.data.vocab`` costs only NumPy.
"""

from .._lazy import lazy_exports, lazy_table
from .streams import check_stream, split_sentences
from .vocab import (
    BOS,
    EOS,
    UNK,
    Vocab,
    decode_utf8,
    encode_sentences,
    read_sentences,
    read_text,
    sentence_starts,
    tokenize,
)

# download.py's file registry and fetching machinery stay in the module; its function ``download``
# would hide the module of the same name.
_WITHHELD = {
    "download": ["ENV_VAR", "REGISTRY", "RemoteFile", "download", "fetch_url", "file_checksum", "verify_checksum"]
}
_LAZY = lazy_table(__path__, ["download", "markov", "synthetic", "agreement"], _WITHHELD)

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
    "check_stream",
    "split_sentences",
    *(name for names in _LAZY.values() for name in names),
]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
