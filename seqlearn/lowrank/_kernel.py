r"""The effective erf model's forward and adjoint sweeps: the equations once, two loops that run them.

The equations are two elementwise steps, :func:`forward_step` and :func:`adjoint_step`, written
with arithmetic only, so that they evaluate the same on floats and on NumPy arrays. Two loops
drive them over :math:`L` lanes (one lane = one network's trial) and :math:`T` steps:

* :func:`_sweep_numpy`, time-major, one step of all lanes per NumPy call (always available);
* :func:`_sweep_numba`, lane by lane inside compiled loops (numba; blocks of lanes in parallel
  from ``PARALLEL_LANE_STEPS`` lanes times steps on, one thread below, where the threads' start
  and join would cost more than they save and a busy machine makes them wait on each other),
  when numba is installed (``pip install seqlearn[fast]``), about 5x faster on one core.

Every lane takes the same floating-point operations in the same order in both loops (the steps
are shared, the per-lane sums run over :math:`t` from :math:`T - 1` down to 0 in both, and nothing
is fused or reassociated), so their results are equal bit for bit. ``SEQLEARN_NUMBA=0`` (read at
import) keeps the NumPy loop even where numba is installed.

**Forward** (state before step :math:`t`: :math:`\kappa_m, \kappa_u`; :math:`\kappa_0 = 0`):

.. math::
    G_t = \big(1 + \tfrac\pi2 \Delta_t\big)^{-1/2}, \quad
    \Delta_t = \kappa_m(\sigma_{mm}\kappa_m + 2\sigma_{mu}\kappa_u) + \sigma_{uu}\kappa_u^2,

.. math::
    \kappa_u' = \kappa_u + dt\big((\sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u) G_t - \kappa_u\big), \quad
    \kappa_m' = \kappa_m + dt(x_t - \kappa_m), \quad
    \hat y_t = (\sigma_{zm}\rho_m + \sigma_{zu}\rho_u)\, G_t,

with the read :math:`\rho = \kappa` (``after=False``, the output before the update) or
:math:`\rho = \kappa'` (``after=True``, the paper's code: the updated state, the gain of the
state before).

**Adjoint.** With :math:`g_t = \partial L/\partial\hat y_t`, :math:`c_t = g_t G_t`,
:math:`\lambda = \partial L/\partial\kappa_u'` (every later dependence; :math:`0` after the last
step) and :math:`G' = -\tfrac\pi4 G^3`: for ``after=True`` first :math:`\lambda \mathrel{+}=
\sigma_{zu} c_t` (:math:`\hat y_t` reads :math:`\kappa_u'`); then :math:`h = dt\,\lambda G_t`,
:math:`w = (g_t r_t + dt\,\lambda s_t) G'_t` (:math:`r = \sigma_{zm}\rho_m + \sigma_{zu}\rho_u`,
:math:`s = \sigma_{vm}\kappa_m + \sigma_{vu}\kappa_u`) and

.. math::
    \lambda_t = \lambda(1 - dt) + \sigma_{vu} h + 2w(\sigma_{mu}\kappa_m + \sigma_{uu}\kappa_u)
    \;[+\, \sigma_{zu} c_t \text{ if } \texttt{after=False}],

and step :math:`t` adds :math:`c\rho_m, c\rho_u, h\kappa_m, h\kappa_u, 2w\kappa_m\kappa_u,
w\kappa_m^2, w\kappa_u^2` to :math:`\partial L/\partial\sigma` for zm, zu, vm, vu, mu, mm, uu.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np


def _numba() -> Any:
    """The numba module, or None where it is not installed (the compiled loop is optional)."""
    try:
        import numba
    except ImportError:  # pragma: no cover - exercised where numba is absent
        return None
    return numba


numba = _numba()

__all__ = ["COEFFICIENTS", "ENGINES", "engine", "forward_step", "adjoint_step", "sweep"]

COEFFICIENTS = ("zm", "zu", "vm", "vu", "mu", "mm", "uu")
"""The visible overlaps the sweeps read, in this order (``coef`` columns)."""

HALF_PI = math.pi / 2
QUARTER_PI = math.pi / 4
FORWARD, LOSS, UPSTREAM = 0, 1, 2  # a sweep's mode: outputs only; masked MSE and its gradient; a given dL/dy_hat
LANES = 4  # lanes per block of the compiled loop: four independent recursions hide the sqrt's latency
PARALLEL_LANE_STEPS = 2**18  # lanes x steps from which the compiled loop runs its blocks on several threads

ENGINES = ("numba", "numpy") if numba is not None else ("numpy",)
"""The loops this installation can run, the default first."""


def engine() -> str:
    """The loop :func:`sweep` runs: ``"numba"`` where numba is installed, ``SEQLEARN_NUMBA`` not 0; else ``"numpy"``."""
    return ENGINES[0] if os.environ.get("SEQLEARN_NUMBA", "1").strip() != "0" else "numpy"


def forward_step(km, ku, x, zm, zu, vm, vu, mu, mm, uu, dt, after):
    r"""One step of the effective model: :math:`(G_t, \kappa_m', \kappa_u', \hat y_t)` from the state before it.

    Elementwise on floats or arrays (the overlaps broadcast against the lanes).
    """
    G = 1.0 / np.sqrt(1.0 + HALF_PI * (km * (mm * km + 2.0 * mu * ku) + uu * ku * ku))
    ku_next = ku + dt * ((vm * km + vu * ku) * G - ku)
    km_next = km + dt * (x - km)
    if after:
        return G, km_next, ku_next, (zm * km_next + zu * ku_next) * G
    return G, km_next, ku_next, (zm * km + zu * ku) * G


def adjoint_step(km, ku, km_next, ku_next, G, g, lam, zm, zu, vm, vu, mu, mm, uu, dt, after):
    r"""One step back: :math:`\lambda_t` from :math:`\lambda = \partial L/\partial\kappa_u'`, and step :math:`t`'s
    seven terms of :math:`\partial L/\partial\sigma` (zm, zu, vm, vu, mu, mm, uu); see the module's equations."""
    c = g * G
    if after:
        lam = lam + zu * c
        rm, ru = km_next, ku_next
    else:
        rm, ru = km, ku
    h = dt * lam * G
    w = (g * (zm * rm + zu * ru) + dt * lam * (vm * km + vu * ku)) * (-QUARTER_PI * G * G * G)
    lam_t = lam * (1.0 - dt) + vu * h + 2.0 * w * (mu * km + uu * ku)
    if not after:
        lam_t = lam_t + zu * c
    return lam_t, c * rm, c * ru, h * km, h * ku, 2.0 * w * km * ku, w * km * km, w * ku * ku


