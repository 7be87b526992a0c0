r"""Overlap space: the ten normalised dot products a rank-1 network's learning lives in.

A rank-1 RNN has four :math:`N`-vectors: the input :math:`m`, the connectivity
:math:`J = u v^\top / N` and the readout :math:`z`. Its function depends on them only through
the **overlaps** :math:`\sigma_{ab} = a^\top b / N`, ten of them, always in this order:

.. math::
    \sigma = (\sigma_{zm}, \sigma_{zu}, \sigma_{vm}, \sigma_{vu} \,|\,
    \sigma_{mu}, \sigma_{zv}, \sigma_{mm}, \sigma_{uu}, \sigma_{vv}, \sigma_{zz}).

With :math:`A = [z\ v]` and :math:`B = [m\ u]` (:math:`N \times 2`) they form three blocks,

.. math::
    M = A^\top B / N = \begin{pmatrix} \sigma_{zm} & \sigma_{zu} \\ \sigma_{vm} & \sigma_{vu}
    \end{pmatrix}, \quad P = A^\top A / N, \quad R = B^\top B / N,

the pieces of the Gram matrix :math:`\Gamma` of :math:`(z, v, m, u)/\sqrt N`,
:math:`\Gamma = \begin{pmatrix} P & M \\ M^\top & R \end{pmatrix}`.
A linear network's loss sees only :math:`M` (the loss-**visible** overlaps); an erf network's
also sees :math:`R` (:data:`VISIBLE`, :data:`INVISIBLE`).

**The learning metric.** Gradient descent on the vectors with learning rate :math:`N\eta`
moves the overlaps, to first order in :math:`\eta`, by :math:`\dot\sigma = -\eta\,\bar G\,
\nabla_\sigma L` with :math:`\bar G = N D D^\top`, :math:`D = \partial\sigma/\partial\theta`:

.. math::
    \bar G_{(ab),(cd)} = \delta_{ac}\sigma_{bd} + \delta_{ad}\sigma_{bc}
    + \delta_{bc}\sigma_{ad} + \delta_{bd}\sigma_{ac}

(a norm's coordinate is :math:`\sigma_{aa}` itself, so :math:`\bar G_{(mm),(mm)} = 4\sigma_{mm}`).
Its visible block is built from invisible overlaps only: structure the loss cannot see sets how
learning moves.

**Steps.** :func:`ode_step` moves all ten overlaps at once (forward Euler); the paper's code
updates them one after another in place (:func:`sequential_step`); :func:`update_step` picks one
by name (:data:`UPDATES`).

**Invariants.** With :math:`S = \mathrm{diag}(1, 1, -1, -1)`, gradient flow on a loss of
:math:`M` alone moves :math:`S\Gamma` by similarity, so :math:`\operatorname{tr}((S\Gamma)^k)`,
:math:`k = 1, \dots, 4`, are conserved; :math:`I_1 = \sigma_{zz} + \sigma_{vv} - \sigma_{mm} -
\sigma_{uu}`.

The functions take NumPy arrays (float64) or torch tensors, batched over leading axes; only
:func:`vectors_with_overlaps` is NumPy-only, for one set of overlaps.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np

from ..guard import reference
from ..validation import choice, generator, integer, real, real_array

__all__ = [
    "OVERLAPS",
    "VISIBLE",
    "INVISIBLE",
    "index",
    "overlaps",
    "blocks",
    "from_blocks",
    "gram",
    "vectors_with_overlaps",
    "metric",
    "ode_step",
    "sequential_step",
    "UPDATES",
    "update_step",
    "invariants",
]

OVERLAPS = ("zm", "zu", "vm", "vu", "mu", "zv", "mm", "uu", "vv", "zz")
"""The canonical order of every 10-vector of overlaps in :mod:`seqlearn.lowrank`."""

VISIBLE = MappingProxyType({"linear": ("zm", "zu", "vm", "vu"), "erf": ("zm", "zu", "vm", "vu", "mu", "mm", "uu")})
"""The overlaps the loss depends on, per activation (in :data:`OVERLAPS` order)."""

INVISIBLE = MappingProxyType(
    {kind: tuple(name for name in OVERLAPS if name not in seen) for kind, seen in VISIBLE.items()}
)
"""The overlaps the loss does not see, per activation (in :data:`OVERLAPS` order)."""

_LETTERS = "zvmu"  # the Gram matrix's order: A = [z v], then B = [m u]
_A = np.array([_LETTERS.index(name[0]) for name in OVERLAPS])  # first letter of each overlap
_B = np.array([_LETTERS.index(name[1]) for name in OVERLAPS])  # second letter
_GRAM_INDEX = np.zeros((4, 4), dtype=np.int64)  # Gamma[i, j] = sigma[_GRAM_INDEX[i, j]]
_GRAM_INDEX[_A, _B] = _GRAM_INDEX[_B, _A] = np.arange(len(OVERLAPS))
_S = np.array([1.0, 1.0, -1.0, -1.0])  # the signature of (z, v, m, u)


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _xp(x):
    """The array module of ``x``: torch for a tensor, else NumPy."""
    if _is_torch(x):
        import torch

        return torch
    return np


def _like(c: np.ndarray, x):
    """The constant ``c`` as an array of ``x``'s kind (dtype and device of a tensor)."""
    if _is_torch(x):
        import torch

        return torch.as_tensor(c, dtype=x.dtype, device=x.device)
    return c


