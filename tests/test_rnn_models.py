import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from seqlearn.data.synthetic import ToyEnglish, agreement_accuracy, agreement_examples
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.lm import agreement_scorer, perplexity, token_logprobs
from seqlearn.losses import masked_cross_entropy
from seqlearn.ngram import AddK
from seqlearn.rnn import (
    NONLINEARITIES,
    RNNLM,
    TORCH_NONLINEARITIES,
    ElmanRNN,
    SentenceBatches,
    SequenceRNN,
    StreamBatches,
    TensorBatches,
    TruncatedBPTTLoss,
    activation,
    fit_task,
    recurrent_init,
    rnn_lm_loss,
    train_rnn_lm,
)
from seqlearn.tasks import adding_baseline_mse, adding_problem, copy_baseline_loss, copy_task, one_hot

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def toy():
    te = ToyEnglish()
    train, val = te.sample(n_tokens=50_000, rng=0), te.sample(n_tokens=5_000, rng=1)
    vocab = Vocab.build(train)
    return train, val, vocab, encode_sentences(train, vocab), encode_sentences(val, vocab)


# ----------------------------------------------------------------------------- Elman layer


@pytest.mark.parametrize("fast", [True, False], ids=["fused", "loop"])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_elman_equals_torch_rnn_float64(nonlinearity, fast):
    torch.manual_seed(0)
    ref = torch.nn.RNN(3, 5, nonlinearity=nonlinearity, batch_first=True).double()
    ours = ElmanRNN.from_torch(ref)
    ours.fast = fast
    assert ours.W_xh.dtype == torch.float64
    x, h0 = torch.randn(4, 7, 3, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    h_ref, hT_ref = ref(x, h0[None])
    h, h_T = ours(x, h0)
    torch.testing.assert_close(h, h_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h_T, hT_ref[0], rtol=1e-12, atol=1e-12)
    h_ref.square().sum().backward()
    h.square().sum().backward()
    torch.testing.assert_close(ours.W_hh.grad, ref.weight_hh_l0.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ours.W_xh.grad, ref.weight_ih_l0.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ours.b_h.grad, ref.bias_hh_l0.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu", "sigmoid"])
def test_elman_fused_and_loop_give_the_same_states_and_gradients(nonlinearity):
    """float32, as the chapters train: the fused kernel (tanh, relu) and the Python loop agree."""
    fused = ElmanRNN(2, 16, nonlinearity, seed=0)
    loop = ElmanRNN(2, 16, nonlinearity, seed=0, fast=False)
    x, h0 = torch.randn(8, 30, 2), torch.randn(8, 16)
    (h_f, hT_f), (h_l, hT_l) = fused(x, h0), loop(x, h0)
    torch.testing.assert_close(h_f, h_l, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(hT_f, h_f[:, -1])
    (h_f[:, ::7].sum() + hT_f.square().sum()).backward()
    (h_l[:, ::7].sum() + hT_l.square().sum()).backward()
    for p_f, p_l in zip(fused.parameters(), loop.parameters(), strict=True):
        torch.testing.assert_close(p_f.grad, p_l.grad, rtol=1e-4, atol=1e-5)


def test_linear_elman_is_a_linear_recursion():
    layer = ElmanRNN(2, 3, "linear", seed=0).double()
    x = torch.randn(1, 4, 2, dtype=torch.float64)
    h = torch.zeros(3, dtype=torch.float64)
    for t in range(4):
        h = layer.W_xh @ x[0, t] + layer.W_hh @ h + layer.b_h
    torch.testing.assert_close(layer(x)[1][0], h)


@pytest.mark.parametrize("rho", [0.5, 1.0, 1.3])
def test_recurrent_init_spectral_radius(rho):
    W = recurrent_init(40, "random", rho, seed=1)
    assert torch.linalg.eigvals(W).abs().max().item() == pytest.approx(rho, rel=1e-10)
    Q = recurrent_init(40, "orthogonal", rho, seed=1)
    np.testing.assert_allclose(torch.linalg.svdvals(Q).numpy(), rho, rtol=1e-10)
    torch.testing.assert_close(recurrent_init(4, "identity", rho), rho * torch.eye(4, dtype=torch.float64))
    torch.testing.assert_close(recurrent_init(8, "random", rho, seed=3), recurrent_init(8, "random", rho, seed=3))


def test_torch_nonlinearities_are_the_numpy_ones_and_relu():
    assert set(NONLINEARITIES) <= set(TORCH_NONLINEARITIES)
    assert set(TORCH_NONLINEARITIES) - set(NONLINEARITIES) <= {"relu"}
    z = np.linspace(-4, 4, 17)
    for name in NONLINEARITIES:
        torch_phi = TORCH_NONLINEARITIES[name](torch.from_numpy(z)).numpy()
        np.testing.assert_allclose(torch_phi, activation(z, name), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(TORCH_NONLINEARITIES["relu"](torch.from_numpy(z)).numpy(), np.maximum(z, 0))


@pytest.mark.integration
def test_importing_seqlearn_rnn_does_not_import_torch():
    code = "import sys, seqlearn.rnn; print('torch' in sys.modules, 'RNNLM' in dir(seqlearn.rnn))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_elman_bad_inputs():
    with pytest.raises(ValueError, match="nonlinearity"):
        ElmanRNN(2, 3, "softplus")
    with pytest.raises(ValueError, match="init"):
        ElmanRNN(2, 3, init="xavier")
    with pytest.raises(ValueError, match="rho"):
        recurrent_init(3, "random", -1.0)
    with pytest.raises(TypeError, match="hidden_size"):
        ElmanRNN(2, 3.0)
    layer = ElmanRNN(2, 3, seed=0)
    with pytest.raises(ValueError, match=r"\(B, T, D=2\)"):
        layer(torch.zeros(4, 5, 3))
    with pytest.raises(ValueError, match="h0"):
        layer(torch.zeros(4, 5, 2), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="integer"):
        RNNLM(10, 4, 4, seed=0)(torch.zeros(2, 3))
    with pytest.raises(TypeError, match=r"torch\.nn\.RNN"):
        ElmanRNN.from_torch(torch.nn.RNN(2, 3, num_layers=2))


# ----------------------------------------------------------------------------- batches and loss


def test_sentence_batches_pad_and_mask():
    vocab = Vocab(["a", "b"])
    stream = encode_sentences([["a"], ["a", "b", "a"], ["b", "b"]], vocab)
    batches = SentenceBatches(stream, batch_size=3)
    assert batches.n_targets == 2 + 4 + 3 and len(batches) == 1
    inputs, targets, mask = next(iter(batches))
    assert inputs.shape == targets.shape == mask.shape == (3, 4)
    assert mask.sum(1).tolist() == [2, 3, 4]  # sorted by length
    assert inputs[:, 0].tolist() == [Vocab.bos_id] * 3
    assert (targets[mask] != Vocab.bos_id).all()
    with pytest.raises(ValueError, match="<s>"):
        SentenceBatches(stream[1:])
    with pytest.raises(ValueError, match="outside"):
        SentenceBatches(stream, vocab_size=4)


def test_extra_padding_changes_nothing(toy):
    _, _, vocab, _, val_stream = toy
    model = RNNLM(len(vocab), 8, 16, seed=0)
    inputs, targets, mask = next(iter(SentenceBatches(val_stream, 16)))
    pad = torch.full((16, 5), 7)
    more = (
        torch.cat([inputs, pad], 1),
        torch.cat([targets, pad], 1),
        torch.cat([mask, torch.zeros(16, 5, dtype=torch.bool)], 1),
    )
    with torch.no_grad():
        torch.testing.assert_close(rnn_lm_loss(model, more)[0], rnn_lm_loss(model, (inputs, targets, mask))[0])
    assert perplexity(model, val_stream, batch_size=1) == pytest.approx(
        perplexity(model, val_stream, batch_size=64), rel=1e-6
    )


def test_token_logprobs_aligned_with_ngram_positions(toy):
    train, _, vocab, _, val_stream = toy
    model = RNNLM(len(vocab), 8, 16, seed=0)
    ours = token_logprobs(model, val_stream, batch_size=32)
    kn = AddK(2, 0.5).fit(train, vocab)
    assert ours.shape == kn.token_logprobs(val_stream).shape
    # one sentence at a time, by hand
    predicted = val_stream[val_stream != Vocab.bos_id]
    starts = np.flatnonzero(val_stream == Vocab.bos_id)
    expected, k = [], 0
    with torch.no_grad():
        for s in np.split(val_stream, starts[1:])[:20]:
            logp = torch.log_softmax(model(torch.as_tensor(s[None, :-1]))[0][0].double(), -1)
            expected.extend(logp[np.arange(len(s) - 1), s[1:]].tolist())
            assert (s[1:] == predicted[k : k + len(s) - 1]).all()
            k += len(s) - 1
    np.testing.assert_allclose(ours[: len(expected)], expected, rtol=1e-5, atol=1e-6)


def test_stream_batches_and_truncated_bptt():
    vocab = Vocab(["a", "b", "c"])
    stream = encode_sentences([["a", "b"], ["c"], ["a", "c", "b"]] * 5, vocab)
    batches = StreamBatches(stream, batch_size=2, k=4)
    chunks = list(batches)
    assert len(chunks) == len(batches) and chunks[0][3] and not chunks[1][3]
    x, y, mask, _ = chunks[0]
    assert x.shape == (2, 4) and (y[:, :-1] == x[:, 1:]).all()
    assert (mask == (y != Vocab.bos_id)).all()
    # with k = the whole row, truncated BPTT is plain BPTT over the rows
    model = RNNLM(len(vocab), 4, 6, seed=0)
    whole = next(iter(StreamBatches(stream, batch_size=2, k=10_000)))
    full, _ = TruncatedBPTTLoss()(model, whole)
    logits, _ = model(whole[0])
    torch.testing.assert_close(full, masked_cross_entropy(logits, whole[1], whole[2]))
    # chunks: the state flows on (forward) but no gradient crosses a chunk boundary
    loss_fn = TruncatedBPTTLoss()
    loss_fn(model, chunks[0])
    assert loss_fn.state is not None and not loss_fn.state.requires_grad
    with pytest.raises(ValueError, match="k"):
        StreamBatches(stream, 2, k=0)


def test_tensor_batches_cover_every_sequence_once_per_pass():
    x, y = np.arange(10.0)[:, None, None] * np.ones((10, 3, 2)), np.arange(10)
    batches = TensorBatches(x, y, batch_size=4, shuffle=True, seed=0, device="cpu")
    assert len(batches) == 3
    passes = [[yb.tolist() for _, yb in batches] for _ in range(2)]
    for batch_ys in passes:
        assert [len(b) for b in batch_ys] == [4, 4, 2]
        assert sorted(y for ys in batch_ys for y in ys) == list(range(10))
    assert passes[0] != passes[1]  # a fresh order on each pass
    xb, yb = next(iter(TensorBatches(x, y, batch_size=4, device="cpu")))
    assert yb.tolist() == [0, 1, 2, 3] and torch.equal(xb[:, 0, 0], yb.double())
    with pytest.raises(ValueError, match="same number of sequences"):
        TensorBatches(x, y[:-1], device="cpu")


# ----------------------------------------------------------------------------- learning


def test_rnn_learns_the_adding_problem():
    torch.manual_seed(0)
    x, y = adding_problem(2000, 10, rng=0)
    xv, yv = adding_problem(500, 10, rng=1)
    model = SequenceRNN(2, 32, 1, many_to_one=True, seed=0)
    history = fit_task(model, x, y, xv, yv, loss="mse", lr=1e-2, epochs=15, batch_size=50, device="cpu")
    assert history.best_val_loss < 0.2 * adding_baseline_mse()


def test_copy_task_trains_below_uniform_guessing():
    x, y = copy_task(64, 5, k=3, n_symbols=4, rng=0)
    model = SequenceRNN(6, 16, 5, many_to_one=False, seed=0)
    history = fit_task(model, one_hot(x, 6), y, loss="ce", epochs=2, batch_size=32, device="cpu")
    assert history.train_loss[-1] < math.log(5)
    assert copy_baseline_loss(5, 3, 4) < math.log(5)


def test_rnn_lm_beats_the_unigram_quickly(toy):
    train, _, vocab, train_stream, val_stream = toy
    model = RNNLM(len(vocab), 32, 64, seed=0)
    history = train_rnn_lm(model, train_stream, val_stream, epochs=2, batch_size=32, device="cpu", progress=False)
    assert history.seconds > 0
    unigram = AddK(1, 1.0).fit(train, vocab).perplexity(val_stream)
    assert history.best_val_perplexity < 0.5 * unigram
    assert perplexity(model, val_stream) == pytest.approx(history.best_val_perplexity, rel=1e-4)
    accuracy = agreement_accuracy(
        agreement_scorer(model, vocab), agreement_examples(distances=[0, 1], n_per_distance=20, seed=0)
    )
    assert set(accuracy) == {0, 1} and accuracy[0] > 0.5


def test_truncated_bptt_training_runs(toy):
    _, _, vocab, train_stream, val_stream = toy
    model = RNNLM(len(vocab), 8, 16, seed=0)
    history = train_rnn_lm(
        model, train_stream[:5000], val_stream, epochs=1, batch_size=8, bptt=20, device="cpu", progress=False
    )
    assert history.val_perplexity[0] < len(vocab)


def test_training_bad_inputs(toy):
    _, _, vocab, train_stream, _ = toy
    with pytest.raises(TypeError, match="RNNLM"):
        train_rnn_lm(ElmanRNN(2, 3), train_stream)
    with pytest.raises(TypeError, match="language model"):
        token_logprobs(ElmanRNN(2, 3), train_stream)
    with pytest.raises(ValueError, match="Vocab"):
        agreement_scorer(RNNLM(len(vocab) + 1, 4, 4), vocab)
    with pytest.raises(ValueError, match="loss"):
        fit_task(SequenceRNN(2, 3, 1), np.zeros((2, 3, 2)), np.zeros(2), loss="l1")


@pytest.mark.gpu
def test_forward_agrees_on_cpu_and_cuda():
    model = RNNLM(50, 8, 16, seed=0)
    ids = torch.randint(0, 50, (4, 12), generator=torch.Generator().manual_seed(0))
    cpu, _ = model(ids)
    gpu, _ = model.to("cuda")(ids.to("cuda"))
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-4, atol=1e-4)


def test_sequence_to_one_reads_the_last_real_step():
    from seqlearn.tasks import agreement_task

    vocab = Vocab(ToyEnglish.vocabulary())
    x, lengths, _, _ = agreement_task(vocab, distances=[0, 4], n_per_distance=3, seed=0)
    inputs = torch.as_tensor(one_hot(x, len(vocab)))
    model = SequenceRNN(len(vocab), 8, 2, seed=0)
    out = model(inputs, torch.as_tensor(lengths))
    assert out.shape == (6, 2)
    for i in range(6):
        torch.testing.assert_close(out[i], model(inputs[i : i + 1, : lengths[i]])[0])
    seq = SequenceRNN(len(vocab), 8, 3, many_to_one=False, seed=0)
    assert seq(inputs).shape == (6, x.shape[1], 3)
