r"""Autograder checks of the Chapter 3 exercises (the Elman RNN, BPTT, Jacobian products, clipping).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in :mod:`seqlearn.rnn` (the graded
references live in :mod:`seqlearn.rnn.elman`, :mod:`seqlearn.rnn.jacobians` and
:mod:`seqlearn.rnn.clipping`) and raises :class:`~seqlearn.grading.checks.CheckFailure` with
an explanation on the first wrong case. Visible cases are the notebook's worked examples
plus random cases from fixed seeds; hidden cases are drawn fresh at each grading run (see
:mod:`seqlearn.grading.checks`).

Random inputs follow the notebook's conventions: one sequence ``x`` of shape (T, D) (no batch
axis), float64 parameters ``h0`` (H,), ``W_hh`` (H, H), ``W_xh`` (H, D), ``b_h`` (H,),
``W_hy`` (O, H), ``b_y`` (O,), a nonlinearity among ``"tanh"``, ``"sigmoid"`` and ``"linear"``,
and the squared error as the loss of BPTT.

The targeted hints recognise the usual mistakes by recomputing them: a missing
:math:`\phi'(z_t)`, a backward pass that stops after one step (no
:math:`W_{hh}^\top \delta_{t+1}`), :math:`W_{hh}` where :math:`W_{hh}^\top` belongs, a wrong
:math:`\partial L/\partial h_0`, Jacobians multiplied in the wrong order, clipping array by
array or below the threshold, the spectral radius in place of :math:`\sigma_{\max}`, and the
sigmoid's :math:`\gamma = 1/4` forgotten.

The experiment, ``radius_sweep`` (the norms :math:`\lVert \partial h_T/\partial h_{T-k} \rVert_2` for
:math:`W_{hh} = \rho Q` with :math:`Q` orthogonal, one row per radius), is graded by properties with a closed
form or a hard bound rather than by equality with :func:`radius_sweep`: every norm lies between
:math:`\rho^k \prod_j \min_i \phi'(z_{j,i})` and :math:`\rho^k \prod_j \max_i \phi'(z_{j,i})` over the last
:math:`k` steps (:func:`sweep_bounds`), which for linear units is :math:`\rho^k` exactly; two usual mistakes that
stay inside these bounds (the product of the step norms, the Jacobians multiplied in reverse) are recognised.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ..guard import reference
from ..rnn.clipping import clip_grad_norm
from ..rnn.elman import (
    NONLINEARITIES,
    activation,
    activation_derivative,
    bptt_gradients,
    elman_forward,
    elman_preactivations,
)
from ..rnn.jacobians import GAMMA, gradient_regime, jacobian_products_vs_lag, product_norms_vs_lag, step_jacobians
from .checks import Case, FunctionCheck, define_checkers, same_values
from .learnability import PlantedCase, PropertyCheck

__all__ = [
    "EXAMPLE_NETWORK",
    "EXAMPLE_SWEEP",
    "CHECKS",
    "radius_sweep",
    "sweep_bounds",
]

GRADIENT_KEYS = ("h0", "W_hh", "W_xh", "b_h", "W_hy", "b_y")


_same = functools.partial(same_values, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------- random networks

EXAMPLE_NETWORK = {
    "x": np.array([[1.0], [0.0]]),
    "h0": np.array([0.0, 0.0]),
    "W_hh": np.array([[0.5, 0.0], [0.5, 0.5]]),
    "W_xh": np.array([[1.0], [-1.0]]),
    "b_h": np.array([0.0, 0.0]),
    "W_hy": np.array([[1.0, 1.0]]),
    "b_y": np.array([0.0]),
}
"""The notebook's network: T = 2, D = 1, H = 2, O = 1 (tanh)."""

EXAMPLE_TARGETS = np.array([[0.0], [1.0]])
"""The notebook's targets for BPTT (squared error)."""


def _random_network(rng: np.random.Generator, max_T: int = 6) -> dict[str, np.ndarray]:
    T, D, H, O = (int(rng.integers(lo, hi + 1)) for lo, hi in ((1, max_T), (1, 4), (1, 5), (1, 3)))
    W_hh = rng.normal(0.0, 1.0, size=(H, H))
    rho = np.max(np.abs(np.linalg.eigvals(W_hh)))
    if rho > 0:
        W_hh *= float(rng.uniform(0.5, 1.5)) / rho
    return {
        "x": rng.normal(0.0, 1.0, size=(T, D)),
        "h0": 0.5 * rng.normal(0.0, 1.0, size=H) if rng.random() < 0.7 else np.zeros(H),
        "W_hh": W_hh,
        "W_xh": rng.normal(0.0, 1.0, size=(H, D)) / np.sqrt(D),
        "b_h": 0.3 * rng.normal(0.0, 1.0, size=H),
        "W_hy": rng.normal(0.0, 1.0, size=(O, H)) / np.sqrt(H),
        "b_y": 0.3 * rng.normal(0.0, 1.0, size=O),
    }


def _with_phi(inputs: dict, rng: np.random.Generator) -> Case:
    """A case with a random nonlinearity; tanh is sometimes left to the default."""
    phi = str(rng.choice(NONLINEARITIES))
    if phi == "tanh" and rng.random() < 0.5:
        return Case(inputs)
    return Case({**inputs, "phi": phi}, keywords=("phi",))


def _phi_of(case: Case) -> str:
    return case.inputs.get("phi", "tanh")


