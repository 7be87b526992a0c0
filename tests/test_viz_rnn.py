"""Chapter 3's figure of agreement against distance: what it draws and what it refuses."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.rnn.experiments import DistanceAgreement
from seqlearn.viz.rnn import plot_agreement_by_distance


def curve(accuracy, bins=(0, 10, 20)) -> DistanceAgreement:
    accuracy = np.asarray(accuracy, dtype=float)
    return DistanceAgreement(np.array(bins), 10, tuple(range(len(accuracy))), accuracy, 100, (1.0,) * len(accuracy))


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_draws_the_mean_over_seeds_at_bin_centres_the_range_and_chance():
    elman = curve([[1.0, 0.6, 0.5], [0.8, 0.4, 0.5]])
    gru = curve([[1.0, 0.9, 0.7]])
    _fig, ax = plot_agreement_by_distance({"Elman": elman, "GRU": gru}, title="t")
    lines = ax.get_lines()
    np.testing.assert_allclose(lines[0].get_xdata(), [5, 15, 25])
    np.testing.assert_allclose(lines[0].get_ydata(), [0.9, 0.5, 0.5])
    np.testing.assert_allclose(lines[1].get_ydata(), [1.0, 0.9, 0.7])
    assert list(lines[2].get_ydata()) == [0.5, 0.5]  # chance
    assert len(ax.collections) == 2  # one band per model
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.4) and band[:, 1].max() == pytest.approx(1.0)
    _handles, labels = ax.get_legend_handles_labels()
    assert labels == ["Elman (mean of 2 seeds, range shaded)", "GRU (mean of 1 seed, range shaded)", "chance"]
    assert ax.get_title() == "t" and "bins of 10" in ax.get_xlabel() and ax.get_ylim() == (0.3, 1.03)


def test_marks_the_longest_short_distance_when_asked():
    _fig, ax = plot_agreement_by_distance({"Elman": curve([[1.0, 0.6, 0.5]])}, longest_short=12)
    assert list(ax.get_lines()[-1].get_xdata()) == [12, 12]
    assert ax.get_legend_handles_labels()[1][-1] == "longest short sentence in training"


@pytest.mark.parametrize(
    ("curves", "error", "match"),
    [
        ([curve([[1.0, 0.5, 0.5]])], TypeError, "mapping"),
        ({}, ValueError, "at least one"),
        ({"a": curve([[1.0, 0.5]], bins=(0, 10, 20))}, ValueError, "accuracy"),
        ({k: curve([[1.0, 0.5, 0.5]]) for k in "abcd"}, ValueError, "colours"),
        ({"a": curve([[1.0, np.nan, 0.5]])}, ValueError, "finite"),
    ],
)
def test_refuses_bad_curves(curves, error, match):
    with pytest.raises(error, match=match):
        plot_agreement_by_distance(curves)


def test_refuses_a_negative_longest_short():
    with pytest.raises(ValueError, match="longest_short"):
        plot_agreement_by_distance({"a": curve([[1.0, 0.5, 0.5]])}, longest_short=-1)
