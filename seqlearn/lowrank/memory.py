r"""Invisible overlaps as a memory of past tasks: the twin experiment, run in overlap space.

**Protocol** (the paper's Fig. 4d-f, scaled down). Each twin pair shares a random start (the six
cross overlaps :math:`|\mathcal N(0, 0.4^2)|`, the four norms :math:`U(0.5, 2)`). Twin 1 learns
task A (flip-flop, waits 1-2 s, input 2, target 1), twin 2 task B (decision making); each
network's rate :math:`\eta` is divided by 5 the first time its loss drops below 0.015. Then both
learn the teacher task C, whose loss is the code's :math:`T\,dt` times the mean squared error.
Every phase is the overlap ODE :math:`\sigma \leftarrow \sigma - \eta\,\bar G(\sigma)\,
\nabla_\sigma L` with :math:`\nabla_\sigma L` through the effective erf model
(:func:`seqlearn.lowrank.erf.overlap_gradient`); all twins train together, batched over
networks, on trials drawn from pre-generated pools.

**Decoding.** Which task did a network learn first? A logistic regression on standardised
features, either the seven visible or the three invisible overlaps, at three times (start, end of
A/B, end of C), trained on all but two pairs and tested on the two held out (whole pairs are
held out at the start, where twins are identical; after that, as in the paper, two networks
of each label are drawn independently), optionally with
:math:`\mathcal N(0, s^2)` noise on the training features. The claim under test: after C the
visible overlaps have converged to the teacher's (decoding at chance) while the invisible ones,
which integrate the training history, still tell A from B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..device import resolve_device
from ..validation import generator, integer, real, real_array
from .erf import Batch, overlap_gradient
from .overlaps import INVISIBLE, OVERLAPS, VISIBLE, index, ode_step
from .tasks import decision_making, flip_flop, teacher

__all__ = ["TIMES", "MemoryExperiment", "twin_start", "logistic_fit", "decode", "memory_experiment"]

TIMES = ("start", "A/B", "C")


@dataclass(frozen=True)
class MemoryExperiment:
    r"""The twins' overlaps and losses, and the decoders' accuracies.

    Attributes
    ----------
    sigma : np.ndarray, shape (3, 2, pairs, 10)
        Overlaps at the start, the end of A/B and the end of C; axis 1 is (twin A, twin B).
    loss : np.ndarray, shape (epochs_ab + epochs_c, 2, pairs)
        Each step's batch loss (masked MSE in A/B; :math:`T\,dt` times the MSE in C).
    twin_difference : np.ndarray, shape (3, pairs, 10)
        :math:`\sigma_A - \sigma_B` per pair at the three times.
    accuracy : dict
        ``{(time, features): (resamples,) test accuracies}``, time in ``("start", "A/B", "C")``,
        features ``"visible"`` or ``"invisible"``.
    """

    sigma: np.ndarray
    loss: np.ndarray
    twin_difference: np.ndarray
    accuracy: dict[tuple[str, str], np.ndarray]


def twin_start(pairs: int, rng=None) -> np.ndarray:
    r"""Random starts, shape (pairs, 10): cross overlaps :math:`|\mathcal N(0, 0.4^2)|`, norms :math:`U(0.5, 2)`.

    As in the paper, the draws are not checked to be a positive definite Gram matrix: overlap
    space does not need vectors.
    """
    pairs = integer(pairs, "pairs", low=1)
    rng = generator(rng)
    sigma = np.empty((pairs, len(OVERLAPS)))
    sigma[:, index(["zm", "zu", "vm", "vu", "mu", "zv"])] = np.abs(rng.normal(0.0, 0.4, (pairs, 6)))
    sigma[:, index(["mm", "uu", "vv", "zz"])] = rng.uniform(0.5, 2.0, (pairs, 4))
    return sigma


def _draw(pool: Batch, nets: int, batch: int, rng: np.random.Generator) -> Batch:
    """``batch`` trials per network from a pool of ``(P, T)`` arrays: each ``(nets, batch, T)``."""
    picks = rng.integers(0, pool[0].shape[0], (nets, batch))
    return pool[0][picks], pool[1][picks], pool[2][picks]


def _stack(*batches: Batch) -> Batch:
    """Batches for groups of networks joined along the network axis."""
    return tuple(np.concatenate(parts) for parts in zip(*batches))  # type: ignore[return-value]


def _capped(sigma: torch.Tensor, new: torch.Tensor, max_step: float | None) -> torch.Tensor:
    """``new``, with each network's step ``new - sigma`` scaled down to at most ``max_step`` per overlap."""
    if max_step is None:
        return new
    step = new - sigma
    return sigma + step * (max_step / step.abs().amax(-1, keepdim=True)).clamp(max=1.0)


