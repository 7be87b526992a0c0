r"""Autograder checks of the Chapter 4 exercises (the LSTM and GRU steps, the echo state network).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in :mod:`seqlearn.gated.reference`
(one LSTM step and one GRU step with ``torch.nn``'s conventions, one leaky reservoir step) and
of :func:`seqlearn.reservoir.ridge_readout` and :func:`seqlearn.reservoir.memory_capacity`
(graded through their entry points in :mod:`seqlearn.gated.reference`), and raises
:class:`~seqlearn.grading.checks.CheckFailure` with an explanation on the first wrong case.
Visible cases are the notebook's worked examples plus random cases from fixed seeds; hidden
cases are drawn fresh at each grading run (see :mod:`seqlearn.grading.checks`).

Random inputs follow the notebook's conventions: float64 arrays, batches as rows (``x`` (B, D),
``h`` and ``c`` (B, H)), torch's stacked parameters (``W_ih`` (4H, D) or (3H, D), ``W_hh``
(4H, H) or (3H, H), two biases), reservoir states ``x`` (N,) or (B, N) with ``W`` (N, N),
``W_in`` (N, d), ``b`` (N,), and feature matrices ``Z`` (T, p) well enough conditioned that
every sound way of solving the ridge problem agrees to the tolerance.

The targeted hints recognise the usual mistakes by recomputing them: the LSTM's or the GRU's
gate blocks in another order, a sigmoid for :math:`g_t`, :math:`h_t = o_t \odot c_t` without the
tanh, the input gate or a bias left out, the GRU's reset gate applied before :math:`W_{hn}`
(Keras' ``reset_after=False``) or outside :math:`b_{hn}`, :math:`z_t` weighting the new state,
the leak rate on the wrong term, :math:`W^\top` for :math:`W`, :math:`\beta` added to every entry
of :math:`Z^\top Z` or not to the ones column, the memory capacity scored on the training half,
without an intercept, without the square, or at delays shifted by one.
"""

from __future__ import annotations

import itertools
from types import MappingProxyType
from typing import Any

import numpy as np

from ..gated.reference import gru_step, lstm_step, memory_capacity, reservoir_update, ridge_readout
from ..guard import reference
from .checks import Case, FunctionCheck, define_checkers, matching_advice, same_values
from .learnability import PlantedCase, PropertyCheck

__all__ = [
    "EXAMPLE_LSTM",
    "EXAMPLE_GRU",
    "EXAMPLE_RESERVOIR",
    "EXAMPLE_READOUT",
    "shift_register",
    "EXAMPLE_CURVE",
    "CURVE_TOLERANCE",
    "MEMORY_CURVE",
    "memory_curve",
    "linear_memory_function",
    "exact_memory",
    "CHECKS",
]


def _sigmoid(a):
    return 0.5 * (1.0 + np.tanh(0.5 * a))


def _gated_parameters(rng: np.random.Generator, n_gates: int) -> dict[str, np.ndarray]:
    """Random x, h and torch-stacked parameters: B in 1..4, D in 1..4, H in 1..5, gates spread over (0, 1)."""
    B, D, H = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    scale = float(rng.uniform(0.5, 2.0))
    return {
        "x": rng.normal(0.0, 1.0, size=(B, D)),
        "h": rng.uniform(-1.0, 1.0, size=(B, H)),
        "W_ih": scale * rng.normal(0.0, 1.0, size=(n_gates * H, D)) / np.sqrt(D),
        "W_hh": scale * rng.normal(0.0, 1.0, size=(n_gates * H, H)) / np.sqrt(H),
        "b_ih": rng.normal(0.0, 0.5, size=n_gates * H),
        "b_hh": rng.normal(0.0, 0.5, size=n_gates * H),
    }


def _blocks(a: np.ndarray, order) -> list[np.ndarray]:
    """The gate blocks of the stacked pre-activations ``a`` (B, nH), in the permuted ``order``."""
    parts = np.split(a, len(order), axis=-1)
    return [parts[j] for j in order]


# ----------------------------------------------------------------------------- lstm_step

EXAMPLE_LSTM = {
    "x": np.array([[1.0]]),
    "h": np.array([[0.0]]),
    "c": np.array([[1.0]]),
    "W_ih": np.array([[0.0], [0.0], [1.0], [0.0]]),
    "W_hh": np.array([[1.0], [1.0], [1.0], [1.0]]),
    "b_ih": np.array([0.0, 2.0, 0.0, -1.0]),
    "b_hh": np.array([0.0, 0.0, 0.0, 0.0]),
}
"""The notebook's LSTM step: B = D = H = 1, pre-activations (a_i, a_f, a_g, a_o) = (0, 2, 1, -1)."""

EXAMPLE_LSTM_STATE = {
    **EXAMPLE_LSTM,
    "x": np.array([[1.0], [-1.0]]),
    "h": np.array([[0.5], [-0.5]]),
    "c": np.array([[1.0], [-2.0]]),
}
"""The same cell on a batch of two, with non-zero states (W_hh and the batch axis matter)."""


def _lstm_case(rng: np.random.Generator) -> Case:
    p = _gated_parameters(rng, 4)
    c = rng.normal(0.0, 1.5, size=p["h"].shape)
    return Case({"x": p["x"], "h": p["h"], "c": c, **{k: p[k] for k in ("W_ih", "W_hh", "b_ih", "b_hh")}})


