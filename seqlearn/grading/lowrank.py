r"""Autograder checks of the Chapter 6 exercises (learning in low-rank RNNs, seen in overlap space).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in :mod:`seqlearn.lowrank.reference`
(the ten overlaps of four vectors, the linear network's output from its 2-D latent model, the
metric :math:`\bar G(\sigma)`, one Euler step of the overlap ODE and the invariant :math:`I_1`)
and raises :class:`~seqlearn.grading.checks.CheckFailure` with an explanation on the first wrong
case. Visible cases are the notebook's worked examples plus random cases from fixed seeds; hidden
cases are drawn fresh at each grading run (see :mod:`seqlearn.grading.checks`).

Random inputs follow the notebook's conventions: float64 arrays, overlaps ``(10,)`` in the order
:math:`(\sigma_{zm}, \sigma_{zu}, \sigma_{vm}, \sigma_{vu}, \sigma_{mu}, \sigma_{zv}, \sigma_{mm},
\sigma_{uu}, \sigma_{vv}, \sigma_{zz})`. Every random :math:`\sigma` is the set of overlaps of real
vectors: its Gram matrix is positive definite (drawn as :math:`X X^\top / n` plus a margin, or
near the orthonormal start of training). Gradients are zero on the invisible overlaps of a linear
network, on those of an erf network, or nowhere.

The targeted hints recognise the usual mistakes by recomputing them: overlaps not divided by
:math:`N`, divided by :math:`N - 1`, in another order or with norms for squared norms; the output
read before the update, the leak or the input without :math:`dt`, :math:`\kappa_u` updated from the
new :math:`\kappa_m`, the visible overlaps in another order; the metric without the factor 2 of the
norms (:math:`\bar G_{(mm),(mm)} = 4\sigma_{mm}`), with two of its four terms, its visible block
only or in another order; the step with the wrong sign, without the metric, with its diagonal only
or with a metric missing the norms' factor 2; :math:`I_1` with the wrong signs or as the plain trace.

The experiment, ``invariant_drift`` (gradient descent on a readout and an input, and the drift of :math:`I_1` it
causes), is graded by closed forms of its result, not by equality with :func:`invariant_drift`: see
:mod:`seqlearn.grading.lowrank_experiment`.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import numpy as np

from ..lowrank.reference import effective_output, invariant_I1, metric_bar, overlap_ode_step, overlaps_from_vectors
from .checks import Case, FunctionCheck, define_checkers, matching_advice, same_values
from .lowrank_experiment import DRIFT_RATIO_BAND, EXAMPLE_DRIFT, INVARIANT_DRIFT, invariant_drift

__all__ = [
    "DRIFT_RATIO_BAND",
    "EXAMPLE_DRIFT",
    "invariant_drift",
    "OVERLAP_ORDER",
    "EXAMPLE_VECTORS",
    "EXAMPLE_SIGMA",
    "EXAMPLE_LATENT",
    "FILTER_SOLUTION",
    "ORTHONORMAL",
    "CHECKS",
]

OVERLAP_ORDER = ("zm", "zu", "vm", "vu", "mu", "zv", "mm", "uu", "vv", "zz")
"""The order of every 10-vector of overlaps in the exercises (the package's ``OVERLAPS``)."""

_PAIRS = tuple((name[0], name[1]) for name in OVERLAP_ORDER)  # ("z", "m"), ...
_POS = {name: i for i, name in enumerate(OVERLAP_ORDER)}
_LETTERS = "zvmu"  # the Gram matrix's order: A = [z v], then B = [m u]
_NORMS = np.array([a == b for a, b in _PAIRS])  # the four squared norms
_VISIBLE = {  # the overlaps a loss sees, per network
    "linear": ("zm", "zu", "vm", "vu"),
    "erf": ("zm", "zu", "vm", "vu", "mu", "mm", "uu"),
    "any": OVERLAP_ORDER,
}

EXAMPLE_VECTORS: dict[str, Any] = {
    "m": np.array([1.0, 1.0, 1.0, 1.0]),
    "u": np.array([1.0, -1.0, 1.0, -1.0]),
    "v": np.array([2.0, 0.0, 1.0, 1.0]),
    "z": np.array([1.0, 2.0, 0.0, 1.0]),
}
"""The notebook's four vectors (N = 4)."""

EXAMPLE_SIGMA = np.array([1.0, -0.5, 1.0, 0.5, 0.0, 0.75, 1.0, 1.0, 1.5, 1.5])
"""Their overlaps: the worked example of the metric, the step and I1."""

ORTHONORMAL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
"""Orthonormal vectors (each of norm sqrt(N)): the idealised start of training."""

EXAMPLE_LATENT: dict[str, Any] = {
    "sigma_visible": np.array([1.0, 0.5, 1.0, 0.5]),
    "x": np.array([1.0, 0.0, 0.0]),
    "dt": 0.5,
}
"""The notebook's latent model: a unit input at t = 0, three steps of dt = 1/2."""

_C_STAR, _DT = 0.2, 0.05
_VU_STAR = 1.0 - (1.0 - math.exp(-_C_STAR * _DT)) / _DT
FILTER_SOLUTION: dict[str, Any] = {
    "sigma_visible": np.array([1.0, math.sqrt(_VU_STAR), math.sqrt(_VU_STAR), _VU_STAR]),
    "x": np.r_[1.0 / _DT, np.zeros(59)],
    "dt": _DT,
}
"""A zero-loss network of the filter task (c* = 0.2, dt = 0.05): its impulse response is exp(-0.2 k dt)."""


def _matching(candidates, got, expected) -> str | None:
    return matching_advice(candidates, got, expected, same_values)


def _permutation_of(got, expected) -> bool:
    """Whether ``got`` holds ``expected``'s values in another order (same shape)."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    return (
        got.shape == expected.shape
        and np.allclose(np.sort(got, axis=None), np.sort(expected, axis=None), rtol=1e-9, atol=1e-12)
        and not np.allclose(got, expected, rtol=1e-9, atol=1e-12)
    )


# ----------------------------------------------------------------------------- random overlaps


def _sigma_of_gram(Gam: np.ndarray) -> np.ndarray:
    """The overlaps (10,) of a Gram matrix (4, 4) of (z, v, m, u)."""
    return np.array([Gam[_LETTERS.index(a), _LETTERS.index(b)] for a, b in _PAIRS])


def _gram_of_sigma(sigma) -> np.ndarray:
    """The Gram matrix (4, 4) of (z, v, m, u) from overlaps (10,)."""
    sigma = np.asarray(sigma, dtype=float)
    Gam = np.empty((4, 4))
    for (a, b), value in zip(_PAIRS, sigma):
        i, j = _LETTERS.index(a), _LETTERS.index(b)
        Gam[i, j] = Gam[j, i] = value
    return Gam


def _random_sigma(rng: np.random.Generator) -> np.ndarray:
    """Overlaps of real vectors (a positive-definite Gram matrix): near the orthonormal start, or spread out."""
    if rng.random() < 0.3:
        Gam = np.eye(4) + np.triu(rng.normal(0.0, 0.05, size=(4, 4)), 1)  # unit norms, small cross overlaps
        Gam = np.triu(Gam) + np.triu(Gam, 1).T
    else:
        n = int(rng.integers(4, 9))
        X = rng.normal(0.0, 1.0, size=(4, n)) * 10.0 ** rng.uniform(-0.5, 0.5, size=(4, 1))
        Gam = X @ X.T / n + 0.05 * np.eye(4)
    return _sigma_of_gram(Gam)


# ----------------------------------------------------------------------------- overlaps_from_vectors


def _vectors_case(rng: np.random.Generator) -> Case:
    N = int(rng.integers(2, 41))
    base = rng.normal(0.0, 1.0, size=(4, N))
    mixing = np.eye(4) + rng.normal(0.0, 0.5, size=(4, 4))  # correlated vectors: cross overlaps of order 1
    vectors = mixing @ base * 10.0 ** rng.uniform(-0.5, 0.5, size=(4, 1))
    return Case(dict(zip("muvz", vectors)))


def _overlaps_variant(inputs, *, divide=lambda N: N, norms="squared") -> np.ndarray:
    vec = {name: np.asarray(x, dtype=float) for name, x in inputs.items()}
    N = vec["m"].size
    out = np.array([vec[a] @ vec[b] / divide(N) for a, b in _PAIRS])
    if norms == "root":
        out[_NORMS] = np.sqrt(out[_NORMS] * divide(N)) / math.sqrt(N)  # |a| / sqrt(N)
    elif norms == "plain":
        out[_NORMS] = np.sqrt(out[_NORMS] * divide(N))  # |a|
    return out


def _overlaps_hint(case: Case, expected, got) -> str | None:
    if _permutation_of(got, expected):
        return (
            "the values are right but in the wrong order: the order is (zm, zu, vm, vu, mu, zv, mm, uu, vv, zz), "
            "the four visible overlaps first, then mu and zv, then the squared norms of m, u, v, z"
        )
    candidates = [
        (
            "divide each dot product by N, the length of the vectors: sigma_ab = a.b / N",
            _overlaps_variant(case.inputs, divide=lambda N: 1),
        ),
        (
            "divide by N, not N - 1: an overlap is a.b / N, not a sample covariance",
            _overlaps_variant(case.inputs, divide=lambda N: N - 1),
        ),
        (
            "a norm's overlap is the squared norm over N, sigma_mm = m.m / N, not a norm",
            _overlaps_variant(case.inputs, norms="root"),
        ),
        (
            "a norm's overlap is the squared norm over N, sigma_mm = m.m / N, not a norm",
            _overlaps_variant(case.inputs, norms="plain"),
        ),
    ]
    return _matching(candidates, got, expected)


OVERLAPS_FROM_VECTORS = FunctionCheck(
    name="overlaps_from_vectors",
    reference=overlaps_from_vectors,
    random_case=_vectors_case,
    fixed_cases=(
        Case(EXAMPLE_VECTORS, label="the worked example"),
        Case({**EXAMPLE_VECTORS, "z": np.array([1.0, 2.0, 0.0])}, label="z one entry short"),
    ),
    hint="sigma_ab = a.b / N for the pairs in the order (zm, zu, vm, vu, mu, zv, mm, uu, vv, zz), as a new float64 "
    "array of shape (10,); ValueError if the four vectors do not have one length",
    targeted_hint=_overlaps_hint,
    new_arrays=True,
)


# ----------------------------------------------------------------------------- effective_output


def _latent_case(rng: np.random.Generator) -> Case:
    T = int(rng.integers(1, 41))
    dt = 1.0 if rng.random() < 0.1 else float(rng.uniform(0.02, 1.0))
    kind = rng.random()
    if kind < 0.3:
        x = np.r_[1.0 / dt, np.zeros(T - 1)]  # the filter task's impulse
    elif kind < 0.45:
        x = np.full(T, float(rng.normal()))  # a step
    else:
        x = rng.normal(0.0, 1.0, size=T)  # white noise
    zm, zu, vm = rng.normal(0.0, 1.0, size=3)
    vu = float(rng.uniform(-1.0, 1.5))
    return Case({"sigma_visible": np.array([zm, zu, vm, vu]), "x": x, "dt": dt})


def _latent_variant(
    sigma_visible,
    x,
    dt,
    *,
    read="after",
    leak="1 - dt",
    input_dt=True,
    sequential=False,
    order=(0, 1, 2, 3),
):
    """The latent model's output with one usual mistake (the options name it)."""
    zm, zu, vm, vu = np.asarray(sigma_visible, dtype=float)[list(order)]
    keep = {"1 - dt": 1.0 - dt, "none": 1.0, "no dt": 0.0}[leak]
    gain = dt if input_dt else 1.0
    km = ku = 0.0
    f = []
    for x_t in np.asarray(x, dtype=float):
        before = zm * km + zu * ku
        new_km = keep * km + gain * x_t
        ku = keep * ku + gain * (vm * (new_km if sequential else km) + vu * ku)
        km = new_km
        f.append(before if read == "before" else zm * km + zu * ku)
    return np.array(f)


_LATENT_MISTAKES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "read the output AFTER the update: f_t = sigma_zm kappa_m(t+1) + sigma_zu kappa_u(t+1), so f_0 already "
        "sees x_0",
        {"read": "before"},
    ),
    (
        "the leak has dt too: kappa(t+1) = kappa + dt (-kappa + drive) = (1 - dt) kappa + dt drive",
        {"leak": "no dt"},
    ),
    ("the state leaks: kappa(t+1) = (1 - dt) kappa + dt drive, not kappa + dt drive", {"leak": "none"}),
    ("the drive enters with dt too: (1 - dt) kappa_m + dt x_t, (1 - dt) kappa_u + dt (...)", {"input_dt": False}),
    (
        "update kappa_m and kappa_u together, from the OLD values: kappa_u(t+1) uses kappa_m(t), not the new "
        "kappa_m(t+1) (compute both before assigning either)",
        {"sequential": True},
    ),
    (
        "sigma_visible is (sigma_zm, sigma_zu, sigma_vm, sigma_vu): sigma_vm multiplies kappa_m and sigma_vu "
        "multiplies kappa_u in the recurrence",
        {"order": (0, 1, 3, 2)},
    ),
    (
        "sigma_visible is (sigma_zm, sigma_zu, sigma_vm, sigma_vu): the readout is sigma_zm kappa_m + sigma_zu kappa_u",
        {"order": (1, 0, 2, 3)},
    ),
)
"""(advice, options of :func:`_latent_variant` that make the mistake)."""


