r"""The linear rank-1 network: its filter task, its exact 2-D latent model and how it learns.

**The network.** Vectors :math:`\theta = (m, u, v, z)`, each in :math:`\mathbb R^N`, stacked as an
array ``theta`` of shape ``(..., 4, N)`` in that order; connectivity :math:`J = u v^\top / N`
(never formed); Euler steps of size :math:`dt` from :math:`h_0 = 0`, the output read *after* the
update:

.. math::
    h_{t+1} = h_t + dt\,\big(-h_t + u\,(v^\top h_t)/N + m\, x_t\big), \qquad
    f_t = z^\top h_{t+1} / N, \qquad t = 0, \dots, T-1.

**The filter task.** An impulse :math:`x_0 = 1/dt` (zero afterwards), the target
:math:`y_k = e^{-c^* k\, dt}` and the loss :math:`L = dt \sum_k (f_k - y_k)^2`
(:func:`filter_task`, :func:`filter_loss`).

**The latent model.** :math:`h_t = \kappa_m(t)\, m + \kappa_u(t)\, u` exactly, with

.. math::
    \kappa_m(t+1) = (1 - dt)\,\kappa_m + dt\, x_t, \quad
    \kappa_u(t+1) = (1 - dt)\,\kappa_u + dt\,(\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u), \quad
    f_t = \sigma_{zm}\kappa_m(t+1) + \sigma_{zu}\kappa_u(t+1),

so the loss is a function of the four visible overlaps :math:`M` only (:func:`latent_output`,
:func:`latent_gradient`). With the impulse,
:math:`f_k = \sigma_{zm}\rho_a^k + (\sigma_{zu}\sigma_{vm}/\sigma_{vu})(\rho_b^k - \rho_a^k)`,
:math:`\rho_a = 1 - dt`, :math:`\rho_b = 1 - dt(1 - \sigma_{vu})`, and the loss is exactly zero on
the **solution set** :math:`\sigma_{zm} = 1`, :math:`\sigma_{vu} = 1 - (1 - e^{-c^* dt})/dt`,
:math:`\sigma_{zu}\sigma_{vm} = \sigma_{vu}` (:func:`solution_set`).

**Learning.** Gradient descent on the vectors with learning rate :math:`N\eta`
(:func:`gd_vectors`), with :math:`Gr = \partial L / \partial M`, moves :math:`A = [z\ v]` and
:math:`B = [m\ u]` by :math:`\Delta A = -\eta B Gr^\top`, :math:`\Delta B = -\eta A Gr`, so the
overlaps follow the **exact map** (:func:`exact_step`)

.. math::
    M' &= M - \eta(P\,Gr + Gr\,R) + \eta^2\, Gr\, M^\top Gr, \\
    P' &= P - \eta(Gr\,M^\top + M\,Gr^\top) + \eta^2\, Gr\, R\, Gr^\top, \\
    R' &= R - \eta(Gr^\top M + M^\top Gr) + \eta^2\, Gr^\top P\, Gr,

whose first-order part is the paper's Euler ODE :math:`\sigma \leftarrow \sigma - \eta\bar
G\nabla_\sigma L` (:func:`~seqlearn.lowrank.overlaps.ode_step`), and gradient descent on the
visible overlaps without the metric (:func:`visible_step`) is the paper's wrong curve.
:func:`gd_overlaps` runs any of the three, :func:`adam_vectors` runs Adam on the vectors, each over
a list of :class:`Phase` (a task, a number of epochs, optional label noise and a learning-rate
factor); :func:`protocol_gd`, :func:`protocol_label_noise` and :func:`protocol_adam` are the
paper's A-B-A experiments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from scipy.signal import lfilter

from ..guard import reference
from ..validation import choice, generator, integer, real, real_array
from .overlaps import _is_torch, blocks, from_blocks, gram, index, ode_step, overlaps, vectors_with_overlaps

__all__ = [
    "FilterTask",
    "filter_task",
    "filter_loss",
    "solution_set",
    "random_vectors",
    "network_output",
    "network_gradient",
    "network_output_torch",
    "latent_output",
    "latent_loss",
    "latent_gradient",
    "latent_output_torch",
    "chain_rule",
    "exact_step",
    "visible_step",
    "equivalent_overlaps",
    "equivalent_vectors",
    "Phase",
    "task_phases",
    "Trajectory",
    "gd_overlaps",
    "gd_vectors",
    "adam_vectors",
    "protocol_gd",
    "protocol_label_noise",
    "protocol_adam",
]

_VISIBLE = index(("zm", "zu", "vm", "vu"))
_INVISIBLE = index(("mu", "zv", "mm", "uu", "vv", "zz"))


# --- the task -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FilterTask:
    """An input ``x`` and a target ``y``, each shape (T,), for Euler steps of size ``dt``."""

    x: np.ndarray
    y: np.ndarray
    dt: float

    def __post_init__(self):
        x = real_array(self.x, "x", ndim=1)
        y = real_array(self.y, "y", shape=(x.size,))
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "dt", real(self.dt, "dt", low=0.0, high=1.0, low_open=True))


def filter_task(c_star: float = 0.2, *, dt: float = 0.05, T: int = 400) -> FilterTask:
    r"""The impulse response task: :math:`x_0 = 1/dt`, :math:`x_{k>0} = 0`, :math:`y_k = e^{-c^* k\,dt}`, k < T."""
    c_star = real(c_star, "c_star", low=0.0)
    dt = real(dt, "dt", low=0.0, high=1.0, low_open=True)
    T = integer(T, "T", low=1)
    x = np.zeros(T)
    x[0] = 1.0 / dt
    return FilterTask(x, np.exp(-c_star * dt * np.arange(T)), dt)


def filter_loss(f, task: FilterTask):
    r""":math:`L = dt \sum_k (f_k - y_k)^2` over the last axis of ``f`` (..., T) (array or tensor) -> (...)."""
    if _is_torch(f):
        import torch

        return task.dt * ((f - torch.as_tensor(task.y, dtype=f.dtype, device=f.device)) ** 2).sum(-1)
    return task.dt * ((f - task.y) ** 2).sum(-1)


def solution_set(c_star: float = 0.2, dt: float = 0.05) -> tuple[float, float, float]:
    r"""Where the discrete filter task's loss is zero: :math:`(\sigma_{zm}, \sigma_{vu}, \sigma_{zu}\sigma_{vm})`.

    :math:`\sigma_{zm} = 1`, :math:`\sigma_{vu} = 1 - (1 - e^{-c^* dt})/dt` (so that
    :math:`\rho_b = e^{-c^* dt}`) and :math:`\sigma_{zu}\sigma_{vm} = \sigma_{vu}`: a hyperbola in
    the visible overlaps, times all invisible ones.
    """
    c_star = real(c_star, "c_star", low=0.0)
    dt = real(dt, "dt", low=0.0, high=1.0, low_open=True)
    sigma_vu = 1.0 - (1.0 - math.exp(-c_star * dt)) / dt
    return 1.0, sigma_vu, sigma_vu


# --- the network on vectors ---------------------------------------------------------------------


def random_vectors(N: int, rng=None, *, nets: int | None = None) -> np.ndarray:
    r"""Gaussian vectors rescaled to norm :math:`\sqrt N` (:math:`\sigma_{aa} = 1`), shape (4, N) or (nets, 4, N)."""
    N = integer(N, "N", low=1)
    shape = (4, N) if nets is None else (integer(nets, "nets", low=1), 4, N)
    theta = generator(rng).standard_normal(shape)
    return theta * math.sqrt(N) / np.linalg.norm(theta, axis=-1, keepdims=True)


def _theta(theta) -> np.ndarray:
    """``theta`` as a float64 array of shape (..., 4, N)."""
    theta = real_array(theta, "theta")
    if theta.ndim < 2 or theta.shape[-2] != 4:
        raise ValueError(f"theta must have shape (..., 4, N), the vectors m, u, v, z, got {theta.shape}")
    return theta


def _sigma_of(theta: np.ndarray) -> np.ndarray:
    """The overlaps (..., 10) of vectors (..., 4, N)."""
    return overlaps(*np.moveaxis(theta, -2, 0))


def _states(theta: np.ndarray, task: FilterTask) -> np.ndarray:
    """h_t for t = 0..T, shape (T+1, ..., N)."""
    m, u, v, _ = np.moveaxis(theta, -2, 0)
    N, dt = theta.shape[-1], task.dt
    h = np.zeros((task.x.size + 1, *m.shape))
    for t, x_t in enumerate(task.x):
        h[t + 1] = h[t] + dt * (-h[t] + u * (v * h[t]).sum(-1, keepdims=True) / N + m * x_t)
    return h


def network_output(theta, task: FilterTask) -> np.ndarray:
    r"""The full network's output :math:`f_t = z^\top h_{t+1}/N`, shape (..., T) from ``theta`` (..., 4, N)."""
    theta = _theta(theta)
    h = _states(theta, task)  # (T+1, ..., N)
    return np.moveaxis((h[1:] * theta[..., 3, :]).sum(-1), 0, -1) / theta.shape[-1]