def _states(x, h0, W_hh, W_xh, b_h, phi):
    """z (T, H) and h (T + 1, H) with h[0] = h0."""
    T, H = len(x), len(h0)
    z, h = np.zeros((T, H)), np.zeros((T + 1, H))
    h[0] = h0
    for t in range(T):
        z[t] = W_hh @ h[t] + W_xh @ x[t] + b_h
        h[t + 1] = activation(z[t], phi)
    return z, h


# ----------------------------------------------------------------------------- elman_forward


def _elman_case(rng: np.random.Generator) -> Case:
    return _with_phi(_random_network(rng), rng)


def _elman_variants(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh") -> dict[str, tuple]:
    """(h, y) computed with each usual mistake, keyed by the advice that fixes it."""
    z, h = _states(x, h0, W_hh, W_xh, b_h, phi)
    _, h_T = _states(x, h0, W_hh.T, W_xh, b_h, phi)
    _, h_lin = _states(x, h0, W_hh, W_xh, b_h, "linear")
    return {
        "apply the nonlinearity: h_t = phi(z_t), not the pre-activation z_t": (h_lin[1:], h_lin[1:] @ W_hy.T + b_y),
        "the recurrence multiplies the previous state as W_hh @ h_{t-1} (that is, h_prev @ W_hh.T for a row), "
        "not W_hh.T @ h_{t-1}": (h_T[1:], h_T[1:] @ W_hy.T + b_y),
        "the output reads the state after the nonlinearity: y_t = W_hy h_t + b_y, not W_hy z_t + b_y": (
            h[1:],
            z @ W_hy.T + b_y,
        ),
        "add the biases b_h (inside phi) and b_y (in the output)": (
            _states(x, h0, W_hh, W_xh, 0 * b_h, phi)[1][1:],
            _states(x, h0, W_hh, W_xh, 0 * b_h, phi)[1][1:] @ W_hy.T,
        ),
    }


def _elman_hint(case: Case, expected, got) -> str | None:
    want_h, want_y = expected
    if isinstance(got, (tuple, list)) and len(got) != 2:
        return "return the pair (h, y): the states and the outputs"
    h, y = (np.asarray(a, dtype=float) for a in got)
    if h.shape == want_y.shape and y.shape == want_h.shape and want_h.shape != want_y.shape:
        return "return the pair in the order (h, y)"
    if h.shape == (want_h.shape[0] + 1, want_h.shape[1]):
        return "h holds h_1, ..., h_T (T rows), without the initial state h_0"
    if _same(h, want_y) and _same(y, want_h):
        return "return the pair in the order (h, y)"
    if h.shape != want_h.shape or y.shape != want_y.shape:
        return None
    phi = _phi_of(case)
    linear_y = activation(want_h @ case.inputs["W_hy"].T + case.inputs["b_y"], phi)
    if _same(h, want_h) and not _same(y, want_y) and _same(y, linear_y):
        return "the output is linear: y_t = W_hy h_t + b_y, without a nonlinearity"
    inputs = {k: v for k, v in case.inputs.items() if k != "phi"}
    for advice, (vh, vy) in _elman_variants(**inputs, phi=phi).items():
        if _same(h, vh) and _same(y, vy) and not (_same(vh, want_h) and _same(vy, want_y)):
            return advice
    if phi != "tanh" and _same(
        h, _states(**{k: inputs[k] for k in ("x", "h0", "W_hh", "W_xh", "b_h")}, phi="tanh")[1][1:]
    ):
        return f"use the nonlinearity named by phi (here {phi!r}), not always tanh"
    return None


ELMAN_FORWARD = FunctionCheck(
    name="elman_forward",
    reference=elman_forward,
    random_case=_elman_case,
    fixed_cases=(
        Case(EXAMPLE_NETWORK, label="the worked example"),
        Case({**EXAMPLE_NETWORK, "phi": "sigmoid"}, keywords=("phi",), label="the worked example with phi='sigmoid'"),
        Case({**EXAMPLE_NETWORK, "phi": "linear"}, keywords=("phi",), label="the worked example with phi='linear'"),
    ),
    hint="for t = 1..T: z_t = W_hh h_{t-1} + W_xh x_t + b_h, h_t = phi(z_t), y_t = W_hy h_t + b_y, starting from "
    "h_0 = h0; phi is tanh, the sigmoid 1 / (1 + e^{-z}) or the identity ('linear'); return (h, y), float arrays "
    "of shapes (T, H) and (T, O) whose row t - 1 holds h_t and y_t",
    targeted_hint=_elman_hint,
    rtol=1e-7,
    atol=1e-10,
    branch=lambda case: case.inputs.get("phi", "(default)"),
)


# ----------------------------------------------------------------------------- bptt_gradients


def _bptt_case(rng: np.random.Generator) -> Case:
    network = _random_network(rng)
    T, O = len(network["x"]), len(network["b_y"])
    targets = rng.normal(0.0, 1.0, size=(T, O))
    return _with_phi({"x": network.pop("x"), "targets": targets, **network}, rng)


def _bptt_variant(
    x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", *, use_dphi=True, recurse=True, transpose=False, state_lag=1
) -> dict[str, np.ndarray]:
    """BPTT gradients (squared error), optionally with a usual mistake."""
    z, h = _states(x, h0, W_hh, W_xh, b_h, phi)
    e = h[1:] @ W_hy.T + b_y - targets  # (T, O)
    g = e @ W_hy  # (T, H)
    dphi = activation_derivative(z, phi) if use_dphi else np.ones_like(z)
    back = W_hh.T if transpose else W_hh  # carry = back^T delta
    delta, carry = np.zeros_like(z), np.zeros(len(h0))
    for t in reversed(range(len(x))):
        delta[t] = dphi[t] * (g[t] + (carry if recurse else 0.0))
        carry = back.T @ delta[t]
    prev = h[:-1] if state_lag == 1 else h[1:]
    return {
        "h0": carry,
        "W_hh": delta.T @ prev,
        "W_xh": delta.T @ x,
        "b_h": delta.sum(axis=0),
        "W_hy": e.T @ h[1:],
        "b_y": e.sum(axis=0),
    }


_RECURRENT_KEYS = ("W_hh", "W_xh", "b_h")


def _forward_states(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh") -> np.ndarray:
    """The states h_1..h_T (T, H) of the forward pass (Part 1's reference), given to ``bptt_gradients``."""
    return elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)[0]


def _bptt_hint(case: Case, expected, got) -> str | None:
    got = {k: np.asarray(v, dtype=float) for k, v in got.items()}
    inputs = {k: v for k, v in case.inputs.items() if k != "phi"}
    phi = _phi_of(case)
    for key in GRADIENT_KEYS:
        if key in got and got[key].shape != expected[key].shape and got[key].shape == expected[key].shape[::-1]:
            return f"each gradient has the shape of its parameter: your gradient of {key} is transposed"
    mistakes = (
        (
            {"use_dphi": False},
            "multiply by phi'(z_t): delta_t = phi'(z_t) * (g_t + W_hh^T delta_{t+1}), elementwise "
            "(phi' is 1 - tanh^2 z for tanh, s (1 - s) for the sigmoid, 1 for 'linear')",
        ),
        (
            {"recurse": False},
            "your backward pass stops after one step: the error also flows back through the "
            "recurrence, delta_t = phi'(z_t) * (g_t + W_hh^T delta_{t+1}), from t = T down to 1, with delta_{T+1} = 0",
        ),
        (
            {"transpose": True},
            "the error flows back through the transpose: W_hh^T delta_{t+1} (delta @ W_hh for a "
            "row), not W_hh delta_{t+1}",
        ),
        ({"state_lag": 0}, "z_t depends on the PREVIOUS state: dL/dW_hh = sum_t delta_t h_{t-1}^T, with h_0 for t = 1"),
    )
    for options, advice in mistakes:
        variant = _bptt_variant(**inputs, phi=phi, **options)
        if all(k in got and _same(got[k], variant[k]) for k in _RECURRENT_KEYS) and not all(
            _same(variant[k], expected[k]) for k in _RECURRENT_KEYS
        ):
            return advice
    recurrent_ok = all(k in got and _same(got[k], expected[k]) for k in _RECURRENT_KEYS)
    if recurrent_ok and "h0" in got and not _same(got["h0"], expected["h0"]):
        return "h_0 enters only z_1 = W_hh h_0 + ...: its gradient is W_hh^T delta_1 (delta_1 = dL/dz_1)"
    if recurrent_ok and not all(k in got and _same(got[k], expected[k]) for k in ("W_hy", "b_y")):
        return (
            "the readout gradients need no recursion: dL/dW_hy = sum_t e_t h_t^T and dL/db_y = sum_t e_t, "
            "with e_t = y_t - target_t"
        )
    return None


BPTT_GRADIENTS = FunctionCheck(
    name="bptt_gradients",
    reference=bptt_gradients,
    random_case=_bptt_case,
    fixed_cases=(
        Case(
            {
                "x": EXAMPLE_NETWORK["x"],
                "targets": EXAMPLE_TARGETS,
                **{k: v for k, v in EXAMPLE_NETWORK.items() if k != "x"},
            },
            label="the worked example",
        ),
        Case(
            {
                "x": EXAMPLE_NETWORK["x"],
                "targets": EXAMPLE_TARGETS,
                **{k: v for k, v in EXAMPLE_NETWORK.items() if k != "x"},
                "phi": "sigmoid",
            },
            keywords=("phi",),
            label="the worked example with phi='sigmoid'",
        ),
    ),
    hint="from the states h_t it is given (the forward pass): e_t = y_t - target_t, g_t = W_hy^T e_t; backwards "
    "from t = T: delta_t = phi'(z_t) * (g_t + W_hh^T delta_{t+1}) with delta_{T+1} = 0 (phi'(z_t) = 1 - h_t^2 for "
    "tanh, h_t (1 - h_t) for the sigmoid, 1 for 'linear'); then dW_hh = sum_t delta_t h_{t-1}^T, "
    "dW_xh = sum_t delta_t x_t^T, db_h = sum_t delta_t, dh0 = W_hh^T delta_1, dW_hy = sum_t e_t h_t^T, "
    "db_y = sum_t e_t; return a dict with the keys 'h0', 'W_hh', 'W_xh', 'b_h', 'W_hy', 'b_y', each of its "
    "parameter's shape",
    targeted_hint=_bptt_hint,
    rtol=1e-7,
    atol=1e-10,
    branch=lambda case: case.inputs.get("phi", "(default)"),
    given={"h": lambda inputs: _forward_states(**inputs)},
)


# ----------------------------------------------------------------------------- product_norms_vs_lag

EXAMPLE_JACOBIANS = np.array([[[2.0, 0.0], [0.0, 0.5]], [[0.0, 1.0], [0.0, 0.0]]])
"""J_1 = diag(2, 1/2), J_2 = [[0, 1], [0, 0]]: the products J_2 J_1 and J_1 J_2 have norms 1/2 and 2."""


def _norms_case(rng: np.random.Generator) -> Case:
    T, H = int(rng.integers(1, 8)), int(rng.integers(1, 5))
    W_hh = rng.normal(0.0, 1.0, size=(H, H)) * float(rng.uniform(0.5, 2.0)) / np.sqrt(H)
    z = rng.normal(0.0, float(rng.uniform(0.3, 2.0)), size=(T, H))
    J = activation_derivative(z, str(rng.choice(NONLINEARITIES)))[:, :, None] * W_hh  # (T, H, H) diag(phi'(z_t)) W_hh
    inputs, keywords = {"J": J}, []
    if rng.random() < 0.4:
        inputs["t"] = int(rng.integers(1, T + 1))
        keywords.append("t")
    if rng.random() < 0.4:
        inputs["max_lag"] = int(rng.integers(0, inputs.get("t", T) + 1))
        keywords.append("max_lag")
    return Case(inputs, keywords=tuple(keywords))


def _products(J, t, max_lag, order: str) -> list[np.ndarray]:
    H = J.shape[1]
    P, out = np.eye(H), [np.eye(H)]
    for lag in range(1, max_lag + 1):
        if order == "right":  # the correct one: P_l = P_{l-1} J_{t-l+1}
            P = P @ J[t - lag]
        elif order == "left":  # J_{t-l+1} P_{l-1}
            P = J[t - lag] @ P
        else:  # from the start of the sequence: J_l ... J_1
            P = J[lag - 1] @ P
        out.append(P)
    return out


def _norms_hint(case: Case, expected, got) -> str | None:
    J = np.asarray(case.inputs["J"], dtype=float)
    t = case.inputs.get("t", len(J))
    max_lag = case.inputs.get("max_lag", t)
    got = np.asarray(got, dtype=float)
    if got.shape == (max_lag,) and got.shape != expected.shape:
        return "include lag 0, the identity (norm 1): the result has max_lag + 1 entries, for l = 0, ..., max_lag"
    if got.shape != expected.shape:
        return "the result has one entry per lag l = 0, ..., max_lag (max_lag defaults to t, and t to T)"
    spectral = lambda P: np.linalg.norm(P, 2)  # noqa: E731
    candidates = {
        "multiply in the right order: dh_t/dh_{t-l} = J_t J_{t-1} ... J_{t-l+1}, so each new (earlier) Jacobian "
        "goes on the RIGHT: P_l = P_{l-1} @ J_{t-l+1}": [spectral(P) for P in _products(J, t, max_lag, "left")],
        "the lags count back from step t: the product for lag l uses J_t, ..., J_{t-l+1} (J[t-1], ..., J[t-l]), "
        "not the first l Jacobians": [spectral(P) for P in _products(J, t, max_lag, "start")],
        "take the norm of the product, not the product of the norms (that is only an upper bound)": np.cumprod(
            [1.0] + [spectral(J[t - lag]) for lag in range(1, max_lag + 1)]
        ),
        "use the spectral norm (the largest singular value, np.linalg.norm(P, 2)), not the Frobenius norm": [
            np.linalg.norm(P) for P in _products(J, t, max_lag, "right")
        ],
    }
    matching = [advice for advice, values in candidates.items() if _same(got, values) and not _same(values, expected)]
    return "; or ".join(matching) or None


PRODUCT_NORMS = FunctionCheck(
    name="product_norms_vs_lag",
    reference=product_norms_vs_lag,
    random_case=_norms_case,
    fixed_cases=(
        Case({"J": EXAMPLE_JACOBIANS}, label="the worked example"),
        Case({"J": EXAMPLE_JACOBIANS, "t": 1}, keywords=("t",), label="the worked example at t = 1"),
        Case({"J": EXAMPLE_JACOBIANS, "max_lag": 1}, keywords=("max_lag",), label="the worked example up to lag 1"),
    ),
    hint="J[j - 1] holds J_j; P_0 = I and P_l = P_{l-1} @ J_{t-l+1} (that is, @ J[t - l]) give "
    "P_l = J_t ... J_{t-l+1} = dh_t/dh_{t-l}; return the spectral norms ||P_l||_2 = np.linalg.norm(P_l, 2) for "
    "l = 0, ..., max_lag as a float array, with t = T when t is None and max_lag = t when max_lag is None",
    targeted_hint=_norms_hint,
    rtol=1e-7,
    atol=1e-10,
)


# ----------------------------------------------------------------------------- clip_grad_norm

EXAMPLE_GRADS = {"W": np.array([[3.0, 0.0]]), "b": np.array([4.0])}
"""Global norm 5: clipped to 1 it becomes {"W": [[0.6, 0]], "b": [0.8]}."""


TORCH_CLIP_EPS = 1e-6
"""What ``torch.nn.utils.clip_grad_norm_`` adds to the norm before dividing (its answers get a hint)."""


def _clip_case(rng: np.random.Generator) -> Case:
    n = int(rng.integers(1, 5))
    shapes = [tuple(int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 3)))) for _ in range(n)]
    scales = rng.uniform(0.1, 3.0, size=n)
    arrays = [scale * rng.normal(0.0, 1.0, size=shape) for scale, shape in zip(scales, shapes)]
    norm = float(np.sqrt(sum(np.sum(a**2) for a in arrays)))
    threshold = float(norm * rng.choice([rng.uniform(0.05, 0.9), rng.uniform(1.1, 3.0)], p=[0.6, 0.4]))
    grads: dict[str, np.ndarray] | list[np.ndarray] = dict(zip(GRADIENT_KEYS, arrays)) if rng.random() < 0.5 else arrays
    return Case({"grads": grads, "threshold": threshold})


