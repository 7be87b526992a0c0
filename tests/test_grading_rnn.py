"""The autograder's checks of Chapter 3 (the Elman RNN and BPTT): correct answers pass,
typical mistakes fail with a message that points at them, hidden cases keep their inputs secret."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import seqlearn.rnn
from seqlearn.grading import REFUSAL, CheckFailure, compare
from seqlearn.grading import rnn as grading_rnn
from seqlearn.grading.rnn import CHECKS, EXAMPLE_NETWORK, EXAMPLE_TARGETS

# ----------------------------------------------------------------------------- independent implementations

GAMMA = {"tanh": 1.0, "sigmoid": 0.25, "linear": 1.0}


def _act(z, phi):
    return {"tanh": np.tanh, "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)), "linear": lambda v: v * 1.0}[phi](z)


def _act_prime(z, phi):
    if phi == "tanh":
        return 1.0 / np.cosh(z) ** 2
    if phi == "sigmoid":
        return np.exp(-z) / (1.0 + np.exp(-z)) ** 2
    return np.ones_like(z)


def _forward(x, h0, W_hh, W_xh, b_h, phi):
    """Pre-activations z (T, H) and states (h_0, ..., h_T) as a list."""
    states, zs = [np.asarray(h0, dtype=float)], []
    for x_t in x:
        zs.append(np.einsum("ij,j->i", W_hh, states[-1]) + np.einsum("id,d->i", W_xh, x_t) + b_h)
        states.append(_act(zs[-1], phi))
    return np.array(zs).reshape(len(x), len(b_h)), states


def my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh"):
    _, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    h = np.array(states[1:]).reshape(len(x), len(b_h))
    return h, np.array([W_hy @ s + b_y for s in h]).reshape(len(x), len(b_y))


def my_bptt_gradients(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse"):
    """The double sum over Jacobian products, term by term."""
    z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    T, H = z.shape
    grads = {"h0": np.zeros(H), "W_hh": np.zeros((H, H)), "W_xh": np.zeros(W_xh.shape), "b_h": np.zeros(H),
             "W_hy": np.zeros(W_hy.shape), "b_y": np.zeros(len(b_y))}
    for t in range(1, T + 1):
        e_t = W_hy @ states[t] + b_y - targets[t - 1]
        grads["W_hy"] += np.outer(e_t, states[t])
        grads["b_y"] += e_t
        row = W_hy.T @ e_t  # dL_t/dh_k, from k = t down
        for k in range(t, 0, -1):
            d_k = row * _act_prime(z[k - 1], phi)  # dL_t/dz_k
            grads["W_hh"] += np.outer(d_k, states[k - 1])
            grads["W_xh"] += np.outer(d_k, x[k - 1])
            grads["b_h"] += d_k
            row = W_hh.T @ d_k
        grads["h0"] += row
    return grads


def my_product_norms_vs_lag(J, t=None, max_lag=None):
    t = len(J) if t is None else t
    max_lag = t if max_lag is None else max_lag
    norms = []
    for lag in range(max_lag + 1):
        P = np.eye(J.shape[1])
        for j in range(t, t - lag, -1):  # J_t J_{t-1} ... J_{t-l+1}, left to right
            P = P @ J[j - 1]
        norms.append(np.linalg.svd(P, compute_uv=False)[0])
    return np.array(norms)


def my_clip_grad_norm(grads, threshold):
    flat = np.concatenate([np.ravel(g) for g in (grads.values() if isinstance(grads, dict) else grads)])
    norm = float(math.sqrt(flat @ flat))
    scale = min(1.0, threshold / norm)
    if isinstance(grads, dict):
        return {k: np.asarray(g) * scale for k, g in grads.items()}, norm
    return [np.asarray(g) * scale for g in grads], norm


def my_gradient_regime(W_hh, phi="tanh"):
    value = GAMMA[phi] * np.sqrt(np.max(np.linalg.eigvalsh(W_hh.T @ W_hh)))
    if math.isclose(value, 1.0, rel_tol=1e-12):
        return "boundary"
    return "vanishing" if value < 1.0 else "may explode"


MINE = {
    "elman_forward": my_elman_forward,
    "bptt_gradients": my_bptt_gradients,
    "product_norms_vs_lag": my_product_norms_vs_lag,
    "clip_grad_norm": my_clip_grad_norm,
    "gradient_regime": my_gradient_regime,
}


def _checker(name):
    return getattr(grading_rnn, f"check_{name}")


def _failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailure) as info:
        _checker(name)(fn, hidden=hidden)
    return str(info.value)


# ----------------------------------------------------------------------------- the checkers as a whole


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("hidden", [False, True])
def test_an_independent_correct_implementation_passes(name, hidden, capsys):
    _checker(name)(MINE[name], hidden=hidden)
    assert f"{name}: all" in capsys.readouterr().out


def test_every_exercise_has_a_checker_graded_against_a_reference():
    assert sorted(CHECKS) == sorted(MINE) == sorted(
        n.removeprefix("check_") for n in grading_rnn.__all__ if n.startswith("check_")
    )
    for name, check in CHECKS.items():
        assert check.reference is getattr(seqlearn.rnn, name)
        assert check.reference.__seqlearn_reference__


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("wrong", [None, [1, 2], "text", {"a": 1}, (1.0,), math.nan, -1.0, 0, np.zeros(3)])
def test_wrong_results_of_any_kind_fail_with_a_message(name, wrong):
    message = _failure(name, lambda *args, **kwargs: wrong)
    assert f"{name} failed visible case 1" in message
    assert "input:" in message and "problem:" in message and "hint:" in message


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("hidden", [False, True])
def test_delegating_to_the_reference_scores_zero_and_says_why(name, hidden):
    reference = getattr(seqlearn.rnn, name)
    message = _failure(name, lambda *args, **kwargs: reference(*args, **kwargs), hidden=hidden)
    assert message.startswith(f"{name} scores zero:")
    assert REFUSAL in message and f".{name}" in message


def test_the_student_cannot_alter_the_cases():
    def mutating(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse"):
        result = my_bptt_gradients(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)
        W_hh[:] = 0.0
        targets[:] = 0.0
        return result

    grading_rnn.check_bptt_gradients(mutating)
    assert CHECKS["bptt_gradients"].cases()[0].inputs["W_hh"].any()


# ----------------------------------------------------------------------------- the random inputs


def _draws(name, n=300):
    return [CHECKS[name].random_case(rng) for rng in np.random.default_rng(0).spawn(n)]


@pytest.mark.parametrize("name", ["elman_forward", "bptt_gradients"])
def test_random_networks_are_single_sequences_with_every_nonlinearity(name):
    cases = _draws(name)
    assert {c.inputs.get("phi", "tanh") for c in cases} == {"tanh", "sigmoid", "linear"}
    assert any("phi" not in c.inputs for c in cases), "the default phi is exercised"
    for case in cases:
        x, W_hh, W_xh = case.inputs["x"], case.inputs["W_hh"], case.inputs["W_xh"]
        assert x.ndim == 2 and x.dtype == np.float64 and W_xh.shape == (W_hh.shape[0], x.shape[1])
        if name == "bptt_gradients":
            assert case.inputs["targets"].shape == (len(x), len(case.inputs["b_y"]))
            assert "loss" not in case.inputs
    assert max(len(c.inputs["x"]) for c in cases) >= 5, "long enough for the recursion to matter"


def test_random_jacobians_exercise_every_argument():
    cases = _draws("product_norms_vs_lag")
    assert any("t" in c.inputs for c in cases) and any("t" not in c.inputs for c in cases)
    assert any("max_lag" in c.inputs for c in cases) and any("max_lag" not in c.inputs for c in cases)
    for case in cases:
        J = case.inputs["J"]
        assert J.ndim == 3 and J.shape[1] == J.shape[2]
        assert 1 <= case.inputs.get("t", len(J)) <= len(J)
        assert 0 <= case.inputs.get("max_lag", 0) <= case.inputs.get("t", len(J))


def test_random_gradients_are_clipped_sometimes_and_come_as_lists_and_dicts():
    cases = _draws("clip_grad_norm")
    clipped = [my_clip_grad_norm(**c.inputs)[1] > c.inputs["threshold"] for c in cases]
    assert 0.3 < np.mean(clipped) < 0.8
    kinds = [isinstance(c.inputs["grads"], dict) for c in cases]
    assert 0.3 < np.mean(kinds) < 0.7


def test_random_recurrent_matrices_lie_on_both_sides_of_one_over_gamma():
    cases = _draws("gradient_regime", 600)
    regimes = [my_gradient_regime(**c.inputs) for c in cases]
    for regime in ("vanishing", "may explode", "boundary"):
        assert regimes.count(regime) > 0.05 * len(cases)
    by_phi = {phi: {r for c, r in zip(cases, regimes) if c.inputs["phi"] == phi} for phi in GAMMA}
    assert all(found == {"vanishing", "may explode", "boundary"} for found in by_phi.values())
    fooled = [
        c for c, r in zip(cases, regimes)
        if r == "may explode" and GAMMA[c.inputs["phi"]] * max(abs(np.linalg.eigvals(c.inputs["W_hh"]))) < 1
    ]
    assert len(fooled) > 0.2 * len(cases), "the spectral radius often gives the wrong answer"


def test_the_worked_examples_of_the_notebook():
    h, y = CHECKS["elman_forward"].cases()[0].call(seqlearn.rnn.elman_forward)
    assert np.allclose(h, [[math.tanh(1), -math.tanh(1)], [math.tanh(0.5 * math.tanh(1)), 0.0]])
    assert np.allclose(y, [[0.0], [math.tanh(0.5 * math.tanh(1))]])
    grads = CHECKS["bptt_gradients"].cases()[0].call(seqlearn.rnn.bptt_gradients)
    assert compare(my_bptt_gradients(EXAMPLE_NETWORK["x"], EXAMPLE_TARGETS,
                                     **{k: v for k, v in EXAMPLE_NETWORK.items() if k != "x"}), grads,
                   rtol=1e-12) is None
    assert np.allclose(grads["b_h"], [-0.8022, -0.7703], atol=1e-4)
    assert np.allclose(grads["h0"], [-0.1917, -0.0668], atol=1e-4)
    norms = [c.call(seqlearn.rnn.product_norms_vs_lag) for c in CHECKS["product_norms_vs_lag"].cases()[:3]]
    assert [n.tolist() for n in norms] == [[1.0, 1.0, 0.5], [1.0, 2.0], [1.0, 1.0]]
    clipped, norm = CHECKS["clip_grad_norm"].cases()[0].call(seqlearn.rnn.clip_grad_norm)
    assert norm == 5.0 and np.allclose(clipped["W"], [[0.6, 0.0]]) and np.allclose(clipped["b"], [0.8])
    regimes = [c.call(seqlearn.rnn.gradient_regime) for c in CHECKS["gradient_regime"].cases()[:5]]
    assert regimes == ["may explode", "vanishing", "boundary", "boundary", "may explode"]


# ----------------------------------------------------------------------------- messages and targeted hints


def _states(x, h0, W_hh, W_xh, b_h, phi):
    z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    return z, np.array(states)


ELMAN_MISTAKES = {
    "no nonlinearity": (
        lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y,
                                                                                "linear"),
        "apply the nonlinearity",
    ),
    "W_hh transposed": (
        lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(x, h0, W_hh.T, W_xh, b_h, W_hy, b_y,
                                                                                phi),
        "not W_hh.T @ h_{t-1}",
    ),
    "h_0 included": (
        lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": (
            _states(x, h0, W_hh, W_xh, b_h, phi)[1], my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)[1]
        ),
        "without the initial state h_0",
    ),
    "output from z": (
        lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": (
            my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)[0],
            _states(x, h0, W_hh, W_xh, b_h, phi)[0] @ W_hy.T + b_y,
        ),
        "y_t = W_hy h_t + b_y, not W_hy z_t + b_y",
    ),
    "swapped": (
        lambda *args, **kwargs: my_elman_forward(*args, **kwargs)[::-1],
        "in the order (h, y)",
    ),
    "always tanh": (
        lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y),
        "the nonlinearity named by phi",
    ),
}


@pytest.mark.parametrize("mistake", sorted(ELMAN_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_elman_forward_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = ELMAN_MISTAKES[mistake]
    assert hint in _failure("elman_forward", wrong, hidden=hidden)


def test_a_visible_failure_names_input_expected_got_and_hint():
    message = _failure("elman_forward", ELMAN_MISTAKES["no nonlinearity"][0])
    assert "elman_forward failed visible case 1 of 7 (the worked example)." in message
    assert "input: x=array([[1.],\n       [0.]]), h0=array([0., 0.])" in message
    assert "the result[0][0, 0] has the wrong value: expected 0.7615941559557649, got 1.0" in message
    assert "hint: apply the nonlinearity" in message and "hint: for t = 1..T" in message


def _bptt(**mistake):
    """BPTT by the backward recursion, with one usual mistake."""

    def wrong(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse"):
        z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
        h = np.array(states)
        e = h[1:] @ W_hy.T + b_y - targets
        dphi = np.ones_like(z) if mistake.get("no_dphi") else _act_prime(z, phi)
        back = W_hh if mistake.get("transposed") else W_hh.T
        deltas, carry = [], np.zeros(len(h0))
        for t in reversed(range(len(x))):
            deltas.insert(0, dphi[t] * (W_hy.T @ e[t] + (0.0 if mistake.get("one_step") else carry)))
            carry = back @ deltas[0]
        delta = np.array(deltas).reshape(z.shape)
        inputs = h[1:] if mistake.get("h_t") else h[:-1]
        dh0 = {"delta_1": delta[0], "zeros": np.zeros(len(h0)), "W_hh": W_hh @ delta[0]}.get(mistake.get("h0"), carry)
        return {"h0": dh0, "W_hh": delta.T @ inputs, "W_xh": delta.T @ x, "b_h": delta.sum(axis=0),
                "W_hy": e.T @ h[1:], "b_y": e.sum(axis=0)}

    return wrong


BPTT_MISTAKES = {
    "forgot phi'": (_bptt(no_dphi=True), "multiply by phi'(z_t)"),
    "one step only": (_bptt(one_step=True), "your backward pass stops after one step"),
    "W_hh instead of its transpose": (_bptt(transposed=True), "the error flows back through the transpose"),
    "h0 is delta_1": (_bptt(h0="delta_1"), "its gradient is W_hh^T delta_1"),
    "h0 is zero": (_bptt(h0="zeros"), "its gradient is W_hh^T delta_1"),
    "h0 without the transpose": (_bptt(h0="W_hh"), "its gradient is W_hh^T delta_1"),
    "h_t instead of h_{t-1}": (_bptt(h_t=True), "z_t depends on the PREVIOUS state"),
}


@pytest.mark.parametrize("mistake", sorted(BPTT_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_bptt_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = BPTT_MISTAKES[mistake]
    assert hint in _failure("bptt_gradients", wrong, hidden=hidden)


def test_the_correct_recursion_passes_and_only_the_squared_error_is_asked():
    _checker("bptt_gradients")(_bptt(), hidden=True)
    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("loss", "mse"))
        return my_bptt_gradients(*args, **kwargs)

    _checker("bptt_gradients")(recording)
    assert set(seen) == {"mse"}


def test_a_missing_gradient_is_named():
    def no_h0(*args, **kwargs):
        grads = my_bptt_gradients(*args, **kwargs)
        del grads["h0"]
        return grads

    message = _failure("bptt_gradients", no_h0)
    assert "lacks 1 key(s) it should have, e.g. 'h0'" in message
    assert "(keys withheld)" in _failure("bptt_gradients", no_h0, hidden=True)


def _norms_by_products(J, t, max_lag, product, norm=lambda P: np.linalg.norm(P, 2)):
    return np.array([norm(product(J, t, lag)) for lag in range(max_lag + 1)])


def _norms_mistake(product, norm=lambda P: np.linalg.norm(P, 2), drop_lag0=False):
    def wrong(J, t=None, max_lag=None):
        t = len(J) if t is None else t
        max_lag = t if max_lag is None else max_lag
        norms = _norms_by_products(J, t, max_lag, product, norm)
        return norms[1:] if drop_lag0 else norms

    return wrong


def _chain(matrices, H):
    P = np.eye(H)
    for M in matrices:
        P = P @ M
    return P


NORMS_MISTAKES = {
    "wrong order": (
        _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(t - lag + 1, t + 1)], J.shape[1])),
        "multiply in the right order",
    ),
    "lags from the start": (
        _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(lag, 0, -1)], J.shape[1])),
        "the lags count back from step t",
    ),
    "product of norms": (
        lambda J, t=None, max_lag=None: np.cumprod(
            [1.0] + [np.linalg.norm(J[j - 1], 2) for j in range(t or len(J), (t or len(J)) - (
                (t or len(J)) if max_lag is None else max_lag), -1)]
        ),
        "not the product of the norms",
    ),
    "Frobenius": (
        _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(t, t - lag, -1)], J.shape[1]),
                       norm=np.linalg.norm),
        "not the Frobenius norm",
    ),
    "no lag 0": (
        _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(t, t - lag, -1)], J.shape[1]),
                       drop_lag0=True),
        "include lag 0",
    ),
}


@pytest.mark.parametrize("mistake", sorted(NORMS_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_product_norms_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = NORMS_MISTAKES[mistake]
    assert hint in _failure("product_norms_vs_lag", wrong, hidden=hidden)


def test_the_wrong_order_fails_the_worked_example():
    message = _failure("product_norms_vs_lag", NORMS_MISTAKES["wrong order"][0])
    assert "visible case 1 of 7 (the worked example)" in message
    assert "the result[2] has the wrong value: expected 0.5, got 2.0" in message


def _per_array(grads, threshold):
    def clip(g):
        return np.asarray(g) * min(1.0, threshold / np.linalg.norm(g))

    norm = my_clip_grad_norm(grads, threshold)[1]
    if isinstance(grads, dict):
        return {k: clip(g) for k, g in grads.items()}, norm
    return [clip(g) for g in grads], norm


def _always(grads, threshold):
    _, norm = my_clip_grad_norm(grads, threshold)
    scale = threshold / norm
    if isinstance(grads, dict):
        return {k: np.asarray(g) * scale for k, g in grads.items()}, norm
    return [np.asarray(g) * scale for g in grads], norm


def _norm_after(grads, threshold):
    clipped, _ = my_clip_grad_norm(grads, threshold)
    return clipped, my_clip_grad_norm(clipped, 1e300)[1]


CLIP_MISTAKES = {
    "per array": (_per_array, "clip with the GLOBAL norm"),
    "clipping below the threshold": (_always, "clip only when the norm exceeds the threshold"),
    "norm after clipping": (_norm_after, "return the norm BEFORE clipping"),
    "norm not returned": (lambda grads, threshold: my_clip_grad_norm(grads, threshold)[0],
                          "return the pair (clipped, norm)"),
    "norm alone in a tuple": (lambda grads, threshold: (my_clip_grad_norm(grads, threshold)[0],),
                              "return the pair (clipped, norm)"),
    "squared norm": (lambda grads, threshold: (my_clip_grad_norm(grads, threshold)[0],
                                               my_clip_grad_norm(grads, threshold)[1] ** 2),
                     "square root of the sum of squares"),
    "always a list": (lambda grads, threshold: (list(my_clip_grad_norm(grads, threshold)[0].values())
                                                if isinstance(grads, dict) else my_clip_grad_norm(grads, threshold)[0],
                                                my_clip_grad_norm(grads, threshold)[1]),
                      "a dict with the same keys"),
}


@pytest.mark.parametrize("mistake", sorted(CLIP_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_clip_grad_norm_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = CLIP_MISTAKES[mistake]
    assert hint in _failure("clip_grad_norm", wrong, hidden=hidden)


def _regime(value):
    return "vanishing" if value < 1.0 - 1e-12 else "may explode" if value > 1.0 + 1e-12 else "boundary"


REGIME_MISTAKES = {
    "spectral radius": (
        lambda W_hh, phi="tanh": _regime(GAMMA[phi] * max(abs(np.linalg.eigvals(W_hh)))),
        "not the spectral radius",
    ),
    "no gamma for the sigmoid": (
        lambda W_hh, phi="tanh": _regime(np.linalg.norm(W_hh, 2)),
        "gamma = max |sigma'(z)| = 1/4",
    ),
    "Frobenius": (lambda W_hh, phi="tanh": _regime(GAMMA[phi] * np.linalg.norm(W_hh)), "not the Frobenius norm"),
    "no boundary": (
        lambda W_hh, phi="tanh": "vanishing" if GAMMA[phi] * np.linalg.norm(W_hh, 2) < 1 else "may explode",
        "is 'boundary'",
    ),
    "a bool": (lambda W_hh, phi="tanh": "yes", "one of the three strings"),
}


@pytest.mark.parametrize("mistake", sorted(REGIME_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_gradient_regime_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = REGIME_MISTAKES[mistake]
    assert hint in _failure("gradient_regime", wrong, hidden=hidden)


def test_the_spectral_radius_fails_the_worked_example():
    message = _failure("gradient_regime", REGIME_MISTAKES["spectral radius"][0])
    assert "visible case 1 of 9 (the worked example)" in message
    assert "expected 'may explode', got 'vanishing'" in message


# ----------------------------------------------------------------------------- hidden cases keep their inputs


@pytest.mark.parametrize("name", sorted(MINE))
def test_hidden_failures_withhold_inputs(name):
    def off(*args, **kwargs):
        result = MINE[name](*args, **kwargs)
        if isinstance(result, tuple):
            return result[0], result[1] + 1
        if isinstance(result, dict):
            return {k: v + 1 for k, v in result.items()}
        if isinstance(result, str):
            return result.upper()
        return result + 1

    message = _failure(name, off, hidden=True)
    assert re.search(rf"^{name} failed hidden case \d+ of 30\.$", message, re.M)
    assert "input: withheld" in message
    assert "array(" not in message and "=" not in message.split("problem:")[0]


def test_hidden_failures_swallow_prints_and_withhold_exception_messages(capsys):
    def leaky(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse"):
        marker = "HIDDEN-" + "INPUT"
        print(marker, W_hh)
        raise KeyError(marker + repr(W_hh))

    message = _failure("bptt_gradients", leaky, hidden=True)
    assert "raised KeyError (line" in message and "its message is withheld" in message
    assert "HIDDEN-INPUT" not in message
    assert "HIDDEN-INPUT" not in capsys.readouterr().out


def test_hidden_hints_are_fixed_text():
    hints = set()
    for _ in range(3):
        message = _failure("bptt_gradients", BPTT_MISTAKES["one step only"][0], hidden=True)
        hints.add(message.split("hint:")[1])
    assert len(hints) == 1
