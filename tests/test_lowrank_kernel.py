"""seqlearn.lowrank._kernel: the effective model's sweeps against two references (the package's former torch adjoint
recursion, and autograd through a plain torch loop), on several shapes and both reads; the NumPy and numba loops
bit for bit; the sequential overlap update against a plain loop and its broken conservation law."""

import math

import numpy as np
import pytest
import torch

from seqlearn.lowrank import _kernel
from seqlearn.lowrank.erf import effective_output, gain, overlap_gradient, recommended_overlaps, train_overlaps
from seqlearn.lowrank.overlaps import OVERLAPS, UPDATES, index, ode_step, sequential_step, update_step
from seqlearn.lowrank.tasks import flip_flop, masked_mse

pytestmark = pytest.mark.usefixtures("one_thread")

DT = 0.05
VIS = ("zm", "zu", "vm", "vu", "mu", "mm", "uu")


class TorchAdjoint:
    """The package's former adjoint recursion (torch, read before), kept as a reference: states forward, then
    lambda_t = A_t + B_t lambda_{t+1} backwards with A, B from all steps at once."""

    def __init__(self, sigma: torch.Tensor, x: torch.Tensor, dt: float):
        self.dt, self.sigma = dt, sigma
        self.zm, self.zu, self.vm, self.vu, self.mu, self.mm, self.uu = sigma[..., index(VIS), None, None].unbind(-3)
        kappa, k_m = torch.zeros_like(x[..., 0]), torch.empty_like(x)
        for t in range(x.shape[-1]):
            k_m[..., t] = kappa
            kappa = torch.lerp(kappa, x[..., t], dt)
        self.kappa_m = k_m
        kappa_u = torch.zeros_like(self.zm[..., 0] * x[..., 0])
        kappas, gains = [], []
        for t in range(x.shape[-1]):
            delta = (
                self.mm[..., 0] * k_m[..., t] ** 2
                + (2 * self.mu[..., 0] * k_m[..., t] + self.uu[..., 0] * kappa_u) * kappa_u
            )
            G = gain(delta)
            kappas.append(kappa_u)
            gains.append(G)
            kappa_u = torch.lerp(kappa_u, (self.vm[..., 0] * k_m[..., t] + self.vu[..., 0] * kappa_u) * G, dt)
        self.kappa_u, self.G = torch.stack(kappas, -1), torch.stack(gains, -1)
        self.read = self.zm * k_m + self.zu * self.kappa_u
        self.y_hat = self.read * self.G

    def gradient(self, g: torch.Tensor) -> torch.Tensor:
        k_m, k_u, G, dt = self.kappa_m, self.kappa_u, self.G, self.dt
        G_prime = -(math.pi / 4) * G**3
        d_delta = 2 * (self.mu * k_m + self.uu * k_u)
        s = self.vm * k_m + self.vu * k_u
        A = g * G * self.zu + g * self.read * G_prime * d_delta
        B = 1 - dt + dt * (self.vu * G + s * G_prime * d_delta)
        lam, later = torch.zeros_like(A[..., 0]), []
        for t in reversed(range(A.shape[-1])):
            later.append(lam)
            lam = A[..., t] + B[..., t] * lam
        lam_next = torch.stack(later[::-1], -1)
        w = (g * self.read + dt * lam_next * s) * G_prime
        parts = [g * G * k_m, g * G * k_u, dt * lam_next * G * k_m, dt * lam_next * G * k_u]
        parts += [2 * w * k_m * k_u, w * k_m**2, w * k_u**2]
        grad = torch.zeros_like(self.sigma)
        for name, part in zip(VIS, parts):
            total = part.sum((-2, -1))
            grad[..., OVERLAPS.index(name)] = total if total.ndim < self.sigma.ndim else total.sum(0)
        return grad