def _latent_hint(case: Case, expected, got) -> str | None:
    inputs = dict(case.inputs)
    return _matching(
        [(text, _latent_variant(**inputs, **options)) for text, options in _LATENT_MISTAKES], got, expected
    )


EFFECTIVE_OUTPUT = FunctionCheck(
    name="effective_output",
    reference=effective_output,
    random_case=_latent_case,
    fixed_cases=(
        Case(EXAMPLE_LATENT, label="the worked example"),
        Case(FILTER_SOLUTION, label="a zero-loss network of the filter task (c* = 0.2): f_k = exp(-c* k dt)"),
        Case({**EXAMPLE_LATENT, "dt": 0.0}, label="dt = 0"),
    ),
    hint="start from kappa_m = kappa_u = 0; for t = 0..T-1: kappa_m, kappa_u = (1 - dt) kappa_m + dt x_t, "
    "(1 - dt) kappa_u + dt (sigma_vm kappa_m + sigma_vu kappa_u) (both from the old values), then f_t = sigma_zm "
    "kappa_m + sigma_zu kappa_u; return a new float64 array of shape (T,); ValueError unless 0 < dt <= 1",
    targeted_hint=_latent_hint,
    rtol=1e-9,
    atol=1e-10,
)


# ----------------------------------------------------------------------------- metric_bar


