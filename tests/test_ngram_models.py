"""The n-gram models (seqlearn.ngram.models) against independent computations.

The main reference is ``ReferenceKN`` below: modified Kneser-Ney in plain Python, with
dicts of tuples of tokens, written from Chen & Goodman (1999) and KenLM's conventions
(one <s> of padding, adjusted counts, discounts from the adjusted count-of-counts of each
order, interpolation down to the uniform distribution over the |V| - 1 predictable types).
It shares no code with the vectorised models.
"""

import io
import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.ngram import (
    MLE,
    AbsoluteDiscounting,
    AddK,
    KneserNey,
    ModifiedKneserNey,
    basics,
    kn_discount,
    make_model,
    mkn_discounts_from_counts,
    parse_arpa,
)

BOS, EOS = "<s>", "</s>"


class ReferenceKN:
    """Plain-Python interpolated modified Kneser-Ney of order N.

    p(w | h) = (c'(hw) - D(c'(hw))) / sum_x c'(hx) + gamma(h) p(w | h[1:]),
    gamma(h) = sum_x D(c'(hx)) / sum_x c'(hx); a context never followed by a word is skipped;
    the recursion ends in the uniform 1 / (|V| - 1); p(<s> | h) = 0.
    """

    def __init__(self, sentences, N, words, discounts=None):
        self.N = N
        raw = Counter()
        for sentence in sentences:
            padded = [BOS, *sentence, EOS]
            for n in range(1, N + 1):
                for i in range(len(padded) - n + 1):
                    gram = tuple(padded[i : i + n])
                    if gram != (BOS,):
                        raw[gram] += 1
        left = defaultdict(set)
        for gram in raw:
            if len(gram) > 1:
                left[gram[1:]].add(gram[0])
        self.adjusted = {g: c if len(g) == N or g[0] == BOS else len(left[g]) for g, c in raw.items()}
        self.followers = defaultdict(dict)  # h -> {w: c'(hw)}
        for gram, c in self.adjusted.items():
            self.followers[gram[:-1]][gram[-1]] = c
        self.count_of_counts = {n: Counter(c for g, c in self.adjusted.items() if len(g) == n) for n in range(1, N + 1)}
        if discounts is None:
            discounts = [basics.mkn_discounts(self.count_of_counts[n]) for n in range(1, N + 1)]
        self.D = {n: tuple(discounts[n - 1]) for n in range(1, N + 1)}
        self.n_predictable = len([w for w in words if w != BOS])

    def discount(self, n, c):
        return 0.0 if c == 0 else self.D[n][min(c, 3) - 1]

    def gamma(self, h):
        followers = self.followers.get(h, {})
        total = sum(followers.values())
        if total == 0:
            return 1.0
        return sum(self.discount(len(h) + 1, c) for c in followers.values()) / total

    def prob(self, w, h):
        if w == BOS:
            return 0.0
        lower = self.prob(w, h[1:]) if h else 1.0 / self.n_predictable
        followers = self.followers.get(h, {})
        total = sum(followers.values())
        if total == 0:
            return lower
        c = followers.get(w, 0)
        return (c - self.discount(len(h) + 1, c)) / total + self.gamma(h) * lower

    def contexts(self, sentence):
        """(word, context) of every predicted token of a sentence."""
        padded = [BOS, *sentence, EOS]
        return [(padded[i], tuple(padded[max(0, i - self.N + 1) : i])) for i in range(1, len(padded))]

    def arpa(self, words):
        """{n-gram: (log10 p, log10 backoff)} of every n-gram with nonzero adjusted count and every word."""
        grams = {g for g, c in self.adjusted.items() if c > 0} | {(w,) for w in words}
        entries = {}
        for g in grams:
            p = self.prob(g[-1], g[:-1])
            bo = self.gamma(g) if len(g) < self.N else 1.0
            entries[g] = (math.log10(p) if p > 0 else -math.inf, math.log10(bo) if bo > 0 else -math.inf)
        return entries