def torch_loop(sigma: torch.Tensor, x: torch.Tensor, dt: float, after: bool) -> torch.Tensor:
    """The effective model as a plain torch loop (autograd's graph), output read before or after each update."""
    zm, zu, vm, vu, mu, mm, uu = sigma[..., index(VIS), None].unbind(-2)
    k_m = k_u = torch.zeros_like(zm * x[..., 0])
    out = []
    for t in range(x.shape[-1]):
        G = 1 / torch.sqrt(1 + math.pi / 2 * (mm * k_m**2 + uu * k_u**2 + 2 * mu * k_m * k_u))
        k_u_next = k_u + dt * ((vm * k_m + vu * k_u) * G - k_u)
        k_m_next = k_m + dt * (x[..., t] - k_m)
        out.append((zm * (k_m_next if after else k_m) + zu * (k_u_next if after else k_u)) * G)
        k_m, k_u = k_m_next, k_u_next
    return torch.stack(out, -1)


def _case(sigma_nets, x_nets, seed=7, T_max=6.0):
    rng = np.random.default_rng(seed)
    base = recommended_overlaps()
    sigma = base if sigma_nets is None else base * rng.uniform(0.7, 1.3, (sigma_nets, 10))
    x, y, mask = flip_flop(5, rng=rng, dt=DT, t_max=T_max, stim_range=(1.0, 2.0))
    mask = mask * (rng.random(mask.shape) < 0.7)  # holes
    if x_nets is not None:
        x = np.stack([x * rng.uniform(0.5, 1.5) for _ in range(x_nets)])
    return sigma, x, y, mask


def _autograd(sigma, x, y, mask, after):
    s = torch.as_tensor(sigma).requires_grad_(True)
    loss = masked_mse(torch_loop(s, torch.as_tensor(x), DT, after), torch.as_tensor(y), torch.as_tensor(mask))
    (grad,) = torch.autograd.grad(loss.sum(), s)
    return loss.detach().numpy(), grad.numpy()


SHAPES = [(None, None), (3, None), (None, 3), (3, 3)]


@pytest.mark.parametrize("engine", _kernel.ENGINES)
@pytest.mark.parametrize("sigma_nets, x_nets", SHAPES)
def test_overlap_gradient_equals_the_former_adjoint_and_autograd(engine, sigma_nets, x_nets, monkeypatch):
    """One sigma or a batch of networks, inputs shared or one set per network, a mask with holes: the kernel's loss
    and gradient against the former torch adjoint and against autograd, to 1e-12 relative (measured <= 1e-15)."""
    monkeypatch.setenv("SEQLEARN_NUMBA", "1" if engine == "numba" else "0")
    sigma, x, y, mask = _case(sigma_nets, x_nets)
    loss, grad = (a.numpy() for a in overlap_gradient(sigma, (x, y, mask), dt=DT, device="cpu"))
    run = TorchAdjoint(torch.as_tensor(sigma), torch.as_tensor(x), DT)
    y_t, mask_t = torch.as_tensor(y), torch.as_tensor(mask)
    former = run.gradient(2 * mask_t * (run.y_hat - y_t) / mask_t.sum((-2, -1))[..., None, None]).numpy()
    auto_loss, auto_grad = _autograd(sigma, x, y, mask, after=False)
    assert grad.shape == np.shape(sigma) and loss.shape == auto_loss.shape
    scale = np.abs(auto_grad).max()
    np.testing.assert_allclose(loss, auto_loss, rtol=1e-12)
    np.testing.assert_allclose(loss, masked_mse(run.y_hat, y_t, mask_t).numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad, auto_grad, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(grad, former, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("sigma_nets, x_nets", SHAPES)
def test_reading_after_the_update_equals_autograd(sigma_nets, x_nets):
    sigma, x, y, mask = _case(sigma_nets, x_nets, seed=8)
    loss, grad = (a.numpy() for a in overlap_gradient(sigma, (x, y, mask), dt=DT, read="after", device="cpu"))
    auto_loss, auto_grad = _autograd(sigma, x, y, mask, after=True)
    np.testing.assert_allclose(loss, auto_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, auto_grad, rtol=1e-12, atol=1e-12 * np.abs(auto_grad).max())
    before = overlap_gradient(sigma, (x, y, mask), dt=DT, device="cpu")[1].numpy()
    assert np.abs(before - grad).max() > 1e-4 * np.abs(grad).max()  # an O(dt) difference, not none


@pytest.mark.parametrize("read", ["before", "after"])
def test_effective_output_is_the_plain_loop_and_differentiable_through_the_kernel(read):
    sigma, x, _, _ = _case(3, None, seed=9)
    s = torch.as_tensor(sigma).requires_grad_(True)
    out = effective_output(s, x, dt=DT, read=read, device="cpu")
    reference = torch_loop(s, torch.as_tensor(x), DT, read == "after")
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-13, atol=1e-15)
    weights = torch.as_tensor(np.random.default_rng(0).standard_normal(out.shape))
    (grad,) = torch.autograd.grad((out * weights).sum(), s)
    (expected,) = torch.autograd.grad((reference * weights).sum(), s)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12 * expected.abs().max().item())
    np.testing.assert_allclose(effective_output(sigma, x, dt=DT, read=read, device="cpu"), out.detach(), rtol=0)


