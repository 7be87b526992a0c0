r"""Training the neural language model.

Training minimises the mean negative log-likelihood of the targets
(:func:`seqlearn.losses.masked_cross_entropy`) with :func:`seqlearn.training.fit`, by

* SGD as in Bengio et al. (2003): learning rate :math:`\varepsilon_t = \varepsilon_0 / (1 + r t)`
  after :math:`t` updates, and weight decay on the weights and embeddings
  (:math:`C, H, U, W`) but not on the biases (:math:`d, b`); or
* Adam, with the same two parameter groups.

The validation perplexity is :math:`e^{\bar L}` of the token-weighted mean loss
:math:`\bar L` over the validation windows. Evaluation (token log-probabilities,
perplexity, agreement) is the same for every language model: :mod:`seqlearn.lm`.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from ..device import resolve_device
from ..lm import LMHistory, fit_lm
from ..losses import masked_cross_entropy
from ..validation import integer, real
from .data import WindowBatches
from .model import BengioNLM

__all__ = [
    "nlm_loss",
    "parameter_groups",
    "make_optimizer",
    "inverse_time_decay",
    "train_nlm",
    "EpochParts",
]

OPTIMIZERS = ("adam", "sgd")
DEFAULT_LR = {"adam": 3e-3, "sgd": 1.0}


def nlm_loss(model: BengioNLM, batch) -> tuple[torch.Tensor, int]:
    """``(mean negative log-likelihood, number of targets)`` of a ``(contexts, targets)`` batch."""
    contexts, targets = batch
    return masked_cross_entropy(model(contexts), targets), targets.numel()


def parameter_groups(model: BengioNLM, weight_decay: float = 0.0) -> list[dict]:
    r"""Two optimiser parameter groups: weight decay on :math:`C, H, U, W`, none on :math:`d, b`.

    Weight decay :math:`\lambda` adds :math:`\lambda \theta` to the gradient of every weight
    :math:`\theta` (the gradient of :math:`\frac{\lambda}{2} \|\theta\|^2`).
    """
    if not isinstance(model, BengioNLM):
        raise TypeError(f"model must be a BengioNLM, got {type(model).__name__}")
    weight_decay = real(weight_decay, "weight_decay", low=0)
    return [{"params": model.weights(), "weight_decay": weight_decay}, {"params": model.biases(), "weight_decay": 0.0}]


def make_optimizer(
    model: BengioNLM, optimizer: str = "adam", lr: float | None = None, weight_decay: float = 0.0
) -> torch.optim.Optimizer:
    """``torch.optim.Adam`` or plain ``torch.optim.SGD`` over :func:`parameter_groups`.

    ``lr`` defaults to 3e-3 for Adam and 1.0 for SGD (on the mean loss of a batch).
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    lr = DEFAULT_LR[optimizer] if lr is None else real(lr, "lr", low=0, low_open=True)
    groups = parameter_groups(model, weight_decay)
    return torch.optim.Adam(groups, lr=lr) if optimizer == "adam" else torch.optim.SGD(groups, lr=lr)


def inverse_time_decay(optimizer: torch.optim.Optimizer, r: float) -> torch.optim.lr_scheduler.LambdaLR:
    r"""The schedule of Bengio et al.: :math:`\varepsilon_t = \varepsilon_0 / (1 + r t)`.

    :math:`t` is the number of updates so far; step the scheduler after every optimiser step
    (as :func:`seqlearn.training.fit` does). ``r = 0`` keeps the rate constant.
    """
    r = real(r, "lr_decay r", low=0)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda t: 1.0 / (1.0 + r * t))


