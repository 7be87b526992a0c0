r"""The experiment of Exercises 6, graded by properties: what finite steps of gradient descent do to :math:`I_1`.

The network is the smallest one of Chapter 6 that has the rescaling symmetry: a readout :math:`z` and an input
:math:`m` (:math:`u = v = 0`), the output :math:`f = \sigma_{zm}` and the loss :math:`L = \frac12 (\sigma_{zm} -
y)^2`. The loss is unchanged by :math:`z \to q z`, :math:`m \to m / q`, so gradient flow conserves
:math:`I_1 = \sigma_{zz} - \sigma_{mm}`; gradient descent with rate :math:`N\eta` does not. One step,
:math:`z' = z - \eta g m`, :math:`m' = m - \eta g z` with :math:`g = \sigma_{zm} - y`, gives exactly

.. math:: I_1' = I_1 (1 - \eta^2 g^2) = I_1 (1 - 2\eta^2 L), \qquad
          \sigma_{zm}' = \sigma_{zm} - \eta g (\sigma_{zz} + \sigma_{mm}) + \eta^2 g^2 \sigma_{zm},

so over a fixed learning time :math:`\eta k` the drift of :math:`I_1` is :math:`2\eta I_1 \int L\, dt + O(\eta^2)`:
first order in :math:`\eta`, halved when the rate is halved and the steps doubled.

``invariant_drift`` (:func:`invariant_drift`) is graded by these closed forms (:func:`_drift_judge`): the loss and
:math:`I_1` of the vectors given, the loss after the first step, :math:`I_1`'s recurrence on the answer's own
losses, a loss that falls, and a drift whose ratio at :math:`\eta` and :math:`\eta/2` lies within
:data:`DRIFT_RATIO_BAND` of 2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..guard import reference
from ..validation import integer, real, real_array
from .checks import Case, same_values
from .learnability_properties import PlantedCase, PropertyCheck

__all__ = ["DRIFT_RATIO_BAND", "EXAMPLE_DRIFT", "INVARIANT_DRIFT", "invariant_drift"]


@reference
def invariant_drift(z, m, y, eta, steps) -> dict[str, np.ndarray]:
    r"""Gradient descent on :math:`z, m` for :math:`L = \frac12(\sigma_{zm} - y)^2`, and :math:`I_1` along it.

    .. math:: z_{k+1} = z_k - \eta\, g_k\, m_k, \quad m_{k+1} = m_k - \eta\, g_k\, z_k, \quad
              g_k = \frac{z_k^\top m_k}{N} - y

    (the rate :math:`N\eta` on :math:`\nabla_z L = g\, m / N`), :math:`k = 0, \dots,` ``steps`` :math:`- 1`.

    Parameters
    ----------
    z, m : (N,) arrays, the readout and the input
    y : float, the target of :math:`\sigma_{zm}`
    eta : float > 0
    steps : int >= 1

    Returns
    -------
    dict with ``"loss"`` :math:`L_k = \frac12 g_k^2` and ``"I1"`` :math:`\sigma_{zz} - \sigma_{mm}` of
    :math:`(z_k, m_k)`, each a float64 array of shape ``(steps + 1,)``: before the first step, then after each.
    ``ValueError`` for vectors of different lengths, :math:`\eta \le 0` or ``steps`` < 1.
    """
    z = real_array(z, "z", ndim=1)
    m = real_array(m, "m", shape=z.shape)
    y, eta = real(y, "y"), real(eta, "eta", low=0.0, low_open=True)
    steps = integer(steps, "steps", low=1)
    N = z.size
    loss, I1 = np.empty(steps + 1), np.empty(steps + 1)
    for k in range(steps + 1):
        g = z @ m / N - y
        loss[k], I1[k] = 0.5 * g**2, (z @ z - m @ m) / N
        z, m = z - eta * g * m, m - eta * g * z  # both from the old vectors
    return {"loss": loss, "I1": I1}


DRIFT_RATIO_BAND = 0.5
"""How far the ratio of the drifts of I1 at eta and at eta / 2 (twice the steps) may lie from 2, its limit as
eta -> 0 (in 1000 draws of the cases the reference's ratios lay between 2.00 and 2.09)."""


def _drift_case(rng: np.random.Generator) -> PlantedCase:
    """Vectors of different norms (|I1| >= 0.2), a target away from sigma_zm, a rate with eta (sigma_zz + sigma_mm)
    in [0.02, 0.1], and enough steps for a learning time of 5-8 / (sigma_zz + sigma_mm)."""
    N = int(rng.integers(5, 51))
    while True:
        z, m = rng.normal(0.0, rng.uniform(0.4, 1.6), size=N), rng.normal(0.0, rng.uniform(0.4, 1.6), size=N)
        if abs(z @ z - m @ m) / N >= 0.2:
            break
    y = float(z @ m / N + rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 2.0))
    rate = (z @ z + m @ m) / N  # how fast g decays at the start: g' = g (1 - eta rate) to first order
    eta = float(rng.uniform(0.02, 0.1) / rate)
    steps = int(np.ceil(rng.uniform(5.0, 8.0) / (eta * rate)))
    return PlantedCase({"z": z, "m": m, "y": y, "eta": eta, "steps": steps})