def _lstm_variant(
    x,
    h,
    c,
    W_ih,
    W_hh,
    b_ih,
    b_hh,
    *,
    order=(0, 1, 2, 3),
    g_sigmoid=False,
    tanh_c=True,
    input_gate=True,
    bias="both",
    old_c=False,
):
    """(h_new, c_new) of one LSTM step, optionally with a usual mistake."""
    a = x @ W_ih.T + h @ W_hh.T + (b_ih if bias != "hh" else 0.0) + (b_hh if bias != "ih" else 0.0)
    a_i, a_f, a_g, a_o = _blocks(a, order)
    i, f, o = _sigmoid(a_i), _sigmoid(a_f), _sigmoid(a_o)
    g = _sigmoid(a_g) if g_sigmoid else np.tanh(a_g)
    c_new = f * c + (i * g if input_gate else g)
    read = c if old_c else c_new
    return o * (np.tanh(read) if tanh_c else read), c_new


_LSTM_MISTAKES: tuple[tuple[str, dict[str, Any]], ...] = (
    *(
        (
            "torch's gate order is i, f, g, o: rows [0, H) of W_ih, W_hh and the biases belong to the input gate, "
            "[H, 2H) to the forget gate, [2H, 3H) to the candidate g and [3H, 4H) to the output gate",
            {"order": order},
        )
        for order in itertools.permutations(range(4))
        if order != (0, 1, 2, 3)
    ),
    ("the candidate g_t uses tanh (values in (-1, 1)); only i_t, f_t and o_t use the sigmoid", {"g_sigmoid": True}),
    ("the new hidden state is h_t = o_t * tanh(c_t): apply tanh to the new cell state", {"tanh_c": False}),
    ("the new content enters through the input gate: c_t = f_t * c_{t-1} + i_t * g_t", {"input_gate": False}),
    ("add both biases, b_ih and b_hh (torch keeps two)", {"bias": "ih"}),
    ("add both biases, b_ih and b_hh (torch keeps two)", {"bias": "hh"}),
    ("h_t = o_t * tanh(c_t) reads the NEW cell state c_t, not c_{t-1}", {"old_c": True}),
)
"""(advice, options of :func:`_lstm_variant` that make the mistake)."""


def _both_same(a, b) -> bool:
    return same_values(a[0], b[0]) and same_values(a[1], b[1])


def _lstm_hint(case: Case, expected, got) -> str | None:
    if isinstance(got, (tuple, list)) and len(got) != 2:
        return "return the pair (h_new, c_new): the new hidden state and the new cell state"
    got = tuple(np.asarray(a, dtype=float) for a in got)
    if _both_same(got[::-1], expected):
        return "return the pair in the order (h_new, c_new)"
    inputs = {k: np.asarray(v, dtype=float) for k, v in case.inputs.items()}
    candidates = [(advice, _lstm_variant(**inputs, **options)) for advice, options in _LSTM_MISTAKES]
    return matching_advice(candidates, got, expected, same=_both_same)


LSTM_STEP = FunctionCheck(
    name="lstm_step",
    reference=lstm_step,
    random_case=_lstm_case,
    fixed_cases=(
        Case(EXAMPLE_LSTM, label="the worked example"),
        Case(EXAMPLE_LSTM_STATE, label="the worked example's cell on a batch of two"),
    ),
    hint="a = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh has shape (B, 4H); split it into four (B, H) blocks in the order "
    "i, f, g, o; i, f, o = sigmoid(...), g = tanh(...); c_new = f * c + i * g, h_new = o * tanh(c_new); return "
    "(h_new, c_new), new float64 arrays of shape (B, H)",
    targeted_hint=_lstm_hint,
    new_arrays=True,
)


# ----------------------------------------------------------------------------- gru_step

EXAMPLE_GRU = {
    "x": np.array([[1.0]]),
    "h": np.array([[0.5]]),
    "W_ih": np.array([[0.0], [0.0], [1.0]]),
    "W_hh": np.array([[0.0], [0.0], [2.0]]),
    "b_ih": np.array([0.0, 0.0, 0.0]),
    "b_hh": np.array([1.0, -1.0, 1.0]),
}
"""The notebook's GRU step: B = D = H = 1, r = sigma(1), z = sigma(-1), W_hn h + b_hn = 2."""


def _gru_case(rng: np.random.Generator) -> Case:
    return Case(_gated_parameters(rng, 3))


def _gru_example_batch() -> dict[str, np.ndarray]:
    """H = 2, where resetting before W_hn differs from resetting outside b_hn."""
    return {
        "x": np.array([[1.0], [-1.0]]),
        "h": np.array([[0.5, -0.5], [1.0, 0.0]]),
        "W_ih": np.array([[0.5], [-0.5], [0.0], [1.0], [1.0], [-1.0]]),
        "W_hh": np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-0.5, 0.5], [2.0, 1.0], [-1.0, 1.0]]),
        "b_ih": np.array([0.0, 0.5, -0.5, 0.0, 0.25, 0.0]),
        "b_hh": np.array([0.5, 0.0, 0.0, -0.5, 1.0, -1.0]),
    }


