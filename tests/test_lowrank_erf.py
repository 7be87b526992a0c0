"""seqlearn.lowrank.erf: the gain by quadrature and Stein's lemma, the full network against a plain loop, the
effective model against the full network (C10) and finite differences, full GD against the overlap ODE (C10b)."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, optimize, special, stats

from seqlearn.lowrank.erf import (
    balanced_init,
    effective_output,
    full_output,
    gain,
    overlap_gradient,
    phi,
    qq_correlation,
    recommended_init,
    recommended_overlaps,
    train_both,
    train_full,
    train_overlaps,
)
from seqlearn.lowrank.memory import decode, logistic_fit, memory_experiment, twin_start
from seqlearn.lowrank.overlaps import index, overlaps, vectors_with_overlaps
from seqlearn.lowrank.tasks import flip_flop, masked_mse

pytestmark = pytest.mark.usefixtures("one_thread")

CPU = "cpu"
DT = 0.05


def _phi_prime(x: np.ndarray) -> np.ndarray:
    """phi'(x) by autograd through seqlearn's phi (not from the closed form)."""
    t = torch.as_tensor(x, dtype=torch.float64).requires_grad_(True)
    (g,) = torch.autograd.grad(phi(t).sum(), t)
    return g.numpy()


def test_gain_is_the_gaussian_average_of_phi_prime_by_quadrature():
    nodes, weights = np.polynomial.hermite.hermgauss(120)  # int f(x) e^{-x^2} dx, exact for smooth f
    for delta in (0.0, 0.05, 0.7, 3.0):
        average = weights @ _phi_prime(math.sqrt(2 * delta) * nodes) / math.sqrt(math.pi)  # <phi'(sqrt(D) xi)>
        assert gain(delta) == pytest.approx(average, rel=1e-10)
    delta = 25.0  # phi'(sqrt(D) xi) is narrow: adaptive quadrature instead of Gauss-Hermite

    def integrand(xi):
        return _phi_prime(math.sqrt(delta) * xi) * stats.norm.pdf(xi)

    average, _ = integrate.quad(integrand, -3.0, 3.0, points=[0.0], epsabs=1e-14)  # e^-176 beyond
    assert gain(delta) == pytest.approx(average, rel=1e-9)
    np.testing.assert_allclose(gain(np.array([0.0, 2.0])), [1.0, 1 / math.sqrt(1 + math.pi)])


def test_steins_lemma_on_sampled_gaussian_vectors():
    sigma = recommended_overlaps()
    sigma[index(["mm", "uu", "mu", "vm", "vu"])] = [1.5, 0.8, 0.4, 0.6, -0.3]
    m, u, v, _ = vectors_with_overlaps(sigma, 400_000, np.random.default_rng(0))
    mm, uu, mu, vm, vu = sigma[index(["mm", "uu", "mu", "vm", "vu"])]
    for kappa_m, kappa_u in [(0.5, 0.0), (1.2, -0.7), (-0.3, 2.0)]:
        h = kappa_m * m + kappa_u * u
        sample = v * special.erf(math.sqrt(math.pi) / 2 * h)
        delta = mm * kappa_m**2 + uu * kappa_u**2 + 2 * mu * kappa_m * kappa_u
        closure = (vm * kappa_m + vu * kappa_u) * gain(delta)
        assert abs(sample.mean() - closure) < 5 * sample.std() / math.sqrt(h.size)  # 5 standard errors


def _plain_network(m, u, v, z, x, dt):
    """The erf network trial by trial with J = u v^T / N formed, NumPy (the readable reference)."""
    N = m.size
    J = np.outer(u, v) / N
    out = np.zeros_like(x)
    for b in range(x.shape[0]):
        h = np.zeros(N)
        for t in range(x.shape[1]):
            r = special.erf(math.sqrt(math.pi) / 2 * h)
            out[b, t] = z @ r / N
            h = h + dt * (-h + J @ r + m * x[b, t])
    return out


def test_full_output_is_the_plain_network_and_batches_over_networks():
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((4, 2, 20)) * 1.5  # (m, u, v, z) x (nets, N)
    x = rng.standard_normal((3, 30))
    got = full_output(*vectors, x, dt=0.1, device=CPU).numpy()
    assert got.shape == (2, 3, 30)
    for n in range(2):
        np.testing.assert_allclose(got[n], _plain_network(*vectors[:, n], x, 0.1), rtol=1e-12, atol=1e-14)
    per_net_x = np.stack([x, -x])  # (nets, B, T): each network its own trials
    np.testing.assert_allclose(
        full_output(*vectors, per_net_x, dt=0.1, device=CPU)[1].numpy(),
        _plain_network(*vectors[:, 1], -x, 0.1),
        rtol=1e-12,
        atol=1e-14,
    )


def test_effective_output_batches_over_networks_and_trials():
    sigma = np.stack([recommended_overlaps(), recommended_overlaps() * 1.3])
    x, _, _ = flip_flop(3, rng=2, dt=DT, t_max=5.0)
    both = effective_output(sigma, x, dt=DT, device=CPU)
    assert both.shape == (2, 3, 100) and both.dtype == torch.float64
    for n in range(2):
        np.testing.assert_allclose(
            both[n].numpy(), effective_output(sigma[n], x, dt=DT, device=CPU).numpy(), rtol=1e-14
        )


def test_effective_model_is_the_full_network_for_large_N_gaussian_vectors():
    """Max |full - effective| output over trials and steps (flip-flop inputs, outputs up to 0.16), seeds 0-2:
    measured 4.7e-3, 4.1e-3, 1.7e-3 at N = 500 and 5.9e-4, 1.1e-3, 4.3e-4 at N = 50,000. The closure's error
    is the O(1/sqrt N) sampling error of the Gaussian averages over the vectors' entries."""
    sigma = recommended_overlaps()
    sigma[index(["mm", "uu", "vu"])] = [1.5, 1.5, 0.9]
    x, _, _ = flip_flop(4, rng=3, dt=DT, t_max=10.0, input_amp=2.0)
    effective = effective_output(sigma, x, dt=DT, device=CPU).numpy()

    def error(N: int, seed: int) -> float:
        vectors = vectors_with_overlaps(sigma, N, np.random.default_rng(seed))
        return np.abs(full_output(*vectors, x, dt=DT, device=CPU).numpy() - effective).max()

    small, large = (np.array([error(N, seed) for seed in range(3)]) for N in (500, 50_000))
    assert large.max() < 3e-3
    assert large.mean() < small.mean() / 2.5  # sqrt(100) = 10 for pure sampling error; measured 4.7


