"""KenLM as a live peer: it reads seqlearn's ARPA files and scores every token as seqlearn does.

KenLM's Python module (the ``kenlm`` extra) queries ARPA files but cannot estimate, so the
comparison runs one way: for every method that writes a backoff ARPA file, KenLM's
``full_scores`` (log10, float32 inside KenLM) of held-out sentences, with unknown words and
sentence boundaries, must equal seqlearn's ``token_logprobs`` / ln 10 to float32 precision.
KenLM needs at least a bigram model, so order-1 files (add-k) are compared with orders 2+
of the others only. Reading our own files back is exact: same arrays, same scores, bit for bit.
"""

import math

import numpy as np
import pytest

from seqlearn.data.markov import MarkovSource
from seqlearn.ngram import (
    MLE,
    AbsoluteDiscounting,
    JelinekMercer,
    KneserNey,
    ModifiedKneserNey,
    parse_arpa,
    read_arpa,
)

kenlm = pytest.importorskip("kenlm")

RTOL, ATOL = 2e-6, 2e-6
"""float32 precision: KenLM stores log10 values in float32 and adds up to N of them."""


def corpus(seed, n_sentences, n_words=40):
    """Sentences of a first-order Markov source (some empty: ``<s> </s>`` alone)."""
    return MarkovSource(vocab_size=n_words, order=1, mean_length=6.0, seed=seed).sample(
        n_sentences=n_sentences, rng=seed
    )


def held_out():
    """Test sentences with words never seen in training (``w40`` ..., ``zz``), some of them empty."""
    return [*corpus(99, 80, n_words=44), ["zz"], ["w1", "zz", "w1", "w2"]]


METHODS = {
    "mkn": lambda N: ModifiedKneserNey(N, fallback_discounts=(0.5, 1.0, 1.5)),
    "kn": lambda N: KneserNey(N, fallback_discounts=0.7),
    "abs": lambda N: AbsoluteDiscounting(N, fallback_discounts=0.6),
    "mle": lambda N: MLE(N),
    "jm": lambda N: JelinekMercer(N, lambdas=0.6),
}


def kenlm_log10(path, sentences) -> np.ndarray:
    """KenLM's log10 P of every word and </s> of the sentences; shape ``(T,)``."""
    model = kenlm.Model(str(path))
    return np.array([score for s in sentences for score, _, _ in model.full_scores(" ".join(s))])


def compare(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Assert the two agree to float32 precision; -inf (probability 0) is KenLM's -99 per order or less."""
    zero = np.isinf(ours)
    assert np.all(theirs[zero] <= -99)
    np.testing.assert_allclose(theirs[~zero], ours[~zero], rtol=RTOL, atol=ATOL)
    return float(np.abs(theirs[~zero] - ours[~zero]).max())


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("N", [2, 3, 5])
def test_kenlm_scores_our_arpa_like_we_do(tmp_path, method, N):
    model = METHODS[method](N).fit(corpus(N, 400))
    model.to_arpa(tmp_path / "model.arpa")
    test = held_out()
    ours = model.token_logprobs(test) / math.log(10)
    compare(ours, kenlm_log10(tmp_path / "model.arpa", test))


def test_kenlm_scores_a_file_we_read_and_wrote_again(tmp_path):
    METHODS["mkn"](4).fit(corpus(7, 2000)).to_arpa(tmp_path / "a.arpa")
    loaded = read_arpa(tmp_path / "a.arpa")
    loaded.to_arpa(tmp_path / "b.arpa")
    test = held_out()
    compare(loaded.token_logprobs(test) / math.log(10), kenlm_log10(tmp_path / "b.arpa", test))


@pytest.mark.parametrize("method", sorted(METHODS))
def test_our_reader_gives_back_the_fitted_model_bit_for_bit(tmp_path, method):
    model = METHODS[method](4).fit(corpus(11, 500))
    model.to_arpa(tmp_path / "model.arpa")
    tables = parse_arpa(tmp_path / "model.arpa")
    assert tables.vocab == model.vocab_
    for k in range(1, 5):
        np.testing.assert_array_equal(tables.index.keys[k - 1], model.index_.keys[k - 1])
        np.testing.assert_array_equal(tables.log10_p[k - 1], model.tables_.log10_p[k - 1])
        if k < 4:
            np.testing.assert_array_equal(tables.log10_bo[k - 1], model.tables_.log10_bo[k - 1])
    test = held_out()
    np.testing.assert_array_equal(read_arpa(tmp_path / "model.arpa").token_logprobs(test), model.token_logprobs(test))
