"""The exercise checks of every chapter: correct answers pass, typical mistakes fail with a message that
points at them, hidden cases keep their inputs secret, and the random cases are valid and varied.

What every check shares is tested once over all of them; then what is particular to a chapter.
The answers graded here (independent implementations and usual mistakes) are in
``grading_answers.py``. A generator that crashes on an unlucky draw would fail a correct solution's
hidden test in some grading runs; drawing many cases here makes that visible.
"""

from __future__ import annotations

import ast
import copy
import importlib
import math
import re
import types
from pathlib import Path

import grading_answers as answers
import nbformat
import numpy as np
import pytest

import seqlearn.gated.reference
import seqlearn.learnability.reference
import seqlearn.lowrank.reference
import seqlearn.ngram.basics
import seqlearn.nlm.basics
import seqlearn.rnn
from seqlearn.grading import ASSIGNMENTS, REFUSAL, CheckFailure, compare
from seqlearn.grading.rnn import GRADIENT_KEYS

MODULE_OF = {name: module for module in ASSIGNMENTS.values() for name, c in module.CHECKS.items() if c.entry is None}
"""The exercise name -> the grading module of its chapter (the checks of one entry of a result are in ENTRIES)."""

ENTRIES = {key: c for module in ASSIGNMENTS.values() for key, c in module.CHECKS.items() if c.entry is not None}
"""``<exercise>_<entry>`` -> the check of one entry of the exercise's result (a part's share of the points)."""

CHECKS = {name: module.CHECKS[name] for name, module in MODULE_OF.items()}
NAMES = sorted(CHECKS)


def _reference_module(check) -> types.ModuleType:
    """The module that defines the reference a check grades against (its ``__module__``)."""
    return importlib.import_module(check.reference.__module__)


CHAPTER_REFERENCES = ("basics", "reference")
"""The names of a chapter's reference module (``seqlearn.ngram.basics``, ``seqlearn.gated.reference``): it holds
the references the chapter's exercises are graded against and nothing else (CONTRIBUTING.md)."""


def _ungraded_references(assignment: str) -> list[str]:
    """Public names of the assignment's chapter reference modules that no check of it grades.

    A reference may live elsewhere (a package's own module, or an experiment's in :mod:`seqlearn.grading`);
    where it lives in a chapter's reference module, that module's public names are all graded: one left over
    is an exercise that lost its check.
    """
    checks = ASSIGNMENTS[assignment].CHECKS.values()
    graded = {c.name for c in checks}
    modules = {_reference_module(c) for c in checks}
    return sorted(
        f"{m.__name__}.{name}"
        for m in modules
        if m.__name__.rsplit(".", 1)[-1] in CHAPTER_REFERENCES
        for name in m.__all__
        if name not in graded
    )


WRONG_RESULTS = [None, [1, 2], "text", {"a": 1}, {1: 2.0}, {("a",): "x"}, (1.0,), math.nan, -1.0, 0, np.zeros(3)]

MISTAKES = [
    (name, mistake, hidden)
    for name in sorted(answers.MISTAKES)
    for mistake in sorted(answers.MISTAKES[name])
    for hidden in (False, True)
    if not (hidden and (name, mistake) in answers.VISIBLE_HINT_ONLY)
]


def _checker(name):
    return getattr(MODULE_OF[name], f"check_{name}")


def _failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailure) as info:
        _checker(name)(fn, hidden=hidden)
    return str(info.value)


def _mistake(name, mistake):
    return answers.MISTAKES[name][mistake][0]


def _same_cases(a, b) -> bool:
    return [c.keywords for c in a] == [c.keywords for c in b] and compare(
        [dict(c.inputs) for c in a], [dict(c.inputs) for c in b], rtol=0, atol=0
    ) is None


def _draws(name, n=300):
    return [CHECKS[name].random_case(rng) for rng in np.random.default_rng(0).spawn(n)]


# ============================================================================= every check


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_every_exercise_has_a_checker_graded_against_a_reference(assignment):
    module = ASSIGNMENTS[assignment]
    checkers = sorted(n.removeprefix("check_") for n in module.__all__ if n.startswith("check_"))
    assert sorted(module.CHECKS) == checkers
    for name, check in module.CHECKS.items():
        assert check.key == name and check.name in module.CHECKS
        assert check.reference is getattr(_reference_module(check), check.name)
        assert check.reference.__seqlearn_reference__
    assert _ungraded_references(assignment) == []


def test_every_exercise_has_an_independent_answer_and_usual_mistakes():
    assert sorted(answers.CORRECT) == NAMES
    assert set(answers.MISTAKES) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_checker_is_a_named_documented_function_of_its_chapter(name):
    checker, check = _checker(name), CHECKS[name]
    assert checker.__name__ == f"check_{name}" and checker.__module__ == MODULE_OF[name].__name__
    assert checker.__defaults__ == (False,)
    doc = " ".join(checker.__doc__.split())
    assert f"Grade your ``{name}``" in doc and "hidden : bool" in doc and "CheckFailure" in doc
    assert " ".join(check.hint.split()) in doc


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("hidden", [False, True])
def test_an_independent_correct_implementation_passes(name, hidden, capsys):
    _checker(name)(answers.CORRECT[name], hidden=hidden)
    assert f"{name}: all" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("wrong", WRONG_RESULTS)
def test_wrong_results_of_any_kind_fail_with_a_message(name, wrong):
    message = _failure(name, lambda *args, **kwargs: wrong)
    assert f"{name} failed visible case 1" in message
    assert "input:" in message and "problem:" in message and "hint:" in message


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("hidden", [False, True])
def test_delegating_to_the_reference_scores_zero_and_says_why(name, hidden):
    reference = CHECKS[name].reference
    message = _failure(name, lambda *args, **kwargs: reference(*args, **kwargs), hidden=hidden)
    assert message.startswith(f"{name} scores zero:")
    assert REFUSAL in message and f"seqlearn's {reference.__module__}.{name}," in message
    assert REFUSAL in _failure(name, reference, hidden=hidden), "the reference itself, imported as the answer"