def _gru_variant(x, h, W_ih, W_hh, b_ih, b_hh, *, order=(0, 1, 2), reset="after", z_new=False, bias="both"):
    """h_new of one GRU step, optionally with a usual mistake."""
    gi = x @ W_ih.T + (b_ih if bias != "hh" else 0.0)
    b_h = b_hh if bias != "ih" else np.zeros_like(b_hh)
    x_r, x_z, x_n = _blocks(gi, order)
    W_r, W_z, W_n = _blocks(W_hh.T, order)  # columns of W_hh.T: (H, H) each
    b_r, b_z, b_n = _blocks(b_h, order)
    r = _sigmoid(x_r + h @ W_r + b_r)
    z = _sigmoid(x_z + h @ W_z + b_z)
    if reset == "before":  # Cho et al. v3, Keras reset_after=False: W_hn (r * h)
        n = np.tanh(x_n + (r * h) @ W_n + b_n)
    elif reset == "bias outside":
        n = np.tanh(x_n + r * (h @ W_n) + b_n)
    elif reset == "none":
        n = np.tanh(x_n + h @ W_n + b_n)
    else:
        n = np.tanh(x_n + r * (h @ W_n + b_n))
    return z * n + (1.0 - z) * h if z_new else (1.0 - z) * n + z * h


def _gru_hint(case: Case, expected, got) -> str | None:
    inputs = {k: np.asarray(v, dtype=float) for k, v in case.inputs.items()}
    variants: list[tuple[str, dict[str, Any]]] = [
        (
            "torch's gate order is r, z, n: rows [0, H) of W_ih, W_hh and the biases belong to the reset gate r, "
            "[H, 2H) to the update gate z and [2H, 3H) to the candidate n",
            {"order": order},
        )
        for order in itertools.permutations(range(3))
        if order != (0, 1, 2)
    ]
    variants += [
        (
            "the reset gate multiplies the PRODUCT: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), as torch (and "
            "cuDNN) do; W_hn (r * h) is the other GRU (Keras reset_after=False), which does not equal torch.nn.GRU",
            {"reset": "before"},
        ),
        (
            "b_hn sits INSIDE the reset product: r * (W_hn h + b_hn), not r * (W_hn h) + b_hn",
            {"reset": "bias outside"},
        ),
        ("the candidate n needs the reset gate: n = tanh(W_in x + b_in + r * (W_hn h + b_hn))", {"reset": "none"}),
        (
            "z weights the OLD state: h_new = (1 - z) * n + z * h (torch's convention), not z * n + (1 - z) * h",
            {"z_new": True},
        ),
        ("add both biases, b_ih and b_hh (torch keeps two)", {"bias": "ih"}),
        ("add both biases, b_ih and b_hh (torch keeps two)", {"bias": "hh"}),
    ]
    candidates = [(text, _gru_variant(**inputs, **options)) for text, options in variants]
    return matching_advice(candidates, got, expected)


GRU_STEP = FunctionCheck(
    name="gru_step",
    reference=gru_step,
    random_case=_gru_case,
    fixed_cases=(
        Case(EXAMPLE_GRU, label="the worked example"),
        Case(_gru_example_batch(), label="a batch of two with H = 2"),
    ),
    hint="gi = x @ W_ih.T + b_ih and gh = h @ W_hh.T + b_hh, each split into (B, H) blocks in the order r, z, n; "
    "r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n), h_new = (1 - z) * n + z * h; "
    "return a new float64 array of shape (B, H)",
    targeted_hint=_gru_hint,
    new_arrays=True,
)


# ----------------------------------------------------------------------------- reservoir_update

EXAMPLE_RESERVOIR: dict[str, Any] = {
    "x": np.array([0.5, -0.5]),
    "u": np.array([1.0]),
    "W": np.array([[0.0, 1.0], [0.0, 0.0]]),
    "W_in": np.array([[1.0], [-1.0]]),
    "b": np.array([0.0, 0.5]),
    "leak_rate": 0.5,
}
"""The notebook's reservoir step: N = 2, d = 1; W x + W_in u + b = (0.5, -0.5)."""


def _reservoir_case(rng: np.random.Generator) -> Case:
    N, d = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    W = rng.normal(0.0, 1.0, size=(N, N))
    W *= float(rng.uniform(0.5, 1.5)) / max(float(np.max(np.abs(np.linalg.eigvals(W)))), 1e-3)
    batch = () if rng.random() < 0.5 else (int(rng.integers(1, 4)),)
    leak_rate = 1.0 if rng.random() < 0.3 else float(rng.uniform(0.05, 0.95))
    return Case(
        {
            "x": rng.uniform(-1.0, 1.0, size=(*batch, N)),
            "u": rng.normal(0.0, 1.0, size=(*batch, d)),
            "W": W,
            "W_in": rng.uniform(-1.0, 1.0, size=(N, d)),
            "b": rng.uniform(-0.5, 0.5, size=N),
            "leak_rate": leak_rate,
        }
    )


