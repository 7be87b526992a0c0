"""seqlearn.lowrank.linear: the linear rank-1 network, its latent model and the checks C1-C9 of the brief."""

import numpy as np
import pytest
import torch

from seqlearn.lowrank.linear import (
    FilterTask,
    Phase,
    adam_vectors,
    chain_rule,
    equivalent_overlaps,
    equivalent_vectors,
    exact_step,
    filter_loss,
    filter_task,
    gd_overlaps,
    gd_vectors,
    latent_gradient,
    latent_loss,
    latent_output,
    latent_output_torch,
    network_gradient,
    network_output,
    network_output_torch,
    protocol_adam,
    protocol_gd,
    protocol_label_noise,
    random_vectors,
    solution_set,
    task_phases,
    visible_step,
)
from seqlearn.lowrank.overlaps import INVISIBLE, VISIBLE, gram, index, invariants, overlaps

TASK = filter_task(0.2)  # N = 500 below, dt = 0.05, T = 400: the paper's linear setting
VIS, INV = index(VISIBLE["linear"]), index(INVISIBLE["linear"])
ZM, VU, UU = index(["zm", "vu", "uu"])


@pytest.fixture(scope="module")
def theta1():
    return random_vectors(500, 0)


@pytest.fixture(scope="module")
def sigma2(theta1):
    """theta_2 of the paper: theta_1's visible overlaps, sigma_mu = 0.8, sigma_uu = 2.048."""
    return equivalent_overlaps(overlaps(*theta1))


@pytest.fixture(scope="module")
def gd_and_ode(theta1):
    """Vector GD and the Euler ODE over eta * E = 10, for eta = 5e-3 and 2.5e-3."""
    runs = {}
    for eta in (5e-3, 2.5e-3):
        phases = [Phase(TASK, round(10 / eta))]
        runs[eta] = gd_vectors(theta1, phases, eta=eta), gd_overlaps(overlaps(*theta1), phases, eta=eta, method="ode")
    return runs


def test_filter_task():
    task = filter_task(0.4, dt=0.1, T=5)
    np.testing.assert_array_equal(task.x, [10.0, 0, 0, 0, 0])
    np.testing.assert_allclose(task.y, np.exp(-0.04 * np.arange(5)), rtol=1e-15)
    assert filter_loss(task.y + 1.0, task) == pytest.approx(0.5)
    assert filter_loss(torch.from_numpy(task.y + 1.0), task).item() == pytest.approx(0.5)


def test_latent_model_is_the_closed_form_and_the_network(theta1):
    """f_k = s_zm rho_a^k + (s_zu s_vm / s_vu)(rho_b^k - rho_a^k), and the N-dimensional network agrees."""
    sigma = overlaps(*theta1)
    zm, zu, vm, vu = sigma[VIS]
    k, dt = np.arange(400), 0.05
    rho_a, rho_b = 1 - dt, 1 - dt * (1 - vu)
    closed = zm * rho_a**k + zu * vm / vu * (rho_b**k - rho_a**k)
    np.testing.assert_allclose(latent_output(sigma, TASK), closed, rtol=0, atol=1e-10)
    np.testing.assert_allclose(network_output(theta1, TASK), latent_output(sigma, TASK), rtol=0, atol=1e-13)


def test_latent_model_batched_and_in_torch(theta1, sigma2):
    batch = np.stack([overlaps(*theta1), sigma2, 2 * sigma2])
    f = latent_output(batch, TASK)
    assert f.shape == (3, 400)
    np.testing.assert_array_equal(f[1], latent_output(sigma2, TASK))
    in_torch = latent_output_torch(torch.from_numpy(batch), TASK, device="cpu")
    np.testing.assert_allclose(in_torch.numpy(), f, rtol=0, atol=1e-12)
    np.testing.assert_allclose(latent_loss(batch, TASK), filter_loss(f, TASK), rtol=1e-15)


