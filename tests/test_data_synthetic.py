"""seqlearn.data.synthetic: the toy English grammar against a hand-written lexicon and parse."""

import time
from collections import Counter

import numpy as np
import pytest

from seqlearn.data import synthetic
from seqlearn.data.synthetic import (
    AgreementExample,
    ToyEnglish,
    agreement_accuracy,
    agreement_examples,
)

# ----------------------------------------------------------------------------- Markov
# ------------------------------------------------------------------------ toy English

NOUNS = {
    "cat": "sg",
    "dog": "sg",
    "bird": "sg",
    "boy": "sg",
    "girl": "sg",
    "teacher": "sg",
    "farmer": "sg",
    "doctor": "sg",
    "park": "sg",
    "house": "sg",
    "garden": "sg",
    "river": "sg",
    "table": "sg",
    "tree": "sg",
}
NOUNS.update({n + "s": "pl" for n in list(NOUNS)})
NOUNS.update(dict.fromkeys(["mary", "john", "anna", "peter", "susan", "tom"], "sg"))
VERBS = {"is": ("sg", "are"), "are": ("pl", "is"), "was": ("sg", "were"), "were": ("pl", "was")}
for stem in ["sleep", "run", "eat", "wait", "sing", "smile", "walk", "like", "see", "chase", "follow", "know", "help"]:
    VERBS[stem + "s"] = ("sg", stem)
    VERBS[stem] = ("pl", stem + "s")
OTHER = {
    "the",
    "a",
    "this",
    "these",
    "some",
    "big",
    "small",
    "tall",
    "young",
    "black",
    "white",
    "hungry",
    "tired",
    "happy",
    "sad",
    "angry",
    "sleepy",
    "near",
    "behind",
    "beside",
    "with",
    "under",
    "which",
    "that",
    "who",
    "saw",
    "liked",
    "chased",
    "followed",
    "helped",
    "met",
    "called",
    "yesterday",
    "today",
    "again",
    "recently",
    "often",
    "never",
    "always",
    "also",
    "still",
    "usually",
}
LEXICON = set(NOUNS) | set(VERBS) | OTHER


def parse(tokens):
    """Head = first noun or name; main verb = first number-marked verb."""
    head = next(i for i, t in enumerate(tokens) if t in NOUNS)
    verb = next(i for i, t in enumerate(tokens) if t in VERBS)
    between = tokens[head + 1 : verb]
    attractors = sum(1 for t in between if t in NOUNS and NOUNS[t] != NOUNS[tokens[head]])
    return head, verb, attractors


def test_vocabulary_is_the_closed_small_lexicon():
    assert set(ToyEnglish.vocabulary()) == LEXICON
    assert len(LEXICON) < 120
    sentences = ToyEnglish().sample(n_sentences=5000, rng=0)
    assert {t for s in sentences for t in s} <= LEXICON
    assert all(t == t.lower() and " " not in t for s in sentences[:100] for t in s)


def test_every_sentence_agrees_and_its_annotation_is_right():
    annotated = ToyEnglish(max_distance=15).sample_annotated(n_sentences=20_000, rng=1)
    for s in annotated:
        head, verb, attractors = parse(s.tokens)
        assert (s.head, s.verb, s.n_attractors) == (head, verb, attractors), s
        assert VERBS[s.tokens[verb]][0] == NOUNS[s.tokens[head]] == s.number, s
        assert s.distance == verb - head - 1 <= 15
    distances = Counter(s.distance for s in annotated)
    assert set(distances) == set(range(16))
    assert distances[0] > distances[3] > distances[8] > distances[14]
    assert 0.2 < np.mean([s.n_attractors > 0 for s in annotated]) < 0.8


def test_sample_amounts_and_max_distance():
    grammar = ToyEnglish()
    sentences = grammar.sample(n_tokens=3000, rng=0)
    total = sum(map(len, sentences))
    assert total >= 3000 and total - len(sentences[-1]) < 3000
    assert len(grammar.sample(n_sentences=17, rng=0)) == 17
    assert all(parse(s)[1] == parse(s)[0] + 1 for s in grammar.sample(n_sentences=500, max_distance=0, rng=0))


