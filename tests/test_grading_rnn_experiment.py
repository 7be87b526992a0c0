"""Exercises 3, Part 6 (``radius_sweep``): the bounds it is graded by, its reference and its fairness.

The norms ||dh_T/dh_{T-k}||_2 of a network with W_hh = rho Q (Q orthogonal) are graded by properties: rho^k exactly
for linear units, and between rho^k prod min phi' and rho^k prod max phi' for tanh units (``sweep_bounds``).
"""

from __future__ import annotations

import grading_answers as answers
import numpy as np
import pytest

from seqlearn.grading.rnn import CHECKS, EXAMPLE_SWEEP, SWEEP_RTOL, radius_sweep, sweep_bounds


def test_linear_units_give_rho_to_the_k_exactly():
    inputs = {**EXAMPLE_SWEEP.inputs, "phi": "linear"}
    rho = np.array(inputs["radii"])[:, None]
    expected = rho ** np.arange(inputs["K"] + 1)
    assert radius_sweep(**inputs) == pytest.approx(expected, rel=1e-12)
    lower, upper = sweep_bounds(**inputs)
    assert lower == pytest.approx(expected, rel=1e-12) and upper == pytest.approx(expected, rel=1e-12)


def test_the_worked_example_quoted_in_the_notebook():
    got = radius_sweep(**EXAMPLE_SWEEP.inputs)
    quoted = [
        [1.0, 0.3321, 0.0964, 0.0262, 0.0103],
        [1.0, 0.9436, 0.6605, 0.3046, 0.2395],
        [1.0, 1.4947, 1.9305, 1.3843, 1.6330],
    ]
    assert np.round(got, 4) == pytest.approx(np.array(quoted), abs=1e-12)


def test_the_reference_equals_an_independent_sweep():
    for case in CHECKS["radius_sweep"].cases():
        assert radius_sweep(**case.inputs) == pytest.approx(answers.my_radius_sweep(**case.inputs), rel=1e-10)


def test_the_bounds_hold_for_products_of_random_slopes():
    """The sandwich on its own: products of diag(d_t) rho Q with random d_t in (0, 1], against the SVD."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        H, k, rho = int(rng.integers(2, 7)), int(rng.integers(1, 12)), float(rng.uniform(0.3, 1.5))
        Q, _ = np.linalg.qr(rng.normal(size=(H, H)))
        d = rng.uniform(0.05, 1.0, size=(k, H))
        P = np.eye(H)
        for d_t in d:
            P = P @ (d_t[:, None] * (rho * Q))
        s = np.linalg.svd(P, compute_uv=False)
        assert rho**k * np.prod(d.min(axis=1)) <= s[-1] * (1 + 1e-12)
        assert s[0] <= rho**k * np.prod(d.max(axis=1)) * (1 + 1e-12)


def test_a_correct_sweep_keeps_every_property_on_many_draws():
    """Fairness: the reference on 200 fresh draws, judged as a student's answer would be; the worst margin is
    rounding (about 1e-15 of the value), far inside the slack of SWEEP_RTOL."""
    check, worst = CHECKS["radius_sweep"], np.inf
    for rng in np.random.default_rng(2026).spawn(200):
        case = check.random_case(rng)
        got = radius_sweep(**case.inputs)
        lower, upper = sweep_bounds(**case.inputs)
        worst = min(worst, float(np.min(got / lower)) - 1, float(np.min(upper / got)) - 1)
        assert check.judge(None, case, got) is None
    assert worst > -SWEEP_RTOL / 100
