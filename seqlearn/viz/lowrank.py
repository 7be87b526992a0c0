"""Chapter 6's plots: the overlap-space metric of a rank-1 network as a heatmap.

matplotlib is imported on first use, not when this module is imported.
"""

from __future__ import annotations

import numpy as np

from ..lowrank.overlaps import OVERLAPS
from ..validation import integer, real, real_array

__all__ = ["metric_bins", "metric_heatmap"]


def metric_bins(top: float, smallest: float = 0.01) -> np.ndarray:
    r"""Colour-bin edges symmetric about 0: :math:`\pm\,\text{smallest}\cdot 10^{k/2}` below ``top``, and
    :math:`\pm 1.001\,\text{top}` at the ends, shape (2K + 2,) increasing.

    Half-decade bins give an entry of 2 and one of 4 different colours and an entry of 0.01 one
    different from 0; :math:`(-\text{smallest}, \text{smallest})` is the central (white) bin.
    """
    smallest = real(smallest, "smallest", low=0.0, low_open=True)
    top = real(top, "top", low=smallest, low_open=True)
    inner = smallest * np.sqrt(10.0) ** np.arange(int(np.ceil(2 * np.log10(top / smallest))))
    inner = inner[inner < top]
    return np.concatenate([[-1.001 * top], -inner[::-1], inner, [1.001 * top]])


def metric_heatmap(ax, G_bar, *, visible: int = 4, smallest: float = 0.01):
    r"""Draw the metric :math:`\bar G(\sigma)` (10, 10) on ``ax``, coloured by half-decade bins of its entries.

    The entries span orders of magnitude (:math:`2` or :math:`4\sigma_{aa}` on the diagonal, cross overlaps of
    order :math:`1/\sqrt N` off it); a linear colour scale shows one or the other. The bins are
    :func:`metric_bins` up to :math:`\max|\bar G|`, on a diverging map with zero white; no entry
    is clipped. Lines after the first ``visible`` rows and columns mark the visible block. Rows and
    columns are labelled :math:`\sigma_{ab}` in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order.

    Returns the ``AxesImage`` (for a colour bar).
    """
    from matplotlib.colors import BoundaryNorm

    G_bar = real_array(G_bar, "G_bar", shape=(len(OVERLAPS), len(OVERLAPS)))
    visible = integer(visible, "visible", low=0, high=len(OVERLAPS))
    smallest = real(smallest, "smallest", low=0.0, low_open=True)
    bins = metric_bins(max(float(np.abs(G_bar).max()), 2 * smallest), smallest)
    image = ax.imshow(G_bar, cmap="RdBu_r", norm=BoundaryNorm(bins, 256))
    labels = [rf"$\sigma_{{{name}}}$" for name in OVERLAPS]
    ax.set_xticks(range(len(OVERLAPS)), labels, rotation=90, fontsize=8)
    ax.set_yticks(range(len(OVERLAPS)), labels, fontsize=8)
    ax.axhline(visible - 0.5, color="k", lw=0.8)
    ax.axvline(visible - 0.5, color="k", lw=0.8)
    return image