@pytest.mark.parametrize("name", NAMES)
def test_a_non_function_is_named(name):
    assert f"{name} should be a function, but it is None" in _failure(name, None)


@pytest.mark.parametrize("name", NAMES)
def test_not_implemented_yet(name):
    def blank(*args, **kwargs):
        raise NotImplementedError()

    message = _failure(name, blank)
    assert "it raised NotImplementedError: it is not implemented yet" in message
    assert "replace the `raise NotImplementedError()` line" in message


@pytest.mark.parametrize("name", NAMES)
def test_interrupts_propagate_without_the_students_message(name):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("SECRET")

    with pytest.raises(KeyboardInterrupt) as info:
        _checker(name)(interrupted, hidden=True)
    assert "SECRET" not in str(info.value)


def _spoil(x) -> None:
    """Zero an array, empty a list or a mapping, in place."""
    if isinstance(x, np.ndarray):
        x[...] = 0
    elif isinstance(x, (list, dict)):
        x.clear()


@pytest.mark.parametrize("name", NAMES)
def test_the_student_cannot_alter_the_cases(name):
    def mutating(*args, **kwargs):
        result = answers.CORRECT[name](*args, **kwargs)
        for arg in (*args, *kwargs.values()):
            _spoil(arg)
        return result

    before = copy.deepcopy(CHECKS[name].cases())
    try:
        _checker(name)(mutating)  # passes only if it had nothing it could change
        message = ""
    except CheckFailure as failure:
        message = str(failure)
    assert not message or ("changed its argument" in message and "in place" in message), message
    assert _same_cases(CHECKS[name].cases(), before)


def _off(result):
    """A result changed in a value (not in type or shape)."""
    if isinstance(result, tuple):
        return result[0], _off(result[1]), *result[2:]
    if isinstance(result, dict):
        return {k: v + 1 for k, v in result.items()}
    if isinstance(result, str):
        return result.upper()
    return result + 1


@pytest.mark.parametrize("name", NAMES)
def test_hidden_failures_withhold_inputs(name):
    message = _failure(name, lambda *args, **kwargs: _off(answers.CORRECT[name](*args, **kwargs)), hidden=True)
    assert re.search(rf"^{name} failed hidden case \d+ of {CHECKS[name].n_hidden}\.$", message, re.M)
    assert "input: withheld" in message
    assert "array(" not in message and "=" not in message.split("problem:")[0]


@pytest.mark.parametrize("name", NAMES)
def test_hidden_failures_swallow_prints_and_withhold_exception_messages(name, capsys):
    def leaky(*args, **kwargs):
        marker = "HIDDEN-" + "INPUT"  # built at run time: the student's line of code is shown
        print(marker, *args)
        raise KeyError(marker + repr(args))

    message = _failure(name, leaky, hidden=True)
    assert "raised KeyError (line" in message and "its message is withheld" in message
    assert "HIDDEN-INPUT" not in message
    assert "HIDDEN-INPUT" not in capsys.readouterr().out


@pytest.mark.parametrize(("name", "mistake", "hidden"), MISTAKES)
def test_usual_mistakes_get_targeted_hints(name, mistake, hidden, replayable_hidden_draws):
    wrong, hint = answers.MISTAKES[name][mistake]
    assert hint in _failure(name, wrong, hidden=hidden)


@pytest.mark.parametrize(
    ("name", "mistake"),
    [
        ("context_windows", "crossing sentence boundaries"),
        ("bptt_gradients", "one step only"),
        ("gru_step", "z weights the new state"),
    ],
)
def test_hidden_hints_are_fixed_text(name, mistake):
    """Targeted hints are chosen from fixed strings: the same mistake gets the same words on any input."""
    hints = {_failure(name, _mistake(name, mistake), hidden=True).split("hint:")[1] for _ in range(3)}
    assert len(hints) == 1


@pytest.mark.parametrize("name", NAMES)
def test_random_cases_are_drawn_and_accepted_by_the_reference(name):
    check = CHECKS[name]
    for seed in range(1500):
        case = check.random_case(np.random.default_rng(seed))
        _, error = check._expected(case)
        assert error is None or isinstance(error, (ValueError, TypeError))


@pytest.mark.parametrize("name", NAMES)
def test_visible_cases_start_with_the_worked_example_and_are_deterministic(name):
    check = CHECKS[name]
    first, second = check.cases(), check.cases()
    assert _same_cases(first, second)
    assert first[0].label == "the worked example"
    assert len(first) >= len(check.fixed_cases) + check.n_visible  # then a case per branch they miss
    assert check.branch is not None or len(first) == len(check.fixed_cases) + check.n_visible


@pytest.mark.parametrize("name", NAMES)
def test_hidden_draws_differ_between_runs_and_replay_with_entropy(name):
    check = CHECKS[name]
    assert not _same_cases(check.cases(hidden=True), check.cases(hidden=True))
    assert _same_cases(check.cases(hidden=True, entropy=7), check.cases(hidden=True, entropy=7))
    assert len(check.cases(hidden=True)) == check.n_hidden


# ============================================================================= Chapter 1: n-grams


def test_random_sentences_use_plain_python_strings():
    sentences = ASSIGNMENTS["01_ngram"].random_sentences(np.random.default_rng(0), max_sentences=20)
    assert all(type(w) is str for s in sentences for w in s)
    assert repr(sentences).count("np.") == 0


def test_a_visible_failure_names_input_expected_got_and_hint():
    def off_by_one(sentences, n):
        counts = answers.my_count_ngrams(sentences, n)
        counts[("<s>", "the")] = counts.get(("<s>", "the"), 0) + 1
        return counts

    message = _failure("count_ngrams", off_by_one)
    assert "visible case 1 of 7 (the worked example)" in message
    assert "input: sentences=[['the', 'cat', 'sat'], ['the', 'dog']], n=2" in message
    assert "the result[('<s>', 'the')] has the wrong value: expected 2, got 3" in message
    assert "hint: " in message


