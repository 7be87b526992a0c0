"""The course's matplotlib style: quiet axes, a colour-blind-safe palette, readable sizes."""

from __future__ import annotations

import contextlib

__all__ = ["PALETTE", "RC", "apply_style", "style"]

# Okabe & Ito's colour-blind-safe palette.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

RC = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}


def _rc() -> dict:
    from cycler import cycler

    return {**RC, "axes.prop_cycle": cycler(color=PALETTE)}


def apply_style() -> None:
    """Use the course style for every figure from now on (in this process)."""
    import matplotlib as mpl

    mpl.rcParams.update(_rc())


@contextlib.contextmanager
def style():
    """Context manager: the course style inside the ``with`` block only."""
    import matplotlib as mpl

    with mpl.rc_context(_rc()):
        yield