def test_latent_gradient_equals_autograd_through_the_plain_loop(theta1, sigma2):
    batch = np.stack([overlaps(*theta1), sigma2, 0.5 * sigma2])
    loss, grad = latent_gradient(batch, TASK)
    sigma = torch.tensor(batch, requires_grad=True)
    torch_loss = filter_loss(latent_output_torch(sigma, TASK, device="cpu"), TASK)
    torch_loss.sum().backward()
    np.testing.assert_allclose(loss, torch_loss.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(grad, sigma.grad.numpy(), rtol=0, atol=1e-12)
    assert not grad[:, INV].any()


def test_C1_bptt_equals_the_chain_rule_through_the_overlaps():
    theta = random_vectors(200, 1, nets=2)
    loss, grad_bptt = network_gradient(theta, TASK)
    sigma = overlaps(*np.moveaxis(theta, -2, 0))
    loss_latent, grad_sigma = latent_gradient(sigma, TASK)
    grad_chain = chain_rule(theta, grad_sigma)
    np.testing.assert_allclose(loss, loss_latent, rtol=1e-12)
    assert np.abs(grad_bptt - grad_chain).max() / np.abs(grad_bptt).max() < 1e-10  # measured 1e-15
    # dL/dz = (L_zm m + L_zu u) / N, written out
    m, u = theta[0, 0], theta[0, 1]
    np.testing.assert_allclose(grad_chain[0, 3], (grad_sigma[0, 0] * m + grad_sigma[0, 1] * u) / 200, atol=1e-15)
    # the hand-written BPTT against autograd through the torch network
    theta_t = torch.tensor(theta, requires_grad=True)
    filter_loss(network_output_torch(theta_t, TASK, device="cpu"), TASK).sum().backward()
    np.testing.assert_allclose(theta_t.grad.numpy(), grad_bptt, rtol=0, atol=1e-12 * np.abs(grad_bptt).max())


def test_chain_rule_for_a_loss_of_all_ten_overlaps():
    theta = torch.tensor(random_vectors(30, 2), requires_grad=True)
    w = torch.linspace(-1, 1, 10, dtype=torch.float64)
    (w * overlaps(*theta) ** 2).sum().backward()
    sigma = overlaps(*theta.detach().numpy())
    np.testing.assert_allclose(
        chain_rule(theta.detach().numpy(), 2 * w.numpy() * sigma), theta.grad.numpy(), atol=1e-14
    )


def test_C2_the_exact_map_is_gradient_descent_on_the_vectors(theta1):
    sigma1 = overlaps(*theta1)
    phases = [Phase(TASK, 300)]
    by_map = gd_overlaps(sigma1, phases, eta=5e-3, method="map")
    assert np.abs(gd_vectors(theta1, phases, eta=5e-3).sigma - by_map.sigma).max() < 1e-9  # measured 5e-15
    batch = np.stack([sigma1, equivalent_overlaps(sigma1)])  # a batch of networks runs each on its own
    batched = gd_overlaps(batch, [Phase(TASK, 20)], eta=5e-3)
    np.testing.assert_allclose(batched.sigma[:, 0], by_map.sigma[:21], rtol=0, atol=1e-15)
    np.testing.assert_allclose(batched.loss[:, 0], by_map.loss[:21], rtol=1e-14)
    short = [Phase(TASK, 20)]  # the same with BPTT through the full network
    bptt = gd_vectors(theta1, short, eta=5e-3, gradient="bptt")
    assert np.abs(bptt.sigma - by_map.sigma[:21]).max() < 1e-9


def test_C3_the_euler_ode_follows_gd_to_first_order_in_eta(gd_and_ode):
    deviation = {eta: np.abs(gd.sigma - ode.sigma).max() for eta, (gd, ode) in gd_and_ode.items()}
    assert deviation[5e-3] < 0.02  # measured 8.4e-3
    assert 1.7 < deviation[5e-3] / deviation[2.5e-3] < 2.3  # measured 1.99
    gd, ode = gd_and_ode[5e-3]
    assert np.abs(gd.loss - ode.loss).max() < 0.03  # C3b, measured 1.3e-2 (from 2.5)


def test_C4_gd_converges_onto_the_solution_set(gd_and_ode):
    zm, vu, product = solution_set(0.2, 0.05)
    assert vu == pytest.approx(0.800997, abs=1e-6)
    assert solution_set(0.4, 0.05)[1] == pytest.approx(0.603973, abs=1e-6)
    gd = gd_and_ode[5e-3][0]  # 2000 epochs
    final = gd.sigma[-1]
    assert final[ZM] == pytest.approx(zm, abs=1e-3)
    assert final[VU] == pytest.approx(vu, abs=1e-3)
    assert final[1] * final[2] == pytest.approx(product, abs=1e-3)
    assert gd.loss[-1] < 1e-6  # measured 3e-14
    on_the_set = final.copy()
    on_the_set[VIS] = [zm, 2.0, product / 2.0, vu]
    assert latent_loss(on_the_set, TASK) < 1e-25


def test_C5_I1_is_conserved_by_the_ode_and_drifts_at_order_eta_under_gd(gd_and_ode, theta1):
    I0 = invariants(overlaps(*theta1))
    drift = {}
    for eta, (gd, ode) in gd_and_ode.items():
        assert np.abs(invariants(ode.sigma)[:, 0] - I0[0]).max() < 1e-10  # measured 4e-16
        drift[eta] = abs(invariants(gd.sigma[round(5 / eta)])[0] - I0[0])  # at eta * E = 5
    assert drift[5e-3] < 1e-4  # measured 9.4e-6
    assert 1.7 < drift[5e-3] / drift[2.5e-3] < 2.3
    gd, ode = gd_and_ode[5e-3]
    assert np.abs(invariants(gd.sigma[-1])[1:] - invariants(ode.sigma[-1])[1:]).max() > 1e-6  # I2..I4 differ
    # one step: the change of I1 is exactly (|dz|^2 + |dv|^2 - |dm|^2 - |du|^2) / N
    theta = gd_vectors(theta1, [Phase(TASK, 1)], eta=5e-3).theta
    dm, du, dv, dz = ((theta - theta1) ** 2).sum(-1) / 500
    assert invariants(overlaps(*theta))[0] - I0[0] == pytest.approx(dz + dv - dm - du, abs=1e-12)


def test_C5b_K_drifts_little_and_less_for_smaller_eta(gd_and_ode, theta1):
    def K(theta):
        m, u, v, z = theta
        return np.outer(z, z) + np.outer(v, v) - np.outer(m, m) - np.outer(u, u)

    K0 = K(theta1)
    drift = {eta: np.linalg.norm(K(gd.theta) - K0) / np.linalg.norm(K0) for eta, (gd, _) in gd_and_ode.items()}
    assert drift[5e-3] < 1e-2  # measured 2.8e-3 in the brief
    assert drift[2.5e-3] < 0.7 * drift[5e-3]


def test_C6_functionally_equivalent_networks_learn_differently(theta1, sigma2):
    sigma1 = overlaps(*theta1)
    np.testing.assert_array_equal(sigma2[VIS], sigma1[VIS])
    assert sigma2[index(["mu", "uu"])].tolist() == [0.8, 2.048]
    theta2 = equivalent_vectors(theta1, rng=1)
    np.testing.assert_allclose(overlaps(*theta2), sigma2, rtol=0, atol=1e-12)
    assert np.abs(network_output(theta1, TASK) - network_output(theta2, TASK)).max() < 1e-12
    one, two = (gd_overlaps(s, [Phase(TASK, 300)], eta=5e-3) for s in (sigma1, sigma2))
    assert abs(one.loss[0] - two.loss[0]) < 1e-12
    assert np.abs(one.loss - two.loss).max() > 0.5  # measured 1.17
    assert np.abs(one.sigma[:, VIS] - two.sigma[:, VIS]).max() > 0.3  # measured 0.79


def test_C7_a_b_a_under_gd_returns_close_to_its_first_visit(sigma2):
    run = protocol_gd(sigma2, c_stars=(0.2, 0.4, 0.2), epochs=(3000, 2000, 2000), eta=5e-3)
    A1, B, A2 = (run.sigma[e] for e in run.ends)
    assert run.ends == (3000, 5000, 7000)
    assert run.loss[run.ends[0]] < 1e-8 and run.loss[run.ends[2]] < 1e-8
    excursion = np.abs(B - A1).max()  # measured 0.197
    assert np.abs(A2 - A1).max() < 0.02  # measured 2.9e-3
    assert np.abs(A2 - A1).max() < 0.1 * excursion


def test_C8_label_noise_slides_the_invisible_overlaps_along_the_solution_set(sigma2):
    run = protocol_label_noise(sigma2, c_star=0.2, epochs=(3000, 4000), noise=0.1, eta=5e-3, rng=0)
    A1 = run.sigma[run.ends[0]]
    late = run.sigma[-1000:].mean(0) - A1  # the noisy phase's last 1000 epochs, on average
    assert np.abs(late[INV]).max() > 0.1  # sigma_uu, measured -0.22
    assert np.abs(late[[ZM, VU]]).max() < 5e-3  # measured 2.2e-3
    SGamma = np.diag([1.0, 1, -1, -1]) @ gram(np.stack([A1, run.sigma[-1]]))
    lowest = np.linalg.eigvals(SGamma).real.min(-1)
    assert lowest[1] - lowest[0] > 0.1  # the invariants break: -2.47 -> -2.18
    control = protocol_label_noise(sigma2, epochs=(3000, 4000), noise=0.0, eta=5e-3)
    assert np.abs(control.sigma[-1] - control.sigma[control.ends[0]]).max() < 1e-8  # measured 1.2e-9


def test_C9_adam_drifts_in_the_invisible_overlaps_where_gd_does_not():
    theta2 = equivalent_vectors(random_vectors(200, 0), rng=1)
    config = {"c_stars": (0.2, 0.4, 0.2, 0.4, 0.2), "epochs": (2000, 1000, 1000, 1000, 1000), "dt": 0.1, "T": 200}
    adam = protocol_adam(theta2, lr=1e-3, device="cpu", **config)
    gd = protocol_gd(overlaps(*theta2), eta=5e-3, **config)
    adam_A2, adam_A3 = adam.sigma[adam.ends[2]], adam.sigma[adam.ends[4]]
    gd_A2, gd_A3 = gd.sigma[gd.ends[2]], gd.sigma[gd.ends[4]]
    adam_drift, gd_drift = np.abs(adam_A3 - adam_A2)[INV].max(), np.abs(gd_A3 - gd_A2)[INV].max()
    assert adam_drift > 5 * gd_drift  # measured 0.027 vs 0.003
    assert np.abs(adam_A3 - adam_A2)[[ZM, VU]].max() < 1e-3
    assert adam.loss[adam.ends[4]] < 1e-8


def test_adam_by_the_chain_rule_equals_adam_by_autograd():
    theta = random_vectors(50, 3)
    phases = task_phases((0.2, 0.4), (10, 10), dt=0.1, T=100)
    fast = adam_vectors(theta, phases, lr=1e-2, gradient="overlaps", device="cpu")
    plain = adam_vectors(theta, phases, lr=1e-2, gradient="bptt", device="cpu")
    np.testing.assert_allclose(fast.theta, plain.theta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.sigma, plain.sigma, rtol=0, atol=1e-12)


def test_gd_directly_on_the_visible_overlaps_is_not_the_network(theta1, gd_and_ode):
    gd = gd_and_ode[5e-3][0]
    direct = gd_overlaps(overlaps(*theta1), [Phase(TASK, 2000)], eta=5e-3, method="visible")
    np.testing.assert_array_equal(direct.sigma[:, INV], np.broadcast_to(direct.sigma[0, INV], (2001, 6)))
    assert np.abs(direct.loss - gd.loss).max() > 0.3


def test_one_step_of_each_method_agrees_to_first_order(sigma2):
    _, grad = latent_gradient(sigma2, TASK)
    by_map = exact_step(sigma2, grad, 1e-4)
    assert np.abs(by_map - gd_overlaps(sigma2, [Phase(TASK, 1)], eta=1e-4, method="ode").sigma[1]).max() < 1e-6
    np.testing.assert_array_equal(visible_step(sigma2, grad, 0.1)[INV], sigma2[INV])


@pytest.mark.gpu
def test_torch_network_on_cuda_equals_the_cpu(theta1):
    on_cuda = network_output_torch(theta1, TASK, device="cuda").cpu().numpy()
    np.testing.assert_allclose(on_cuda, network_output(theta1, TASK), rtol=0, atol=1e-12)
    theta = random_vectors(100, 1)
    phases = task_phases((0.2,), (20,), dt=0.1, T=100)
    cuda = adam_vectors(theta, phases, gradient="bptt", device="cuda")
    np.testing.assert_allclose(cuda.sigma, adam_vectors(theta, phases, device="cpu").sigma, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: network_output(np.ones((3, 10)), TASK), ValueError, r"theta must have shape \(\.\.\., 4, N\)"),
        (lambda: filter_task(0.2, dt=1.5), ValueError, "dt must be"),
        (lambda: filter_task(-0.1), ValueError, "c_star must be"),
        (lambda: filter_task(0.2, T=2.5), TypeError, "T must be an int"),
        (lambda: FilterTask(np.ones(3), np.ones(4), 0.1), ValueError, r"y must have shape \(3\)"),
        (lambda: latent_output(np.ones(4), TASK), ValueError, r"sigma must have shape \(\.\.\., 10\)"),
        (lambda: exact_step(np.ones(10), np.ones(10), 0.1), ValueError, "invisible entries must be zero"),
        (lambda: exact_step(np.ones(10), np.zeros(10), -0.1), ValueError, "eta must be"),
        (lambda: gd_overlaps(np.ones(10), [Phase(TASK, 1)], eta=-1e-3), ValueError, "eta must be"),
        (lambda: gd_overlaps(np.ones(10), [Phase(TASK, 1)], method="rk4"), ValueError, "method must be one of"),
        (lambda: gd_overlaps(np.ones(10), [(TASK, 1)]), TypeError, "sequence of Phase"),
        (lambda: gd_overlaps(np.ones(10), [Phase(TASK, 1, noise=-1.0)]), ValueError, "noise must be"),
        (lambda: gd_vectors(np.ones((4, 5)), [Phase(TASK, 1)], gradient="adjoint"), ValueError, "gradient must be"),
        (lambda: task_phases((0.2, 0.4), (10,)), ValueError, "one length"),
        (lambda: equivalent_overlaps(np.r_[np.zeros(6), np.ones(4)], mu=2.0), ValueError, "smallest eigenvalue"),
        (lambda: adam_vectors(np.ones((4, 5)), [Phase(TASK, 1)], lr=0.0), ValueError, "lr must be"),
        (lambda: network_output_torch(torch.ones(3, 5), TASK, device="cpu"), ValueError, r"\(\.\.\., 4, N\)"),
        (lambda: latent_output_torch(torch.ones(4), TASK, device="cpu"), ValueError, r"\(\.\.\., 10\)"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
