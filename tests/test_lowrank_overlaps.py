"""seqlearn.lowrank.overlaps: coordinates, blocks, Gram matrix, metric, invariants."""

import numpy as np
import pytest
import torch

from seqlearn.lowrank.overlaps import (
    INVISIBLE,
    OVERLAPS,
    VISIBLE,
    blocks,
    from_blocks,
    gram,
    index,
    invariants,
    metric,
    ode_step,
    overlaps,
    vectors_with_overlaps,
)

# theta_2 of the brief: visible overlaps of a random init, sigma_mu = 0.8, sigma_uu = 2.048
SIGMA = np.array([0.03, -0.05, 0.04, 0.06, 0.8, 0.02, 1.0, 2.048, 1.0, 1.0])


def _vectors(shape=(), N=50, seed=0):
    return tuple(np.random.default_rng(seed).standard_normal((4, *shape, N)))  # m, u, v, z


def _sigma_by_hand(m, u, v, z):
    vec = {"m": m, "u": u, "v": v, "z": z}
    return np.stack([(vec[a] * vec[b]).sum(-1) / m.shape[-1] for a, b in OVERLAPS], -1)


def _quadratic_grad(sigma, target):
    """dL/dsigma of L = 1/2 |M - M*|^2, a loss of the visible overlaps only (zeros elsewhere)."""
    grad = np.zeros_like(sigma)
    vis = index(VISIBLE["linear"])
    grad[..., vis] = sigma[..., vis] - target
    return grad


def test_names_and_index():
    assert len(OVERLAPS) == len(set(OVERLAPS)) == 10
    assert INVISIBLE["linear"] == ("mu", "zv", "mm", "uu", "vv", "zz")
    assert INVISIBLE["erf"] == ("zv", "vv", "zz")
    for kind in ("linear", "erf"):
        assert sorted(index(VISIBLE[kind]).tolist() + index(INVISIBLE[kind]).tolist()) == list(range(10))
    np.testing.assert_array_equal(index(("vu", "zm", "zz")), [3, 0, 9])


def test_overlaps_are_the_normalised_dot_products_batched_and_in_torch():
    m, u, v, z = _vectors((3, 2))
    sigma = overlaps(m, u, v, z)
    assert sigma.shape == (3, 2, 10)
    np.testing.assert_allclose(sigma, _sigma_by_hand(m, u, v, z), rtol=0, atol=1e-14)
    in_torch = overlaps(*(torch.from_numpy(x) for x in (m, u, v, z)))
    assert isinstance(in_torch, torch.Tensor) and in_torch.dtype == torch.float64
    np.testing.assert_allclose(in_torch.numpy(), sigma, rtol=0, atol=1e-14)


