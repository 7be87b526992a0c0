"""seqlearn.data.agreement: long subject-verb distances, agreement right by construction, seeded, checked."""

from collections import Counter

import numpy as np
import pytest

from seqlearn.data.agreement import LongAgreement, binned_accuracy
from seqlearn.data.synthetic import ANIMATE_NOUNS, NAMES, ToyEnglish

SINGULAR = {sg for sg, _ in ANIMATE_NOUNS} | set(NAMES)
PLURAL = {pl for _, pl in ANIMATE_NOUNS}


def test_distance_probs_are_the_mixture_of_short_and_uniform():
    task = LongAgreement(max_distance=20, short_fraction=0.3, distance_scale=2.0, short_max=5)
    d = np.arange(21)
    short = np.where(d <= 5, np.exp(-d / 2.0), 0.0)
    np.testing.assert_allclose(task.distance_probs(), 0.3 * short / short.sum() + 0.7 / 21, rtol=1e-12)
    assert task.distance_probs().sum() == pytest.approx(1.0)


def test_distances_are_the_ones_drawn_and_the_subject_sits_where_they_say():
    task = LongAgreement(max_distance=60, short_fraction=0.0)
    examples = task.sample_examples(300, rng=1)
    counts = Counter(ex.distance for ex in examples)
    assert len(examples) == 300 and set(counts) <= set(range(61)) and max(counts) >= 50
    for ex in examples:
        head = ex.prefix[len(ex.prefix) - ex.distance - 1]  # the subject's head noun: distance tokens before the verb
        assert head in (SINGULAR if ex.number == "sg" else PLURAL), (head, ex.number)


def test_the_verb_agrees_with_its_subject_by_construction():
    forms = ToyEnglish.verb_forms()
    for ex in LongAgreement(max_distance=40, short_fraction=0.5).sample_examples(200, rng=2):
        singular, plural = forms[ex.correct]
        assert (ex.correct, ex.wrong) == ((singular, plural) if ex.number == "sg" else (plural, singular))


def test_a_distance_drawn_many_times_has_as_many_singular_as_plural_subjects():
    examples = LongAgreement(max_distance=3, short_fraction=0.0).sample_examples(400, rng=0)
    for d in range(4):
        numbers = Counter(ex.number for ex in examples if ex.distance == d)
        assert abs(numbers["sg"] - numbers["pl"]) <= 1


def test_sentences_are_the_examples_with_their_verb_and_the_same_seed_gives_the_same_text():
    task = LongAgreement(max_distance=30)
    examples = task.sample_examples(50, rng=7)
    assert task.sample(50, rng=7) == [[*ex.prefix, ex.correct, *ex.suffix] for ex in examples]
    assert task.sample(50, rng=7) != task.sample(50, rng=8)


def test_evaluation_examples_sit_exactly_at_the_distances_asked_for():
    examples = LongAgreement().agreement_examples([10, 75], n_per_distance=6, seed=3)
    assert Counter(ex.distance for ex in examples) == {10: 6, 75: 6}


def test_binned_accuracy_weights_each_distance_by_its_examples():
    examples = LongAgreement(max_distance=30).agreement_examples([3, 7, 12], n_per_distance=2) + LongAgreement(
        max_distance=30
    ).agreement_examples([7], n_per_distance=2, seed=1)
    accuracy = {3: 1.0, 7: 0.5, 12: 0.25}
    assert binned_accuracy(accuracy, examples, width=10) == {0: pytest.approx((2 * 1.0 + 4 * 0.5) / 6), 10: 0.25}
    assert binned_accuracy(accuracy, examples, width=1) == accuracy


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="max_distance"):
        LongAgreement(max_distance=-1)
    with pytest.raises(ValueError, match="short_fraction"):
        LongAgreement(short_fraction=1.5)
    with pytest.raises(ValueError, match="short_max"):
        LongAgreement(max_distance=10, short_max=11)
    with pytest.raises(ValueError, match="distance_scale"):
        LongAgreement(distance_scale=0.0)
    with pytest.raises(TypeError, match="n_sentences"):
        LongAgreement().sample(2.5)
    with pytest.raises(ValueError, match="n_sentences"):
        LongAgreement().sample(0)
    examples = LongAgreement().agreement_examples([2], n_per_distance=2)
    with pytest.raises(ValueError, match="the examples"):
        binned_accuracy({3: 1.0}, examples)
    with pytest.raises(ValueError, match="width"):
        binned_accuracy({2: 1.0}, examples, width=0)
    with pytest.raises(ValueError, match="empty"):
        binned_accuracy({}, [])
