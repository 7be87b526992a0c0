"""seqlearn.attention.model against independent references: a float64 loop, torch.nn.MultiheadAttention,
the causal mask held by changing later tokens, and the course's language-model evaluation."""

import math

import numpy as np
import pytest
import torch

from seqlearn.attention.model import AttentionLM, CausalSelfAttention, causal_mask
from seqlearn.data import Vocab


def loop_attention(x: np.ndarray, n_h: int, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V) -> tuple[np.ndarray, np.ndarray]:
    """The layer written out one head, one query and one key at a time, in float64 NumPy."""
    B, T, _ = x.shape
    d_k = W_Q.shape[0] // n_h
    out, weights = np.zeros_like(x), np.zeros((B, n_h, T, T))
    for b in range(B):
        for t in range(T):
            contexts = []
            for j in range(n_h):
                rows = slice(j * d_k, (j + 1) * d_k)
                q = W_Q[rows] @ x[b, t] + b_Q[rows]
                keys = [W_K[rows] @ x[b, s] + b_K[rows] for s in range(t + 1)]
                scores = np.array([q @ k / math.sqrt(d_k) for k in keys])
                a = np.exp(scores - scores.max())
                a /= a.sum()
                weights[b, j, t, : t + 1] = a
                contexts.append(sum(a[s] * (W_V[rows] @ x[b, s] + b_V[rows]) for s in range(t + 1)))
            out[b, t] = W_O @ np.concatenate(contexts)
    return out, weights


def with_biases(layer: CausalSelfAttention, seed: int = 0) -> CausalSelfAttention:
    """The layer with nonzero biases (they start at zero), so that a test sees them."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for b in (layer.b_Q, layer.b_K, layer.b_V):
            b.copy_(torch.randn(b.shape, generator=g))
    return layer


@pytest.mark.parametrize(("D", "n_h", "d_k"), [(5, 1, 5), (6, 1, 3), (6, 2, 3), (4, 3, 2)])
def test_the_layer_equals_a_plain_loop_in_float64(D, n_h, d_k):
    layer = with_biases(CausalSelfAttention(D, n_h, d_k, seed=1).double())
    x = torch.randn(2, 7, D, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    out, a = layer(x)
    W = [p.detach().numpy() for p in (layer.W_Q, layer.W_K, layer.W_V, layer.W_O, layer.b_Q, layer.b_K, layer.b_V)]
    ref_out, ref_a = loop_attention(x.numpy(), n_h, *W)
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.detach().numpy(), ref_a, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_h", [1, 2, 4])
def test_the_layer_equals_torch_multihead_attention_with_its_weights(n_h):
    D = 8
    layer = with_biases(CausalSelfAttention(D, n_h, seed=3))
    mha = torch.nn.MultiheadAttention(D, num_heads=n_h, bias=True, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.W_Q, layer.W_K, layer.W_V]))
        mha.in_proj_bias.copy_(torch.cat([layer.b_Q, layer.b_K, layer.b_V]))
        mha.out_proj.weight.copy_(layer.W_O)
        mha.out_proj.bias.zero_()
    x = torch.randn(3, 11, D, generator=torch.Generator().manual_seed(1))
    out, a = layer(x)
    ref_out, ref_a = mha(x, x, x, attn_mask=causal_mask(11), need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(a, ref_a, rtol=1e-5, atol=1e-6)


def test_weights_are_a_distribution_over_the_past_only():
    _, a = CausalSelfAttention(4, 2, seed=0)(torch.randn(2, 6, 4))
    assert a.shape == (2, 2, 6, 6)
    torch.testing.assert_close(a.sum(-1), torch.ones(2, 2, 6))
    assert (a[..., causal_mask(6)] == 0).all() and (a[..., ~causal_mask(6)] > 0).all()
    assert torch.equal(causal_mask(3), torch.tensor([[False, True, True], [False, False, True], [False, False, False]]))


def test_the_layer_gradient_passes_a_float64_finite_difference_check():
    layer = with_biases(CausalSelfAttention(4, 2, seed=2)).double()
    x = torch.randn(1, 4, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: layer(x)[0], (x,))


@pytest.mark.parametrize(("n_layers", "n_heads"), [(1, 1), (2, 2)])
def test_the_causal_mask_holds_changing_later_tokens_changes_nothing_before(n_layers, n_heads):
    model = AttentionLM(20, embedding_dim=8, n_layers=n_layers, n_heads=n_heads, hidden_size=6, max_len=16, seed=0)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        model.p.normal_(generator=g)  # positions matter (they start at zero)
    ids = torch.randint(3, 20, (2, 12), generator=g)
    changed = ids.clone()
    changed[:, 7:] = torch.randint(3, 20, (2, 5), generator=g)
    with torch.no_grad():
        logits, _ = model(ids)
        logits2, _ = model(changed)
    torch.testing.assert_close(logits[:, :7], logits2[:, :7], rtol=0, atol=0)
    assert not torch.allclose(logits[:, 7:], logits2[:, 7:])


def test_the_model_is_scored_sentence_by_sentence_whatever_the_padding():
    """token_logprobs (padded batches of whole sentences) equals each sentence run alone."""
    V = 12
    model = AttentionLM(V, embedding_dim=8, n_layers=2, n_heads=2, hidden_size=4, max_len=10, seed=5)
    sentences = [[3, 4, 5], [6], [7, 8, 9, 10, 11, 3]]
    stream = np.concatenate([[Vocab.bos_id, *s, Vocab.eos_id] for s in sentences])
    got = model.token_logprobs(stream, batch_size=3)
    expected = []
    for s in sentences:
        ids = torch.tensor([[Vocab.bos_id, *s]])
        with torch.no_grad():
            logp = torch.log_softmax(model(ids)[0][0].double(), -1)
        expected += logp[torch.arange(len(s) + 1), torch.tensor([*s, Vocab.eos_id])].tolist()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_same_seed_gives_the_same_model():
    a, b = AttentionLM(10, 8, seed=4), AttentionLM(10, 8, seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.W_xy, AttentionLM(10, 8, seed=5).W_xy)


def test_bad_inputs_are_refused_by_name():
    layer = CausalSelfAttention(4)
    with pytest.raises(TypeError, match="x must be a floating-point"):
        layer(torch.ones(1, 3, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"shape \(B, T, D\) with D = 4"):
        layer(torch.ones(1, 3, 5))
    with pytest.raises(ValueError, match="embedding_dim"):
        CausalSelfAttention(0)
    with pytest.raises(ValueError, match="key_dim"):
        CausalSelfAttention(4, key_dim=0)
    with pytest.raises(ValueError, match="not a multiple of n_heads"):
        CausalSelfAttention(5, n_heads=2)
    with pytest.raises(ValueError, match="n_heads"):
        AttentionLM(10, n_heads=0)
    model = AttentionLM(10, 8, max_len=5)
    with pytest.raises(ValueError, match="position vectors for 1 to 5"):
        model(torch.ones(1, 6, dtype=torch.long))
    with pytest.raises(ValueError, match="integer tensor of shape"):
        model(torch.ones(1, 3))
    with pytest.raises(ValueError, match="carries no state"):
        model(torch.ones(1, 3, dtype=torch.long), torch.zeros(1, 8))
    with pytest.raises(ValueError, match="n_layers"):
        AttentionLM(10, n_layers=0)
    with pytest.raises(TypeError, match="vocab_size"):
        AttentionLM(10.5)
    with pytest.raises(ValueError, match="T"):
        causal_mask(0)
