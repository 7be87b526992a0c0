"""The finite-difference gradient checker on known functions, the Elman reference and torch modules."""

import numpy as np
import pytest
import torch

import seqlearn.rnn as rnn
from seqlearn.gradcheck import (
    GradcheckReport,
    check_gradients,
    check_module_gradients,
    numerical_gradient,
    relative_error,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def quadratic(params):
    """f(A, b) = sum(sin(A)) * |b|^2 / 2 + b . A[0]"""
    A, b = params["A"], params["b"]
    return np.sin(A).sum() * 0.5 * b @ b + b @ A[0]


def quadratic_grads(params):
    A, b = params["A"], params["b"]
    dA = np.cos(A) * 0.5 * (b @ b)
    dA[0] += b
    return {"A": dA, "b": np.sin(A).sum() * b + A[0]}


@pytest.fixture
def point():
    rng = np.random.default_rng(0)
    return {"A": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)}


def test_numerical_gradient_of_known_function(point):
    numeric = numerical_gradient(quadratic, point)
    exact = quadratic_grads(point)
    for name, (indices, values) in numeric.items():
        np.testing.assert_array_equal(indices, np.arange(point[name].size))
        np.testing.assert_allclose(values, exact[name].reshape(-1), rtol=1e-8, atol=1e-9)


def test_central_differences_are_exact_on_quadratics():
    M = np.array([[2.0, 1.0], [1.0, 3.0]])
    numeric = numerical_gradient(lambda p: 0.5 * p[0] @ M @ p[0], [np.array([1.0, -2.0])], eps=1e-3)
    np.testing.assert_allclose(numeric["0"][1], M @ np.array([1.0, -2.0]), rtol=1e-10)


def test_check_gradients_passes_and_fails(point):
    report = check_gradients(quadratic, point, quadratic_grads(point))
    assert isinstance(report, GradcheckReport)
    assert report.passed(1e-6) and report.worst < 1e-7
    assert report.n_checked == {"A": 12, "b": 4}
    assert "A" in str(report) and "max rel err" in str(report)
    wrong = quadratic_grads(point)
    wrong["A"][1, 2] *= 1.01
    bad = check_gradients(quadratic, point, wrong)
    assert not bad.passed(1e-6)
    assert bad.max_rel_error["A"] == pytest.approx(0.01 / 1.01, rel=1e-4)
    assert bad.max_rel_error["b"] < 1e-7


def test_parameters_are_left_untouched(point):
    before = {k: v.copy() for k, v in point.items()}
    check_gradients(quadratic, point, quadratic_grads(point))
    for k in point:
        np.testing.assert_array_equal(point[k], before[k])


def test_random_subset_of_entries(point):
    report = check_gradients(quadratic, point, quadratic_grads(point), n_entries=5, seed=3)
    assert report.n_checked == {"A": 5, "b": 4}
    indices = report.details["A"][0]
    assert len(set(indices)) == 5 and indices.max() < 12
    again = check_gradients(quadratic, point, quadratic_grads(point), n_entries=5, seed=3)
    np.testing.assert_array_equal(again.details["A"][0], indices)


def test_relative_error():
    np.testing.assert_allclose(relative_error([1.0, 0.0, 2.0], [1.1, 0.0, -2.0]), [0.1 / 1.1, 0.0, 2.0])


@pytest.mark.parametrize("loss", rnn.LOSSES)
@pytest.mark.parametrize("phi", rnn.NONLINEARITIES)
def test_elman_bptt_passes_the_check(phi, loss):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3))
    targets = rng.standard_normal((6, 2)) if loss == "mse" else rng.integers(0, 2, 6)
    params = rnn.init_elman_params(3, 4, 2, rho=1.2, seed=2)

    def f(p):
        _, y = rnn.elman_forward(x, **p, phi=phi)
        return rnn.elman_loss(y, targets, loss)

    report = check_gradients(f, params, rnn.bptt_gradients(x, targets, **params, phi=phi, loss=loss))
    assert report.passed(1e-6), str(report)
    truncated = rnn.truncated_bptt_gradients(x, targets, **params, k1=2, k2=2, phi=phi, loss=loss)
    assert not check_gradients(f, params, truncated).passed(1e-3)


def test_torch_module_check():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    x, y = torch.randn(7, 3, dtype=torch.float64), torch.randn(7, 2, dtype=torch.float64)

    def loss_fn(m):
        return ((m(x) - y) ** 2).mean()

    before = [p.detach().clone() for p in model.parameters()]
    report = check_module_gradients(model, loss_fn)
    assert report.passed(1e-6), str(report)
    assert set(report.n_checked) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    for p, b in zip(model.parameters(), before):
        assert torch.equal(p.detach(), b)
    subset = check_module_gradients(model, loss_fn, n_entries=3)
    assert subset.n_checked["0.weight"] == 3 and subset.n_checked["0.bias"] == 3


def test_torch_rnn_module_check_and_a_wrong_gradient_is_caught():
    torch.manual_seed(1)
    model = torch.nn.RNN(3, 4, batch_first=True).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    assert check_module_gradients(model, lambda m: m(x)[0].pow(2).sum(), n_entries=6).passed(1e-6)

    class Detached(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.tensor([1.5, -0.5], dtype=torch.float64))

        def forward(self):
            return (self.w**2).sum() + self.w.detach().pow(3).sum()  # autograd misses the cube

    assert not check_module_gradients(Detached(), lambda m: m()).passed(1e-3)


def test_bad_input(point):
    with pytest.raises(ValueError, match="no gradient for parameter 'b'"):
        check_gradients(quadratic, point, {"A": point["A"]})
    with pytest.raises(ValueError, match="has shape"):
        check_gradients(quadratic, point, {"A": point["A"], "b": np.zeros(3)})
    with pytest.raises(ValueError, match="eps"):
        numerical_gradient(quadratic, point, eps=0.0)
    with pytest.raises(ValueError, match="n_entries"):
        numerical_gradient(quadratic, point, n_entries=0)
    with pytest.raises(TypeError, match="dict or a list"):
        numerical_gradient(quadratic, np.ones(3))
    with pytest.raises(TypeError, match="float64"):
        check_module_gradients(torch.nn.Linear(2, 1), lambda m: m(torch.ones(2)).sum())
    with pytest.raises(ValueError, match="scalar"):
        check_module_gradients(torch.nn.Linear(2, 2).double(), lambda m: m(torch.ones(2, dtype=torch.float64)))