def _sigma_case(rng: np.random.Generator) -> Case:
    return Case({"sigma": _random_sigma(rng)})


def _metric_variant(sigma, *, terms=4, norm_factor=1.0, norm_diagonal=1.0, visible_only=False) -> np.ndarray:
    """G-bar with one usual mistake: ``terms`` = 2 keeps delta_ac s_bd + delta_bd s_ac; ``norm_factor``
    scales the rows and the columns of the norms (1/2: the 2 of d sigma_aa / d a forgotten); ``norm_diagonal``
    scales the norms' diagonal entries; ``visible_only`` keeps the first four columns."""
    s = {}
    for name, value in zip(OVERLAP_ORDER, np.asarray(sigma, dtype=float)):
        s[name] = s[name[::-1]] = value
    G = np.zeros((10, 10))
    for i, (a, b) in enumerate(_PAIRS):
        for j, (c, d) in enumerate(_PAIRS):
            entry = (a == c) * s[b + d] + (b == d) * s[a + c]
            if terms == 4:
                entry += (a == d) * s[b + c] + (b == c) * s[a + d]
            G[i, j] = entry
    scale = np.where(_NORMS, norm_factor, 1.0)
    G = G * scale[:, None] * scale[None, :]
    G[_NORMS, _NORMS] *= norm_diagonal
    if visible_only:
        G[:, 4:] = 0.0
    return G