def _values(container) -> list[np.ndarray]:
    items = container.values() if isinstance(container, dict) else container
    return [np.asarray(a, dtype=float) for a in items]


def _clip_hint(case: Case, expected, got) -> str | None:
    if isinstance(got, (tuple, list)) and len(got) != 2:
        return "return the pair (clipped, norm): the clipped gradients and the global norm BEFORE clipping"
    clipped, norm = got
    grads, threshold = case.inputs["grads"], case.inputs["threshold"]
    want_clipped, want_norm = expected
    if isinstance(grads, dict) and not isinstance(clipped, dict):
        return "return the same kind of container: a dict with the same keys for a dict of gradients"
    if not isinstance(grads, dict) and isinstance(clipped, dict):
        return "return the same kind of container: a list for a list of gradients"
    arrays, got_arrays = _values(grads), _values(clipped)
    if len(got_arrays) != len(arrays) or any(a.shape != b.shape for a, b in zip(arrays, got_arrays)):
        return None
    per_array = [a * min(1.0, threshold / np.linalg.norm(a)) for a in arrays]
    always = [a * threshold / want_norm for a in arrays]
    after = float(np.sqrt(sum(np.sum(a**2) for a in _values(want_clipped))))
    if all(_same(g, p) for g, p in zip(got_arrays, per_array)) and not all(
        _same(p, w) for p, w in zip(per_array, _values(want_clipped))
    ):
        return (
            "clip with the GLOBAL norm of all gradients together, sqrt(sum_i ||g_i||^2), and scale every array "
            "by the same factor threshold / norm: clipping each array on its own changes the update's direction"
        )
    if want_norm <= threshold and all(_same(g, a) for g, a in zip(got_arrays, always)):
        return "clip only when the norm exceeds the threshold: below it the gradients are returned unchanged"
    torch_like = [a * min(1.0, threshold / (want_norm + TORCH_CLIP_EPS)) for a in arrays]
    if want_norm > threshold and all(_same(g, t, rtol=1e-12, atol=1e-15) for g, t in zip(got_arrays, torch_like)):
        return (
            "torch.nn.utils.clip_grad_norm_ scales by threshold / (norm + 1e-6), not threshold / norm: that 1e-6 "
            "moves every clipped entry by about 1e-6 / norm of its value, more than this exercise's tolerance; "
            "scale by threshold / norm exactly"
        )
    if all(_same(g, w) for g, w in zip(got_arrays, _values(want_clipped))):
        if _same(norm, after) and not _same(after, want_norm):
            return "return the norm BEFORE clipping (it is what you monitor), not the norm of the clipped gradients"
        if _same(norm, want_norm**2):
            return "the norm is the square root of the sum of squares"
    return None


