r"""Training the linear rank-1 network: phases of tasks, gradient descent and Adam, and their records.

:func:`gd_overlaps` runs one of the three learning maps in overlap space (the exact map, the
Euler ODE, plain descent on the visible overlaps), :func:`gd_vectors` gradient descent and
:func:`adam_vectors` Adam on the vectors, each over a list of :class:`Phase` (a task, a number of
epochs, optional label noise and a learning-rate factor), and each returns a :class:`OverlapTrajectory`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ..validation import choice, generator, integer, real, real_array
from .linear_latent import chain_rule, latent_gradient, latent_loss
from .linear_network import _dtype, _sigma_of, _theta, network_gradient, network_output_torch
from .linear_steps import exact_step, visible_step
from .linear_task import FilterTask, filter_loss, filter_task
from .overlaps import ode_step

__all__ = ["Phase", "task_phases", "OverlapTrajectory", "gd_overlaps", "gd_vectors", "adam_vectors"]

_STEPS = {"map": exact_step, "ode": ode_step, "visible": visible_step}


class Phase(NamedTuple):
    """``epochs`` gradient steps on ``task``; label noise ``noise`` (target + noise N(0, 1) per step,
    fresh every epoch) and learning rate ``lr_scale`` times the run's."""

    task: FilterTask
    epochs: int
    noise: float = 0.0
    lr_scale: float = 1.0


def task_phases(c_stars: Sequence[float], epochs: Sequence[int], *, dt: float = 0.05, T: int = 400) -> list[Phase]:
    """The filter tasks ``c_stars`` one after the other, ``epochs`` each: e.g. A-B-A = (0.2, 0.4, 0.2)."""
    if len(c_stars) != len(epochs) or not c_stars:
        raise ValueError(
            f"c_stars and epochs must be non-empty and of one length, got {len(c_stars)} and {len(epochs)}"
        )
    return [Phase(filter_task(c, dt=dt, T=T), integer(E, "epochs", low=0)) for c, E in zip(c_stars, epochs)]


@dataclass(frozen=True)
class OverlapTrajectory:
    """The record of a training run in overlap space (not a network's states over time).

    A run of E epochs: overlaps ``sigma`` (E+1, ..., 10) at the start and after each epoch, and
    ``loss`` (E+1, ...) there on the clean target of the phase just trained (the first phase's at
    the start); ``sigma[ends[i]]`` is the state at the end of phase i; ``theta`` (..., 4, N) the
    final vectors of a run on vectors.
    """

    sigma: np.ndarray
    loss: np.ndarray
    ends: tuple[int, ...]
    theta: np.ndarray | None = None


def _train(state, phases: Sequence[Phase], step, sigma_of, rng, progress: bool):
    """Run ``state <- step(state, task, lr_scale)`` through the phases, recording overlaps and loss."""
    from tqdm.auto import tqdm

    if not phases or not all(isinstance(p, Phase) for p in phases):
        raise TypeError("phases must be a non-empty sequence of Phase")
    rng = generator(rng)
    sigma = [sigma_of(state)]
    loss, ends = [latent_loss(sigma[0], phases[0].task)], []
    with tqdm(total=sum(p.epochs for p in phases), disable=not progress, desc="epochs") as bar:
        for task, epochs, noise, lr_scale in phases:
            noise = real(noise, "noise", low=0.0)
            for _ in range(integer(epochs, "epochs", low=0)):
                target = replace(task, y=task.y + noise * rng.standard_normal(task.y.size)) if noise else task
                state = step(state, target, lr_scale)
                sigma.append(sigma_of(state))
                loss.append(latent_loss(sigma[-1], task))
                bar.update()
            ends.append(len(sigma) - 1)
    return OverlapTrajectory(np.array(sigma), np.array(loss), tuple(ends)), state