def _reservoir_hint(case: Case, expected, got) -> str | None:
    x, u, W, W_in, b = (np.asarray(case.inputs[k], dtype=float) for k in ("x", "u", "W", "W_in", "b"))
    a = case.inputs["leak_rate"]
    drive = x @ W.T + u @ W_in.T + b
    candidates = [
        ("the leak rate a weights the NEW term: x_new = (1 - a) * x + a * tanh(...)", a * x + (1 - a) * np.tanh(drive)),
        ("mix the old state in: x_new = (1 - a) * x + a * tanh(...) (a = 1 only drops it)", np.tanh(drive)),
        (
            "the recurrence is W x (x @ W.T for states as rows), not W^T x",
            (1 - a) * x + a * np.tanh(x @ W + u @ W_in.T + b),
        ),
        ("add the bias b inside the tanh", (1 - a) * x + a * np.tanh(drive - b)),
        ("the leak mixes states, outside the tanh", np.tanh((1 - a) * x + a * drive)),
    ]
    return matching_advice(candidates, got, expected)


RESERVOIR_UPDATE = FunctionCheck(
    name="reservoir_update",
    reference=reservoir_update,
    random_case=_reservoir_case,
    fixed_cases=(
        Case(EXAMPLE_RESERVOIR, label="the worked example"),
        Case(
            {**EXAMPLE_RESERVOIR, "x": np.array([[0.5, -0.5], [0.0, 1.0]]), "u": np.array([[1.0], [0.0]])},
            label="the worked example on a batch of two states",
        ),
        Case({**EXAMPLE_RESERVOIR, "leak_rate": 1.0}, label="the worked example without leak (a = 1)"),
    ),
    hint="x_new = (1 - a) * x + a * tanh(W x + W_in u + b) with a = leak_rate; for states and inputs stored as rows "
    "(x of shape (B, N), u of shape (B, d)) that is x @ W.T + u @ W_in.T + b, which also works for one state "
    "(N,); return a new float64 array of x's shape",
    targeted_hint=_reservoir_hint,
    new_arrays=True,
    branch=lambda case: (np.ndim(case.inputs["x"]), case.inputs["leak_rate"] == 1.0),
)


# ----------------------------------------------------------------------------- ridge_readout

EXAMPLE_READOUT: dict[str, Any] = {
    "Z": np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
    "Y": np.array([0.0, 1.0, 3.0]),
    "ridge": 1.0,
}
"""The notebook's ridge problem: Z^T Z + I = [[4, 3], [3, 6]], Z^T Y = (4, 7), W = (0.2, 16/15)."""