CLIP_GRAD_NORM = FunctionCheck(
    name="clip_grad_norm",
    reference=clip_grad_norm,
    random_case=_clip_case,
    fixed_cases=(
        Case({"grads": EXAMPLE_GRADS, "threshold": 1.0}, label="the worked example"),
        Case({"grads": EXAMPLE_GRADS, "threshold": 10.0}, label="the worked example below the threshold"),
        Case(
            {"grads": [np.array([3.0, 0.0]), np.array([[0.0], [4.0]])], "threshold": 2.5}, label="a list of gradients"
        ),
    ),
    hint="norm = sqrt(sum over all arrays of the sum of their squared entries); if norm > threshold multiply every "
    "array by threshold / norm, else keep them; return the pair (clipped, norm) with norm the global norm before "
    "clipping (a float) and clipped new float arrays in the same kind of container (a list, or a dict with the "
    "same keys)",
    targeted_hint=_clip_hint,
    rtol=1e-7,
    atol=1e-10,
    new_arrays=True,  # "new float arrays": the caller's gradients must not come back below the threshold
)


# ----------------------------------------------------------------------------- gradient_regime

EXAMPLE_W_HH = np.array([[0.5, 1.0], [0.0, 0.5]])
"""rho = 0.5 but sigma_max = (1 + sqrt 2) / 2 = 1.2071: non-normal."""