@pytest.mark.skipif(len(_kernel.ENGINES) < 2, reason="numba is not installed")
@pytest.mark.parametrize("mode", [_kernel.FORWARD, _kernel.LOSS, _kernel.UPSTREAM])
@pytest.mark.parametrize("after", [False, True])
@pytest.mark.parametrize("threads_from", [0, 2**62])  # the compiled loop on several threads, or on one
def test_the_numpy_and_numba_loops_agree_bit_for_bit(mode, after, threads_from, monkeypatch):
    """Same operations in the same order per lane: equal to the last bit (7 lanes: the compiled loop pads to 8)."""
    monkeypatch.setattr(_kernel, "PARALLEL_LANE_STEPS", threads_from)
    sigma, x, y, mask = _case(7, None, seed=10, T_max=3.0)
    coef = np.ascontiguousarray(sigma[:, index(_kernel.COEFFICIENTS)].T[:, :, None])
    x, y, mask = (np.broadcast_to(a, (1, *a.shape)) for a in (x, y, mask))
    if mode == _kernel.UPSTREAM:
        y = np.random.default_rng(1).standard_normal((7, *x.shape[1:]))
        x = np.broadcast_to(x, y.shape)
    scale = np.full((7, 1), 0.01)
    results = [_kernel.sweep(x, y, mask, scale, coef, DT, after, mode, engine) for engine in ("numpy", "numba")]
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_bad_engine_and_read_are_refused():
    with pytest.raises(ValueError, match="engine_name must be one of"):
        _kernel.sweep(np.zeros((1, 1, 2)), None, None, None, np.zeros((7, 1, 1)), DT, False, 0, "fortran")
    with pytest.raises(ValueError, match=r"read must be one of \['before', 'after'\]"):
        effective_output(recommended_overlaps(), np.zeros((1, 3)), read="during", device="cpu")
    with pytest.raises(ValueError, match="update must be one of"):
        update_step(np.ones(10), np.zeros(10), 0.1, "random")
    with pytest.raises(ValueError, match="must agree in nets"):
        overlap_gradient(np.ones((2, 10)), (np.zeros((3, 1, 4)),) * 3, device="cpu")


# ----------------------------------------------------------------------------- the sequential update