def gd_overlaps(
    sigma0, phases: Sequence[Phase], *, eta: float = 5e-3, method: str = "map", rng=None, progress: bool = False
) -> OverlapTrajectory:
    r"""Gradient descent in overlap space: ``method`` "map" (:func:`exact_step`, equal to GD on the
    vectors), "ode" (the Euler ODE) or "visible" (:func:`visible_step`), at rate ``eta`` from ``sigma0`` (..., 10).

    Examples
    --------
    >>> from seqlearn.lowrank.linear_network import random_vectors
    >>> from seqlearn.lowrank.overlaps import overlaps
    >>> sigma0 = overlaps(*random_vectors(200, rng=0))  # (10,)
    >>> traj = gd_overlaps(sigma0, task_phases([0.2], [20], T=100), eta=5e-3)
    >>> traj.sigma.shape, traj.loss.shape, traj.ends
    ((21, 10), (21,), (20,))
    >>> bool(traj.loss[-1] < traj.loss[0])
    True
    """
    step_fn = _STEPS[choice(method, "method", _STEPS)]
    eta = real(eta, "eta", low=0.0)

    def step(sigma, task, lr_scale):
        return step_fn(sigma, latent_gradient(sigma, task)[1], eta * lr_scale)

    return _train(real_array(sigma0, "sigma0"), phases, step, lambda s: s, rng, progress)[0]


def _vector_gradient(theta: np.ndarray, task: FilterTask, gradient: str) -> np.ndarray:
    """dL/dtheta (..., 4, N): by the chain rule through the latent model ("overlaps") or by BPTT ("bptt")."""
    if choice(gradient, "gradient", ("overlaps", "bptt")) == "bptt":
        return network_gradient(theta, task)[1]
    return chain_rule(theta, latent_gradient(_sigma_of(theta), task)[1])


def gd_vectors(
    theta0,
    phases: Sequence[Phase],
    *,
    eta: float = 5e-3,
    gradient: str = "overlaps",
    rng=None,
    progress: bool = False,
) -> OverlapTrajectory:
    r"""Gradient descent on the vectors ``theta0`` (..., 4, N) with learning rate :math:`N\eta`:
    :math:`\theta \leftarrow \theta - N\eta\, \partial L/\partial\theta`.

    ``gradient``: "overlaps" (the chain rule through the latent model, exact and fast) or "bptt"
    (:func:`network_gradient`, the full network's time loop).
    """
    theta0 = _theta(theta0)
    eta = real(eta, "eta", low=0.0)
    N = theta0.shape[-1]

    def step(theta, task, lr_scale):
        return theta - N * eta * lr_scale * _vector_gradient(theta, task, gradient)

    traj, theta = _train(theta0, phases, step, _sigma_of, rng, progress)
    return replace(traj, theta=theta)


def adam_vectors(
    theta0,
    phases: Sequence[Phase],
    *,
    lr: float = 1e-3,
    gradient: str = "overlaps",
    device=None,
    rng=None,
    progress: bool = False,
) -> OverlapTrajectory:
    """Adam (torch, default betas) on the vectors ``theta0`` (..., 4, N) with the unscaled learning rate ``lr``.

    One optimizer for the whole run, so its moment estimates carry over from phase to phase.
    ``gradient``: "overlaps" (chain rule, computed in float64 NumPy) or "bptt" (autograd through
    :func:`network_output_torch` on ``device``).
    """
    import torch

    from ..device import resolve_device

    device = resolve_device(device)
    choice(gradient, "gradient", ("overlaps", "bptt"))
    lr = real(lr, "lr", low=0.0, low_open=True)
    theta = torch.tensor(_theta(theta0), dtype=_dtype(device), device=device, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=lr)

    def step(theta, task, lr_scale):
        for group in optimizer.param_groups:
            group["lr"] = lr * lr_scale
        optimizer.zero_grad()
        if gradient == "bptt":
            filter_loss(network_output_torch(theta, task, device=device), task).sum().backward()
        else:
            grad = _vector_gradient(_numpy(theta), task, gradient)
            theta.grad = torch.as_tensor(grad, dtype=theta.dtype, device=device)
        optimizer.step()
        return theta

    traj, theta = _train(theta, phases, step, lambda t: _sigma_of(_numpy(t)), rng, progress)
    return replace(traj, theta=_numpy(theta))


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float64)
