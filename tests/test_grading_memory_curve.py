"""Exercises 4, Part 6 (``memory_curve``): the exact memory function the grader plants, and its fairness.

The memory function of a linear reservoir is computed in closed form (the leverages of the rows
:math:`(A^j b)^\top`); it is checked against the stationary covariance from the discrete Lyapunov equation,
against the cases with a known answer (no recurrence, a shift register) and against Jaeger's bound with
equality. A correct answer must pass on any draw: the reference is run through the judge on many.
"""

from __future__ import annotations

from typing import Any

import grading_answers as answers
import nbformat
import numpy as np
import pytest
from scipy.linalg import solve_discrete_lyapunov
from test_grading_stated_constants import ROOT

from seqlearn.grading.gated import (
    CURVE_TOLERANCE,
    EXAMPLE_CURVE,
    MEMORY_CURVE,
    linear_memory_function,
    memory_curve,
    short_run,
)
from seqlearn.grading.learnability import PlantedCase

CURVE = MEMORY_CURVE


def _random_system(rng: np.random.Generator, N: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    A = rng.normal(0.0, 1.0, size=(N, N))
    return radius * A / np.max(np.abs(np.linalg.eigvals(A))), rng.uniform(-1.0, 1.0, size=N)


@pytest.mark.parametrize("seed", range(5))
def test_the_memory_function_is_the_lyapunov_covariances_best_readout(seed):
    rng = np.random.default_rng(seed)
    A, b = _random_system(rng, int(rng.integers(2, 7)), float(rng.uniform(0.3, 0.9)))
    C = solve_discrete_lyapunov(A, np.outer(b, b))  # Cov(x_t) for unit input variance: C = A C A^T + b b^T
    covariances = [np.linalg.matrix_power(A, k) @ b for k in range(1, 11)]  # Cov(x_t, u_{t-k})
    expected = [c @ np.linalg.solve(C, c) for c in covariances]
    assert linear_memory_function(A, b, 10) == pytest.approx(expected, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("a", [0.2, 0.6, 1.0])
def test_without_recurrence_the_memory_is_one_moving_average(a):
    """W = 0: x_t = a w_in s_t with s_t the moving average, r^2_k = (1 - (1 - a)^2) (1 - a)^(2k)."""
    A, b = (1 - a) * np.eye(4), a * np.array([0.5, -1.0, 0.25, 0.75])
    k = np.arange(1, 13)
    assert linear_memory_function(A, b, 12) == pytest.approx((1 - (1 - a) ** 2) * (1 - a) ** (2 * k), abs=1e-12)


def test_a_shift_register_remembers_exactly_n_inputs():
    N = 5
    shift, e_1 = np.eye(N, k=-1), np.eye(N)[0]  # x_t = (u_t, u_{t-1}, ..., u_{t-N+1})
    assert linear_memory_function(shift, e_1, 8, first=0) == pytest.approx([1.0] * N + [0.0] * 3, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_memory_of_all_delays_reaches_jaegers_bound(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(2, 7))
    A, b = _random_system(rng, N, float(rng.uniform(0.3, 0.9)))
    assert linear_memory_function(A, b, 400, first=0).sum() == pytest.approx(N, abs=1e-6)


def test_the_reference_equals_an_independent_curve():
    for case in CURVE.cases():
        mc, r2 = memory_curve(**case.inputs)
        mc_, r2_ = answers.my_memory_curve(**case.inputs)
        assert r2 == pytest.approx(r2_, rel=1e-6, abs=1e-9) and mc == pytest.approx(mc_, rel=1e-6, abs=1e-9)


def test_the_worked_example_gives_the_numbers_the_notebook_states():
    notebook = nbformat.read(ROOT / "solutions" / "04_lstm_gru_esn" / "04_lstm_gru_esn.ipynb", as_version=4)
    (setup,) = [c.source for c in notebook.cells if c.id == "setup"]
    namespace: dict[str, Any] = {}
    exec(setup, namespace)  # the notebook's own locked setup cell
    example = namespace["curve_example"]
    assert sorted(example) == sorted(EXAMPLE_CURVE.inputs)
    for key, value in EXAMPLE_CURVE.inputs.items():
        assert np.array_equal(example[key], value), key
    mc, r2 = memory_curve(**EXAMPLE_CURVE.inputs)
    assert mc == pytest.approx([0.170, 3.015, 3.017], abs=6e-4)
    assert r2[1] == pytest.approx([0.976, 0.752, 0.449, 0.439, 0.281, 0.099, 0.019, 0.000], abs=6e-4)
    assert EXAMPLE_CURVE.planted.sum(axis=1) == pytest.approx([0.160, 3.000, 2.999], abs=6e-4)
    assert EXAMPLE_CURVE.planted[0] == pytest.approx(0.84 * 0.16 ** np.arange(1, 9), abs=1e-12)


def test_random_cases_are_well_posed_and_varied():
    cases = [CURVE.random_case(rng) for rng in np.random.default_rng(1).spawn(40)]
    assert all(isinstance(case, PlantedCase) for case in cases)
    sizes = {len(case.inputs["w_in"]) for case in cases}
    leaks = {case.inputs["leak_rate"] == 1.0 for case in cases}
    assert sizes == set(range(3, 7)) and leaks == {True, False}
    for case in cases:
        assert isinstance(case, PlantedCase)
        assert case.inputs["washout"] >= 3 * len(case.inputs["w_in"]) >= case.inputs["k_max"]
        assert np.all((case.planted >= 0) & (case.planted <= 1 + 1e-9))


@pytest.mark.slow
def test_a_correct_curve_keeps_every_property_on_many_draws():
    """Fairness: the reference on 200 fresh draws, judged as a student's answer would be, with a margin."""
    run = lambda other: (memory_curve(**other.inputs), None)  # noqa: E731
    mistakes: Any = answers.MISTAKES
    in_sample = mistakes["memory_curve"]["in-sample"][0]
    worst, short_mc, caught = 0.0, 0.0, np.inf
    for rng in np.random.default_rng(2026).spawn(200):
        case = CURVE.random_case(rng)
        assert isinstance(case, PlantedCase) and CURVE.judge is not None
        got = memory_curve(**case.inputs)
        assert CURVE.judge(run, case, got) is None
        N = len(case.inputs["w_in"])
        worst = max(worst, float(np.abs(got[1] - case.planted).max()))
        short = short_run(case.inputs)
        short_mc = max(short_mc, float(memory_curve(**short.inputs)[0].max()) / N)
        caught = min(caught, float(in_sample(**short.inputs)[0].max()) / N)
    assert worst < CURVE_TOLERANCE - 0.02  # the largest error was 0.081 here, 0.060 in 300 other draws
    assert short_mc < 0.95 and caught > 1.2  # a correct short run stays below N, an in-sample one breaks it
