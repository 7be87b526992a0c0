"""The experiments of Exercises 5 and 6, graded by properties with closed forms, and Part 6 of Exercises 5 given
Part 1's result.

Exercises 5, Part 8 (``spread_exponent``): the exponent of the spread of means of S-alpha-S noise must lie within
``EXPONENT_TOLERANCE`` of ``1/alpha - 1``. Exercises 6, Part 6 (``invariant_drift``): gradient descent on a readout
and an input, whose I1 shrinks by ``1 - 2 eta^2 L`` per step, so that its drift halves with the rate. A correct
answer must pass every draw (the fairness tests run an independent answer through the grader on 200 or more hidden
draws and report the worst margin); the references must agree with independent computations.
"""

from __future__ import annotations

import re
from pathlib import Path

import grading_answers as answers
import nbformat
import numpy as np
import pytest
import torch

from seqlearn.grading import CheckFailure
from seqlearn.grading.learnability import (
    CHECKS,
    EXAMPLE_SPREAD,
    EXPONENT_TOLERANCE,
    check_spread_exponent,
    check_window_closed_form,
    spread_exponent,
)
from seqlearn.grading.learnability_properties import SPREAD_SCALE, SPREAD_SHIFT, _spread_case
from seqlearn.grading.lowrank import CHECKS as LOWRANK_CHECKS
from seqlearn.grading.lowrank import DRIFT_RATIO_BAND, EXAMPLE_DRIFT, invariant_drift
from seqlearn.grading.lowrank_experiment import _drift_case
from seqlearn.learnability.stable import sample_stable

ROOT = Path(__file__).resolve().parents[1]


def _text(folder: str, assignment: str, grade_id: str) -> str:
    notebook = nbformat.read(ROOT / folder / assignment / f"{assignment}.ipynb", as_version=4)
    (cell,) = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return " ".join(cell.source.split())


# ============================================================================= Exercises 5, Part 6: kappa given


def _inverted_kappa(alpha):
    return (alpha - 1.0) / alpha  # Part 1 wrong


def _closed_form_on_part_1(N, envelope, param, alpha, kappa=None):
    """The notebook's answer to Part 6, right, on top of a wrong Part 1."""
    if kappa is None:
        kappa = _inverted_kappa(alpha)
    return answers._my_closed_form(N, envelope, param, alpha, rate=1.0 / kappa)


@pytest.mark.parametrize("hidden", [False, True])
def test_a_wrong_part_1_costs_nothing_in_part_6(hidden, capsys):
    check_window_closed_form(_closed_form_on_part_1, hidden=hidden)
    assert "passed" in capsys.readouterr().out


def test_part_6_is_given_the_reference_kappa_and_nan_where_alpha_is_invalid():
    check = CHECKS["window_closed_form"]
    given = [check._given(case).inputs["kappa"] for case in check.cases()]
    alphas = [case.inputs["alpha"] for case in check.cases()]
    for alpha, kappa in zip(alphas, given):
        assert np.isnan(kappa) if not 1 < alpha <= 2 else kappa == pytest.approx(alpha / (alpha - 1), rel=1e-15)


# ============================================================================= Exercises 5, Part 8: spread_exponent


def test_the_reference_equals_an_independent_measurement():
    for case in CHECKS["spread_exponent"].cases()[:2]:
        assert spread_exponent(**case.inputs) == pytest.approx(answers.my_spread_exponent(**case.inputs), rel=1e-9)


def test_the_exponent_of_gaussian_noise_is_the_central_limit_rate():
    x = sample_stable(2.0, 400 * 2048, rng=np.random.default_rng(0)).reshape(400, 2048)
    assert spread_exponent(x, 2 ** np.arange(2, 12)) == pytest.approx(-0.5, abs=0.03)


def test_the_exponent_of_the_worked_example_is_near_minus_a_third():
    assert spread_exponent(**EXAMPLE_SPREAD.inputs) == pytest.approx(-1 / 3, abs=0.05)


def test_cauchy_means_do_not_concentrate():
    # alpha = 1: the mean of N Cauchy samples is a Cauchy of the same scale, the exponent is 0
    x = np.tan(np.random.default_rng(1).uniform(-np.pi / 2, np.pi / 2, (300, 1024)))
    assert spread_exponent(x, 2 ** np.arange(2, 11)) == pytest.approx(0.0, abs=0.05)


def test_the_central_limit_rate_assumed_fails():
    with pytest.raises(CheckFailure, match=r"more than 0\.12 from"):
        check_spread_exponent(lambda x, sizes: -0.5)


