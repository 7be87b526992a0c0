"""Synthetic corpora: the Markov source against independent computations, and the toy
English grammar against a hand-written lexicon and parse."""

import itertools
import math
import time
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from seqlearn.data import synthetic
from seqlearn.data.synthetic import (
    AgreementExample,
    MarkovSource,
    ToyEnglish,
    agreement_accuracy,
    agreement_examples,
)

# ----------------------------------------------------------------------------- Markov


def renewal_chain(source):
    """Independent construction: contexts as token tuples, ``</s>`` jumps back to the start."""
    V, k = source.vocab_size, source.order
    words = [f"w{r}" for r in range(V)]
    start = ("<s>",) * k
    contexts = [start]
    for n_pad in range(k - 1, -1, -1):  # reachable contexts: <s> only as a prefix
        contexts += [("<s>",) * n_pad + tail for tail in itertools.product(words, repeat=k - n_pad)]
    index = {c: i for i, c in enumerate(contexts)}
    R = np.zeros((len(contexts), len(contexts)))
    probs = np.array([source.next_token_probs(list(c)) for c in contexts])  # (C, V+1)
    for c, i in index.items():
        for r, w in enumerate(words):
            nxt = (c + (w,))[1:] if k else ()
            R[i, index[nxt]] += probs[i, r]
        R[i, index[start]] += probs[i, V]
    return contexts, probs, R


def stationary_by_eig(R):
    vals, vecs = np.linalg.eig(R.T)
    pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    return pi / pi.sum()


def entropy(p):
    p = np.asarray(p)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


@pytest.mark.parametrize("order", [1, 2])
def test_entropy_rate_matches_eigenvector_of_the_renewal_chain(order):
    source = MarkovSource(3, order, context_strength=1.5, mean_length=4, seed=3)
    contexts, probs, R = renewal_chain(source)
    np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-12)
    pi = stationary_by_eig(R)
    expected = sum(pi[i] * entropy(probs[i]) for i in range(len(contexts)))
    assert source.entropy_rate() == pytest.approx(expected, rel=1e-10)
    assert source.perplexity_floor() == pytest.approx(math.exp(expected), rel=1e-10)


@pytest.mark.parametrize("a, L", [(1.0, 20.0), (1.7, 5.0), (0.0, 9.0)])
def test_order_0_entropy_has_the_closed_form(a, L):
    V = 50
    q = 1 / (L + 1)
    zipf = np.arange(1, V + 1, dtype=float) ** -a
    p = np.append((1 - q) * zipf / zipf.sum(), q)
    source = MarkovSource(V, 0, zipf_exponent=a, context_strength=2.0, mean_length=L, seed=1)
    assert source.entropy_rate() == pytest.approx(entropy(p), rel=1e-12)
    np.testing.assert_allclose(source.next_token_probs([]), p, rtol=1e-12)


def test_empirical_cross_entropy_of_a_long_sample_matches_entropy_rate():
    source = MarkovSource(100, 2, context_strength=1.0, mean_length=15, seed=5)
    sentences = source.sample(n_tokens=300_000, rng=11)
    logp = source.token_logprobs(sentences)
    assert logp.size == sum(len(s) + 1 for s in sentences)
    assert -logp.mean() == pytest.approx(source.entropy_rate(), rel=0.01)


def test_logprob_equals_the_product_of_next_token_probabilities():
    source = MarkovSource(7, 2, seed=2)
    sentences = source.sample(n_sentences=60, rng=0) + [[], ["w3"], ["w0", "w6", "w6", "w1"]]
    by_hand = []
    for s in sentences:
        total, history = 0.0, []
        for token in s + ["</s>"]:
            total += math.log(source.next_token_probs(history)[source.outcomes.index(token)])
            history.append(token)
        by_hand.append(total)
    np.testing.assert_allclose(source.logprobs(sentences), by_hand, rtol=1e-12)
    assert source.logprob(sentences[-1]) == pytest.approx(by_hand[-1], rel=1e-12)
    assert source.sentence_logprob(sentences[0]) == pytest.approx(by_hand[0], rel=1e-12)


def chi_square_pvalue(source, sentences):
    """Pearson chi-square of the observed transitions against ``next_token_probs``."""
    counts = Counter()
    k = source.order
    for s in sentences:
        padded = ["<s>"] * k + s + ["</s>"]
        for t in range(k, len(padded)):
            counts[(tuple(padded[t - k : t]), padded[t])] += 1
    stat, dof = 0.0, 0
    for context in {c for c, _ in counts}:
        observed = np.array([counts[(context, o)] for o in source.outcomes], dtype=float)
        expected = observed.sum() * source.next_token_probs(list(context))
        stat += ((observed - expected) ** 2 / expected).sum()
        dof += len(observed) - 1
    return stats.chi2.sf(stat, dof)


@pytest.mark.parametrize("order", [1, 2])
def test_sampled_transition_frequencies_match_the_table(order):
    source = MarkovSource(4, order, context_strength=1.5, mean_length=6, seed=7)
    sentences = source.sample(n_tokens=150_000, rng=1)
    assert chi_square_pvalue(source, sentences) > 1e-3


def test_a_wrong_table_fails_the_chi_square_check():
    source = MarkovSource(4, 1, context_strength=1.5, mean_length=6, seed=7)
    other = MarkovSource(4, 1, context_strength=1.5, mean_length=6, seed=8)
    assert chi_square_pvalue(source, other.sample(n_tokens=150_000, rng=1)) < 1e-6


