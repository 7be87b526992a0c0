import numpy as np
import pytest
import torch

from seqlearn.nlm import BengioNLM, basics, bengio_parameter_count


def params_np(model):
    return {name: p.detach().cpu().double().numpy() for name, p in model.named_parameters()}


def random_contexts(model, B=17, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.vocab_size, (B, model.order - 1), generator=g)


@pytest.mark.parametrize("V, n, m, h", [(10, 2, 1, 1), (37, 3, 5, 8), (200, 5, 30, 64)])
@pytest.mark.parametrize("direct", [True, False])
def test_parameter_count_formula(V, n, m, h, direct):
    model = BengioNLM(V, n, m, h, direct=direct, seed=0)
    counted = sum(p.numel() for p in model.parameters())
    formula = V * (1 + n * m + h) + h * (1 + (n - 1) * m) if direct else V * (1 + m + h) + h * (1 + (n - 1) * m)
    assert model.n_parameters == counted == formula == bengio_parameter_count(V, n, m, h, direct)


def test_parameter_names_and_shapes_follow_the_math():
    V, n, m, h = 13, 4, 3, 6
    model = BengioNLM(vocab_size=V, order=n, embedding_dim=m, hidden_size=h, seed=0)  # torch's argument names
    assert (model.vocab_size, model.order, model.embedding_dim, model.hidden_size) == (V, n, m, h)
    assert bengio_parameter_count(vocab_size=V, order=n, embedding_dim=m, hidden_size=h) == model.n_parameters
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes == {"C": (V, m), "H": (h, (n - 1) * m), "d": (h,), "U": (V, h), "b": (V,), "W": (V, (n - 1) * m)}
    no_direct = BengioNLM(V, n, m, h, direct=False, seed=0)
    assert no_direct.W is None and "W" not in dict(no_direct.named_parameters())


@pytest.mark.parametrize("direct", [True, False])
def test_forward_equals_the_numpy_formula_in_float64(direct):
    model = BengioNLM(23, 4, 5, 7, direct=direct, seed=1).double()
    with torch.no_grad():  # non-zero biases, so that d and b are exercised
        model.d.normal_()
        model.b.normal_()
    contexts = random_contexts(model, B=31)
    got = model(contexts).detach().numpy()
    want = basics.nlm_logits(contexts.numpy(), **params_np(model))
    assert got.shape == (31, 23)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_log_probs_are_a_distribution_and_float32_agrees():
    model = BengioNLM(40, 3, 8, 16, seed=2)
    contexts = random_contexts(model)
    logp = model.log_probs(contexts)
    assert torch.allclose(logp.exp().sum(-1), torch.ones(len(contexts)), atol=1e-5)
    want = basics.nlm_logits(contexts.numpy(), **params_np(model))
    np.testing.assert_allclose(model(contexts).detach().numpy(), want, atol=1e-5)


def test_seeded_initialisation_is_reproducible_and_leaves_the_global_generator_alone():
    state = torch.get_rng_state()
    a, b, c = BengioNLM(30, 3, 4, 5, seed=7), BengioNLM(30, 3, 4, 5, seed=7), BengioNLM(30, 3, 4, 5, seed=8)
    assert torch.equal(torch.get_rng_state(), state)
    for (name, pa), pb, pc in zip(a.named_parameters(), b.parameters(), c.parameters()):
        assert torch.equal(pa, pb)
        if name not in ("d", "b"):
            assert not torch.equal(pa, pc)
    assert torch.all(a.d == 0) and torch.all(a.b == 0)


def test_weights_and_biases_partition_the_parameters():
    model = BengioNLM(30, 3, 4, 5, seed=0)
    assert {id(p) for p in model.weights()} == {id(model.C), id(model.H), id(model.U), id(model.W)}
    assert {id(p) for p in model.biases()} == {id(model.d), id(model.b)}
    assert len(model.weights()) + len(model.biases()) == len(list(model.parameters()))


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(order=1), ValueError),
        (dict(order=0), ValueError),
        (dict(embedding_dim=0), ValueError),
        (dict(hidden_size=0), ValueError),
        (dict(vocab_size=0), ValueError),
        (dict(order=3.0), TypeError),
        (dict(embedding_dim=True), TypeError),
        (dict(direct=1), TypeError),
    ],
)
def test_bad_sizes(kwargs, error):
    args = dict(vocab_size=10, order=3, embedding_dim=4, hidden_size=5) | kwargs
    with pytest.raises(error):
        BengioNLM(**args)


@pytest.mark.parametrize(
    "contexts, error, words",
    [
        (torch.tensor([[1, 10]]), ValueError, "id 10 is outside the vocabulary"),
        (torch.tensor([[-1, 3]]), ValueError, "id -1 is outside"),
        (torch.tensor([[1.0, 2.0]]), TypeError, "int64"),
        (torch.tensor([1, 2]), ValueError, r"shape \(B, n - 1\)"),
        (torch.tensor([[1, 2, 3]]), ValueError, r"\(B, 2\)"),
        (np.array([[1, 2]]), TypeError, "torch tensor"),
    ],
)
def test_bad_contexts(contexts, error, words):
    model = BengioNLM(10, 3, 4, 5, seed=0)
    with pytest.raises(error, match=words):
        model(contexts)


@pytest.mark.gpu
def test_cpu_and_cuda_agree():
    model = BengioNLM(500, 5, 30, 64, seed=0)
    contexts = random_contexts(model, B=256)
    on_cpu = model(contexts).detach()
    on_cuda = model.to("cuda")(contexts.to("cuda")).detach().cpu()
    assert torch.allclose(on_cpu, on_cuda, atol=1e-4, rtol=1e-4)
