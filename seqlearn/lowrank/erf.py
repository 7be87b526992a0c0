r"""The erf rank-1 network, its Gaussian closure and learning in overlap space.

**The network.** Four :math:`N`-vectors (input :math:`m`, connectivity :math:`J = u v^\top / N`,
readout :math:`z`), :math:`\phi(x) = \mathrm{erf}(\sqrt\pi\, x / 2)` (so :math:`\phi'(0) = 1`,
:math:`\phi'(x) = e^{-\pi x^2/4}`), Euler steps of size :math:`dt` from :math:`h_0 = 0`, the
output read *before* the update:

.. math::
    \hat y_t = z^\top \phi(h_t) / N, \qquad
    h_{t+1} = h_t + dt\,\big(-h_t + u\, v^\top \phi(h_t) / N + m\, x_t\big).

:math:`h_t = \kappa_m m + \kappa_u u` stays in :math:`\mathrm{span}\{m, u\}` (:func:`full_output`
never forms :math:`J`).

**The Gaussian closure.** If the entries :math:`(m_i, u_i, v_i, z_i)` are jointly Gaussian with
the overlaps as covariance, :math:`h_i` is Gaussian with variance
:math:`\Delta = \sigma_{mm}\kappa_m^2 + \sigma_{uu}\kappa_u^2 + 2\sigma_{mu}\kappa_m\kappa_u`,
and Stein's lemma gives :math:`\langle v_i \phi(h_i)\rangle = (\sigma_{vm}\kappa_m +
\sigma_{vu}\kappa_u)\, G(\Delta)` with the gain

.. math::
    G(\Delta) = \langle \phi'(\sqrt\Delta\, \xi) \rangle_{\xi \sim \mathcal N(0,1)}
    = \frac{1}{\sqrt{1 + \pi\Delta/2}}.

The **effective model** (:func:`effective_output`) is the 2-D recursion, evaluated at the
pre-update :math:`\kappa` throughout,

.. math::
    \hat y_t = (\sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u)\, G(\Delta_t), \quad
    \kappa_m \leftarrow \kappa_m + dt(-\kappa_m + x_t), \quad
    \kappa_u \leftarrow \kappa_u + dt\big(-\kappa_u + (\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u) G(\Delta_t)\big).

It depends on seven overlaps (``VISIBLE["erf"]``: zm, zu, vm, vu, mu, mm, uu); zv, vv and zz
are invisible.

**A symmetry and its conservation law.** :math:`u \to a u`, :math:`v \to v / a` leaves :math:`J`
and the effective model unchanged (:math:`\sigma_{zu}, \sigma_{mu} \to a\,\cdot`,
:math:`\sigma_{vm} \to \cdot / a`, :math:`\sigma_{uu} \to a^2 \cdot`), so
:math:`\sigma_{zu} L_{zu} - \sigma_{vm} L_{vm} + \sigma_{mu} L_{mu} + 2\sigma_{uu} L_{uu} = 0`
and the overlap ODE keeps :math:`\sigma_{uu} - \sigma_{vv}` exactly (gradient flow on the
vectors too; gradient descent up to :math:`O(\eta^2)` per step): the invisible :math:`\sigma_{vv}`
follows the visible :math:`\sigma_{uu}`.

**Learning.** Gradient descent on the vectors with learning rate :math:`N\eta`
(:func:`train_full`) against the overlap ODE :math:`\sigma \leftarrow \sigma - \eta\,\bar
G(\sigma)\,\nabla_\sigma L` (:func:`train_overlaps`), where :math:`\nabla_\sigma L` is the gradient
through the effective model (by its adjoint recursion; zero on the invisible overlaps). :func:`train_both` runs the two
on the same batches. Arrays are float64 by default; vectors may be batched over networks,
``(nets, N)``, overlaps ``(nets, 10)``, outputs ``(nets, B, T)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from ..device import resolve_device
from ..validation import generator, integer, real, real_array
from .overlaps import OVERLAPS, VISIBLE, index, ode_step, overlaps, vectors_with_overlaps
from .tasks import TEACHER_VISIBLE, masked_mse

__all__ = [
    "ALPHA",
    "phi",
    "gain",
    "full_output",
    "effective_output",
    "Training",
    "overlap_gradient",
    "train_full",
    "train_overlaps",
    "train_both",
    "qq_correlation",
    "recommended_overlaps",
    "recommended_init",
    "balanced_init",
    "teacher_overlaps",
]

ALPHA = math.sqrt(math.pi) / 2
"""The erf slope :math:`\\alpha = \\sqrt\\pi/2`: :math:`\\phi'(0) = 1` and :math:`G(\\Delta)` is closed-form."""

Batch = tuple[np.ndarray, np.ndarray, np.ndarray]  # inputs, targets, masks, each (B, T) or (nets, B, T)


def phi(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\phi(x) = \mathrm{erf}(\sqrt\pi\, x / 2)`, elementwise."""
    return torch.erf(ALPHA * x)


