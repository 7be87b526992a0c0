"""Legible labels for crowded scatter plots.

:func:`label_points` writes a text label next to each of a set of points so that no two labels
overlap and no label covers a labelled point. :func:`place_boxes` is the placement rule itself,
on plain rectangles, so it can be read and tested without a figure.
"""

from __future__ import annotations

import numpy as np

__all__ = ["place_boxes", "label_points"]


def _grid(step_x: float, step_y: float, max_steps: int) -> np.ndarray:
    """Offsets ``(p step_x, q step_y)`` for integers ``|p|, |q| <= max_steps``; shape (m, 2)."""
    k = np.arange(-max_steps, max_steps + 1)
    p, q = np.meshgrid(k, k, indexing="ij")
    return np.column_stack([p.ravel() * step_x, q.ravel() * step_y])


def _clear_of(centres, size, rects, gap):
    """For each candidate centre (m, 2) of a box of ``size`` (w, h): is it ``gap`` away from all rects (k, 4)?"""
    if len(rects) == 0:
        return np.ones(len(centres), dtype=bool)
    half_w, half_h = size / 2
    rx0, ry0, rx1, ry1 = (rects[:, i][None, :] for i in range(4))  # (1, k)
    cx, cy = centres[:, :1], centres[:, 1:]  # (m, 1)
    apart_x = (cx + half_w + gap <= rx0) | (cx - half_w - gap >= rx1)  # (m, k)
    apart_y = (cy + half_h + gap <= ry0) | (cy - half_h - gap >= ry1)
    return np.all(apart_x | apart_y, axis=1)


