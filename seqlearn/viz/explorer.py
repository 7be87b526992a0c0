"""A thin helper for ipywidgets explorers: sliders that re-run a small computation and redraw."""

from __future__ import annotations

import base64
import functools
import io
from collections.abc import Callable
from unittest import mock

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
        Its display bundle also carries an ``image/png`` of the figure ``draw`` makes with the
        controls' default values, which static pages (``seqlearn run --html``) show in place
        of the live widget; JupyterLab still shows the widget.

    Raises
    ------
    NameError
        When ``draw`` uses a name that is not defined yet, which is what happens when the cell is run
        before the cells above it: the message says to run those first.
    """
    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    if not controls:
        raise ValueError("an explorer needs at least one control (keyword argument)")
    guarded, too_early = _guarded(draw)
    interactive = _explorer_class()(guarded, **controls)  # draws once with the controls' values
    if too_early:
        raise too_early[0]
    for child in interactive.children:
        if hasattr(child, "continuous_update"):
            child.continuous_update = continuous_update
    return interactive


def _guarded(draw: Callable) -> tuple[Callable, list[NameError]]:
    """``draw`` whose NameError says to run the cells above first, and the list that records the first one.

    ``ipywidgets.interactive`` shows an exception of ``draw`` beside the sliders and carries on; a name that is
    not defined means the notebook was not run from the top, which :func:`explorer` reports at once instead.
    """
    too_early: list[NameError] = []

    @functools.wraps(draw)  # keeps draw's signature, which interactive reads the controls' names from
    def run(*args, **values):
        try:
            return draw(*args, **values)
        except NameError as exc:
            error = NameError(f"{exc}: run the cells above first (this explorer draws with what they define)")
            too_early[:] = too_early or [error]
            raise error from None

    return run, too_early


@functools.cache
def _explorer_class() -> type:
    """The ``ipywidgets.interactive`` subclass behind :func:`explorer` (ipywidgets imported on first use)."""
    import ipywidgets as widgets

    class Explorer(widgets.interactive):
        """An ``interactive`` whose display bundle adds a PNG of its default state."""

        def __init__(self, draw, /, **controls):
            super().__init__(draw, **controls)
            self._defaults = dict(self.kwargs)

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            png = _figure_png(self.f, self._defaults)
            if png is not None:
                bundle["image/png"] = base64.b64encode(png).decode("ascii")
            return bundle

    return Explorer


def _figure_png(draw: Callable, values: dict) -> bytes | None:
    """PNG of the last figure ``draw(**values)`` creates, or None if it creates none.

    The figure is drawn off screen: interactive mode is off and ``plt.show`` does nothing
    meanwhile, and every figure ``draw`` opened is closed again, so a live notebook shows no
    extra figure.
    """
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    try:
        with plt.ioff(), mock.patch.object(plt, "show"):
            draw(**values)
        new = set(plt.get_fignums()) - before
        if not new:
            return None
        buffer = io.BytesIO()
        plt.figure(max(new)).savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
    finally:
        for number in set(plt.get_fignums()) - before:
            plt.close(number)
