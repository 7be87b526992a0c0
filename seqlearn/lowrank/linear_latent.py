r"""The linear rank-1 network's exact 2-D latent model, a function of the visible overlaps only.

:math:`h_t = \kappa_m(t)\, m + \kappa_u(t)\, u` exactly, with

.. math::
    \kappa_m(t+1) = (1 - dt)\,\kappa_m + dt\, x_t, \quad
    \kappa_u(t+1) = (1 - dt)\,\kappa_u + dt\,(\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u), \quad
    f_t = \sigma_{zm}\kappa_m(t+1) + \sigma_{zu}\kappa_u(t+1),

so the loss is a function of the four visible overlaps :math:`M` only (:func:`latent_output`,
:func:`latent_gradient`). With the impulse,
:math:`f_k = \sigma_{zm}\rho_a^k + (\sigma_{zu}\sigma_{vm}/\sigma_{vu})(\rho_b^k - \rho_a^k)`,
:math:`\rho_a = 1 - dt`, :math:`\rho_b = 1 - dt(1 - \sigma_{vu})`. :func:`chain_rule` carries
:math:`\nabla_\sigma L` back to the vectors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.signal import lfilter

from ..guard import reference
from ..validation import real_array
from .linear_network import _dtype, _theta
from .linear_task import FilterTask, filter_loss
from .overlaps import gram, index

__all__ = ["latent_output", "latent_loss", "latent_gradient", "latent_output_torch", "chain_rule"]

_VISIBLE = index(("zm", "zu", "vm", "vu"))


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
