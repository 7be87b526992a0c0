r"""Chapter 2's figures: the neural language model's training curves and its k-step-ahead perplexity.

Each function takes the computed numbers (arrays, not models) and returns the
:class:`matplotlib.figure.Figure` (made with ``pyplot``, so a notebook shows it) with its axes.
matplotlib is imported on first use, not when this module is imported.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..validation import integer, real, real_array

__all__ = ["plot_training_curves", "plot_k_step_perplexity"]

_REFERENCE_STYLES = (("C2", "--"), ("C3", "-."), ("C4", ":"), ("C5", (0, (5, 1))))
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _references(references: Mapping) -> dict[str, float]:
    """``label -> perplexity`` checked: at most as many as there are reference line styles, each > 0."""
    if not isinstance(references, Mapping):
        raise TypeError(f"references must be a mapping label -> perplexity, got {type(references).__name__}")
    if len(references) > len(_REFERENCE_STYLES):
        raise ValueError(f"references must hold at most {len(_REFERENCE_STYLES)} lines, got {len(references)}")
    return {
        str(label): real(value, f"references[{label!r}]", low=0.0, low_open=True) for label, value in references.items()
    }


def plot_training_curves(
    epochs,
    val_perplexity,
    train_perplexity,
    untrained: float,
    references: Mapping,
    *,
    evals_per_epoch: int,
    zoom: tuple[float, float] = (11.8, 13.6),
    first_ticks=(10, 12, 15, 20, 30, 50, 100),
):
    r"""Validation perplexity of S seeds and training perplexity of the first, against count-model references.

    Two panels of the same curves: the first epoch on a log perplexity axis (where most of the fall
    :math:`\log \mathrm{PPL}_{untrained} \to \log \mathrm{PPL}_{best}` happens), and all epochs on a linear
    axis limited to ``zoom``. Every validation curve starts at ``untrained``, epoch 0.

    Parameters
    ----------
    epochs : array, shape (P,)
        Epochs (fractions of passes over the training text) of the P evaluation points, > 0, increasing.
    val_perplexity : array, shape (S, P)
        Validation perplexity of each seed at each point.
    train_perplexity : array, shape (P,)
        Mean training perplexity of the first seed over each ``1 / evals_per_epoch`` of an epoch.
    untrained : float
        Validation perplexity before the first update (> 0).
    references : mapping label -> float
        Horizontal reference lines (at most 4), e.g. a Kneser-Ney model's validation perplexity.
    evals_per_epoch : int
        Evaluation points per epoch (for the training curve's label).
    zoom : (low, high)
        Perplexity range of the second panel.
    first_ticks : sequence of float
        Labelled perplexities on the first panel's log axis.

    Returns
    -------
    fig, axes : Figure and its two Axes
    """
    import matplotlib.pyplot as plt

    epochs = real_array(epochs, "epochs", ndim=1)
    val = real_array(val_perplexity, "val_perplexity", shape=(None, len(epochs)))
    train = real_array(train_perplexity, "train_perplexity", shape=(len(epochs),))
    untrained = real(untrained, "untrained", low=0.0, low_open=True)
    references = _references(references)
    evals_per_epoch = integer(evals_per_epoch, "evals_per_epoch", low=1)
    low, high = (real(z, "zoom", low=0.0, low_open=True) for z in zoom)
    if not low < high:
        raise ValueError(f"zoom must be (low, high) with 0 < low < high, got {zoom}")
    if len(epochs) == 0 or np.any(np.diff(epochs) <= 0) or epochs[0] <= 0:
        raise ValueError("epochs must be > 0 and increasing, with at least one point")
    n_epochs = int(np.ceil(epochs[-1] - 1e-9))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax in axes:
        for i, curve in enumerate(val):
            label = f"NLM, validation ({len(val)} seeds)" if i == 0 else None
            ax.plot([0, *epochs], [untrained, *curve], "-", color="C0", lw=1, label=label)
        ax.plot(
            epochs,
            train,
            ":",
            color="C1",
            lw=1,
            label=f"NLM, training (mean over each 1/{evals_per_epoch} epoch, seed 0)",
        )
        for (label, value), (colour, ls) in zip(references.items(), _REFERENCE_STYLES):
            ax.axhline(value, color=colour, ls=ls, label=label)
        ax.set(xlabel="epochs of training (passes over the training text)")
    axes[0].set(ylabel="perplexity (log scale)", yscale="log", xlim=(-0.02, 1), title="The first epoch")
    axes[0].set_yticks(list(first_ticks), labels=[f"{t:g}" for t in first_ticks])
    axes[0].minorticks_off()
    words = _NUMBER_WORDS.get(n_epochs, str(n_epochs))
    axes[1].set(ylabel="perplexity", ylim=(low, high), title=f"All {words} epochs, perplexities {low:g} to {high:g}")
    axes[0].legend(fontsize=8)
    return fig, axes


def plot_k_step_perplexity(
    ks, committed, averaged, control, unigram: float, *, order: int, n_averaged: int, control_label: str | None = None
):
    r"""Perplexity of the true word k steps after the last true word: sampled contexts, committed or averaged.

    A model that conditions on its own draws ("committed") loses the words it replaced; averaging
    :math:`p(w_{t+k} \mid w_{\le t}) = \mathbb{E}_{\hat w}\, p(w_{t+k} \mid w_{\le t}, \hat w_{t+1:t+k-1})` over
    ``n_averaged`` draws keeps more. Reference lines: teacher forcing (the mean of ``committed[:, 0]``, k = 1),
    the unigram perplexity (no context) and k = ``order``, where a window of ``order - 1`` words holds only
    drawn words.

    Parameters
    ----------
    ks : array, shape (K,)
        Steps ahead, 1, 2, ...
    committed, averaged : array, shape (S, K)
        Perplexity per seed and k, committed to the draws and averaged over them.
    control : array, shape (K,)
        A count model of the same order, committed.
    unigram : float
        Perplexity with no context (> 0).
    order : int
        n of the models (their window is n - 1 words).
    n_averaged : int
        Draws averaged over.
    control_label : str, optional
        Legend entry of ``control`` (default: a Kneser-Ney model of order n).

    Returns
    -------
    fig, ax : Figure and Axes
    """
    import matplotlib.pyplot as plt

    ks = real_array(ks, "ks", ndim=1)
    committed = real_array(committed, "committed", shape=(None, len(ks)))
    averaged = real_array(averaged, "averaged", shape=committed.shape)
    control = real_array(control, "control", shape=(len(ks),))
    unigram = real(unigram, "unigram", low=0.0, low_open=True)
    order = integer(order, "order", low=1)
    n_averaged = integer(n_averaged, "n_averaged", low=1)
    if len(committed) == 0:
        raise ValueError("committed must hold at least one seed")
    fig, ax = plt.subplots(figsize=(7, 4))
    for i in range(len(committed)):
        ax.plot(
            ks, committed[i], "o-", color="C3", lw=1, label="free running: committed to its draws" if i == 0 else None
        )
        ax.plot(ks, averaged[i], "s-", color="C0", lw=1, label=f"averaged over {n_averaged} draws" if i == 0 else None)
    ax.plot(
        ks, control, "^--", color="0.35", lw=1, label=control_label or f"control: Kneser-Ney, n = {order}, committed"
    )
    ax.axhline(committed[:, 0].mean(), color="k", ls=":", lw=1, label="teacher forcing (k = 1)")
    ax.axhline(unigram, color="C2", ls="--", lw=1, label="unigram: no context at all")
    ax.axvline(order, color="0.5", ls="-.", lw=1, label=f"k = n = {order}: the window holds only its own words")
    ax.set(
        xlabel="k: steps ahead of the last true word",
        ylabel="perplexity of the true word (log scale)",
        yscale="log",
        xticks=ks,
        title=f"Predicting k steps ahead ({len(committed)} seeds)",
    )
    ax.legend(fontsize=8)
    return fig, ax
