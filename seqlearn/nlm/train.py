r"""Training and evaluating the neural language model.

Training minimises the mean negative log-likelihood of the targets
(:func:`seqlearn.losses.masked_cross_entropy`) with :func:`seqlearn.training.fit`, by

* SGD as in Bengio et al. (2003): learning rate :math:`\varepsilon_t = \varepsilon_0 / (1 + r t)`
  after :math:`t` updates, and weight decay on the weights and embeddings
  (:math:`C, H, U, W`) but not on the biases (:math:`d, b`); or
* Adam, with the same two parameter groups.

The validation perplexity is :math:`e^{\bar L}` of the token-weighted mean loss
:math:`\bar L` over the validation windows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..data.vocab import Vocab
from ..device import resolve_device
from ..losses import masked_cross_entropy
from ..training import History, fit
from .data import WindowBatches
from .model import BengioNLM

__all__ = [
    "NLMHistory",
    "nlm_loss",
    "parameter_groups",
    "make_optimizer",
    "inverse_time_decay",
    "train_nlm",
    "token_logprobs",
    "perplexity",
    "agreement_scorer",
]

OPTIMIZERS = ("adam", "sgd")
DEFAULT_LR = {"adam": 3e-3, "sgd": 1.0}


@dataclass
class NLMHistory(History):
    """:class:`seqlearn.training.History` with perplexities and the training speed."""

    seconds: float = 0.0
    tokens_per_second: float = 0.0

    @property
    def val_perplexity(self) -> list[float]:
        r"""Validation perplexity :math:`e^{\bar L}` after each epoch."""
        return [math.exp(loss) for loss in self.val_loss]

    @property
    def train_perplexity(self) -> list[float]:
        """Training perplexity of each epoch (of the running model, as it trained)."""
        return [math.exp(loss) for loss in self.train_loss]

    @property
    def best_val_perplexity(self) -> float | None:
        """The lowest validation perplexity (that of the restored weights)."""
        return None if self.best_val_loss is None else math.exp(self.best_val_loss)


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
    weight_decay = _check_number(weight_decay, "weight_decay")
    return [{"params": model.weights(), "weight_decay": weight_decay},
            {"params": model.biases(), "weight_decay": 0.0}]


def make_optimizer(model: BengioNLM, optimizer: str = "adam", lr: float | None = None,
                   weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """``torch.optim.Adam`` or plain ``torch.optim.SGD`` over :func:`parameter_groups`.

    ``lr`` defaults to 3e-3 for Adam and 1.0 for SGD (on the mean loss of a batch).
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    lr = DEFAULT_LR[optimizer] if lr is None else _check_number(lr, "lr", strict=True)
    groups = parameter_groups(model, weight_decay)
    return torch.optim.Adam(groups, lr=lr) if optimizer == "adam" else torch.optim.SGD(groups, lr=lr)


def inverse_time_decay(optimizer: torch.optim.Optimizer, r: float) -> torch.optim.lr_scheduler.LambdaLR:
    r"""The schedule of Bengio et al.: :math:`\varepsilon_t = \varepsilon_0 / (1 + r t)`.

    :math:`t` is the number of updates so far; step the scheduler after every optimiser step
    (as :func:`seqlearn.training.fit` does). ``r = 0`` keeps the rate constant.
    """
    r = _check_number(r, "lr_decay r")
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda t: 1.0 / (1.0 + r * t))


