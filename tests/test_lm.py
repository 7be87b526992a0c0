"""seqlearn.lm: one evaluation path for the n-gram, neural and recurrent language models."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from seqlearn.data import Vocab, encode_sentences
from seqlearn.data.synthetic import ToyEnglish, agreement_examples
from seqlearn.lm import (
    LMHistory,
    agreement_scorer,
    evaluating,
    fit_lm,
    model_device,
    next_token_logprobs,
    perplexity,
    token_logprobs,
)
from seqlearn.ngram import AddK, ModifiedKneserNey
from seqlearn.ngram import agreement_scorer as ngram_scorer
from seqlearn.nlm import BengioNLM, WindowBatches, nlm_loss
from seqlearn.rnn import RNNLM

pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCE = ["the", "dogs", "which", "mary", "saw", "were", "happy"]


@pytest.fixture(scope="module")
def toy():
    sentences = ToyEnglish().sample(n_tokens=5_000, rng=0)
    vocab = Vocab.build(sentences)
    return encode_sentences(sentences, vocab), vocab


def models(vocab):
    """One language model of each kind, untrained (their scores need not be good to be aligned)."""
    return {
        "NLM": BengioNLM(len(vocab), 4, 5, 6, seed=1),
        "RNN": RNNLM(len(vocab), 5, 6, seed=1),
    }


@pytest.mark.parametrize("kind", ["NLM", "RNN"])
def test_next_token_logprobs_are_the_token_logprobs_of_the_sentence(toy, kind):
    _, vocab = toy
    model = models(vocab)[kind]
    want = token_logprobs(model, encode_sentences([SENTENCE], vocab))  # (len(SENTENCE) + 1,)
    score = agreement_scorer(model, vocab)
    for k, word in enumerate([*SENTENCE, "</s>"]):
        assert score(SENTENCE[:k], [word])[0] == pytest.approx(want[k], abs=1e-5)
    both = score(SENTENCE[:5], ["was", "were"])
    assert both.shape == (2,) and both.dtype == np.float64
    assert both[1] == pytest.approx(want[5], abs=1e-5)


def test_one_scorer_for_the_ngram_models_too(toy):
    stream, vocab = toy
    kn = ModifiedKneserNey(3, fallback_discounts=(0.5, 1.0, 1.5)).fit(stream, vocab)
    ours, theirs = agreement_scorer(kn, vocab), ngram_scorer(kn)
    for ex in agreement_examples(distances=[0, 3], n_per_distance=10, seed=0):
        candidates = [ex.correct, ex.wrong]
        np.testing.assert_allclose(ours(ex.prefix, candidates), theirs(ex.prefix, candidates), rtol=1e-12)
    assert perplexity(kn, stream) == pytest.approx(kn.perplexity(stream), rel=1e-12)


def test_perplexity_is_exp_of_the_mean_negative_logprob(toy):
    stream, vocab = toy
    for model in models(vocab).values():
        logp = token_logprobs(model, stream, batch_size=64)
        assert logp.shape == (int((stream != Vocab.bos_id).sum()),)
        assert perplexity(model, stream) == pytest.approx(math.exp(-logp.mean()), rel=1e-6)


def test_evaluation_keeps_the_training_mode_and_takes_no_gradients(toy):
    stream, vocab = toy
    for model in models(vocab).values():
        model.train()
        token_logprobs(model, stream, device="cpu")
        assert model.training and all(p.grad is None for p in model.parameters())
        with evaluating(model):
            assert not model.training and not torch.is_grad_enabled()
        assert model.training
        assert model_device(model) == torch.device("cpu")


def test_bad_input(toy):
    stream, vocab = toy
    kn = AddK(2, 0.5).fit(stream, vocab)
    with pytest.raises(TypeError, match="language model"):
        perplexity(torch.nn.Linear(2, 2), stream)
    with pytest.raises(TypeError, match="device= is for torch models"):
        token_logprobs(kn, stream, device="cpu")
    with pytest.raises(TypeError, match="Vocab"):
        agreement_scorer(kn, vocab.itos)
    with pytest.raises(ValueError, match="model's Vocab of"):
        agreement_scorer(RNNLM(len(vocab) + 1, 4, 4), vocab)
    with pytest.raises(ValueError, match="<s>"):
        next_token_logprobs(kn, vocab, ["the", "dog"], ["<s>", "was"])


def test_lm_history_in_perplexities_and_tokens_per_second(toy):
    stream, vocab = toy
    model = BengioNLM(len(vocab), 3, 4, 8, seed=0)
    train = WindowBatches(stream, 3, 256, shuffle=True, device="cpu")
    val = WindowBatches(stream, 3, 2048, device="cpu")
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = fit_lm(model, nlm_loss, opt, train, val, epochs=2, device="cpu", progress=False)
    assert isinstance(history, LMHistory) and history.tokens_per_epoch == train.n_targets
    assert history.val_perplexity == pytest.approx([math.exp(v) for v in history.val_loss])
    assert history.train_perplexity == pytest.approx([math.exp(v) for v in history.train_loss])
    assert history.best_val_perplexity == pytest.approx(min(history.val_perplexity))
    assert history.tokens_per_second == pytest.approx(2 * train.n_targets / history.seconds)
    assert math.isnan(LMHistory().tokens_per_second) and LMHistory().best_val_perplexity is None


@pytest.mark.integration
def test_importing_seqlearn_lm_does_not_import_torch():
    code = "import sys, seqlearn.lm, seqlearn.data.streams; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
