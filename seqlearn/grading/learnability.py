r"""Autograder checks of the Chapter 5 exercises (the learnability window of gated RNNs).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in
:mod:`seqlearn.learnability.reference` (:math:`\kappa_\alpha`, the ECF estimate of
:math:`\alpha`, the transport factor :math:`\Gamma` of ConstGate and DiagGate, the window
:math:`H_N` from a table and in closed form, the cross-fitted oriented statistic) and raises
:class:`~seqlearn.grading.checks.CheckFailure` with an explanation on the first wrong case.
Visible cases are the notebook's worked examples plus random cases from fixed seeds; hidden
cases are drawn fresh at each grading run (see :mod:`seqlearn.grading.checks`).

Three parts are graded by what the function must do, not by equality with the reference
(:class:`~seqlearn.grading.learnability_properties.PropertyCheck`): ``ecf_alpha_estimate``,
``oriented_statistic`` and the experiment ``spread_exponent``. Their checks are in
:mod:`seqlearn.grading.learnability_properties`; :data:`CHECKS` here is the chapter's one table.

``window_closed_form`` is given :math:`\kappa_\alpha` (``kappa``, computed by the reference of Part 1), so a
mistake in Part 1 costs its point there only.

Random inputs follow the notebook's conventions: float64 arrays, one sequence with time as rows
(``s``, ``h_tilde``, ``h_prev`` of shape (T, H)), diagonals of shape (H,), int64 ``lags`` (n,),
tables of ``N_req`` with ``-1`` for undetectable lags, and sample sizes ``N`` as a number or an array.

The targeted hints recognise the usual mistakes by recomputing them: :math:`\kappa` inverted or
replaced by :math:`\alpha`; :math:`\Gamma` of order zero, without the 1 of :math:`1 + \sum`, with :math:`\rho`
for :math:`\rho/\lambda`, with :math:`s` for the leak, on a window shifted or one step too long,
with zeros for NaN, or DiagGate's gate term left out; :math:`H_N` stopping at the first lag that
fails, counting ``-1`` as detectable, with a strict inequality or taking the last lag in table
order; the closed forms with :math:`\alpha` for :math:`\kappa_\alpha`, with :math:`1/\kappa_\alpha`
for :math:`\kappa_\alpha`, or without it.
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import Any

import numpy as np

from ..learnability.reference import gamma_const, gamma_diag, kappa_alpha, window_closed_form, window_from_table
from .checks import Case, FunctionCheck, define_checkers, matching_advice, same_values
from .learnability_properties import (
    ECF_ALPHA_ESTIMATE,
    ECF_TOLERANCE,
    EXAMPLE_ECF,
    EXAMPLE_ORIENTED,
    EXAMPLE_SPREAD,
    EXPONENT_TOLERANCE,
    NULL_T_BOUND,
    ORIENTED_STATISTIC,
    SPREAD_EXPONENT,
    PlantedCase,
    PropertyCheck,
    kappa_of,
    oriented_statistic,
    spread_exponent,
)

__all__ = [
    "ECF_TOLERANCE",
    "EXPONENT_TOLERANCE",
    "NULL_T_BOUND",
    "PlantedCase",
    "PropertyCheck",
    "oriented_statistic",
    "spread_exponent",
    "EXAMPLE_ECF",
    "EXAMPLE_ORIENTED",
    "EXAMPLE_SPREAD",
    "EXAMPLE_GAMMA_CONST",
    "EXAMPLE_GAMMA_DIAG",
    "EXAMPLE_TABLE",
    "CHECKS",
]


_same = functools.partial(same_values, equal_nan=True)  # NaN marks t < lag


def _matching(candidates, got, expected, same=_same) -> str | None:
    """:func:`~seqlearn.grading.checks.matching_advice` with NaN-aware comparison."""
    return matching_advice(candidates, got, expected, same)


# ----------------------------------------------------------------------------- kappa_alpha


def _kappa_case(rng: np.random.Generator) -> Case:
    u = rng.random()
    if u < 0.1:
        alpha = 2.0
    elif u < 0.25:
        alpha = 1.0 + float(10.0 ** rng.uniform(-3.0, -1.0))  # heavy tails: kappa in the tens to thousands
    else:
        alpha = float(rng.uniform(1.01, 2.0))
    return Case({"alpha": alpha})


def _kappa_hint(case: Case, expected, got) -> str | None:
    a = float(case.inputs["alpha"])
    candidates = [
        ("kappa = alpha / (alpha - 1), not its inverse (alpha - 1) / alpha: kappa >= 2, with kappa_2 = 2", (a - 1) / a),
        ("kappa = alpha / (alpha - 1): the numerator is alpha, not 1", 1.0 / (a - 1.0)),
        ("kappa is not alpha itself: kappa = alpha / (alpha - 1)", a),
        ("kappa = alpha / (alpha - 1), with a minus sign", a / (a + 1.0)),
    ]
    return _matching(candidates, got, expected)


KAPPA_ALPHA = FunctionCheck(
    name="kappa_alpha",
    reference=kappa_alpha,
    random_case=_kappa_case,
    fixed_cases=(
        Case({"alpha": 1.5}, label="the worked example"),
        Case({"alpha": 2.0}, label="Gaussian noise (alpha = 2)"),
        Case({"alpha": 1.0}, label="alpha = 1, where kappa is undefined"),
        Case({"alpha": 2.5}, label="alpha = 2.5, not a stable index"),
    ),
    hint="kappa = alpha / (alpha - 1) as a float, for alpha in (1, 2]; raise ValueError for any other alpha",
    targeted_hint=_kappa_hint,
)


# ----------------------------------------------------------------------------- gamma_const, gamma_diag

EXAMPLE_GAMMA_CONST: dict[str, Any] = {
    "s": 0.5,
    "h_tilde": np.array([[0.0], [0.5], [0.0]]),
    "w_hh_diag": np.array([1.0]),
    "lags": np.array([1, 2]),
}
"""The notebook's ConstGate: T = 3, H = 1; rho / leak = (1, 0.75, 1)."""

