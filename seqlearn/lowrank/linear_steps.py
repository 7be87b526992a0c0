r"""The learning maps of the linear rank-1 network: one gradient step, seen in overlap space.

Gradient descent on the vectors with learning rate :math:`N\eta`, with
:math:`Gr = \partial L / \partial M`, moves :math:`A = [z\ v]` and :math:`B = [m\ u]` by
:math:`\Delta A = -\eta B Gr^\top`, :math:`\Delta B = -\eta A Gr`, so the overlaps follow the
**exact map** (:func:`exact_step`)

.. math::
    M' &= M - \eta(P\,Gr + Gr\,R) + \eta^2\, Gr\, M^\top Gr, \\
    P' &= P - \eta(Gr\,M^\top + M\,Gr^\top) + \eta^2\, Gr\, R\, Gr^\top, \\
    R' &= R - \eta(Gr^\top M + M^\top Gr) + \eta^2\, Gr^\top P\, Gr,

whose first-order part is the paper's Euler ODE (:func:`~seqlearn.lowrank.overlaps.ode_step`);
gradient descent on the visible overlaps without the metric (:func:`visible_step`) is the paper's
wrong curve. NumPy only.
"""

from __future__ import annotations

import numpy as np

from ..validation import real, real_array
from .overlaps import blocks, from_blocks, index

__all__ = ["exact_step", "visible_step"]

_INVISIBLE = index(("mu", "zv", "mm", "uu", "vv", "zz"))


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
