r"""Mini-batches for the Elman networks: sentences, stream chunks, and paired task tensors.

A recurrent language model reads an encoded stream ``<s> w_1 .. w_k </s> <s> ..`` in one
of two ways:

* :class:`SentenceBatches` (whole sentences): the state starts from zero at every ``<s>``;
  a batch holds sentences of similar length (sorted by length, then cut into batches whose
  order is shuffled), padded to its longest, so little of it is padding. It predicts
  exactly the tokens of Chapters 1 and 2.
* :class:`StreamBatches` (truncated BPTT): the stream cut into :math:`B` parallel rows and
  read in chunks of :math:`k` steps; the state runs on from chunk to chunk, also across
  sentences (see :class:`seqlearn.rnn.train.TruncatedBPTTLoss`).

:class:`TensorBatches` serves the synthetic tasks: mini-batches of paired inputs and targets.
Every class here is re-iterable (one pass per epoch), usable as the ``train_batches`` and
``val_batches`` of :func:`seqlearn.training.fit`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..data.streams import check_stream, split_sentences
from ..data.vocab import Vocab
from ..device import resolve_device
from ..validation import integer

__all__ = ["SentenceBatches", "StreamBatches", "TensorBatches"]


class SentenceBatches:
    r"""Re-iterable padded batches ``(inputs, targets, mask)`` of whole sentences.

    A sentence ``<s> w_1 .. w_k </s>`` gives inputs ``<s> w_1 .. w_k`` and targets
    ``w_1 .. w_k </s>`` (length :math:`k + 1`); a batch is padded on the right to its
    longest sentence (padding: id 0, mask 0). Shapes ``(B, L)``, int64, int64, bool.

    Sentences are sorted by length and cut into consecutive batches of ``batch_size``;
    with ``shuffle`` the batch order (and the order of equal-length sentences) is random
    on each pass, from a private generator seeded by ``seed``. Without it, the batches come
    in sorted order; :meth:`batch_indices` says which sentences each holds.

    Attributes
    ----------
    sentences : list of numpy.ndarray
        The stream's sentences, in stream order (:func:`seqlearn.data.split_sentences`).
    lengths : numpy.ndarray, shape ``(S,)``
        Targets per sentence.
    n_targets : int
        Predicted tokens (words and ``</s>``) of the stream.
    """

    def __init__(
        self,
        stream,
        batch_size: int = 32,
        shuffle: bool = False,
        seed: int = 0,
        vocab_size: int | None = None,
        device=None,
    ):
        stream = check_stream(stream, vocab_size)
        self.batch_size = integer(batch_size, "batch_size", low=1)
        self.shuffle = bool(shuffle)
        self.device = resolve_device(device)
        self._rng = np.random.default_rng(seed)
        self.sentences = split_sentences(stream)
        self.lengths = np.array([len(s) - 1 for s in self.sentences])  # (S,)
        self.n_targets = int(self.lengths.sum())

    def batch(self, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(inputs, targets, mask)`` of the sentences numbered ``idx`` (``(B,)``), in that order."""
        L = int(self.lengths[idx].max())
        ids = np.zeros((len(idx), L + 1), dtype=np.int64)  # (B, L+1)
        for row, i in enumerate(idx):
            ids[row, : len(self.sentences[i])] = self.sentences[i]
        mask = np.arange(L)[None, :] < self.lengths[idx][:, None]  # (B, L)
        ids_t, mask_t = torch.as_tensor(ids, device=self.device), torch.as_tensor(mask, device=self.device)
        return ids_t[:, :-1], ids_t[:, 1:], mask_t

    def batch_indices(self) -> list[np.ndarray]:
        """Sentence indices of each batch, in the order they are yielded."""
        key = self._rng.random(len(self.lengths)) if self.shuffle else np.arange(len(self.lengths))
        order = np.lexsort((key, self.lengths))  # by length, ties random or in stream order
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if self.shuffle:
            batches = [batches[i] for i in self._rng.permutation(len(batches))]
        return batches

    def __len__(self) -> int:
        return math.ceil(len(self.lengths) / self.batch_size)

    def __iter__(self):
        for idx in self.batch_indices():
            yield self.batch(idx)


class StreamBatches:
    r"""Chunks ``(inputs, targets, mask, first)`` of a stream for truncated BPTT.

    The stream (length :math:`L`) is cut into :math:`B` rows of :math:`N = \lfloor (L-1)/B
    \rfloor` input steps each (the tail is dropped); chunk :math:`c` holds steps
    :math:`ck .. ck + k - 1` of every row, shape ``(B, k)`` (the last chunk may be
    shorter). Targets equal to ``<s>`` are masked out (the course never scores ``<s>``).
    ``first`` is ``True`` for the first chunk of a pass: the state starts from zero.
    """

    def __init__(self, stream, batch_size: int = 32, k: int = 35, vocab_size: int | None = None, device=None):
        stream = check_stream(stream, vocab_size)
        self.batch_size = B = integer(batch_size, "batch_size", low=1)
        self.k = integer(k, "k (truncation length)", low=1)
        N = (len(stream) - 1) // B
        if N < 1:
            raise ValueError(f"the stream of {len(stream)} tokens is too short for {batch_size} rows")
        self.device = resolve_device(device)
        self._x = torch.as_tensor(stream[: N * B].reshape(B, N), device=self.device)  # (B, N)
        self._y = torch.as_tensor(stream[1 : N * B + 1].reshape(B, N), device=self.device)  # (B, N)
        self.n_targets = int((self._y != Vocab.bos_id).sum())

    def __len__(self) -> int:
        return math.ceil(self._x.shape[1] / self.k)

    def __iter__(self):
        for c, start in enumerate(range(0, self._x.shape[1], self.k)):
            y = self._y[:, start : start + self.k]
            yield self._x[:, start : start + self.k], y, y != Vocab.bos_id, c == 0


def _as_tensor(a, device) -> torch.Tensor:
    """``a`` (a tensor or anything NumPy reads) as a tensor on ``device``."""
    return torch.as_tensor(a if isinstance(a, torch.Tensor) else np.asarray(a), device=device)


class TensorBatches:
    r"""Re-iterable mini-batches ``(x[idx], y[idx])`` of a task's inputs and targets.

    ``x`` (e.g. ``(N, T, D)``) and ``y`` (e.g. ``(N,)`` or ``(N, T)``) are tensors or arrays
    with the same number :math:`N` of sequences, kept on ``device``. Batches hold
    ``batch_size`` sequences (the last may hold fewer); with ``shuffle`` in a fresh random
    order on each pass, from a private generator seeded by ``seed``, else in order.
    """

    def __init__(self, x, y, batch_size: int = 64, shuffle: bool = False, seed: int = 0, device=None):
        self.device = resolve_device(device)
        self.x, self.y = _as_tensor(x, self.device), _as_tensor(y, self.device)
        if self.x.shape[0] != self.y.shape[0]:
            raise ValueError(
                f"x and y must have the same number of sequences, got {self.x.shape[0]} and {self.y.shape[0]}"
            )
        self.batch_size = integer(batch_size, "batch_size", low=1)
        self.shuffle = bool(shuffle)
        self._generator = torch.Generator().manual_seed(int(seed))

    def __len__(self) -> int:
        return math.ceil(self.x.shape[0] / self.batch_size)

    def __iter__(self):
        N = self.x.shape[0]
        order = torch.randperm(N, generator=self._generator) if self.shuffle else torch.arange(N)  # (N,)
        for i in range(0, N, self.batch_size):
            idx = order[i : i + self.batch_size].to(self.device)
            yield self.x[idx], self.y[idx]