def network_gradient(theta, task: FilterTask) -> tuple[np.ndarray, np.ndarray]:
    r"""The loss (...) and :math:`\partial L/\partial\theta` (..., 4, N), by backpropagation through time.

    With :math:`e_t = 2\,dt\,(f_t - y_t)` and the adjoint :math:`g_t = \partial L / \partial h_t`,
    :math:`g_t = e_{t-1} z/N + (1 - dt)\, g_{t+1} + dt\, v\,(u^\top g_{t+1})/N` (:math:`g_{T+1} = 0`):

    .. math::
        \partial_z L = \sum_t e_t h_{t+1}/N,\ \
        \partial_m L = dt \sum_t x_t\, g_{t+1},\ \
        \partial_u L = dt \sum_t \tfrac{v^\top h_t}{N} g_{t+1},\ \
        \partial_v L = dt \sum_t \tfrac{u^\top g_{t+1}}{N} h_t.
    """
    theta = _theta(theta)
    _, u, v, z = np.moveaxis(theta, -2, 0)
    N, dt, T = theta.shape[-1], task.dt, task.x.size
    h = _states(theta, task)  # (T+1, ..., N)
    error = (h[1:] * z).sum(-1) / N - task.y.reshape((T,) + (1,) * (z.ndim - 1))  # f_t - y_t, (T, ...)
    e = 2 * dt * error  # dL/df_t
    g = np.zeros((T + 2, *z.shape))  # g[t] = dL/dh_t, g[T+1] = 0; g[0] is never needed
    for t in range(T, 0, -1):
        g[t] = e[t - 1, ..., None] * z / N + (1 - dt) * g[t + 1] + dt * v * (u * g[t + 1]).sum(-1, keepdims=True) / N
    g = g[1 : T + 1]  # g_{t+1} for t = 0..T-1
    vh, ug = (h[:-1] * v).sum(-1) / N, (g * u).sum(-1) / N  # v.h_t/N and u.g_{t+1}/N, (T, ...)
    grad_m = dt * np.einsum("t,t...n->...n", task.x, g)
    grad_u = dt * np.einsum("t...,t...n->...n", vh, g)
    grad_v = dt * np.einsum("t...,t...n->...n", ug, h[:-1])
    grad_z = np.einsum("t...,t...n->...n", e, h[1:]) / N
    return dt * (error**2).sum(0), np.stack([grad_m, grad_u, grad_v, grad_z], -2)


