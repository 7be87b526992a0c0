r"""Training the Elman networks with Adam and gradient clipping, through :func:`seqlearn.training.fit`.

Language models (:func:`train_rnn_lm`) minimise the mean negative log-likelihood of the
predicted tokens, :func:`seqlearn.losses.masked_cross_entropy`, either on whole sentences
(:func:`rnn_lm_loss` on :class:`~seqlearn.rnn.data.SentenceBatches`) or with truncated BPTT
(:class:`TruncatedBPTTLoss` on :class:`~seqlearn.rnn.data.StreamBatches`); before each update
the gradient is rescaled to global norm at most ``clip_grad_norm``,

.. math::
    g \leftarrow g \cdot \min\Big(1, \frac{c}{\|g\|_2}\Big).

Task models (:func:`fit_task`) minimise one of :data:`TASK_LOSSES`. Evaluating a language
model (perplexity, agreement) is :mod:`seqlearn.lm`.
"""

from __future__ import annotations

import torch

from ..device import resolve_device
from ..lm import LMHistory, fit_lm
from ..losses import masked_cross_entropy
from ..training import History, fit
from ..validation import choice
from .data import SentenceBatches, StreamBatches, TensorBatches
from .model import RecurrentLM

__all__ = [
    "rnn_lm_loss",
    "TruncatedBPTTLoss",
    "train_rnn_lm",
    "squared_error_loss",
    "cross_entropy_loss",
    "TASK_LOSSES",
    "fit_task",
]


# ----------------------------------------------------------------------------- language models


def rnn_lm_loss(model: RecurrentLM, batch) -> tuple[torch.Tensor, int]:
    """``(masked mean NLL, number of real targets)`` of a :class:`SentenceBatches` batch."""
    inputs, targets, mask = batch[:3]
    logits, _ = model(inputs)  # (B, L, |V|)
    return masked_cross_entropy(logits, targets, mask), int(mask.sum())


class TruncatedBPTTLoss:
    r"""The loss of :class:`StreamBatches` chunks, carrying the state between calls.

    The state starts at zero on a chunk flagged ``first`` (or when the number of rows
    changes), else continues from the previous chunk's final state, detached:
    :math:`\partial h_{ck} / \partial \theta` is cut, so BPTT runs back at most :math:`k`
    steps. The state is whatever the model returns: :math:`h` ``(B, H)`` for an Elman
    :class:`~seqlearn.rnn.model.RNNLM`, a tuple :math:`(h, c)` for an LSTM
    (:class:`seqlearn.gated.GatedLM`). Pass an instance as ``loss_fn`` to
    :func:`seqlearn.training.fit`.
    """

    def __init__(self):
        self.state = None
        self.rows = 0

    def __call__(self, model: RecurrentLM, batch) -> tuple[torch.Tensor, int]:
        inputs, targets, mask, first = batch
        carried = not first and self.rows == inputs.shape[0]
        logits, state = model(inputs, self.state if carried else None)  # (B, k, |V|), final state
        self.state = tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()
        self.rows = inputs.shape[0]
        return masked_cross_entropy(logits, targets, mask), int(mask.sum())


def _sentence_data(train_stream, val_stream, batch_size: int, V: int, seed: int, device):
    """``(train batches, validation batches or None, loss_fn)`` of whole sentences."""
    train = SentenceBatches(train_stream, batch_size, shuffle=True, seed=seed, vocab_size=V, device=device)
    val = None if val_stream is None else SentenceBatches(val_stream, 256, vocab_size=V, device=device)
    return train, val, rnn_lm_loss


def _truncated_bptt_data(train_stream, val_stream, batch_size: int, k: int, V: int, device):
    """``(train chunks, validation chunks or None, loss_fn)`` of truncated BPTT over :math:`k` steps."""
    train = StreamBatches(train_stream, batch_size, k, vocab_size=V, device=device)
    val = None if val_stream is None else StreamBatches(val_stream, batch_size, k, vocab_size=V, device=device)
    return train, val, TruncatedBPTTLoss()


