"""Katz backoff with Good-Turing discounts (seqlearn.ngram.katz) against independent computations.

``ReferenceKatz`` below is Katz (1987) in plain Python, with dicts of tuples of tokens and the
count-of-counts counted with a ``Counter``: it shares no code with the vectorised model.
"""

import io
import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from test_ngram_models import markov_corpus, probe_contexts

from seqlearn.ngram import KatzBackoff, good_turing_counts, katz_discounts, read_arpa

BOS, EOS = "<s>", "</s>"


class ReferenceKatz:
    """Plain-Python Katz backoff of order N with Good-Turing discounts for counts 1..K.

    p(w | h) = c*(hw) / c(h.) if c(hw) > 0, else gamma(h) p(w | h[1:]); gamma(h) = (1 - sum of the
    seen words' p) / (1 - their lower-order p), or 0 with the seen words renormalised when the unseen
    ones have no lower-order mass; a context never followed by a word is skipped; the recursion ends
    in the uniform 1 / (|V| - 1); p(<s> | h) = 0.
    """

    def __init__(self, sentences, N, words, K=5):
        self.N, self.K = N, K
        padded = [[BOS, *sentence, EOS] for sentence in sentences]
        counts = Counter(gram for s in padded for n in range(1, N + 1) for gram in zip(*(s[i:] for i in range(n))))
        del counts[(BOS,)]  # <s> is never predicted
        self.followers = defaultdict(dict)  # h -> {w: c(hw)}
        for gram, c in counts.items():
            self.followers[gram[:-1]][gram[-1]] = c
        self.d = {n: self.discounts(Counter(c for g, c in counts.items() if len(g) == n)) for n in range(1, N + 1)}
        self.n_predictable = len([w for w in words if w != BOS])
        self.words, self.cache = list(words), {}

    def discounts(self, n_r):
        """{r: d_r} for r = 1..K, each 1 where the formula is undefined or outside (0, 1]."""
        K = self.K
        if n_r[1] == 0 or (K + 1) * n_r[K + 1] / n_r[1] >= 1:
            return dict.fromkeys(range(1, K + 1), 1.0)
        mu = (K + 1) * n_r[K + 1] / n_r[1]
        d = {}
        for r in range(1, K + 1):
            ratio = (r + 1) * n_r[r + 1] / n_r[r] / r if n_r[r] else math.nan
            d_r = (ratio - mu) / (1 - mu)
            d[r] = d_r if 0 < d_r <= 1 else 1.0
        return d

    def c_star(self, h, c):
        return self.d[len(h) + 1][c] * c if c <= self.K else c

    def prob(self, w, h):
        if w == BOS:
            return 0.0
        return self.distribution(h).get(w, 0.0) if self.followers.get(h) else self.lower(w, h)

    def lower(self, x, h):
        """p(x | h[1:]), the uniform 1 / (|V| - 1) below the unigram."""
        return self.prob(x, h[1:]) if h else (0.0 if x == BOS else 1 / self.n_predictable)

    def distribution(self, h):
        """{w: p(w | h)} over the vocabulary for a context seen followed by some word (memoised)."""
        if h not in self.cache:
            followers = self.followers[h]
            total = sum(followers.values())
            seen_p = {x: self.c_star(h, c) / total for x, c in followers.items()}
            unseen_mass = 1 - sum(self.lower(x, h) for x in followers)
            if unseen_mass <= 1e-12:  # nowhere to put the left-over mass: renormalise the seen words
                p = {x: q / sum(seen_p.values()) for x, q in seen_p.items()}
            else:
                gamma = (1 - sum(seen_p.values())) / unseen_mass
                p = {x: seen_p[x] if x in seen_p else gamma * self.lower(x, h) for x in self.words}
            self.cache[h] = p
        return self.cache[h]


def _reference_context(model, h):
    """The context the model uses for ``h``: nothing left of <s>, unknown words as <unk>, N - 1 tokens."""
    h = h[h.index(BOS) :] if BOS in h else h
    h = tuple(w if w in model.vocab_ else "<unk>" for w in h)
    return h[max(len(h) - model.order + 1, 0) :] if model.order > 1 else ()


# -- Good-Turing counts and Katz's discounts -----------------------------------------------------


def test_good_turing_counts_by_hand():
    # r* = (r + 1) n_{r+1} / n_r: 2 * 4 / 10, 3 * 2 / 4, 4 * 1 / 2, 5 * 0 / 1; n_5 = 0 leaves r*_5 undefined
    np.testing.assert_allclose(good_turing_counts([10, 4, 2, 1, 0, 0]), [0.8, 1.5, 2.0, 0.0, np.nan])


def test_katz_discounts_by_hand():
    # mu = 6 n_6 / n_1 = 30 / 100; d_r = (r*/r - 0.3) / 0.7 with r*/r = 0.8, 0.75, 0.8, 5/6, 0.75
    expected = (np.array([0.8, 0.75, 0.8, 5 / 6, 0.75]) - 0.3) / 0.7
    np.testing.assert_allclose(katz_discounts([100, 40, 20, 12, 8, 5, 99]), expected, rtol=1e-15)
    # K = 2: mu = 3 n_3 / n_1 = 0.6; r*/r = 0.8, 0.75
    np.testing.assert_allclose(katz_discounts([100, 40, 20], max_count=2), [0.5, 0.375], rtol=1e-15)