def gain(delta):
    r"""The erf gain :math:`G(\Delta) = \langle\phi'(\sqrt\Delta\,\xi)\rangle = (1 + \pi\Delta/2)^{-1/2}`.

    Elementwise on a float, NumPy array or tensor of variances :math:`\Delta \ge 0`.
    """
    return (1 + (math.pi / 2) * delta) ** -0.5


def _tensor(x, name: str, device) -> torch.Tensor:
    """``x`` as a float64 tensor on ``device``; a floating tensor keeps its dtype and autograd graph."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
        return x.to(device)
    return torch.as_tensor(real_array(x, name), dtype=torch.float64, device=device)


def _inputs(x, device) -> torch.Tensor:
    """Inputs ``(B, T)`` or ``(nets, B, T)`` as a tensor; ``ValueError`` for any other rank."""
    x = _tensor(x, "x", device)
    if x.ndim not in (2, 3) or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (B, T) or (nets, B, T) with T >= 1, got {tuple(x.shape)}")
    return x


def full_output(m, u, v, z, x, *, dt: float = 0.05, device=None) -> torch.Tensor:
    r"""The erf network's outputs :math:`\hat y_t = z^\top\phi(h_t)/N`, read before each update.

    :math:`h_{t+1} = h_t + dt\,(-h_t + u\, v^\top\phi(h_t)/N + m\, x_t)`, :math:`h_0 = 0`.

    Parameters
    ----------
    m, u, v, z : array or tensor, shape ``(N,)`` or ``(nets, N)``
        The vectors (tensors keep their autograd graph).
    x : array or tensor, shape ``(B, T)`` or ``(nets, B, T)``
        Inputs, shared by the networks or one set per network.
    dt : float
        The Euler step (:math:`\tau = 1`).

    Returns
    -------
    torch.Tensor, shape ``(B, T)`` or ``(nets, B, T)``
    """
    device = resolve_device(device)
    dt = real(dt, "dt", low=0.0, low_open=True)
    m, u, v, z = (_tensor(a, name, device) for a, name in zip((m, u, v, z), "muvz"))
    if len({tuple(a.shape) for a in (m, u, v, z)}) > 1 or m.ndim not in (1, 2):
        raise ValueError(
            f"m, u, v, z must share a shape (N,) or (nets, N), got {[tuple(a.shape) for a in (m, u, v, z)]}"
        )
    x = _inputs(x, device)
    N = m.shape[-1]
    m, u = (a[..., None, :] for a in (m, u))  # (..., 1, N), broadcast over trials
    zv = torch.stack((z, v), -1) / N  # (..., N, 2): one product reads z^T r / N and v^T r / N
    h = torch.zeros_like(m * x[..., 0, None])  # (..., B, N)
    outputs = []
    for t in range(x.shape[-1]):  # h + dt (-h + u v^T r / N + m x_t) as a lerp towards the drive
        read = phi(h) @ zv  # (..., B, 2)
        outputs.append(read[..., 0])  # (..., B)
        h = torch.lerp(h, torch.addcmul(u * read[..., 1:], m, x[..., t, None]), dt)
    return torch.stack(outputs, -1)


def effective_output(sigma, x, *, dt: float = 0.05, device=None) -> torch.Tensor:
    r"""The effective 2-D model's outputs :math:`\hat y_t = (\sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u)\,G(\Delta_t)`.

    :math:`\Delta_t = \sigma_{mm}\kappa_m^2 + \sigma_{uu}\kappa_u^2 + 2\sigma_{mu}\kappa_m\kappa_u`;
    :math:`\kappa_m \leftarrow \kappa_m + dt(-\kappa_m + x_t)`,
    :math:`\kappa_u \leftarrow \kappa_u + dt(-\kappa_u + (\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u)\,G(\Delta_t))`,
    all from the pre-update :math:`\kappa`, :math:`\kappa_0 = 0`. Differentiable in ``sigma``.

    Parameters
    ----------
    sigma : array or tensor, shape ``(10,)`` or ``(nets, 10)``
        Overlaps in ``OVERLAPS`` order (only the seven visible ones are read).
    x : array or tensor, shape ``(B, T)`` or ``(nets, B, T)``

    Returns
    -------
    torch.Tensor, shape ``(B, T)`` or ``(nets, B, T)``
    """
    return _EffectiveRun(sigma, x, dt, device).y_hat


class _EffectiveRun:
    r"""One run of the effective model: the visible overlaps ``(..., 1, 1)``, and at every step ``(..., B, T)``
    :math:`\kappa_m`, :math:`\kappa_u`, :math:`G`, ``read`` :math:`= \sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u`
    and :math:`\hat y` = ``read`` :math:`G`."""

    def __init__(self, sigma, x, dt: float, device):
        device = resolve_device(device)
        self.dt = dt = real(dt, "dt", low=0.0, low_open=True)
        self.sigma = sigma = _tensor(sigma, "sigma", device)
        if sigma.ndim not in (1, 2) or sigma.shape[-1] != len(OVERLAPS):
            raise ValueError(f"sigma must have shape (10,) or (nets, 10), got {tuple(sigma.shape)}")
        x = _inputs(x, device)
        visible = sigma[..., index(VISIBLE["erf"]), None, None].unbind(-3)  # each (..., 1, 1)
        self.zm, self.zu, self.vm, self.vu, self.mu, self.mm, self.uu = visible
        self.kappa_m = _leaky_inputs(x, dt)  # (..., B, T): kappa_m does not depend on sigma
        vu, uu = self.vu[..., 0], self.uu[..., 0]  # (..., 1)
        # the terms with kappa_m for all steps at once; in the loop, addcmul(a, b, c) = a + b c and
        # lerp(a, b, dt) = a + dt (b - a)
        k_m = self.kappa_m
        mm_k2, two_mu_k, vm_k = ((c * k).unbind(-1) for c, k in ((self.mm, k_m**2), (2 * self.mu, k_m), (self.vm, k_m)))
        kappa_u = torch.zeros_like(self.zm[..., 0] * x[..., 0])  # (..., B)
        kappas, gains = [], []
        for t in range(x.shape[-1]):
            G = gain(torch.addcmul(mm_k2[t], torch.addcmul(two_mu_k[t], uu, kappa_u), kappa_u))  # G(Delta_t), (..., B)
            kappas.append(kappa_u)
            gains.append(G)
            kappa_u = torch.lerp(kappa_u, torch.addcmul(vm_k[t], vu, kappa_u) * G, dt)
        self.kappa_u, self.G = torch.stack(kappas, -1), torch.stack(gains, -1)
        self.read = torch.addcmul(self.zm * k_m, self.zu, self.kappa_u)  # sigma_zm kappa_m + sigma_zu kappa_u
        self.y_hat = self.read * self.G

    def gradient(self, d_y_hat: torch.Tensor) -> torch.Tensor:
        r""":math:`\partial L/\partial\sigma` from :math:`g_t = \partial L/\partial\hat y_t` (``(..., B, T)``), by
        the adjoint recursion; shape of ``sigma``, zero on the invisible zv, vv, zz.

        With :math:`\lambda_t = \partial L/\partial\kappa_u(t)`, :math:`\lambda_T = 0`,
        :math:`G' = dG/d\Delta = -\tfrac\pi4 G^3`,
        :math:`\partial_u\Delta = 2(\sigma_{mu}\kappa_m + \sigma_{uu}\kappa_u)` and
        :math:`s_t = \sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u`:

        .. math::
            w_t = (g_t\, \hat y_t / G_t + dt\, \lambda_{t+1} s_t)\, G'_t, \qquad
            \lambda_t = g_t \sigma_{zu} G_t + \lambda_{t+1} (1 - dt + dt\,\sigma_{vu} G_t) + w_t\, \partial_u\Delta_t,

        and the gradient sums over trials and steps :math:`g G \kappa_m`, :math:`g G \kappa_u` (zm, zu),
        :math:`dt\,\lambda_{t+1} G \kappa_m`, :math:`dt\,\lambda_{t+1} G \kappa_u` (vm, vu),
        :math:`2 w \kappa_m \kappa_u`, :math:`w \kappa_m^2`, :math:`w \kappa_u^2` (mu, mm, uu).
        """
        k_m, k_u, G, dt = self.kappa_m, self.kappa_u, self.G, self.dt
        G_prime = -(math.pi / 4) * G**3
        d_delta = 2 * torch.addcmul(self.mu * k_m, self.uu, k_u)  # dDelta / dkappa_u
        s = torch.addcmul(self.vm * k_m, self.vu, k_u)
        num = self.read  # y_hat / G
        gG = d_y_hat * G
        # lambda_t = A_t + B_t lambda_{t+1}
        A = gG * self.zu + d_y_hat * num * G_prime * d_delta
        B = 1 - dt + dt * (self.vu * G + s * G_prime * d_delta)
        lam = torch.zeros_like(A[..., 0])
        later = []  # lambda_{t+1}, from t = T - 1 down
        for A_t, B_t in zip(reversed(A.unbind(-1)), reversed(B.unbind(-1))):
            later.append(lam)
            lam = torch.addcmul(A_t, B_t, lam)
        lam_next = torch.stack(later[::-1], -1)  # (..., B, T)
        w = (d_y_hat * num + dt * lam_next * s) * G_prime
        dtG_lam = dt * lam_next * G
        parts = {
            "zm": gG * k_m,
            "zu": gG * k_u,
            "vm": dtG_lam * k_m,
            "vu": dtG_lam * k_u,
            "mu": 2 * w * k_m * k_u,
            "mm": w * k_m**2,
            "uu": w * k_u**2,
        }
        grad = torch.zeros_like(self.sigma)
        for name, part in parts.items():
            total = part.sum((-2, -1))  # (nets,) or (), or (nets,) for one sigma on (nets, B, T) inputs
            grad[..., index([name])[0]] = total if total.ndim < self.sigma.ndim else total.sum(0)
        return grad


def _leaky_inputs(x: torch.Tensor, dt: float) -> torch.Tensor:
    r""":math:`\kappa_m(t)` before each step, (..., B, T): :math:`\kappa_m \leftarrow \kappa_m + dt(x_t - \kappa_m)`."""
    with torch.no_grad():
        kappa, out = torch.zeros_like(x[..., 0]), torch.empty_like(x)
        for t in range(x.shape[-1]):
            out[..., t] = kappa
            kappa = torch.lerp(kappa, x[..., t], dt)
    return out


@dataclass(frozen=True)
class Training:
    r"""One training run: the overlaps before every step and after the last, and the losses.

    Attributes: ``sigma`` ``(E + 1, ..., 10)``, ``loss`` ``(E, ...)`` (the masked MSE of each
    step's batch, before the step), ``vectors`` the final ``(m, u, v, z)`` for a full-network run
    (``None`` for an overlap-space run), NumPy arrays.
    """

    sigma: np.ndarray
    loss: np.ndarray
    vectors: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


def overlap_gradient(sigma, batch: Batch, *, dt: float = 0.05, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The masked loss of the effective model and its gradient :math:`\partial L/\partial\sigma`.

    The gradient comes from the adjoint recursion of the effective model (``_EffectiveRun.gradient``),
    backwards through the steps: the same chain rule as autograd, without its graph.

    Parameters
    ----------
    sigma : array or tensor, shape ``(10,)`` or ``(nets, 10)``
    batch : ``(x, y, mask)``, each ``(B, T)`` or ``(nets, B, T)``

    Returns
    -------
    loss : torch.Tensor, shape ``()`` or ``(nets,)``
    grad : torch.Tensor, shape of ``sigma``; zero on the invisible zv, vv, zz
    """
    with torch.no_grad():
        run = _EffectiveRun(sigma, batch[0], dt, device)  # no graph, even for a sigma that requires grad
        y, mask = _targets(batch[1], batch[2], run.sigma.device)
        loss = masked_mse(run.y_hat, y, mask)
        counted = mask.sum((-2, -1))[..., None, None]
        return loss, run.gradient(2 * mask * (run.y_hat - y) / counted)  # g = dL/dy_hat


def _targets(y, mask, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets and mask as tensors on ``device``."""
    return _tensor(y, "y", device), _tensor(mask, "mask", device)


def _eta(eta) -> float:
    """The learning rate in overlap space, a float > 0."""
    return real(eta, "eta", low=0.0, low_open=True)


def train_overlaps(sigma, batches: Iterable[Batch], *, eta: float, dt: float = 0.05, device=None) -> Training:
    r"""The overlap ODE, one Euler step per batch.

    :math:`\sigma \leftarrow \sigma - \eta\,\bar G(\sigma)\,\nabla_\sigma L`, with
    :math:`\nabla_\sigma L` from :func:`overlap_gradient` (seven nonzero components), the step from
    :func:`seqlearn.lowrank.overlaps.ode_step`.

    Parameters
    ----------
    sigma : array, shape ``(10,)`` or ``(nets, 10)``
    batches : iterable of ``(x, y, mask)``
        One gradient step per batch (see :mod:`~seqlearn.lowrank.tasks`).
    eta : float
        The learning rate in overlap space.
    """
    device = resolve_device(device)
    eta = _eta(eta)
    sigma = _tensor(sigma, "sigma", device).detach()
    history, losses = [sigma], []
    for batch in batches:
        loss, grad = overlap_gradient(sigma, batch, dt=dt, device=device)
        sigma = ode_step(sigma, grad, eta)
        history.append(sigma)
        losses.append(loss)
    return _training(history, losses)


def _training(history: list[torch.Tensor], losses: list[torch.Tensor], vectors=None) -> Training:
    """A :class:`Training` from per-step overlaps and losses (tensors)."""
    if not losses:
        raise ValueError("batches must hold at least one batch, got none")
    return Training(torch.stack(history).cpu().numpy(), torch.stack(losses).cpu().numpy(), vectors)


def train_full(m, u, v, z, batches: Iterable[Batch], *, eta: float, dt: float = 0.05, device=None) -> Training:
    r"""Gradient descent on the vectors with learning rate :math:`N\eta`.

    :math:`a \leftarrow a - N\eta\,\partial L/\partial a` for :math:`a = m, u, v, z`;
    :math:`L` is the masked MSE of :func:`full_output` on each batch; the overlaps are recorded
    before every step and after the last.

    Parameters
    ----------
    m, u, v, z : array, shape ``(N,)`` or ``(nets, N)``
    batches : iterable of ``(x, y, mask)``, one step each
    eta : float
        The overlap-space learning rate; the vectors' rate is :math:`N\eta`.
    """
    device = resolve_device(device)
    eta = _eta(eta)
    m, u, v, z = (_tensor(a, name, device).detach() for a, name in zip((m, u, v, z), "muvz"))
    N = m.shape[-1]
    history, losses = [overlaps(m, u, v, z)], []
    for x, y, mask in batches:
        m, u, v, z = (a.requires_grad_(True) for a in (m, u, v, z))
        loss = masked_mse(full_output(m, u, v, z, x, dt=dt, device=device), *_targets(y, mask, device))
        grads = torch.autograd.grad(loss.sum(), (m, u, v, z))
        m, u, v, z = ((a - N * eta * g).detach() for a, g in zip((m, u, v, z), grads))
        history.append(overlaps(m, u, v, z))
        losses.append(loss.detach())
    return _training(history, losses, (m.cpu().numpy(), u.cpu().numpy(), v.cpu().numpy(), z.cpu().numpy()))


def train_both(
    m, u, v, z, batches: Iterable[Batch], *, eta: float, dt: float = 0.05, device=None
) -> tuple[Training, Training]:
    """The full network (:func:`train_full`) and the overlap ODE (:func:`train_overlaps`) on the same batches.

    Both start from the vectors' overlaps and take one step per batch.

    Returns
    -------
    full, ode : Training
        ``full.sigma`` and ``ode.sigma`` compare step by step.
    """
    batches = list(batches)
    full = train_full(m, u, v, z, batches, eta=eta, dt=dt, device=device)
    return full, train_overlaps(full.sigma[0], batches, eta=eta, dt=dt, device=device)


def qq_correlation(vectors) -> np.ndarray:
    r"""The normal Q-Q correlation of each vector's entries (``scipy.stats.probplot``'s :math:`r`).

    :math:`r` is the correlation between the sorted entries and the normal quantiles; 1 for exactly
    Gaussian order statistics, lower the further the entries are from Gaussian.

    Parameters
    ----------
    vectors : array, shape ``(k, N)``, e.g. ``np.stack(training.vectors)``

    Returns
    -------
    np.ndarray, shape ``(k,)``
    """
    from scipy import stats

    vectors = real_array(vectors, "vectors", ndim=2)
    if vectors.shape[1] < 3:
        raise ValueError(f"vectors must have at least 3 entries each, got shape {vectors.shape}")
    return np.array([stats.probplot(a, dist="norm")[1][2] for a in vectors])


def _sigma(values: dict[str, float]) -> np.ndarray:
    """A (10,) overlap vector from ``{name: value}``, in ``OVERLAPS`` order."""
    sigma = np.zeros(len(OVERLAPS))
    sigma[index(list(values))] = list(values.values())
    return sigma


def recommended_overlaps() -> np.ndarray:
    r"""An erf start with some recurrence, shape (10,): zm, zu, vm, vu, mu, zv = 0.3, 0.3, 0.3, 0.5, 0.1, 0.1, norms 1.

    From it the flip-flop's loss leaves its plateau within about 100 epochs.
    """
    crosses = {"zm": 0.3, "zu": 0.3, "vm": 0.3, "vu": 0.5, "mu": 0.1, "zv": 0.1}
    return _sigma(crosses | {"mm": 1.0, "uu": 1.0, "vv": 1.0, "zz": 1.0})


def recommended_init(N: int, rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectors ``(m, u, v, z)``, each (N,), with exactly the :func:`recommended_overlaps`."""
    return vectors_with_overlaps(recommended_overlaps(), N, rng)


def balanced_init(N: int, rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""A balanced random start ``(m, u, v, z)``: :math:`\sigma_{zu} = \sigma_{vm}`, :math:`\sigma_{mu} = \sigma_{zv}`.

    Four Gaussian vectors normalised to :math:`\|a\|^2 = N` (:math:`\sigma_{aa} = 1`, cross
    overlaps :math:`O(1/\sqrt N)`) give the overlaps; each balanced pair is replaced by its mean,
    so the Gram matrix is symmetric under :math:`(z, v) \leftrightarrow (m, u)`, and vectors with
    exactly these overlaps are built. (The paper rejection-samples until the pairs agree to 1e-3.)
    """
    N = integer(N, "N", low=4)
    rng = generator(rng)
    a = rng.standard_normal((4, N))
    sigma = overlaps(*(math.sqrt(N) * a / np.linalg.norm(a, axis=1, keepdims=True)))
    for pair in (["zu", "vm"], ["mu", "zv"]):
        sigma[index(pair)] = sigma[index(pair)].mean()
    return vectors_with_overlaps(sigma, N, rng)


def teacher_overlaps() -> np.ndarray:
    """The teacher of task C, shape (10,): :data:`~seqlearn.lowrank.tasks.TEACHER_VISIBLE`, zv = 0, vv = zz = 1."""
    return _sigma(TEACHER_VISIBLE | {"zv": 0.0, "vv": 1.0, "zz": 1.0})
