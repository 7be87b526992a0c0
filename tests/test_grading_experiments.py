"""The experiment parts graded by properties: their sources, their references and their fairness.

Exercises 1, Part 7 (``order_sweep``) is graded on sentences of a first-order Markov source whose floor (its
own perplexity) is computed in closed form; a correct answer must pass on any draw, and the reference must
agree with an independent implementation.
"""

from __future__ import annotations

import math

import grading_answers as answers
import numpy as np
import pytest

from seqlearn.data.markov import MarkovSource
from seqlearn.grading.ngram import CHECKS, FLOOR_SLACK, order_sweep, random_source


def test_the_floor_of_a_one_word_source_in_closed_form():
    # <s> -> the (certain), then the -> the or </s> with probability 1/2 each: 2 visits of "the" on average,
    # 3 predicted tokens per sentence carrying 2 ln 2 nats in all.
    source = MarkovSource.first_order(["the"], [1.0], [[0.5, 0.5]])
    assert source.perplexity_floor() == pytest.approx(2 ** (2 / 3), rel=1e-12)
    assert source.mean_length == pytest.approx(2.0, rel=1e-12)


def test_the_floor_is_the_sources_own_cross_entropy_on_a_long_sample():
    source = random_source(np.random.default_rng(3))
    W = len(source.words)
    start, transition = source.P[W, :W], source.P[:W]  # the row of <s>, then the words'
    index = {w: i for i, w in enumerate(source.words)}
    nats, tokens = 0.0, 0
    for sentence in source.sample(n_sentences=20000, rng=4):
        previous = None
        for token in [*sentence, "</s>"]:
            j = index.get(token, W)
            p = start[j] if previous is None else transition[previous, j]
            nats, tokens, previous = nats - math.log(p), tokens + 1, j
    assert math.exp(nats / tokens) == pytest.approx(source.perplexity_floor(), rel=0.01)


def test_sentences_are_drawn_from_the_sources_words_and_end():
    source = random_source(np.random.default_rng(0))
    sentences = source.sample(n_sentences=500, rng=1)
    assert all(sentence and set(sentence) <= set(source.words) for sentence in sentences)
    assert np.mean([len(s) for s in sentences]) == pytest.approx(10.0, rel=0.15)  # 1 / end words on average


def test_the_reference_equals_an_independent_sweep():
    for case in CHECKS["order_sweep"].cases():
        assert order_sweep(**case.inputs) == pytest.approx(answers.my_order_sweep(**case.inputs), rel=1e-12)


@pytest.mark.slow
def test_a_correct_sweep_keeps_every_property_on_many_draws():
    """Fairness: the reference's curve on 200 fresh draws, judged as a student's would be."""
    worst = math.inf
    for rng in np.random.default_rng(2026).spawn(200):
        case = CHECKS["order_sweep"].random_case(rng)
        ppl = order_sweep(**case.inputs)
        worst = min(worst, min(ppl) / case.planted)
        assert ppl[0] > ppl[1] and ppl[-1] > min(ppl)
    assert worst > FLOOR_SLACK + 0.1
