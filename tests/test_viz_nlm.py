"""Chapter 2's figures: the curves and reference lines they should hold, and bad input refused."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.viz.nlm import plot_k_step_perplexity, plot_training_curves

EPOCHS = np.arange(1, 7) / 2  # 3 epochs, 2 points each
VAL = np.array([[20.0, 15, 13, 12.5, 12.2, 12.1], [21, 16, 13.5, 12.6, 12.3, 12.2]])
TRAIN = np.array([25.0, 17, 14, 13, 12.5, 12.0])
REFS = {"KN trigram": 13.2, "KN 4-gram": 12.9}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_training_curves_draw_every_seed_from_the_untrained_point_and_the_references():
    _fig, axes = plot_training_curves(EPOCHS, VAL, TRAIN, 80.0, REFS, evals_per_epoch=2)
    assert len(axes) == 2
    for ax in axes:
        lines = ax.get_lines()
        assert len(lines) == 2 + 1 + 2  # two seeds, the training curve, two references
        for seed, line in enumerate(lines[:2]):
            np.testing.assert_array_equal(line.get_xdata(), [0, *EPOCHS])
            np.testing.assert_array_equal(line.get_ydata(), [80.0, *VAL[seed]])
        assert [line.get_ydata()[0] for line in lines[3:]] == [13.2, 12.9]
        assert ax.get_xlabel() == "epochs of training (passes over the training text)"
    assert axes[0].get_yscale() == "log" and axes[1].get_yscale() == "linear"
    assert axes[1].get_ylim() == (11.8, 13.6)
    assert axes[1].get_title() == "All three epochs, perplexities 11.8 to 13.6"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == [
        "NLM, validation (2 seeds)",
        "NLM, training (mean over each 1/2 epoch, seed 0)",
        "KN trigram",
        "KN 4-gram",
    ]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["10", "12", "15", "20", "30", "50", "100"]


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        ((EPOCHS, VAL[:, :5], TRAIN, 80.0, REFS), {}, ValueError, "val_perplexity must have shape"),
        ((EPOCHS, VAL, TRAIN[:5], 80.0, REFS), {}, ValueError, "train_perplexity must have shape"),
        ((EPOCHS[::-1], VAL, TRAIN, 80.0, REFS), {}, ValueError, "epochs must be > 0 and increasing"),
        ((EPOCHS, VAL, TRAIN, -1.0, REFS), {}, ValueError, "untrained"),
        ((EPOCHS, VAL, TRAIN, 80.0, {"a": 0.0}), {}, ValueError, r"references\['a'\]"),
        ((EPOCHS, VAL, TRAIN, 80.0, [13.0]), {}, TypeError, "references must be a mapping"),
        ((EPOCHS, VAL, TRAIN, 80.0, dict.fromkeys("abcde", 1.0)), {}, ValueError, "at most 4"),
        ((EPOCHS, VAL, TRAIN, 80.0, REFS), {"zoom": (13.0, 12.0)}, ValueError, "zoom"),
        ((EPOCHS, VAL, TRAIN, 80.0, REFS), {"evals_per_epoch": 0}, ValueError, "evals_per_epoch"),
    ],
)
def test_training_curves_refuse_bad_input(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_training_curves(*args, **{"evals_per_epoch": 2, **kwargs})


KS = np.arange(1, 5)
COMMITTED = np.array([[12.0, 30, 60, 80], [12.5, 31, 62, 79]])
AVERAGED = np.array([[12.0, 25, 40, 50], [12.4, 26, 41, 52]])
CONTROL = np.array([13.0, 35, 70, 90])


def test_k_step_perplexity_draws_seeds_control_and_three_reference_lines():
    _fig, ax = plot_k_step_perplexity(KS, COMMITTED, AVERAGED, CONTROL, 150.0, order=3, n_averaged=64)
    lines = ax.get_lines()
    assert len(lines) == 2 * 2 + 1 + 3
    np.testing.assert_array_equal(lines[0].get_ydata(), COMMITTED[0])
    np.testing.assert_array_equal(lines[3].get_ydata(), AVERAGED[1])
    assert lines[5].get_ydata()[0] == pytest.approx(12.25)  # teacher forcing: the seeds' mean at k = 1
    assert lines[6].get_ydata()[0] == 150.0 and lines[7].get_xdata()[0] == 3
    assert ax.get_yscale() == "log" and ax.get_title() == "Predicting k steps ahead (2 seeds)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [
        "free running: committed to its draws",
        "averaged over 64 draws",
        "control: Kneser-Ney, n = 3, committed",
        "teacher forcing (k = 1)",
        "unigram: no context at all",
        "k = n = 3: the window holds only its own words",
    ]


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        ((KS, COMMITTED, AVERAGED[:1], CONTROL, 150.0), {}, ValueError, "averaged must have shape"),
        ((KS, COMMITTED, AVERAGED, CONTROL[:3], 150.0), {}, ValueError, "control must have shape"),
        ((KS, COMMITTED[:, :3], AVERAGED, CONTROL, 150.0), {}, ValueError, "committed must have shape"),
        ((KS, COMMITTED, AVERAGED, CONTROL, np.nan), {}, ValueError, "unigram"),
        ((KS, COMMITTED, AVERAGED, CONTROL, 150.0), {"order": 0}, ValueError, "order"),
        ((KS, COMMITTED, AVERAGED, CONTROL, 150.0), {"n_averaged": 2.5}, TypeError, "n_averaged"),
        ((KS, np.empty((0, 4)), np.empty((0, 4)), CONTROL, 150.0), {}, ValueError, "at least one seed"),
    ],
)
def test_k_step_perplexity_refuses_bad_input(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_k_step_perplexity(*args, **{"order": 3, "n_averaged": 64, **kwargs})
