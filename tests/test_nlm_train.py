import math

import numpy as np
import pytest
import torch

from seqlearn.data.synthetic import ToyEnglish, agreement_accuracy
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.lm import agreement_scorer, perplexity, token_logprobs
from seqlearn.ngram import ModifiedKneserNey
from seqlearn.nlm import (
    BengioNLM,
    EpochParts,
    WindowBatches,
    basics,
    inverse_time_decay,
    make_optimizer,
    nlm_loss,
    parameter_groups,
    train_nlm,
)
from seqlearn.training import fit

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def toy():
    source = ToyEnglish()
    train, val = source.sample(n_tokens=50_000, rng=0), source.sample(n_tokens=10_000, rng=1)
    vocab = Vocab.build(train)
    return encode_sentences(train, vocab), encode_sentences(val, vocab), vocab


def unigram_perplexity(train, val, V):
    """Add-one unigram perplexity, from counts."""
    counts = np.bincount(train[train != Vocab.bos_id], minlength=V)
    p = (counts + 1) / (counts.sum() + V)
    return math.exp(-np.log(p[val[val != Vocab.bos_id]]).mean())


def reference_logprobs(model, stream):
    """log softmax of the NumPy formula at every window, float64."""
    contexts, targets = basics.context_windows(stream, model.order)
    params = {name: p.detach().double().numpy() for name, p in model.named_parameters()}
    y = basics.nlm_logits(contexts, **params)  # (T, |V|)
    log_z = np.log(np.exp(y - y.max(1, keepdims=True)).sum(1)) + y.max(1)
    return y[np.arange(len(targets)), targets] - log_z


def test_training_beats_the_unigram_model(toy):
    train, val, vocab = toy
    model = BengioNLM(len(vocab), 3, 16, 32, seed=0)
    history = train_nlm(model, train, val, epochs=2, batch_size=128, device="cpu", seed=0, progress=False)
    unigram = unigram_perplexity(train, val, len(vocab))
    assert unigram > 50
    assert history.val_perplexity[-1] < 0.3 * unigram  # about 13 against 61
    assert history.val_perplexity == pytest.approx([math.exp(v) for v in history.val_loss])
    # the restored best weights give the best validation perplexity
    assert perplexity(model, val) == pytest.approx(history.best_val_perplexity, rel=1e-5)
    assert history.tokens_per_second > 0 and history.seconds > 0
    # a trigram model sees the subject right before the verb: agreement at distance 0 is easy
    examples = ToyEnglish().agreement_examples(distances=[0], n_per_distance=60, seed=0)
    assert agreement_accuracy(agreement_scorer(model, vocab), examples)[0] > 0.9


def test_sgd_with_the_paper_schedule_learns(toy):
    train, val, vocab = toy
    model = BengioNLM(len(vocab), 3, 16, 32, seed=0)
    history = train_nlm(
        model,
        train,
        val,
        optimizer="sgd",
        lr=1.0,
        lr_decay=1e-3,
        weight_decay=1e-5,
        epochs=1,
        batch_size=128,
        device="cpu",
        progress=False,
    )
    assert history.val_perplexity[0] < 0.4 * unigram_perplexity(train, val, len(vocab))


def test_training_is_reproducible(toy):
    train, _, vocab = toy
    short = train[: np.flatnonzero(train == Vocab.bos_id)[200]]
    runs = []
    for _ in range(2):
        model = BengioNLM(len(vocab), 3, 4, 8, seed=3)
        train_nlm(model, short, None, epochs=1, batch_size=64, device="cpu", seed=1, progress=False)
        runs.append(model.C.detach().clone())
    assert torch.equal(runs[0], runs[1])


def test_parameter_groups_decay_weights_but_not_biases():
    model = BengioNLM(12, 3, 4, 5, seed=0)
    with torch.no_grad():
        model.d.fill_(0.5)
        model.b.fill_(-0.5)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    lr, wd = 0.1, 0.3
    opt = torch.optim.SGD(parameter_groups(model, wd), lr=lr)
    sum(p.sum() for p in model.parameters()).mul(0.0).backward()  # zero data gradient
    opt.step()
    for name, p in model.named_parameters():
        factor = 1.0 if name in ("d", "b") else 1.0 - lr * wd
        assert torch.allclose(p.detach(), factor * before[name]), name
    groups = parameter_groups(model, wd)
    assert [g["weight_decay"] for g in groups] == [wd, 0.0]
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))


def test_make_optimizer():
    model = BengioNLM(12, 3, 4, 5, seed=0)
    adam = make_optimizer(model, "adam", lr=0.01, weight_decay=0.1)
    assert isinstance(adam, torch.optim.Adam) and adam.param_groups[0]["lr"] == 0.01
    assert [g["weight_decay"] for g in adam.param_groups] == [0.1, 0.0]
    assert isinstance(make_optimizer(model, "sgd"), torch.optim.SGD)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        make_optimizer(model, "rmsprop")
    with pytest.raises(ValueError, match="lr"):
        make_optimizer(model, "sgd", lr=-1.0)
    with pytest.raises(ValueError, match="weight_decay"):
        make_optimizer(model, "sgd", weight_decay=float("nan"))


