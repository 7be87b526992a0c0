"""seqlearn.ngram.analysis against brute-force counting with the plain-Python textbook formulas."""

import numpy as np
import pytest

from seqlearn.data import Vocab, encode_sentences
from seqlearn.data.synthetic import agreement_accuracy, agreement_examples
from seqlearn.ngram import AddK, KneserNey
from seqlearn.ngram.analysis import (
    agreement_scorer,
    held_out_counts,
    learning_curve,
    source_cross_entropy,
    sparsity,
    split_stream,
    truncate_stream,
    word_count,
)
from seqlearn.ngram.basics import count_ngrams


def random_corpus(rng, n_sentences, words="abcde"):
    return [list(rng.choice(list(words), size=rng.integers(0, 7))) for _ in range(n_sentences)]


@pytest.mark.parametrize("seed", range(4))
def test_sparsity_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    train, test = random_corpus(rng, 30), random_corpus(rng, 20)
    vocab = Vocab.build(train + test)
    rows = sparsity(train, test, vocab, 3)
    for row in rows:
        seen = count_ngrams(train, row.order)
        test_grams = count_ngrams(test, row.order)
        unseen = sum(c for g, c in test_grams.items() if g not in seen) / sum(test_grams.values())
        assert row.seen == len(seen)
        assert row.possible == (len(vocab) - 1) ** row.order
        assert row.unseen_test_fraction == pytest.approx(unseen)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_held_out_counts_match_brute_force(order):
    rng = np.random.default_rng(order)
    train, held_out = random_corpus(rng, 200, "abcd"), random_corpus(rng, 200, "abcd")
    vocab = Vocab.build(train)
    c_train, c_ho = count_ngrams(train, order), count_ngrams(held_out, order)
    expected = []
    for r in range(1, 9):
        grams = [g for g, c in c_train.items() if c == r]
        expected.append(np.mean([c_ho.get(g, 0) for g in grams]) if grams else np.nan)
    np.testing.assert_allclose(held_out_counts(train, held_out, vocab, order), expected)


def test_truncate_stream_keeps_whole_sentences_and_counts_words():
    vocab = Vocab.build([["a", "b"]])
    stream = encode_sentences([["a"], ["a", "b"], ["b"]], vocab)  # <s> a </s> <s> a b </s> <s> b </s>
    assert word_count(stream) == 4  # <s> and </s> are not words
    assert truncate_stream(stream, 1).tolist() == stream[:3].tolist()
    assert truncate_stream(stream, 2).tolist() == stream[:7].tolist()
    assert truncate_stream(stream, 4).tolist() == stream.tolist()
    assert truncate_stream(stream, 100).tolist() == stream.tolist()
    with pytest.raises(ValueError, match="n_words"):
        truncate_stream(stream, 0)


@pytest.mark.parametrize("n_words", [1, 3, 7, 50])
def test_split_stream_gives_disjoint_parts_of_whole_sentences(n_words):
    rng = np.random.default_rng(n_words)
    sentences = random_corpus(rng, 40)
    vocab = Vocab.build(sentences)
    stream = encode_sentences(sentences, vocab)
    parts = split_stream(stream, n_words)
    joined = np.concatenate(parts)
    assert joined.tolist() == stream[: len(joined)].tolist()  # consecutive, from the start
    assert all(p[0] == Vocab.bos_id and p[-1] == Vocab.eos_id for p in parts)
    if word_count(stream) >= n_words:
        assert all(word_count(p) >= n_words for p in parts)
        assert word_count(stream[len(joined) :]) < n_words  # the dropped remainder is too short
        # each part is minimal: without its last sentence it would be too short
        for p in parts:
            last = np.flatnonzero(p == Vocab.bos_id)[-1]
            assert word_count(p[:last]) < n_words
    assert split_stream(stream, n_words, max_parts=1)[0].tolist() == truncate_stream(stream, n_words).tolist()