def _orthogonal(rng: np.random.Generator, H: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(0.0, 1.0, size=(H, H)))
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def _regime_case(rng: np.random.Generator) -> Case:
    H, phi = int(rng.integers(2, 7)), str(rng.choice(NONLINEARITIES))
    scale = 1.0 / GAMMA[phi]  # the boundary value of sigma_max
    kind = rng.choice(["scaled", "non-normal", "orthogonal"], p=[0.5, 0.4, 0.1])
    if kind == "orthogonal":
        W = scale * _orthogonal(rng, H)
    elif kind == "scaled":
        G = rng.normal(0.0, 1.0, size=(H, H))
        s = rng.uniform(0.3, 0.95) if rng.random() < 0.5 else rng.uniform(1.05, 2.5)
        W = s * scale * G / np.linalg.norm(G, 2)
    else:  # eigenvalues inside the circle of radius 1/gamma, sigma_max usually outside
        U = np.triu(rng.normal(0.0, 1.0, size=(H, H)), k=1) * float(rng.uniform(0.5, 1.5))
        U[np.diag_indices(H)] = rng.uniform(-0.9, 0.9, size=H)
        Q = _orthogonal(rng, H)
        W = scale * Q @ U @ Q.T
    return Case({"W_hh": W, "phi": phi})


