"""Chapter 4's figures on gated networks: cliffs, time constants, agreement; what they draw and what they refuse."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.rnn.experiments import TaskCliff
from seqlearn.viz.gated import COLOURS, plot_cliff_curves, plot_cliffs, plot_time_constants


def cliff(offset: float, lengths=(25, 50)) -> TaskCliff:
    rng = np.random.default_rng(int(10 * offset))
    curves = np.clip(rng.uniform(0.0, 1.1, (3, len(lengths), 5)) + offset, 0, None)  # (seeds, lengths, epochs)
    return TaskCliff("adding", tuple(lengths), (0, 1, 2), curves.min(axis=2), curves)


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_cliffs_draw_median_seeds_and_spread_per_network_and_two_reference_lines(ax):
    cliffs = {"Elman": cliff(0.5), "LSTM": cliff(0.0)}
    plot_cliffs(ax, cliffs, "MSE / (1/6)", "cliffs")
    lines = ax.get_lines()
    assert len(lines) == 2 * 2 + 2  # median and seed dots per network, then the two levels
    np.testing.assert_allclose(lines[0].get_xdata(), [25 - 1.8, 50 - 1.8])  # network 0 shifted left
    np.testing.assert_allclose(lines[2].get_ydata(), np.median(cliffs["LSTM"].relative_loss, axis=0))
    assert len(lines[3].get_xdata()) == 6  # every seed at every length
    assert [line.get_ydata()[0] for line in lines[4:]] == [1.0, 0.1]
    assert len(ax.collections) == 2  # one shaded range per network
    assert list(ax.get_xticks()) == [25, 50] and ax.get_ylim() == (0, 1.15) and ax.get_ylabel() == "MSE / (1/6)"
    _handles, labels = ax.get_legend_handles_labels()
    assert labels == ["Elman", "LSTM", "memoryless baseline", "10% of the baseline"]


def test_cliff_curves_draw_each_seed_and_the_median_at_length_T(ax):
    cliffs = {"Elman": cliff(0.5), "LSTM": cliff(0.0)}
    plot_cliff_curves(ax, cliffs, 50, "loss", "T = 50")
    lines = ax.get_lines()
    assert len(lines) == 2 * (3 + 1) + 1
    np.testing.assert_allclose(lines[3].get_ydata(), np.median(cliffs["Elman"].curves[:, 1], axis=0))
    np.testing.assert_array_equal(lines[3].get_xdata(), np.arange(1, 6))
    assert ax.get_legend_handles_labels()[1] == ["Elman (median)", "LSTM (median)"]


def test_a_network_keeps_its_colour_whichever_networks_are_drawn(ax):
    from matplotlib.colors import to_rgba

    plot_cliffs(ax, {"Elman RNN": cliff(0.5), "GRU": cliff(0.0), "other": cliff(0.2)}, "y", "t")
    colours = [to_rgba(line.get_color()) for line in ax.get_lines()[0:6:2]]
    assert colours == [to_rgba(c) for c in (COLOURS["Elman RNN"], COLOURS["GRU"], "C2")]  # the third: by position


@pytest.mark.parametrize(
    "cliffs, T, error, words",
    [
        ({}, 50, ValueError, "at least one network"),
        ([cliff(0)], 50, TypeError, "cliffs must be a mapping"),
        ({"a": cliff(0), "b": cliff(0, lengths=(25, 75))}, 50, ValueError, "share their sequence lengths"),
        ({"a": cliff(0)}, 75, ValueError, r"T must be one of the cliffs' lengths \[25, 50\]"),
        ({"a": cliff(0)}, 50.0, TypeError, "T must be an int"),
    ],
)
def test_cliff_plots_refuse_bad_input(ax, cliffs, T, error, words):
    with pytest.raises(error, match=words):
        plot_cliff_curves(ax, cliffs, T, "y", "t")


def test_cliffs_refuse_a_loss_table_of_the_wrong_shape(ax):
    good = cliff(0)
    bad = TaskCliff("adding", good.lengths, good.seeds, good.relative_loss[:, :1], good.curves)
    with pytest.raises(ValueError, match=r"cliffs\['a'\].relative_loss must have shape \(3, 2\)"):
        plot_cliffs(ax, {"a": bad}, "y", "t")


TAU0 = {"LSTM": np.array([1.0, 2.0, 3.0]), "GRU": np.array([1.5, 2.5, 4.0])}
TAU1 = {"LSTM": np.array([5.0, 50.0, 5000.0]), "GRU": np.array([2.0, 20.0, 40.0])}
SOLVED = {"LSTM": "1 of 3 solved", "GRU": "3 of 3 solved"}


def test_time_constants_one_log_panel_per_network_with_two_histograms_and_T():
    _fig, axes = plot_time_constants(TAU0, TAU1, SOLVED, T=50, units="units")
    assert len(axes) == 2
    for ax, name in zip(axes, TAU0):
        assert ax.get_xscale() == "log" and ax.get_title() == f"{name} ({SOLVED[name]})"
        assert len(ax.patches) == 2  # the step histogram and the filled one
        assert ax.get_lines()[0].get_xdata()[0] == 50
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["at initialisation", "trained", "T = 50"]
    assert axes[0].get_ylabel() == "units"
    filled = axes[0].patches[1].get_path().vertices
    assert filled[:, 0].max() <= 1000.0 + 1e-9  # the histogram ends at 10^3: 5000 is counted in the last bin
    assert filled[:, 1].max() == 1.0


@pytest.mark.parametrize(
    "initial, trained, solved, kwargs, error, words",
    [
        (TAU0, {"LSTM": TAU1["LSTM"]}, SOLVED, {}, ValueError, "same networks"),
        (TAU0, TAU1, [1, 2], {}, TypeError, "mappings"),
        (TAU0, {**TAU1, "GRU": np.array([np.nan])}, SOLVED, {}, ValueError, r"trained\['GRU'\] must be finite"),
        (TAU0, TAU1, SOLVED, {"T": 0}, ValueError, "T must be"),
        (TAU0, TAU1, SOLVED, {"top": -1.0}, ValueError, "top"),
    ],
)
def test_time_constants_refuse_bad_input(initial, trained, solved, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_time_constants(initial, trained, solved, **{"T": 50, "units": "u", **kwargs})