def place_boxes(
    anchors,
    sizes,
    *,
    gap: float = 0.0,
    obstacles=None,
    bounds=None,
    step=None,
    max_steps: int = 40,
    prefer_angle: float = 30.0,
) -> np.ndarray:
    r"""Centres for boxes near their anchors such that no two boxes overlap.

    Greedy and deterministic. Box :math:`i` (in the order given, so put the most important first)
    tries the centres :math:`c = a_i + (p\, s_x, q\, s_y)` of a grid around its anchor :math:`a_i`,
    nearest first, where the distance of a candidate is that from the anchor to the box,

    .. math:: d(c) = \big\lVert \big(\max(|c_x - a_{i,x}| - w_i/2,\ 0),\
              \max(|c_y - a_{i,y}| - h_i/2,\ 0)\big) \big\rVert_2,

    (ties broken by the direction closest to ``prefer_angle``), and takes the first one that keeps a
    clearance of ``gap`` from every box placed before it, every anchor and every obstacle, and that
    lies inside ``bounds``. If no point of the grid fits, the box goes just above everything placed
    so far, so the boxes never overlap.

    Parameters
    ----------
    anchors : array_like, shape (n, 2)
        The point each box belongs to (any unit, e.g. display pixels, with y pointing up).
    sizes : array_like, shape (n, 2)
        Width and height of each box, in the same unit.
    gap : float
        Least clearance between two boxes, and between a box and an anchor or obstacle.
    obstacles : array_like, shape (k, 4), optional
        Rectangles ``(x0, y0, x1, y1)`` that no box may cover (e.g. the markers of the points).
    bounds : (x0, y0, x1, y1), optional
        Keep every box inside this rectangle when the grid has room for it there.
    step : (float, float), optional
        Grid spacing; default a third of the median box height, in both directions.
    max_steps : int
        Half-width of the grid, in steps.
    prefer_angle : float
        Among candidates at the same distance, prefer this direction (degrees, 0 = right, 90 = up).

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        The centre of each box.
    """
    anchors = np.asarray(anchors, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    if anchors.ndim != 2 or anchors.shape[1] != 2:
        raise ValueError(f"anchors must have shape (n, 2), got {anchors.shape}")
    if sizes.shape != anchors.shape:
        raise ValueError(f"sizes must have the shape of anchors {anchors.shape}, got {sizes.shape}")
    if not (np.all(np.isfinite(anchors)) and np.all(np.isfinite(sizes)) and np.all(sizes >= 0)):
        raise ValueError("anchors must be finite and sizes finite and non-negative")
    obstacles = np.zeros((0, 4)) if obstacles is None else np.asarray(obstacles, dtype=float).reshape(-1, 4)
    n = len(anchors)
    if n == 0:
        return np.zeros((0, 2))
    if step is None:
        s = max(float(np.median(sizes[:, 1])) / 3, 1e-9)
        step = (s, s)
    if len(step) != 2 or min(step) <= 0:
        raise ValueError(f"step must be two positive grid spacings (s_x, s_y), got {step}")
    offsets = _grid(step[0], step[1], max_steps)  # (m, 2)

    # Every anchor is an obstacle of zero size: no label covers a labelled point.
    blocked = np.vstack([obstacles, np.column_stack([anchors, anchors])])  # (k, 4)
    centres = np.zeros((n, 2))
    for i in range(n):
        size = sizes[i]
        candidates = anchors[i] + offsets
        outside = np.maximum(np.abs(offsets) - size / 2, 0)
        distance = np.hypot(outside[:, 0], outside[:, 1])
        angle = np.degrees(np.arctan2(offsets[:, 1], offsets[:, 0]))
        turn = np.abs((angle - prefer_angle + 180) % 360 - 180)
        order = np.lexsort((turn, np.round(distance / min(step), 6)))  # nearest, then preferred direction
        ok = _clear_of(candidates, size, blocked, gap)
        if bounds is not None:
            x0, y0, x1, y1 = bounds
            lo, hi = candidates - size / 2, candidates + size / 2
            ok &= (lo[:, 0] >= x0) & (lo[:, 1] >= y0) & (hi[:, 0] <= x1) & (hi[:, 1] <= y1)
        fits = order[ok[order]]
        if len(fits):
            centres[i] = candidates[fits[0]]
        else:  # above everything so far
            centres[i] = anchors[i][0], blocked[:, 3].max() + gap + size[1] / 2
        half = size / 2
        blocked = np.vstack([blocked, np.concatenate([centres[i] - half, centres[i] + half])])
    return centres


def label_points(
    ax,
    xy,
    labels,
    *,
    fontsize: float = 9,
    gap: float = 2.0,
    marker_size: float = 6.0,
    leader_lines: bool = True,
    **text_kw,
) -> list:
    """Label points of a scatter plot so that every label can be read.

    Each label is put next to its point by :func:`place_boxes`, in display space: no two labels
    overlap, none covers a labelled point (a square of ``marker_size`` points around it), and all
    stay inside the axes where there is room. A label that had to move away from its point is joined
    to it by a thin line drawn under all labels, and each label has a thin white halo, so lines and
    points behind it do not cut through its letters. Deterministic: the same figure gets the same labels.

    Call it last, once the axes' limits, title and axis labels are set: it measures the text as the
    figure will draw it, and the places it finds no longer fit if the limits change afterwards.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    xy : array_like, shape (n, 2)
        The labelled points, in data coordinates.
    labels : sequence of str, length n
        The labels, most important first (earlier labels get the places closest to their points).
    fontsize : float
        Font size of the labels, in points.
    gap : float
        Clearance between labels, and around the points, in points.
    marker_size : float
        Side of the square around each point that labels keep clear of, in points.
    leader_lines : bool
        Join labels that are not next to their point to it by a thin line.
    **text_kw
        Passed to ``ax.annotate`` (e.g. ``color``, ``fontweight``).

    Returns
    -------
    list of matplotlib.text.Annotation
    """
    from matplotlib import patheffects

    xy = np.asarray(xy, dtype=float)
    labels = [str(label) for label in labels]
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"xy must have shape (n, 2), got {xy.shape}")
    if len(labels) != len(xy):
        raise ValueError(f"got {len(labels)} labels for {len(xy)} points")
    fig = ax.figure
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()  # the axes take their final place first
    ax.get_xlim(), ax.get_ylim()  # apply pending autoscaling before transforming
    canvas = fig.canvas
    renderer = canvas.get_renderer() if hasattr(canvas, "get_renderer") else fig._get_renderer()
    px_per_pt = fig.dpi / 72

    sizes = []
    for label in labels:
        probe = ax.text(0, 0, label, fontsize=fontsize, **text_kw)
        box = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((box.width, box.height))
    anchors = ax.transData.transform(xy)  # (n, 2) display pixels
    half = marker_size * px_per_pt / 2
    markers = np.column_stack([anchors - half, anchors + half])
    centres = place_boxes(
        anchors, sizes, gap=gap * px_per_pt, obstacles=markers, bounds=ax.get_window_extent(renderer).extents
    )

    texts = []
    near = half + 2 * gap * px_per_pt
    zorder = text_kw.pop("zorder", 3)
    text_kw.setdefault("path_effects", [patheffects.withStroke(linewidth=2.5, foreground="white")])
    for label, anchor, centre, (w, h), point in zip(labels, anchors, centres, sizes, xy):
        offset = dict(
            xytext=(centre - anchor) / px_per_pt,
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=fontsize,
        )
        outside = np.maximum(np.abs(centre - anchor) - np.array([w, h]) / 2, 0)
        if leader_lines and np.hypot(*outside) > near:
            # The line alone, under every label: an invisible copy of the label ends it at the label's edge.
            ax.annotate(
                label,
                point,
                **offset,
                color="none",
                zorder=zorder - 0.5,
                arrowprops=dict(arrowstyle="-", color="0.45", lw=0.6, shrinkA=1, shrinkB=marker_size / 2),
            )
        texts.append(ax.annotate(label, point, **offset, zorder=zorder, **text_kw))
    return texts
