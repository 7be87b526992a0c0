r"""Chapter 4's figures on the gated networks: the cliffs and their time constants.

The cliff functions draw on a given ``ax`` (the chapter puts them side by side with different legends)
and take ``cliffs``, a mapping ``network name -> TaskCliff`` (:class:`seqlearn.rnn.experiments.TaskCliff`:
``lengths``, ``seeds``, ``relative_loss`` of shape (seeds, lengths), ``curves`` of shape (seeds, lengths,
epochs)); each network has the colour :data:`COLOURS` gives its name (else ``C{k}`` for the k-th).
The others make their own figure and return it with its axes. matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..validation import integer, real, real_array

__all__ = ["COLOURS", "plot_cliffs", "plot_cliff_curves", "plot_time_constants"]

COLOURS = {"Elman RNN": "C0", "LSTM, torch init": "C1", "LSTM, forget bias 1": "C2", "GRU": "C3"}
"""One colour per network of :data:`seqlearn.gated.cliffs.ARCHITECTURES`, the same in every figure."""


def _colour(name: str, k: int) -> str:
    """The colour of network ``name``, the k-th drawn: :data:`COLOURS`' or ``C{k}``."""
    return COLOURS.get(name, f"C{k}")


def _cliffs(cliffs: Mapping) -> list[int]:
    """The common sequence lengths of ``cliffs``, checked: a non-empty mapping of cliffs of the same lengths."""
    if not isinstance(cliffs, Mapping):
        raise TypeError(f"cliffs must be a mapping name -> TaskCliff, got {type(cliffs).__name__}")
    if not cliffs:
        raise ValueError("cliffs must hold at least one network")
    lengths = [list(c.lengths) for c in cliffs.values()]
    if any(ls != lengths[0] for ls in lengths):
        raise ValueError(f"cliffs must share their sequence lengths, got {lengths}")
    for name, cliff in cliffs.items():
        real_array(cliff.relative_loss, f"cliffs[{name!r}].relative_loss", shape=(len(cliff.seeds), len(lengths[0])))
    return lengths[0]


def plot_cliffs(ax, cliffs: Mapping, ylabel: str, title: str):
    r"""Best validation loss / baseline against sequence length T: each network's median over seeds, its range
    (shaded) and every seed (dots).

    The networks sit 1.2 apart on the T axis so that their dots do not hide each other. Reference
    lines: the memoryless baseline (1) and 10% of it, the level below which a run counts as solved.

    Parameters
    ----------
    ax : matplotlib Axes
    cliffs : mapping name -> TaskCliff
        Networks trained at the same lengths T_1 < ... < T_J.
    ylabel, title : str

    Returns
    -------
    ax
    """
    lengths = np.array(_cliffs(cliffs))
    for k, (name, cliff) in enumerate(cliffs.items()):
        low, high = cliff.spread()
        x = lengths + 1.2 * (k - 1.5)  # a small offset per network
        colour = _colour(name, k)
        ax.fill_between(x, low, high, color=colour, alpha=0.15)
        ax.plot(x, cliff.median(), "o-", color=colour, label=name)
        ax.plot(np.tile(x, len(cliff.seeds)), cliff.relative_loss.ravel(), ".", color=colour, ms=4)
    ax.axhline(1.0, color="k", ls=":", lw=1, label="memoryless baseline")
    ax.axhline(0.1, color="k", ls="--", lw=0.8, label="10% of the baseline")
    ax.set(
        xlabel="sequence length T",
        ylabel=ylabel,
        ylim=(0, 1.15),
        title=title,
        xticks=lengths,
        xlim=(lengths[0] - 8, lengths[-1] + 8),
    )
    return ax


def plot_cliff_curves(ax, cliffs: Mapping, T: int, ylabel: str, title: str):
    r"""Validation loss / baseline after each epoch at length ``T``: every seed (thin) and the median (thick).

    Parameters
    ----------
    ax : matplotlib Axes
    cliffs : mapping name -> TaskCliff
    T : int
        One of the cliffs' lengths.
    ylabel, title : str

    Returns
    -------
    ax
    """
    lengths = _cliffs(cliffs)
    T = integer(T, "T")
    if T not in lengths:
        raise ValueError(f"T must be one of the cliffs' lengths {lengths}, got {T}")
    for k, (name, cliff) in enumerate(cliffs.items()):
        curves = cliff.curves[:, lengths.index(T)]  # (seeds, epochs)
        epochs = np.arange(1, curves.shape[1] + 1)
        ax.plot(epochs, curves.T, color=_colour(name, k), lw=0.8, alpha=0.6)
        ax.plot(epochs, np.median(curves, axis=0), color=_colour(name, k), lw=2.2, label=f"{name} (median)")
    ax.axhline(1.0, color="k", ls=":", lw=1)
    ax.set(xlabel="epoch (63 updates each)", ylabel=ylabel, ylim=(0, 1.15), title=title)
    return ax


def plot_time_constants(initial: Mapping, trained: Mapping, solved: Mapping, *, T: int, units: str, top: float = 999):
    r"""Histograms of the units' time constants :math:`\tau = -1/\log \bar f` before and after training, one
    panel per network, on a log axis.

    :math:`\bar f` is a unit's mean forget (LSTM) or update (GRU) gate, so :math:`\bar f^{\,\tau} = 1/e`: the
    state keeps a fraction :math:`1/e` of itself over :math:`\tau` steps. Trained values above ``top``
    are drawn at ``top``. Network k is drawn in its :data:`COLOURS` colour, else ``C{k + 1}``.

    Parameters
    ----------
    initial, trained : mapping name -> array, shape (U,)
        Time constants of every unit at initialisation and after training, the same names.
    solved : mapping name -> str
        What goes in each panel's title after the name, e.g. ``"2 of 3 solved"``.
    T : int
        The sequence length trained at (a vertical line).
    units : str
        The y axis's label, e.g. ``"units (3 networks x 32)"``.
    top : float
        Largest time constant drawn (the histogram's last bin ends at about 1000).

    Returns
    -------
    fig, axes : Figure and its Axes, one per network
    """
    import matplotlib.pyplot as plt

    if not isinstance(initial, Mapping) or not isinstance(trained, Mapping) or not isinstance(solved, Mapping):
        raise TypeError("initial, trained and solved must be mappings name -> values")
    if not initial or list(initial) != list(trained) or set(initial) != set(solved):
        raise ValueError(
            "initial, trained and solved must name the same networks, "
            f"got {list(initial)}, {list(trained)}, {list(solved)}"
        )
    T = integer(T, "T", low=1)
    top = real(top, "top", low=0.0, low_open=True)
    fig, grid = plt.subplots(1, len(initial), figsize=(13, 3.6), sharey=True, squeeze=False)
    axes = list(grid[0])
    bins = np.logspace(-0.5, 3, 36)
    for k, (ax, name) in enumerate(zip(axes, initial)):
        tau0 = real_array(initial[name], f"initial[{name!r}]", ndim=1)
        tau1 = np.clip(real_array(trained[name], f"trained[{name!r}]", ndim=1), None, top)
        ax.hist(tau0, bins=bins, histtype="step", ls="--", color=_colour(name, k + 1), label="at initialisation")
        ax.hist(tau1, bins=bins, histtype="stepfilled", alpha=0.5, color=_colour(name, k + 1), label="trained")
        ax.axvline(T, color="k", ls=":", lw=1, label=f"T = {T}")
        ax.set(xscale="log", xlabel=r"$\tau = -1/\log \bar f$ (steps)", title=f"{name} ({solved[name]})")
        ax.legend(fontsize=8)
    axes[0].set(ylabel=units)
    return fig, axes