def _readout_case(rng: np.random.Generator) -> Case:
    while True:  # well conditioned: every sound solver agrees to the tolerance
        T, p, m = int(rng.integers(4, 16)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
        p = min(p, T - 1)
        Z = rng.normal(0.0, 1.0, size=(T, p))
        if rng.random() < 0.5:
            Z[:, 0] = 1.0  # a bias column, as the ESN's readout has
        if np.linalg.cond(Z) < 30.0:
            break
    Y = rng.normal(0.0, 1.0, size=(T, m)) if rng.random() < 0.6 else rng.normal(0.0, 1.0, size=T)
    ridge = 0.0 if rng.random() < 0.25 else float(10.0 ** rng.uniform(-2.0, 1.0))
    return Case({"Z": Z, "Y": Y, "ridge": ridge})


def _readout_hint(case: Case, expected, got) -> str | None:
    Z, Y = (np.asarray(case.inputs[k], dtype=float) for k in ("Z", "Y"))
    beta = case.inputs["ridge"]
    got, p = np.asarray(got, dtype=float), Z.shape[1]
    if Y.ndim == 1 and got.shape == (p, 1):
        return "for a 1-D Y of shape (T,) return a 1-D W of shape (p,)"
    if got.shape != expected.shape and got.T.shape == expected.shape:
        return "W has shape (p, m): one row per feature (column of Z), one column per output"
    A = Z.T @ Z
    rhs = Z.T @ Y
    first_free = np.eye(p)
    first_free[0, 0] = 0.0
    candidates = [
        (
            "Z.T @ Z + ridge adds beta to EVERY entry; add it to the diagonal only: Z.T @ Z + ridge * np.eye(p)",
            np.linalg.solve(A + beta, rhs),
        ),
        ("add beta I to Z^T Z (beta = 0 is plain least squares)", np.linalg.lstsq(Z, Y, rcond=None)[0]),
        (
            "beta I regularises EVERY column of Z here, the column of ones too (this readout treats all features "
            "alike, as seqlearn.reservoir.ridge_readout does)",
            np.linalg.solve(A + beta * first_free, rhs),
        ),
        ("use beta itself, not beta squared", np.linalg.solve(A + beta**2 * np.eye(p), rhs)),
        ("use beta itself, not beta times the number of rows T", np.linalg.solve(A + beta * len(Z) * np.eye(p), rhs)),
    ]
    return matching_advice(candidates, got, expected)


RIDGE_READOUT = FunctionCheck(
    name="ridge_readout",
    reference=ridge_readout,
    random_case=_readout_case,
    fixed_cases=(
        Case(EXAMPLE_READOUT, label="the worked example"),
        Case(
            {**EXAMPLE_READOUT, "Y": EXAMPLE_READOUT["Y"][:, None]}, label="the worked example with Y of shape (3, 1)"
        ),
        Case({**EXAMPLE_READOUT, "ridge": 0.0}, label="the worked example without regularisation"),
    ),
    hint="solve (Z^T Z + beta I) W = Z^T Y with np.linalg.solve (no explicit inverse), I the p x p identity, for "
    "every column of Z alike; W has shape (p, m) for Y of shape (T, m) and (p,) for Y of shape (T,)",
    targeted_hint=_readout_hint,
    branch=lambda case: (np.ndim(case.inputs["Y"]), case.inputs["ridge"] == 0.0),
)


# ----------------------------------------------------------------------------- memory_capacity


def shift_register(u, N: int) -> np.ndarray:
    """The states of a shift register, x_t = (u_t, u_{t-1}, ..., u_{t-N+1}) (zeros before the start): (T, N)."""
    u = np.asarray(u, dtype=float)
    states = np.zeros((len(u), N))
    for j in range(N):
        states[j:, j] = u[: len(u) - j]
    return states


EXAMPLE_U = np.round(np.random.default_rng(4).uniform(-0.5, 0.5, 40), 2)
"""The notebook's input: 40 values of U(-1/2, 1/2), rounded to two decimals (seed 4)."""


def _memory_case(rng: np.random.Generator) -> Case:
    from ..reservoir import EchoStateNetwork  # on first use: importing the grader does not load the reservoir

    while True:
        N = int(rng.integers(2, 7))
        k_max = int(rng.integers(1, 2 * N + 1))
        T = k_max + 2 * int(rng.integers(3 * N + 5, 60))  # T - k_max even: two equal halves
        u = rng.uniform(-0.5, 0.5, T) if rng.random() < 0.7 else rng.normal(0.0, 0.3, T)
        if rng.random() < 0.2:
            states = shift_register(u, N)
        else:
            esn = EchoStateNetwork(
                1,
                N,
                spectral_radius=float(rng.uniform(0.5, 0.95)),
                input_scaling=float(rng.uniform(0.2, 1.5)),
                leak_rate=float(rng.uniform(0.6, 1.0)),
                density=1.0,
                activation=str(rng.choice(["tanh", "identity"])),
                seed=rng,
            )
            states = esn.run(u)[0]
        half = (T - k_max) // 2
        features = np.column_stack([np.ones(half), states[k_max : k_max + half]])
        if np.linalg.cond(features) < 300.0:
            return Case({"states": states, "u": u, "k_max": k_max})


def _memory_variant(states, u, k_max, *, intercept=True, in_sample=False, first=1, squared=True, r2="corr"):
    """(mc, r2) with a usual mistake."""
    T = len(u)
    t = np.arange(k_max, T)
    delays = range(first, first + k_max)
    targets = np.stack([u[t - k] for k in delays], axis=1)  # u[t - 0] is u_t itself
    Z = np.column_stack([np.ones(len(t)), states[t]]) if intercept else states[t]
    n_train = len(t) // 2
    W = np.linalg.lstsq(Z[:n_train], targets[:n_train], rcond=None)[0]
    rows = slice(0, n_train) if in_sample else slice(n_train, None)
    pred, true = Z[rows] @ W, targets[rows]
    if r2 == "corr":
        pc, tc = pred - pred.mean(0), true - true.mean(0)
        corr = (pc * tc).sum(0) / np.sqrt((pc**2).sum(0) * (tc**2).sum(0))
        scores = corr**2 if squared else corr
    else:
        scores = 1.0 - ((pred - true) ** 2).sum(0) / ((true - true.mean(0)) ** 2).sum(0)
    return float(scores.sum()), scores


def _memory_hint(case: Case, expected, got) -> str | None:
    if isinstance(got, (tuple, list)) and len(got) != 2:
        return "return the pair (mc, r2): the total and the per-delay squared correlations"
    mc, r2 = got
    if np.ndim(mc) == 1 and np.ndim(r2) == 0:
        return "return the pair in the order (mc, r2): the total first, then the array of k_max values"
    inputs = {k: np.asarray(v, dtype=float) for k, v in case.inputs.items() if k != "k_max"}
    k_max = case.inputs["k_max"]
    same = lambda a, b: same_values(a[1], b[1], rtol=1e-6, atol=1e-8)  # noqa: E731
    candidates = [
        (
            "score each readout on the second half (the test steps), not on the half it was fitted on: the "
            "training r^2 is biased upwards",
            _memory_variant(**inputs, k_max=k_max, in_sample=True),
        ),
        (
            "fit the readout on [1; x_t]: a column of ones (an intercept) before the states",
            _memory_variant(**inputs, k_max=k_max, intercept=False),
        ),
        (
            "the delays are k = 1, ..., k_max: the target of delay k is u_{t-k} (u[t - k]), not u_{t-k+1}",
            _memory_variant(**inputs, k_max=k_max, first=0),
        ),
        ("square the correlation: r^2, not r", _memory_variant(**inputs, k_max=k_max, squared=False)),
        (
            "r^2 here is the squared Pearson correlation between prediction and target on the test steps, not the "
            "coefficient of determination 1 - SSE/SST",
            _memory_variant(**inputs, k_max=k_max, r2="determination"),
        ),
    ]
    advice = matching_advice(candidates, (mc, r2), expected, same=same)
    if advice:
        return advice
    if same_values(r2, expected[1], rtol=1e-6, atol=1e-8) and not same_values(mc, expected[0], rtol=1e-6, atol=1e-8):
        return "mc is the sum of the per-delay r^2 values"
    return None


MEMORY_CAPACITY = FunctionCheck(
    name="memory_capacity",
    reference=memory_capacity,
    random_case=_memory_case,
    fixed_cases=(
        Case(
            {"states": shift_register(EXAMPLE_U, 3), "u": EXAMPLE_U, "k_max": 4},
            label="the worked example",
        ),
    ),
    hint="for the steps t = k_max, ..., T - 1 (0-based), features z_t = [1, x_t] and targets u[t - k] for "
    "k = 1, ..., k_max; fit each delay's readout by least squares on the first half of these steps (T - k_max is "
    "even) and on the second half compute r^2_k, the squared Pearson correlation between prediction and target; "
    "return (mc, r2) with r2 a float array of shape (k_max,) and mc = r2.sum() a float",
    targeted_hint=_memory_hint,
    rtol=1e-8,
    atol=1e-10,
)


# ----------------------------------------------------------------------------- memory_curve (an experiment)


@reference
def memory_curve(W, w_in, u, radii, leak_rate, k_max, washout, n_train) -> tuple[np.ndarray, np.ndarray]:
    r"""The memory function of a linear reservoir at each spectral radius: the experiment of Exercises 4.

    For each radius :math:`\rho` the reservoir :math:`x_t = (1 - a)\,x_{t-1} + a\,(\rho W x_{t-1} + w_{in} u_t)`
    (the identity in place of tanh, no bias) starts from :math:`x_{-1} = 0` and runs on all of ``u``; the
    steps :math:`t \ge` ``washout`` give features :math:`z_t = [1; x_t]` and targets :math:`u_{t-k}`,
    :math:`k = 1, \dots, k_{\max}`. Each delay's readout is fitted by least squares on the first ``n_train``
    of these steps, and :math:`r^2_k` is the squared Pearson correlation of its predictions with the targets on
    the remaining steps; :math:`MC = \sum_k r^2_k`.

    Parameters
    ----------
    W : (N, N) array of spectral radius 1;  w_in : (N,) array;  u : (T,) i.i.d. scalar input
    radii : list of R floats;  leak_rate : float a in (0, 1]
    k_max : int >= 1;  washout : int >= k_max;  n_train : int, 0 < n_train < T - washout

    Returns
    -------
    mc : (R,) array, the capacity at each radius;  r2 : (R, k_max) array, its memory function
    """
    R, N = len(radii), len(w_in)
    A = np.zeros((R * N, R * N))  # every radius at once: a block-diagonal system of the R reservoirs
    for r, rho in enumerate(radii):
        A[r * N : (r + 1) * N, r * N : (r + 1) * N] = (1.0 - leak_rate) * np.eye(N) + leak_rate * rho * W
    drive = leak_rate * np.multiply.outer(u, np.tile(w_in, R))  # (T, R N): a w_in u_t for each reservoir
    x, states = np.zeros(R * N), np.empty((len(u), R * N))
    for step in range(len(u)):
        x = A @ x + drive[step]  # x_t = A x_{t-1} + a w_in u_t
        states[step] = x
    t = np.arange(washout, len(u))
    targets = np.column_stack([u[t - k] for k in range(1, k_max + 1)])  # (n, k_max)
    r2 = np.empty((R, k_max))
    for r in range(R):
        Z = np.column_stack([np.ones(len(t)), states[t, r * N : (r + 1) * N]])  # (n, 1 + N)
        W_out = np.linalg.lstsq(Z[:n_train], targets[:n_train], rcond=None)[0]
        pred, true = Z[n_train:] @ W_out - (Z[n_train:] @ W_out).mean(0), targets[n_train:] - targets[n_train:].mean(0)
        r2[r] = (pred * true).sum(0) ** 2 / ((pred**2).sum(0) * (true**2).sum(0))
    return r2.sum(axis=1), r2


def linear_memory_function(A, b, k_max: int, first: int = 1) -> np.ndarray:
    r"""The exact memory function :math:`r^2_k` of the linear system :math:`x_t = A x_{t-1} + b\,u_t` driven by
    i.i.d. input: the best linear readout of :math:`u_{t-k}` from the stationary state.

    With :math:`x_t = \sum_j A^j b\, u_{t-j}`, :math:`\mathrm{Cov}(x_t) = \sigma^2 K^\top K` and
    :math:`\mathrm{Cov}(x_t, u_{t-k}) = \sigma^2 K^\top e_k`, where the rows of :math:`K` (J, N) are
    :math:`(A^j b)^\top`, :math:`j = 0, 1, \dots` (until they vanish). Hence
    :math:`r^2_k = e_k^\top K (K^\top K)^{+} K^\top e_k`, the leverage of row :math:`k` of :math:`K`: with
    :math:`K = U S V^\top`, :math:`r^2_k = \lVert U_{k,:} \rVert^2`. The leverages of all rows sum to the rank of
    :math:`K`, at most :math:`N`: Jaeger's bound :math:`\sum_{k \ge 0} r^2_k \le N`.

    Parameters
    ----------
    A : (N, N) array of spectral radius below 1;  b : (N,) array;  k_max : int;  first : int, the first delay

    Returns
    -------
    (k_max,) array, :math:`r^2_k` for :math:`k` = ``first``, ..., ``first + k_max - 1``
    """
    K = krylov_rows(A, b, first + k_max)
    U, s, _ = np.linalg.svd(K, full_matrices=False)
    rank = int(np.sum(s > 1e-10 * s[0]))
    return np.sum(U[first : first + k_max, :rank] ** 2, axis=1)


def krylov_rows(A, b, at_least: int) -> np.ndarray:
    """The rows (A^j b)^T, j = 0, 1, ..., until they fall below 1e-15 of ``b`` (and at least ``at_least``)."""
    rows, scale = [np.asarray(b, dtype=float)], float(np.linalg.norm(b))
    while len(rows) < at_least or np.linalg.norm(rows[-1]) > 1e-15 * scale:
        rows.append(A @ rows[-1])
    return np.array(rows)


def _leaky_system(W, w_in, rho: float, a: float) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) of x_t = A x_{t-1} + b u_t: A = (1 - a) I + a rho W, b = a w_in."""
    return (1.0 - a) * np.eye(len(w_in)) + a * rho * np.asarray(W), a * np.asarray(w_in, dtype=float)


def exact_memory(inputs, first: int = 1) -> np.ndarray:
    """The exact memory function (R, k_max) of a :func:`memory_curve` case, one row per radius."""
    return np.array(
        [
            linear_memory_function(
                *_leaky_system(inputs["W"], inputs["w_in"], rho, inputs["leak_rate"]), inputs["k_max"], first
            )
            for rho in inputs["radii"]
        ]
    )


CURVE_TOLERANCE = 0.12
"""How far each estimated r^2_k may lie from the exact memory function (500 training and 2000 test steps: the
reference's largest error was 0.060 in 300 draws of the cases and 0.081 in another 200)."""

CURVE_WASHOUT, CURVE_TRAIN, CURVE_TEST = 100, 500, 2000
"""The steps of a case: a washout, the training stretch and the test stretch."""

CURVE_SHORT_TEST = 500
"""The test steps of the short run the judge adds to each case: N + 2 training steps, 3N delays, Jaeger's bound."""


def _curve_inputs(rng: np.random.Generator, N: int, radii, leak_rate: float, k_max: int) -> dict[str, Any]:
    """A normalised W, w_in ~ U(-1, 1) and i.i.d. input (uniform or Gaussian) for a :func:`memory_curve` case."""
    W = rng.normal(0.0, 1.0, size=(N, N))
    W /= float(np.max(np.abs(np.linalg.eigvals(W))))  # spectral radius 1
    w_in = rng.uniform(-1.0, 1.0, size=N)
    T = CURVE_WASHOUT + CURVE_TRAIN + CURVE_TEST
    u = rng.uniform(-1.0, 1.0, size=T) if rng.random() < 0.5 else rng.normal(0.0, 1.0, size=T)
    radii = [float(r) for r in radii]
    return {"W": W, "w_in": w_in, "u": u, "radii": radii, "leak_rate": float(leak_rate), "k_max": int(k_max)} | {
        "washout": CURVE_WASHOUT,
        "n_train": CURVE_TRAIN,
    }


def _well_posed(inputs) -> bool:
    """Every radius forgets within the washout (|eigenvalues of A| <= 0.98) and its state is well conditioned."""
    for rho in inputs["radii"]:
        A, b = _leaky_system(inputs["W"], inputs["w_in"], rho, inputs["leak_rate"])
        if np.max(np.abs(np.linalg.eigvals(A))) > 0.98:
            return False
        s = np.linalg.svd(krylov_rows(A, b, 1), compute_uv=False)
        if s[-1] < 1e-4 * s[0]:
            return False
    return True


def _curve_case(rng: np.random.Generator) -> PlantedCase:
    """A random linear reservoir (N in 3..6) at three radii, its exact memory function planted."""
    while True:
        N = int(rng.integers(3, 7))
        radii = np.round([rng.uniform(0.3, 0.5), rng.uniform(0.55, 0.75), rng.uniform(0.8, 0.95)], 2)
        leak_rate = 1.0 if rng.random() < 0.4 else round(float(rng.uniform(0.5, 0.9)), 2)
        inputs = _curve_inputs(rng, N, radii, leak_rate, int(rng.integers(N, 2 * N + 1)))
        if _well_posed(inputs):
            return PlantedCase(inputs, planted=exact_memory(inputs))


def _example_curve() -> PlantedCase:
    """The notebook's reservoir: N = 4 (seed 5), radii 0, 0.5 and 0.9, a = 0.6, k_max = 8, uniform input."""
    rng = np.random.default_rng(5)
    W = rng.normal(0.0, 1.0, size=(4, 4))
    W /= float(np.max(np.abs(np.linalg.eigvals(W))))
    w_in = rng.uniform(-1.0, 1.0, size=4)
    u = rng.uniform(-1.0, 1.0, size=CURVE_WASHOUT + CURVE_TRAIN + CURVE_TEST)
    inputs = {"W": W, "w_in": w_in, "u": u, "radii": [0.0, 0.5, 0.9], "leak_rate": 0.6, "k_max": 8}
    inputs |= {"washout": CURVE_WASHOUT, "n_train": CURVE_TRAIN}
    return PlantedCase(inputs, planted=exact_memory(inputs), label="the worked example")


EXAMPLE_CURVE = _example_curve()
"""The notebook's worked example: the first radius is 0 (W = 0), where r^2_k = (1 - (1 - a)^2) (1 - a)^(2k)."""


def short_run(inputs) -> PlantedCase:
    """The same reservoir with N + 2 training steps, 3N delays and :data:`CURVE_SHORT_TEST` test steps."""
    N = len(inputs["w_in"])
    u = inputs["u"][: inputs["washout"] + N + 2 + CURVE_SHORT_TEST]
    return PlantedCase({**inputs, "u": u, "k_max": 3 * N, "n_train": N + 2}, label="the short run")


def _curve_judge(run, case: PlantedCase, got) -> tuple[str, str | None] | None:
    """r^2 in [0, 1], mc its row sums, every r^2_k near the exact memory function, mc <= N on a short run."""
    problem = _curve_form(case.inputs, got)
    if problem is not None:
        return problem
    r2 = np.asarray(got[1], dtype=float)
    error = np.abs(r2 - case.planted)
    if error.max() > CURVE_TOLERANCE:
        r, k = np.unravel_index(int(np.argmax(error)), error.shape)
        return (
            f"r^2_k at the radius in position {r + 1} and delay k = {k + 1} lies {error[r, k]:.2f} from the exact "
            f"memory function of this linear reservoir (the tolerance is {CURVE_TOLERANCE:g})",
            _curve_hint(case, r2),
        )
    short = short_run(case.inputs)
    again, error_again = run(short)
    if error_again is not None:
        return "it raised an error on the same reservoir with N + 2 training steps and 3N delays", None
    problem = _curve_form(short.inputs, again)
    if problem is None and np.max(again[0]) > len(short.inputs["w_in"]):
        problem = (
            "a memory capacity exceeds N, the number of units, which no readout of N states can",
            (
                "score each readout on the steps after the first n_train (the test stretch): on the steps it was "
                "fitted on, a readout with N + 1 weights and few training steps fits almost any target"
            ),
        )
    return None if problem is None else (f"on the same reservoir with N + 2 training steps: {problem[0]}", problem[1])


def _curve_form(inputs, got) -> tuple[str, str | None] | None:
    """What holds for any run: the shapes of (mc, r2), r^2 in [0, 1] and mc the row sums of r2."""
    mc, r2 = (np.asarray(v, dtype=float) for v in got)
    if r2.shape != (len(inputs["radii"]), inputs["k_max"]) or mc.shape != r2.shape[:1]:
        return "mc should have shape (len(radii),) and r2 shape (len(radii), k_max)", None
    if not (np.all(np.isfinite(r2)) and r2.min() >= 0.0 and r2.max() <= 1.0 + 1e-9):
        return "some r^2_k lies outside [0, 1], where every squared correlation lies", (
            "r^2_k is the SQUARED Pearson correlation of the predictions with the targets on the test steps, not "
            "1 - SSE/SST (which can be negative out of sample) and not the correlation itself"
        )
    if not same_values(mc, r2.sum(axis=1), rtol=1e-9, atol=1e-9):
        return "mc is not the sum of each row of r2", "mc[i] = r2[i].sum(): the capacity at the i-th radius"
    return None


def _curve_hint(case: PlantedCase, r2: np.ndarray) -> str | None:
    """Advice for a memory function that equals the exact one of a usual mistake."""
    inputs, a = case.inputs, case.inputs["leak_rate"]
    candidates = [
        (
            "the delays are k = 1, ..., k_max: the target of delay k is u[t - k], not u[t - k + 1]",
            exact_memory(inputs, first=0),
        ),
        ("square the correlation: r^2_k, not the correlation itself", np.sqrt(case.planted)),
    ]
    if a < 1.0:
        candidates.append(
            (
                "the leak rate a weights the NEW term: x_t = (1 - a) x_{t-1} + a (rho W x_{t-1} + w_in u_t)",
                exact_memory({**inputs, "leak_rate": 1.0 - a}),
            )
        )
    near = lambda x, y: bool(np.abs(x - y).max() <= CURVE_TOLERANCE)  # noqa: E731
    return matching_advice(candidates, r2, case.planted, same=near)


MEMORY_CURVE = PropertyCheck(
    name="memory_curve",
    reference=memory_curve,
    random_case=_curve_case,
    fixed_cases=(EXAMPLE_CURVE,),
    n_visible=1,
    n_hidden=2,
    hint="for each radius rho, run x = (1 - a) * x + a * (rho * W @ x + w_in * u[t]) from x = 0 over all of u; for "
    "the steps t = washout, ..., T - 1 take features [1, x_t] and targets u[t - k], k = 1, ..., k_max; fit by "
    "np.linalg.lstsq on the first n_train of them and score r^2_k = np.corrcoef(pred, target)[0, 1] ** 2 on the "
    "rest; return (mc, r2), r2 of shape (len(radii), k_max) and mc = r2.sum(axis=1)",
    judge=_curve_judge,
)


CHECKS = MappingProxyType(
    {
        check.name: check
        for check in (LSTM_STEP, GRU_STEP, RESERVOIR_UPDATE, RIDGE_READOUT, MEMORY_CAPACITY, MEMORY_CURVE)
    }
)
"""The exercise name -> its :class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