def _checked(x, name: str, tail: tuple[int | None, ...]):
    """``x`` as a float64 array (a floating torch tensor is kept as is) of shape ``(..., *tail)``."""
    if _is_torch(x):
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
        arr = x
    else:
        arr = real_array(x, name)
    shape = tuple(arr.shape)
    if len(shape) < len(tail) or any(t is not None and t != s for t, s in zip(tail, shape[len(shape) - len(tail) :])):
        wanted = ", ".join("N" if t is None else str(t) for t in tail)
        raise ValueError(f"{name} must have shape (..., {wanted}), got {shape}")
    return arr


def index(names) -> np.ndarray:
    """Positions of the overlaps ``names`` (e.g. ``VISIBLE["linear"]``) in :data:`OVERLAPS`, shape (k,)."""
    if isinstance(names, str):
        raise TypeError(f"names must be a sequence of overlap names such as ('zm', 'vu'), got the string {names!r}")
    unknown = [name for name in names if name not in OVERLAPS]
    if unknown:
        raise ValueError(f"unknown overlap names {unknown}; the overlaps are {list(OVERLAPS)}")
    return np.array([OVERLAPS.index(name) for name in names], dtype=np.int64)


def _from_gram(Gam):
    """sigma_(ab) = Gamma[a, b] for the ten pairs, shape (..., 10) from (..., 4, 4)."""
    return Gam[..., _A, _B]


@reference
def overlaps(m, u, v, z):
    r"""The ten overlaps :math:`\sigma_{ab} = a^\top b / N` of the vectors.

    Parameters
    ----------
    m, u, v, z : array or tensor, shape (..., N), all the same shape

    Returns
    -------
    sigma : shape (..., 10), in :data:`OVERLAPS` order.
    """
    vectors = [_checked(x, name, (None,)) for x, name in zip((m, u, v, z), "muvz")]
    shapes = {tuple(x.shape) for x in vectors}
    if len(shapes) > 1:
        raise ValueError(f"m, u, v, z must have the same shape, got {[tuple(x.shape) for x in vectors]}")
    N = vectors[0].shape[-1]
    if N == 0:
        raise ValueError("m, u, v, z must have N >= 1 entries, got N = 0")
    m, u, v, z = vectors
    X = _xp(m).stack([z, v, m, u], -2)  # (..., 4, N) in the Gram order
    return _from_gram(X @ X.mT / N)


