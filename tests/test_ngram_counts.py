"""Vectorised n-gram counting (seqlearn.ngram.counts) against plain-Python counting."""

from collections import defaultdict

import numpy as np
import pytest

from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.ngram import basics
from seqlearn.ngram.counts import (
    NO_CONTEXT,
    UNSEEN,
    KeyTable,
    NGramCounts,
    adjusted_counts,
    context_totals,
    count_of_counts,
    take,
)


def random_corpus(seed, n_sentences=40, n_words=5, max_len=7):
    rng = np.random.default_rng(seed)
    return [[f"w{i}" for i in rng.integers(0, n_words, rng.integers(0, max_len))] for _ in range(n_sentences)]


def ngram_words(counts, vocab, k, g):
    """The words of k-gram id g, read back through the prefix chain."""
    words = []
    for j in range(k, 0, -1):
        words.append(vocab.itos[counts.last(j)[g]])
        g = counts.prefix(j)[g]
    return tuple(reversed(words))


def as_dict(counts, vocab, k, values):
    return {ngram_words(counts, vocab, k, g): int(v) for g, v in enumerate(values) if v > 0}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("N", [1, 2, 3, 5])
@pytest.mark.parametrize("unused", [0, 70_000], ids=["small-vocab", "vocab-over-2^16"])
def test_counts_equal_plain_python_counts(seed, N, unused):
    """Also with a vocabulary too large for 16-bit ids (the counting sorts them differently)."""
    sentences = random_corpus(seed)
    vocab = Vocab([*Vocab.build(sentences).itos, *(f"unused{i}" for i in range(unused))])
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), N)
    for k in range(1, N + 1):
        assert as_dict(counts, vocab, k, counts.c[k - 1]) == dict(basics.count_ngrams(sentences, k))
        assert np.all(np.diff(counts.keys[k - 1]) > 0), "keys must be strictly increasing"


def test_no_window_crosses_a_sentence_start():
    sentences = [["a"], ["b", "c"], [], ["a", "a", "a", "a"]]
    vocab = Vocab.build(sentences)
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), 4)
    for k in range(2, 5):
        for g in range(counts.size(k)):
            assert "<s>" not in ngram_words(counts, vocab, k, g)[1:]
    assert counts.c[0][vocab.bos_id] == 0  # <s> is never counted as a predicted unigram


@pytest.mark.parametrize("seed", [3, 4])
def test_suffix_links(seed):
    sentences = random_corpus(seed)
    vocab = Vocab.build(sentences)
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), 4)
    for k in range(2, 5):
        for g in range(counts.size(k)):
            suffix = counts.suffix[k - 1][g]
            assert ngram_words(counts, vocab, k, g)[1:] == ngram_words(counts, vocab, k - 1, suffix)
            assert ngram_words(counts, vocab, k, g)[0] == vocab.itos[counts.first(k)[g]]


def plain_adjusted_counts(sentences, N):
    """c'(g): raw count at order N or when g starts with <s>, else the number of distinct left neighbours."""
    raw = {k: basics.count_ngrams(sentences, k) for k in range(1, N + 1)}
    left = defaultdict(set)
    for k in range(2, N + 1):
        for gram in raw[k]:
            left[gram[1:]].add(gram[0])
    adjusted = {}
    for k in range(1, N + 1):
        for gram, c in raw[k].items():
            adjusted[gram] = c if k == N or gram[0] == "<s>" else len(left[gram])
    return adjusted


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("N", [1, 2, 3, 4])
def test_adjusted_counts(seed, N):
    sentences = random_corpus(seed)
    vocab = Vocab.build(sentences)
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), N)
    expected = plain_adjusted_counts(sentences, N)
    c_adj = adjusted_counts(counts)
    for k in range(1, N + 1):
        assert as_dict(counts, vocab, k, c_adj[k - 1]) == {g: c for g, c in expected.items() if len(g) == k}
    if N >= 2:  # below the top order, continuation counts of n-grams not starting with <s>
        cont = basics.continuation_counts(basics.count_ngrams(sentences, 2))
        unigrams = as_dict(counts, vocab, 1, c_adj[0])
        assert unigrams == dict(cont.items())


