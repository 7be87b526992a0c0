"""Plotting helpers: one consistent matplotlib style, a small ipywidgets explorer helper, and diagrams.

Nothing here changes matplotlib's settings on import; call :func:`apply_style` (chapters do
it in their first code cell) or use :func:`style` as a context manager. The ``draw_*``
functions (:mod:`seqlearn.viz.diagrams`) draw the course's models as boxes and arrows.
"""

from .diagrams import (
    draw_attention_lookup,
    draw_bptt_graph,
    draw_echo_state_network,
    draw_gru_cell,
    draw_interpolation_chain,
    draw_leaky_gated_cell,
    draw_lowrank_network,
    draw_lstm_cell,
    draw_ngram_window,
    draw_nplm,
    draw_unrolled_rnn,
)
from .explorer import explorer
from .labels import label_points, place_boxes
from .style import PALETTE, apply_style, style

_WITHHELD = {"style": ["RC"]}  # the rc settings themselves: apply_style and style apply them

__all__ = [
    "PALETTE",
    "apply_style",
    "style",
    "explorer",
    "label_points",
    "place_boxes",
    "draw_ngram_window",
    "draw_interpolation_chain",
    "draw_nplm",
    "draw_unrolled_rnn",
    "draw_bptt_graph",
    "draw_lstm_cell",
    "draw_gru_cell",
    "draw_echo_state_network",
    "draw_leaky_gated_cell",
    "draw_lowrank_network",
    "draw_attention_lookup",
]