def network_output_torch(theta, task: FilterTask, *, device=None):
    r"""The full network's output :math:`f_t = z^\top h_{t+1}/N` in torch, shape (..., T), differentiable.

    ``theta`` (..., 4, N): a tensor (kept, with its graph, if already on ``device``) or an array
    (float64). The plain time loop of :func:`network_output`, batched over networks.
    """
    import torch

    from ..device import resolve_device

    device = resolve_device(device)
    if not isinstance(theta, torch.Tensor):
        theta = torch.as_tensor(_theta(theta), dtype=_dtype(device), device=device)
    if theta.ndim < 2 or theta.shape[-2] != 4:
        raise ValueError(f"theta must have shape (..., 4, N), the vectors m, u, v, z, got {tuple(theta.shape)}")
    theta = theta.to(device)
    m, u, v, z = theta.unbind(-2)
    N, dt = theta.shape[-1], task.dt
    h, f = torch.zeros_like(m), []
    for x_t in task.x.tolist():
        h = h + dt * (-h + u * (v * h).sum(-1, keepdim=True) / N + m * x_t)
        f.append((z * h).sum(-1) / N)
    return torch.stack(f, -1)


def _dtype(device):
    """float64, or float32 on Apple's MPS (which has no float64)."""
    import torch

    return torch.float32 if device.type == "mps" else torch.float64


# --- the latent model on the visible overlaps ---------------------------------------------------


def _leaky(s: np.ndarray, rho: float, gain: float) -> np.ndarray:
    """k(t+1) = rho k(t) + gain s(t) from k(0) = 0, all of k(0..T), shape (T+1,) from s (T,)."""
    return np.concatenate([[0.0], lfilter([gain], [1.0, -rho], s)])