def _regime_from(value: float) -> str:
    if value < 1.0 - 1e-12:
        return "vanishing"
    if value > 1.0 + 1e-12:
        return "may explode"
    return "boundary"


def _regime_hint(case: Case, expected, got) -> str | None:
    W, phi = np.asarray(case.inputs["W_hh"], dtype=float), case.inputs.get("phi", "tanh")
    if got not in ("vanishing", "may explode", "boundary"):
        return "return one of the three strings 'vanishing', 'may explode' and 'boundary'"
    gamma, sigma = GAMMA[phi], float(np.linalg.norm(W, 2))
    rho = np.max(np.abs(np.linalg.eigvals(W)))
    candidates = [
        (
            _regime_from(gamma * rho),
            "use the largest singular value sigma_max(W_hh) = np.linalg.norm(W_hh, 2), not "
            "the spectral radius (the largest |eigenvalue|): for a non-normal matrix sigma_max can exceed 1/gamma "
            "while rho < 1/gamma",
        ),
        (
            _regime_from(sigma) if phi == "sigmoid" else expected,
            "for the sigmoid gamma = max |sigma'(z)| = 1/4: compare gamma * sigma_max with 1, i.e. sigma_max with 4",
        ),
        (
            _regime_from(gamma * float(np.linalg.norm(W))),
            "use the spectral norm np.linalg.norm(W_hh, 2), not the Frobenius norm np.linalg.norm(W_hh)",
        ),
        (
            got if expected == "boundary" else expected,
            "gamma * sigma_max equal to 1 (to a relative 1e-12) is 'boundary': neither condition holds strictly",
        ),
    ]
    matching = [advice for regime, advice in candidates if got == regime != expected]
    if matching:
        return "; or ".join(matching)
    if abs(gamma * sigma - 1.0) > 1e-6:
        return "compare gamma * sigma_max with 1: below is 'vanishing', above is 'may explode'"
    return None


GRADIENT_REGIME = FunctionCheck(
    name="gradient_regime",
    reference=gradient_regime,
    random_case=_regime_case,
    fixed_cases=(
        Case({"W_hh": EXAMPLE_W_HH}, label="the worked example"),
        Case({"W_hh": EXAMPLE_W_HH, "phi": "sigmoid"}, label="the worked example with phi='sigmoid'"),
        Case({"W_hh": np.eye(3), "phi": "linear"}, label="the identity with a linear unit"),
        Case({"W_hh": 4.0 * np.eye(2), "phi": "sigmoid"}, label="4 I with the sigmoid"),
        Case({"W_hh": np.array([[0.0, 2.0], [0.0, 0.0]])}, label="a nilpotent matrix (rho = 0, sigma_max = 2)"),
    ),
    hint="gamma = 1 for tanh and 'linear', 1/4 for the sigmoid; sigma_max = np.linalg.norm(W_hh, 2); return "
    "'vanishing' if gamma * sigma_max < 1, 'may explode' if it is > 1, and 'boundary' if it equals 1 to a relative "
    "1e-12 (|gamma * sigma_max - 1| <= 1e-12)",
    targeted_hint=_regime_hint,
    branch=lambda case: case.inputs.get("phi", "(default)"),
)


# ----------------------------------------------------------------------------- radius_sweep (an experiment)

SWEEP_PHIS = ("tanh", "linear")
r"""The nonlinearities of the experiment: both have :math:`\gamma = \sup |\phi'| = 1`."""


def _sweep_slopes(radii, Q, x, W_xh, b_h, h0, phi) -> list[np.ndarray]:
    r"""The slopes :math:`\phi'(z_t)` (T, H) of the run with :math:`W_{hh} = \rho Q`, one array per radius."""
    Q = np.asarray(Q, dtype=float)
    return [activation_derivative(elman_preactivations(x, h0, float(rho) * Q, W_xh, b_h, phi), phi) for rho in radii]


def _sweep_states(radii, Q, x, W_xh, b_h, h0, K, phi="tanh") -> np.ndarray:
    """The states h_1..h_T of each run (R, T, H) (Part 1's reference), given to ``radius_sweep``."""
    Q, H = np.asarray(Q, dtype=float), len(h0)
    return np.array([elman_forward(x, h0, rho * Q, W_xh, b_h, np.zeros((1, H)), np.zeros(1), phi)[0] for rho in radii])


def _sweep_jacobians(radii, Q, x, W_xh, b_h, h0, phi) -> list[np.ndarray]:
    r"""The step Jacobians :math:`J_t = \mathrm{diag}(\phi'(z_t))\, \rho Q` (T, H, H), one stack per radius."""
    slopes = _sweep_slopes(radii, Q, x, W_xh, b_h, h0, phi)
    return [dphi[:, :, None] * (float(rho) * np.asarray(Q, dtype=float)) for rho, dphi in zip(radii, slopes)]


