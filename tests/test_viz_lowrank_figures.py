"""Chapter 6's figures from overlap trajectories: what each panel holds, and bad input refused."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.lowrank.overlaps import OVERLAPS
from seqlearn.viz.lowrank import (
    LABEL,
    plot_forgetting,
    plot_learning_filter,
    plot_memory_decoding,
    plot_twin_panels,
    plot_twins,
)

E = 6
RNG = np.random.default_rng(0)
SIGMA = RNG.normal(size=(E + 1, 10))
SIGMA_ODE = SIGMA + 0.01
LOSSES = {
    "network": np.linspace(1, 0.1, E + 1),
    "ODE": np.linspace(1, 0.12, E + 1),
    "visible": np.linspace(1, 0.5, E + 1),
}
G_BAR = np.eye(10) * 2


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def at(name):
    return OVERLAPS.index(name)


def test_learning_filter_metric_losses_overlaps_and_end_point():
    fig, axes = plot_learning_filter(G_BAR, LOSSES, SIGMA, SIGMA_ODE, (1.0, 0.8, 0.8), eta=0.05)
    metric, loss, visible, invisible, end = axes
    assert len(metric.images) == 1 and len(fig.axes) == 6  # the five panels and the colour bar
    assert [line.get_linestyle() for line in loss.get_lines()] == ["-", "--", ":"]
    assert loss.get_xscale() == loss.get_yscale() == "log" and loss.get_title() == r"learning the filter, $\eta$ = 0.05"
    np.testing.assert_array_equal(loss.get_lines()[0].get_xdata(), np.arange(1, E + 1))  # epoch 0 left out
    assert len(visible.get_lines()) == 2 * 4 and len(invisible.get_lines()) == 2 * 6  # network and ODE per overlap
    np.testing.assert_array_equal(visible.get_lines()[1].get_ydata(), SIGMA_ODE[:, at("zm")])
    assert visible.get_xscale() == "symlog"
    assert [t.get_text() for t in visible.get_legend().get_texts()] == [LABEL[n] for n in ("zm", "zu", "vm", "vu")]
    heights = [bar.get_height() for bar in end.patches]
    zm, zu, vm, vu = (SIGMA[-1, at(n)] for n in ("zm", "zu", "vm", "vu"))
    np.testing.assert_allclose(heights, [zm, vu, zu * vm])
    np.testing.assert_allclose([seg[0, 1] for seg in end.collections[0].get_segments()], [1.0, 0.8, 0.8])


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((G_BAR, {}, SIGMA, SIGMA_ODE, (1, 0.8, 0.8)), ValueError, "losses must be a mapping of 1 to 3"),
        ((G_BAR, LOSSES, SIGMA, SIGMA_ODE[:-1], (1, 0.8, 0.8)), ValueError, r"sigma_ode must have shape \(7, 10\)"),
        ((G_BAR, {"a": np.ones(3)}, SIGMA, SIGMA_ODE, (1, 0.8, 0.8)), ValueError, r"losses\['a'\] must have shape"),
        ((G_BAR, LOSSES, SIGMA[:, :4], SIGMA_ODE, (1, 0.8, 0.8)), ValueError, "sigma_network must have shape"),
        ((G_BAR, LOSSES, SIGMA, SIGMA_ODE, (1, 0.8)), ValueError, "solution must have shape"),
        ((np.eye(9), LOSSES, SIGMA, SIGMA_ODE, (1, 0.8, 0.8)), ValueError, "G_bar"),
    ],
)
def test_learning_filter_refuses_bad_input(args, error, words):
    with pytest.raises(error, match=words):
        plot_learning_filter(*args, eta=0.05)


STEPS = np.arange(5) * 0.1
OUTPUTS = RNG.normal(size=(2, 2, 5))
TWIN_LOSSES = np.abs(RNG.normal(size=(3, 3, E + 1))) + 0.1


def test_twins_outputs_losses_of_every_pair_and_the_visible_overlaps():
    _fig, axes = plot_twins(STEPS, OUTPUTS, np.zeros(5), TWIN_LOSSES, SIGMA, SIGMA_ODE, later=4)
    assert len(axes[0].get_lines()) == 5
    np.testing.assert_array_equal(axes[0].get_lines()[3].get_ydata(), OUTPUTS[1, 1])
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == [
        r"$\theta_1$, epoch 0",
        r"$\theta_2$, epoch 0",
        r"$\theta_1$, epoch 4",
        r"$\theta_2$, epoch 4",
        "target F$_1$",
    ]
    lines = axes[1].get_lines()
    assert len(lines) == 3 * 3 and axes[1].get_yscale() == "log"
    assert [line.get_linewidth() for line in lines] == [1.6] * 3 + [0.6] * 6  # the first pair thick
    assert axes[1].get_title() == "3 twin pairs (thin: seeds 1-2)"
    assert len(axes[2].get_lines()) == 2 * 4
    np.testing.assert_array_equal(axes[2].get_lines()[3].get_ydata(), SIGMA_ODE[:, at("zu")])


@pytest.mark.parametrize(
    "args, later, error, words",
    [
        ((STEPS, OUTPUTS[:1], np.zeros(5), TWIN_LOSSES, SIGMA, SIGMA), 4, ValueError, "outputs must have shape"),
        ((STEPS, OUTPUTS, np.zeros(4), TWIN_LOSSES, SIGMA, SIGMA), 4, ValueError, "target must have shape"),
        ((STEPS, OUTPUTS, np.zeros(5), TWIN_LOSSES[:, :2], SIGMA, SIGMA), 4, ValueError, "losses must have shape"),
        ((STEPS, OUTPUTS, np.zeros(5), TWIN_LOSSES[:0], SIGMA, SIGMA), 4, ValueError, "at least one twin pair"),
        ((STEPS, OUTPUTS, np.zeros(5), TWIN_LOSSES, SIGMA[:-1], SIGMA), 4, ValueError, "sigma_1 must have shape"),
        ((STEPS, OUTPUTS, np.zeros(5), TWIN_LOSSES, SIGMA, SIGMA), 7, ValueError, "later"),
    ],
)
def test_twins_refuse_bad_input(args, later, error, words):
    with pytest.raises(error, match=words):
        plot_twins(*args, later=later)


NOISE = SIGMA[::-1] + 0.5
I1 = {"GD": np.full(E + 1, 2.0), "noise": np.linspace(2, 3, E + 1)}


def test_forgetting_paths_return_and_drift_and_the_invariant():
    _fig, axes = plot_forgetting(SIGMA, (2, 4, 6), NOISE, I1)
    lines = axes[0].get_lines()
    assert len(lines) == 3 * 3 + 3  # per overlap: the protocol, the noise run, its first end; then the 3 ends
    assert lines[2].get_ydata()[0] == SIGMA[2, at("vu")]
    assert [line.get_xdata()[0] for line in lines[-3:]] == [2, 4, 6]
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == [
        r"$\sigma_{vu}$ (visible)",
        r"$\sigma_{uu}$ (invisible)",
        r"$\sigma_{mu}$ (invisible)",
    ]
    scatters = axes[1].collections
    assert [len(s.get_offsets()) for s in scatters] == [4, 6, 4, 6]
    np.testing.assert_array_equal(scatters[3].get_offsets()[:, 1], NOISE[-1, [at(n) for n in OVERLAPS[4:]]])
    np.testing.assert_allclose(axes[2].get_lines()[1].get_ydata(), np.linspace(0, 1, E + 1), atol=1e-15)
    assert axes[2].get_lines()[2].get_ydata()[0] == 0


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((SIGMA, (2, 4), NOISE, I1), ValueError, "ends must hold the 3"),
        ((SIGMA, (2, 4, 9), NOISE, I1), ValueError, "ends"),
        ((SIGMA, (2, 4, 6), NOISE[:, :3], I1), ValueError, "sigma_noise must have shape"),
        ((SIGMA, (2, 4, 6), NOISE, {}), ValueError, "invariant must be a non-empty mapping"),
        ((SIGMA, (2, 4, 6), NOISE, {"a": np.ones((2, 2))}), ValueError, r"invariant\['a'\] must be 1-D"),
    ],
)
def test_forgetting_refuses_bad_input(args, error, words):
    with pytest.raises(error, match=words):
        plot_forgetting(*args)


def test_twin_panels_with_and_without_a_twin():
    loss = LOSSES["network"]
    _, axes = plot_twin_panels(loss, SIGMA, loss / 2, SIGMA_ODE, smallest=0.3, product=0.8)
    assert len(axes[0].get_lines()) == 2 and axes[0].get_title() == f"twin: loss 0.05 after {E} epochs"
    _path, twin, hyperbola = axes[1].get_lines()
    np.testing.assert_array_equal(twin.get_xydata(), SIGMA_ODE[:, [at("zu"), at("vm")]])
    np.testing.assert_allclose(hyperbola.get_xdata() * hyperbola.get_ydata(), 0.8)
    assert hyperbola.get_label() == r"solutions $\sigma_{zu}\sigma_{vm}$ = 0.80"
    assert axes[1].get_xlabel() == LABEL["zu"] and axes[1].get_xlim() == (-0.5, 3)
    _fig, axes = plot_twin_panels(loss, SIGMA, smallest=-0.25, product=0.8)
    assert len(axes[0].get_lines()) == 1 and axes[0].get_title() == "not a Gram matrix (smallest eigenvalue -0.25)"
    assert len(axes[1].get_lines()) == 2


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        ((LOSSES["network"], SIGMA, LOSSES["network"]), {}, ValueError, "both be given or both be None"),
        ((LOSSES["network"], SIGMA[:-1]), {}, ValueError, "base_sigma must have shape"),
        ((LOSSES["network"], SIGMA), {"product": 0.0}, ValueError, "product"),
        ((LOSSES["network"], SIGMA, LOSSES["network"], SIGMA[:3]), {}, ValueError, "twin_sigma must have shape"),
    ],
)
def test_twin_panels_refuse_bad_input(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_twin_panels(*args, **{"smallest": 0.1, "product": 0.8, **kwargs})


def test_the_colour_bars_labels_end_left_of_the_loss_panels_label():
    metric = np.diag(np.r_[np.full(4, 2.0), np.full(6, 4.0)]) + 0.03  # entries up to 4: labels like 3.2
    fig, axes = plot_learning_filter(metric, LOSSES, SIGMA, SIGMA_ODE, (1.0, 0.8, 0.8), eta=0.05)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    colour_bar = axes[0].images[0].colorbar.ax
    labels_end = max(t.get_window_extent(renderer).x1 for t in colour_bar.get_yticklabels() if t.get_text())
    assert labels_end < axes[1].yaxis.label.get_window_extent(renderer).x0


LIVE = {("live", "visible"): np.array([0.5, 0.75, 1.0]), ("live", "invisible"): np.array([1.0, 1.0, 0.75])}


@pytest.mark.parametrize("seeds", [1, 3])
def test_memory_decoding_draws_a_bar_per_decoder_and_a_dot_per_seed(seeds):
    shipped = {("paper", kind): np.linspace(0.6, 0.9, seeds) for kind in ("visible", "invisible")}
    _, ax = plot_memory_decoding(LIVE, shipped)
    heights = [bar.get_height() for bar in ax.patches]
    np.testing.assert_allclose(heights, [0.75, 11 / 12, *[np.linspace(0.6, 0.9, seeds).mean()] * 2])
    dots = [line for line in ax.get_lines() if line.get_marker() == "."]
    assert [len(line.get_xdata()) for line in dots] == [seeds, seeds]
    np.testing.assert_allclose(dots[1].get_ydata(), shipped["paper", "invisible"])
    assert f"{seeds} seed(s)" in ax.get_title()
    assert {"visible overlaps", "invisible overlaps", "one seed", "chance"} == {
        t.get_text() for t in ax.get_legend().get_texts()}  # fmt: skip


@pytest.mark.parametrize(
    "live, match",
    [
        ({}, "live must be a non-empty mapping"),
        ({("live", "hidden"): [0.5]}, "keys must be"),
        ({("live", "visible"): [1.5]}, r"accuracies in \[0, 1\]"),
    ],
)
def test_memory_decoding_refuses_bad_accuracies(live, match):
    with pytest.raises(ValueError, match=match):
        plot_memory_decoding(live, {("paper", "visible"): [0.5]})