def _latent(sigma: np.ndarray, task: FilterTask) -> tuple[np.ndarray, np.ndarray]:
    r"""f (T,) and its sensitivities to :math:`(\sigma_{zm}, \sigma_{zu}, \sigma_{vm}, \sigma_{vu})`, (4, T).

    :math:`\kappa_u = \sigma_{vm} w` with :math:`w(t+1) = \rho_b w + dt\,\kappa_m(t)`, and
    :math:`s = \partial w / \partial\sigma_{vu}` obeys :math:`s(t+1) = \rho_b s + dt\, w(t)`.
    """
    zm, zu, vm, vu = sigma[_VISIBLE]
    dt = task.dt
    rho_b = 1.0 - dt + dt * vu
    kappa_m = _leaky(task.x, 1.0 - dt, dt)  # (T+1,)
    w = _leaky(kappa_m[:-1], rho_b, dt)
    s = _leaky(w[:-1], rho_b, dt)
    f = zm * kappa_m[1:] + zu * vm * w[1:]
    return f, np.stack([kappa_m[1:], vm * w[1:], zu * w[1:], zu * vm * s[1:]])


def _per_network(sigma, fn: Callable[[np.ndarray], np.ndarray], tail: tuple[int, ...]) -> np.ndarray:
    """``fn`` on each network's overlaps (10,) of ``sigma`` (..., 10), results stacked to (..., *tail)."""
    sigma = real_array(sigma, "sigma")
    if sigma.ndim == 0 or sigma.shape[-1] != 10:
        raise ValueError(f"sigma must have shape (..., 10), got {sigma.shape}")
    out = np.empty(sigma.shape[:-1] + tail)
    for i in np.ndindex(sigma.shape[:-1]):
        out[i] = fn(sigma[i])
    return out


@reference
def latent_output(sigma, task: FilterTask) -> np.ndarray:
    r"""The 2-D latent model's output :math:`f_t = \sigma_{zm}\kappa_m(t+1) + \sigma_{zu}\kappa_u(t+1)`, (..., T)."""
    return _per_network(sigma, lambda s: _latent(s, task)[0], (task.x.size,))


def latent_loss(sigma, task: FilterTask) -> np.ndarray:
    r"""The latent model's loss :math:`L(M) = dt \sum_t (f_t - y_t)^2`, shape (...) from overlaps (..., 10)."""
    return filter_loss(latent_output(sigma, task), task)


def latent_gradient(sigma, task: FilterTask) -> tuple[np.ndarray, np.ndarray]:
    r"""The loss (...) and :math:`\nabla_\sigma L` (..., 10) of the latent model (zero on the invisible overlaps).

    :math:`\partial L/\partial\sigma_{ab} = 2\,dt \sum_t (f_t - y_t)\, \partial f_t / \partial\sigma_{ab}`,
    the sensitivities carried forward through the 2-D recursion (exact).
    """

    def loss_and_grad(s: np.ndarray) -> np.ndarray:
        f, df = _latent(s, task)
        e = f - task.y
        out = np.zeros(11)
        out[0], out[1 + _VISIBLE] = task.dt * e @ e, 2 * task.dt * df @ e
        return out

    both = _per_network(sigma, loss_and_grad, (11,))
    return both[..., 0], both[..., 1:]


def latent_output_torch(sigma, task: FilterTask, *, device=None):
    r"""The latent model's output in torch, (..., T) from overlaps (..., 10): the plain time loop, differentiable.

    :math:`\kappa_m \leftarrow (1 - dt)\kappa_m + dt\, x_t`,
    :math:`\kappa_u \leftarrow (1 - dt)\kappa_u + dt(\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u)`
    (both from the pre-update :math:`\kappa`), :math:`f_t = \sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u`.
    """
    import torch

    from ..device import resolve_device

    device = resolve_device(device)
    if not isinstance(sigma, torch.Tensor):
        sigma = torch.as_tensor(real_array(sigma, "sigma"), dtype=_dtype(device), device=device)
    if sigma.ndim == 0 or sigma.shape[-1] != 10:
        raise ValueError(f"sigma must have shape (..., 10), got {tuple(sigma.shape)}")
    zm, zu, vm, vu = sigma.to(device)[..., _VISIBLE].unbind(-1)
    dt = task.dt
    kappa_m, kappa_u, f = torch.zeros_like(zm), torch.zeros_like(zm), []
    for x_t in task.x.tolist():
        kappa_m, kappa_u = (
            (1 - dt) * kappa_m + dt * x_t,
            (1 - dt) * kappa_u + dt * (vm * kappa_m + vu * kappa_u),
        )
        f.append(zm * kappa_m + zu * kappa_u)
    return torch.stack(f, -1)


