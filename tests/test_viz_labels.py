import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text

from seqlearn.viz import label_points, place_boxes


def _rects(centres, sizes):
    centres, sizes = np.asarray(centres, float), np.asarray(sizes, float)
    return np.column_stack([centres - sizes / 2, centres + sizes / 2])


def _overlap(a, b, tol=0.0):
    """Do rectangles (x0, y0, x1, y1) a and b share area (beyond a tolerance)?"""
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def _crowded(n=30, seed=0):
    rng = np.random.default_rng(seed)
    anchors = np.vstack([rng.normal(0, 3, (n - 10, 2)), np.full((10, 2), 5.0)])  # 10 on one spot
    sizes = np.column_stack([rng.uniform(20, 60, n), np.full(n, 10.0)])
    return anchors, sizes


def test_place_boxes_never_overlaps_on_a_crowded_example():
    anchors, sizes = _crowded()
    boxes = _rects(place_boxes(anchors, sizes, gap=1.0), sizes)
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b)
    for box in boxes:  # no box covers a labelled point
        x, y = anchors.T
        inside = (x > box[0]) & (x < box[2]) & (y > box[1]) & (y < box[3])
        assert not inside.any()


def test_place_boxes_is_deterministic_and_keeps_a_lone_box_next_to_its_anchor():
    anchors, sizes = _crowded()
    np.testing.assert_array_equal(place_boxes(anchors, sizes), place_boxes(anchors, sizes))
    (centre,) = place_boxes([[0.0, 0.0]], [[40.0, 10.0]], gap=2.0)
    outside = np.maximum(np.abs(centre) - [20.0, 5.0], 0)
    assert 2.0 <= np.hypot(*outside) <= 2.0 + 10.0 / 3  # touching, up to one grid step


def test_place_boxes_respects_bounds_and_obstacles():
    anchors = np.array([[50.0, 50.0]] * 5)
    sizes = np.array([[30.0, 8.0]] * 5)
    obstacle = [[50.0, 40.0, 100.0, 60.0]]  # everything right of the point is taken
    bounds = (0.0, 0.0, 100.0, 100.0)
    boxes = _rects(place_boxes(anchors, sizes, obstacles=obstacle, bounds=bounds), sizes)
    assert np.all(boxes[:, :2] >= 0) and np.all(boxes[:, 2:] <= 100)
    for box in boxes:
        assert not _overlap(box, obstacle[0])


def test_place_boxes_falls_back_above_everything_when_the_grid_is_full():
    anchors = np.zeros((4, 2))
    sizes = np.full((4, 2), 10.0)
    boxes = _rects(place_boxes(anchors, sizes, max_steps=1, bounds=(-6, -6, 6, 6)), sizes)
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b)


def test_place_boxes_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shape"):
        place_boxes(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="sizes"):
        place_boxes(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        place_boxes(np.zeros((1, 2)), [[-1.0, 2.0]])
    assert place_boxes(np.zeros((0, 2)), np.zeros((0, 2))).shape == (0, 2)


def test_label_points_leaves_no_two_labels_overlapping_in_the_drawn_figure():
    rng = np.random.default_rng(1)
    xy = np.vstack([rng.normal(0, 1, (15, 2)), rng.normal(2, 0.02, (13, 2))])  # a tight cluster of 13
    words = [f"word{i:02d}" for i in range(len(xy))]
    fig, ax = plt.subplots(figsize=(6, 4))
    try:
        ax.scatter(xy[:, 0], xy[:, 1], s=10)
        ax.set(title="crowded", xlabel="x", ylabel="y")
        texts = label_points(ax, xy, words, fontsize=9)
        assert [t.get_text() for t in texts] == words
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [Text.get_window_extent(t, renderer).extents for t in texts]  # the text, not its leader line
        for a, b in itertools.combinations(boxes, 2):
            assert not _overlap(a, b, tol=0.5)
        axes_box = ax.get_window_extent(renderer).extents
        for box in boxes:  # there is room, so all stay inside the axes
            assert box[0] >= axes_box[0] - 0.5 and box[2] <= axes_box[2] + 0.5
            assert box[1] >= axes_box[1] - 0.5 and box[3] <= axes_box[3] + 0.5
    finally:
        plt.close(fig)


def test_label_points_rejects_mismatched_labels():
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match="labels"):
            label_points(ax, np.zeros((3, 2)), ["a", "b"])
        with pytest.raises(ValueError, match="shape"):
            label_points(ax, np.zeros(3), ["a", "b", "c"])
    finally:
        plt.close(fig)