def train_rnn_lm(
    model: RecurrentLM,
    train_stream,
    val_stream=None,
    *,
    lr: float = 3e-3,
    epochs: int = 2,
    batch_size: int = 32,
    clip_grad_norm: float | None = 1.0,
    bptt: int | None = None,
    patience: int | None = None,
    device=None,
    seed: int = 0,
    progress: bool = True,
) -> LMHistory:
    r"""Train a recurrent language model (an :class:`~seqlearn.rnn.model.RNNLM`) with Adam.

    Parameters
    ----------
    model : RecurrentLM
        Trained in place; with validation data the best epoch's weights are restored.
    train_stream, val_stream : array of int
        Encoded streams (:func:`seqlearn.data.vocab.encode_sentences`).
    lr : float
        Adam's learning rate.
    epochs, patience
        As :func:`seqlearn.training.fit`.
    batch_size : int
        Sentences per batch (or parallel rows with ``bptt``).
    clip_grad_norm : float or None
        Rescale the gradient to global norm at most this before each update.
    bptt : int or None
        ``None``: whole sentences (:class:`SentenceBatches`). An int :math:`k`: truncated
        BPTT over the stream (:class:`StreamBatches`, :class:`TruncatedBPTTLoss`); the
        validation loss is then computed the same way, with the state carried across
        sentences, so it is not Chapter 1's per-sentence perplexity: compare models with
        :func:`seqlearn.lm.perplexity`, which resets the state at every ``<s>``.
    device, seed, progress
        Device (default :func:`seqlearn.device.default_device`), seed of the batch order,
        progress bar.

    Returns
    -------
    seqlearn.lm.LMHistory
        Per-epoch losses and perplexities, the wall time and the training speed.
    """
    if not isinstance(model, RecurrentLM):
        raise TypeError(f"model must be a recurrent language model such as RNNLM, got {type(model).__name__}")
    device = resolve_device(device)
    model.to(device)
    V = model.vocab_size
    train, val, loss_fn = (
        _sentence_data(train_stream, val_stream, batch_size, V, seed, device)
        if bptt is None
        else _truncated_bptt_data(train_stream, val_stream, batch_size, bptt, V, device)
    )
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return fit_lm(
        model,
        loss_fn,
        opt,
        train,
        val,
        epochs=epochs,
        patience=patience,
        clip_grad_norm=clip_grad_norm,
        device=device,
        progress=progress,
    )


# ----------------------------------------------------------------------------- synthetic tasks


def squared_error_loss(model: torch.nn.Module, batch) -> tuple[torch.Tensor, int]:
    r"""Mean squared error :math:`\frac1B \sum_b (\hat y_b - y_b)^2` of an ``(x, y)`` batch; :math:`B`.

    For regression targets ``y`` of shape ``(B,)`` (the adding problem).
    """
    x, y = batch
    return ((model(x).reshape(y.shape) - y) ** 2).mean(), y.shape[0]


def cross_entropy_loss(model: torch.nn.Module, batch) -> tuple[torch.Tensor, int]:
    r"""Mean cross-entropy :math:`-\log \mathrm{softmax}(\hat y)_y` over the outputs of an ``(x, y)`` batch; :math:`B`.

    For integer targets ``y`` of shape ``(B, T)`` (the copy task) or ``(B,)`` (agreement).
    """
    x, y = batch
    return masked_cross_entropy(model(x), y), y.shape[0]


TASK_LOSSES = {"mse": squared_error_loss, "ce": cross_entropy_loss}
"""The losses of :func:`fit_task`, by name."""


def fit_task(
    model: torch.nn.Module,
    x,
    y,
    x_val=None,
    y_val=None,
    *,
    loss: str = "mse",
    lr: float = 1e-2,
    epochs: int = 10,
    batch_size: int = 64,
    clip_grad_norm: float | None = 1.0,
    device=None,
    seed: int = 0,
    progress: bool = False,
) -> History:
    r"""Train a :class:`~seqlearn.rnn.model.SequenceRNN` on a synthetic task with Adam.

    ``loss="mse"``: :func:`squared_error_loss` (adding problem, ``y`` of shape ``(B,)``);
    ``loss="ce"``: :func:`cross_entropy_loss` (copy task, ``y`` integer ``(B, T)``;
    agreement, ``(B,)``). ``x, y`` (and the optional validation pair) are tensors or NumPy
    arrays, in shuffled mini-batches of ``batch_size`` (:class:`TensorBatches`, seeded by
    ``seed``); the other arguments are those of :func:`train_rnn_lm`.
    """
    loss_fn = TASK_LOSSES[choice(loss, "loss", TASK_LOSSES)]
    device = resolve_device(device)
    model.to(device)
    train = TensorBatches(x, y, batch_size, shuffle=True, seed=seed, device=device)
    val = None if x_val is None else TensorBatches(x_val, y_val, batch_size, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return fit(
        model, loss_fn, opt, train, val, epochs=epochs, clip_grad_norm=clip_grad_norm, device=device, progress=progress
    )
