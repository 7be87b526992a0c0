"""Data for the course: vocabularies and encoding, synthetic corpora, optional downloads.

Nothing here touches the network unless a downloader is called explicitly. The module
:mod:`seqlearn.data.download` keeps its name here (its function ``download`` is not
re-exported, so that ``seqlearn.data.download`` is always the module).
"""

from .download import (
    ChecksumError,
    DownloadError,
    data_dir,
    load_ptb,
    load_tiny_shakespeare,
    load_wikitext2,
)
from .synthetic import (
    AgreementExample,
    MarkovSource,
    ToyEnglish,
    ToySentence,
    agreement_accuracy,
    agreement_examples,
)
from .vocab import (
    BOS,
    EOS,
    UNK,
    Vocab,
    check_ids,
    decode_utf8,
    encode_sentences,
    read_sentences,
    read_text,
    sentence_starts,
    tokenize,
)

__all__ = [
    "UNK", "BOS", "EOS", "Vocab", "tokenize", "decode_utf8", "read_text", "read_sentences", "encode_sentences", "sentence_starts", "check_ids",
    "MarkovSource", "ToyEnglish", "ToySentence", "AgreementExample", "agreement_examples", "agreement_accuracy",
    "data_dir", "load_ptb", "load_wikitext2", "load_tiny_shakespeare", "DownloadError", "ChecksumError",
]