_NORM_ADVICE = (
    "a norm's coordinate sigma_aa = a.a / N moves twice as fast (d sigma_aa / d a = 2 a / N): with (ab) = (cd) = "
    "(mm) all four terms of G-bar fire, G_(mm),(mm) = 4 sigma_mm, and G_(mm),(zm) = 2 sigma_zm"
)

_METRIC_MISTAKES: tuple[tuple[str, dict[str, Any]], ...] = (
    (_NORM_ADVICE, {"norm_factor": 0.5}),
    (_NORM_ADVICE, {"norm_diagonal": 0.5}),
    (_NORM_ADVICE, {"norm_diagonal": 0.25}),
    (
        "G_(ab),(cd) has four terms, delta_ac sigma_bd + delta_ad sigma_bc + delta_bc sigma_ad + delta_bd sigma_ac: "
        "the crossed ones (a with d, b with c) count too",
        {"terms": 2},
    ),
    (
        "G-bar is 10 x 10 and every entry follows the formula, the columns of the invisible overlaps included (a "
        "nonlinear network's loss sees some of them)",
        {"visible_only": True},
    ),
)


def _metric_hint(case: Case, expected, got) -> str | None:
    got = np.asarray(got, dtype=float)
    if got.shape == expected.shape and _permutation_of(got, expected):
        return (
            "rows and columns go in the order of the overlaps (zm, zu, vm, vu, mu, zv, mm, uu, vv, zz): row i is the "
            "overlap sigma[i]"
        )
    sigma = case.inputs["sigma"]
    return _matching([(text, _metric_variant(sigma, **options)) for text, options in _METRIC_MISTAKES], got, expected)