def _output_gradient(y_hat, target, mask, scale):
    r"""The masked squared error's :math:`g = 2\,\text{scale}\,\mu(\hat y - y)` and :math:`\mu(\hat y - y)^2`."""
    e = y_hat - target
    return 2.0 * scale * (mask * e), mask * e * e


def _sweep_numpy(x, target, mask, scale, coef, dt, after, mode):
    """The NumPy loop: arrays ``(n, B, T)``, ``n`` 1 or ``nets``; ``scale`` ``(nets, 1)``; ``coef`` ``(7, nets, 1)``.

    Returns ``y_hat`` ``(nets, B, T)`` (``None`` unless ``mode`` is FORWARD), the per-lane loss and gradient
    terms ``(nets, B)`` and ``(7, nets, B)`` (``None`` for FORWARD).
    """
    nets, B, T = coef.shape[1], x.shape[1], x.shape[2]
    xT = np.moveaxis(x, -1, 0)  # (T, n, B): step t's inputs are x[t]
    km, ku = np.zeros((T + 1, nets, B)), np.zeros((T + 1, nets, B))
    G, g = np.empty((T, nets, B)), np.empty((T, nets, B))
    zm, zu, vm, vu, mu, mm, uu = coef
    y_hat, loss = np.empty((T, nets, B) if mode == FORWARD else (0,)), np.zeros((nets, B))
    for t in range(T):
        G[t], km[t + 1], ku[t + 1], out = forward_step(km[t], ku[t], xT[t], zm, zu, vm, vu, mu, mm, uu, dt, after)
        if mode == FORWARD:
            y_hat[t] = out
        elif mode == LOSS:
            g[t], squared = _output_gradient(out, target[..., t], mask[..., t], scale)
            loss += squared
        else:
            g[t] = target[..., t]
    if mode == FORWARD:
        return np.moveaxis(y_hat, 0, -1), None, None
    lam, parts = np.zeros((nets, B)), np.zeros((7, nets, B))
    for t in range(T - 1, -1, -1):
        lam, *terms = adjoint_step(
            km[t], ku[t], km[t + 1], ku[t + 1], G[t], g[t], lam, zm, zu, vm, vu, mu, mm, uu, dt, after
        )
        parts += terms
    return None, loss, parts