def test_hidden_failures_withhold_mapping_keys():
    def extra_key(sentences, n):
        counts = answers.my_count_ngrams(sentences, n)
        counts[("SECRET-KEY",)] = 1
        return counts

    message = _failure("count_ngrams", extra_key, hidden=True)
    assert "count_ngrams failed hidden case 1 of 30." in message
    assert "input: withheld" in message
    assert "(keys withheld)" in message
    assert "SECRET-KEY" not in message and "sentences=" not in message and "'<s>'" not in message.split("hint:")[0]


def test_a_students_exception_is_reported_with_their_line():
    def crashes(log_probs):
        total = sum(log_probs)
        return math.exp(-total / (len(log_probs) - len(log_probs)))

    message = _failure("perplexity", crashes)
    assert "it raised ZeroDivisionError: float division by zero" in message
    assert "of crashes: return math.exp(-total / (len(log_probs) - len(log_probs)))" in message


def test_expected_errors_must_be_raised():
    def no_check(log_probs):
        return math.exp(-sum(log_probs) / max(len(log_probs), 1))

    message = _failure("perplexity", no_check)
    assert "visible case 3 of 7 (no tokens)" in message
    assert "it should raise ValueError here (perplexity of zero tokens is undefined" in message
    assert "but it returned a float" in message

    def wrong_error(count_of_counts):
        if count_of_counts.get(2, 0) == 0:
            raise ZeroDivisionError("n2")
        return answers.my_mkn_discounts(count_of_counts)

    message = _failure("mkn_discounts", wrong_error)
    assert "it should raise ValueError here, but it raised ZeroDivisionError: n2" in message


# ============================================================================= Chapter 2: the neural LM

BOS = answers.BOS


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
    basics = seqlearn.nlm.basics
    weights = np.array([basics.best_interpolation_weight(**c.inputs) for c in _draws("best_interpolation_weight")])
    for share in (np.mean(weights == 0.0), np.mean(weights == 1.0), np.mean((weights > 0) & (weights < 1))):
        assert 0.15 < share < 0.7


def test_the_worked_examples_of_chapter_2():
    basics = seqlearn.nlm.basics
    contexts, targets = basics.context_windows(ASSIGNMENTS["02_neural_lm"].EXAMPLE_STREAM, 3)
    assert contexts.tolist() == [[1, 1], [1, 3], [3, 4], [4, 5], [1, 1], [1, 3], [3, 6]]
    assert targets.tolist() == [3, 4, 5, 2, 3, 6, 2]
    logits = CHECKS["nlm_logits"].cases()[0].call(basics.nlm_logits)
    assert np.allclose(logits, [[np.tanh(1.0), np.tanh(-0.5), np.tanh(1.0) - np.tanh(-0.5) - 1.0]])
    with_w = CHECKS["nlm_logits"].cases()[1].call(basics.nlm_logits)
    assert np.allclose(with_w - logits, [[0.0, 1.0, 1.0]])
    loss = CHECKS["masked_cross_entropy"].cases()[0].call(basics.masked_cross_entropy)
    assert loss == pytest.approx((math.log(1 + math.exp(-1) + math.exp(-2)) + math.log(3)) / 2)
    assert CHECKS["perplexity_from_loss"].cases()[0].call(basics.perplexity_from_loss) == pytest.approx(100.0)
    weight = CHECKS["best_interpolation_weight"].cases()[0].call(basics.best_interpolation_weight)
    assert weight == pytest.approx(7 / 12)


def test_an_nlm_logits_failure_names_input_expected_got_and_hint():
    def no_bias(contexts, C, H, d, U, b, W=None):
        return answers.my_nlm_logits(contexts, C, H, d, U, np.zeros_like(b), W)

    message = _failure("nlm_logits", no_bias)
    assert "nlm_logits failed visible case 1 of 7 (the worked example)." in message
    assert "input: contexts=array([[0, 2]]), C=array([[1., 0.]," in message
    assert "the result[0, 2] has the wrong value: expected 0.2237" in message and "got 1.2237" in message
    assert "hint: add the output bias b" in message
    assert "hint: x = C[contexts].reshape(B, -1)" in message


def test_nlm_logits_without_direct_connections_fails_on_the_second_example():
    my_nlm_logits = answers.my_nlm_logits
    message = _failure("nlm_logits", lambda c, C, H, d, U, b, W=None: my_nlm_logits(c, C, H, d, U, b))
    assert "visible case 2 of 7 (the worked example with direct connections)" in message
    message = _failure("nlm_logits", lambda c, C, H, d, U, b: my_nlm_logits(c, C, H, d, U, b))
    assert "it raised TypeError" in message, "W must be accepted as a keyword argument"


def test_a_naive_softmax_fails_the_large_logits_case():
    message = _failure("masked_cross_entropy", answers.naive_loss)
    assert "visible case 3 of 8 (large logits (a naive exp overflows))" in message
    assert "expected 0.9309974" in message


def test_the_loss_must_refuse_a_mask_without_tokens():
    def no_check(logits, targets, mask):
        with np.errstate(invalid="ignore"):
            return float((answers.token_losses(logits, targets) * mask).sum() / np.sum(mask))

    message = _failure("masked_cross_entropy", no_check)
    assert "visible case 4 of 8 (only padding)" in message
    assert "it should raise ValueError here" in message and "but it returned a float" in message


def test_perplexity_must_refuse_impossible_losses():
    assert "(a negative loss)" in _failure("perplexity_from_loss", math.exp)
    message = _failure("perplexity_from_loss", lambda loss: math.exp(loss) if loss >= 0 else math.nan + loss)
    assert "(a negative loss)" in message and "it should raise ValueError" in message

    def checks_sign_only(loss):
        if loss < 0:
            raise ValueError("negative")
        return math.exp(loss)

    assert "(a NaN loss)" in _failure("perplexity_from_loss", checks_sign_only)