METRIC_BAR = FunctionCheck(
    name="metric_bar",
    reference=metric_bar,
    random_case=_sigma_case,
    fixed_cases=(
        Case({"sigma": EXAMPLE_SIGMA}, label="the worked example"),
        Case({"sigma": ORTHONORMAL}, label="the orthonormal start"),
    ),
    hint="G[i, j] = delta_ac sigma_bd + delta_ad sigma_bc + delta_bc sigma_ad + delta_bd sigma_ac for the overlaps "
    "(ab) = order[i] and (cd) = order[j] of the order (zm, zu, vm, vu, mu, zv, mm, uu, vv, zz), with sigma_ba = "
    "sigma_ab and delta_xy = 1 if the letters x and y are equal; a new float64 array of shape (10, 10)",
    targeted_hint=_metric_hint,
    new_arrays=True,
)


# ----------------------------------------------------------------------------- overlap_ode_step


def _step_case(rng: np.random.Generator) -> Case:
    sigma = _random_sigma(rng)
    kind = ("linear", "erf", "any")[int(rng.choice(3, p=[0.5, 0.3, 0.2]))]
    grad = np.zeros(10)
    seen = [_POS[name] for name in _VISIBLE[kind]]
    grad[seen] = rng.normal(0.0, 1.0, size=len(seen))
    eta = 0.0 if rng.random() < 0.05 else float(10.0 ** rng.uniform(-3.0, 0.0))
    return Case({"sigma": sigma, "grad": grad, "eta": eta})


def _step_kind(case: Case) -> str:
    seen = tuple(name for name, g in zip(OVERLAP_ORDER, case.inputs["grad"]) if g != 0.0)
    return "linear" if set(seen) <= set(_VISIBLE["linear"]) else "erf" if set(seen) <= set(_VISIBLE["erf"]) else "any"


def _step_hint(case: Case, expected, got) -> str | None:
    sigma, grad, eta = (np.asarray(case.inputs[k], dtype=float) for k in ("sigma", "grad", "eta"))
    G = _metric_variant(sigma)
    candidates = [
        ("a descent step goes AGAINST the gradient: sigma - eta G-bar grad, with a minus", sigma + eta * G @ grad),
        (
            "the overlaps do not move along their own gradient: gradient descent on the vectors moves them by "
            "sigma - eta G-bar(sigma) grad, with the metric G-bar in front of the gradient",
            sigma - eta * grad,
        ),
        (
            "G-bar grad is a matrix-vector product (G @ grad), not the diagonal of G times grad",
            sigma - eta * np.diag(G) * grad,
        ),
    ]
    candidates += [
        (
            "use the G_bar it is given; your metric is off: " + _NORM_ADVICE,
            sigma - eta * _metric_variant(sigma, **options) @ grad,
        )
        for options in ({"norm_factor": 0.5}, {"norm_diagonal": 0.5}, {"norm_diagonal": 0.25})
    ]
    candidates.append(
        (
            "use the G_bar it is given; your metric is off: it has four terms, the crossed ones included",
            sigma - eta * _metric_variant(sigma, terms=2) @ grad,
        )
    )
    return _matching(candidates, got, expected)