def test_closure_at_init_masked_loss_full_vs_effective_C10():
    """C10: masked flip-flop loss of the full network (N = 600, Cholesky-built vectors with the recommended
    overlaps) against the effective model; measured 0.24108 vs 0.24108 (rel. diff 5e-6), brief 0.23936 vs
    0.23937."""
    rng = np.random.default_rng(0)
    x, y, mask = flip_flop(10, rng=rng, dt=DT)
    vectors = recommended_init(600, rng)
    full = masked_mse(full_output(*vectors, x, dt=DT, device=CPU).numpy(), y, mask)
    effective = masked_mse(effective_output(recommended_overlaps(), x, dt=DT, device=CPU).numpy(), y, mask)
    assert abs(full - effective) / effective < 0.01


def test_overlap_gradient_matches_central_differences_and_ignores_the_invisible():
    sigma = recommended_overlaps()
    batch = flip_flop(3, rng=4, dt=DT, t_max=6.0, stim_range=(1.0, 2.0))
    _, grad = overlap_gradient(sigma, batch, dt=DT, device=CPU)

    def loss(s):
        return float(masked_mse(effective_output(s, batch[0], dt=DT, device=CPU).numpy(), *batch[1:]))

    eps = 1e-6
    numeric = [(loss(sigma + eps * e) - loss(sigma - eps * e)) / (2 * eps) for e in np.eye(10)]
    np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-6, atol=1e-10)
    np.testing.assert_array_equal(grad.numpy()[index(["zv", "vv", "zz"])], 0.0)
    assert np.abs(grad.numpy()[index(["mu", "mm", "uu"])]).max() > 0  # erf: the norms are visible


