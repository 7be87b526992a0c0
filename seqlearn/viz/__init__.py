"""Plotting helpers: one consistent matplotlib style and a small ipywidgets explorer helper.

Nothing here changes matplotlib's settings on import; call :func:`apply_style` (chapters do
it in their first code cell) or use :func:`style` as a context manager.
"""

from .explorer import explorer
from .labels import label_points, place_boxes
from .style import PALETTE, apply_style, style

__all__ = ["PALETTE", "apply_style", "style", "explorer", "label_points", "place_boxes"]