class EpochParts:
    """A pass over ``batches`` in ``parts`` consecutive parts: each iteration yields the next part.

    :func:`seqlearn.training.fit` validates after each of its epochs; over ``EpochParts`` an epoch
    of ``fit`` is a fraction ``1 / parts`` of a pass, so validation comes ``parts`` times per pass.
    A new pass (a fresh shuffle of ``batches``) begins after the last part of the previous one.
    """

    def __init__(self, batches, parts: int):
        self.batches, self.parts = batches, integer(parts, "parts", low=1)
        n = len(batches)
        if self.parts > n:
            raise ValueError(f"cannot split a pass of {n} batches into {self.parts} parts")
        self._sizes = [n * (i + 1) // self.parts - n * i // self.parts for i in range(self.parts)]
        self._part = 0
        self._pass: Iterator = iter(())
        self.n_targets = batches.n_targets  # tokens of a whole pass (see seqlearn.lm.fit_lm)

    def __len__(self) -> int:
        return max(self._sizes)

    def __iter__(self):
        if self._part == 0:
            self._pass = iter(self.batches)
        size, self._part = self._sizes[self._part], (self._part + 1) % self.parts
        for _ in range(size):
            yield next(self._pass)


def train_nlm(
    model: BengioNLM,
    train_stream,
    val_stream=None,
    *,
    optimizer: str = "adam",
    lr: float | None = None,
    epochs: int = 5,
    batch_size: int = 256,
    weight_decay: float = 0.0,
    lr_decay: float = 0.0,
    patience: int | None = None,
    clip_grad_norm: float | None = None,
    evals_per_epoch: int = 1,
    device=None,
    seed: int = 0,
    progress: bool = True,
) -> LMHistory:
    r"""Train a :class:`BengioNLM` on an encoded stream with :func:`seqlearn.training.fit`.

    Parameters
    ----------
    model : BengioNLM
        Trained in place (and moved to ``device``); with validation data, the weights of the
        epoch with the lowest validation loss are restored at the end.
    train_stream, val_stream : array of int
        Encoded streams (:func:`seqlearn.data.vocab.encode_sentences`); ``val_stream`` optional.
    optimizer : {"adam", "sgd"}
        See :func:`make_optimizer`.
    lr : float, optional
        :math:`\varepsilon_0` (default 3e-3 for Adam, 1.0 for SGD).
    epochs : int
        Maximum number of passes over the training windows.
    batch_size : int
        Windows per update; batches are shuffled with a generator seeded by ``seed``.
    weight_decay : float
        :math:`\lambda` on :math:`C, H, U, W` (not on the biases).
    lr_decay : float
        :math:`r` of :math:`\varepsilon_t = \varepsilon_0 / (1 + r t)`, :math:`t` the number
        of updates (0: constant).
    patience : int, optional
        Early stopping on the validation loss (needs ``val_stream``), counted in validation points.
    clip_grad_norm : float, optional
        Clip the gradient's global norm before each update.
    evals_per_epoch : int
        Validate (and record the losses) this many times per epoch, after equal parts of it
        (:class:`EpochParts`); the history then has ``epochs * evals_per_epoch`` entries.
    device : optional
        Default :func:`seqlearn.device.default_device`.
    seed : int
        Seed of the batch order (the initialisation is the model's: ``BengioNLM(seed=...)``).
    progress : bool
        Show a progress bar.

    Returns
    -------
    seqlearn.lm.LMHistory
        Losses and perplexities (``val_perplexity``) at each validation point (``epochs``), the wall time and the
        training speed in target tokens per second (validation included in the time).

    Notes
    -----
    Speed on the CPU: for the chapter's sizes (|V| of a few hundred, m = 30, h = 64) one
    thread is as fast as two, and where other processes share the cores, several threads
    can be many times slower (each operation waits for every thread); the caller chooses
    with ``torch.set_num_threads``.
    """
    if not isinstance(model, BengioNLM):
        raise TypeError(f"model must be a BengioNLM, got {type(model).__name__}")
    device = resolve_device(device)
    model.to(device)
    n, V = model.order, model.vocab_size
    parts = integer(evals_per_epoch, "evals_per_epoch", low=1)
    train = WindowBatches(train_stream, n, batch_size, shuffle=True, seed=seed, vocab_size=V, device=device)
    train_parts = train if parts == 1 else EpochParts(train, parts)
    val = (
        None if val_stream is None else WindowBatches(val_stream, n, max(batch_size, 2048), vocab_size=V, device=device)
    )
    opt = make_optimizer(model, optimizer, lr, weight_decay)
    scheduler = inverse_time_decay(opt, lr_decay) if lr_decay else None
    return fit_lm(
        model,
        nlm_loss,
        opt,
        train_parts,
        val,
        evals_per_epoch=parts,
        epochs=integer(epochs, "epochs", low=1) * parts,
        patience=patience,
        scheduler=scheduler,
        clip_grad_norm=clip_grad_norm,
        device=device,
        progress=progress,
    )
