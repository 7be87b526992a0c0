"""seqlearn.lm free running: next-token distributions, generation from a prefix, k-step-ahead scores."""

import numpy as np
import pytest

from seqlearn.data import Vocab, encode_sentences
from seqlearn.data.synthetic import ToyEnglish
from seqlearn.lm import generate, k_step_logprobs, next_token_distribution, token_logprobs
from seqlearn.ngram import ModifiedKneserNey
from seqlearn.nlm import BengioNLM

pytestmark = pytest.mark.usefixtures("one_thread")

BOS, EOS = Vocab.bos_id, Vocab.eos_id


@pytest.fixture(scope="module")
def toy():
    sentences = ToyEnglish().sample(n_tokens=3_000, rng=0)
    vocab = Vocab.build(sentences)
    return encode_sentences(sentences, vocab), vocab


class OnlyTokenLogprobs:
    """A language model that offers nothing but ``token_logprobs`` (forces the plain path)."""

    def __init__(self, model):
        self.model = model

    def token_logprobs(self, stream):
        return self.model.token_logprobs(stream)


class Bigram:
    """A bigram model with transition matrix ``A[prev, next]`` (rows sum to 1, ``A[:, <s>] = 0``)."""

    def __init__(self, A):
        self.A, self.vocab_size = A, len(A)

    def token_logprobs(self, stream):
        stream = np.asarray(stream)
        t = np.flatnonzero(stream != BOS)
        return np.log(self.A[stream[t - 1], stream[t]])