EXAMPLE_GAMMA_DIAG: dict[str, Any] = {
    "s": np.array([[0.5, 0.2], [0.5, 0.8]]),
    "h_tilde": np.array([[0.5, 0.0], [0.0, -0.5]]),
    "h_prev": np.array([[0.0, 0.0], [0.25, 0.0]]),
    "w_hh_diag": np.array([1.0, 0.5]),
    "u_s_diag": np.array([2.0, -1.0]),
    "lags": np.array([1, 2]),
}
"""The notebook's DiagGate: T = 2, H = 2, two neurons with different gates."""


def _lags(rng: np.random.Generator, T: int) -> np.ndarray:
    """1..4 lags in [1, T], sorted or shuffled, sometimes with T itself and repeats."""
    n = int(rng.integers(1, min(T, 4) + 1))
    lags = rng.choice(np.arange(1, T + 1), size=n, replace=False)
    if rng.random() < 0.2:
        lags = np.r_[lags, lags[:1]]  # a repeated lag
    return np.sort(lags) if rng.random() < 0.6 else lags.astype(np.int64)


def _sequence(rng: np.random.Generator) -> tuple[int, int, np.ndarray]:
    T, H = int(rng.integers(1, 13)), int(rng.integers(1, 5))
    return T, H, np.tanh(rng.normal(0.0, 1.0, size=(T, H)))


def _gamma_const_case(rng: np.random.Generator) -> Case:
    T, H, h_tilde = _sequence(rng)
    return Case(
        {
            "s": float(rng.uniform(0.02, 0.9)),
            "h_tilde": h_tilde,
            "w_hh_diag": rng.normal(0.0, 1.0, size=H),
            "lags": _lags(rng, T),
        }
    )