def test_katz_discounts_fall_back_to_no_discount():
    assert katz_discounts([0, 5, 3, 2, 1, 1]).tolist() == [1.0] * 5  # n_1 = 0: mu undefined
    assert katz_discounts([10, 5, 3, 2, 1, 2]).tolist() == [1.0] * 5  # mu = 6 * 2 / 10 >= 1
    # n_3 = 0: r*_2 = 0 (d_2 < 0) and r*_3 undefined; the other r keep their discount
    d = katz_discounts([100, 40, 0, 12, 8, 5])
    assert d[1] == 1.0 and d[2] == 1.0 and 0 < d[0] < 1 and 0 < d[3] < 1 and 0 < d[4] < 1
    # r*/r > 1 (singletons underestimated, as Church & Gale found for well-covered bigrams): d_1 > 1
    d = katz_discounts([100, 80, 20, 12, 8, 5])
    assert d[0] == 1.0 and 0 < d[1] < 1


# -- the model against the plain-Python reference ------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("N", [1, 2, 3, 4])
@pytest.mark.parametrize("K", [2, 5])
def test_katz_equals_plain_python_reference(seed, N, K):
    sentences = markov_corpus(seed, n_sentences=400, n_words=30)
    model = KatzBackoff(N, max_count=K).fit(sentences)
    reference = ReferenceKatz(sentences, N, model.vocab_.itos, K)
    for n in range(1, N + 1):
        np.testing.assert_allclose(model.d_[n - 1], [reference.d[n][r] for r in range(1, K + 1)], rtol=1e-14)
    assert N == 1 or (model.d_[1:] < 1).any()  # the corpus is big enough for some real discounts above the unigrams
    expected = []
    for sentence in sentences:
        padded = [BOS, *sentence, EOS]
        expected += [
            math.log(reference.prob(padded[i], tuple(padded[max(0, i - N + 1) : i]))) for i in range(1, len(padded))
        ]
    np.testing.assert_allclose(model.token_logprobs(sentences), expected, rtol=0, atol=1e-12)
    for h in probe_contexts(model.vocab_, np.random.default_rng(seed)):
        expected = [reference.prob(w, _reference_context(model, h)) for w in model.vocab_.itos]
        np.testing.assert_allclose(model.next_distribution(h), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("N", [1, 2, 3, 4])
def test_every_next_distribution_sums_to_one(N):
    sentences = markov_corpus(5, n_sentences=300, n_words=40)
    model = KatzBackoff(N).fit(sentences)
    words = model.vocab_.itos
    contexts = {tuple(words[i] for i in row) for k in range(1, N) for row in model.counts_.words(k).tolist()}
    contexts |= set(probe_contexts(model.vocab_, np.random.default_rng(N)))
    for h in contexts:
        p = model.next_distribution(h)
        assert p[model.vocab_.bos_id] == 0 and np.all(p >= 0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12), h


def test_gamma_is_the_left_over_mass_over_the_lower_orders_unseen_mass():
    sentences = markov_corpus(6, n_sentences=400, n_words=30)
    model = KatzBackoff(2).fit(sentences)
    for h in ("w0", "w3", "<s>"):
        seen = {model.vocab_.itos[i] for i in model.counts_.last(2)[model.counts_.prefix(2) == model.vocab_[h]]}
        p, lower = model.next_distribution([h]), model.next_distribution([])
        unseen = [i for i, w in enumerate(model.vocab_.itos) if w not in seen and w != BOS]
        assert model.gamma_[1][model.vocab_[h]] == pytest.approx(p[unseen].sum() / lower[unseen].sum(), rel=1e-12)


def test_nowhere_to_go_renormalises_and_zero_left_over_gives_zero():
    # every word is seen after "a" (and <unk> has probability 0 below): the seen words are renormalised
    sentences = [["a", "a"], ["a", "b"]] * 3 + [["b", "a"]]
    model = KatzBackoff(2, max_count=1).fit(sentences)
    assert model.next_distribution(["a"]).sum() == pytest.approx(1.0, abs=1e-14)
    # no count of 1 or less anywhere: nothing is discounted, so an unseen bigram gets 0
    model = KatzBackoff(2, max_count=1).fit([["a", "b"]] * 4)
    assert model.prob("a", ["a"]) == 0.0 and model.prob("b", ["a"]) == 1.0


def test_arpa_round_trip():
    sentences = markov_corpus(7, n_sentences=300, n_words=30)
    model = KatzBackoff(3).fit(sentences)
    buffer = io.StringIO()
    model.to_arpa(buffer)
    restored = read_arpa(io.StringIO(buffer.getvalue()))
    np.testing.assert_allclose(restored.token_logprobs(sentences), model.token_logprobs(sentences), atol=1e-5)


# -- bad input -----------------------------------------------------------------------------------


def test_bad_input():
    with pytest.raises(ValueError, match="max_count"):
        KatzBackoff(3, max_count=0)
    with pytest.raises(TypeError, match="max_count"):
        KatzBackoff(3, max_count=2.5)
    with pytest.raises(ValueError, match="order"):
        KatzBackoff(0)
    with pytest.raises(ValueError, match=r"n_1 \.\. n_6"):
        katz_discounts([10, 5, 3])
    with pytest.raises(ValueError, match="count-of-counts"):
        good_turing_counts([10, -1, 3])
    with pytest.raises(TypeError, match="count-of-counts"):
        good_turing_counts([1.5, 2.0])
    with pytest.raises(RuntimeError, match="not fitted"):
        KatzBackoff(2).perplexity([["a"]])