@pytest.mark.parametrize("sigma_nets, x_nets", [(None, None), (3, None), (None, 3), (3, 3)])
def test_overlap_gradient_equals_autograd_through_the_effective_model(sigma_nets, x_nets):
    """The adjoint recursion against float64 autograd of effective_output, for one sigma or a batch of
    networks, with inputs shared or one set per network, and a mask with holes."""
    rng = np.random.default_rng(7)
    base = recommended_overlaps()
    sigma = base if sigma_nets is None else base * rng.uniform(0.7, 1.3, (sigma_nets, 10))
    x, y, mask = flip_flop(4, rng=rng, dt=DT, t_max=6.0, stim_range=(1.0, 2.0))
    mask = mask * (rng.random(mask.shape) < 0.7)
    if x_nets is not None:
        x = np.stack([x * rng.uniform(0.5, 1.5) for _ in range(x_nets)])
    loss, grad = overlap_gradient(sigma, (x, y, mask), dt=DT, device=CPU)
    s = torch.as_tensor(sigma).requires_grad_(True)
    auto_loss = masked_mse(effective_output(s, x, dt=DT, device=CPU), torch.as_tensor(y), torch.as_tensor(mask))
    (auto_grad,) = torch.autograd.grad(auto_loss.sum(), s)
    assert grad.shape == s.shape and loss.shape == auto_loss.shape
    np.testing.assert_allclose(loss.numpy(), auto_loss.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(grad.numpy(), auto_grad.numpy(), rtol=1e-11, atol=1e-15)


def test_rescaling_u_and_v_changes_no_output_so_the_ode_conserves_uu_minus_vv():
    """u -> a u, v -> v / a leaves J = u v^T / N and the effective model unchanged (sigma_zu, sigma_mu scale by a,
    sigma_vm by 1/a, sigma_uu by a^2), so sigma_zu d_zu - sigma_vm d_vm + sigma_mu d_mu + 2 sigma_uu d_uu = 0:
    the Euler ODE keeps sigma_uu - sigma_vv exactly, and the invisible sigma_vv follows the visible sigma_uu."""
    sigma = recommended_overlaps()
    batch = flip_flop(3, rng=11, dt=DT, t_max=6.0, stim_range=(1.0, 2.0))
    a, rescaled = 1.7, sigma.copy()
    rescaled[index(["zu", "mu", "vm", "uu"])] *= [a, a, 1 / a, a**2]
    np.testing.assert_allclose(
        effective_output(rescaled, batch[0], dt=DT, device=CPU),
        effective_output(sigma, batch[0], dt=DT, device=CPU),
        rtol=1e-12,
        atol=1e-14,
    )
    _, d = overlap_gradient(sigma, batch, dt=DT, device=CPU)
    zu, vm, mu, uu = sigma[index(["zu", "vm", "mu", "uu"])]
    d_zu, d_vm, d_mu, d_uu = d.numpy()[index(["zu", "vm", "mu", "uu"])]
    assert zu * d_zu - vm * d_vm + mu * d_mu + 2 * uu * d_uu == pytest.approx(
        0.0, abs=1e-14 * np.abs(d.numpy()).max() + 1e-16
    )
    run = train_overlaps(sigma, [batch] * 5, eta=0.5, dt=DT, device=CPU)
    balance = run.sigma[:, index(["uu"])[0]] - run.sigma[:, index(["vv"])[0]]
    assert np.ptp(balance) < 1e-14 and np.ptp(run.sigma[:, index(["uu"])[0]]) > 1e-3


def test_full_gd_step_is_minus_N_eta_times_the_vector_gradient():
    m, u, v, z = recommended_init(50, np.random.default_rng(5))
    batch = flip_flop(2, rng=5, dt=DT, t_max=4.0, stim_range=(1.0, 2.0))
    run = train_full(m, u, v, z, [batch], eta=0.1, dt=DT, device=CPU)
    params = [torch.as_tensor(a).requires_grad_(True) for a in (m, u, v, z)]
    loss = masked_mse(full_output(*params, batch[0], dt=DT, device=CPU), *map(torch.as_tensor, batch[1:]))
    grads = torch.autograd.grad(loss, params)
    for after, before, g in zip(run.vectors, params, grads):
        np.testing.assert_allclose(after, before.detach().numpy() - 50 * 0.1 * g.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(run.sigma[-1], overlaps(*run.vectors), rtol=1e-13)
    assert run.loss[0] == pytest.approx(loss.item())


def test_full_gd_follows_the_overlap_ode_on_the_same_batches_C10b():
    """C10b: erf GD at N = 600 against the 10-D Euler ODE, flip-flop dt 0.05, 20 s trials (T = 400), batch 10,
    eta 5e-2, the same 100 batches, recommended init. Measured (seed 0): max overlap deviation 5.1e-3 (brief:
    9.5e-3); final loss 0.0226 (full) vs 0.0237 (ODE), 5 % apart, from 0.241; Q-Q r of the final vectors
    >= 0.998. About 18 s on one core (9 s each; the T = 400 Python steps dominate). With 12 s trials it
    takes 12.5 s but the margins shrink (deviation 0.030, losses 11 % apart), so the test keeps 20 s."""
    rng = np.random.default_rng(0)
    vectors = recommended_init(600, rng)
    batches = [flip_flop(10, rng=rng, dt=DT) for _ in range(100)]
    full, ode = train_both(*vectors, batches, eta=5e-2, dt=DT, device=CPU)
    assert full.sigma.shape == ode.sigma.shape == (101, 10)
    assert np.abs(full.sigma - ode.sigma).max() < 0.05
    assert ode.loss[-1] == pytest.approx(full.loss[-1], rel=0.2)
    assert full.loss[-1] < 0.25 * full.loss[0]  # it left the plateau
    assert qq_correlation(np.stack(full.vectors)).min() > 0.99
    balance = [run.sigma[:, index(["uu"])[0]] - run.sigma[:, index(["vv"])[0]] for run in (ode, full)]
    assert np.ptp(balance[0]) < 1e-12  # exact for Euler (sigma_uu moved 0.70)
    assert np.ptp(balance[1]) < 1e-3  # measured 2.4e-4: GD's O(eta^2) per step


def test_overlap_ode_trains_networks_in_a_batch_like_one_at_a_time():
    sigma = np.stack([recommended_overlaps(), recommended_overlaps() * 1.2])
    batches = [flip_flop(2, rng=s, dt=DT, t_max=4.0, stim_range=(1.0, 2.0)) for s in range(3)]
    both = train_overlaps(sigma, batches, eta=0.05, dt=DT, device=CPU)
    assert both.sigma.shape == (4, 2, 10) and both.loss.shape == (3, 2) and both.vectors is None
    second = train_overlaps(sigma[1], batches, eta=0.05, dt=DT, device=CPU)
    np.testing.assert_allclose(both.sigma[:, 1], second.sigma, rtol=1e-13)


def test_qq_correlation_tells_gaussian_from_uniform_entries():
    rng = np.random.default_rng(6)
    r = qq_correlation(np.stack([rng.standard_normal(600), rng.uniform(-1, 1, 600)]))
    assert r[0] > 0.998 and r[1] < 0.99


def test_inits_have_the_promised_overlaps():
    sigma = overlaps(*recommended_init(600, np.random.default_rng(7)))
    np.testing.assert_allclose(sigma, recommended_overlaps(), atol=1e-12)
    balanced = overlaps(*balanced_init(600, np.random.default_rng(7)))
    zu, vm, mu, zv = balanced[index(["zu", "vm", "mu", "zv"])]
    assert zu == pytest.approx(vm, abs=1e-12) and mu == pytest.approx(zv, abs=1e-12)
    np.testing.assert_allclose(balanced[index(["mm", "uu", "vv", "zz"])], 1.0, atol=1e-12)
    assert np.abs(balanced[index(["zm", "zu", "vm", "vu", "mu", "zv"])]).max() < 0.25  # O(1/sqrt N)


def test_logistic_fit_minimises_the_regularised_log_loss():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((30, 3))
    y = (X @ [1.0, -2.0, 0.5] + 0.8 * rng.standard_normal(30) > 0).astype(float)

    def objective(w):  # C sum log-loss + |w|^2 / 2, intercept unpenalised, C = 1
        z = X @ w[:-1] + w[-1]
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * w[:-1] @ w[:-1]

    expected = optimize.minimize(objective, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(logistic_fit(X, y), expected, atol=1e-6)


def test_decode_is_chance_for_identical_twins_and_perfect_for_separated_ones():
    features = np.random.default_rng(10).standard_normal((1, 6, 3)).repeat(2, axis=0)  # (2, pairs, d)
    np.testing.assert_array_equal(decode(features, rng=0), 0.5)  # twins predicted alike: one right, one wrong
    features[1] += 3.0  # twin B shifted in every feature
    np.testing.assert_array_equal(decode(features, grouped=False, rng=0), 1.0)


def test_memory_experiment_shapes_and_identical_twins_at_the_start():
    run = memory_experiment(3, rng=0, pool=32, batch=4, epochs_ab=3, epochs_c=2, resamples=4, progress=False)
    assert run.sigma.shape == (3, 2, 3, 10) and run.loss.shape == (5, 2, 3)
    np.testing.assert_array_equal(run.twin_difference[0], 0.0)
    assert np.abs(run.twin_difference[1]).max() > 0  # A and B moved the twins apart
    np.testing.assert_array_equal(run.accuracy["start", "visible"], 0.5)
    assert sorted(run.accuracy) == sorted((t, f) for t in ("start", "A/B", "C") for f in ("visible", "invisible"))


def test_memory_experiment_caps_the_step_and_reports_divergence():
    options = {"rng": 0, "pool": 16, "batch": 2, "epochs_c": 1, "resamples": 2, "progress": False}
    capped = memory_experiment(3, epochs_ab=3, max_step=1e-3, **options)
    assert np.abs(capped.sigma[1] - capped.sigma[0]).max() <= 3e-3 + 1e-12  # 3 steps of at most 1e-3
    with pytest.raises(FloatingPointError, match=r"diverged .* of phase A/B"):
        memory_experiment(3, epochs_ab=30, eta_ab=50.0, **options)


def test_twin_start_draws_positive_crosses_and_norms_in_range():
    start = twin_start(200, 1)
    crosses, norms = start[:, index(["zm", "zu", "vm", "vu", "mu", "zv"])], start[:, index(["mm", "uu", "vv", "zz"])]
    assert crosses.min() >= 0 and np.mean(crosses**2) == pytest.approx(0.4**2, rel=0.1)  # |N(0, 0.4^2)|
    assert norms.min() >= 0.5 and norms.max() <= 2.0


@pytest.mark.gpu
def test_effective_output_on_cuda_equals_the_cpu():
    x, _, _ = flip_flop(4, rng=8, dt=DT, t_max=5.0)
    cpu = effective_output(recommended_overlaps(), x, dt=DT, device=CPU)
    cuda = effective_output(recommended_overlaps(), x, dt=DT, device="cuda")
    np.testing.assert_allclose(cuda.cpu().numpy(), cpu.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: effective_output(np.ones(9), np.zeros((2, 3)), device=CPU), ValueError, r"sigma must have shape"),
        (lambda: effective_output(np.ones(10), np.zeros(3), device=CPU), ValueError, r"x must have shape"),
        (lambda: effective_output(np.ones(10), np.zeros((2, 3)), dt=0.0, device=CPU), ValueError, "dt must be"),
        (lambda: full_output(*np.ones((3, 5)), np.ones(4), np.zeros((2, 3)), device=CPU), ValueError, "share a shape"),
        (lambda: full_output(*np.ones((4, 5)), [[np.nan]], device=CPU), ValueError, "x must be finite"),
        (lambda: full_output(*np.ones((4, 5)), np.zeros((2, 3)), device="tpu"), ValueError, "device"),
        (lambda: train_overlaps(np.ones(10), [], eta=0.1, device=CPU), ValueError, "at least one batch"),
        (lambda: train_overlaps(np.ones(10), [], eta=-0.1, device=CPU), ValueError, "eta must be"),
        (lambda: qq_correlation(np.ones(5)), ValueError, "vectors must be 2-D"),
        (lambda: decode(np.ones((3, 4, 2))), ValueError, r"features must have shape \(2, pairs, d\)"),
        (lambda: decode(np.ones((2, 2, 2)), held_out=2), ValueError, "held_out must be"),
        (lambda: memory_experiment(1), ValueError, "pairs must be an int >= 3"),
        (
            lambda: effective_output(torch.ones(10, dtype=torch.int64), np.zeros((1, 2)), device=CPU),
            TypeError,
            "floating",
        ),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, error, match):
    with pytest.raises(error, match=match):
        call()