def test_blocks_are_the_products_of_A_and_B_and_from_blocks_inverts_them():
    m, u, v, z = _vectors((2,))
    A, B = np.stack([z, v], -1), np.stack([m, u], -1)  # (2, N, 2)
    M, P, R = blocks(overlaps(m, u, v, z))
    N = m.shape[-1]
    for got, want in ((M, A.mT @ B / N), (P, A.mT @ A / N), (R, B.mT @ B / N)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(from_blocks(M, P, R), overlaps(m, u, v, z))
    back = from_blocks(*(torch.from_numpy(x) for x in (M, P, R)))
    np.testing.assert_array_equal(back.numpy(), overlaps(m, u, v, z))


def test_gram_is_the_gram_matrix_of_z_v_m_u():
    m, u, v, z = _vectors()
    X = np.stack([z, v, m, u])
    np.testing.assert_allclose(gram(overlaps(m, u, v, z)), X @ X.T / m.size, rtol=0, atol=1e-14)


def test_vectors_with_overlaps_round_trip():
    m, u, v, z = vectors_with_overlaps(SIGMA, 200, rng=3)
    assert m.shape == (200,)
    np.testing.assert_allclose(overlaps(m, u, v, z), SIGMA, rtol=0, atol=1e-12)
    again = vectors_with_overlaps(SIGMA, 200, rng=3)
    np.testing.assert_array_equal(again[0], m)


def test_vectors_with_overlaps_refuses_a_gram_matrix_that_is_not_positive_definite():
    bad = SIGMA.copy()
    bad[index(["mu"])] = 1.5  # |sigma_mu| > sqrt(sigma_mm sigma_uu)
    smallest = np.linalg.eigvalsh(gram(bad))[0]
    with pytest.raises(ValueError, match=f"smallest eigenvalue is {smallest:.6g}"):
        vectors_with_overlaps(bad, 100, rng=0)
    with pytest.raises(ValueError, match="N must be"):
        vectors_with_overlaps(SIGMA, 3, rng=0)


def _metric_by_hand(s):
    """The coefficients of the scalar ODE of the brief's section 2.2 (visible columns) and 3 (all)."""
    zm, zu, vm, vu, mu, zv, mm, uu, vv, zz = s
    return np.array(
        [
            [mm + zz, mu, zv, 0, zu, vm, 2 * zm, 0, 0, 2 * zm],
            [mu, uu + zz, 0, zv, zm, vu, 0, 2 * zu, 0, 2 * zu],
            [zv, 0, mm + vv, mu, vu, zm, 2 * vm, 0, 2 * vm, 0],
            [0, zv, mu, uu + vv, vm, zu, 0, 2 * vu, 2 * vu, 0],
            [zu, zm, vu, vm, mm + uu, 0, 2 * mu, 2 * mu, 0, 0],
            [vm, vu, zm, zu, 0, vv + zz, 0, 0, 2 * zv, 2 * zv],
            [2 * zm, 0, 2 * vm, 0, 2 * mu, 0, 4 * mm, 0, 0, 0],
            [0, 2 * zu, 0, 2 * vu, 2 * mu, 0, 0, 4 * uu, 0, 0],
            [0, 0, 2 * vm, 2 * vu, 0, 2 * zv, 0, 0, 4 * vv, 0],
            [2 * zm, 2 * zu, 0, 0, 0, 2 * zv, 0, 0, 0, 4 * zz],
        ]
    )


def test_metric_matches_the_scalar_ode_and_N_D_Dt():
    G = metric(SIGMA)
    np.testing.assert_allclose(G, _metric_by_hand(SIGMA), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(G, G.T)
    assert G[2, 2] == SIGMA[6] + SIGMA[8]  # sigma_mm + sigma_vv
    # N D D^T with D = d sigma / d theta, by autograd on small vectors
    theta = torch.from_numpy(np.stack(_vectors(N=7, seed=1)))
    D = torch.autograd.functional.jacobian(lambda th: overlaps(*th), theta).reshape(10, -1)
    sigma = overlaps(*theta.numpy())
    np.testing.assert_allclose(metric(sigma), 7 * (D @ D.T).numpy(), rtol=0, atol=1e-13)


def test_metric_of_the_visible_block_depends_on_invisible_overlaps_only():
    vis = index(VISIBLE["linear"])
    other = SIGMA.copy()
    other[vis] = [0.9, -0.3, 0.5, 0.7]
    block = np.ix_(vis, vis)
    np.testing.assert_array_equal(metric(other)[block], metric(SIGMA)[block])


def test_metric_batched_and_in_torch():
    batch = np.stack([SIGMA, 2 * SIGMA, SIGMA + 0.1])
    G = metric(batch)
    assert G.shape == (3, 10, 10)
    np.testing.assert_allclose(G[1], 2 * metric(SIGMA), rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric(torch.from_numpy(batch)).numpy(), G, rtol=0, atol=1e-15)


def test_ode_step_is_vector_gradient_descent_to_first_order():
    """An Euler step predicts one vector-GD step (lr N eta) on any loss of the overlaps up to O(eta^2)."""
    N = 40
    theta = torch.from_numpy(np.stack(vectors_with_overlaps(SIGMA, N, rng=2))).requires_grad_()
    w = torch.linspace(-1, 1, 10, dtype=torch.float64)
    loss = (w * overlaps(*theta)).sum() + (overlaps(*theta) ** 2).sum()  # touches all ten overlaps
    (grad_theta,) = torch.autograd.grad(loss, theta)
    sigma = overlaps(*theta.detach()).numpy()
    grad_sigma = (w + 2 * torch.from_numpy(sigma)).numpy()
    errors, steps = [], []
    for eta in (1e-3, 5e-4):
        after_gd = overlaps(*(theta.detach() - N * eta * grad_theta)).numpy()
        errors.append(np.abs(ode_step(sigma, grad_sigma, eta) - after_gd).max())
        steps.append(np.abs(after_gd - sigma).max())
    assert errors[0] < 1e-2 * steps[0]
    assert 3.5 < errors[0] / errors[1] < 4.5  # second order in eta


def test_invariants_formula_and_conservation_under_euler():
    I = invariants(SIGMA)
    mm, uu, vv, zz = SIGMA[index(["mm", "uu", "vv", "zz"])]
    assert I[0] == pytest.approx(zz + vv - mm - uu, abs=1e-15)
    M, P, R = blocks(SIGMA)
    assert I[1] == pytest.approx(np.trace(P @ P) + np.trace(R @ R) - 2 * np.trace(M @ M.T), abs=1e-14)
    np.testing.assert_allclose(invariants(torch.from_numpy(SIGMA)).numpy(), I, rtol=0, atol=1e-14)
    target = np.array([1.0, 0.5, 1.2, 0.3])
    drift = {}
    for eta in (1e-2, 5e-3):
        sigma = SIGMA
        for _ in range(int(2 / eta)):
            sigma = ode_step(sigma, _quadratic_grad(sigma, target), eta)
        drift[eta] = np.abs(invariants(sigma) - I)
    assert drift[5e-3][0] < 1e-12 and drift[1e-2][0] < 1e-12  # I1 is linear in the increments
    assert drift[1e-2][1:].max() > 1e-6  # Euler does not conserve I2..I4 ...
    assert 1.6 < drift[1e-2][1] / drift[5e-3][1] < 2.4  # ... it drifts by O(eta) over a fixed time


def test_invariants_are_those_of_the_O22_action():
    """[A B] -> [A B] Lambda with Lambda S Lambda^T = S leaves the eigenvalues of S Gamma alone."""
    theta = np.stack(vectors_with_overlaps(SIGMA, 30, rng=4))  # m, u, v, z
    boost = np.eye(4)
    boost[np.ix_([0, 2], [0, 2])] = [[np.cosh(0.7), np.sinh(0.7)], [np.sinh(0.7), np.cosh(0.7)]]  # mixes z and m
    X = np.stack([theta[3], theta[2], theta[0], theta[1]], -1) @ boost  # (N, 4): z, v, m, u
    moved = overlaps(X[:, 2], X[:, 3], X[:, 1], X[:, 0])
    assert np.abs(moved - SIGMA).max() > 0.1
    np.testing.assert_allclose(invariants(moved), invariants(SIGMA), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: overlaps(np.ones(5), np.ones(5), np.ones(5), np.ones(4)), ValueError, "same shape"),
        (lambda: overlaps(np.ones(5), np.ones(5), np.ones(5), 1.0), ValueError, r"z must have shape \(\.\.\., N\)"),
        (lambda: overlaps(*[np.ones(0)] * 4), ValueError, "N >= 1"),
        (lambda: gram(np.ones(9)), ValueError, r"sigma must have shape \(\.\.\., 10\), got \(9,\)"),
        (lambda: metric(np.full(10, np.nan)), ValueError, "finite"),
        (lambda: metric("sigma"), TypeError, "real numbers"),
        (lambda: metric(torch.ones(10, dtype=torch.int64)), TypeError, "floating-point"),
        (lambda: blocks(np.ones((3, 4))), ValueError, r"\(\.\.\., 10\)"),
        (lambda: from_blocks(np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 2))), ValueError, r"P must have shape"),
        (lambda: ode_step(SIGMA, SIGMA, -1e-3), ValueError, "eta must be"),
        (lambda: ode_step(SIGMA, SIGMA[:4], 1e-3), ValueError, "grad must have shape"),
        (lambda: vectors_with_overlaps(SIGMA[:4], 10), ValueError, r"sigma must have shape \(10\)"),
        (lambda: index(["zm", "mz"]), ValueError, r"unknown overlap names \['mz'\]"),
        (lambda: index("zm"), TypeError, "sequence of overlap names"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
