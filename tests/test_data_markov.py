"""seqlearn.data.markov: the Markov source against independent computations (a renewal chain built from
token tuples, closed forms, long samples), and its first-order form with given tables."""

import itertools
import math
import time
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from seqlearn.data.markov import MarkovSource


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


# ------------------------------------------------------------------ given first-order tables


def test_a_first_order_source_keeps_its_tables_and_the_floor_has_the_closed_form():
    # <s> -> a or b with 1/2 each; a -> b certainly; b -> a or </s> with 1/2 each.
    source = MarkovSource.first_order(["a", "b"], [0.5, 0.5], [[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    np.testing.assert_array_equal(source.next_token_probs(["a"]), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(source.next_token_probs([]), [0.5, 0.5, 0.0])
    # visits per sentence: b = 1/2 + a, a = 1/2 + b/2  =>  b = 2, a = 3/2; entropy ln 2 at <s> and at b, 0 at a
    assert source.mean_length == pytest.approx(3.5, rel=1e-12)
    assert source.perplexity_floor() == pytest.approx(math.exp((1 + 2) * math.log(2) / (1 + 1.5 + 2)), rel=1e-12)
    sentences = source.sample(n_sentences=2000, rng=0)
    assert all(s and s[-1] == "b" for s in sentences)  # only b ends a sentence
    pairs = [pair for s in sentences for pair in itertools.pairwise(s)]
    assert pairs and set(pairs) == {("a", "b"), ("b", "a")}
    assert source.logprob(["a", "b"]) == pytest.approx(math.log(0.25), rel=1e-12)
    assert "first_order" in repr(source)


def test_a_first_order_source_matches_the_renewal_chain():
    rng = np.random.default_rng(5)
    W = 4
    transition = np.column_stack([0.8 * rng.dirichlet(np.ones(W), size=W), np.full(W, 0.2)])
    source = MarkovSource.first_order([f"w{r}" for r in range(W)], rng.dirichlet(np.ones(W)), transition)
    _, probs, R = renewal_chain(source)
    pi = stationary_by_eig(R)
    assert source.entropy_rate() == pytest.approx(float(pi @ [entropy(p) for p in probs]), rel=1e-10)


@pytest.mark.parametrize(
    "words, start, transition, error, match",
    [
        ("ab", [1.0], [[0.5, 0.5]], TypeError, "not a str"),
        (["a", "a"], [0.5, 0.5], [[0.5, 0, 0.5], [0.5, 0, 0.5]], ValueError, "distinct"),
        (["</s>"], [1.0], [[0.5, 0.5]], ValueError, "reserved"),
        (["a"], [0.5], [[0.5, 0.5]], ValueError, "start"),
        (["a"], [1.0], [[0.5, 0.6]], ValueError, r"transition\[0\]"),
        (["a"], [1.0], [[0.5, 0.5, 0.0]], ValueError, "transition"),
        (["a", "b"], [1.0, 0.0], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], ValueError, "never end"),
        (["a"], [np.nan], [[0.5, 0.5]], ValueError, "finite"),
    ],
)
def test_bad_first_order_tables_are_refused(words, start, transition, error, match):
    with pytest.raises(error, match=match):
        MarkovSource.first_order(words, start, transition)
