r"""The delayed multi-lag regression task of Livi (arXiv 2512.05790), and a gated network that regresses it.

Inputs :math:`x_t \sim \mathcal N(0, I_D)`, i.i.d. over sequences and steps; one fixed unit
direction :math:`u` per task; the target at every step mixes the input's projection at a few lags,

.. math::
    y_t = \sum_k c_k\, u^\top x_{t - \ell_k}\, \mathbf 1[t \ge \ell_k] + \varepsilon_t,
    \qquad \varepsilon_t \sim \mathcal N(0, \sigma^2)

(steps :math:`t = 0, \dots, T - 1`). Since :math:`u^\top x_t \sim \mathcal N(0, 1)` independently
over :math:`t`, the best predictor's mean squared error is :math:`\sigma^2` and the best
:math:`R^2` is :func:`achievable_r2`. A :class:`GatedRegressor` reads a scalar out of any of
the five cells, :math:`\hat y_t = w^\top h_{t+1} + b`, and :func:`train_regressor` fits it by
AdamW on the mean squared error over every step (the paper's recipe: gradient clipping, the
best validation weights restored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..device import resolve_device
from ..seeding import torch_generator
from ..validation import generator, int_array, integer, real, real_array
from .models import Trajectory, architecture_of, build_cell, run_cell

__all__ = ["DelayedRegression", "delayed_regression", "achievable_r2", "GatedRegressor", "r2_score", "train_regressor"]


@dataclass(frozen=True)
class DelayedRegression:
    r"""Sequences of the delayed regression task.

    Attributes: ``x`` ``(n, T, D)`` and ``y`` ``(n, T)`` (float32 tensors), the direction ``u``
    ``(D,)``, the task ``lags`` and ``coeffs`` (NumPy, ``(K,)``), ``noise_std`` :math:`\sigma`.
    """

    x: torch.Tensor
    y: torch.Tensor
    u: np.ndarray
    lags: np.ndarray
    coeffs: np.ndarray
    noise_std: float


def delayed_regression(
    n: int,
    T: int,
    D: int = 8,
    lags=(4, 8, 16, 32),
    coeffs=(0.6, 0.5, 0.4, 0.3),
    noise_std: float = 0.4,
    seed: int = 0,
    u=None,
) -> DelayedRegression:
    r"""``n`` sequences of length ``T`` of :math:`y_t = \sum_k c_k u^\top x_{t-\ell_k} + \varepsilon_t`.

    ``u``: the unit direction ``(D,)``; drawn from ``seed`` when ``None`` (pass a training set's
    ``u`` to draw a diagnostic set of the *same* task with another seed). Lags must be < ``T``.
    """
    n, T, D = integer(n, "n", low=1), integer(T, "T", low=2), integer(D, "D", low=1)
    lags = int_array(lags, "lags", ndim=1, low=1, high=T - 1)
    coeffs = real_array(coeffs, "coeffs", ndim=1)
    if lags.size == 0 or coeffs.shape != lags.shape:
        raise ValueError(f"lags and coeffs must be non-empty and of one length, got {lags.size} and {coeffs.size}")
    noise_std = real(noise_std, "noise_std", low=0.0)
    rng = generator(seed)
    if u is None:
        u = rng.standard_normal(D)
    u = real_array(u, "u", ndim=1)
    if u.shape != (D,) or not np.linalg.norm(u) > 0:
        raise ValueError(f"u must be a non-zero vector of length D = {D}, got shape {u.shape}")
    u = u / np.linalg.norm(u)
    x = rng.standard_normal((n, T, D))
    p = x @ u  # u^T x_t, (n, T)
    y = noise_std * rng.standard_normal((n, T))
    for ell, c in zip(lags, coeffs):
        y[:, ell:] += c * p[:, :-ell]
    as_tensor = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    return DelayedRegression(as_tensor(x), as_tensor(y), u, lags, coeffs, noise_std)


def achievable_r2(task: DelayedRegression) -> float:
    r"""The best :math:`R^2` any predictor reaches: :math:`1 - \sigma^2 / \overline{\mathrm{Var}\, y_t}`.

    :math:`\mathrm{Var}\, y_t = \sigma^2 + \sum_{k : t \ge \ell_k} c_k^2`, averaged over the
    :math:`T` steps (the pooled variance the :math:`R^2` of :func:`r2_score` divides by).
    """
    T = task.y.shape[1]
    t = np.arange(T)[:, None]
    var_y = task.noise_std**2 + ((t >= task.lags[None, :]) * task.coeffs[None, :] ** 2).sum(axis=1)  # (T,)
    return float(1.0 - task.noise_std**2 / var_y.mean())


def r2_score(y_hat: torch.Tensor, y: torch.Tensor) -> float:
    r""":math:`R^2 = 1 - \sum (\hat y - y)^2 / \sum (y - \bar y)^2` over all sequences and steps."""
    residual = ((y_hat - y) ** 2).sum()
    return float(1.0 - residual / ((y - y.mean()) ** 2).sum())


class GatedRegressor(nn.Module):
    r"""A gated cell of :data:`~seqlearn.learnability.models.ARCHITECTURES` and a scalar readout.

    :math:`\hat y_t = w^\top h_{t+1} + b` from the state after reading :math:`x_t`. The readout
    ``w`` ``(1, H)`` starts as a random unit row (the paper's orthogonal initialisation of a
    :math:`1 \times H` matrix), ``b = 0``. Other arguments go to
    :func:`~seqlearn.learnability.models.build_cell`.
    """

    def __init__(
        self,
        architecture: str,
        input_size: int,
        hidden_size: int,
        s0=0.05,
        layernorm=True,
        seed=None,
        dtype=None,
        device=None,
    ):
        super().__init__()
        factory = {"dtype": dtype, "device": resolve_device(device)}
        self.cell = build_cell(architecture, input_size, hidden_size, s0=s0, layernorm=layernorm, seed=seed, **factory)
        self.readout = nn.Linear(hidden_size, 1, **factory)
        w = torch.randn((1, hidden_size), generator=torch_generator(None if seed is None else seed + 1))
        with torch.no_grad():
            self.readout.weight.copy_(w / w.norm())
            self.readout.bias.zero_()

    @property
    def architecture(self) -> str:
        """The cell's name in :data:`~seqlearn.learnability.models.ARCHITECTURES`."""
        return architecture_of(self.cell)

    def trajectory(self, x: torch.Tensor) -> Trajectory:
        """The cell's :class:`~seqlearn.learnability.models.Trajectory` over ``x`` ``(B, T, D)``."""
        return run_cell(self.cell, x)

    def readout_of(self, traj: Trajectory) -> torch.Tensor:
        r""":math:`\hat y` ``(B, T)`` from a trajectory's states :math:`h_1, \dots, h_T`."""
        return self.readout(traj.h[:, 1:]).squeeze(-1)

    def forward(self, x: torch.Tensor, states: bool = False) -> torch.Tensor:
        r""":math:`\hat y` ``(B, T)`` for ``x`` ``(B, T, D)``; with ``states``, :math:`h_0 .. h_T` ``(B, T + 1, H)``."""
        traj = run_cell(self.cell, x, gates=False)
        return traj.h if states else self.readout_of(traj)


