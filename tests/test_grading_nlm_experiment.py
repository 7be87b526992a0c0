"""Exercises 2, Part 6 (``overfit_curve``): the bounds it is graded by, its reference and its fairness.

The training and held-out perplexity of a log-linear window model trained by gradient descent are graded by
properties: |V| before the first step, never below the data's own conditional frequencies (``empirical_floor``),
a training curve that never rises, a held-out curve that ends above it, and weight decay ending higher.
"""

from __future__ import annotations

import math

import grading_answers as answers
import numpy as np
import pytest

from seqlearn.grading.nlm import CHECKS, EXAMPLE_CURVE, WEIGHT_DECAY, empirical_floor, overfit_curve
from seqlearn.nlm.basics import context_windows


def test_the_floor_of_a_deterministic_stream_is_one_and_of_a_coin_two():
    assert empirical_floor(np.array([[1], [3], [1], [3]]), np.array([3, 2, 3, 2])) == pytest.approx(1.0)
    assert empirical_floor(np.array([[1], [1], [1], [1]]), np.array([3, 4, 3, 4])) == pytest.approx(2.0)


def test_the_floor_by_counting_in_python():
    contexts, targets = context_windows(EXAMPLE_CURVE.inputs["train"], 3)
    pairs = list(zip(map(tuple, contexts.tolist()), targets.tolist()))
    nll = -sum(math.log(pairs.count(p) / [c for c, _ in pairs].count(p[0])) for p in pairs) / len(pairs)
    assert empirical_floor(contexts, targets) == pytest.approx(math.exp(nll), rel=1e-12)


def test_the_worked_example_quoted_in_the_notebook():
    train, test = overfit_curve(**EXAMPLE_CURVE.inputs)
    decayed = overfit_curve(**{**EXAMPLE_CURVE.inputs, "weight_decay": WEIGHT_DECAY})
    assert EXAMPLE_CURVE.inputs["vocab_size"] == 10
    assert train[0] == pytest.approx(10, rel=1e-12) and test[0] == pytest.approx(10, rel=1e-12)
    assert [round(v, 3) for v in (train[-1], test[-1], decayed[0][-1], decayed[1][-1])] == [3.475, 5.532, 5.071, 5.98]


def test_the_reference_equals_float64_autograd():
    for case in CHECKS["overfit_curve"].cases():
        for ours, theirs in zip(overfit_curve(**case.inputs), answers.my_overfit_curve(**case.inputs)):
            assert ours == pytest.approx(theirs, rel=1e-10)


@pytest.mark.slow
def test_a_correct_curve_keeps_every_property_on_many_draws():
    """Fairness: the reference on 200 fresh draws, judged as a student's answer would be (with its weight decay
    rerun); the margins of the two properties that are not bounds are measured."""
    check, held_out, decay = CHECKS["overfit_curve"], math.inf, math.inf
    for rng in np.random.default_rng(2026).spawn(200):
        case = check.random_case(rng)
        train, test = overfit_curve(**case.inputs)

        def run(other):
            return overfit_curve(**other.inputs), None

        assert check.judge(run, case, (train, test)) is None
        held_out = min(held_out, test[-1] / train[-1])
        decay = min(decay, overfit_curve(**{**case.inputs, "weight_decay": WEIGHT_DECAY})[0][-1] / train[-1])
    assert held_out > 1.01 and decay > 1.05
