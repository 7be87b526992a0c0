r"""Chapter 6's exercise references in plain NumPy (float64): overlaps, the latent model, the metric, the ODE.

Each is a :func:`seqlearn.guard.reference`, so it refuses to run inside a graded answer:

* :func:`overlaps_from_vectors`, the ten overlaps :math:`\sigma_{ab} = a^\top b / N` in the order
  :data:`~seqlearn.lowrank.overlaps.OVERLAPS` (:func:`seqlearn.lowrank.overlaps.overlaps`);
* :func:`effective_output`, the linear rank-1 network's output from its exact 2-D latent model
  (:func:`seqlearn.lowrank.linear.latent_output`, on any input, not only the filter task);
* :func:`metric_bar`, the preconditioner :math:`\bar G(\sigma)` of the learning ODE
  (:func:`seqlearn.lowrank.overlaps.metric`);
* :func:`overlap_ode_step`, one Euler step :math:`\sigma - \eta\,\bar G(\sigma)\,\nabla_\sigma L`
  (:func:`seqlearn.lowrank.overlaps.ode_step`);
* :func:`invariant_I1`, :math:`I_1 = \sigma_{zz} + \sigma_{vv} - \sigma_{mm} - \sigma_{uu}`
  (the first of :func:`seqlearn.lowrank.overlaps.invariants`).

They are written entry by entry, as the equations read, for one network at a time; the package's
versions are vectorised and batched. Nothing here imports torch or scipy.
``tests/test_lowrank_reference.py`` holds them to the package's implementations.
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import real, real_array
from .overlaps import OVERLAPS

__all__ = [
    "overlaps_from_vectors",
    "effective_output",
    "metric_bar",
    "overlap_ode_step",
    "invariant_I1",
]


_PAIRS = tuple((name[0], name[1]) for name in OVERLAPS)
"""The two letters of each overlap, in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order: ("z", "m"), ...."""


def _vector(x, name: str, size: int = 10) -> np.ndarray:
    """``x`` as a float64 array of shape ``(size,)``."""
    x = real_array(x, name)
    if x.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {x.shape}")
    return x


def _lookup(sigma: np.ndarray) -> dict[str, float]:
    r"""``{"zm": sigma_zm, "mz": sigma_zm, ...}``: :math:`\sigma_{ab}` under both orders of the letters."""
    table = {}
    for name, value in zip(OVERLAPS, sigma):
        table[name] = table[name[::-1]] = float(value)
    return table


@reference
def overlaps_from_vectors(m, u, v, z) -> np.ndarray:
    r"""The ten overlaps :math:`\sigma_{ab} = a^\top b / N` of the vectors :math:`m, u, v, z`.

    .. math::
        \sigma = (\sigma_{zm}, \sigma_{zu}, \sigma_{vm}, \sigma_{vu}, \sigma_{mu}, \sigma_{zv},
        \sigma_{mm}, \sigma_{uu}, \sigma_{vv}, \sigma_{zz}).

    Parameters
    ----------
    m, u, v, z : arrays ``(N,)``, one length :math:`N \ge 1`
        The input, the two connectivity vectors (:math:`J = u v^\top / N`) and the readout.

    Returns
    -------
    new float64 array ``(10,)``, in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order.
    """
    vectors = {name: real_array(x, name, ndim=1) for name, x in zip("muvz", (m, u, v, z))}
    lengths = {name: x.size for name, x in vectors.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"m, u, v, z must have one length N, got lengths {lengths}")
    N = lengths["m"]
    if N == 0:
        raise ValueError("m, u, v, z must have N >= 1 entries, got N = 0")
    return np.array([vectors[a] @ vectors[b] / N for a, b in _PAIRS])


@reference
def effective_output(sigma_visible, x, dt) -> np.ndarray:
    r"""The linear rank-1 network's output from its 2-D latent model, shape ``(T,)``.

    With :math:`h_t = \kappa_m(t)\, m + \kappa_u(t)\, u` and :math:`\kappa(0) = 0`, for
    :math:`t = 0, \dots, T - 1`:

    .. math::
        \kappa_m(t+1) &= (1 - dt)\,\kappa_m(t) + dt\, x_t, \\
        \kappa_u(t+1) &= (1 - dt)\,\kappa_u(t) + dt\,\big(\sigma_{vm}\kappa_m(t) + \sigma_{vu}\kappa_u(t)\big), \\
        f_t &= \sigma_{zm}\,\kappa_m(t+1) + \sigma_{zu}\,\kappa_u(t+1),

    both :math:`\kappa` updated from the old values, the output read *after* the update.

    Parameters
    ----------
    sigma_visible : array ``(4,)``
        The visible overlaps :math:`(\sigma_{zm}, \sigma_{zu}, \sigma_{vm}, \sigma_{vu})`.
    x : array ``(T,)``
        The input, one number per step.
    dt : float in (0, 1]
        The Euler step (:math:`\tau = 1`).

    Returns
    -------
    new float64 array ``(T,)``: :math:`f_0, \dots, f_{T-1}`.
    """
    zm, zu, vm, vu = _vector(sigma_visible, "sigma_visible", 4)
    x = real_array(x, "x", ndim=1)
    dt = real(dt, "dt", low=0.0, high=1.0, low_open=True)
    kappa_m = kappa_u = 0.0
    f = np.empty(x.size)
    for t, x_t in enumerate(x):
        kappa_m, kappa_u = (
            (1.0 - dt) * kappa_m + dt * x_t,
            (1.0 - dt) * kappa_u + dt * (vm * kappa_m + vu * kappa_u),
        )
        f[t] = zm * kappa_m + zu * kappa_u
    return f


@reference
def metric_bar(sigma) -> np.ndarray:
    r"""The preconditioner :math:`\bar G(\sigma)` of the overlap ODE, shape ``(10, 10)``.

    .. math::
        \bar G_{(ab),(cd)} = \delta_{ac}\,\sigma_{bd} + \delta_{ad}\,\sigma_{bc}
        + \delta_{bc}\,\sigma_{ad} + \delta_{bd}\,\sigma_{ac},

    rows and columns in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order, :math:`\sigma_{ba} =
    \sigma_{ab}`. A norm's coordinate is :math:`\sigma_{aa}` itself, so all four terms can fire:
    :math:`\bar G_{(mm),(mm)} = 4\sigma_{mm}`, :math:`\bar G_{(mm),(zm)} = 2\sigma_{zm}`. It is
    :math:`N D D^\top` with :math:`D = \partial\sigma/\partial\theta`.

    Parameters
    ----------
    sigma : array ``(10,)``, in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order.

    Returns
    -------
    new float64 array ``(10, 10)``, symmetric.
    """
    return _metric(_vector(sigma, "sigma"))


def _metric(sigma: np.ndarray) -> np.ndarray:
    """:func:`metric_bar` of a checked ``sigma`` (10,), entry by entry."""
    s = _lookup(sigma)
    G = np.zeros((10, 10))
    for i, (a, b) in enumerate(_PAIRS):
        for j, (c, d) in enumerate(_PAIRS):
            G[i, j] = (
                (s[b + d] if a == c else 0.0)
                + (s[b + c] if a == d else 0.0)
                + (s[a + d] if b == c else 0.0)
                + (s[a + c] if b == d else 0.0)
            )
    return G


@reference
def overlap_ode_step(sigma, grad, eta) -> np.ndarray:
    r"""One forward-Euler step of the learning ODE: :math:`\sigma - \eta\, \bar G(\sigma)\, \nabla_\sigma L`.

    Gradient descent on the vectors with learning rate :math:`N\eta` moves the overlaps by this
    step, to first order in :math:`\eta`.

    Parameters
    ----------
    sigma : array ``(10,)``
        The overlaps, in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order.
    grad : array ``(10,)``
        :math:`\partial L / \partial \sigma` in the same order (zeros on the overlaps the loss
        does not see).
    eta : float >= 0
        The learning rate in overlap space.

    Returns
    -------
    new float64 array ``(10,)``.
    """
    sigma = _vector(sigma, "sigma")
    grad = _vector(grad, "grad")
    eta = real(eta, "eta", low=0.0)
    return sigma - eta * (_metric(sigma) @ grad)


@reference
def invariant_I1(sigma):
    r""":math:`I_1 = \operatorname{tr}(S\Gamma) = \sigma_{zz} + \sigma_{vv} - \sigma_{mm} - \sigma_{uu}`.

    :math:`S = \mathrm{diag}(1, 1, -1, -1)` on :math:`(z, v, m, u)`: the norms of :math:`A = [z\ v]`
    minus those of :math:`B = [m\ u]`. Gradient flow on a loss of the visible overlaps conserves it,
    and so does every Euler step (:func:`overlap_ode_step`), since its increment is linear.

    Parameters
    ----------
    sigma : array ``(10,)``, or ``(K, 10)`` for K sets of overlaps (a trajectory).

    Returns
    -------
    float for ``(10,)``; new float64 array ``(K,)`` for ``(K, 10)``.
    """
    sigma = real_array(sigma, "sigma", ndim=(1, 2))
    if sigma.shape[-1] != 10:
        raise ValueError(f"sigma must have shape (10,) or (K, 10), got {sigma.shape}")
    at = {name: sigma[..., i] for i, name in enumerate(OVERLAPS)}
    I1 = at["zz"] + at["vv"] - at["mm"] - at["uu"]
    return float(I1) if sigma.ndim == 1 else I1
