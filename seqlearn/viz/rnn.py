r"""Chapter 3's figure of agreement against distance: where the Elman network stops carrying the subject.

:func:`plot_agreement_by_distance` draws, for each model, its agreement accuracy per bin of
subject-verb distances (the mean over seeds, and the range over seeds shaded) with chance, 1/2,
marked; it takes the :class:`seqlearn.rnn.experiments.DistanceAgreement` of
:func:`seqlearn.rnn.experiments.long_agreement_curves`. matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..validation import integer, real_array

__all__ = ["plot_agreement_by_distance"]


def plot_agreement_by_distance(
    curves: Mapping,
    *,
    longest_short: int | None = None,
    title: str = "Agreement against distance",
    colours: Sequence[str] = ("C0", "C2", "C3"),
):
    r"""Agreement accuracy against the distance between subject and verb, one line per model.

    Each point is the mean over seeds of one bin :math:`[b, b + w)` of distances, drawn at its
    centre :math:`b + w/2`; the band is the range over seeds. A dotted line marks chance, 1/2 (a
    model that does not know the subject's number prefers either verb form equally often), and
    an optional dashed line the longest distance of the text's short sentences.

    Parameters
    ----------
    curves : mapping name -> DistanceAgreement
        ``bins`` (K,), ``width`` and ``accuracy`` (seeds, K) of each model.
    longest_short : int, optional
        Longest subject-verb distance of the short sentences in training (dashed line).
    title : str
    colours : sequence of str
        One colour per model, in order.

    Returns
    -------
    fig, ax : Figure and Axes
    """
    import matplotlib.pyplot as plt

    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a mapping name -> DistanceAgreement, got {type(curves).__name__}")
    if not curves:
        raise ValueError("curves must hold at least one model")
    if len(colours) < len(curves):
        raise ValueError(f"colours must hold one colour per model ({len(curves)}), got {len(colours)}")
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for colour, (name, curve) in zip(colours, curves.items()):
        bins = real_array(curve.bins, f"curves[{name!r}].bins", ndim=1)
        accuracy = real_array(curve.accuracy, f"curves[{name!r}].accuracy", shape=(None, len(bins)))
        centre = bins + integer(curve.width, f"curves[{name!r}].width", low=1) / 2
        ax.fill_between(centre, accuracy.min(0), accuracy.max(0), color=colour, alpha=0.2, lw=0)
        seeds = f"{len(accuracy)} seed{'s' if len(accuracy) > 1 else ''}"
        ax.plot(centre, accuracy.mean(0), "o-", color=colour, label=f"{name} (mean of {seeds}, range shaded)")
    ax.axhline(0.5, color="k", ls=":", lw=1, label="chance")
    if longest_short is not None:
        longest_short = integer(longest_short, "longest_short", low=0)
        ax.axvline(longest_short, color="k", ls="--", lw=0.8, label="longest short sentence in training")
    width = next(iter(curves.values())).width
    ax.set(
        xlabel=f"distance between subject and verb (words, bins of {width})",
        ylabel="agreement accuracy",
        ylim=(0.3, 1.03),
        title=title,
    )
    ax.legend(loc="upper right", fontsize=9)
    return fig, ax