def markov_corpus(seed, n_sentences=150, n_words=25):
    """Sentences with some sequential structure and Zipf-like word frequencies."""
    rng = np.random.default_rng(seed)
    zipf = 1 / np.arange(1, n_words + 1)
    zipf /= zipf.sum()
    successors = rng.integers(0, n_words, (n_words, 2))
    sentences = []
    for _ in range(n_sentences):
        words = [rng.choice(n_words, p=zipf)]
        for _ in range(rng.integers(0, 9)):
            if rng.random() < 0.6:
                words.append(successors[words[-1], rng.integers(2)])
            else:
                words.append(rng.choice(n_words, p=zipf))
        sentences.append([f"w{i}" for i in words])
    return sentences


def probe_contexts(vocab, rng, n=25):
    """Seen and unseen contexts: random words, sentence starts, unknown words, <s> in the middle."""
    words = vocab.itos
    contexts = [(), ("<s>",), ("never-seen",), ("w0", "<s>"), ("w1", "<s>", "w0")]
    for _ in range(n):
        contexts.append(tuple(rng.choice(words[2:], size=rng.integers(1, 5))))
        contexts.append(("<s>", *rng.choice(words[3:], size=rng.integers(0, 4))))
    return contexts


# -- modified Kneser-Ney against the plain-Python reference --------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("N", [1, 2, 3, 4, 5])
def test_mkn_equals_plain_python_reference(seed, N):
    sentences = markov_corpus(seed)
    rng = np.random.default_rng(100 + seed)
    discounts = rng.uniform(0, [1, 2, 3], size=(N, 3))  # D_r in [0, r], drawn per order
    model = ModifiedKneserNey(N, discounts=discounts).fit(sentences)
    reference = ReferenceKN(sentences, N, model.vocab_.itos, discounts)
    # every predicted token of the corpus
    expected = [math.log(reference.prob(w, h)) for s in sentences for w, h in reference.contexts(s)]
    np.testing.assert_allclose(model.token_logprobs(sentences), expected, rtol=0, atol=1e-12)
    # whole next-word distributions after seen and unseen contexts
    for h in probe_contexts(model.vocab_, rng):
        h_model = h[h.index("<s>") :] if "<s>" in h else h  # nothing left of <s> counts
        h_ref = tuple(w if w in model.vocab_ else "<unk>" for w in h_model)[-(N - 1) :] if N > 1 else ()
        expected = [reference.prob(w, h_ref) for w in model.vocab_.itos]
        np.testing.assert_allclose(model.next_distribution(h), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("N", [2, 3])
def test_mkn_estimated_discounts_equal_textbook_formula(seed, N):
    sentences = markov_corpus(seed, n_sentences=1500, n_words=300)
    model = ModifiedKneserNey(N).fit(sentences)
    reference = ReferenceKN(sentences, N, model.vocab_.itos)
    for n in range(1, N + 1):
        expected = basics.mkn_discounts(reference.count_of_counts[n])
        np.testing.assert_allclose(model.D_[n - 1], expected, rtol=0, atol=1e-12)
    expected = [math.log(reference.prob(w, h)) for s in sentences[:200] for w, h in reference.contexts(s)]
    n_tokens = sum(len(s) + 1 for s in sentences[:200])
    np.testing.assert_allclose(model.token_logprobs(sentences)[:n_tokens], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("N", [1, 3, 5])
def test_arpa_numbers_equal_plain_python_reference(seed, N):
    sentences = markov_corpus(seed, n_sentences=80)
    discounts = (0.6, 1.2, 1.9)
    model = ModifiedKneserNey(N, discounts=discounts).fit(sentences)
    reference = ReferenceKN(sentences, N, model.vocab_.itos, [discounts] * N).arpa(model.vocab_.itos)
    buffer = io.StringIO()
    model.to_arpa(buffer)
    written = parse_arpa(io.StringIO(buffer.getvalue())).entries()
    assert set(written) == set(reference)
    for gram, (log10_p, log10_bo) in reference.items():
        if gram == ("<s>",):
            assert written[gram][0] == log10_p == -math.inf
        else:
            assert written[gram][0] == pytest.approx(log10_p, abs=1e-12), gram
        assert written[gram][1] == pytest.approx(log10_bo, abs=1e-12), gram


def test_mkn_hand_computed_bigram_example():
    # Corpus: "a b", "b" -> <s> a b </s>, <s> b </s>; discounts D1, D2, D3+ = 0.5, 1.0, 1.5 at both orders.
    # Bigrams (top order, raw counts): <s> a:1, a b:1, b </s>:2, <s> b:1.
    # Unigram adjusted counts (distinct left neighbours): a:1 ({<s>}), b:2 ({<s>, a}), </s>:1 ({b}); sum 4.
    # gamma() = (0.5*2 [a, </s> have c'=1] + 1.0*1 [b has c'=2]) / 4 = 0.5; uniform over 4 types = 0.25.
    # p1(a) = (1-0.5)/4 + 0.5*0.25 = 0.25, p1(b) = (2-1)/4 + 0.125 = 0.375, p1(</s>) = 0.25, p1(<unk>) = 0.125.
    # Context <s>: a:1, b:1, S=2, gamma = (0.5+0.5)/2 = 0.5:
    #   p(a|<s>) = 0.5/2 + 0.5*0.25 = 0.375, p(b|<s>) = 0.25 + 0.5*0.375 = 0.4375,
    #   p(</s>|<s>) = 0.5*0.25 = 0.125, p(<unk>|<s>) = 0.5*0.125 = 0.0625 (sum 1).
    # Context a: b:1, S=1, gamma = 0.5: p(b|a) = 0.5 + 0.5*0.375 = 0.6875, p(a|a) = 0.5*0.25 = 0.125.
    # Context b: </s>:2, S=2, gamma = 1.0/2 = 0.5: p(</s>|b) = (2-1)/2 + 0.5*0.25 = 0.625.
    # Context </s> is never followed by a word: p(a|</s>) = p1(a) = 0.25.
    # P("a b") = 0.375 * 0.6875 * 0.625 = 0.1611328125, P("b") = 0.4375 * 0.625 = 0.2734375.
    model = ModifiedKneserNey(2, discounts=(0.5, 1.0, 1.5)).fit([["a", "b"], ["b"]])
    p = model.prob
    assert [p(w) for w in ["a", "b", "</s>", "<unk>", "<s>"]] == pytest.approx([0.25, 0.375, 0.25, 0.125, 0])
    assert [p(w, ["<s>"]) for w in ["a", "b", "</s>", "<unk>"]] == pytest.approx([0.375, 0.4375, 0.125, 0.0625])
    assert p("b", ["a"]) == pytest.approx(0.6875) and p("a", ["a"]) == pytest.approx(0.125)
    assert p("</s>", ["b"]) == pytest.approx(0.625) and p("a", ["</s>"]) == pytest.approx(0.25)
    assert np.exp(model.sentence_logprobs([["a", "b"], ["b"]])) == pytest.approx([0.1611328125, 0.2734375])
    assert model.perplexity([["a", "b"], ["b"]]) == pytest.approx((0.1611328125 * 0.2734375) ** (-1 / 5))


def test_mkn_discounts_undefined_on_a_tiny_corpus():
    with pytest.raises(ValueError, match="discounts="):
        ModifiedKneserNey(2).fit([["a", "b"], ["b"]])
    with pytest.raises(ValueError, match="n_1, n_2, n_3 > 0"):
        mkn_discounts_from_counts(np.array([3, 0, 1, 0]))
    with pytest.raises(ValueError, match="outside"):
        mkn_discounts_from_counts(np.array([10, 1, 10, 0]))  # Y = 10/12, D2 = 2 - 3*Y*10/1 = -23
    expected = basics.mkn_discounts({1: 10, 2: 4, 3: 2, 4: 1})
    assert mkn_discounts_from_counts(np.array([10, 4, 2, 1])) == pytest.approx(expected)


def test_fallback_discounts_replace_only_undefined_estimates():
    sentences = markov_corpus(15, n_sentences=1500, n_words=10)  # every word follows many others
    reference = ReferenceKN(sentences, 3, ["<s>"], discounts=[(0, 0, 0)] * 3)
    with pytest.raises(ValueError, match="n_1, n_2, n_3"):
        basics.mkn_discounts(reference.count_of_counts[1])  # no unigram has adjusted count 1, 2 or 3
    with pytest.raises(ValueError, match="fallback_discounts="):
        ModifiedKneserNey(3).fit(sentences)
    model = ModifiedKneserNey(3, fallback_discounts=(0.5, 1.0, 1.5)).fit(sentences)
    assert model.D_[0] == pytest.approx([0.5, 1.0, 1.5])
    for n in (2, 3):
        assert model.D_[n - 1] == pytest.approx(basics.mkn_discounts(reference.count_of_counts[n]), abs=1e-12)
    kn = KneserNey(3, fallback_discounts=0.4).fit(sentences)
    n = reference.count_of_counts[2]
    assert kn.D_[:, 0] == pytest.approx([0.4, n[1] / (n[1] + 2 * n[2]), kn.D_[2, 0]])
    tiny = [["a", "b"], ["b"]]  # no order of this corpus has defined MKN discounts
    fallback = ModifiedKneserNey(2, fallback_discounts=(0.5, 1.0, 1.5)).fit(tiny)
    explicit = ModifiedKneserNey(2, discounts=(0.5, 1.0, 1.5)).fit(tiny)
    np.testing.assert_array_equal(fallback.token_logprobs(tiny), explicit.token_logprobs(tiny))


# -- other models against basics and closed forms -----------------------------------------


@pytest.mark.parametrize("d", [0.3, 0.75, 1.0])
def test_kn_bigram_equals_textbook_formula(d):
    # basics.kn_bigram_prob uses the raw continuation probability N1+(. w) / N1+(. .) at the unigram
    # level; seqlearn's KneserNey discounts and interpolates that level too (with the uniform
    # distribution), so the two coincide when the unigram discount is 0.
    sentences = markov_corpus(7, n_sentences=60, n_words=12)
    model = KneserNey(2, discounts=[0.0, d]).fit(sentences)
    bigrams = basics.count_ngrams(sentences, 2)
    for v in ["<s>", "w0", "w3", "w11", "</s>"]:
        expected = [basics.kn_bigram_prob(v, w, bigrams, d) for w in model.vocab_.itos if w not in ("<s>", "<unk>")]
        got = [model.prob(w, [v]) for w in model.vocab_.itos if w not in ("<s>", "<unk>")]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    default = KneserNey(2, discounts=[0.5, d]).fit(sentences)
    assert default.prob("<unk>", ["w0"]) > 0  # the discounted unigram level gives unseen words mass


@pytest.mark.parametrize("N", [1, 2, 3])
@pytest.mark.parametrize("k", [0.1, 1.0])
def test_add_k_equals_textbook_formula(N, k):
    sentences = markov_corpus(8, n_sentences=50, n_words=10)
    model = AddK(N, k=k).fit(sentences)
    counts = basics.count_ngrams(sentences, N)
    predictable = len(model.vocab_) - 1
    h = ("w1", "w2")[2 - (N - 1) :] if N > 1 else ()
    for w in ["w0", "w1", "</s>", "<unk>"]:
        assert model.prob(w, h) == pytest.approx(basics.add_k_prob(h, w, counts, k, predictable), abs=1e-14)
    # at a sentence start the context is (<s>,): the bigram estimate
    if N > 1:
        bigrams = basics.count_ngrams(sentences, 2)
        assert model.prob("w0", ["<s>"]) == pytest.approx(basics.add_k_prob(("<s>",), "w0", bigrams, k, predictable))
    assert model.prob("<s>", h) == 0


def test_mle_zero_counts_and_fallback():
    sentences = [["a", "b"], ["a", "c"], ["b"]]
    model = MLE(2).fit(sentences)
    assert model.prob("b", ["a"]) == pytest.approx(0.5)  # c(a b) / c(a .)
    assert model.prob("a", ["a"]) == 0  # seen context, unseen continuation
    assert model.prob("a", ["</s>"]) == pytest.approx(2 / 8)  # never-followed context: unigram c(a)/8
    assert model.prob("a", ["zzz"]) == pytest.approx(2 / 8)  # unknown word as context: <unk> never seen
    assert model.logprob([["a", "a"]]) == -math.inf
    assert model.perplexity([["a", "a"]]) == math.inf
    assert model.perplexity(sentences) == pytest.approx(basics.perplexity(model.token_logprobs(sentences)))
    assert MLE(1).fit(sentences).prob("<unk>") == 0


def test_absolute_discounting_default_discount():
    sentences = markov_corpus(9, n_sentences=400, n_words=200)
    model = AbsoluteDiscounting(3).fit(sentences)
    for n in (1, 2, 3):
        c = Counter(basics.count_ngrams(sentences, n).values())
        assert model.D_[n - 1] == pytest.approx([c[1] / (c[1] + 2 * c[2])] * 3)
    assert kn_discount(np.array([4, 2, 0, 0])) == pytest.approx(0.5)


@pytest.mark.parametrize("method", ["mle", "addk", "abs", "kn", "mkn"])
@pytest.mark.parametrize("N", [1, 2, 3, 4, 5])
def test_every_next_distribution_sums_to_one(method, N):
    sentences = markov_corpus(10, n_sentences=300, n_words=40)
    options = {"mkn": {"discounts": (0.5, 1.0, 1.5)}, "abs": {"discounts": 0.7}, "kn": {"discounts": 0.8}}
    model = make_model(method, N, **options.get(method, {})).fit(sentences)
    for h in probe_contexts(model.vocab_, np.random.default_rng(N)):
        p = model.next_distribution(h)
        assert p.shape == (len(model.vocab_),) and p[model.vocab_.bos_id] == 0 and np.all(p >= 0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12), (method, N, h)


# -- the shared API ----------------------------------------------------------------------------


def test_token_sentence_and_corpus_logprobs_agree():
    sentences = markov_corpus(11, n_sentences=30)
    model = ModifiedKneserNey(3, discounts=(0.5, 1.0, 1.5)).fit(sentences)
    test = [["w0", "w1", "unknown"], [], ["w2"]]
    token = model.token_logprobs(test)
    by_hand = []
    for s in test:
        padded = ["<s>", *s, "</s>"]
        by_hand += [math.log(model.prob(padded[i], padded[max(0, i - 2) : i])) for i in range(1, len(padded))]
    np.testing.assert_allclose(token, by_hand, rtol=0, atol=1e-12)
    assert model.sentence_logprobs(test) == pytest.approx([sum(by_hand[:4]), by_hand[4], sum(by_hand[5:])])
    assert model.logprob(test) == pytest.approx(sum(by_hand))
    stream = encode_sentences(test, model.vocab_)
    np.testing.assert_array_equal(model.token_logprobs(stream), token)


def test_perplexity_report_with_and_without_oov():
    sentences = markov_corpus(12, n_sentences=50)
    model = KneserNey(2, discounts=0.7).fit(sentences)
    test = [["w0", "zzz", "w1"], ["yyy"]]
    report = model.evaluate(test)
    logp = model.token_logprobs(test)  # w0 zzz w1 </s> yyy </s>
    oov = np.array([False, True, False, False, True, False])
    assert (report.n_tokens, report.n_oov, report.n_sentences) == (6, 2, 2)
    assert report.perplexity == pytest.approx(basics.perplexity(logp))
    assert report.perplexity_without_oov == pytest.approx(basics.perplexity(logp[~oov]))
    assert model.perplexity(test, include_oov=False) == report.perplexity_without_oov
    assert "Perplexity excluding OOVs" in str(report)


def test_fit_on_stream_equals_fit_on_sentences():
    sentences = markov_corpus(13, n_sentences=40)
    vocab = Vocab.build(sentences)
    a = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(sentences)
    b = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(encode_sentences(sentences, vocab), vocab)
    np.testing.assert_array_equal(a.token_logprobs(sentences), b.token_logprobs(sentences))


def test_prob_accepts_ids_and_tokens():
    model = MLE(2).fit([["a", "b"], ["a"]])
    a, b = model.vocab_["a"], model.vocab_["b"]
    assert model.prob(b, [a]) == model.prob("b", ["a"]) == pytest.approx(0.5)
    np.testing.assert_allclose(model.prob(np.array([[a, b]]), ["<s>"]), [[1.0, 0.0]])


def test_sample_is_reproducible_and_in_vocabulary():
    sentences = markov_corpus(14, n_sentences=100)
    model = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(sentences)
    first = model.sample(5, rng=0, max_len=20)
    assert first == model.sample(5, rng=np.random.default_rng(0), max_len=20)
    assert len(first) == 5 and all(len(s) <= 20 and set(s) <= set(model.vocab_.itos) - {"<s>", "</s>"} for s in first)
    mle = MLE(2).fit([["a", "b", "c"]])
    assert mle.sample(3, rng=1) == [["a", "b", "c"]] * 3  # a deterministic chain


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [MLE, AddK, AbsoluteDiscounting, KneserNey, ModifiedKneserNey])
def test_bad_order(cls):
    for order in (0, -2):
        with pytest.raises(ValueError, match="order"):
            cls(order)
    for order in (2.5, "3", True):
        with pytest.raises(TypeError, match="order"):
            cls(order)


@pytest.mark.parametrize("cls", [MLE, AddK, KneserNey])
def test_empty_corpus(cls):
    with pytest.raises(ValueError, match="empty"):
        cls(2).fit([])
    with pytest.raises(ValueError, match="empty"):
        cls(2).fit([[], []])
    with pytest.raises(ValueError, match="empty"):
        cls(2).fit(np.array([], dtype=np.int64), Vocab())


def test_bad_discounts_and_k():
    for bad in (1.5, -0.1, [0.5, 2.0]):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            KneserNey(2, discounts=bad)
    with pytest.raises(ValueError, match=r"^discounts must be finite, got nan$"):
        KneserNey(2, discounts=float("nan"))
    with pytest.raises(ValueError, match="one per order"):
        AbsoluteDiscounting(2, discounts=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="0 <= D_r <= r"):
        ModifiedKneserNey(2, discounts=(0.5, 2.5, 1.0))
    with pytest.raises(ValueError, match="triple"):
        ModifiedKneserNey(2, discounts=(0.5, 1.0))
    with pytest.raises(TypeError, match="real numbers"):
        ModifiedKneserNey(2, discounts="0.5 1 1.5")
    for k in (0, -1.0):
        with pytest.raises(ValueError, match="k must be"):
            AddK(2, k=k)
    with pytest.raises(TypeError):
        AddK(2, k="one")
    with pytest.raises(ValueError, match=r"method must be one of \['abs', 'addk', 'kn', 'mkn', 'mle'\]"):
        make_model("witten-bell", 3)


def test_bad_ids_and_streams():
    model = MLE(2).fit([["a", "b"]])
    with pytest.raises(ValueError, match=r"must hold token ids in \[0, \d+\] \(a vocabulary of \d+\)"):
        model.prob(99, ["a"])
    with pytest.raises(ValueError, match=r"must hold token ids in \[0, \d+\] \(a vocabulary of \d+\)"):
        model.token_logprobs(np.array([1, 3, 99, 2]))
    with pytest.raises(ValueError, match="start with <s>"):
        model.token_logprobs(np.array([3, 4, 2]))
    with pytest.raises(TypeError, match="integer"):
        model.token_logprobs(np.array([1.0, 3.0, 2.0]))
    with pytest.raises(TypeError, match="vocab"):
        MLE(2).fit(np.array([1, 3, 2]))
    with pytest.raises(TypeError, match="str"):
        MLE(2).fit("a b c")
    with pytest.raises(RuntimeError, match="not fitted"):
        MLE(2).prob("a")