EXAMPLE_DRIFT: dict[str, Any] = {
    "z": np.array([1.0, 2.0, 0.0, 1.0]),
    "m": np.array([1.0, 1.0, 1.0, 1.0]),
    "y": 2.0,
    "eta": 0.05,
    "steps": 60,
}
"""The notebook's worked example: sigma_zm = 1, I1 = 1.5 - 1 = 0.5, g_0 = -1."""


def _first_step_loss(z, m, y, eta, **_) -> float:
    """L after one step, in closed form from the overlaps of the vectors given."""
    N = z.size
    zm, zz, mm = z @ m / N, z @ z / N, m @ m / N
    g = zm - y
    return 0.5 * (zm - eta * g * (zz + mm) + eta**2 * g**2 * zm - y) ** 2


def _drift_problem(case: Case, loss: np.ndarray, I1: np.ndarray) -> tuple[str, str | None] | None:
    """The closed forms of one run: its start, its first step, I1's recurrence and a falling loss."""
    z, m, y, eta = (case.inputs[k] for k in ("z", "m", "y", "eta"))
    N = z.size
    start = np.array([0.5 * (z @ m / N - y) ** 2, (z @ z - m @ m) / N])
    if not same_values(np.array([loss[0], I1[0]]), start, rtol=1e-9, atol=1e-12):
        return "the first entries differ from the loss and I1 of the vectors given", (
            "entry 0 is before any step: L_0 = (z.m / N - y)^2 / 2 and I1_0 = (z.z - m.m) / N"
        )
    if not same_values(loss[1], _first_step_loss(**case.inputs), rtol=1e-9, atol=1e-12):
        return "the loss after the first step differs from its closed form", (
            "one step is z - eta g m and m - eta g z with g = z.m / N - y, both computed from the OLD z and m "
            "(the rate N eta on the gradient g m / N)"
        )
    if not same_values(I1[1:], I1[:-1] * (1.0 - 2.0 * eta**2 * loss[:-1]), rtol=1e-9, atol=1e-12):
        return "I1 does not follow I1_(k+1) = I1_k (1 - 2 eta^2 L_k), which each step of gradient descent obeys", (
            "record L_k and I1_k of the same vectors, before step k + 1, and update z and m simultaneously"
        )
    if not loss[-1] < 0.01 * loss[0]:
        return "the loss has not fallen below 1% of its start", "keep taking steps down the gradient, every step"
    return None


def _drift_judge(run, case: PlantedCase, got) -> tuple[str, str | None] | None:
    """The closed forms at eta, then at eta / 2 with twice the steps, and a drift ratio near 2."""
    problem = _drift_problem(case, np.asarray(got["loss"]), np.asarray(got["I1"]))
    if problem:
        return problem
    inputs = dict(case.inputs)
    half = PlantedCase({**inputs, "eta": inputs["eta"] / 2, "steps": 2 * inputs["steps"]})
    again, error = run(half)
    if error is not None:
        return "it failed at half the rate and twice the steps", None
    problem = _drift_problem(half, np.asarray(again["loss"]), np.asarray(again["I1"]))
    if problem:
        return f"at half the rate and twice the steps, {problem[0]}", problem[1]
    ratio = abs(got["I1"][-1] - got["I1"][0]) / abs(again["I1"][-1] - again["I1"][0])
    if not abs(ratio - 2.0) <= DRIFT_RATIO_BAND:
        return "the drift of I1 did not halve (within 25%) at half the rate over the same learning time", None
    return None


INVARIANT_DRIFT = PropertyCheck(
    name="invariant_drift",
    reference=invariant_drift,
    random_case=_drift_case,
    fixed_cases=(
        PlantedCase(EXAMPLE_DRIFT, label="the worked example"),
        Case({**EXAMPLE_DRIFT, "m": np.ones(3)}, label="vectors of different lengths"),
        Case({**EXAMPLE_DRIFT, "eta": 0.0}, label="eta = 0"),
        Case({**EXAMPLE_DRIFT, "steps": 0}, label="no step"),
    ),
    n_visible=2,
    n_hidden=5,
    hint="z, m <- z - eta g m, m - eta g z with g = z.m / N - y, steps times; return {'loss': L_k, 'I1': I1_k} with "
    "L = g^2 / 2 and I1 = (z.z - m.m) / N before the first step and after each, float64 arrays of shape "
    "(steps + 1,); ValueError for vectors of different lengths, eta <= 0 or steps < 1",
    judge=_drift_judge,
)