@reference
def radius_sweep(radii, Q, x, W_xh, b_h, h0, K, phi="tanh", h=None) -> np.ndarray:
    r"""Gradient norms against the lag for recurrent weights of each spectral radius: the experiment of Exercises 3.

    For each radius :math:`\rho`, the network :math:`h_t = \phi(\rho Q\, h_{t-1} + W_{xh} x_t + b_h)` runs over
    ``x`` from ``h0``, and

    .. math:: N_{\rho}(k) = \Big\lVert \frac{\partial h_T}{\partial h_{T-k}} \Big\rVert_2
              = \big\lVert J_T J_{T-1} \cdots J_{T-k+1} \big\rVert_2, \qquad J_t = \mathrm{diag}(\phi'(z_t))\, \rho Q,

    for :math:`k = 0, \dots, K`. With :math:`Q` orthogonal and linear units :math:`N_\rho(k) = \rho^k`.

    Parameters
    ----------
    radii : sequence of R floats > 0
    Q : (H, H) orthogonal matrix
    x : (T, D);  W_xh : (H, D);  b_h : (H,);  h0 : (H,)
    K : int in 0..T, the longest lag
    phi : ``"tanh"`` or ``"linear"``
    h : (R, T, H) states of each run, accepted for the notebook's signature (the states follow from the inputs)

    Returns
    -------
    (R, K + 1) float array, row r holding :math:`N_{\rho_r}(0), \dots, N_{\rho_r}(K)`
    """
    Q = np.asarray(Q, dtype=float)
    norms = []
    for rho in radii:
        W_hh = float(rho) * Q
        J = step_jacobians(elman_preactivations(x, h0, W_hh, W_xh, b_h, phi), W_hh, phi)  # (T, H, H)
        norms.append(np.linalg.norm(jacobian_products_vs_lag(J, max_lag=K), ord=2, axis=(1, 2)))  # (K + 1,)
    return np.array(norms)


def sweep_bounds(radii, Q, x, W_xh, b_h, h0, K, phi="tanh") -> tuple[np.ndarray, np.ndarray]:
    r"""Hard bounds on :func:`radius_sweep`: :math:`\rho^k \prod_{j=T-k+1}^{T} \min_i \phi'(z_{j,i}) \le N_\rho(k)
    \le \rho^k \prod_{j=T-k+1}^{T} \max_i \phi'(z_{j,i})`.

    Each step Jacobian :math:`\mathrm{diag}(\phi'(z_j))\, \rho Q` has all its singular values between
    :math:`\rho \min_i \phi'(z_{j,i})` and :math:`\rho \max_i \phi'(z_{j,i})` (:math:`Q` is orthogonal), and the
    smallest and largest singular values of a product are at least and at most the products of the factors'.
    Both bounds are :math:`\rho^k` for linear units, and the upper one is at most :math:`\rho^k` for tanh.

    Returns
    -------
    lower, upper : (R, K + 1) float arrays
    """
    lower, upper = [], []
    for rho, dphi in zip(radii, _sweep_slopes(radii, Q, x, W_xh, b_h, h0, phi)):
        last = dphi[::-1][:K]  # (K, H): phi'(z_t) at the steps T, T - 1, ..., T - K + 1
        lower.append(np.cumprod(np.r_[1.0, rho * last.min(axis=1)]))
        upper.append(np.cumprod(np.r_[1.0, rho * last.max(axis=1)]))
    return np.array(lower), np.array(upper)


SWEEP_RTOL = 1e-6
"""The relative slack of the bounds (rounding only: the bounds are exact)."""