def test_interpolation_must_refuse_arrays_of_different_lengths():
    def zip_shortest(p_a, p_b):
        k = min(len(p_a), len(p_b))
        return answers.my_best_interpolation_weight(p_a[:k], p_b[:k])

    message = _failure("best_interpolation_weight", zip_shortest)
    assert "(arrays of different lengths)" in message and "it should raise ValueError here" in message


def test_a_bisection_that_only_checks_the_slope_passes():
    check = _checker("best_interpolation_weight")
    check(lambda p_a, p_b: answers.bisect(p_a, p_b, 0.0, 1.0))
    check(lambda p_a, p_b: answers.bisect(p_a, p_b, 0.0, 1.0), hidden=True)


# ============================================================================= Chapter 3: the Elman RNN and BPTT


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
    clipped = [answers.my_clip_grad_norm(**c.inputs)[1] > c.inputs["threshold"] for c in cases]
    assert 0.3 < np.mean(clipped) < 0.8
    kinds = [isinstance(c.inputs["grads"], dict) for c in cases]
    assert 0.3 < np.mean(kinds) < 0.7


def test_random_recurrent_matrices_lie_on_both_sides_of_one_over_gamma():
    gamma = answers.GAMMA
    cases = _draws("gradient_regime", 600)
    regimes = [answers.my_gradient_regime(**c.inputs) for c in cases]
    for regime in ("vanishing", "may explode", "boundary"):
        assert regimes.count(regime) > 0.05 * len(cases)
    by_phi = {phi: {r for c, r in zip(cases, regimes) if c.inputs["phi"] == phi} for phi in gamma}
    assert all(found == {"vanishing", "may explode", "boundary"} for found in by_phi.values())
    fooled = [
        c
        for c, r in zip(cases, regimes)
        if r == "may explode" and gamma[c.inputs["phi"]] * max(abs(np.linalg.eigvals(c.inputs["W_hh"]))) < 1
    ]
    assert len(fooled) > 0.2 * len(cases), "the spectral radius often gives the wrong answer"


def test_the_worked_examples_of_chapter_3():
    rnn = seqlearn.rnn
    network, targets = ASSIGNMENTS["03_rnn_bptt"].EXAMPLE_NETWORK, ASSIGNMENTS["03_rnn_bptt"].EXAMPLE_TARGETS
    h, y = CHECKS["elman_forward"].cases()[0].call(rnn.elman_forward)
    assert np.allclose(h, [[math.tanh(1), -math.tanh(1)], [math.tanh(0.5 * math.tanh(1)), 0.0]])
    assert np.allclose(y, [[0.0], [math.tanh(0.5 * math.tanh(1))]])
    grads = CHECKS["bptt_gradients"].cases()[0].call(rnn.bptt_gradients)
    parameters = {k: v for k, v in network.items() if k != "x"}
    assert compare(answers.my_bptt_gradients(network["x"], targets, **parameters), grads, rtol=1e-12) is None
    assert np.allclose(grads["b_h"], [-0.8022, -0.7703], atol=1e-4)
    assert np.allclose(grads["h0"], [-0.1917, -0.0668], atol=1e-4)
    norms = [c.call(rnn.product_norms_vs_lag) for c in CHECKS["product_norms_vs_lag"].cases()[:3]]
    assert [n.tolist() for n in norms] == [[1.0, 1.0, 0.5], [1.0, 2.0], [1.0, 1.0]]
    clipped, norm = CHECKS["clip_grad_norm"].cases()[0].call(rnn.clip_grad_norm)
    assert norm == 5.0 and np.allclose(clipped["W"], [[0.6, 0.0]]) and np.allclose(clipped["b"], [0.8])
    regimes = [c.call(rnn.gradient_regime) for c in CHECKS["gradient_regime"].cases()[:5]]
    assert regimes == ["may explode", "vanishing", "boundary", "boundary", "may explode"]


def test_an_elman_forward_failure_names_input_expected_got_and_hint():
    message = _failure("elman_forward", _mistake("elman_forward", "no nonlinearity"))
    total = len(CHECKS["elman_forward"].cases())
    assert f"elman_forward failed visible case 1 of {total} (the worked example)." in message
    assert "input: x=array([[1.],\n       [0.]]), h0=array([0., 0.])" in message
    assert "the result[0][0, 0] has the wrong value: expected 0.7615941559557649, got 1.0" in message
    assert "hint: apply the nonlinearity" in message and "hint: for t = 1..T" in message


def test_the_correct_recursion_passes_and_only_the_squared_error_is_asked():
    _checker("bptt_gradients")(answers.recursive_bptt_gradients, hidden=True)
    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("loss", "mse"))
        return answers.my_bptt_gradients(*args, **kwargs)

    _checker("bptt_gradients")(recording)
    assert set(seen) == {"mse"}


def test_a_missing_gradient_is_named():
    def no_h0(*args, **kwargs):
        grads = answers.my_bptt_gradients(*args, **kwargs)
        del grads["h0"]
        return grads

    message = _failure("bptt_gradients", no_h0)
    assert "lacks 1 key(s) it should have, e.g. 'h0'" in message
    assert "(keys withheld)" in _failure("bptt_gradients", no_h0, hidden=True)


def test_the_wrong_order_fails_the_worked_example():
    message = _failure("product_norms_vs_lag", _mistake("product_norms_vs_lag", "wrong order"))
    assert "visible case 1 of 7 (the worked example)" in message
    assert "the result[2] has the wrong value: expected 0.5, got 2.0" in message


def test_the_spectral_radius_fails_the_worked_example():
    message = _failure("gradient_regime", _mistake("gradient_regime", "spectral radius"))
    assert f"visible case 1 of {len(CHECKS['gradient_regime'].cases())} (the worked example)" in message
    assert "expected 'may explode', got 'vanishing'" in message


