"""seqlearn.gated.models: the gated language and task models run through Chapter 3's training,
evaluation and experiments, and equal torch.nn modules with the same weights."""

import numpy as np
import pytest
import torch
from torch import nn

from seqlearn.gated import GatedLM, SequenceGated, gated_layer, input_gradient_norms

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_sequence_model_equals_torch_layer_and_linear_readout(cell):
    model = SequenceGated(3, 5, 2, cell=cell, seed=0).double()
    ref = (nn.LSTM if cell == "lstm" else nn.GRU)(3, 5, batch_first=True).double()
    with torch.no_grad():
        for k, c in enumerate([model.rnn.cells[0]]):
            getattr(ref, f"weight_ih_l{k}").copy_(c.W_ih)
            getattr(ref, f"weight_hh_l{k}").copy_(c.W_hh)
            getattr(ref, f"bias_ih_l{k}").copy_(c.b_ih)
            getattr(ref, f"bias_hh_l{k}").copy_(c.b_hh)
    x = torch.randn(4, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y_ref = ref(x)[0]  # (B, T, H)
    torch.testing.assert_close(model(x), y_ref[:, -1] @ model.W_hy.T + model.b_y, rtol=0, atol=1e-12)
    model.many_to_one = False
    torch.testing.assert_close(model(x), y_ref @ model.W_hy.T + model.b_y, rtol=0, atol=1e-12)


def test_forget_bias_is_an_lstm_option():
    lstm = gated_layer("lstm", 2, 4, forget_bias=1.0, seed=0)
    cell = lstm.cells[0]
    torch.testing.assert_close(cell.b_ih[4:8] + cell.b_hh[4:8], torch.ones(4))
    with pytest.raises(ValueError, match="forget_bias"):
        gated_layer("gru", 2, 4, forget_bias=1.0)
    with pytest.raises(ValueError, match="cell"):
        SequenceGated(2, 4, 1, cell="rnn")


def _toy_streams():
    from seqlearn.data import Vocab, encode_sentences
    from seqlearn.data.synthetic import ToyEnglish

    text = ToyEnglish().sample(n_tokens=2000, rng=0)
    vocab = Vocab.build(text)
    return vocab, encode_sentences(text, vocab)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("bptt", [None, 5])
def test_gated_lm_trains_with_the_rnn_loop_and_is_scored_per_sentence(cell, bptt):
    from seqlearn.lm import perplexity
    from seqlearn.rnn import train_rnn_lm

    vocab, stream = _toy_streams()
    lm = GatedLM(len(vocab), embedding_dim=8, hidden_size=12, cell=cell, seed=0)
    before = perplexity(lm, stream)
    history = train_rnn_lm(lm, stream, None, epochs=2, batch_size=8, bptt=bptt, device="cpu", progress=False)
    assert len(history.train_loss) == 2 and history.train_loss[1] < history.train_loss[0]
    assert perplexity(lm, stream) < before
    # per-sentence scoring resets the state at <s>: the first sentence alone scores the same
    logp = lm.token_logprobs(stream)
    end = int(np.flatnonzero(stream == vocab.bos_id)[1])  # the second <s>
    alone = lm.token_logprobs(stream[:end])
    np.testing.assert_allclose(logp[: len(alone)], alone, rtol=0, atol=1e-5)


def test_truncated_bptt_carries_the_lstm_state_detached():
    from seqlearn.rnn import StreamBatches, TruncatedBPTTLoss

    vocab, stream = _toy_streams()
    lm = GatedLM(len(vocab), 4, 6, seed=0)
    chunks = list(StreamBatches(stream, batch_size=2, k=4))
    loss_fn = TruncatedBPTTLoss()
    loss_fn(lm, chunks[0])
    h, c = loss_fn.state
    assert h.shape == c.shape == (1, 2, 6) and not h.requires_grad and not c.requires_grad
    # the second chunk continues from that state: equal to running both chunks at once
    loss_fn(lm, chunks[1])
    both = torch.cat([chunks[0][0], chunks[1][0]], dim=1)
    _, (h_both, c_both) = lm(both)
    torch.testing.assert_close(loss_fn.state[0], h_both.detach())
    torch.testing.assert_close(loss_fn.state[1], c_both.detach())


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_input_gradient_norms_equal_per_sequence_autograd(cell):
    model = SequenceGated(2, 6, 1, cell=cell, seed=3).double()
    x = torch.randn(3, 9, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    got = input_gradient_norms(model, x)
    expected = torch.zeros(9, dtype=torch.float64)
    for b in range(3):
        J = torch.autograd.functional.jacobian(lambda xb: model(xb[None])[0, 0], x[b])  # (T, D)
        expected += J.norm(dim=1) / 3
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)
    assert model.training  # mode restored


def test_input_gradient_norms_reject_models_with_several_outputs():
    model = SequenceGated(2, 4, 3, seed=0)
    with pytest.raises(ValueError, match="one number per sequence"):
        input_gradient_norms(model, torch.zeros(2, 5, 2))
    with pytest.raises(ValueError, match=r"\(B, T, D\)"):
        input_gradient_norms(model, torch.zeros(5, 2))
