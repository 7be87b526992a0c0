"""A thin helper for ipywidgets explorers: sliders that re-run a small computation and redraw."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["explorer"]


def explorer(draw: Callable, *, continuous_update: bool = False, **controls):
    """Build an interactive explorer: ``draw(**values)`` is re-run whenever a control changes.

    Parameters
    ----------
    draw : callable
        Draws one figure from keyword arguments named like the controls (it should create its
        own figure, e.g. with ``plt.subplots``, and may return nothing).
    continuous_update : bool
        Re-run while a slider is dragged (default: only on release, which keeps slow
        computations responsive on Binder).
    **controls
        Widgets or ipywidgets abbreviations (``(lo, hi, step)`` tuples, lists for dropdowns),
        as for ``ipywidgets.interactive``.

    Returns
    -------
    ipywidgets.interactive
        Display it (it is the last expression of a cell, or pass it to ``display``). Calling
        ``.update()`` redraws with the current values, which is how tests drive it headless.
    """
    import ipywidgets as widgets

    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    if not controls:
        raise ValueError("an explorer needs at least one control (keyword argument)")
    interactive = widgets.interactive(draw, **controls)
    for child in interactive.children:
        if hasattr(child, "continuous_update"):
            child.continuous_update = continuous_update
    return interactive