def random_bigram(V=6, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((V, V)) ** 2
    A[:, BOS] = 0.0
    return A / A.sum(axis=1, keepdims=True)


def prefixes_of(stream, count=12):
    """Word ids of the first ``count`` sentences, cut at various lengths (0 included)."""
    starts = np.flatnonzero(stream == BOS)
    out = []
    for i, s in enumerate(starts[:count]):
        words = stream[s + 1 : np.flatnonzero(stream[s:] == EOS)[0] + s]
        out.append(words[: i % (len(words) + 1)])
    return out


def test_the_nlm_fast_path_equals_the_plain_path_through_token_logprobs(toy):
    stream, vocab = toy
    model = BengioNLM(len(vocab), 3, 5, 7, seed=2)
    prefixes = prefixes_of(stream)
    fast = next_token_distribution(model, prefixes)
    plain = next_token_distribution(OnlyTokenLogprobs(model), prefixes, vocab_size=len(vocab))
    assert fast.shape == (len(prefixes), len(vocab))
    finite = np.isfinite(plain)
    assert not finite[:, BOS].any() and finite[:, BOS + 1 :].all()
    np.testing.assert_allclose(fast[finite], plain[finite], atol=1e-5)
    np.testing.assert_allclose(np.exp(fast).sum(axis=1), 1.0, atol=1e-5)
    windowed = next_token_distribution(OnlyTokenLogprobs(model), prefixes, vocab_size=len(vocab), window=2)
    np.testing.assert_allclose(windowed, plain, atol=1e-5)


def test_the_plain_path_gives_an_ngram_models_own_next_distribution(toy):
    stream, vocab = toy
    kn = ModifiedKneserNey(3).fit(stream, vocab)
    prefixes = prefixes_of(stream)
    got = np.exp(next_token_distribution(kn, prefixes))
    want = np.stack([kn.next_distribution([BOS, *p]) for p in prefixes])
    np.testing.assert_allclose(got, want, atol=1e-10)


def test_prefixes_and_sizes_are_checked(toy):
    _, vocab = toy
    model = BengioNLM(len(vocab), 3, 5, 7, seed=2)
    with pytest.raises(ValueError, match="no <s> and no </s>"):
        next_token_distribution(model, [[5, EOS]])
    with pytest.raises(ValueError, match=r"must lie in \[0,"):
        next_token_distribution(model, [[len(vocab)]])
    with pytest.raises(ValueError, match="give vocab_size"):
        next_token_distribution(OnlyTokenLogprobs(model), [[5]])
    with pytest.raises(TypeError, match="token_logprobs"):
        next_token_distribution(object(), [[5]], vocab_size=9)


def test_generation_stops_at_the_end_or_never_draws_it():
    model = Bigram(random_bigram())
    ended = generate(model, [[3], [], [4, 5]], 40, rng=0)
    for g in ended:
        assert BOS not in g and (len(g) == 40 or (g[-1] == EOS and EOS not in g[:-1]))
    assert any(len(g) < 40 for g in ended)
    running = generate(model, [[3], [], [4, 5]], 40, rng=0, stop_at_end=False)
    assert all(len(g) == 40 and not np.isin(g, (BOS, EOS)).any() for g in running)


def test_greedy_generation_follows_the_most_probable_chain():
    A = random_bigram(seed=3)
    (g,) = generate(Bigram(A), [[3]], 10, greedy=True, stop_at_end=False)
    A_no_end = A.copy()
    A_no_end[:, EOS] = 0
    w, want = 3, []
    for _ in range(10):
        w = int(A_no_end[w].argmax())
        want.append(w)
    assert g.tolist() == want


def test_sampled_tokens_have_the_models_frequencies():
    A = random_bigram(seed=4)
    first = np.array([g[0] for g in generate(Bigram(A), [[3]] * 20_000, 1, rng=1)])
    freq = np.bincount(first, minlength=len(A)) / len(first)
    np.testing.assert_allclose(freq, A[3], atol=0.015)


def test_k_step_logprobs_with_k_1_are_teacher_forcing(toy):
    stream, vocab = toy
    model = BengioNLM(len(vocab), 3, 5, 7, seed=2)
    np.testing.assert_allclose(k_step_logprobs(model, stream[:400], 1), token_logprobs(model, stream[:400]), atol=1e-5)


def test_k_step_logprobs_are_the_expectation_over_the_models_own_guesses():
    A = random_bigram(V=6, seed=5)
    sentence = [BOS, 3, 4, 5, 3, EOS]
    stream = np.array(sentence * 20_000)  # the same sentence many times: a Monte Carlo mean per position
    got = k_step_logprobs(Bigram(A), stream, 3, rng=2).reshape(20_000, 5)
    assert np.isnan(got[:, :2]).all() and np.isfinite(got[:, 2:]).all()
    # exact: w_t after two free-running steps from the true w_{t-3} (no </s>, no <s> drawn)
    B = A.copy()
    B[:, [BOS, EOS]] = 0
    B /= B.sum(axis=1, keepdims=True)
    words = sentence[1:]  # targets t = 1..5
    for t in range(3, 6):
        start = sentence[t - 3]  # true w_{t-3} (<s> when t = 3)
        want = (B[start] @ B) @ np.log(A[:, words[t - 1]])  # E over the guess of w_{t-1}
        assert got[:, t - 1].mean() == pytest.approx(want, abs=0.03)


def test_the_marginal_over_many_fillings_is_the_k_step_prediction():
    A = random_bigram(V=6, seed=6)
    sentence = [BOS, 4, 3, 5, EOS]
    got = k_step_logprobs(Bigram(A), np.array(sentence), 3, rng=3, n_samples=8_000, marginal=True)
    B = A.copy()
    B[:, [BOS, EOS]] = 0
    B /= B.sum(axis=1, keepdims=True)
    for t in (3, 4):  # P(w_t | w_{t-3}) = (B B A)[w_{t-3}, w_t]
        assert got[t - 1] == pytest.approx(np.log((B @ B @ A)[sentence[t - 3], sentence[t]]), abs=0.04)
    committed = k_step_logprobs(Bigram(A), np.array(sentence), 3, rng=3, n_samples=8_000)
    assert (committed[2:] < got[2:]).all()  # Jensen: the mean log is below the log of the mean
