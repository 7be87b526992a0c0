"""One training loop for every model in the course.

:func:`fit` trains any ``torch.nn.Module`` given a loss function of a batch. It moves
batches to the device, shows a ``tqdm`` progress bar, evaluates on validation data after
every epoch, stops early when the validation loss has not improved for ``patience``
epochs, restores the best weights, and can checkpoint them to disk.

The loss function returns a pair ``(mean_loss, weight)``: the mean loss over the batch and
how many items (e.g. real tokens) it averages. Epoch losses are weighted means,
:math:`\\bar L = \\sum_b w_b L_b / \\sum_b w_b`, so a short last batch or a batch with much
padding counts exactly as much as its tokens.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass, field

from ._files import replacing
from .device import resolve_device
from .validation import integer, real

__all__ = ["fit", "evaluate", "to_device", "History"]


@dataclass
class History:
    """What :func:`fit` did: per-epoch losses, the best epoch, why it stopped, how long it took."""

    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    best_epoch: int | None = None
    stopped_early: bool = False
    seconds: float = 0.0  # wall time of the whole fit, validation included

    @property
    def best_val_loss(self) -> float | None:
        """The lowest validation loss (``None`` without validation data)."""
        return None if self.best_epoch is None else self.val_loss[self.best_epoch]


def to_device(batch, device):
    """Move a tensor, or a tuple/list/dict of tensors, to ``device`` (other values pass through)."""
    import torch

    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (tuple, list)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def _weighted_mean(total: float, weight: float, what: str) -> float:
    if weight <= 0:
        raise ValueError(f"{what}: no items to average (the data is empty or every batch has weight 0)")
    return total / weight


def _check_loss(loss, weight, where: str):
    import torch

    if not isinstance(loss, torch.Tensor) or loss.ndim != 0:
        raise TypeError(f"loss_fn must return (scalar tensor, weight); got {type(loss).__name__} in {where}")
    if not torch.isfinite(loss):
        raise ValueError(f"the loss became {loss.item()} in {where}; lower the learning rate or clip gradients")
    return float(weight)


def evaluate(model, loss_fn: Callable, batches: Iterable, device=None) -> float:
    """Weighted mean of ``loss_fn(model, batch)`` over ``batches``, without gradients."""
    import torch

    device = resolve_device(device)
    was_training = model.training
    model.eval()
    total = weight = 0.0
    with torch.no_grad():
        for batch in batches:
            loss, w = loss_fn(model, to_device(batch, device))
            w = _check_loss(loss, w, "evaluation")
            total += loss.item() * w
            weight += w
    model.train(was_training)
    return _weighted_mean(total, weight, "evaluate")


def _train_epoch(model, loss_fn, optimizer, batches, device, clip_grad_norm, scheduler, bar) -> float:
    import torch

    model.train()
    total = weight = 0.0
    for batch in batches:
        loss, w = loss_fn(model, to_device(batch, device))
        w = _check_loss(loss, w, "training")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        total += loss.item() * w
        weight += w
        bar.update(1)
        bar.set_postfix(loss=f"{total / weight:.4f}")
    return _weighted_mean(total, weight, "training epoch")


def _save_atomically(state: dict, path) -> None:
    import torch

    with replacing(path) as tmp:
        torch.save(state, tmp)


def fit(
    model,
    loss_fn: Callable,
    optimizer,
    train_batches: Iterable,
    val_batches: Iterable | None = None,
    *,
    epochs: int = 10,
    patience: int | None = None,
    scheduler=None,
    clip_grad_norm: float | None = None,
    checkpoint_path: str | os.PathLike | None = None,
    device=None,
    progress: bool = True,
) -> History:
    """Train ``model`` for up to ``epochs`` passes over ``train_batches``.

    Parameters
    ----------
    model : torch.nn.Module
        Moved to ``device`` (default :func:`seqlearn.device.default_device`).
    loss_fn : callable
        ``loss_fn(model, batch) -> (mean_loss, weight)``; ``batch`` is already on the device.
    optimizer : torch.optim.Optimizer
        Built on ``model.parameters()``.
    train_batches, val_batches : re-iterable
        E.g. a ``torch.utils.data.DataLoader`` or a list of batches.
    patience : int, optional
        Stop after this many epochs without a lower validation loss; the weights of the best
        epoch are restored at the end (needs ``val_batches``).
    scheduler : optional
        Stepped after every optimiser step.
    clip_grad_norm : float, optional
        Rescale the gradient to at most this global 2-norm before each step.
    checkpoint_path : path, optional
        The best weights are saved there (atomically) whenever validation improves.

    Returns
    -------
    History
        Its ``seconds`` is the wall time of the whole call, validation included.
    """
    from tqdm.auto import tqdm

    epochs = integer(epochs, "epochs", low=1)
    if patience is not None:
        patience = integer(patience, "patience", low=1)
    if patience is not None and val_batches is None:
        raise ValueError("early stopping (patience=...) needs val_batches")
    if clip_grad_norm is not None:
        clip_grad_norm = real(clip_grad_norm, "clip_grad_norm", low=0, low_open=True)
    start = time.perf_counter()
    device = resolve_device(device)
    model.to(device)
    history, best_state = History(), None
    total_steps = len(train_batches) * epochs if isinstance(train_batches, Sized) else None
    with tqdm(total=total_steps, disable=not progress, desc="training", unit="batch") as bar:
        for epoch in range(epochs):
            history.train_loss.append(
                _train_epoch(model, loss_fn, optimizer, train_batches, device, clip_grad_norm, scheduler, bar)
            )
            if val_batches is None:
                continue
            history.val_loss.append(evaluate(model, loss_fn, val_batches, device))
            best = history.best_val_loss
            if best is None or history.val_loss[-1] < best:
                history.best_epoch = epoch
                best_state = copy.deepcopy(model.state_dict())
                if checkpoint_path is not None:
                    _save_atomically(best_state, checkpoint_path)
            bar.set_description(f"epoch {epoch + 1}: val {history.val_loss[-1]:.4f}")
            if patience is not None and epoch - (history.best_epoch or 0) >= patience:
                history.stopped_early = True
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    history.seconds = time.perf_counter() - start
    return history