def gram(sigma):
    r"""The Gram matrix :math:`\Gamma` of :math:`(z, v, m, u)/\sqrt N`, shape (..., 4, 4) from (..., 10).

    :math:`\Gamma = \begin{pmatrix} P & M \\ M^\top & R \end{pmatrix}`,
    e.g. :math:`\Gamma_{02} = \sigma_{zm}`, :math:`\Gamma_{23} = \sigma_{mu}`.
    """
    sigma = _checked(sigma, "sigma", (10,))
    return sigma[..., _GRAM_INDEX]


def blocks(sigma):
    r"""The blocks :math:`(M, P, R)` of the overlaps, each shape (..., 2, 2).

    :math:`M = A^\top B/N = [[\sigma_{zm}, \sigma_{zu}], [\sigma_{vm}, \sigma_{vu}]]`,
    :math:`P = A^\top A/N = [[\sigma_{zz}, \sigma_{zv}], [\sigma_{zv}, \sigma_{vv}]]`,
    :math:`R = B^\top B/N = [[\sigma_{mm}, \sigma_{mu}], [\sigma_{mu}, \sigma_{uu}]]`,
    with :math:`A = [z\ v]`, :math:`B = [m\ u]`.
    """
    Gam = gram(sigma)
    return Gam[..., :2, 2:], Gam[..., :2, :2], Gam[..., 2:, 2:]


def from_blocks(M, P, R):
    r"""The overlaps (..., 10) from the blocks :math:`M, P, R` (..., 2, 2); inverse of :func:`blocks`.

    ``P`` and ``R`` must be symmetric (their lower off-diagonal entry is the one used).
    """
    M, P, R = (_checked(x, name, (2, 2)) for x, name in zip((M, P, R), "MPR"))
    xp = _xp(M)
    Gam = xp.concatenate([xp.concatenate([P, M], -1), xp.concatenate([M.mT, R], -1)], -2)  # (..., 4, 4)
    return _from_gram(Gam)