def _sweep_case(rng: np.random.Generator) -> PlantedCase:
    """A random orthogonal Q (H = 3..6), a scalar input sequence of T = 12..30 steps, 3-5 radii in [0.5, 1.3].

    H >= 3: with two units the Jacobians multiplied in reverse order have the same norms (Q^T = S Q S with
    S = diag(1, -1), which commutes with the diagonal slopes), so that mistake would go unseen."""
    H, T = int(rng.integers(3, 7)), int(rng.integers(12, 31))
    radii = np.sort(
        rng.choice([0.5, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.3], size=int(rng.integers(3, 6)), replace=False)
    )
    inputs = {
        "radii": [float(r) for r in radii],
        "Q": _orthogonal(rng, H),
        "x": rng.normal(0.0, 1.0, size=(T, 1)),
        "W_xh": rng.normal(0.0, 1.0, size=(H, 1)),
        "b_h": 0.2 * rng.normal(0.0, 1.0, size=H),
        "h0": np.zeros(H),
        "K": int(rng.integers(T // 2, T + 1)),
        "phi": str(rng.choice(SWEEP_PHIS, p=[0.7, 0.3])),
    }
    return PlantedCase(inputs)  # the bounds are computed by the judge: drawing a case stays cheap


def _sweep_example(phi: str, label: str) -> PlantedCase:
    """The notebook's worked example: Q the rotation by a right angle, T = 4 steps of the input x_t = 1."""
    inputs = {
        "radii": [0.5, 1.0, 1.5],
        "Q": np.array([[0.0, -1.0], [1.0, 0.0]]),
        "x": np.ones((4, 1)),
        "W_xh": np.array([[1.0], [0.5]]),
        "b_h": np.zeros(2),
        "h0": np.zeros(2),
        "K": 4,
        "phi": phi,
    }
    return PlantedCase(inputs, label=label)


EXAMPLE_SWEEP = _sweep_example("tanh", "the worked example")
"""The notebook's worked example (tanh units); its linear twin is the second visible case."""


def _sweep_mistakes(inputs: Mapping) -> dict[str, np.ndarray]:
    """The norms computed with each usual mistake that the bounds cannot see, keyed by the advice that fixes it."""
    radii, K = inputs["radii"], inputs["K"]
    stacks = _sweep_jacobians(
        radii, inputs["Q"], inputs["x"], inputs["W_xh"], inputs["b_h"], inputs["h0"], inputs["phi"]
    )
    steps = [np.linalg.norm(J[::-1][:K], ord=2, axis=(1, 2)) for J in stacks]  # (K,) ||J_T||, ..., ||J_{T-K+1}||
    reversed_order = []
    for J in stacks:
        P, row = np.eye(J.shape[1]), [1.0]
        for k in range(1, K + 1):
            P = J[len(J) - k] @ P  # J_{T-k+1} ... J_T: the new (earlier) Jacobian on the left
            row.append(float(np.linalg.norm(P, 2)))
        reversed_order.append(row)
    return {
        "take the norm of the product of the Jacobians, not the product of their norms (that is only the upper "
        "bound)": np.array([np.cumprod(np.r_[1.0, s]) for s in steps]),
        "dh_T/dh_{T-k} = J_T J_{T-1} ... J_{T-k+1}: each new (earlier) Jacobian goes on the RIGHT of the product": (
            np.array(reversed_order)
        ),
    }


def _sweep_judge(run, case: PlantedCase, got) -> tuple[str, str | None] | None:
    """Inside the hard bounds (rho^k exactly for linear units), and none of the mistakes the bounds let through."""
    norms = np.asarray(got, dtype=float)
    lower, upper = sweep_bounds(**case.inputs)
    outside = (norms < lower * (1 - SWEEP_RTOL)) | (norms > upper * (1 + SWEEP_RTOL))
    if outside.any():
        r, k = (int(i) for i in np.argwhere(outside)[0])
        where = f"for rho = {case.inputs['radii'][r]:g} at lag k = {k}"
        if k == 0:
            return f"{where} the norm is not 1: dh_T/dh_T is the identity", (
                "start from P_0 = I and take the spectral norm np.linalg.norm(P, 2) (the Frobenius norm of I is "
                "sqrt(H))"
            )
        if case.inputs["phi"] == "linear":
            return f"{where} the norm is not rho^k, which it is exactly for linear units and an orthogonal Q", (
                "multiply k step Jacobians J_t = diag(phi'(z_t)) W_hh with W_hh = rho Q (phi' = 1 for linear units) "
                "and take the spectral norm np.linalg.norm(P, 2), not the Frobenius norm"
            )
        return f"{where} the norm is outside the bounds rho^k prod min phi' <= norm <= rho^k prod max phi'", (
            "J_t = diag(phi'(z_t)) rho Q with phi'(z_t) = 1 - h_t^2 for tanh, from the states of the run with "
            "W_hh = rho Q; the lags count back from the last step T: dh_T/dh_{T-k} = J_T ... J_{T-k+1} "
            "(the states h[r, T - 1], ..., h[r, T - k]); and the spectral norm, not the Frobenius norm"
        )
    expected = radius_sweep(**case.inputs)  # the judge runs outside the student's code: the reference may run
    for advice, values in _sweep_mistakes(case.inputs).items():
        if _same(norms, values) and not _same(values, expected):
            return "the norms are those of a usual mistake that stays inside the bounds", advice
    return None


RADIUS_SWEEP = PropertyCheck(
    name="radius_sweep",
    reference=radius_sweep,
    random_case=_sweep_case,
    fixed_cases=(EXAMPLE_SWEEP, _sweep_example("linear", "the worked example with phi='linear'")),
    n_visible=3,
    n_hidden=4,
    hint="for each rho: phi'(z_t) from the states it is given (h[r], the run with W_hh = rho Q: 1 - h_t^2 for tanh, "
    "1 for 'linear'), J_t = diag(phi'(z_t)) (rho Q), P_0 = I and P_k = P_{k-1} @ J_{T-k+1}; row r holds "
    "np.linalg.norm(P_k, 2) for k = 0, ..., K: a float array of shape (len(radii), K + 1)",
    judge=_sweep_judge,
    branch=lambda case: case.inputs["phi"],
    given={"h": lambda inputs: _sweep_states(**inputs)},
)


BPTT_GRADIENT_ENTRIES = BPTT_GRADIENTS.entries(GRADIENT_KEYS)
"""One check per gradient of ``bptt_gradients``: the notebook grades the six apart, so one wrong gradient
costs its share of the part's points only."""

CHECKS = MappingProxyType(
    {
        check.key: check
        for check in (
            ELMAN_FORWARD,
            BPTT_GRADIENTS,
            *BPTT_GRADIENT_ENTRIES,
            PRODUCT_NORMS,
            CLIP_GRAD_NORM,
            GRADIENT_REGIME,
            RADIUS_SWEEP,
        )
    }
)
"""The exercise name (``bptt_gradients_<key>`` for one gradient) -> its
:class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