def _train(sigma, draw, epochs, eta, *, dt, scale, drop_below, max_step, device, bar, phase):
    """``epochs`` Euler steps of the overlap ODE for every network, ``draw()`` a batch per step.

    Each network's rate ``eta`` (nets,) is divided by 5 the first time its loss is below
    ``drop_below``; the gradient is ``scale`` times the masked MSE's.
    """
    losses, dropped = [], np.zeros(len(eta), dtype=bool)
    for epoch in range(epochs):
        loss, grad = overlap_gradient(sigma, draw(), dt=dt, device=device)
        loss = scale * loss.cpu().numpy()
        if not np.isfinite(loss).all():
            raise FloatingPointError(
                f"networks {np.flatnonzero(~np.isfinite(loss)).tolist()} diverged (non-finite loss) at epoch {epoch} "
                f"of phase {phase}: lower the phase's eta or pass max_step"
            )
        newly = ~dropped & (loss < drop_below)
        eta, dropped = np.where(newly, eta / 5, eta), dropped | newly
        step = torch.as_tensor(scale * eta[:, None], device=grad.device) * grad  # eta_n dL_n/dsigma_n
        sigma = _capped(sigma, ode_step(sigma, step, 1.0), max_step)  # ode_step is linear in eta grad
        losses.append(loss)
        bar.update(1)
    return sigma, np.array(losses)


def logistic_fit(X, y, *, C: float = 1.0, iterations: int = 30) -> np.ndarray:
    r"""An L2-regularised logistic regression by Newton's method: weights ``(d + 1,)``, the intercept last.

    Minimises :math:`C \sum_i \ell(y_i, w^\top x_i + b) + \tfrac12 \|w\|^2` (the intercept is not
    penalised), :math:`\ell` the log loss, as scikit-learn's ``LogisticRegression(C=C)``.

    Parameters
    ----------
    X : array, shape (n, d)
    y : array of 0/1, shape (n,)
    """
    X1 = np.column_stack([X, np.ones(len(X))])
    penalty = np.diag(np.r_[np.ones(X.shape[1]), 0.0]) / C
    w = np.zeros(X1.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-X1 @ w))
        hessian = X1.T @ (X1 * (p * (1 - p))[:, None]) + penalty + 1e-12 * np.eye(len(w))
        w = w - np.linalg.solve(hessian, X1.T @ (p - y) + penalty @ w)
    return w


def _split(pairs: int, held_out: int, grouped: bool, rng: np.random.Generator) -> np.ndarray:
    """Test membership of the ``2 pairs`` networks (twins A, then twins B), shape (2 pairs,).

    Grouped: ``held_out`` whole pairs. Stratified: ``held_out`` twins A and ``held_out`` twins B,
    drawn independently (a test network's twin may be in the training set).
    """
    if grouped:
        return np.tile(np.isin(np.arange(pairs), rng.choice(pairs, held_out, replace=False)), 2)
    return np.concatenate([np.isin(np.arange(pairs), rng.choice(pairs, held_out, replace=False)) for _ in "AB"])


def decode(
    features, *, grouped: bool = True, resamples: int = 50, held_out: int = 2, noise: float = 0.0, rng=None
) -> np.ndarray:
    r"""Cross-validated accuracy of telling twin A from twin B by their features.

    Each resample standardises the training set (after adding ``noise`` std Gaussian noise to it),
    fits :func:`logistic_fit` and scores the held-out networks: ``held_out`` whole pairs if
    ``grouped`` (the paper's split at the start, where twins are identical), else ``held_out``
    networks of each label (the paper's split after training).

    Parameters
    ----------
    features : array, shape (2, pairs, d)
        Axis 0 is the label (twin A = 0, twin B = 1).

    Returns
    -------
    np.ndarray, shape (resamples,)
        Test accuracies (chance 0.5).
    """
    features = real_array(features, "features", ndim=3)
    if features.shape[0] != 2:
        raise ValueError(f"features must have shape (2, pairs, d), got {features.shape}")
    pairs = features.shape[1]
    held_out = integer(held_out, "held_out", low=1, high=pairs - 1)
    noise = real(noise, "noise", low=0.0)
    rng = generator(rng)
    labels = np.repeat([0.0, 1.0], pairs)
    X = features.reshape(2 * pairs, -1)
    accuracies = []
    for _ in range(integer(resamples, "resamples", low=1)):
        test = _split(pairs, held_out, grouped, rng)
        train_X = X[~test] + noise * rng.standard_normal(X[~test].shape)
        mean, std = train_X.mean(0), train_X.std(0) + 1e-12
        w = logistic_fit((train_X - mean) / std, labels[~test])
        predicted = ((X[test] - mean) / std) @ w[:-1] + w[-1] > 0
        accuracies.append(np.mean(predicted == labels[test]))
    return np.array(accuracies)