def test_inverse_time_decay_is_stepped_per_update_by_fit():
    eps0, r = 0.2, 0.05
    param = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([param], lr=eps0)
    schedule = inverse_time_decay(opt, r)
    for t in range(4):
        assert opt.param_groups[0]["lr"] == pytest.approx(eps0 / (1 + r * t))
        opt.step()
        schedule.step()
    # through fit: after one epoch of K updates the rate is eps0 / (1 + r K)
    stream = np.array([1, 3, 4, 2, 1, 4, 3, 3, 2] * 10)
    model = BengioNLM(5, 2, 2, 2, seed=0)
    opt = torch.optim.SGD(parameter_groups(model), lr=eps0)
    batches = WindowBatches(stream, 2, batch_size=7, shuffle=True, device="cpu")
    fit(model, nlm_loss, opt, batches, epochs=2, scheduler=inverse_time_decay(opt, r), device="cpu", progress=False)
    K = 2 * len(batches)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([eps0 / (1 + r * K)] * 2)


@pytest.mark.parametrize("direct", [True, False])
def test_token_logprobs_match_the_numpy_formula(toy, direct):
    _, val, vocab = toy
    stream = val[: np.flatnonzero(val == Vocab.bos_id)[60]]
    model = BengioNLM(len(vocab), 4, 6, 9, direct=direct, seed=4)
    want = reference_logprobs(model, stream)
    got = token_logprobs(model, stream, batch_size=37)
    assert got.dtype == np.float64 and got.shape == want.shape == (int((stream != Vocab.bos_id).sum()),)
    np.testing.assert_allclose(got, want, atol=2e-5)
    np.testing.assert_allclose(token_logprobs(model.double(), stream), want, atol=1e-12)
    assert perplexity(model, stream) == pytest.approx(math.exp(-want.mean()), rel=1e-10)


def test_token_logprobs_align_with_kneser_ney_and_keep_the_model_state(toy):
    train, val, vocab = toy
    kn = ModifiedKneserNey(3, fallback_discounts=(0.5, 1, 1.5)).fit(train, vocab)
    model = BengioNLM(len(vocab), 3, 4, 8, seed=0).train()
    nlm = token_logprobs(model, val, device="cpu")
    assert nlm.shape == kn.token_logprobs(val).shape
    assert model.training and all(p.grad is None for p in model.parameters())
    np.testing.assert_allclose(token_logprobs(model, val, batch_size=100_000), nlm, atol=1e-6)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda m, s: train_nlm(m, s, optimizer="adagrad", device="cpu"), ValueError, "optimizer"),
        (lambda m, s: train_nlm(torch.nn.Linear(2, 2), s, device="cpu"), TypeError, "BengioNLM"),
        (lambda m, s: train_nlm(m, s, epochs=0, device="cpu", progress=False), ValueError, "epochs"),
        (lambda m, s: train_nlm(m, s, patience=2, device="cpu"), ValueError, "val_batches"),
        (lambda m, s: train_nlm(m, np.array([], dtype=np.int64), device="cpu"), ValueError, "empty"),
        (lambda m, s: train_nlm(m, s, lr_decay=-1.0, device="cpu"), ValueError, "lr_decay"),
        (lambda m, s: token_logprobs(m, np.array([1, 3, 99, 2])), ValueError, "token id 99"),
        (lambda m, s: token_logprobs(m, np.array([1.0, 3.0, 2.0])), TypeError, "integer"),
        (lambda m, s: perplexity(m, np.array([], dtype=np.int64)), ValueError, "empty"),
    ],
)
def test_bad_input(call, error, words):
    model = BengioNLM(10, 3, 4, 5, seed=0)
    stream = np.array([1, 3, 4, 2, 1, 5, 2])
    with pytest.raises(error, match=words):
        call(model, stream)


def test_agreement_scorer_matches_token_logprobs(toy):
    _, _, vocab = toy
    model = BengioNLM(len(vocab), 4, 5, 6, seed=1)
    sentence = ["the", "dogs", "which", "mary", "saw", "were", "happy"]
    stream = encode_sentences([sentence], vocab)
    want = token_logprobs(model, stream)  # (len(sentence) + 1,)
    score = agreement_scorer(model, vocab)
    for k, word in enumerate([*sentence, "</s>"]):
        assert score(sentence[:k], [word])[0] == pytest.approx(want[k], abs=1e-5)
    assert score(sentence[:2], ["was", "were"]).shape == (2,)


def test_epoch_parts_cover_each_pass_once_in_its_order():
    stream = encode_sentences(ToyEnglish().sample(n_tokens=2_000, rng=3), Vocab.build([list(ToyEnglish.vocabulary())]))
    whole = WindowBatches(stream, 3, batch_size=64, shuffle=True, seed=5)
    parts = EpochParts(WindowBatches(stream, 3, batch_size=64, shuffle=True, seed=5), 4)
    for _ in range(2):  # two passes: each the same batches as a pass of the whole, in the same order
        got = [b for _ in range(4) for b in parts]
        want = list(whole)
        assert len(got) == len(want) and all(torch.equal(g[0], w[0]) for g, w in zip(got, want))
    assert parts.n_targets == whole.n_targets and len(parts) == math.ceil(len(whole) / 4)
    with pytest.raises(ValueError, match="into 1000 parts"):
        EpochParts(whole, 1000)


def test_train_nlm_validates_several_times_per_epoch(toy):
    train, val, vocab = toy
    model = BengioNLM(len(vocab), 3, 10, 16, seed=0)
    history = train_nlm(model, train, val, epochs=2, evals_per_epoch=5, device="cpu", progress=False)
    assert len(history.val_loss) == len(history.train_loss) == 10
    assert history.epochs == pytest.approx([0.2 * i for i in range(1, 11)])
    assert history.evals_per_epoch == 5 and history.tokens_per_epoch == WindowBatches(train, 3).n_targets
    assert history.val_perplexity[0] > history.val_perplexity[-1]
    assert history.best_val_perplexity == pytest.approx(perplexity(model, val), rel=1e-4)  # the best is restored