def _plain_sequential(sigma, d, eta):
    """The paper's in-place update of the ten overlaps, written out from its scalar equations (erf, 7 gradients)."""
    zm, zu, vm, vu, mu, zv, mm, uu, vv, zz = map(float, sigma)
    dzm, dzu, dvm, dvu, dmu, _, dmm, duu, _, _ = map(float, d)
    zm -= eta * ((mm + zz) * dzm + mu * dzu + zv * dvm + zu * dmu + 2 * zm * dmm)
    zu -= eta * (mu * dzm + (uu + zz) * dzu + zv * dvu + zm * dmu + 2 * zu * duu)
    vm -= eta * ((mm + vv) * dvm + mu * dvu + zv * dzm + vu * dmu + 2 * vm * dmm)
    vu -= eta * (mu * dvm + (uu + vv) * dvu + zv * dzu + vm * dmu + 2 * vu * duu)
    mu -= eta * (zu * dzm + zm * dzu + vu * dvm + vm * dvu + (mm + uu) * dmu + 2 * mu * (dmm + duu))
    zv -= eta * (vm * dzm + vu * dzu + zm * dvm + zu * dvu)
    mm -= eta * 2 * (zm * dzm + vm * dvm + mu * dmu + 2 * mm * dmm)
    uu -= eta * 2 * (zu * dzu + vu * dvu + mu * dmu + 2 * uu * duu)
    vv -= eta * 2 * (vm * dvm + vu * dvu)
    zz -= eta * 2 * (zm * dzm + zu * dzu)
    return np.array([zm, zu, vm, vu, mu, zv, mm, uu, vv, zz])


def test_sequential_step_is_the_papers_in_place_update():
    rng = np.random.default_rng(3)
    sigma = recommended_overlaps() + 0.2 * rng.random(10)
    d = rng.standard_normal(10)
    d[index(["zv", "vv", "zz"])] = 0.0
    np.testing.assert_allclose(sequential_step(sigma, d, 0.3), _plain_sequential(sigma, d, 0.3), rtol=1e-13)
    batched = sequential_step(np.stack([sigma, 2 * sigma]), np.stack([d, -d]), 0.3)
    np.testing.assert_allclose(batched[1], _plain_sequential(2 * sigma, -d, 0.3), rtol=1e-13)
    as_tensor = sequential_step(torch.as_tensor(sigma), torch.as_tensor(d), 0.3)
    np.testing.assert_allclose(as_tensor.numpy(), batched[0], rtol=1e-14)
    before = sigma.copy()
    assert np.abs(sequential_step(sigma, d, 0.3) - ode_step(sigma, d, 0.3)).max() > 1e-3  # it is another step
    np.testing.assert_array_equal(sigma, before)  # the input is not changed
    assert UPDATES["sequential"] is sequential_step and UPDATES["simultaneous"] is ode_step


def test_only_the_simultaneous_step_keeps_uu_minus_vv():
    """The rescaling symmetry makes sigma_uu - sigma_vv a conserved quantity of the ODE: the simultaneous step keeps
    it to rounding over a run; the sequential step changes it by O(eta^2) per step (halving eta quarters the
    change of one step from the same overlaps), which adds up over a run."""
    sigma = recommended_overlaps()
    batch = flip_flop(3, rng=11, dt=DT, t_max=6.0, stim_range=(1.0, 2.0))
    uu, vv = OVERLAPS.index("uu"), OVERLAPS.index("vv")

    def balance(s):
        return s[..., uu] - s[..., vv]

    runs = {u: train_overlaps(sigma, [batch] * 20, eta=0.2, dt=DT, update=u, device="cpu").sigma for u in UPDATES}
    assert np.ptp(balance(runs["simultaneous"])) < 1e-14 and np.ptp(runs["simultaneous"][:, uu]) > 1e-2
    assert np.ptp(balance(runs["sequential"])) > 1e-4  # measurably broken
    _, grad = overlap_gradient(sigma, batch, dt=DT, device="cpu")
    change = [abs(balance(sequential_step(sigma, grad.numpy(), eta)) - balance(sigma)) for eta in (0.2, 0.1, 0.05)]
    assert change[2] > 1e-8
    np.testing.assert_allclose([change[0] / change[1], change[1] / change[2]], 4.0, rtol=0.15)  # O(eta^2)
