"""Chapter 5's figures draw what their captions say: one line or point set per run, the labelled
reference lines, the axes' labels and scales. Runs are stand-ins with the Diagnostics attributes the
figures read; the toy is a real ToyDetection, small."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from seqlearn.learnability.toy import sign_quantile, toy_detection
from seqlearn.learnability.window import window_exponential
from seqlearn.viz.learnability import (
    plot_envelopes,
    plot_requirement,
    plot_tail_index,
    plot_time_scales,
    plot_toy_laws,
    plot_windows,
)

LAGS = np.array([2, 4, 8, 16, 32])
NAMES = {"const": "ConstGate", "lstm": "LSTM"}


def _run(scale: float):
    tau = np.array([1.0, 5.0, np.inf, 20.0])
    return SimpleNamespace(
        f=scale * np.exp(-LAGS / 10), time_scales=lambda: tau, alpha=np.full(5, 1.9),
        alpha_instantaneous=np.full(5, 1.5), N_grid=np.array([1, 10, 100]), H_N=np.array([0, 4, 16]),
        mean=np.linspace(1, 2, 5), sigma=np.ones(5), eps=20.0,
    )  # fmt: skip


RUNS = {("const", 0): _run(1.0), ("const", 1): _run(2.0), ("lstm", 0): _run(3.0), ("lstm", 1): _run(4.0)}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_envelopes_draw_each_run_on_both_axes_with_the_references():
    fig = plot_envelopes(RUNS, NAMES, LAGS)
    lin, log = fig.axes
    assert (lin.get_yscale(), log.get_xscale(), log.get_yscale()) == ("log", "log", "log")
    assert len(lin.lines) == len(log.lines) == 5  # four runs and one reference each
    np.testing.assert_allclose(lin.lines[1].get_ydata(), np.exp(-(LAGS - 2) / 10))  # normalised at the first lag
    np.testing.assert_allclose(lin.lines[-1].get_ydata(), 0.95 ** (LAGS - 2))
    assert _labels(lin) == ["ConstGate", "LSTM", r"$0.95^{\ell - 2}$ (ConstGate's gate)"]
    assert lin.get_xlabel() == r"lag $\ell$" and lin.get_ylabel() == r"$\hat f(\ell)/\hat f(2)$"
    # the first seed thick, the others thin; one colour per architecture
    assert lin.lines[0].get_linewidth() > lin.lines[1].get_linewidth()
    assert lin.lines[0].get_color() == lin.lines[1].get_color() != lin.lines[2].get_color()


def test_time_scales_are_a_ccdf_of_the_finite_tau():
    ax = plot_time_scales(RUNS, NAMES, 19.5).axes[0]
    assert len(ax.lines) == 5
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1.0, 5.0, 20.0])  # inf left out, sorted
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [1, 2 / 3, 1 / 3])
    assert ax.get_xlabel() == r"per-neuron time scale $\tau_q$ (steps)" and ax.get_xscale() == "log"


def test_tail_index_draws_two_curves_per_run_and_the_gaussian_line():
    ax = plot_tail_index(RUNS, NAMES, LAGS).axes[0]
    assert len(ax.lines) == 2 * 4 + 1
    assert [line.get_linestyle() for line in ax.lines[:2]] == ["-", "--"]
    assert ax.get_ylabel() == r"$\hat\alpha(\ell)$" and ax.get_ylim() == (1, 2.05)


def test_requirement_plots_n_star_of_each_run_against_its_envelope():
    ax = plot_requirement(RUNS, NAMES, 2048, 5e5).axes[0]
    assert len(ax.lines) == 4 + 2
    d = RUNS["lstm", 0]
    np.testing.assert_allclose(ax.lines[2].get_xdata(), d.f)
    np.testing.assert_allclose(ax.lines[2].get_ydata(), (20.0 * 1.0 / d.mean) ** (1.9 / 0.9))
    assert r"\hat\gamma" in ax.get_ylabel() and _labels(ax)[2] == "grid's largest N = 2048"


def test_windows_step_each_run():
    ax = plot_windows(RUNS, NAMES, 48, 1024).axes[0]
    assert len(ax.lines) == 4 + 2
    assert ax.get_ylabel() == r"window $H_N$ (lags)" and ax.get_xscale() == "log"
    assert _labels(ax)[-2:] == ["largest lag of the grid (48)", "sequences measured (1024)"]


def test_toy_laws_draw_the_measurement_beside_each_closed_form():
    N = np.unique(np.geomspace(1, 3000, 30).round().astype(int))
    laws = {a: toy_detection(np.geomspace(0.05, 0.5, 4), np.arange(1, 40), N, a, sigma=0.3, replicates=100)
            for a in (2.0, 1.5)}  # fmt: skip
    windows = {a: toy_detection([0.1], np.arange(1, 40), N, a, sigma=1 / sign_quantile(a), replicates=100)
               for a in (2.0, 1.5)}  # fmt: skip
    law_ax, win_ax = plot_toy_laws(laws, windows).axes
    assert len(law_ax.lines) == len(win_ax.lines) == 4
    d = laws[1.5]
    inside = d.N_req > d.N_grid[0]
    np.testing.assert_array_equal(law_ax.lines[2].get_ydata(), d.N_req[inside])
    x, y = law_ax.lines[3].get_data()
    np.testing.assert_allclose(y, (0.3 * sign_quantile(1.5) / 1.0) ** 3 * x**-3.0)  # C f^-kappa, kappa = 3
    w = windows[2.0]
    np.testing.assert_allclose(
        win_ax.lines[1].get_ydata(), window_exponential(N, -1 / np.log(0.9), 2.0, C=1.0), atol=1e-9
    )
    np.testing.assert_array_equal(win_ax.lines[0].get_ydata(), w.window())
    assert law_ax.get_xlabel() == r"envelope $f(\ell)$" and win_ax.get_xlabel() == "samples N"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: plot_envelopes({}, NAMES, LAGS), "at least one"),
        (lambda: plot_windows({("gru", 0): _run(1.0)}, NAMES, 48, 1024), "without a name"),
        (lambda: plot_envelopes(RUNS, NAMES, LAGS[:3]), "shape of lags"),
        (lambda: plot_toy_laws({}, {}), "at least one alpha"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