def test_agreement_examples_have_exact_distances():
    examples = agreement_examples(distances=range(0, 13), n_per_distance=41, seed=0)
    assert Counter(e.distance for e in examples) == dict.fromkeys(range(13), 41)
    for e in examples:
        tokens = list(e.prefix) + [e.correct] + list(e.suffix)
        head, verb, attractors = parse(tokens)
        assert verb == len(e.prefix)
        assert verb - head - 1 == e.distance
        assert attractors == e.n_attractors
        assert VERBS[e.correct][0] == NOUNS[tokens[head]] == e.number
        assert VERBS[e.correct][1] == e.wrong
    for d in range(13):
        numbers = Counter(e.number for e in examples if e.distance == d)
        assert numbers == {"sg": 21, "pl": 20}
    assert any(e.n_attractors > 0 for e in examples if e.distance >= 3)


def test_toy_english_determinism():
    g = ToyEnglish()
    assert g.sample(n_sentences=300, rng=5) == g.sample(n_sentences=300, rng=np.random.default_rng(5))
    assert g.sample(n_sentences=300, rng=5) != g.sample(n_sentences=300, rng=6)
    assert agreement_examples(range(5), 10, seed=2) == agreement_examples(range(5), 10, seed=2)
    assert agreement_examples(range(5), 10, seed=2) != agreement_examples(range(5), 10, seed=3)


def oracle(prefix, candidates):
    number = NOUNS[prefix[parse(prefix + ["is"])[0]]]
    return [0.0 if VERBS[c][0] == number else -1.0 for c in candidates]


def nearest_noun(prefix, candidates):
    number = next(NOUNS[t] for t in reversed(prefix) if t in NOUNS)
    return [0.0 if VERBS[c][0] == number else -1.0 for c in candidates]


def test_agreement_accuracy_scores_oracles_and_heuristics():
    examples = agreement_examples(range(8), 60, seed=1)
    assert agreement_accuracy(oracle, examples) == dict.fromkeys(range(8), 1.0)
    assert agreement_accuracy(lambda p, c: -np.array(oracle(p, c)), examples) == dict.fromkeys(range(8), 0.0)
    assert agreement_accuracy(lambda p, c: [-1.0, -1.0], examples) == dict.fromkeys(range(8), 0.5)
    right = {e: nearest_noun(list(e.prefix), [e.correct, e.wrong])[0] == 0.0 for e in examples}
    for by in ("distance", "n_attractors", "number"):
        groups = sorted({getattr(e, by) for e in examples})
        expected = {g: np.mean([right[e] for e in examples if getattr(e, by) == g]) for g in groups}
        result = agreement_accuracy(nearest_noun, examples, by=by)
        assert list(result) == groups
        assert result == pytest.approx(expected)
    by_attractors = agreement_accuracy(nearest_noun, examples, by="n_attractors")
    assert by_attractors[0] == 1.0 and by_attractors[1] < 0.8


def test_toy_english_bad_input():
    g = ToyEnglish()
    with pytest.raises(ValueError, match="n_sentences"):
        g.sample(n_sentences=0)
    with pytest.raises(ValueError, match="exactly one"):
        g.sample()
    with pytest.raises(ValueError, match="max_distance"):
        g.sample(n_sentences=5, max_distance=-1)
    with pytest.raises(ValueError, match="attractor_rate"):
        ToyEnglish(attractor_rate=1.5)
    with pytest.raises(ValueError, match="distance_scale"):
        ToyEnglish(distance_scale=float("nan"))
    with pytest.raises(TypeError, match="distances"):
        agreement_examples(distances=5)
    with pytest.raises(ValueError, match="distance"):
        agreement_examples(distances=[3, -1])
    with pytest.raises(ValueError, match="n_per_distance"):
        agreement_examples(n_per_distance=0)
    with pytest.raises(TypeError, match="seed"):
        agreement_examples(seed=1.5)
    examples = agreement_examples(range(2), 2)
    with pytest.raises(ValueError, match="2 log-probabilities"):
        agreement_accuracy(lambda p, c: [0.0, 1.0, 2.0], examples)
    with pytest.raises(ValueError, match="NaN"):
        agreement_accuracy(lambda p, c: [float("nan"), 0.0], examples)
    with pytest.raises(ValueError, match="by"):
        agreement_accuracy(oracle, examples, by="length")
    with pytest.raises(TypeError, match="AgreementExample"):
        agreement_accuracy(oracle, [("the", "cat")])


def test_toy_english_one_million_tokens_generation_time():
    start = time.perf_counter()
    sentences = ToyEnglish().sample(n_tokens=1_000_000, rng=0)
    print(
        f"\nToyEnglish: {sum(map(len, sentences))} tokens, {len(sentences)} sentences "
        f"in {time.perf_counter() - start:.2f} s"
    )


def test_module_exports():
    for name in synthetic.__all__:
        assert hasattr(synthetic, name)
    assert isinstance(agreement_examples(range(1), 1)[0], AgreementExample)
