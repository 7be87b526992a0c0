r"""Mini-batches of (context, target) windows over an encoded stream, built on the fly.

A window model of order :math:`n` predicts every token of the stream ``<s> w_1 ... w_k
</s> <s> ...`` that is not ``<s>`` (the words and ``</s>``) from the :math:`n - 1` tokens
before it, never reaching left of its sentence's ``<s>``: context slots further left hold
``<s>``, exactly as the n-gram models of Chapter 1 pad (and as
:func:`seqlearn.nlm.basics.context_windows` computes). The targets are therefore the same
tokens, in the same order, as those of Chapter 1's ``token_logprobs``.

:class:`WindowBatches` never materialises the :math:`T \times (n - 1)` matrix of all
windows. It keeps the stream (left-padded with :math:`n - 1` ``<s>``), the position
:math:`t` of every target and how far back its sentence reaches,
:math:`\delta_t = \min(t - s_t, n - 1)` with :math:`s_t` the position of the sentence's
``<s>``. The windows are a strided view of the padded stream (``unfold``: row :math:`t`
is ``stream[t-n+1 : t]``, no copy); a batch gathers its rows and replaces the slots that
look back further than :math:`\delta_t` by ``<s>``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..data.streams import check_stream
from ..data.vocab import Vocab
from ..device import resolve_device
from ..validation import integer

__all__ = ["WindowBatches"]


class WindowBatches:
    r"""Re-iterable mini-batches ``(contexts, targets)`` of an order-:math:`n` window model.

    ``contexts`` has shape ``(B, n - 1)`` (int64, oldest token first) and ``targets``
    shape ``(B,)``; together they are the rows of
    :func:`seqlearn.nlm.basics.context_windows`, built on the fly. Usable as the
    ``train_batches``/``val_batches`` of :func:`seqlearn.training.fit`.

    Parameters
    ----------
    stream : array of int, shape ``(L,)``
        An encoded stream ``<s> w_1 ... </s> <s> ...`` (see
        :func:`seqlearn.data.vocab.encode_sentences`).
    order : int
        :math:`n \ge 2`.
    batch_size : int
        :math:`B`; the last batch of an epoch may be shorter.
    shuffle : bool
        Visit the targets in a fresh random order on every iteration (training), else in
        stream order (evaluation).
    seed : int
        Seed of the private generator of the shuffles; a new ``WindowBatches`` with the same
        seed yields the same sequence of epochs.
    vocab_size : int, optional
        If given, ids outside ``[0, vocab_size)`` raise ``ValueError``.
    device : optional
        Where the stream is kept and the batches are built (default
        :func:`seqlearn.device.default_device`).

    Attributes
    ----------
    n_targets : int
        :math:`T`, the number of predicted tokens (the stream's tokens that are not ``<s>``).
    """

    def __init__(
        self,
        stream,
        order: int,
        batch_size: int = 512,
        shuffle: bool = False,
        seed: int = 0,
        vocab_size: int | None = None,
        device=None,
    ):
        self.order = integer(order, "order n", low=1)
        if self.order < 2:
            raise ValueError(f"the order n must be >= 2 (a window model needs a context), got {order}")
        self.batch_size = integer(batch_size, "batch_size", low=1)
        self.shuffle = bool(shuffle)
        self.device = resolve_device(device)
        stream = check_stream(stream, vocab_size)
        positions = np.flatnonzero(stream != Vocab.bos_id)  # (T,) targets t
        starts = np.maximum.accumulate(np.where(stream == Vocab.bos_id, np.arange(len(stream)), 0))  # (L,) s_t
        reach = np.minimum(positions - starts[positions], self.order - 1)  # (T,) delta_t
        padded = np.concatenate([np.full(self.order - 1, Vocab.bos_id, dtype=np.int64), stream])  # (L + n - 1,)
        self._padded = torch.as_tensor(padded, device=self.device)
        self._windows = self._padded.unfold(0, self.order - 1, 1)  # (L, n-1) view: row t = stream[t-n+1:t]
        self._positions = torch.as_tensor(positions, device=self.device)  # (T,)
        reach_dtype = torch.uint8 if self.order <= 256 else torch.int64
        self._reach = torch.as_tensor(reach, device=self.device).to(reach_dtype)  # (T,)
        self._offsets = torch.arange(self.order - 1, 0, -1, device=self.device)  # (n-1,) look-back of each slot
        self._generator = torch.Generator(device="cpu").manual_seed(int(seed))
        self.n_targets = len(positions)

    def __len__(self) -> int:
        """Number of batches per epoch, :math:`\\lceil T / B \\rceil`."""
        return math.ceil(self.n_targets / self.batch_size)

    def __repr__(self) -> str:
        return (
            f"WindowBatches(n={self.order}, T={self.n_targets}, B={self.batch_size}, "
            f"shuffle={self.shuffle}, device={self.device})"
        )

    def batch(self, index) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Contexts ``(B, n-1)`` and targets ``(B,)`` of the targets numbered ``index``.

        ``index``: a slice or a 1-D integer tensor of target numbers in ``[0, T)`` (not
        stream positions). Slot :math:`j` of a context looks back :math:`n - j` tokens
        (0-based :math:`j`); it holds ``<s>`` where that reaches before the sentence's ``<s>``.
        """
        if isinstance(index, torch.Tensor):
            index = index.to(self.device)
        t = self._positions[index]  # (B,) stream positions of the targets
        inside = self._offsets <= self._reach[index][:, None]  # (B, n-1)
        contexts = torch.where(inside, self._windows[t], Vocab.bos_id)  # (B, n-1)
        return contexts, self._padded[t + self.order - 1]

    def __iter__(self):
        B = self.batch_size
        if not self.shuffle:
            for start in range(0, self.n_targets, B):
                yield self.batch(slice(start, start + B))
            return
        order = torch.randperm(self.n_targets, generator=self._generator).to(self.device)  # (T,)
        for start in range(0, self.n_targets, B):
            yield self.batch(order[start : start + B])
