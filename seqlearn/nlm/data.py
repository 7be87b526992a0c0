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

from ..data.vocab import Vocab
from ..device import resolve_device

__all__ = ["WindowBatches", "check_stream"]


def check_stream(stream, vocab_size: int | None = None) -> np.ndarray:
    """The encoded stream as a 1-D int64 NumPy array, after checking it.

    Raises ``TypeError`` unless it is a 1-D integer array (or tensor, or list), and
    ``ValueError`` if it is empty, does not start with ``<s>``, has no token to predict,
    or (with ``vocab_size``) holds ids outside ``[0, vocab_size)``.
    """
    if isinstance(stream, torch.Tensor):
        stream = stream.detach().cpu().numpy()
    if isinstance(stream, str) or (isinstance(stream, (list, tuple)) and stream and isinstance(stream[0], (list, str))):
        raise TypeError("stream must be an encoded 1-D array of token ids; encode sentences with "
                        "seqlearn.data.vocab.encode_sentences(sentences, vocab) first")
    stream = np.asarray(stream)
    if stream.ndim != 1 or (stream.size and not np.issubdtype(stream.dtype, np.integer)):
        raise TypeError(f"stream must be a 1-D integer array of token ids, got shape {stream.shape} "
                        f"and dtype {stream.dtype}")
    if stream.size == 0:
        raise ValueError("the stream is empty: there is no token to predict")
    if stream[0] != Vocab.bos_id:
        raise ValueError(f"the stream must start with <s> (id {Vocab.bos_id}), got {int(stream[0])}; "
                         "see seqlearn.data.vocab.encode_sentences")
    if np.all(stream == Vocab.bos_id):
        raise ValueError("the stream holds only <s>: there is no token to predict")
    if vocab_size is not None and (stream.min() < 0 or stream.max() >= vocab_size):
        bad = stream[(stream < 0) | (stream >= vocab_size)][0]
        raise ValueError(f"token id {int(bad)} in the stream is outside the vocabulary "
                         f"(valid ids are 0..{vocab_size - 1})")
    return stream.astype(np.int64, copy=False)


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


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

    def __init__(self, stream, order: int, batch_size: int = 512, shuffle: bool = False, seed: int = 0,
                 vocab_size: int | None = None, device=None):
        self.order = _check_positive_int(order, "order n")
        if self.order < 2:
            raise ValueError(f"the order n must be >= 2 (a window model needs a context), got {order}")
        self.batch_size = _check_positive_int(batch_size, "batch_size")
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
        return (f"WindowBatches(n={self.order}, T={self.n_targets}, B={self.batch_size}, "
                f"shuffle={self.shuffle}, device={self.device})")

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
            yield self.batch(order[start:start + B])
