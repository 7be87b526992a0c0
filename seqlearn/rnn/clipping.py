r"""Gradient-norm clipping (Pascanu, Mikolov & Bengio 2013)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..guard import reference
from ..validation import real

__all__ = ["global_grad_norm", "clip_grad_norm"]


def _arrays(grads) -> list[np.ndarray]:
    values = list(grads.values()) if isinstance(grads, Mapping) else list(grads)
    if isinstance(grads, np.ndarray):
        raise TypeError("grads must be a list or dict of gradient arrays, not one array (wrap it in a list)")
    arrays = [np.asarray(g, dtype=np.float64) for g in values]
    for g in arrays:
        if not np.all(np.isfinite(g)):
            raise ValueError("a gradient contains NaN or infinite values: its norm is undefined")
    return arrays


@reference
def global_grad_norm(grads) -> float:
    r"""The global norm :math:`\lVert g \rVert = \sqrt{\sum_i \lVert g_i \rVert_F^2}` of a list or dict of arrays."""
    return float(np.sqrt(sum(np.sum(g**2) for g in _arrays(grads))))


@reference
def clip_grad_norm(grads, threshold: float):
    r"""Rescale gradients whose global norm exceeds a threshold.

    .. math::
        g \leftarrow \frac{\theta}{\lVert g \rVert}\, g \quad \text{if } \lVert g \rVert > \theta,

    where :math:`\lVert g \rVert` is the norm of all gradients together (:func:`global_grad_norm`),
    so the direction of the update is kept and only its length is capped.

    Parameters
    ----------
    grads : list or dict of arrays
    threshold : :math:`\theta > 0`

    Returns
    -------
    clipped : the same kind of container (list or dict, same keys) holding new float64 arrays
    norm : float, the global norm before clipping
    """
    threshold = real(threshold, "threshold", low=0, low_open=True)
    norm = global_grad_norm(grads)
    factor = threshold / norm if norm > threshold else 1.0
    if isinstance(grads, Mapping):
        return {k: factor * np.asarray(g, dtype=np.float64) for k, g in grads.items()}, norm
    return [factor * g for g in _arrays(grads)], norm