if numba is not None:
    _forward_step = numba.njit(cache=True)(forward_step)
    _adjoint_step = numba.njit(cache=True)(adjoint_step)
    _output_gradient_jit = numba.njit(cache=True)(_output_gradient)

    def _sweep_lanes(x, target, mask, scale, coef, B, dt, after, mode, y_hat, loss, parts):  # pragma: no cover
        """The compiled loop over blocks of ``LANES`` lanes: ``x``, ``target``, ``mask`` ``(rows, T)`` (lane ``l``
        reads row ``l % rows``), ``scale`` ``(nets,)``, ``coef`` ``(nets, 7)``; writes ``y_hat`` ``(L, T)``
        (FORWARD) or ``loss`` ``(L,)`` and ``parts`` ``(L, 7)``. ``L`` is a multiple of ``LANES``."""
        L, T, rows = loss.shape[0], x.shape[1], x.shape[0]
        for block in numba.prange(L // LANES):
            row, c, s = np.empty(LANES, np.int64), np.empty((LANES, 7)), np.empty(LANES)
            for j in range(LANES):  # each lane's input row, overlaps and scale, looked up once
                lane = block * LANES + j
                row[j], c[j], s[j] = lane % rows, coef[lane // B], scale[lane // B]
            km, ku = np.zeros((T + 1, LANES)), np.zeros((T + 1, LANES))
            G, g = np.empty((T, LANES)), np.empty((T, LANES))
            sq = np.zeros(LANES)
            for t in range(T):  # the lanes inside the step: independent recursions side by side
                for j in range(LANES):
                    G[t, j], km[t + 1, j], ku[t + 1, j], out = _forward_step(
                        km[t, j], ku[t, j], x[row[j], t],
                        c[j, 0], c[j, 1], c[j, 2], c[j, 3], c[j, 4], c[j, 5], c[j, 6], dt, after,
                    )  # fmt: skip
                    if mode == 0:
                        y_hat[block * LANES + j, t] = out
                    elif mode == 1:
                        g[t, j], squared = _output_gradient_jit(out, target[row[j], t], mask[row[j], t], s[j])
                        sq[j] += squared
                    else:
                        g[t, j] = target[row[j], t]
            if mode == 0:
                continue
            lam, acc = np.zeros(LANES), np.zeros((7, LANES))
            for t in range(T - 1, -1, -1):
                for j in range(LANES):
                    lam[j], d0, d1, d2, d3, d4, d5, d6 = _adjoint_step(
                        km[t, j], ku[t, j], km[t + 1, j], ku[t + 1, j], G[t, j], g[t, j], lam[j],
                        c[j, 0], c[j, 1], c[j, 2], c[j, 3], c[j, 4], c[j, 5], c[j, 6], dt, after,
                    )  # fmt: skip
                    acc[0, j] += d0
                    acc[1, j] += d1
                    acc[2, j] += d2
                    acc[3, j] += d3
                    acc[4, j] += d4
                    acc[5, j] += d5
                    acc[6, j] += d6
            for j in range(LANES):
                loss[block * LANES + j] = sq[j]
                parts[block * LANES + j] = acc[:, j]

    _sweep_threads = numba.njit(cache=True, parallel=True, error_model="numpy")(_sweep_lanes)
    _sweep_thread = numba.njit(cache=True, error_model="numpy")(_sweep_lanes)  # prange runs as range


def _sweep_numba(x, target, mask, scale, coef, dt, after, mode):
    """:func:`_sweep_numpy`'s results from the compiled loop (lanes padded to a multiple of ``LANES``)."""
    nets, B, T = coef.shape[1], x.shape[1], x.shape[2]
    L = nets * B
    padded = -(-L // LANES) * LANES
    x_rows, target_rows, mask_rows = (np.ascontiguousarray(a.reshape(-1, T)) for a in (x, target, mask))
    coef_lanes = np.ascontiguousarray(coef[:, :, 0].T)  # (nets, 7)
    coef_lanes = np.concatenate([coef_lanes, np.repeat(coef_lanes[-1:], -(-(padded - L) // B), 0)])  # padding lanes
    scale_lanes = np.concatenate([scale[:, 0], np.repeat(scale[-1:, 0], len(coef_lanes) - nets)])
    y_hat = np.empty((padded if mode == FORWARD else 0, T))
    loss, parts = np.empty(padded), np.empty((padded, 7))
    loop = _sweep_threads if L * T >= PARALLEL_LANE_STEPS else _sweep_thread
    loop(x_rows, target_rows, mask_rows, scale_lanes, coef_lanes, B, dt, after, mode, y_hat, loss, parts)
    if mode == FORWARD:
        return y_hat[:L].reshape(nets, B, T), None, None
    return None, loss[:L].reshape(nets, B), np.ascontiguousarray(np.moveaxis(parts[:L].reshape(nets, B, 7), -1, 0))


def sweep(x, target, mask, scale, coef, dt: float, after: bool, mode: int, engine_name: str | None = None):
    r"""The effective model over all lanes: outputs, or each lane's loss and terms of :math:`\partial L/\partial\sigma`.

    Parameters
    ----------
    x : np.ndarray, shape ``(n, B, T)``, ``n`` 1 (shared by the networks) or ``nets``
    target, mask : np.ndarray, shape ``(n, B, T)``
        LOSS: the targets and mask; UPSTREAM: ``target`` is :math:`\partial L/\partial\hat y`
        (``mask`` unused); FORWARD: unused (pass ``x``).
    scale : np.ndarray, shape ``(nets, 1)``, or None
        LOSS: :math:`1 / \sum\mu` per network (``g = 2\,\text{scale}\,\mu(\hat y - y)``); unused otherwise.
    coef : np.ndarray, shape ``(7, nets, 1)``, float64
        The overlaps :data:`COEFFICIENTS` of each network.
    after : bool
        Read :math:`\hat y_t` from the updated state (the paper's code) instead of the state before.
    mode : FORWARD, LOSS or UPSTREAM
    engine_name : ``"numba"``, ``"numpy"`` or None (:func:`engine`)

    Returns
    -------
    y_hat : ``(nets, B, T)`` for FORWARD, else None
    loss : ``(nets, B)`` per-lane :math:`\sum_t \mu(\hat y - y)^2` (LOSS), else unspecified; None for FORWARD
    parts : ``(7, nets, B)`` per-lane sums over steps of the gradient terms; None for FORWARD
    """
    name = engine() if engine_name is None else engine_name
    scale = np.ones((coef.shape[1], 1)) if scale is None else scale
    if name not in ENGINES:
        raise ValueError(f"engine_name must be one of {list(ENGINES)} on this installation, got {name!r}")
    run = _sweep_numba if name == "numba" else _sweep_numpy
    return run(x, target, mask, scale, coef, float(dt), bool(after), mode)
