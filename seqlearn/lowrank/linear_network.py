r"""The linear rank-1 network on its vectors: output, gradient by BPTT, and equivalent networks.

Vectors :math:`\theta = (m, u, v, z)`, each in :math:`\mathbb R^N`, stacked as an array ``theta``
of shape ``(..., 4, N)`` in that order; connectivity :math:`J = u v^\top / N` (never formed); Euler
steps of size :math:`dt` from :math:`h_0 = 0`, the output read *after* the update:

.. math::
    h_{t+1} = h_t + dt\,\big(-h_t + u\,(v^\top h_t)/N + m\, x_t\big), \qquad
    f_t = z^\top h_{t+1} / N, \qquad t = 0, \dots, T-1.

:func:`network_output` and :func:`network_gradient` run it in NumPy, :func:`network_output_torch`
in torch (differentiable); :func:`equivalent_overlaps` and :func:`equivalent_vectors` give a
network with the same function and different invisible overlaps.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import generator, integer, real, real_array
from .linear_task import FilterTask
from .overlaps import index, overlaps, vectors_with_overlaps

__all__ = [
    "random_vectors",
    "network_output",
    "network_gradient",
    "network_output_torch",
    "equivalent_overlaps",
    "equivalent_vectors",
]


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