def chain_rule(theta, grad_sigma) -> np.ndarray:
    r""":math:`\partial L / \partial\theta = \sum_{ab} L_{ab}\, \partial\sigma_{ab}/\partial\theta`, (..., 4, N).

    ``grad_sigma`` (..., 10) is :math:`\nabla_\sigma L`, ``theta`` (..., 4, N) the vectors.

    With :math:`X = [z\ v\ m\ u]`, :math:`\partial L/\partial X = (W + W^\top) X / N`,
    :math:`W_{ab} = L_{ab}`: e.g. :math:`\partial L/\partial z = (L_{zm} m + L_{zu} u)/N` in the
    linear case, :math:`\partial L/\partial m = 2 L_{mm} m / N + \dots` for a norm.
    """
    theta = _theta(theta)
    W = gram(grad_sigma)  # symmetric, (..., 4, 4) in the order z, v, m, u
    W = W + W * np.eye(4)  # W + W^T counts a norm twice
    order = [3, 2, 0, 1]  # rows of theta (m, u, v, z) in the Gram order z, v, m, u
    grad_X = W @ theta[..., order, :] / theta.shape[-1]
    return grad_X[..., np.argsort(order), :]


# --- learning in overlap space ------------------------------------------------------------------


def _linear_grad(grad) -> np.ndarray:
    """``grad`` (..., 10) checked to be the gradient of a loss of M alone (zero invisible entries)."""
    grad = real_array(grad, "grad")
    if grad.ndim == 0 or grad.shape[-1] != 10:
        raise ValueError(f"grad must have shape (..., 10), got {grad.shape}")
    if np.any(grad[..., _INVISIBLE] != 0):
        raise ValueError("grad must be the gradient of a loss of M alone: its invisible entries must be zero")
    return grad


def exact_step(sigma, grad, eta: float) -> np.ndarray:
    r"""The overlaps (..., 10) after one gradient step on the vectors (learning rate :math:`N\eta`), exactly.

    .. math::
        M' = M - \eta(P\,Gr + Gr\,R) + \eta^2 Gr M^\top Gr, \quad
        P' = P - \eta(Gr M^\top + M Gr^\top) + \eta^2 Gr R Gr^\top, \quad
        R' = R - \eta(Gr^\top M + M^\top Gr) + \eta^2 Gr^\top P Gr,

    with :math:`Gr = \partial L/\partial M` from ``grad`` (..., 10), whose invisible entries must be zero.
    """
    M, P, R = blocks(sigma)
    Gr = blocks(_linear_grad(grad))[0]
    eta = real(eta, "eta", low=0.0)
    return from_blocks(
        M - eta * (P @ Gr + Gr @ R) + eta**2 * Gr @ M.mT @ Gr,
        P - eta * (Gr @ M.mT + M @ Gr.mT) + eta**2 * Gr @ R @ Gr.mT,
        R - eta * (Gr.mT @ M + M.mT @ Gr) + eta**2 * Gr.mT @ P @ Gr,
    )


def visible_step(sigma, grad, eta: float) -> np.ndarray:
    r"""Gradient descent directly on the overlaps, without the metric: :math:`\sigma - \eta\,\nabla_\sigma L`.

    The invisible overlaps never move (their gradient is zero): the paper's "σ-space directly" curve.
    """
    return real_array(sigma, "sigma") - real(eta, "eta", low=0.0) * _linear_grad(grad)


_STEPS = {"map": exact_step, "ode": ode_step, "visible": visible_step}


