"""Jelinek-Mercer interpolation and stupid backoff against plain-Python computations on dicts of counts."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from seqlearn.data.vocab import Vocab
from seqlearn.ngram.jelinek_mercer import JelinekMercer
from seqlearn.ngram.stupid_backoff import StupidBackoff

BOS, EOS = "<s>", "</s>"


def corpus(seed, n_sentences=60, words="abcde"):
    rng = np.random.default_rng(seed)
    return [list(rng.choice(list(words), size=rng.integers(0, 6))) for _ in range(n_sentences)]


def plain_counts(sentences, N):
    """c[k][gram] for k = 1..N, padded <s> w_1 .. w_L </s>, no gram with <s> after its first place."""
    c = {k: Counter() for k in range(1, N + 1)}
    for s in sentences:
        padded = [BOS, *s, EOS]
        for k in range(1, N + 1):
            for i in range(len(padded) - k + 1):
                gram = tuple(padded[i : i + k])
                if gram != (BOS,):
                    c[k][gram] += 1
    return c


def contexts_of(sentences, N):
    """(history, word) of every predicted token: the last N - 1 tokens, none left of <s>."""
    pairs = []
    for s in sentences:
        padded = [BOS, *s, EOS]
        for t in range(1, len(padded)):
            pairs.append((tuple(padded[max(0, t - N + 1) : t]), padded[t]))
    return pairs


def plain_jm(c, h, w, lambdas, n_predictable):
    """p_k(w | h) of Jelinek-Mercer, by the recursion, k = len(h) + 1."""
    p = 1.0 / n_predictable
    for k in range(1, len(h) + 2):
        ctx = h[len(h) - k + 1 :] if k > 1 else ()
        total = sum(n for g, n in c[k].items() if g[:-1] == ctx)
        if total > 0:
            p = lambdas[k - 1] * c[k].get((*ctx, w), 0) / total + (1 - lambdas[k - 1]) * p
    return p


def plain_stupid(c, h, w, alpha):
    """S(w | h) of stupid backoff by its top-down definition."""
    if not h:
        return c[1].get((w,), 0) / sum(c[1].values())
    k = len(h) + 1
    if c[k].get((*h, w), 0) > 0:
        return c[k][(*h, w)] / sum(n for g, n in c[k].items() if g[:-1] == h)
    return alpha * plain_stupid(c, h[1:], w, alpha)


@pytest.mark.parametrize("N", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_jelinek_mercer_equals_plain_python(N, seed):
    train, test = corpus(seed), corpus(seed + 10, 20, "abcdef")  # 'f' is out of vocabulary
    vocab = Vocab.build(train)
    lambdas = [0.3, 0.6, 0.8][:N]
    model = JelinekMercer(N, lambdas).fit(train, vocab)
    c = plain_counts(train, N)
    test = [[w if w in vocab.stoi else "<unk>" for w in s] for s in test]
    expected = [math.log(plain_jm(c, h, w, lambdas, len(vocab) - 1)) for h, w in contexts_of(test, N)]
    np.testing.assert_allclose(model.token_logprobs(test), expected, rtol=1e-12)
    for h, _ in contexts_of(test, N)[:10]:
        assert model.next_distribution(list(h)).sum() == pytest.approx(1.0)


def plain_heldout_loglik(c, pairs, lambdas, n_predictable):
    return sum(math.log(plain_jm(c, h, w, lambdas, n_predictable)) for h, w in pairs)


def test_em_increases_the_held_out_likelihood_and_finds_the_grid_optimum():
    train, held_out = corpus(3, 80), corpus(4, 40)
    vocab = Vocab.build(train + held_out)
    model = JelinekMercer(2, 0.5).fit(train, vocab).tune(held_out, n_iter=500, tol=1e-12)
    history = np.array(model.tune_history_)
    assert np.all(np.diff(history) >= -1e-9)  # EM never lowers the likelihood
    c, pairs = plain_counts(train, 2), contexts_of(held_out, 2)
    best = model.tune_history_[-1]
    assert best == pytest.approx(plain_heldout_loglik(c, pairs, model.lambda_, len(vocab) - 1))
    grid = np.linspace(0.005, 0.995, 100)
    grid_best = max(plain_heldout_loglik(c, pairs, lam, len(vocab) - 1) for lam in itertools.product(grid, grid))
    assert best >= grid_best - 1e-6
    refit = JelinekMercer(2, model.lambda_).fit(train, vocab)
    np.testing.assert_allclose(refit.token_logprobs(held_out), model.token_logprobs(held_out))


def test_jelinek_mercer_bad_lambdas():
    with pytest.raises(ValueError, match="lambda"):
        JelinekMercer(2, [0.5, 1.5])
    with pytest.raises(ValueError, match="one per order"):
        JelinekMercer(3, [0.5, 0.5])


@pytest.mark.parametrize("N", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_stupid_backoff_scores_and_normalisation_equal_plain_python(N, seed):
    train, test = corpus(seed), corpus(seed + 10, 20)
    vocab = Vocab.build(train)
    model = StupidBackoff(N, alpha=0.4).fit(train, vocab)
    c = plain_counts(train, N)
    pairs = contexts_of(test, N)
    scores = [plain_stupid(c, h, w, 0.4) for h, w in pairs]
    np.testing.assert_allclose(model.token_scores(test), scores, rtol=1e-12)
    predictable = [x for x in vocab.itos if x != BOS]
    Z = [sum(plain_stupid(c, h, x, 0.4) for x in predictable) for h, _ in pairs]
    np.testing.assert_allclose(model.token_logprobs(test), np.log(scores) - np.log(Z), rtol=1e-12)
    h = list(pairs[-1][0])
    assert model.score(predictable, h).sum() == pytest.approx(Z[-1])
    assert model.next_distribution(h).sum() == pytest.approx(1.0)


def test_stupid_backoff_scores_of_a_context_sum_to_more_than_one():
    train = corpus(0, 20, "abcdefghij")  # sparse: most bigrams unseen
    model = StupidBackoff(2).fit(train)
    assert model.score([x for x in model.vocab_.itos if x != BOS], ["a"]).sum() > 1


def test_stupid_backoff_refuses_arpa():
    train = corpus(0)
    with pytest.raises(ValueError, match="not probabilities"):
        StupidBackoff(2).fit(train).to_arpa(__import__("io").StringIO())