def _check_number(value, name: str, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (strict and value == 0):
        raise ValueError(f"{name} must be a finite number {'>' if strict else '>='} 0, got {value}")
    return value


def train_nlm(model: BengioNLM, train_stream, val_stream=None, *, optimizer: str = "adam",
              lr: float | None = None, epochs: int = 5, batch_size: int = 256, weight_decay: float = 0.0,
              lr_decay: float = 0.0, patience: int | None = None, clip_grad_norm: float | None = None,
              device=None, seed: int = 0, progress: bool = True) -> NLMHistory:
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
        Early stopping on the validation loss (needs ``val_stream``).
    clip_grad_norm : float, optional
        Clip the gradient's global norm before each update.
    device : optional
        Default :func:`seqlearn.device.default_device`.
    seed : int
        Seed of the batch order (the initialisation is the model's: ``BengioNLM(seed=...)``).
    progress : bool
        Show a progress bar.

    Returns
    -------
    NLMHistory
        Per-epoch losses and perplexities (``val_perplexity``), the wall time and the
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
    train = WindowBatches(train_stream, n, batch_size, shuffle=True, seed=seed, vocab_size=V, device=device)
    val = None if val_stream is None else WindowBatches(val_stream, n, max(batch_size, 2048), vocab_size=V,
                                                        device=device)
    opt = make_optimizer(model, optimizer, lr, weight_decay)
    scheduler = inverse_time_decay(opt, lr_decay) if lr_decay else None
    start = time.perf_counter()
    history = fit(model, nlm_loss, opt, train, val, epochs=epochs, patience=patience, scheduler=scheduler,
                  clip_grad_norm=clip_grad_norm, device=device, progress=progress)
    seconds = time.perf_counter() - start
    return NLMHistory(**vars(history), seconds=seconds,
                      tokens_per_second=train.n_targets * len(history.train_loss) / seconds)


def _model_device(model: BengioNLM, device):
    return next(model.parameters()).device if device is None else resolve_device(device)


def token_logprobs(model: BengioNLM, stream, device=None, batch_size: int = 4096) -> np.ndarray:
    r"""Natural-log :math:`\log P(w_t \mid w_{t-n+1}^{t-1})` of every predicted token of ``stream``.

    One entry per token that is not ``<s>`` (words and ``</s>``), in stream order: aligned
    1:1 with Chapter 1's ``LanguageModel.token_logprobs`` on the same stream. Computed in
    batches of ``batch_size`` windows without gradients, in evaluation mode.

    Parameters
    ----------
    model : BengioNLM
    stream : array of int, shape ``(L,)``
        An encoded stream.
    device : optional
        Where to compute (the model is moved there); default: where the model is.

    Returns
    -------
    numpy.ndarray, float64, shape ``(T,)``
    """
    if not isinstance(model, BengioNLM):
        raise TypeError(f"model must be a BengioNLM, got {type(model).__name__}")
    device = _model_device(model, device)
    model.to(device)
    windows = WindowBatches(stream, model.order, batch_size, vocab_size=model.vocab_size, device=device)
    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad():
        for contexts, targets in windows:
            logits = model(contexts)  # (B, |V|)
            picked = logits.gather(1, targets[:, None])[:, 0]  # (B,)
            out.append(picked - torch.logsumexp(logits, dim=1))
    model.train(was_training)
    return torch.cat(out).double().cpu().numpy()


def perplexity(model: BengioNLM, stream, device=None, batch_size: int = 4096) -> float:
    r"""Perplexity :math:`\exp(-\frac1T \sum_t \log P(w_t \mid \text{context}_t))` of ``stream``."""
    return math.exp(-float(np.mean(token_logprobs(model, stream, device, batch_size))))


def agreement_scorer(model: BengioNLM, vocab: Vocab, device=None):
    r"""A ``score_fn(prefix, candidates)`` for :func:`seqlearn.data.synthetic.agreement_accuracy`.

    It returns :math:`\log P(c \mid \langle s \rangle\, \mathrm{prefix})` for each candidate
    next token :math:`c` (a NumPy array); the model sees the last :math:`n - 1` tokens of
    ``<s> prefix``, with ``<s>`` in the slots left of the sentence start.
    """
    if not isinstance(model, BengioNLM):
        raise TypeError(f"model must be a BengioNLM, got {type(model).__name__}")
    if not isinstance(vocab, Vocab) or len(vocab) != model.vocab_size:
        raise ValueError(f"vocab must be the model's Vocab of {model.vocab_size} tokens")
    device = _model_device(model, device)

    def score(prefix, candidates) -> np.ndarray:
        history = [Vocab.bos_id] * model.order + vocab.encode(list(prefix)).tolist()
        context = torch.tensor([history[len(history) - model.order + 1:]], device=device)  # (1, n-1)
        with torch.no_grad():
            logp = model.to(device).log_probs(context)[0]  # (|V|,)
        return logp[torch.as_tensor(vocab.encode(list(candidates)), device=device)].double().cpu().numpy()

    return score