def test_a_scale_dependent_exponent_fails_the_invariance():
    def scale_dependent(x, sizes):
        return answers.my_spread_exponent(x, sizes) + 1e-3 * np.tanh(float(np.abs(x).mean()))

    with pytest.raises(CheckFailure, match=r"times 0\.01 plus 4"):
        check_spread_exponent(scale_dependent)


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
def test_exercises_5_states_the_rules_the_grader_uses(folder):
    text = _text(folder, "05_learnability", "spread_exponent_text")
    assert [float(s) for s in re.findall(r"within (\d+(?:\.\d+)?) of \$1/\\alpha - 1\$", text)] == [EXPONENT_TOLERANCE]
    assert f"`{SPREAD_SHIFT:g} + {SPREAD_SCALE:g} * x`" in text


@pytest.mark.slow
def test_a_correct_measurement_passes_many_hidden_draws():
    """Fairness: 200 fresh draws through the grader; the worst margin of the reference to the tolerance."""
    check = CHECKS["spread_exponent"]
    for entropy in range(100):
        check.check(answers.my_spread_exponent, hidden=True, entropy=entropy)
    errors = []
    for rng in np.random.default_rng(2026).spawn(60):
        case = _spread_case(rng)
        errors.append(abs(spread_exponent(**case.inputs) - (1 / case.planted - 1)))
    assert EXPONENT_TOLERANCE - max(errors) > 0.02


# ============================================================================= Exercises 6, Part 6: invariant_drift


def _autograd_descent(z, m, y, eta, steps):
    """Gradient descent with torch's float64 autograd: theta <- theta - N eta dL/dtheta."""
    z, m = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (z, m))
    N, loss, I1 = z.numel(), [], []
    for _ in range(steps + 1):
        L = 0.5 * (z @ m / N - y) ** 2
        loss.append(float(L))
        I1.append(float((z @ z - m @ m) / N))
        g_z, g_m = torch.autograd.grad(L, (z, m))
        with torch.no_grad():
            z, m = (z - N * eta * g_z).requires_grad_(), (m - N * eta * g_m).requires_grad_()
    return np.array(loss), np.array(I1)


def test_the_reference_is_gradient_descent_by_autograd():
    for case in [EXAMPLE_DRIFT, *(_drift_case(rng).inputs for rng in np.random.default_rng(0).spawn(3))]:
        got = invariant_drift(**case)
        loss, I1 = _autograd_descent(**case)
        np.testing.assert_allclose(got["loss"], loss, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(got["I1"], I1, rtol=1e-9, atol=1e-15)


def test_the_worked_example_by_hand():
    got = invariant_drift(**EXAMPLE_DRIFT)
    assert got["loss"][:2] == pytest.approx([0.5, 0.5 * 0.8725**2], rel=1e-12)
    assert got["I1"][:2] == pytest.approx([0.5, 0.5 * (1 - 2 * 0.05**2 * 0.5)], rel=1e-12)


def test_the_drift_is_first_order_in_the_rate():
    drifts = []
    for k in range(4):
        run = invariant_drift(**{**EXAMPLE_DRIFT, "eta": 0.05 / 2**k, "steps": 60 * 2**k})
        drifts.append(run["I1"][0] - run["I1"][-1])
    ratios = np.array(drifts[:-1]) / np.array(drifts[1:])
    assert np.all(np.diff(np.abs(ratios - 2)) < 0) and abs(ratios[-1] - 2) < 0.03  # -> 2 as eta -> 0


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
def test_exercises_6_states_the_band_the_grader_uses(folder):
    text = _text(folder, "06_lowrank", "invariant_drift_text")
    assert [float(s) for s in re.findall(r"lies within (\d+(?:\.\d+)?) of 2", text)] == [DRIFT_RATIO_BAND]


def test_a_correct_drift_passes_many_hidden_draws():
    """Fairness: 200 fresh draws through the grader, and the reference's worst margin to the band."""
    for entropy in range(40):
        LOWRANK_CHECKS["invariant_drift"].check(answers.my_invariant_drift, hidden=True, entropy=entropy)
    margins = []
    for rng in np.random.default_rng(2026).spawn(200):
        case = _drift_case(rng).inputs
        full, half = (
            invariant_drift(**case),
            invariant_drift(**{**case, "eta": case["eta"] / 2, "steps": 2 * case["steps"]}),
        )
        ratio = abs(full["I1"][-1] - full["I1"][0]) / abs(half["I1"][-1] - half["I1"][0])
        margins.append(DRIFT_RATIO_BAND - abs(ratio - 2))
    assert min(margins) > 0.3
