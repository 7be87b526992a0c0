"""Data for the course: vocabularies and encoding, synthetic corpora, optional downloads.

Nothing here touches the network unless a downloader is called explicitly.
"""

from .vocab import BOS, EOS, UNK, Vocab, check_ids, encode_sentences, read_sentences, sentence_starts, tokenize

__all__ = ["UNK", "BOS", "EOS", "Vocab", "tokenize", "read_sentences", "encode_sentences", "sentence_starts", "check_ids"]