# ============================================================================= Chapter 4: LSTM, GRU, ESN


@pytest.mark.parametrize(("name", "n_gates"), [("lstm_step", 4), ("gru_step", 3)])
def test_random_gated_steps_are_batches_with_torchs_stacked_parameters(name, n_gates):
    cases = _draws(name)
    for case in cases:
        x, h, W_ih, W_hh = (case.inputs[k] for k in ("x", "h", "W_ih", "W_hh"))
        (B, D), H = x.shape, h.shape[1]
        assert h.shape[0] == B and W_ih.shape == (n_gates * H, D) and W_hh.shape == (n_gates * H, H)
        assert case.inputs["b_ih"].shape == case.inputs["b_hh"].shape == (n_gates * H,)
        assert all(np.asarray(v).dtype == np.float64 for v in case.inputs.values())
        if name == "lstm_step":
            assert case.inputs["c"].shape == (B, H)
    assert {c.inputs["x"].shape[0] for c in cases} == {1, 2, 3, 4}
    assert max(c.inputs["h"].shape[1] for c in cases) == 5, "H > 1, where the gate blocks and r's placement matter"


def test_random_reservoir_steps_cover_single_states_batches_and_no_leak():
    cases = _draws("reservoir_update")
    ndims = [c.inputs["x"].ndim for c in cases]
    assert 0.3 < np.mean(np.array(ndims) == 1) < 0.7
    assert 0.15 < np.mean([c.inputs["leak_rate"] == 1.0 for c in cases]) < 0.5
    for case in cases:
        x, u, W_in = case.inputs["x"], case.inputs["u"], case.inputs["W_in"]
        assert x.shape[:-1] == u.shape[:-1] and W_in.shape == (x.shape[-1], u.shape[-1])
        assert 0 < case.inputs["leak_rate"] <= 1


def test_random_ridge_problems_are_well_conditioned_and_varied():
    cases = _draws("ridge_readout")
    assert all(np.linalg.cond(c.inputs["Z"]) < 30 for c in cases)
    assert {c.inputs["Y"].ndim for c in cases} == {1, 2}
    assert 0.1 < np.mean([c.inputs["ridge"] == 0.0 for c in cases]) < 0.4
    assert 0.3 < np.mean([np.all(c.inputs["Z"][:, 0] == 1.0) for c in cases]) < 0.7, "with and without a ones column"


def test_random_memory_tasks_split_evenly_and_are_solvable():
    cases = _draws("memory_capacity", 100)
    kinds = []
    for case in cases:
        states, u, k_max = case.inputs["states"], case.inputs["u"], case.inputs["k_max"]
        assert len(states) == len(u) and (len(u) - k_max) % 2 == 0 and 1 <= k_max <= 2 * states.shape[1]
        N = states.shape[1]
        kinds.append(np.array_equal(states[1:, 1:], states[:-1, :-1]))  # a shift register
        mc, r2 = answers.my_memory_capacity(states, u, k_max)
        assert r2.shape == (k_max,) and 0 <= mc <= N + 1
    assert 0.05 < np.mean(kinds) < 0.5


def test_the_worked_examples_of_chapter_4():
    ref = seqlearn.gated.reference
    h, c = CHECKS["lstm_step"].cases()[0].call(ref.lstm_step)
    sig = lambda a: 1 / (1 + math.exp(-a))  # noqa: E731
    c_expected = sig(2) * 1.0 + 0.5 * math.tanh(1)  # i = 1/2, f = sigma(2), g = tanh 1, o = sigma(-1)
    assert c[0, 0] == pytest.approx(c_expected) and c_expected == pytest.approx(1.2616, abs=1e-4)
    assert h[0, 0] == pytest.approx(sig(-1) * math.tanh(c_expected)) and h[0, 0] == pytest.approx(0.2290, abs=1e-4)
    h = CHECKS["gru_step"].cases()[0].call(ref.gru_step)
    n = math.tanh(1 + sig(1) * 2)  # W_in x + b_in = 1, W_hn h + b_hn = 2
    assert h[0, 0] == pytest.approx((1 - sig(-1)) * n + sig(-1) * 0.5) and h[0, 0] == pytest.approx(0.8550, abs=1e-4)
    x = CHECKS["reservoir_update"].cases()[0].call(ref.reservoir_update)
    assert np.allclose(x, [0.25 + 0.5 * math.tanh(0.5), -0.25 - 0.5 * math.tanh(0.5)])
    assert np.allclose(x, [0.4811, -0.4811], atol=1e-4)
    W = CHECKS["ridge_readout"].cases()[0].call(ref.ridge_readout)
    assert W.shape == (2,) and np.allclose(W, [0.2, 16 / 15])
    assert np.allclose(CHECKS["ridge_readout"].cases()[2].call(ref.ridge_readout), [-1 / 6, 1.5])
    mc, r2 = CHECKS["memory_capacity"].cases()[0].call(ref.memory_capacity)
    assert np.allclose(r2[:2], 1.0, atol=1e-12), "a shift register of 3 remembers u_{t-1} and u_{t-2} exactly"
    assert np.all(r2[2:] < 0.5) and mc == pytest.approx(r2.sum())


def test_the_two_wrong_reset_placements_are_told_apart_when_H_exceeds_1():
    for mistake, other in (("reset before the product", "b_hn sits INSIDE"), ("b_hn outside the reset", "PRODUCT")):
        message = _failure("gru_step", lambda *args, m=mistake: _mistake("gru_step", m)(*args))
        assert "visible case 1 of" in message, "H = 1: the two mistakes give the same number, both hints are shown"
        wrong = _mistake("gru_step", mistake)
        case = CHECKS["gru_step"].cases()[1]
        assert case.label == "a batch of two with H = 2"
        hint = CHECKS["gru_step"].targeted_hint(case, case.call(seqlearn.gated.reference.gru_step), case.call(wrong))
        assert other not in hint