def memory_experiment(
    pairs: int = 8,
    *,
    rng=None,
    dt: float = 0.1,
    batch: int = 32,
    pool: int = 1024,
    epochs_ab: int = 800,
    eta_ab: float = 0.02,
    drop_below: float = 0.015,
    epochs_c: int = 800,
    eta_c: float = 5e-3,
    resamples: int = 50,
    noise: float = 0.0,
    max_step: float | None = None,
    device=None,
    progress: bool = True,
) -> MemoryExperiment:
    r"""The twin experiment in overlap space: A vs B, then C, then decode the history.

    Defaults are the brief's scaled-down run (the paper's: 10 pairs, dt 0.05, batch 128,
    30,000 epochs per phase, :math:`\eta` 0.01 and 0.001). Trials are 20 s long; ``pool``
    trials per task are drawn once, and every step draws ``batch`` of them per network.

    Parameters
    ----------
    pairs : int
        Twin pairs (``2 pairs`` networks trained together).
    epochs_ab, eta_ab, drop_below : int, float, float
        Phase A/B: steps, rate, and the loss below which a network's rate is divided by 5 (once).
    epochs_c, eta_c : int, float
        Phase C: steps and rate (the loss is :math:`T\,dt` times the MSE, as in the paper's code).
    resamples, noise : int, float
        The decoders' random splits and training-feature noise (see :func:`decode`).
    max_step : float, optional
        Cap on any overlap's change in one step (each network's step is scaled down to it). The
        metric grows with the norms, so a fixed :math:`\eta` can overshoot once they have grown;
        ``None`` (default) is the plain Euler ODE.

    Raises
    ------
    FloatingPointError
        If a network's loss becomes non-finite (its overlaps left the set of Gram matrices).

    Returns
    -------
    MemoryExperiment
    """
    from tqdm.auto import tqdm

    pairs = integer(pairs, "pairs", low=3)  # the decoders hold out 2 pairs
    rng = generator(rng)
    device = resolve_device(device)
    epochs_ab, epochs_c = integer(epochs_ab, "epochs_ab", low=1), integer(epochs_c, "epochs_c", low=1)
    eta_ab, eta_c = real(eta_ab, "eta_ab", low=0.0, low_open=True), real(eta_c, "eta_c", low=0.0, low_open=True)
    max_step = None if max_step is None else real(max_step, "max_step", low=0.0, low_open=True)
    pools = {
        "A": flip_flop(pool, rng=rng, dt=dt, stim_range=(1.0, 2.0), input_amp=2.0, target_amp=1.0),
        "B": decision_making(pool, rng=rng, dt=dt),
        "C": teacher(pool, rng=rng, dt=dt),
    }
    start = twin_start(pairs, rng)
    sigma = torch.as_tensor(np.concatenate([start, start]), device=device)  # (2 pairs, 10): twins A, then B
    T = pools["C"][0].shape[1]

    def draw_ab() -> Batch:  # twins A on task A, twins B on task B
        return _stack(_draw(pools["A"], pairs, batch, rng), _draw(pools["B"], pairs, batch, rng))

    def draw_c() -> Batch:
        return _draw(pools["C"], 2 * pairs, batch, rng)

    phases = [("A/B", draw_ab, epochs_ab, eta_ab, 1.0, drop_below), ("C", draw_c, epochs_c, eta_c, T * dt, -np.inf)]
    snapshots, losses = [sigma], []
    with tqdm(total=epochs_ab + epochs_c, disable=not progress, desc="twins: A/B, then C", unit="epoch") as bar:
        for phase, draw, epochs, eta, scale, drop in phases:
            rates = np.full(2 * pairs, eta)  # (nets,)
            sigma, loss = _train(
                sigma,
                draw,
                epochs,
                rates,
                dt=dt,
                scale=scale,
                drop_below=drop,
                max_step=max_step,
                device=device,
                bar=bar,
                phase=phase,
            )
            snapshots.append(sigma)
            losses.append(loss)
    sigmas = np.stack([s.cpu().numpy().reshape(2, pairs, len(OVERLAPS)) for s in snapshots])  # (3, 2, pairs, 10)
    accuracy = {
        (time, kind): decode(sigmas[k][..., index(names)], grouped=k == 0, resamples=resamples, noise=noise, rng=rng)
        for k, time in enumerate(TIMES)
        for kind, names in (("visible", VISIBLE["erf"]), ("invisible", INVISIBLE["erf"]))
    }
    loss = np.concatenate(losses).reshape(-1, 2, pairs)
    return MemoryExperiment(sigmas, loss, sigmas[:, 0] - sigmas[:, 1], accuracy)
