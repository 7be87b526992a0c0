"""Chapter 4's echo state network figures: what each panel holds, and bad input refused."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.viz.reservoir import (
    BOUND_LABEL,
    plot_cost_accuracy,
    plot_free_run,
    plot_memory_capacity,
    plot_reservoir_panels,
    plot_state_distances,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


STEPS = np.arange(11)
DISTANCES = {
    "contracting": 2.0 * 0.5**STEPS,
    "seeds": np.vstack([np.ones(11), 2 * np.ones(11)]),
    "chaotic": np.full(11, 3.0),
}


def test_state_distances_draw_a_line_per_curve_and_seed_the_bound_and_the_washout():
    _fig, ax = plot_state_distances(DISTANCES, rate=0.5, washout=4, washout_label="washout", N=7)
    lines = ax.get_lines()
    assert len(lines) == 1 + 1 + 2 + 1 + 1
    np.testing.assert_allclose(lines[1].get_ydata(), 2.0 * 0.5**STEPS)  # the bound sigma^t ||x_0 - x'_0||
    assert lines[1].get_color() == lines[0].get_color() == "C0"
    assert lines[2].get_color() == lines[3].get_color() == "C1"
    assert lines[-1].get_xdata()[0] == 4
    assert ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((1e-17, 1e3))
    assert ax.get_title().endswith("(N = 7)")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["contracting", BOUND_LABEL, "seeds", "chaotic", "washout"]


def test_state_distances_without_a_bound():
    _fig, ax = plot_state_distances(DISTANCES, rate=None, washout=4, washout_label="w", N=7)
    assert len(ax.get_lines()) == 5


@pytest.mark.parametrize(
    "distances, kwargs, error, words",
    [
        ({}, {}, ValueError, "at least one"),
        ({"a": np.ones(11), "b": np.ones(12)}, {}, ValueError, "must all have 11 steps"),
        ({"a": np.ones((2, 2, 2))}, {}, ValueError, "1-D or 2-D"),
        (DISTANCES, {"rate": 1.0}, ValueError, "rate"),
        (DISTANCES, {"washout": -1}, ValueError, "washout"),
        ([np.ones(3)], {}, TypeError, "distances must be a mapping"),
    ],
)
def test_state_distances_refuse_bad_input(distances, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_state_distances(distances, **{"rate": 0.5, "washout": 4, "washout_label": "w", "N": 7, **kwargs})


TRUTH = np.sin(np.arange(30) / 3)
RUN = TRUTH + np.linspace(0, 0.5, 30)
NRMSE = np.array([[1e-4, 1e-3, 1e-2], [2e-4, 2e-3, 2e-2]])


def test_free_run_left_the_run_against_the_truth_right_the_error_per_horizon():
    _fig, (ax1, ax2) = plot_free_run(TRUTH, RUN, NRMSE, on_track=12, N=50, trials=20, tau=17, reference=(3e-4, "paper"))
    assert len(ax1.get_lines()) == 4
    assert [line.get_xdata()[0] for line in ax1.get_lines()[2:]] == [3, 12]  # the horizon H and the first miss
    assert len(ax2.get_lines()) == 2 + 1 + 1 and ax2.get_yscale() == "log"
    np.testing.assert_array_equal(ax2.get_lines()[-1].get_xydata(), [[3, 3e-4]])
    assert ax2.get_title() == r"Error of the free run, $\tau$ = 17" and ax2.get_ylabel() == "NRMSE over 20 trials"
    labels = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert labels == ["ESN, N = 50 (2 seeds)", "predicting the mean", "paper"]


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        ((TRUTH, RUN[:-1], NRMSE), {}, ValueError, "run must have shape"),
        ((TRUTH, RUN, NRMSE[0]), {}, ValueError, "nrmse must be 2-D"),
        ((TRUTH, RUN, NRMSE), {"on_track": -1}, ValueError, "on_track"),
        ((TRUTH, RUN, NRMSE), {"reference": (0.0, "x")}, ValueError, "reference"),
    ],
)
def test_free_run_refuses_bad_input(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        plot_free_run(*args, **{"on_track": 12, "N": 50, "trials": 20, "tau": 17, "reference": (3e-4, "p"), **kwargs})


R2 = {"linear": np.linspace(1, 0, 20), "tanh": np.linspace(0.5, 0, 20)}
SCALES = np.array([0.1, 1.0, 4.0])
MC_TANH = np.array([[8.0, 6.0, 3.0], [9.0, 5.0, 2.0]])
MC_LINEAR = np.array([9.5, 9.0, 9.9])


def test_memory_capacity_functions_with_their_sums_and_capacity_against_scaling():
    _fig, (ax1, ax2) = plot_memory_capacity(R2, SCALES, MC_TANH, MC_LINEAR, N=10, radius=0.9)
    assert len(ax1.get_lines()) == 3 and ax1.get_lines()[-1].get_xdata()[0] == 10
    assert [t.get_text() for t in ax1.get_legend().get_texts()] == ["linear: MC = 10.0", "tanh: MC = 5.0", "k = N = 10"]
    assert ax2.get_xscale() == "log" and ax2.get_ylim() == pytest.approx((0, 11))
    np.testing.assert_array_equal(ax2.get_lines()[0].get_ydata(), [8.5, 5.5, 2.5])
    assert [line.get_ydata()[0] for line in ax2.get_lines()[1:]] == [10, 9.5]  # the bound N, the linear median
    assert len(ax2.collections) == 1 and ax2.get_title() == r"Saturation costs memory (N = 10, $W$ = 0.9 Q)"


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((R2, SCALES, MC_TANH[:, :2], MC_LINEAR), ValueError, "mc_tanh must have shape"),
        ((R2, -SCALES, MC_TANH, MC_LINEAR), ValueError, "scales must be > 0"),
        ((dict.fromkeys("abcde", np.ones(3)), SCALES, MC_TANH, MC_LINEAR), ValueError, "at most 4"),
        (({"a": np.ones((2, 2))}, SCALES, MC_TANH, MC_LINEAR), ValueError, r"memory_functions\['a'\] must be 1-D"),
        ((R2, SCALES, MC_TANH, "nine"), TypeError, "mc_linear"),
    ],
)
def test_memory_capacity_refuses_bad_input(args, error, words):
    with pytest.raises(error, match=words):
        plot_memory_capacity(*args, N=10, radius=0.9)


COSTS = {"ESN, N = 50": (0.01, 1e-2), "ESN, N = 400": (0.2, 1e-3), "LSTM, 10 epochs": (3.0, 5e-2)}


def test_cost_accuracy_one_point_per_model_styled_by_family():
    _fig, ax = plot_cost_accuracy(COSTS, 0.3)
    points = ax.get_lines()[:3]
    assert [p.get_marker() for p in points] == ["o", "o", "s"]
    assert [tuple(p.get_xydata()[0]) for p in points] == [(0.01, 1e-2), (0.2, 1e-3), (3.0, 5e-2)]
    assert [t.get_text() for t in ax.texts] == list(COSTS)
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_xlim()[1] == pytest.approx(12.0)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["ESN: one ridge solve", "LSTM (H = 32): BPTT with Adam", "persistence"]


@pytest.mark.parametrize(
    "results, persistence, error, words",
    [
        ({"GRU": (1.0, 0.1)}, 0.3, ValueError, "starts with none of the families"),
        ({"ESN": (0.0, 0.1)}, 0.3, ValueError, r"results\['ESN'\]"),
        (COSTS, -0.3, ValueError, "persistence"),
        ({}, 0.3, ValueError, "at least one"),
    ],
)
def test_cost_accuracy_refuses_bad_input(results, persistence, error, words):
    with pytest.raises(error, match=words):
        plot_cost_accuracy(results, persistence)


FREE = TRUTH + 0.1
DIST = 2.0 * 0.1 ** np.arange(8)


def test_reservoir_panels_free_run_esp_with_bound_only_when_contracting_and_memory():
    fig, axes = plot_reservoir_panels(
        TRUTH, FREE, DIST, np.full(6, 0.5), sigma=0.2, s_max=0.5, rho=0.4, leak=0.5, input_scaling=1
    )
    assert axes[0].get_title() == "NRMSE over 30 steps: 0.5"  # 0.1 / 0.2
    np.testing.assert_allclose(axes[1].get_lines()[1].get_ydata(), 2.0 * 0.75 ** np.arange(8))  # 1 - a + a s_max
    assert axes[1].get_title() == r"ESP test: $\sigma_{\max}$ = 0.50" and axes[1].get_yscale() == "log"
    assert axes[2].get_title() == "memory capacity 3.0" and axes[2].get_lines()[1].get_xdata()[0] == 3
    assert fig._suptitle.get_text() == r"$\rho$ = 0.40, a = 0.50, $s_{in}$ = 1"
    fig, axes = plot_reservoir_panels(
        TRUTH, FREE, DIST, np.full(6, 0.5), sigma=0.2, s_max=1.3, rho=1.2, leak=0.5, input_scaling=1
    )
    assert len(axes[1].get_lines()) == 1  # no bound when sigma_max >= 1


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"free": FREE[:-1]}, ValueError, "free must have shape"),
        ({"memory_function": np.ones(5)}, ValueError, "even number"),
        ({"sigma": 0.0}, ValueError, "sigma"),
        ({"leak": 0.0}, ValueError, "leak"),
        ({"distance": np.array([1.0, np.inf])}, ValueError, "distance must be finite"),
    ],
)
def test_reservoir_panels_refuse_bad_input(kwargs, error, words):
    args = {"truth": TRUTH, "free": FREE, "distance": DIST, "memory_function": np.ones(6)}
    args.update({k: v for k, v in kwargs.items() if k in args})
    how = {"sigma": 0.2, "s_max": 0.5, "rho": 0.4, "leak": 0.5, "input_scaling": 1.0}
    how.update({k: v for k, v in kwargs.items() if k in how})
    with pytest.raises(error, match=words):
        plot_reservoir_panels(*args.values(), **how)
