"""The autograder's checks of Chapter 2 (the neural language model): correct answers pass,
typical mistakes fail with a message that points at them, hidden cases keep their inputs secret."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from seqlearn.grading import REFUSAL, CheckFailure
from seqlearn.grading import nlm as grading_nlm
from seqlearn.grading.nlm import CHECKS, EXAMPLE_STREAM
from seqlearn.nlm import basics

BOS = 1

# ----------------------------------------------------------------------------- independent implementations


def my_context_windows(stream, n):
    contexts, targets, start = [], [], 0
    for t, token in enumerate(stream):
        if token == BOS:
            start = t
            continue
        contexts.append([stream[j] if j >= start else BOS for j in range(t - n + 1, t)])
        targets.append(token)
    return np.array(contexts, dtype=np.int64).reshape(len(targets), n - 1), np.array(targets)


def my_nlm_logits(contexts, C, H, d, U, b, W=None):
    x = np.stack([np.concatenate([C[w] for w in row]) for row in contexts])
    y = b + np.tanh(d + x @ H.T) @ U.T
    return y if W is None else y + x @ W.T


def _log_softmax_rows(logits):
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


def my_masked_cross_entropy(logits, targets, mask):
    logits = np.asarray(logits, dtype=float)
    flat = logits.reshape(-1, logits.shape[-1])
    t, m = np.asarray(targets).ravel(), np.asarray(mask, dtype=float).ravel()
    if m.sum() == 0:
        raise ValueError("no real token")
    nll = -_log_softmax_rows(flat)[np.arange(len(t)), t]
    return float((nll * m).sum() / m.sum())


def my_perplexity_from_loss(mean_nll):
    if not mean_nll >= 0:
        raise ValueError("a loss is >= 0")
    return float(np.exp(mean_nll))


def _mean_log_likelihood(lam, p_a, p_b):
    with np.errstate(divide="ignore"):
        return np.mean(np.log(lam * p_a + (1 - lam) * p_b))


def my_best_interpolation_weight(p_a, p_b):
    """Golden-section search of the concave mean log-likelihood, ends compared explicitly."""
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    if p_a.shape != p_b.shape:
        raise ValueError("one probability per token in each array")
    lo, hi, ratio = 0.0, 1.0, (math.sqrt(5) - 1) / 2
    while hi - lo > 1e-11:
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if _mean_log_likelihood(a, p_a, p_b) < _mean_log_likelihood(b, p_a, p_b):
            lo = a
        else:
            hi = b
    return max([0.0, (lo + hi) / 2, 1.0], key=lambda lam: _mean_log_likelihood(lam, p_a, p_b))


MINE = {
    "context_windows": my_context_windows,
    "nlm_logits": my_nlm_logits,
    "masked_cross_entropy": my_masked_cross_entropy,
    "perplexity_from_loss": my_perplexity_from_loss,
    "best_interpolation_weight": my_best_interpolation_weight,
}


def _checker(name):
    return getattr(grading_nlm, f"check_{name}")


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


def test_every_exercise_has_a_checker():
    assert sorted(CHECKS) == sorted(MINE) == sorted(basics.__all__) == sorted(
        n.removeprefix("check_") for n in grading_nlm.__all__ if n.startswith("check_")
    )
    assert all(check.reference is getattr(basics, name) for name, check in CHECKS.items())


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("wrong", [None, [1, 2], "text", {"a": 1}, (1.0,), math.nan, -1.0, 0, np.zeros(3)])
def test_wrong_results_of_any_kind_fail_with_a_message(name, wrong):
    message = _failure(name, lambda *args, **kwargs: wrong)
    assert f"{name} failed visible case 1" in message
    assert "input:" in message and "problem:" in message and "hint:" in message


@pytest.mark.parametrize("hidden", [False, True])
def test_delegating_to_the_reference_scores_zero_and_says_why(hidden):
    message = _failure("nlm_logits", lambda *args, **kwargs: basics.nlm_logits(*args, **kwargs), hidden=hidden)
    assert message.startswith("nlm_logits scores zero:")
    assert REFUSAL in message and "seqlearn.nlm.basics.nlm_logits" in message
    assert REFUSAL in _failure("best_interpolation_weight", basics.best_interpolation_weight, hidden=hidden)


def test_the_student_cannot_alter_the_cases():
    def mutating(contexts, C, H, d, U, b, W=None):
        result = my_nlm_logits(contexts, C, H, d, U, b, W)
        C[:] = 0.0
        contexts[:] = 0
        return result

    grading_nlm.check_nlm_logits(mutating)
    assert CHECKS["nlm_logits"].cases()[0].inputs["C"].any()


# ----------------------------------------------------------------------------- the random inputs


def _draws(name, n=300):
    return [CHECKS[name].random_case(rng) for rng in np.random.default_rng(0).spawn(n)]


def test_random_streams_are_encoded_corpora():
    for case in _draws("context_windows"):
        stream, n = case.inputs["stream"], case.inputs["n"]
        assert stream.dtype == np.int64 and stream[0] == BOS and stream[-1] == 2
        assert np.all(np.diff(np.flatnonzero(stream == BOS)) >= 2)  # <s> ... </s> per sentence
        assert 1 <= n <= 5
    streams = [c.inputs["stream"] for c in _draws("context_windows")]
    assert np.mean([np.sum(s == BOS) > 1 for s in streams]) > 0.6, "windows must be able to cross sentences"


def test_random_models_cover_both_architectures():
    cases = _draws("nlm_logits")
    with_w = [c for c in cases if "W" in c.inputs]
    assert 0.3 < len(with_w) / len(cases) < 0.8
    assert all(c.keywords == ("W",) for c in with_w)
    assert {c.inputs["contexts"].shape[1] for c in cases} == {1, 2, 3}


def test_random_losses_have_padding_and_overflowing_logits():
    cases = _draws("masked_cross_entropy")
    masks = [np.asarray(c.inputs["mask"], dtype=bool) for c in cases]
    assert all(m.any() for m in masks)
    assert np.mean([not m.all() for m in masks]) > 0.5
    assert {c.inputs["logits"].ndim for c in cases} == {2, 3}
    assert {np.asarray(c.inputs["mask"]).dtype.kind for c in cases} == {"b", "i", "f"}
    with np.errstate(over="ignore"):
        overflowing = [c for c in cases if not np.isfinite(np.exp(c.inputs["logits"])).all()]
    assert len(overflowing) > 0.1 * len(cases)


def test_random_mixtures_have_interior_and_boundary_optima():
    weights = np.array([basics.best_interpolation_weight(**c.inputs) for c in _draws("best_interpolation_weight")])
    for share in (np.mean(weights == 0.0), np.mean(weights == 1.0), np.mean((weights > 0) & (weights < 1))):
        assert 0.15 < share < 0.7


def test_the_worked_examples_of_the_notebook():
    contexts, targets = basics.context_windows(EXAMPLE_STREAM, 3)
    assert contexts.tolist() == [[1, 1], [1, 3], [3, 4], [4, 5], [1, 1], [1, 3], [3, 6]]
    assert targets.tolist() == [3, 4, 5, 2, 3, 6, 2]
    logits = CHECKS["nlm_logits"].cases()[0].call(basics.nlm_logits)
    assert np.allclose(logits, [[np.tanh(1.0), np.tanh(-0.5), np.tanh(1.0) - np.tanh(-0.5) - 1.0]])
    with_w = CHECKS["nlm_logits"].cases()[1].call(basics.nlm_logits)
    assert np.allclose(with_w - logits, [[0.0, 1.0, 1.0]])
    loss = CHECKS["masked_cross_entropy"].cases()[0].call(basics.masked_cross_entropy)
    assert loss == pytest.approx((math.log(1 + math.exp(-1) + math.exp(-2)) + math.log(3)) / 2)
    assert CHECKS["perplexity_from_loss"].cases()[0].call(basics.perplexity_from_loss) == pytest.approx(100.0)
    assert CHECKS["best_interpolation_weight"].cases()[0].call(basics.best_interpolation_weight) == pytest.approx(7 / 12)


# ----------------------------------------------------------------------------- messages and targeted hints


def test_a_visible_failure_names_input_expected_got_and_hint():
    def no_bias(contexts, C, H, d, U, b, W=None):
        return my_nlm_logits(contexts, C, H, d, U, np.zeros_like(b), W)

    message = _failure("nlm_logits", no_bias)
    assert "nlm_logits failed visible case 1 of 7 (the worked example)." in message
    assert "input: contexts=array([[0, 2]]), C=array([[1., 0.]," in message
    assert "the result[0, 2] has the wrong value: expected 0.2237" in message and "got 1.2237" in message
    assert "hint: add the output bias b" in message
    assert "hint: x = C[contexts].reshape(B, -1)" in message


def _windows_across(stream, n):
    padded = [BOS] * (n - 1) + list(stream)
    pairs = [(padded[t : t + n - 1], w) for t, w in enumerate(stream) if w != BOS]
    return np.array([c for c, _ in pairs], dtype=np.int64).reshape(len(pairs), n - 1), np.array([w for _, w in pairs])


def _windows(stream, n, fill=BOS, skip_incomplete=False, bos_targets=False):
    """Context windows, optionally with a usual mistake (another filler, skipped or extra targets)."""
    contexts, targets, start = [], [], 0
    for t, token in enumerate(stream):
        if token == BOS:
            start = t
            if not (bos_targets and t > 0):
                continue
        if skip_incomplete and t - n + 1 < start:
            continue
        contexts.append([stream[j] if j >= start else fill for j in range(t - n + 1, t)])
        targets.append(token)
    return np.array(contexts, dtype=np.int64).reshape(len(targets), n - 1), np.array(targets)


def _windows_float_when_empty(stream, n):
    contexts, targets = my_context_windows(stream, n)
    return (np.array([[] for _ in targets]) if n == 1 else contexts), targets


CONTEXT_WINDOWS_MISTAKES = {
    "crossing sentence boundaries": (_windows_across, "your windows cross sentence boundaries"),
    "no <s> padding": (lambda s, n: _windows(s, n, skip_incomplete=True), "even the first word of a sentence"),
    "padding with <unk>": (lambda s, n: _windows(s, n, fill=0), "with the id of <s>, which is 1"),
    "newest first": (lambda s, n: (my_context_windows(s, n)[0][:, ::-1], my_context_windows(s, n)[1]), "oldest first"),
    "<s> as a target": (lambda s, n: _windows(s, n, bos_targets=True), "<s> is never a target"),
    "float empty contexts": (_windows_float_when_empty, "empty integer array of shape (T, 0)"),
    "swapped": (lambda s, n: my_context_windows(s, n)[::-1], "in the order (contexts, targets)"),
    "target inside the context": (
        lambda s, n: (np.column_stack(my_context_windows(s, n)), my_context_windows(s, n)[1]),
        "not the target itself",
    ),
}


@pytest.mark.parametrize("mistake", sorted(CONTEXT_WINDOWS_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_context_windows_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = CONTEXT_WINDOWS_MISTAKES[mistake]
    assert hint in _failure("context_windows", wrong, hidden=hidden)


def _nlm_mistake(change):
    def wrong(contexts, C, H, d, U, b, W=None):
        return change(np.asarray(contexts), C, H, d, U, b, W)

    return wrong


def _direct(x, W):
    return 0.0 if W is None else x @ W.T


def _x(contexts, C):
    return C[contexts].reshape(len(contexts), -1)


NLM_MISTAKES = {
    "no tanh": (
        lambda c, C, H, d, U, b, W: b + _direct(_x(c, C), W) + (d + _x(c, C) @ H.T) @ U.T,
        "apply tanh to the hidden pre-activation",
    ),
    "no direct connections": (lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, d, U, b), "add the direct connections W x"),
    "no hidden bias": (lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, 0 * d, U, b, W), "add the hidden bias d inside"),
    "hidden bias outside tanh": (
        lambda c, C, H, d, U, b, W: b + _direct(_x(c, C), W) + (np.tanh(_x(c, C) @ H.T) + d) @ U.T,
        "d belongs inside the tanh",
    ),
    "newest word first": (lambda c, C, H, d, U, b, W: my_nlm_logits(c[:, ::-1], C, H, d, U, b, W), "oldest word first"),
    "softmax": (
        lambda c, C, H, d, U, b, W: np.exp(_log_softmax_rows(my_nlm_logits(c, C, H, d, U, b, W))),
        "before the softmax",
    ),
    "transposed": (lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, d, U, b, W).T, "one row per context"),
}


@pytest.mark.parametrize("mistake", sorted(NLM_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_nlm_logits_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    change, hint = NLM_MISTAKES[mistake]
    assert hint in _failure("nlm_logits", _nlm_mistake(change), hidden=hidden)


def test_nlm_logits_without_direct_connections_fails_on_the_second_example():
    message = _failure("nlm_logits", lambda c, C, H, d, U, b, W=None: my_nlm_logits(c, C, H, d, U, b))
    assert "visible case 2 of 7 (the worked example with direct connections)" in message
    message = _failure("nlm_logits", lambda c, C, H, d, U, b: my_nlm_logits(c, C, H, d, U, b))
    assert "it raised TypeError" in message, "W must be accepted as a keyword argument"


def _naive_loss(logits, targets, mask):
    logits, mask = np.asarray(logits, dtype=float), np.asarray(mask, dtype=float)
    if mask.sum() == 0:
        raise ValueError("no token")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
        nll = -np.log(np.take_along_axis(probs, np.asarray(targets)[..., None], axis=-1)[..., 0])
    return float((nll * mask).sum() / mask.sum())


def _log_of_probability_loss(logits, targets, mask):
    """Shifted (no overflow), but the log is taken of a probability, which underflows to 0 for large logits."""
    logits, mask = np.asarray(logits, dtype=float), np.asarray(mask, dtype=float)
    if mask.sum() == 0:
        raise ValueError("no token")
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = np.take_along_axis(shifted / shifted.sum(axis=-1, keepdims=True), np.asarray(targets)[..., None], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float((-np.log(probs[..., 0]) * mask).sum() / mask.sum())


def _token_losses(logits, targets):
    logits = np.asarray(logits, dtype=float)
    flat = _log_softmax_rows(logits.reshape(-1, logits.shape[-1]))
    return -flat[np.arange(flat.shape[0]), np.asarray(targets).ravel()].reshape(np.shape(targets))


LOSS_MISTAKES = {
    "naive softmax": (_naive_loss, "np.exp overflows"),
    "padding in the denominator": (
        lambda y, t, m: float((_token_losses(y, t) * m).sum() / np.size(m)),
        "divide by the number of real tokens, mask.sum()",
    ),
    "no mask": (lambda y, t, m: float(_token_losses(y, t).mean()), "average over the real tokens only"),
    "sum": (lambda y, t, m: float((_token_losses(y, t) * m).sum()), "not the sum"),
    "log of a probability": (_log_of_probability_loss, "a softmax probability can underflow to 0"),
    "sign": (lambda y, t, m: -my_masked_cross_entropy(y, t, m), "mind the sign"),
}


@pytest.mark.parametrize("mistake", sorted(LOSS_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_masked_cross_entropy_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = LOSS_MISTAKES[mistake]
    assert hint in _failure("masked_cross_entropy", wrong, hidden=hidden)


def test_a_naive_softmax_fails_the_large_logits_case():
    message = _failure("masked_cross_entropy", _naive_loss)
    assert "visible case 3 of 8 (large logits (a naive exp overflows))" in message
    assert "expected 0.9309974" in message


def test_the_loss_must_refuse_a_mask_without_tokens():
    def no_check(logits, targets, mask):
        with np.errstate(invalid="ignore"):
            return float((_token_losses(logits, targets) * mask).sum() / np.sum(mask))

    message = _failure("masked_cross_entropy", no_check)
    assert "visible case 4 of 8 (only padding)" in message
    assert "it should raise ValueError here" in message and "but it returned a float" in message


PERPLEXITY_MISTAKES = {
    "bits": (lambda loss: 2.0**loss, "2^L is for a loss in bits"),
    "decimal": (lambda loss: 10.0**loss, "not 10^L"),
    "sign": (lambda loss: math.exp(-loss), "mind the sign"),
    "the loss": (lambda loss: loss, "not the loss itself"),
}


@pytest.mark.parametrize("mistake", sorted(PERPLEXITY_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_perplexity_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = PERPLEXITY_MISTAKES[mistake]
    assert hint in _failure("perplexity_from_loss", wrong, hidden=hidden)


def test_perplexity_must_refuse_impossible_losses():
    assert "(a negative loss)" in _failure("perplexity_from_loss", math.exp)
    message = _failure("perplexity_from_loss", lambda loss: math.exp(loss) if loss >= 0 else math.nan + loss)
    assert "(a negative loss)" in message and "it should raise ValueError" in message

    def checks_sign_only(loss):
        if loss < 0:
            raise ValueError("negative")
        return math.exp(loss)

    assert "(a NaN loss)" in _failure("perplexity_from_loss", checks_sign_only)


def _bisect(p_a, p_b, lo, hi, steps=80):
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    if p_a.shape != p_b.shape:
        raise ValueError("lengths differ")
    for _ in range(steps):
        mid = (lo + hi) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.mean((p_a - p_b) / (mid * p_a + (1 - mid) * p_b))
        lo, hi = (mid, hi) if slope > 0 else (lo, mid)
    return (lo + hi) / 2


def _grid_search(p_a, p_b):
    grid = np.linspace(0.0, 1.0, 1001)
    return float(grid[np.argmax([_mean_log_likelihood(lam, np.asarray(p_a), np.asarray(p_b)) for lam in grid])])


INTERPOLATION_MISTAKES = {
    "unconstrained": (lambda p_a, p_b: _bisect(p_a, p_b, -1.0, 2.0), "must lie in [0, 1]"),
    "weights swapped": (lambda p_a, p_b: 1.0 - my_best_interpolation_weight(p_a, p_b), "lambda weights the first model"),
    "mean probability": (
        lambda p_a, p_b: float(np.mean(p_a) > np.mean(p_b)),
        "maximise the mean LOG-probability",
    ),
    "ends excluded": (lambda p_a, p_b: _bisect(p_a, p_b, 0.05, 0.95), "can lie at an end of [0, 1]"),
    "coarse grid": (_grid_search, "not accurate enough"),
    "NaN": (lambda p_a, p_b: math.nan, "NaN usually comes from 0/0"),
}


@pytest.mark.parametrize("mistake", sorted(INTERPOLATION_MISTAKES))
@pytest.mark.parametrize("hidden", [False, True])
def test_interpolation_mistakes_get_targeted_hints(mistake, hidden, replayable_hidden_draws):
    wrong, hint = INTERPOLATION_MISTAKES[mistake]
    assert hint in _failure("best_interpolation_weight", wrong, hidden=hidden)


def test_interpolation_must_refuse_arrays_of_different_lengths():
    def zip_shortest(p_a, p_b):
        k = min(len(p_a), len(p_b))
        return my_best_interpolation_weight(p_a[:k], p_b[:k])

    message = _failure("best_interpolation_weight", zip_shortest)
    assert "(arrays of different lengths)" in message and "it should raise ValueError here" in message


def test_a_bisection_that_only_checks_the_slope_passes():
    grading_nlm.check_best_interpolation_weight(lambda p_a, p_b: _bisect(p_a, p_b, 0.0, 1.0))
    grading_nlm.check_best_interpolation_weight(lambda p_a, p_b: _bisect(p_a, p_b, 0.0, 1.0), hidden=True)


# ----------------------------------------------------------------------------- hidden cases keep their inputs


@pytest.mark.parametrize("name", sorted(MINE))
def test_hidden_failures_withhold_inputs(name):
    def off(*args, **kwargs):
        result = MINE[name](*args, **kwargs)
        if isinstance(result, tuple):
            return result[0] + 1, result[1]
        return result + 1

    message = _failure(name, off, hidden=True)
    assert re.search(rf"^{name} failed hidden case \d+ of 30\.$", message, re.M)
    assert "input: withheld" in message
    assert "array(" not in message and "=" not in message.split("problem:")[0]


def test_hidden_failures_swallow_prints_and_withhold_exception_messages(capsys):
    def leaky(contexts, C, H, d, U, b, W=None):
        marker = "HIDDEN-" + "INPUT"
        print(marker, C)
        raise KeyError(marker + repr(C))

    message = _failure("nlm_logits", leaky, hidden=True)
    assert "raised KeyError (line" in message and "its message is withheld" in message
    assert "HIDDEN-INPUT" not in message
    assert "HIDDEN-INPUT" not in capsys.readouterr().out


def test_hidden_hints_are_fixed_text():
    """Targeted hints are chosen from fixed strings: the same mistake gets the same words on any input."""
    hints = set()
    for _ in range(3):
        message = _failure("context_windows", _windows_across, hidden=True)
        hints.add(message.split("hint:")[1])
    assert len(hints) == 1