def equivalent_overlaps(sigma, *, mu: float = 0.8, uu: float = 2.048) -> np.ndarray:
    r"""A functionally equivalent network: ``sigma`` (10,) with new :math:`\sigma_{mu}` and :math:`\sigma_{uu}`.

    Same visible overlaps, so the same output and loss; different invisible ones, so different
    learning (the paper's :math:`\theta_2`, from :math:`\|u\| = 32`, :math:`m^\top u = 400` at
    :math:`N = 500`). ``ValueError`` if the result is not a Gram matrix (see
    :func:`~seqlearn.lowrank.overlaps.vectors_with_overlaps`).
    """
    twin = real_array(sigma, "sigma", shape=(10,)).copy()
    twin[index(("mu", "uu"))] = real(mu, "mu"), real(uu, "uu", low=0.0, low_open=True)
    vectors_with_overlaps(twin, 4, rng=0)  # raises, naming the smallest eigenvalue, unless the Gram matrix is PD
    return twin


def equivalent_vectors(theta, *, mu: float = 0.8, uu: float = 2.048, rng=None) -> np.ndarray:
    """Vectors (4, N) with the overlaps of :func:`equivalent_overlaps` of ``theta`` (4, N), in a fresh random frame."""
    theta = _theta(theta)
    if theta.ndim != 2:
        raise ValueError(f"theta must have shape (4, N), got {theta.shape}")
    twin = equivalent_overlaps(_sigma_of(theta), mu=mu, uu=uu)
    return np.stack(vectors_with_overlaps(twin, theta.shape[-1], rng))


# --- training runs ------------------------------------------------------------------------------


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
class Trajectory:
    """A training run of E epochs: overlaps ``sigma`` (E+1, ..., 10) at the start and after each
    epoch, and ``loss`` (E+1, ...) there on the clean target of the phase just trained (the first
    phase's at the start); ``sigma[ends[i]]`` is the state at the end of phase i; ``theta``
    (..., 4, N) the final vectors of a run on vectors."""

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
    return Trajectory(np.array(sigma), np.array(loss), tuple(ends)), state


def gd_overlaps(
    sigma0, phases: Sequence[Phase], *, eta: float = 5e-3, method: str = "map", rng=None, progress: bool = False
) -> Trajectory:
    r"""Gradient descent in overlap space: ``method`` "map" (:func:`exact_step`, equal to GD on the
    vectors), "ode" (the Euler ODE) or "visible" (:func:`visible_step`), at rate ``eta`` from ``sigma0`` (..., 10)."""
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
) -> Trajectory:
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
) -> Trajectory:
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


# --- the paper's protocols ----------------------------------------------------------------------


def protocol_gd(
    sigma0,
    *,
    c_stars: Sequence[float] = (0.2, 0.4, 0.2),
    epochs: Sequence[int] = (3000, 2000, 2000),
    eta: float = 5e-3,
    method: str = "map",
    dt: float = 0.05,
    T: int = 400,
    progress: bool = False,
) -> Trajectory:
    """A-B-A(-B-A...) by gradient descent in overlap space (:func:`gd_overlaps`); ``ends`` marks the phases."""
    return gd_overlaps(sigma0, task_phases(c_stars, epochs, dt=dt, T=T), eta=eta, method=method, progress=progress)


def protocol_label_noise(
    sigma0,
    *,
    c_star: float = 0.2,
    epochs: tuple[int, int] = (3000, 4000),
    noise: float = 0.1,
    eta: float = 5e-3,
    dt: float = 0.05,
    T: int = 400,
    rng=None,
    progress: bool = False,
) -> Trajectory:
    r"""Task A for ``epochs[0]``, then ``epochs[1]`` with label noise ``noise`` at learning rate :math:`2N\eta`.

    Exact map (:func:`exact_step`) with the noisy target's gradient; ``loss`` is the clean loss.
    """
    task = filter_task(c_star, dt=dt, T=T)
    phases = [Phase(task, epochs[0]), Phase(task, epochs[1], noise=noise, lr_scale=2.0)]
    return gd_overlaps(sigma0, phases, eta=eta, method="map", rng=rng, progress=progress)


def protocol_adam(
    theta0,
    *,
    c_stars: Sequence[float] = (0.2, 0.4, 0.2, 0.4, 0.2),
    epochs: Sequence[int] = (2000, 1000, 1000, 1000, 1000),
    lr: float = 1e-3,
    dt: float = 0.1,
    T: int = 200,
    gradient: str = "overlaps",
    device=None,
    progress: bool = False,
) -> Trajectory:
    """A-B-A-B-A by Adam on the vectors ``theta0`` (..., 4, N) (:func:`adam_vectors`); ``ends`` marks the phases."""
    phases = task_phases(c_stars, epochs, dt=dt, T=T)
    return adam_vectors(theta0, phases, lr=lr, gradient=gradient, device=device, progress=progress)