def _batches(task: DelayedRegression, batch_size: int, seed: int):
    """Shuffled minibatches ``(x, y)`` of ``task``, reshuffled on every pass (re-iterable)."""

    class Batches:
        def __init__(self):
            self.g = torch_generator(seed)

        def __len__(self):
            return -(-task.x.shape[0] // batch_size)

        def __iter__(self):
            order = torch.randperm(task.x.shape[0], generator=self.g)
            for i in range(0, len(order), batch_size):
                idx = order[i : i + batch_size]
                yield task.x[idx], task.y[idx]

    return Batches()


def _mse(model: GatedRegressor, batch):
    x, y = batch
    return torch.mean((model(x) - y) ** 2), y.numel()


def _adamw(params, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW over ``params`` at rate ``lr`` (> 0) and decoupled weight decay ``weight_decay`` (>= 0)."""
    lr, weight_decay = real(lr, "lr", low=0.0, low_open=True), real(weight_decay, "weight_decay", low=0.0)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)


def train_regressor(
    model: GatedRegressor,
    train: DelayedRegression,
    val: DelayedRegression,
    epochs: int = 60,
    batch_size: int = 128,
    lr: float = 5e-3,
    weight_decay: float = 1e-4,
    clip: float = 1.0,
    seed: int = 0,
    device=None,
    progress: bool = True,
):
    r"""AdamW on the mean squared error over all steps; returns ``(history, optimizer)``.

    The weights of the epoch with the lowest validation loss are restored at the end (the
    paper's later recipe); the optimiser keeps its state of the last step, from which
    :func:`~seqlearn.learnability.effective_rates.adaptive_rates` reads Adam's rates. ``history`` is
    :class:`seqlearn.training.History`.
    """
    from ..training import fit

    if not isinstance(model, GatedRegressor):
        raise TypeError(f"model must be a GatedRegressor, got {type(model).__name__}")
    batch_size = integer(batch_size, "batch_size", low=1)
    optimizer = _adamw(model.parameters(), lr, weight_decay)
    history = fit(
        model,
        _mse,
        optimizer,
        _batches(train, batch_size, seed),
        [(val.x, val.y)],
        epochs=epochs,
        clip_grad_norm=clip,
        device=device,
        progress=progress,
    )
    return history, optimizer
