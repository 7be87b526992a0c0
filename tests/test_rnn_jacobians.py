"""Jacobian products, their norms versus the lag, the gradient regime and the initialisations."""

import numpy as np
import pytest
import torch

import seqlearn.rnn as rnn
from seqlearn.guard import ReferenceCallError, student_code

pytestmark = pytest.mark.usefixtures("one_thread")

PHI_TORCH = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "linear": lambda z: z}


def small_rnn(phi="tanh", T=8, H=4, D=3, seed=0, rho=1.1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D))
    p = rnn.init_elman_params(D, H, 2, rho=rho, seed=seed)
    z = rnn.elman_preactivations(x, p["h0"], p["W_hh"], p["W_xh"], p["b_h"], phi)
    return x, p, z


def torch_state_map(x, p, phi, start, stop):
    """h_start -> h_stop as a torch function (the RNN run from step start + 1 to stop)."""
    W_hh, W_xh, b_h = (torch.tensor(p[k]) for k in ("W_hh", "W_xh", "b_h"))
    x = torch.tensor(x)

    def run(h):
        for t in range(start, stop):
            h = PHI_TORCH[phi](W_hh @ h + W_xh @ x[t] + b_h)
        return h

    return run


def torch_state(x, p, phi, t):
    return torch_state_map(x, p, phi, 0, t)(torch.tensor(p["h0"]))