def test_sentence_lengths_are_geometric_with_the_requested_mean():
    source = MarkovSource(20, 1, mean_length=12, seed=0)
    assert source.mean_sentence_length() == pytest.approx(12, rel=1e-10)
    lengths = np.array([len(s) for s in source.sample(n_sentences=40_000, rng=2)])
    assert lengths.mean() == pytest.approx(12, rel=0.03)
    assert (lengths == 0).mean() == pytest.approx(1 / 13, abs=0.01)


@pytest.mark.parametrize("a", [1.0, 1.4])
def test_word_frequencies_are_zipf_like(a):
    source = MarkovSource(1000, 1, zipf_exponent=a, context_strength=1.0, seed=4)
    counts = Counter(w for s in source.sample(n_tokens=400_000, rng=3) for w in s)
    freq = np.sort(np.array(list(counts.values()), dtype=float))[::-1][:200]
    ranks = np.arange(1, freq.size + 1)
    slope = np.polyfit(np.log(ranks), np.log(freq), 1)[0]
    assert slope == pytest.approx(-a, abs=0.15)
    top = [w for w, _ in counts.most_common(5)]
    assert "w0" in top


def test_each_order_adds_information_up_to_the_true_order():
    source = MarkovSource(30, 2, context_strength=1.5, seed=6)
    A = source.n_outcomes
    joint = (source.stationary_distribution()[:, None] * source.P).reshape(A, A, A)  # (c1, c2, o)
    h_unigram = entropy(joint.sum(axis=(0, 1)))
    h_bigram = entropy(joint.sum(axis=0)) - entropy(joint.sum(axis=(0, 2)))
    h_trigram = entropy(joint) - entropy(joint.sum(axis=2))
    assert h_unigram > h_bigram + 0.05 > h_trigram + 0.1
    assert h_trigram == pytest.approx(source.entropy_rate(), rel=1e-9)


def test_direct_and_iterative_solvers_agree():
    source = MarkovSource(12, 2, context_strength=2.0, mean_length=8, seed=9)
    np.testing.assert_allclose(
        source.expected_visits("direct"), source.expected_visits("iterative"), rtol=1e-9, atol=1e-12
    )
    assert source.entropy_rate("direct") == pytest.approx(source.entropy_rate("iterative"), rel=1e-11)
    n = source.expected_visits()
    assert n[source.start_context] == pytest.approx(1.0)  # a sentence starts there once, never returns


def test_seed_determinism():
    a, b, c = MarkovSource(50, 2, seed=1), MarkovSource(50, 2, seed=1), MarkovSource(50, 2, seed=2)
    assert np.array_equal(a.P, b.P) and not np.array_equal(a.P, c.P)
    assert a.sample(n_tokens=5000, rng=3) == b.sample(n_tokens=5000, rng=np.random.default_rng(3))
    assert a.sample(n_tokens=5000, rng=3) != a.sample(n_tokens=5000, rng=4)


def test_sample_sizes():
    source = MarkovSource(10, 1, seed=0)
    assert len(source.sample(n_sentences=123, rng=0)) == 123
    sentences = source.sample(n_tokens=10_000, rng=0)
    total = sum(map(len, sentences))
    assert total >= 10_000 and total - len(sentences[-1]) < 10_000
    assert {w for s in sentences for w in s} <= set(source.words)


def test_one_million_tokens_generation_time():
    source = MarkovSource(2000, 1, seed=0)
    start = time.perf_counter()
    sentences = source.sample(n_tokens=1_000_000, rng=0)
    print(f"\nMarkovSource(2000, 1): {sum(map(len, sentences))} tokens in {time.perf_counter() - start:.2f} s")


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(vocab_size=0, order=1), ValueError),
        (dict(vocab_size=10, order=-1), ValueError),
        (dict(vocab_size=10.0, order=1), TypeError),
        (dict(vocab_size=10, order=True), TypeError),
        (dict(vocab_size=10, order=1, zipf_exponent=float("nan")), ValueError),
        (dict(vocab_size=10, order=1, context_strength=float("inf")), ValueError),
        (dict(vocab_size=10, order=1, context_strength=-1.0), ValueError),
        (dict(vocab_size=10, order=1, mean_length=0), ValueError),
        (dict(vocab_size=10, order=1, zipf_exponent="1"), TypeError),
        (dict(vocab_size=10, order=1, seed=-1), ValueError),
        (dict(vocab_size=5000, order=2), ValueError),
    ],
)
def test_bad_constructor_arguments(kwargs, error):
    with pytest.raises(error, match=r"vocab_size|order|zipf_exponent|context_strength|mean_length|seed"):
        MarkovSource(**kwargs)


def test_bad_sample_and_scoring_arguments():
    source = MarkovSource(5, 1, seed=0)
    with pytest.raises(ValueError, match="n_tokens"):
        source.sample(n_tokens=0, rng=0)
    with pytest.raises(ValueError, match="n_sentences"):
        source.sample(n_sentences=-3, rng=0)
    with pytest.raises(ValueError, match="exactly one"):
        source.sample(rng=0)
    with pytest.raises(ValueError, match="exactly one"):
        source.sample(n_tokens=10, n_sentences=10, rng=0)
    with pytest.raises(TypeError, match="rng"):
        source.sample(n_tokens=10, rng="seed")
    with pytest.raises(ValueError, match="not a word"):
        source.logprob(["w0", "cat"])
    with pytest.raises(TypeError, match="str"):
        source.logprob("w0 w1")
    with pytest.raises(ValueError, match="<s>"):
        MarkovSource(5, 2, seed=0).next_token_probs(["w1", "<s>"])
    with pytest.raises(ValueError, match="method"):
        source.entropy_rate("magic")


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