def test_learning_curve_equals_fitting_each_part():
    rng = np.random.default_rng(0)
    train, test = random_corpus(rng, 100), random_corpus(rng, 30)
    vocab = Vocab.build(train + test)
    curves = learning_curve({"add1": lambda: AddK(2, k=1.0)}, train, test, vocab, [50, 200], max_samples=2)
    assert curves["add1"].shape == (2, 2)
    stream = encode_sentences(train, vocab)
    for i, size in enumerate([50, 200]):
        for j, part in enumerate(split_stream(stream, size, 2)):
            expected = AddK(2, k=1.0).fit(part, vocab).perplexity(test)
            assert curves["add1"][i, j] == pytest.approx(expected)
    assert np.isnan(curves["add1"][1, 1])  # 100 sentences hold fewer than 2 x 200 words
    assert curves["add1"][1, 0] != curves["add1"][0, 0]


def test_agreement_scorer_uses_the_model_probabilities():
    train = [["the", "cat", "is", "here"], ["the", "cats", "are", "here"]] * 20
    model = KneserNey(2, discounts=0.5).fit(train, Vocab.build(train))
    score = agreement_scorer(model)
    logp = score(["the", "cat"], ["is", "are"])
    np.testing.assert_allclose(np.exp(logp), model.prob(["is", "are"], ["<s>", "the", "cat"]))
    assert logp[0] > logp[1]


def test_a_bigram_model_sees_agreement_only_at_distance_zero():
    from seqlearn.data.synthetic import ToyEnglish

    train = ToyEnglish().sample(n_tokens=60_000, rng=0)
    model = KneserNey(2, fallback_discounts=0.75).fit(train, Vocab.build(train))
    accuracy = agreement_accuracy(agreement_scorer(model), agreement_examples(distances=[0, 6], n_per_distance=60))
    assert accuracy[0] > 0.95 and abs(accuracy[6] - 0.5) < 0.2


@pytest.mark.parametrize("order", [1, 2, 3])
def test_unseen_mask_matches_brute_force(order):
    from seqlearn.ngram.analysis import unseen_mask

    rng = np.random.default_rng(10 + order)
    train, test = random_corpus(rng, 40, "abcd"), random_corpus(rng, 25, "abcde")
    vocab = Vocab.build(train + test)
    expected = []
    for sentence in test:
        padded = ["<s>", *sentence, "</s>"]
        for t in range(1, len(padded)):
            k = min(order, t + 1)
            gram = tuple(padded[t - k + 1 : t + 1])
            expected.append(gram not in count_ngrams(train, k))
    mask = unseen_mask(train, test, vocab, order)
    assert mask.tolist() == expected
    assert mask.any() and not mask.all()


@pytest.mark.parametrize("N", [1, 2, 3])
def test_source_cross_entropy_equals_next_distribution_per_context(N):
    from seqlearn.data.markov import MarkovSource
    from seqlearn.ngram import ModifiedKneserNey

    source = MarkovSource(vocab_size=6, order=2, mean_length=4.0, seed=1)
    vocab = Vocab(source.words)
    model = ModifiedKneserNey(N, fallback_discounts=(0.5, 1.0, 1.5)).fit(source.sample(n_tokens=300, rng=0), vocab)
    result = source_cross_entropy(model, source, block=7)
    pi = source.stationary_distribution()
    contexts = np.flatnonzero(pi > 0)
    A = source.n_outcomes
    outcome_ids = [vocab[w] for w in source.outcomes]
    expected = []
    for c in contexts:
        tokens = ["<s>" if s == source.vocab_size else source.words[s] for s in (c // A, c % A)]
        if tokens[-1] == "<s>":  # the sentence's start: the context is just <s>
            tokens = ["<s>"]
        q = model.next_distribution(tokens[len(tokens) - N + 1 :] if N > 1 else [])
        expected.append(-(source.P[c] * np.log(q[outcome_ids])).sum())
    np.testing.assert_allclose(result.cross_entropy, expected, rtol=1e-10)
    np.testing.assert_allclose(result.pi, pi[contexts] / pi[contexts].sum())
    assert result.entropy_rate == pytest.approx(source.entropy_rate())
    assert np.all(result.kl >= -1e-12) and result.rate > result.entropy_rate
    with pytest.raises(ValueError, match="looks further back"):
        source_cross_entropy(ModifiedKneserNey(4, fallback_discounts=(0.5, 1.0, 1.5)).fit([["w0", "w1"]]), source)