def vectors_with_overlaps(sigma, N: int, rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Vectors ``(m, u, v, z)``, each shape (N,), whose overlaps are ``sigma`` (to rounding).

    :math:`[z\ v\ m\ u] = \sqrt N\, Q L^\top` with :math:`\Gamma = L L^\top` (Cholesky) and
    :math:`Q` a random orthonormal :math:`N \times 4` frame, so :math:`[z\ v\ m\ u]^\top
    [z\ v\ m\ u] / N = L Q^\top Q L^\top = \Gamma`.

    Raises
    ------
    ValueError
        If the Gram matrix of ``sigma`` (shape (10,)) is not positive definite, or ``N < 4``.
    """
    sigma = real_array(sigma, "sigma", shape=(10,))
    N = integer(N, "N", low=4)
    Gam = gram(sigma)
    smallest = float(np.linalg.eigvalsh(Gam)[0])
    if smallest <= 1e-12 * max(1.0, float(np.abs(Gam).max())):
        raise ValueError(
            f"sigma is not a set of overlaps of real vectors: its Gram matrix must be positive definite, "
            f"its smallest eigenvalue is {smallest:.6g}"
        )
    Q, _ = np.linalg.qr(generator(rng).standard_normal((N, 4)))  # (N, 4), orthonormal columns
    X = math.sqrt(N) * Q @ np.linalg.cholesky(Gam).T  # (N, 4): z, v, m, u
    z, v, m, u = X.T
    return m.copy(), u.copy(), v.copy(), z.copy()


def _metric_rows(Gam, a, b):
    r"""Rows :math:`(ab)` of :math:`\bar G` from the Gram matrix ``Gam`` (..., 4, 4): shape (..., r, 10) for
    letter indices ``a``, ``b`` of shape (r, 1) (the rows' overlaps)."""
    delta = _like(np.eye(4), Gam)
    c, d = _A[None, :], _B[None, :]  # the column's overlap (cd)
    return (
        delta[a, c] * Gam[..., b, d]
        + delta[a, d] * Gam[..., b, c]
        + delta[b, c] * Gam[..., a, d]
        + delta[b, d] * Gam[..., a, c]
    )


@reference
def metric(sigma):
    r"""The preconditioner :math:`\bar G(\sigma)`, shape (..., 10, 10) from (..., 10).

    .. math::
        \bar G_{(ab),(cd)} = \delta_{ac}\sigma_{bd} + \delta_{ad}\sigma_{bc}
        + \delta_{bc}\sigma_{ad} + \delta_{bd}\sigma_{ac},

    so that gradient flow on the vectors (learning rate :math:`N\eta`) is
    :math:`\dot\sigma = -\eta\, \bar G\, \nabla_\sigma L`.
    """
    return _metric_rows(gram(sigma), _A[:, None], _B[:, None])


def _step_args(sigma, grad, eta):
    """``(sigma, grad, eta)`` checked: shapes (..., 10), ``eta >= 0``."""
    return _checked(sigma, "sigma", (10,)), _checked(grad, "grad", (10,)), real(eta, "eta", low=0.0)


@reference
def ode_step(sigma, grad, eta: float):
    r"""One forward-Euler step of the overlap ODE: :math:`\sigma - \eta\, \bar G(\sigma)\, \nabla_\sigma L`.

    Parameters
    ----------
    sigma : shape (..., 10)
    grad : shape (..., 10), :math:`\partial L / \partial \sigma` (zeros on the invisible overlaps)
    eta : float >= 0, the learning rate in overlap space

    Returns
    -------
    shape (..., 10)
    """
    sigma, grad, eta = _step_args(sigma, grad, eta)
    return sigma - eta * (metric(sigma) @ grad[..., None])[..., 0]


def sequential_step(sigma, grad, eta: float):
    r"""The paper's code's step: the ten overlaps updated one after another, in place, in :data:`OVERLAPS` order.

    For :math:`k = 1, \dots, 10`: :math:`\sigma_k \leftarrow \sigma_k - \eta\,[\bar G(\sigma)\,
    \nabla_\sigma L]_k`, with :math:`\sigma` holding the overlaps :math:`1..k-1` already updated
    (and the gradient of the step's start). To first order in :math:`\eta` it is :func:`ode_step`;
    at second order it differs, and it no longer keeps :math:`\sigma_{uu} - \sigma_{vv}` (the
    erf model's rescaling symmetry) constant: the change is :math:`O(\eta^2)` per step.

    Parameters and returns as :func:`ode_step` (a new array; the input is not changed).
    """
    sigma, grad, eta = _step_args(sigma, grad, eta)
    sigma = sigma.clone() if _is_torch(sigma) else sigma.copy()
    for k in range(len(OVERLAPS)):
        row = _metric_rows(gram(sigma), _A[k : k + 1, None], _B[k : k + 1, None])[..., 0, :]  # (..., 10)
        sigma[..., k] = sigma[..., k] - eta * (row * grad).sum(-1)
    return sigma


UPDATES = MappingProxyType({"simultaneous": ode_step, "sequential": sequential_step})
"""The overlap updates by name: all at once (:func:`ode_step`) or one after another (:func:`sequential_step`)."""


def update_step(sigma, grad, eta: float, update: str = "simultaneous"):
    """One step of the overlap ODE by the update named ``update`` (:data:`UPDATES`)."""
    return UPDATES[choice(update, "update", UPDATES)](sigma, grad, eta)


@reference
def invariants(sigma):
    r"""The conserved quantities :math:`I_k = \operatorname{tr}((S\Gamma)^k)`, :math:`k = 1..4`, shape (..., 4).

    :math:`S = \mathrm{diag}(1, 1, -1, -1)`, :math:`\Gamma` = :func:`gram`;
    :math:`I_1 = \sigma_{zz} + \sigma_{vv} - \sigma_{mm} - \sigma_{uu}`.
    """
    SG = _like(_S, sigma)[:, None] * gram(sigma)  # (..., 4, 4)
    powers = [SG]
    for _ in range(3):
        powers.append(powers[-1] @ SG)
    traces = [power.diagonal(0, -2, -1).sum(-1) for power in powers]
    return _xp(SG).stack(traces, -1)