def test_an_in_place_lstm_step_is_told_which_argument_it_changed():
    message = _failure("lstm_step", _mistake("lstm_step", "in place"))
    assert "it changed its argument 'h' in place" in message and "work on a copy" in message


@pytest.mark.parametrize(("name", "argument"), [("lstm_step", "h"), ("gru_step", "h"), ("reservoir_update", "x")])
def test_a_step_that_hands_back_the_callers_state_is_told_to_return_a_new_array(name, argument):
    def aliasing(*args):
        result = answers.CORRECT[name](*args)
        state = args[1] if argument == "h" else args[0]
        return (state, result[1]) if isinstance(result, tuple) else state

    message = _failure(name, aliasing)
    assert f"it returned an array of its argument {argument!r} itself instead of a new array" in message


@pytest.mark.parametrize("name", ["ridge_readout", "memory_capacity"])
def test_the_reservoir_functions_behind_the_exercises_refuse_to_run_under_grading(name):
    import seqlearn.reservoir

    package_function = getattr(seqlearn.reservoir, name)
    message = _failure(name, lambda *args, **kwargs: package_function(*args, **kwargs))
    assert message.startswith(f"{name} scores zero:") and REFUSAL in message
    assert "seqlearn's seqlearn.reservoir." in message


# ============================================================================= Chapter 5: the learnability window


def test_random_alphas_reach_the_gaussian_and_heavy_tails():
    alphas = np.array([c.inputs["alpha"] for c in _draws("kappa_alpha")])
    assert np.all((alphas > 1) & (alphas <= 2))
    assert 0.05 < np.mean(alphas == 2.0) < 0.2 and 0.05 < np.mean(alphas < 1.1) < 0.3


def test_random_stable_samples_plant_gaussian_near_cauchy_and_middle_indices_shifted_and_scaled():
    """The hidden samples carry the alpha they were drawn with; an independent estimator recovers it."""
    cases = _draws("ecf_alpha_estimate", 60)
    planted = np.array([c.planted for c in cases])
    assert 0.05 < np.mean(planted == 2.0) < 0.4 and 0.05 < np.mean(planted < 1.1) < 0.4
    assert np.mean((planted >= 1.1) & (planted < 2)) > 0.4 and planted.min() > 1.0
    estimates = np.array([answers.my_ecf_alpha_estimate(**c.inputs) for c in cases])
    assert np.abs(estimates - planted).max() < 0.2
    medians = np.array([np.median(c.inputs["x"]) for c in cases])
    assert np.mean(np.abs(medians) > 0.1) > 0.2, "the data need not be centred"
    assert all(5000 <= len(c.inputs["x"]) <= 10_000 for c in cases)


@pytest.mark.parametrize("name", ["gamma_const", "gamma_diag"])
def test_random_gate_sequences_have_short_and_full_windows(name):
    cases = _draws(name)
    for case in cases:
        h_tilde, lags = case.inputs["h_tilde"], case.inputs["lags"]
        T, H = h_tilde.shape
        assert lags.dtype == np.int64 and lags.min() >= 1 and lags.max() <= T
        s = np.asarray(case.inputs["s"])
        assert np.all((s > 0) & (s < 1)) and s.shape == (() if name == "gamma_const" else (T, H))
        if name == "gamma_diag":
            assert case.inputs["h_prev"].shape == (T, H) and case.inputs["u_s_diag"].shape == (H,)
    assert max(len(c.inputs["h_tilde"]) for c in cases) == 12 and any(len(c.inputs["lags"]) > 1 for c in cases)
    assert any(np.any(np.diff(c.inputs["lags"]) < 0) for c in cases), "lags in any order"


def test_random_tables_are_non_contiguous_with_undetectable_lags():
    cases = _draws("window_from_table")
    assert 0.3 < np.mean([np.ndim(c.inputs["N"]) == 0 for c in cases]) < 0.6
    assert 0.2 < np.mean([np.any(np.diff(c.inputs["lags"]) < 0) for c in cases]) < 0.6
    assert np.mean([np.any(c.inputs["N_req"] == -1) for c in cases]) > 0.5
    contiguous = [
        answers.MISTAKES["window_from_table"]["first failure"][0](**c.inputs) for c in cases
    ]  # stops at the first lag that fails
    differs = [compare(answers.my_window_from_table(**c.inputs), got) is not None for c, got in zip(cases, contiguous)]
    assert np.mean(differs) > 0.2
    ties = [np.isin(c.inputs["N"], c.inputs["N_req"]).any() for c in cases]
    assert np.mean(ties) > 0.3, "N equal to some N_req: <= and < differ"


def test_random_closed_forms_cover_both_envelopes_and_shapes():
    cases = _draws("window_closed_form")
    assert {(c.inputs["envelope"], np.ndim(c.inputs["N"])) for c in cases} == {
        ("exponential", 0),
        ("exponential", 1),
        ("power", 0),
        ("power", 1),
    }
    assert all(np.min(c.inputs["N"]) >= 1 for c in cases)


def test_the_worked_examples_of_chapter_5():
    ref = seqlearn.learnability.reference
    assert CHECKS["kappa_alpha"].cases()[0].call(ref.kappa_alpha) == 3.0
    alpha = CHECKS["ecf_alpha_estimate"].cases()[0].call(ref.ecf_alpha_estimate)
    assert alpha == pytest.approx(1.4974, abs=1e-4)
    gamma = CHECKS["gamma_const"].cases()[0].call(ref.gamma_const)  # rho / leak = (1, 0.75, 1), leak 1/2
    assert np.allclose(gamma[:, :, 0], [[1.0, 0.875, 1.0], [np.nan, 0.6875, 0.6875]], equal_nan=True)
    gamma = CHECKS["gamma_diag"].cases()[0].call(ref.gamma_diag)
    assert gamma.shape == (2, 2, 2)
    assert np.allclose(
        gamma[0, :, 0], [0.5 * (1 + 0.375 / 0.5 + 0.5 * 0.25 * 2 / 0.5), 0.5 * (1 + 0.5 / 0.5 - 0.25 * 0.25 * 2 / 0.5)]
    )
    assert CHECKS["window_from_table"].cases()[0].call(ref.window_from_table).tolist() == [0, 1, 5, 5, 8]
    assert CHECKS["window_from_table"].cases()[1].call(ref.window_from_table) == 5
    assert CHECKS["window_from_table"].cases()[2].call(ref.window_from_table).tolist() == [1, 5, 8]
    values = [c.call(ref.window_closed_form) for c in CHECKS["window_closed_form"].cases()[:4]]
    assert np.allclose(values[:3], [61.40, 92.10, 100.0], atol=0.01)
    assert np.allclose(values[3], [1.0, 100 ** (1 / 3), 21.544], atol=1e-3)


