"""Encoded streams, as every language model of the course reads them.

A corpus is one flat stream of token ids ``<s> w_1 .. w_k </s> <s> ..`` (see
:func:`seqlearn.data.vocab.encode_sentences`). A language model predicts every token that
is not ``<s>`` (the words and ``</s>``), each from its own sentence only. The window models
of Chapter 2 and the recurrent models of Chapter 3 check a stream with :func:`check_stream`;
the recurrent ones read it sentence by sentence (:func:`split_sentences`).

NumPy only: a torch tensor is accepted and converted, but torch is never imported here.
"""

from __future__ import annotations

import numpy as np

from .vocab import Vocab, sentence_starts

__all__ = ["check_stream", "split_sentences"]


def check_stream(stream, vocab_size: int | None = None) -> np.ndarray:
    """The encoded stream as a 1-D int64 NumPy array, after checking it.

    Parameters
    ----------
    stream : array, list or torch tensor of int, shape ``(L,)``
        ``<s> w_1 .. w_k </s> <s> ..``.
    vocab_size : int, optional
        If given, every id must lie in ``[0, vocab_size)``.

    Returns
    -------
    numpy.ndarray, int64, shape ``(L,)``

    Raises
    ------
    TypeError
        Unless it is a 1-D integer array (or tensor, or list).
    ValueError
        If it is empty, does not start with ``<s>``, has no token to predict, or holds ids
        outside ``[0, vocab_size)``.
    """
    if hasattr(stream, "detach"):  # a torch tensor, on any device
        stream = stream.detach().cpu().numpy()
    if isinstance(stream, str) or (isinstance(stream, (list, tuple)) and stream and isinstance(stream[0], (list, str))):
        raise TypeError(
            "stream must be an encoded 1-D array of token ids; encode sentences with "
            "seqlearn.data.vocab.encode_sentences(sentences, vocab) first"
        )
    stream = np.asarray(stream)
    if stream.ndim != 1 or (stream.size and not np.issubdtype(stream.dtype, np.integer)):
        raise TypeError(
            f"stream must be a 1-D integer array of token ids, got shape {stream.shape} and dtype {stream.dtype}"
        )
    if stream.size == 0:
        raise ValueError("the stream is empty: there is no token to predict")
    if stream[0] != Vocab.bos_id:
        raise ValueError(
            f"the stream must start with <s> (id {Vocab.bos_id}), got {int(stream[0])}; "
            "see seqlearn.data.vocab.encode_sentences"
        )
    if np.all(stream == Vocab.bos_id):
        raise ValueError("the stream holds only <s>: there is no token to predict")
    if vocab_size is not None and (stream.min() < 0 or stream.max() >= vocab_size):
        bad = stream[(stream < 0) | (stream >= vocab_size)][0]
        raise ValueError(
            f"token id {int(bad)} in the stream is outside the vocabulary (valid ids are 0..{vocab_size - 1})"
        )
    return stream.astype(np.int64, copy=False)


def split_sentences(stream: np.ndarray) -> list[np.ndarray]:
    """The sentences ``<s> w_1 .. w_k [</s>]`` of a checked stream, in order.

    The stream is cut before each ``<s>``; pieces with nothing to predict (a lone ``<s>``)
    are dropped. Each piece is a view of ``stream``, of length (tokens to predict) + 1.
    """
    return [s for s in np.split(stream, sentence_starts(stream)[1:]) if len(s) > 1]
