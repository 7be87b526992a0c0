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
are invisible. ``read="after"`` (:data:`READS`) reads :math:`\hat y_t` from the updated
:math:`\kappa` instead, with the same :math:`G(\Delta_t)`: the convention of the paper's code, an
:math:`O(dt)` difference. Its forward and adjoint sweeps are :mod:`seqlearn.lowrank._kernel`'s
(NumPy, or compiled by numba where installed).

**A symmetry and its conservation law.** :math:`u \to a u`, :math:`v \to v / a` leaves :math:`J`
and the effective model unchanged (:math:`\sigma_{zu}, \sigma_{mu} \to a\,\cdot`,
:math:`\sigma_{vm} \to \cdot / a`, :math:`\sigma_{uu} \to a^2 \cdot`), so
:math:`\sigma_{zu} L_{zu} - \sigma_{vm} L_{vm} + \sigma_{mu} L_{mu} + 2\sigma_{uu} L_{uu} = 0`
and the overlap ODE keeps :math:`\sigma_{uu} - \sigma_{vv}` exactly (gradient flow on the
vectors too; gradient descent up to :math:`O(\eta^2)` per step): the invisible :math:`\sigma_{vv}`
follows the visible :math:`\sigma_{uu}`.

**Learning.** Gradient descent on the vectors with learning rate :math:`N\eta`
(:func:`train_full`) against the overlap ODE :math:`\sigma \leftarrow \sigma - \eta\,\bar
G(\sigma)\,\nabla_\sigma L` (:func:`train_overlaps`; all overlaps at once, or one after another
as the paper's code), where :math:`\nabla_\sigma L` is the gradient through the effective model
(:func:`overlap_gradient`, by the adjoint sweep; zero on the invisible overlaps).
:func:`train_both` runs the two on the same batches. Arrays are float64 by default; vectors may be
batched over networks, ``(nets, N)``, overlaps ``(nets, 10)``, outputs ``(nets, B, T)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from ..device import resolve_device
from ..losses import masked_mse
from ..validation import choice, generator, integer, real, real_array
from . import _kernel
from .overlaps import OVERLAPS, index, overlaps, update_step, vectors_with_overlaps
from .teacher_network import teacher_overlaps  # noqa: F401 (importable from here, where it was defined)

__all__ = [
    "ALPHA",
    "phi",
    "gain",
    "full_output",
    "effective_output",
    "READS",
    "Training",
    "overlap_gradient",
    "train_full",
    "train_overlaps",
    "train_both",
    "qq_correlation",
    "recommended_overlaps",
    "recommended_init",
    "balanced_init",
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


READS = ("before", "after")
r"""Where the effective model's output is read: from the state before each update (``"before"``, the
network's :math:`z^\top\phi(h_t)/N`), or from the updated state with the gain of the state before
(``"after"``, the paper's code)."""


def _after(read) -> bool:
    """``read`` checked (one of :data:`READS`): True for ``"after"``."""
    return choice(read, "read", READS) == "after"


def _array(x, name: str) -> np.ndarray:
    """``x`` (array or tensor) as a float64 NumPy array, detached from any autograd graph."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
        x = x.detach().cpu().numpy()
    return real_array(x, name).astype(np.float64, copy=False)


class _Lanes:
    r"""The effective model's inputs as the kernel's lanes: ``sigma`` ``(10,)`` or ``(nets, 10)``, ``arrays``
    ``(B, T)`` or ``(nets, B, T)``, broadcast to one leading axis ``n`` (1 or ``nets``); ``coef`` ``(7, nets, 1)``."""

    def __init__(self, sigma, arrays: dict):
        sigma = _array(sigma, "sigma")
        if sigma.ndim not in (1, 2) or sigma.shape[-1] != len(OVERLAPS):
            raise ValueError(f"sigma must have shape (10,) or (nets, 10), got {sigma.shape}")
        for name, a in arrays.items():
            if a.ndim not in (2, 3) or a.shape[-1] == 0:
                raise ValueError(f"{name} must have shape (B, T) or (nets, B, T) with T >= 1, got {a.shape}")
        leading = {a.shape[0] for a in arrays.values() if a.ndim == 3} | ({len(sigma)} if sigma.ndim == 2 else set())
        tails = {a.shape[-2:] for a in arrays.values()}
        if len(leading - {1}) > 1 or len(tails) > 1:
            shapes = {"sigma": sigma.shape} | {name: a.shape for name, a in arrays.items()}
            raise ValueError(f"sigma (nets, 10) and the (nets, B, T) arrays must agree in nets, B and T, got {shapes}")
        self.nets = max(leading, default=1)
        n = max({a.shape[0] for a in arrays.values() if a.ndim == 3}, default=1)
        self.arrays = {name: np.broadcast_to(a, (n, *a.shape[-2:])) for name, a in arrays.items()}
        self.one_sigma = sigma.ndim == 1
        self.batched = sigma.ndim == 2 or any(a.ndim == 3 for a in arrays.values())
        sigma = np.broadcast_to(sigma, (self.nets, len(OVERLAPS)))
        self.coef = np.ascontiguousarray(sigma[:, index(_kernel.COEFFICIENTS)].T[:, :, None])

    def gradient(self, parts: np.ndarray) -> np.ndarray:
        r"""``parts`` ``(7, nets, B)`` summed into :math:`\partial L/\partial\sigma`, the shape of ``sigma`` (zero
        on zv, vv, zz); one ``sigma`` for many networks gets the sum over them."""
        grad = np.zeros((self.nets, len(OVERLAPS)))
        grad[:, index(_kernel.COEFFICIENTS)] = parts.sum(-1).T
        return grad.sum(0) if self.one_sigma else grad

    def outputs(self, a: np.ndarray) -> np.ndarray:
        """A ``(nets, B, T)`` result shaped like the inputs: ``(B, T)`` when nothing was batched."""
        return a if self.batched else a[0]


def effective_output(sigma, x, *, dt: float = 0.05, read: str = "before", device=None) -> torch.Tensor:
    r"""The effective 2-D model's outputs :math:`\hat y_t = (\sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u)\,G(\Delta_t)`.

    :math:`\Delta_t = \sigma_{mm}\kappa_m^2 + \sigma_{uu}\kappa_u^2 + 2\sigma_{mu}\kappa_m\kappa_u`;
    :math:`\kappa_m \leftarrow \kappa_m + dt(-\kappa_m + x_t)`,
    :math:`\kappa_u \leftarrow \kappa_u + dt(-\kappa_u + (\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u)\,G(\Delta_t))`,
    all from the pre-update :math:`\kappa`, :math:`\kappa_0 = 0`; ``read="after"`` reads
    :math:`\hat y_t` from the updated :math:`\kappa` (with the same :math:`G(\Delta_t)`), as the
    paper's code does. Computed by :mod:`seqlearn.lowrank._kernel` in float64; a ``sigma`` tensor
    gets a result differentiable in it (its backward is the kernel's adjoint sweep).

    Parameters
    ----------
    sigma : array or tensor, shape ``(10,)`` or ``(nets, 10)``
        Overlaps in ``OVERLAPS`` order (only the seven visible ones are read).
    x : array or tensor, shape ``(B, T)`` or ``(nets, B, T)``
    read : ``"before"`` or ``"after"`` (:data:`READS`)

    Returns
    -------
    torch.Tensor, shape ``(B, T)`` or ``(nets, B, T)``, on ``device``; a tensor ``sigma``'s dtype
    """
    device = resolve_device(device)
    dt = real(dt, "dt", low=0.0, low_open=True)
    after = _after(read)
    lanes = _Lanes(sigma, {"x": _array(x, "x")})
    if isinstance(sigma, torch.Tensor):
        return _EffectiveOutput.apply(sigma, lanes, dt, after, device)
    return torch.as_tensor(_forward(lanes, dt, after), device=device)


def _forward(lanes: _Lanes, dt: float, after: bool) -> np.ndarray:
    """The outputs of the lanes' networks, shaped like the inputs."""
    x = lanes.arrays["x"]
    y_hat, _, _ = _kernel.sweep(x, x, x, None, lanes.coef, dt, after, _kernel.FORWARD)
    return lanes.outputs(y_hat)


class _EffectiveOutput(torch.autograd.Function):
    """:func:`effective_output` for a ``sigma`` tensor: the kernel's forward sweep, and its adjoint sweep backwards."""

    @staticmethod
    def forward(ctx, sigma, lanes, dt, after, device):
        ctx.lanes, ctx.dt, ctx.after, ctx.dtype = lanes, dt, after, sigma.dtype
        return torch.as_tensor(_forward(lanes, dt, after), dtype=sigma.dtype, device=device)

    @staticmethod
    def backward(ctx, d_y_hat):
        lanes = ctx.lanes
        x = lanes.arrays["x"]
        g = np.broadcast_to(_array(d_y_hat, "d_y_hat"), (lanes.nets, *x.shape[-2:]))
        x = np.broadcast_to(x, g.shape)
        _, _, parts = _kernel.sweep(x, g, x, None, lanes.coef, ctx.dt, ctx.after, _kernel.UPSTREAM)
        grad = torch.as_tensor(lanes.gradient(parts), dtype=ctx.dtype, device=d_y_hat.device)
        return grad, None, None, None, None


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


def overlap_gradient(
    sigma, batch: Batch, *, dt: float = 0.05, read: str = "before", device=None
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The masked loss of the effective model and its gradient :math:`\partial L/\partial\sigma`.

    :math:`L = \sum_{b,t}\mu_{bt}(\hat y_{bt} - y_{bt})^2 / \sum_{b,t}\mu_{bt}` per network; the
    gradient comes from the adjoint sweep of :mod:`seqlearn.lowrank._kernel` (forward and back in
    one pass over the lanes, float64, on the CPU).

    Parameters
    ----------
    sigma : array or tensor, shape ``(10,)`` or ``(nets, 10)``
    batch : ``(x, y, mask)``, each ``(B, T)`` or ``(nets, B, T)``
    read : ``"before"`` or ``"after"`` (:data:`READS`), as in :func:`effective_output`

    Returns
    -------
    loss : torch.Tensor, shape ``()`` or ``(nets,)``
    grad : torch.Tensor, shape of ``sigma``; zero on the invisible zv, vv, zz (one ``sigma`` on
        ``(nets, B, T)`` inputs: the gradient of the summed losses)
    """
    device = resolve_device(device)
    loss, grad = _loss_gradient(sigma, batch, real(dt, "dt", low=0.0, low_open=True), _after(read))
    return torch.as_tensor(loss, device=device), torch.as_tensor(grad, device=device)


def _loss_gradient(sigma, batch: Batch, dt: float, after: bool) -> tuple[np.ndarray, np.ndarray]:
    r""":func:`overlap_gradient` in NumPy: the losses and :math:`\partial L/\partial\sigma`."""
    x, y, mask = (_array(a, name) for a, name in zip(batch, ("x", "y", "mask")))
    if y.shape != mask.shape:
        raise ValueError(f"y and mask must have the same shape, got {y.shape} and {mask.shape}")
    lanes = _Lanes(sigma, {"x": x, "y": y, "mask": mask})
    x, y, mask = np.broadcast_arrays(*lanes.arrays.values())
    counted = np.broadcast_to(mask.sum((-2, -1)), (lanes.nets,))
    if (counted <= 0).any():
        raise ValueError("mask must count at least one step (a nonzero entry) for every loss")
    _, squared, parts = _kernel.sweep(x, y, mask, (1 / counted)[:, None], lanes.coef, dt, after, _kernel.LOSS)
    loss = squared.sum(-1) / counted
    return (loss if lanes.batched else loss[0]), lanes.gradient(parts)


def _targets(y, mask, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets and mask as tensors on ``device``."""
    return _tensor(y, "y", device), _tensor(mask, "mask", device)


def _eta(eta) -> float:
    """The learning rate in overlap space, a float > 0."""
    return real(eta, "eta", low=0.0, low_open=True)


def train_overlaps(
    sigma,
    batches: Iterable[Batch],
    *,
    eta: float,
    dt: float = 0.05,
    update: str = "simultaneous",
    read: str = "before",
    device=None,
) -> Training:
    r"""The overlap ODE, one Euler step per batch.

    :math:`\sigma \leftarrow \sigma - \eta\,\bar G(\sigma)\,\nabla_\sigma L`, with
    :math:`\nabla_\sigma L` from :func:`overlap_gradient` (seven nonzero components), the step from
    :func:`seqlearn.lowrank.overlaps.update_step`: all ten overlaps at once (``"simultaneous"``,
    :func:`~seqlearn.lowrank.overlaps.ode_step`) or one after another in place (``"sequential"``, the
    paper's code).

    Parameters
    ----------
    sigma : array, shape ``(10,)`` or ``(nets, 10)``
    batches : iterable of ``(x, y, mask)``
        One gradient step per batch (see :mod:`~seqlearn.lowrank.tasks`).
    eta : float
        The learning rate in overlap space.
    update : ``"simultaneous"`` or ``"sequential"`` (:data:`~seqlearn.lowrank.overlaps.UPDATES`)
    read : ``"before"`` or ``"after"`` (:data:`READS`)
    """
    device = resolve_device(device)
    eta = _eta(eta)
    sigma = _tensor(sigma, "sigma", device).detach()
    history, losses = [sigma], []
    for batch in batches:
        loss, grad = overlap_gradient(sigma, batch, dt=dt, read=read, device=device)
        sigma = update_step(sigma, grad, eta, update)
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