OVERLAP_ODE_STEP = FunctionCheck(
    name="overlap_ode_step",
    reference=overlap_ode_step,
    random_case=_step_case,
    fixed_cases=(
        Case({"sigma": EXAMPLE_SIGMA, "grad": np.eye(10)[0], "eta": 0.1}, label="the worked example"),
        Case(
            {"sigma": ORTHONORMAL, "grad": np.array([1.0, -2.0, 0.5, 1.0, 0, 0, 0, 0, 0, 0]), "eta": 0.05},
            label="the orthonormal start, a gradient on the visible overlaps",
        ),
        Case({"sigma": EXAMPLE_SIGMA, "grad": np.eye(10)[0], "eta": 0.0}, label="eta = 0: a new array, equal to sigma"),
        Case({"sigma": EXAMPLE_SIGMA, "grad": np.eye(10)[0], "eta": -0.1}, label="eta < 0"),
    ),
    hint="return sigma - eta * (G_bar @ grad), a new float64 array of shape (10,), with the metric G_bar it is given; "
    "ValueError if eta < 0",
    targeted_hint=_step_hint,
    new_arrays=True,
    given={"G_bar": lambda inputs: metric_bar(inputs["sigma"])},
    branch=_step_kind,
)


# ----------------------------------------------------------------------------- invariant_I1


def _I1_case(rng: np.random.Generator) -> Case:
    if rng.random() < 0.5:
        return Case({"sigma": _random_sigma(rng)})
    K = int(rng.integers(1, 8))
    return Case({"sigma": np.stack([_random_sigma(rng) for _ in range(K)])})


def _I1_hint(case: Case, expected, got) -> str | None:
    s = np.asarray(case.inputs["sigma"], dtype=float)
    zz, vv, mm, uu = (s[..., _POS[name]] for name in ("zz", "vv", "mm", "uu"))
    signs = (
        "S = diag(1, 1, -1, -1) on (z, v, m, u): I1 = sigma_zz + sigma_vv - sigma_mm - sigma_uu, the norms of the "
        "readout side A = [z v] minus those of the input side B = [m u]"
    )
    candidates = [
        (signs, mm + uu - zz - vv),
        (signs, zz + mm - vv - uu),
        (signs, zz + uu - vv - mm),
        ("I1 = tr(S Gamma), with the signs of S = diag(1, 1, -1, -1), not tr(Gamma)", zz + vv + mm + uu),
    ]
    return _matching(candidates, got, expected)


INVARIANT_I1 = FunctionCheck(
    name="invariant_I1",
    reference=invariant_I1,
    random_case=_I1_case,
    fixed_cases=(
        Case({"sigma": EXAMPLE_SIGMA}, label="the worked example"),
        Case({"sigma": np.stack([EXAMPLE_SIGMA, ORTHONORMAL])}, label="two sets of overlaps, shape (2, 10)"),
    ),
    hint="I1 = sigma_zz + sigma_vv - sigma_mm - sigma_uu: a float for sigma of shape (10,), a new float64 array of "
    "shape (K,) (one value per row) for shape (K, 10)",
    targeted_hint=_I1_hint,
    new_arrays=True,
    branch=lambda case: np.ndim(case.inputs["sigma"]),
)


CHECKS = MappingProxyType(
    {
        check.name: check
        for check in (
            OVERLAPS_FROM_VECTORS,
            EFFECTIVE_OUTPUT,
            METRIC_BAR,
            INVARIANT_I1,
            OVERLAP_ODE_STEP,
            INVARIANT_DRIFT,
        )
    }
)
"""The exercise name -> its :class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