@pytest.mark.parametrize("phi", rnn.NONLINEARITIES)
def test_step_jacobians_equal_autograd(phi):
    x, p, z = small_rnn(phi)
    J = rnn.step_jacobians(z, p["W_hh"], phi)
    assert J.shape == (8, 4, 4)
    for t in range(1, 9):
        h_prev = torch_state(x, p, phi, t - 1)
        expected = torch.autograd.functional.jacobian(torch_state_map(x, p, phi, t - 1, t), h_prev).numpy()
        np.testing.assert_allclose(J[t - 1], expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("phi", rnn.NONLINEARITIES)
def test_lagged_products_equal_autograd(phi):
    x, p, z = small_rnn(phi)
    J = rnn.step_jacobians(z, p["W_hh"], phi)
    t = 7
    products = rnn.jacobian_products_vs_lag(J, t=t)
    assert products.shape == (8, 4, 4)
    for lag in range(t + 1):
        h_start = torch_state(x, p, phi, t - lag)
        expected = torch.autograd.functional.jacobian(torch_state_map(x, p, phi, t - lag, t), h_start).numpy()
        np.testing.assert_allclose(products[lag], expected, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(rnn.jacobian_product(J, t, lag), expected, rtol=1e-11, atol=1e-13)


def test_products_equal_brute_force_and_norms_and_singular_values():
    rng = np.random.default_rng(1)
    J = rng.standard_normal((6, 3, 3))
    products = rnn.jacobian_products_vs_lag(J)
    brute = [np.eye(3)]
    for lag in range(1, 7):
        brute.append(np.linalg.multi_dot([np.eye(3), *J[6 - lag :][::-1]]))  # J_6 J_5 ... J_{7-lag}
    np.testing.assert_allclose(products, np.array(brute), rtol=1e-12, atol=1e-14)
    norms = rnn.product_norms_vs_lag(J)
    np.testing.assert_allclose(norms, [np.linalg.svd(P, compute_uv=False)[0] for P in brute], rtol=1e-12)
    sv = rnn.product_singular_values_vs_lag(J, max_lag=3)
    assert sv.shape == (4, 3)
    np.testing.assert_allclose(sv, [np.linalg.svd(P, compute_uv=False) for P in brute[:4]], rtol=1e-12, atol=1e-14)
    assert norms[0] == pytest.approx(1.0)


@pytest.mark.parametrize("a", [0.5, 1.0, 1.3])
def test_linear_rnn_with_scaled_orthogonal_matrix_closed_form(a):
    W = rnn.orthogonal_matrix(6, scale=a, seed=3)
    np.testing.assert_allclose(W.T @ W, a**2 * np.eye(6), atol=1e-12)
    z = np.random.default_rng(0).standard_normal((20, 6))
    norms = rnn.product_norms_vs_lag(rnn.step_jacobians(z, W, "linear"))
    np.testing.assert_allclose(norms, a ** np.arange(21), rtol=1e-11)
    assert rnn.spectral_radius(W) == pytest.approx(a, rel=1e-12)
    assert rnn.sigma_max(W) == pytest.approx(a, rel=1e-12)


def test_diagonal_recurrence_closed_form():
    d = np.array([0.9, -0.5, 1.2])
    z = np.random.default_rng(0).standard_normal((10, 3))
    J = rnn.step_jacobians(z, np.diag(d), "tanh")
    t, lag = 9, 5
    phi_prime = 1 - np.tanh(z[t - lag : t]) ** 2  # steps t-lag+1 .. t
    expected = np.diag(d**lag * phi_prime.prod(axis=0))
    np.testing.assert_allclose(rnn.jacobian_product(J, t, lag), expected, rtol=1e-12)
    norms = rnn.product_norms_vs_lag(np.stack([np.diag(d)] * 10))
    np.testing.assert_allclose(norms, np.abs(d).max() ** np.arange(11), rtol=1e-12)


def test_gradient_norm_vs_lag():
    H, L = 16, 30
    for rho, slope_sign in ((0.7, -1), (1.5, 1)):
        W = rnn.orthogonal_matrix(H, scale=rho, seed=1)
        norms = rnn.gradient_norm_vs_lag(W, L, "linear")
        assert norms.shape == (L + 1,)
        np.testing.assert_allclose(norms, rho ** np.arange(L + 1), rtol=1e-10)
        assert np.sign(norms[-1] - norms[0]) == slope_sign
    W = rnn.random_recurrent_matrix(H, 1.5, seed=2)
    tanh_norms = rnn.gradient_norm_vs_lag(W, L, "tanh", input_std=2.0, seed=4)
    linear_norms = rnn.gradient_norm_vs_lag(W, L, "linear", seed=4)
    assert np.all(tanh_norms[1:] < linear_norms[1:])  # |tanh'| <= 1 only shrinks
    x = 2.0 * np.random.default_rng(4).standard_normal((L, H))
    z = rnn.elman_preactivations(x, np.zeros(H), W, np.eye(H), np.zeros(H), "tanh")
    J = rnn.step_jacobians(z, W, "tanh")
    expected = [np.linalg.norm(rnn.jacobian_product(J, L, lag), 2) for lag in range(L + 1)]
    np.testing.assert_allclose(tanh_norms, expected, rtol=1e-12)


def test_vanishing_bound_holds_on_random_sequences():
    W = rnn.random_recurrent_matrix(8, 0.5, seed=0)
    assert rnn.sigma_max(W) < 1
    for seed in range(3):
        norms = rnn.gradient_norm_vs_lag(W, 25, "tanh", seed=seed)
        assert np.all(norms <= rnn.sigma_max(W) ** np.arange(26) * (1 + 1e-12))


def test_gradient_regime():
    Q = rnn.orthogonal_matrix(5, seed=0)
    assert rnn.gradient_regime(0.9 * Q, "tanh") == "vanishing"
    assert rnn.gradient_regime(1.1 * Q, "tanh") == "may explode"
    assert rnn.gradient_regime(Q, "linear") == "boundary"
    assert rnn.gradient_regime(3.9 * Q, "sigmoid") == "vanishing"
    assert rnn.gradient_regime(4.1 * Q, "sigmoid") == "may explode"
    # spectral radius below 1 does not guarantee vanishing: what matters is sigma_max
    W = np.array([[0.5, 3.0], [0.0, 0.5]])
    assert rnn.spectral_radius(W) == pytest.approx(0.5)
    assert rnn.sigma_max(W) > 1
    assert rnn.gradient_regime(W, "tanh") == "may explode"
    assert rnn.exploding_possible(W, "tanh") and not rnn.vanishing_guaranteed(W, "tanh")
    assert rnn.vanishing_guaranteed(W, "sigmoid")
    assert rnn.GAMMA == {"tanh": 1.0, "sigmoid": 0.25, "linear": 1.0}


def test_initialisations():
    for rho in (0.5, 1.0, 2.0):
        W = rnn.random_recurrent_matrix(20, rho, seed=1)
        assert rnn.spectral_radius(W) == pytest.approx(rho, rel=1e-12)
        assert rnn.sigma_max(W) > rho
    assert not np.array_equal(rnn.random_recurrent_matrix(5, 1.0, seed=1), rnn.random_recurrent_matrix(5, 1.0, seed=2))
    np.testing.assert_array_equal(rnn.identity_matrix(3, 0.5), 0.5 * np.eye(3))
    Q = rnn.orthogonal_matrix(7, seed=5)
    np.testing.assert_allclose(Q @ Q.T, np.eye(7), atol=1e-12)


def test_bad_input():
    W = np.eye(3)
    J = np.stack([W] * 5)
    with pytest.raises(ValueError, match="square"):
        rnn.step_jacobians(np.zeros((5, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="z must have shape"):
        rnn.step_jacobians(np.zeros((5, 4)), W)
    with pytest.raises(ValueError, match="NaN"):
        rnn.step_jacobians(np.full((5, 3), np.nan), W)
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        rnn.step_jacobians(np.zeros((5, 3)), W, "relu")
    with pytest.raises(ValueError, match="a lag of 6 reaches before h_0"):
        rnn.product_norms_vs_lag(J, max_lag=6)
    with pytest.raises(ValueError, match="a lag of 4 reaches before h_0"):
        rnn.jacobian_product(J, 3, 4)
    with pytest.raises(ValueError, match="past the end"):
        rnn.jacobian_product(J, 6, 1)
    with pytest.raises(ValueError, match=r"J must have shape \(T, H, H\)"):
        rnn.jacobian_products_vs_lag(np.zeros((5, 3, 2)))
    with pytest.raises(TypeError, match="lag must be an int"):
        rnn.jacobian_product(J, 3, 1.0)
    with pytest.raises(ValueError, match="square"):
        rnn.gradient_regime(np.ones((2, 3)))
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        rnn.gradient_regime(W, "relu")
    with pytest.raises(ValueError, match="rho"):
        rnn.random_recurrent_matrix(3, -1.0)
    with pytest.raises(ValueError, match="max_lag"):
        rnn.gradient_norm_vs_lag(W, 0)


def test_graded_references_refuse_under_grading():
    J = np.stack([np.eye(2)] * 3)
    calls = [
        lambda: rnn.step_jacobians(np.zeros((3, 2)), np.eye(2)),
        lambda: rnn.jacobian_product(J, 3, 2),
        lambda: rnn.product_norms_vs_lag(J),
        lambda: rnn.gradient_regime(np.eye(2)),
    ]
    for call in calls:
        with student_code(), pytest.raises(ReferenceCallError):
            call()
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: rnn.gradient_norm_vs_lag(np.eye(3), 4, "linear"),
        lambda: rnn.sigma_max(np.eye(2)),
        lambda: rnn.vanishing_guaranteed(np.eye(2)),
        lambda: rnn.exploding_possible(np.eye(2)),
        lambda: rnn.jacobian_products_vs_lag(np.stack([np.eye(2)] * 3)),
        lambda: rnn.product_singular_values_vs_lag(np.stack([np.eye(2)] * 3)),
        lambda: rnn.elman_preactivations(np.zeros((3, 2)), np.zeros(2), np.eye(2), np.eye(2), np.zeros(2)),
        lambda: rnn.global_grad_norm([np.ones(3)]),
    ],
)
def test_helpers_that_would_shortcut_an_exercise_refuse_under_grading(call):
    with student_code(), pytest.raises(ReferenceCallError):
        call()
    call()