def _gamma_diag_case(rng: np.random.Generator) -> Case:
    T, H, h_tilde = _sequence(rng)
    bias = rng.normal(-1.0, 1.0, size=H)  # neurons with different time scales
    return Case(
        {
            "s": 1.0 / (1.0 + np.exp(-(bias + rng.normal(0.0, 1.0, size=(T, H))))),
            "h_tilde": h_tilde,
            "h_prev": rng.uniform(-1.0, 1.0, size=(T, H)),
            "w_hh_diag": rng.normal(0.0, 1.0, size=H),
            "u_s_diag": rng.normal(0.0, 1.5, size=H),
            "lags": _lags(rng, T),
        }
    )


def _terms(inputs, *, gate_term=1.0, leak_is_s=False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(leak, rho, lags) of a gamma case, with a usual mistake in the terms."""
    h_tilde = np.asarray(inputs["h_tilde"], dtype=float)
    s = np.broadcast_to(np.asarray(inputs["s"], dtype=float), h_tilde.shape)
    rho = s * (1 - h_tilde**2) * inputs["w_hh_diag"]
    if "u_s_diag" in inputs:
        rho = rho + gate_term * (h_tilde - inputs["h_prev"]) * s * (1 - s) * inputs["u_s_diag"]
    return (s if leak_is_s else 1 - s), rho, np.asarray(inputs["lags"])


def _gamma_variant(leak, rho, lags, *, order=1, one=True, divide=True, first=1, last=0, fill=np.nan):
    r"""Gamma by a plain loop over windows j = t - l + first, ..., t + last, with a usual mistake."""
    T, H = leak.shape
    out = np.full((len(lags), T, H), fill)
    for i, ell in enumerate(lags):
        for t in range(1, T + 1):
            steps = np.arange(t - ell + first, t + last + 1)  # 1-based
            if t < ell or steps.min() < 1 or steps.max() > T:
                continue
            product = np.prod(leak[steps - 1], axis=0)
            total = np.sum(rho[steps - 1] / (leak[steps - 1] if divide else 1.0), axis=0)
            out[i, t - 1] = product if order == 0 else product * ((1.0 if one else 0.0) + total)
    return out


_GAMMA_MISTAKES: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    (
        "that is the zero-order factor, the gate product alone: the first-order Gamma multiplies it by "
        "[1 + sum_k rho_k / leak_k]",
        {},
        {"order": 0},
    ),
    ("the bracket is [1 + sum_k rho_k / leak_k]: keep the 1 (the zero-order part)", {}, {"one": False}),
    (
        "the sum is over rho_k / leak_k (divide each rho by its step's leak 1 - s_k), not over rho_k",
        {},
        {"divide": False},
    ),
    ("the leak (retention) is 1 - s; s is the write gate", {"leak_is_s": True}, {}),
    (
        "the window of Gamma_{t,l} is the l steps j = t - l + 1, ..., t ending at t (it carries h_{t-l} to h_t): "
        "your window is shifted by one step",
        {},
        {"first": 0, "last": -1},
    ),
    ("the window j = t - l + 1, ..., t has l steps, not l + 1", {}, {"first": 0}),
    ("where t < l the window does not fit: fill those entries with NaN (np.nan), not 0", {}, {"fill": 0.0}),
    (
        "DiagGate's rho has a second term, (h_tilde_k - h_{k-1}) s_k (1 - s_k) [U_s]_qq: the gate depends on "
        "h_{k-1} too",
        {"gate_term": 0.0},
        {},
    ),
    ("the gate term of rho is (h_tilde_k - h_{k-1}) s_k (1 - s_k) [U_s]_qq: check its sign", {"gate_term": -1.0}, {}),
)
"""(advice, options of :func:`_terms`, options of :func:`_gamma_variant`) for each usual mistake."""


def _gamma_hint(case: Case, expected, got) -> str | None:
    got = np.asarray(got, dtype=float)
    n, T, H = expected.shape
    if got.shape != expected.shape and got.shape in ((T, n, H), (n, H, T), (H, n, T)):
        return "the result has shape (len(lags), T, H): lag first, then the window end t, then the neuron"
    inputs = {k: np.asarray(v) for k, v in case.inputs.items()}
    candidates = []
    for advice, terms, options in _GAMMA_MISTAKES:
        if "gate_term" in terms and "u_s_diag" not in inputs:
            continue
        candidates.append((advice, _gamma_variant(*_terms(inputs, **terms), **options)))
    return _matching(candidates, got, expected)


_GAMMA_HINT = (
    "Gamma[i, t - 1, q] = prod_{j = t - l + 1}^{t} leak_j * (1 + sum_{k = t - l + 1}^{t} rho_k / leak_k) for the "
    "lag l = lags[i] and the window end t = 1..T (NaN where t < l), leak = 1 - s; with prefix sums L_t of log leak "
    "and P_t of rho / leak (L_0 = P_0 = 0) it is exp(L_t - L_{t-l}) * (1 + P_t - P_{t-l}); return a new float64 "
    "array of shape (len(lags), T, H)"
)

GAMMA_CONST = FunctionCheck(
    name="gamma_const",
    reference=gamma_const,
    random_case=_gamma_const_case,
    fixed_cases=(
        Case(EXAMPLE_GAMMA_CONST, label="the worked example"),
        Case({**EXAMPLE_GAMMA_CONST, "lags": np.array([3, 1])}, label="the worked example, lags 3 and 1"),
    ),
    hint=_GAMMA_HINT + "; for ConstGate rho_k = s (1 - h_tilde_k^2) [W_h]_qq",
    targeted_hint=_gamma_hint,
    new_arrays=True,
)

GAMMA_DIAG = FunctionCheck(
    name="gamma_diag",
    reference=gamma_diag,
    random_case=_gamma_diag_case,
    fixed_cases=(
        Case(EXAMPLE_GAMMA_DIAG, label="the worked example"),
        Case({**EXAMPLE_GAMMA_DIAG, "u_s_diag": np.zeros(2)}, label="the worked example with U_s = 0"),
    ),
    hint=_GAMMA_HINT + "; for DiagGate rho_k = s_k (1 - h_tilde_k^2) [W_h]_qq + (h_tilde_k - h_{k-1}) s_k (1 - s_k) "
    "[U_s]_qq, all per neuron",
    targeted_hint=_gamma_hint,
    new_arrays=True,
)


# ----------------------------------------------------------------------------- window_from_table

EXAMPLE_TABLE: dict[str, Any] = {
    "lags": np.array([1, 2, 3, 5, 8]),
    "N_req": np.array([4, -1, 30, 12, 500]),
    "N": np.array([3, 4, 20, 100, 1000]),
}
"""The notebook's table: lag 2 is never detectable, lag 5 needs fewer samples than lag 3."""


def _table_case(rng: np.random.Generator) -> Case:
    L = int(rng.integers(1, 13))
    lags = np.sort(rng.choice(np.arange(1, 61), size=L, replace=False)).astype(np.int64)
    growth = rng.uniform(0.02, 0.15)  # log10 N_req grows with the lag, with noise: not monotone
    N_req = np.round(10.0 ** (1.0 + growth * lags + rng.normal(0.0, 0.4, size=L))).astype(np.int64)
    N_req[rng.random(L) < 0.25] = -1
    if rng.random() < 0.4:
        order = rng.permutation(L)
        lags, N_req = lags[order], N_req[order]
    finite = N_req[N_req > 0]
    top = int(finite.max()) * 2 if finite.size else 100
    if rng.random() < 0.4:
        N: Any = int(rng.choice(finite)) if finite.size and rng.random() < 0.5 else int(rng.integers(1, top + 1))
    else:
        picks = rng.integers(1, top + 1, size=int(rng.integers(1, 7)))
        N = np.r_[picks, finite[: int(rng.integers(0, 3))]].astype(np.int64)  # often N equal to an N_req
    return Case({"lags": lags, "N_req": N_req, "N": N})


def _window_variant(lags, N_req, N, *, rule="max", never_ok=False, strict=False):
    """H_N with a usual mistake: 'contiguous' stops at the first failing lag, 'last' takes table order."""
    lags, N_req = np.asarray(lags), np.asarray(N_req)
    scalar = np.ndim(N) == 0
    out = []
    for n in np.atleast_1d(N):
        ok = (N_req < n if strict else N_req <= n) & (True if never_ok else N_req > 0)
        if rule == "contiguous":
            order = np.argsort(lags)
            failed = np.flatnonzero(~ok[order])
            prefix = order[: failed[0]] if failed.size else order
            out.append(int(lags[prefix].max()) if prefix.size else 0)
        elif rule == "last":
            out.append(int(lags[ok][-1]) if ok.any() else 0)
        else:
            out.append(int(lags[ok].max()) if ok.any() else 0)
    return out[0] if scalar else np.array(out, dtype=np.int64)


def _table_hint(case: Case, expected, got) -> str | None:
    if np.ndim(case.inputs["N"]) == 0 and np.ndim(got) == 1:
        return "for a single N return a single int (the window); an array only for an array of N"
    inputs = dict(case.inputs)
    candidates = [
        (
            "the lags that qualify need not be contiguous: H_N is the LARGEST qualifying lag, even when a shorter "
            "lag fails (needs more samples, or is never detectable); do not stop at the first lag that fails",
            _window_variant(**inputs, rule="contiguous"),
        ),
        (
            "N_req = -1 means the lag is never detectable: a lag qualifies only if 0 < N_req <= N",
            _window_variant(**inputs, never_ok=True),
        ),
        (
            "a lag that needs exactly N samples is learnable with N: 0 < N_req <= N, not < N",
            _window_variant(**inputs, strict=True),
        ),
        (
            "the lags need not be sorted: take the maximum of the qualifying lags, not the last one",
            _window_variant(**inputs, rule="last"),
        ),
    ]
    return _matching(candidates, got, expected)


WINDOW_FROM_TABLE = FunctionCheck(
    name="window_from_table",
    reference=window_from_table,
    random_case=_table_case,
    fixed_cases=(
        Case(EXAMPLE_TABLE, label="the worked example"),
        Case({**EXAMPLE_TABLE, "N": 20}, label="the worked example with one N"),
        Case(
            {"lags": np.array([8, 3, 1, 5, 2]), "N_req": np.array([500, 30, 4, 12, -1]), "N": np.array([4, 12, 600])},
            label="the worked example's table in another order",
        ),
        Case({"lags": np.array([1, 2]), "N_req": np.array([-1, -1]), "N": 10**6}, label="no lag ever detectable"),
    ),
    hint="a lag qualifies when 0 < N_req <= N; H_N is the largest qualifying lag, 0 if none; for an array N "
    "return an int64 array with H_N for each N, for a single N an int",
    targeted_hint=_table_hint,
    branch=lambda case: (np.ndim(case.inputs["N"]), bool(np.all(np.diff(case.inputs["lags"]) > 0))),
)


# ----------------------------------------------------------------------------- window_closed_form


def _closed_form_case(rng: np.random.Generator) -> Case:
    envelope = "exponential" if rng.random() < 0.5 else "power"
    param = float(rng.uniform(1.0, 100.0)) if envelope == "exponential" else float(rng.uniform(0.2, 3.0))
    alpha = 2.0 if rng.random() < 0.2 else float(rng.uniform(1.05, 2.0))
    if rng.random() < 0.5:
        N: Any = int(rng.integers(1, 10**6)) if rng.random() < 0.5 else float(10.0 ** rng.uniform(0.0, 6.0))
    else:
        N = 10.0 ** rng.uniform(0.0, 6.0, size=int(rng.integers(1, 6)))
    return Case({"N": N, "envelope": envelope, "param": param, "alpha": alpha})


def _given_kappa(inputs) -> float:
    """Part 1's kappa_alpha by its reference, NaN for an alpha outside (1, 2] (which the part must refuse itself)."""
    alpha = inputs["alpha"]
    return kappa_alpha(alpha) if 1.0 < alpha <= 2.0 else float("nan")


def _closed_form_variant(N, envelope, param, alpha, *, k, log=np.log):
    """H_N with kappa replaced by ``k`` and the natural logarithm by ``log`` (a usual mistake)."""
    N = np.asarray(N, dtype=float)
    H = param / k * log(N) if envelope == "exponential" else N ** (1.0 / (param * k))
    return float(H) if N.ndim == 0 else H


def _closed_form_hint(case: Case, expected, got) -> str | None:
    inputs = dict(case.inputs)
    k = kappa_of(float(inputs["alpha"]))
    candidates: list[tuple[str, dict[str, Any]]] = [
        ("the exponent is kappa_alpha = alpha / (alpha - 1), not alpha", {"k": float(inputs["alpha"])}),
        (
            "divide by kappa_alpha = alpha / (alpha - 1), not by its inverse: heavier tails (smaller alpha) give a "
            "LARGER kappa and a SHORTER window",
            {"k": 1.0 / k},
        ),
        (
            "from N(l) = f(l)^(-kappa): kappa_alpha enters H_N (tau / kappa * ln N, N^(1 / (beta kappa)))",
            {"k": 1.0},
        ),
        ("ln is the natural logarithm (np.log), not log10", {"k": k, "log": np.log10}),
    ]
    return _matching([(text, _closed_form_variant(**inputs, **options)) for text, options in candidates], got, expected)


WINDOW_CLOSED_FORM = FunctionCheck(
    name="window_closed_form",
    reference=window_closed_form,
    random_case=_closed_form_case,
    fixed_cases=(
        Case({"N": 1e4, "envelope": "exponential", "param": 20.0, "alpha": 1.5}, label="the worked example"),
        Case({"N": 10**4, "envelope": "exponential", "param": 20.0, "alpha": 2.0}, label="tau = 20, alpha = 2"),
        Case({"N": 1e4, "envelope": "power", "param": 1.0, "alpha": 2.0}, label="beta = 1, alpha = 2"),
        Case(
            {"N": np.array([1.0, 100.0, 1e4]), "envelope": "power", "param": 1.0, "alpha": 1.5},
            label="beta = 1, alpha = 1.5, three sample sizes",
        ),
        Case({"N": 1e4, "envelope": "logarithmic", "param": 1.0, "alpha": 1.5}, label="an envelope not asked for"),
        Case({"N": 1e4, "envelope": "power", "param": 1.0, "alpha": 1.0}, label="alpha = 1"),
    ),
    hint="use the kappa = alpha / (alpha - 1) it is given; 'exponential': H_N = param / kappa * ln N; 'power': "
    "H_N = N ** (1 / (param * kappa)); a float for a single N, a float64 array of N's shape for an array; "
    "ValueError for another envelope or alpha outside (1, 2]",
    targeted_hint=_closed_form_hint,
    branch=lambda case: (case.inputs["envelope"], np.ndim(case.inputs["N"])),
    given={"kappa": _given_kappa},
)


CHECKS = MappingProxyType(
    {
        check.name: check
        for check in (
            KAPPA_ALPHA,
            ECF_ALPHA_ESTIMATE,
            GAMMA_CONST,
            GAMMA_DIAG,
            WINDOW_FROM_TABLE,
            WINDOW_CLOSED_FORM,
            ORIENTED_STATISTIC,
            SPREAD_EXPONENT,
        )
    }
)
"""The exercise name -> its :class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
