"""Chapter 6's metric heatmap: a 2, a 4 and a small cross term get their own colours; bad input refused."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.lowrank import metric, random_vectors
from seqlearn.lowrank.overlaps import OVERLAPS, overlaps
from seqlearn.viz.lowrank import metric_bins, metric_heatmap


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_metric_bins_are_half_decades_symmetric_about_zero():
    expected_inner = np.array([0.01, 0.01 * 10**0.5, 0.1, 0.1 * 10**0.5, 1.0, 10**0.5])
    bins = metric_bins(4.0)
    np.testing.assert_allclose(bins, np.concatenate([[-4.004], -expected_inner[::-1], expected_inner, [4.004]]))
    np.testing.assert_allclose(metric_bins(1.0, smallest=0.1), [-1.001, -(10**-0.5), -0.1, 0.1, 10**-0.5, 1.001])


def test_metric_heatmap_tells_apart_the_diagonal_values_and_the_small_cross_terms(ax):
    G_bar = metric(overlaps(*random_vectors(500, rng=0)))  # diagonal 2 (cross pairs) and 4 (norms), cross terms < 0.2
    colour = metric_heatmap(ax, G_bar).norm
    assert colour(0.0) == colour(0.005) == colour(-0.005)  # the central, white bin
    assert len({int(colour(x)) for x in (0.0, 0.02, 0.05, 0.2, 2.0, 4.0)}) == 6  # every magnitude its own colour
    assert int(colour(4.0)) == 255 and int(colour(-4.0)) == 0  # the largest |entry| is not clipped below the top
    assert abs(int(colour(2.0)) + int(colour(-2.0)) - 255) <= 1  # symmetric about zero (to the colour map's rounding)
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"$\\sigma_{{{n}}}$" for n in OVERLAPS]
    lines = [line.get_xdata()[0] for line in ax.get_lines() if line.get_xdata()[0] == line.get_xdata()[1]]
    assert lines == [3.5]  # the visible block's edge


def test_metric_heatmap_scale_follows_the_largest_entry(ax):
    G_bar = np.diag(np.full(10, 0.3))
    G_bar[0, 1] = G_bar[1, 0] = -8.0
    image = metric_heatmap(ax, G_bar, visible=7)
    assert image.norm.vmin == pytest.approx(-8.008) and image.norm.vmax == pytest.approx(8.008)


@pytest.mark.parametrize(
    "G_bar, kwargs, error, words",
    [
        (np.eye(9), {}, ValueError, r"G_bar must have shape \(10, 10\)"),
        (np.full((10, 10), np.nan), {}, ValueError, "G_bar must be finite"),
        ("metric", {}, TypeError, "G_bar"),
        (np.eye(10), {"visible": 11}, ValueError, "visible"),
        (np.eye(10), {"visible": 2.5}, TypeError, "visible"),
        (np.eye(10), {"smallest": 0.0}, ValueError, "smallest"),
    ],
)
def test_metric_heatmap_refuses_bad_input(ax, G_bar, kwargs, error, words):
    with pytest.raises(error, match=words):
        metric_heatmap(ax, G_bar, **kwargs)


def test_metric_bins_refuse_a_top_below_the_smallest_bin():
    with pytest.raises(ValueError, match="top"):
        metric_bins(0.005)