def test_the_first_failure_mistake_fails_the_worked_table():
    message = _failure("window_from_table", _mistake("window_from_table", "first failure"))
    assert "visible case 1 of" in message and "(the worked example)" in message
    assert "expected 5, got 1" in message


# ============================================================================= Chapter 6: low-rank RNNs


@pytest.mark.parametrize("name", ["metric_bar", "overlap_ode_step", "invariant_I1"])
def test_random_overlaps_are_those_of_real_vectors(name):
    from seqlearn.lowrank.overlaps import gram, vectors_with_overlaps

    sigmas = np.concatenate([np.reshape(c.inputs["sigma"], (-1, 10)) for c in _draws(name)])
    smallest = np.linalg.eigvalsh(gram(sigmas))[:, 0]
    assert smallest.min() > 1e-3, "every random sigma has a positive-definite Gram matrix"
    m, u, v, z = vectors_with_overlaps(sigmas[0], 6, rng=0)
    assert np.allclose(seqlearn.lowrank.reference.overlaps_from_vectors(m, u, v, z), sigmas[0])
    near_start = np.all(np.abs(sigmas[:, 6:] - 1.0) < 1e-12, axis=1)
    assert 0.15 < np.mean(near_start) < 0.5, "some near the orthonormal start of training, most spread out"
    assert np.abs(sigmas[~near_start, :6]).max() > 1.0


def test_random_vectors_are_correlated_and_of_varied_lengths():
    cases = _draws("overlaps_from_vectors")
    lengths = [{len(x) for x in c.inputs.values()} for c in cases]
    assert all(len(n) == 1 for n in lengths) and {n.pop() for n in lengths} == set(range(2, 41))
    sigmas = np.array([answers.my_overlaps_from_vectors(**c.inputs) for c in cases])
    assert np.median(np.abs(sigmas[:, :6])) > 0.2, "cross overlaps of order one, not ~1/sqrt(N)"
    assert all(len(set(np.round(s, 12))) == 10 for s in sigmas), "ten different values: a wrong order shows"


def test_random_latent_inputs_are_impulses_steps_and_noise():
    cases = _draws("effective_output")
    dts = np.array([c.inputs["dt"] for c in cases])
    assert np.all((dts > 0) & (dts <= 1)) and 0.03 < np.mean(dts == 1.0) < 0.2
    impulses = [c.inputs["x"][0] == 1 / c.inputs["dt"] and not c.inputs["x"][1:].any() for c in cases]
    assert 0.2 < np.mean(impulses) < 0.45
    assert {len(c.inputs["x"]) for c in cases} == set(range(1, 41))
    outputs = [answers.my_effective_output(**c.inputs) for c in cases]
    assert max(np.abs(f).max() for f in outputs) < 1e8, "no case explodes"


def test_random_gradients_are_those_of_linear_erf_and_general_losses():
    cases = _draws("overlap_ode_step")
    kinds = [ASSIGNMENTS["06_lowrank"].CHECKS["overlap_ode_step"].branch(c) for c in cases]
    assert {kinds.count(k) > 0.1 * len(cases) for k in ("linear", "erf", "any")} == {True}
    etas = np.array([c.inputs["eta"] for c in cases])
    assert etas.min() == 0.0 and etas.max() <= 1.0
    I1 = [answers.my_invariant_I1(c.inputs["sigma"]) for c in cases]
    after = [answers.my_invariant_I1(answers.my_overlap_ode_step(**c.inputs)) for c in cases]
    conserved = [k == "linear" for k in kinds]
    assert np.allclose(np.array(I1)[conserved], np.array(after)[conserved], rtol=0, atol=1e-12)


def test_random_invariant_inputs_are_single_and_stacked():
    cases = _draws("invariant_I1")
    assert 0.3 < np.mean([c.inputs["sigma"].ndim == 1 for c in cases]) < 0.7
    assert {c.inputs["sigma"].shape[0] for c in cases if c.inputs["sigma"].ndim == 2} == set(range(1, 8))