def test_count_of_counts_and_context_totals():
    assert count_of_counts(np.array([1, 1, 2, 5, 3, 4, 0, 9])).tolist() == [2, 1, 1, 1]
    sentences = [["a", "b"], ["a", "c"], ["a", "b"]]
    vocab = Vocab.build(sentences)
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), 2)
    S = context_totals(counts, 2, counts.c[1])  # c(h .) for every unigram context h
    assert S[vocab["a"]] == 3 and S[vocab.bos_id] == 3 and S[vocab["b"]] == 2 and S[vocab.eos_id] == 0
    assert context_totals(counts, 1, counts.c[0]).tolist() == [9]  # 3 a, 2 b, 1 c, 3 </s>
    assert take(np.array([10.0, 20.0]), np.array([1, UNSEEN, NO_CONTEXT, 0]), 0.5).tolist() == [20, 0.5, 0.5, 10]


def test_lookup_and_context_ids():
    sentences = [["a", "b", "c"], ["b", "c"]]
    vocab = Vocab.build(sentences)
    stream = encode_sentences(sentences, vocab)  # <s> a b c </s> <s> b c </s>
    counts = NGramCounts.from_stream(stream, len(vocab), 3)
    a, b, c = vocab["a"], vocab["b"], vocab["c"]
    ab = counts.lookup(2, np.array([a]), np.array([b]))[0]
    assert ab >= 0 and ngram_words(counts, vocab, 2, ab) == ("a", "b")
    assert counts.lookup(2, np.array([c]), np.array([a]))[0] == UNSEEN
    assert counts.lookup(3, np.array([UNSEEN, NO_CONTEXT]), np.array([a, a])).tolist() == [UNSEEN, UNSEEN]
    ctx = counts.context_ids(stream)  # (3, 9)
    assert ctx.shape == (3, len(stream)) and np.all(ctx[0] == 0)
    # position 6 is the b of the 2nd sentence: bigram context <s>, trigram context reaches the 1st sentence
    assert ctx[1, 6] == vocab.bos_id and ctx[2, 6] == NO_CONTEXT
    # position 7 is its c: contexts b and (<s>, b)
    assert ctx[1, 7] == b and ngram_words(counts, vocab, 2, ctx[2, 7]) == ("<s>", "b")
    assert ctx[1, 0] == NO_CONTEXT  # nothing left of the stream


def test_context_of_unseen_window_is_unseen():
    sentences = [["a", "b"]]
    vocab = Vocab(["a", "b"])
    counts = NGramCounts.from_stream(encode_sentences(sentences, vocab), len(vocab), 3)
    ctx = counts.context_ids(np.array([vocab.bos_id, vocab["b"], vocab["a"], vocab["b"]]))
    assert ctx[2, 2] == UNSEEN  # (<s>, b) is a valid window never seen
    assert ctx[2, 3] == UNSEEN  # so is (b, a)


def test_bad_ids_are_rejected():
    with pytest.raises(ValueError, match=r"must hold token ids in \[0, \d+\] \(a vocabulary of \d+\)"):
        NGramCounts.from_stream(np.array([1, 3, 7, 2]), 5, 2)


def test_number_of_windows_on_a_big_stream():
    """sum_g c(g) at order k is the number of k-windows of the padded sentences: sum_i max(L_i + 3 - k, 0)."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 30, 20_000)  # L_i words per sentence
    V = 500
    sentences_ids = [np.concatenate([[1], rng.integers(3, V, L), [2]]) for L in lengths]
    stream = np.concatenate(sentences_ids)
    counts = NGramCounts.from_stream(stream, V, 5)
    for k in range(1, 6):
        windows = np.maximum(lengths + 3 - k, 0).sum() - (len(lengths) if k == 1 else 0)  # (<s>,) is no unigram
        assert int(counts.c[k - 1].sum()) == windows


def test_key_table_finds_every_key_and_nothing_else():
    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(0, 2**40, 600_000))  # more keys than one insertion chunk
    table = KeyTable(keys)
    assert len(table.slots) >= 2 * len(keys)
    np.testing.assert_array_equal(table.lookup(keys[::-1]), np.arange(len(keys))[::-1])
    absent = np.setdiff1d(rng.integers(0, 2**40, 10_000), keys)
    assert np.all(table.lookup(np.concatenate([absent, [-1, -2]])) == UNSEEN)


def test_key_table_find_is_lookup_in_plain_python():
    rng = np.random.default_rng(1)
    keys = np.unique(rng.integers(0, 2**40, 5_000))
    table = KeyTable(keys)
    queries = np.concatenate([keys[::7], rng.integers(0, 2**40, 500)])
    assert [table.find(int(q)) for q in queries] == table.lookup(queries).tolist()
