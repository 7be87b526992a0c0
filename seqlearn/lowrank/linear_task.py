r"""The linear rank-1 network's filter task: an impulse in, a decaying exponential out.

An impulse :math:`x_0 = 1/dt` (zero afterwards), the target :math:`y_k = e^{-c^* k\, dt}` and the
loss :math:`L = dt \sum_k (f_k - y_k)^2` (:func:`filter_task`, :func:`filter_loss`). The loss is
exactly zero on the **solution set** :math:`\sigma_{zm} = 1`,
:math:`\sigma_{vu} = 1 - (1 - e^{-c^* dt})/dt`, :math:`\sigma_{zu}\sigma_{vm} = \sigma_{vu}`
(:func:`solution_set`). NumPy only (:func:`filter_loss` also takes a torch tensor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import integer, real, real_array
from .overlaps import _is_torch

__all__ = ["FilterTask", "filter_task", "filter_loss", "solution_set"]


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