def test_the_worked_examples_of_chapter_6():
    ref = seqlearn.lowrank.reference
    lowrank = ASSIGNMENTS["06_lowrank"]
    sigma = CHECKS["overlaps_from_vectors"].cases()[0].call(ref.overlaps_from_vectors)
    assert sigma.tolist() == [1.0, -0.5, 1.0, 0.5, 0.0, 0.75, 1.0, 1.0, 1.5, 1.5] == lowrank.EXAMPLE_SIGMA.tolist()
    f = CHECKS["effective_output"].cases()[0].call(ref.effective_output)
    assert f.tolist() == [0.5, 0.375, 0.28125]
    f = CHECKS["effective_output"].cases()[1].call(ref.effective_output)
    assert np.allclose(f, np.exp(-0.2 * 0.05 * np.arange(60)), rtol=1e-12), "the filter task solved exactly"
    G = CHECKS["metric_bar"].cases()[0].call(ref.metric_bar)
    assert G[0, 0] == 2.5 and G[6, 6] == 4.0 and G[6, 0] == 2.0 and G[0, 2] == 0.75 and G[0, 4] == -0.5
    assert G[8, 8] == 6.0 and G[:4, :4].tolist() == [
        [2.5, 0.0, 0.75, 0.0],
        [0.0, 2.5, 0.0, 0.75],
        [0.75, 0.0, 2.5, 0.0],
        [0.0, 0.75, 0.0, 2.5],
    ]
    G = CHECKS["metric_bar"].cases()[1].call(ref.metric_bar)
    assert np.array_equal(G, np.diag([2.0] * 6 + [4.0] * 4)), "the orthonormal start"
    step = CHECKS["overlap_ode_step"].cases()[0].call(ref.overlap_ode_step)
    assert np.allclose(step, [0.75, -0.5, 0.925, 0.5, 0.05, 0.65, 0.8, 1.0, 1.5, 1.3], rtol=0, atol=1e-15)
    assert (
        ref.invariant_I1(step)
        == pytest.approx(1.0, abs=1e-15)
        == CHECKS["invariant_I1"].cases()[0].call(ref.invariant_I1)
    )
    step = CHECKS["overlap_ode_step"].cases()[1].call(ref.overlap_ode_step)
    assert np.allclose(step, [-0.1, 0.2, -0.05, -0.1, 0, 0, 0, 0, 0, 0] + lowrank.ORTHONORMAL, atol=1e-15)
    assert CHECKS["invariant_I1"].cases()[1].call(ref.invariant_I1).tolist() == [1.0, 0.0]


def test_a_wrong_order_of_the_overlaps_fails_the_worked_example():
    message = _failure("overlaps_from_vectors", _mistake("overlaps_from_vectors", "norms last reversed"))
    assert "visible case 1 of" in message and "(the worked example)" in message
    assert "the result[6] has the wrong value: expected 1.0, got 1.5" in message


def test_reading_before_the_update_fails_the_worked_example():
    message = _failure("effective_output", _mistake("effective_output", "read before"))
    assert "visible case 1 of" in message and "expected 0.5, got 0.0" in message
    assert "read the output AFTER the update" in message


# ============================================================================= every mistake costs points once

ROOT = Path(__file__).resolve().parents[1]

GIVEN = [
    # (the later part, the argument it is given, the earlier part, the earlier function its answer calls, a mistake)
    ("kn_bigram_prob", "continuation", "continuation_counts", "my_continuation_counts", "occurrences"),
    ("overlap_ode_step", "G_bar", "metric_bar", "my_metric_bar", "no factor 2"),
]


def _graded_cells(assignment: str) -> list:
    (path,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    cells = nbformat.read(path, as_version=4).cells
    return [c for c in cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade_id")]


def _calls(text: str, names) -> set[str]:
    return {name for name in names if re.search(rf"\b{name}\(", text)}


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_an_answer_uses_an_earlier_part_only_through_the_result_it_is_given(assignment):
    """Only the lines above ``### BEGIN SOLUTION`` may call an earlier part: the default of an argument that
    the checks give (the earlier reference's result), so no answer is graded on an earlier answer's mistake."""
    earlier: list[str] = []
    for cell in _graded_cells(assignment):
        if not cell.metadata["nbgrader"].get("solution"):
            continue
        (function,) = [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
        head, _, rest = cell.source.partition("### BEGIN SOLUTION")
        check = ASSIGNMENTS[assignment].CHECKS[function.name]
        assert not _calls(rest, earlier), f"the answer of {function.name} calls an earlier part"
        assert bool(_calls(head, earlier)) == bool(check.given), function.name
        assert set(check.given) <= {a.arg for a in function.args.args}
        earlier.append(function.name)


@pytest.mark.parametrize(("later", "argument", "earlier", "helper", "mistake"), GIVEN)
def test_a_wrong_earlier_part_costs_its_own_points_only(later, argument, earlier, helper, mistake):
    wrong = _mistake(earlier, mistake)
    right = answers.CORRECT[later]
    on_wrong = types.FunctionType(right.__code__, {**right.__globals__, helper: wrong}, later, right.__defaults__)
    check = CHECKS[later]
    assert argument in check.given
    assert any(compare(c.call(check.reference), c.call(on_wrong), rtol=1e-6) for c in check.cases()), (
        "in the notebook, the earlier mistake reaches the later part"
    )
    assert f"{earlier} failed visible case" in _failure(earlier, wrong)
    for hidden in (False, True):
        _checker(later)(on_wrong, hidden=hidden)


def _bptt_cells() -> list[tuple[str, float]]:
    cells = _graded_cells("03_rnn_bptt")
    return [(c.source, c.metadata["nbgrader"]["points"]) for c in cells if "check_bptt_gradients" in c.source]


def _score(cells, bptt_gradients) -> float:
    """The points of the test cells that pass (as nbgrader counts them), the hidden tests included."""
    score = 0.0
    for source, points in cells:
        try:
            exec(source, {"bptt_gradients": bptt_gradients})
        except CheckFailure:
            continue
        score += points
    return score


@pytest.mark.parametrize("key", GRADIENT_KEYS)
def test_one_wrong_gradient_costs_its_share_of_the_points_only(key, capsys):
    right = answers.CORRECT["bptt_gradients"]

    def wrong(*args, **kwargs):
        grads = right(*args, **kwargs)
        return {**grads, key: 2.0 * grads[key] + 1.0}

    cells = _bptt_cells()
    points = {p for _, p in cells}  # one share per gradient
    assert len(cells) == len(GRADIENT_KEYS) and len(points) == 1
    total = sum(p for _, p in cells)
    assert total > 0 and _score(cells, right) == total
    assert _score(cells, wrong) == total - points.pop()
    with pytest.raises(CheckFailure) as info:
        ENTRIES[f"bptt_gradients_{key}"].check(wrong)
    message = str(info.value)
    assert message.startswith(f"bptt_gradients[{key!r}] failed visible case 1 of")
    assert f"problem: the result[{key!r}]" in message and "has the wrong value" in message
