"""The autograder's checks: comparisons, messages, seeds, the guard, and the Chapter 1 checkers."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from seqlearn.grading import REFUSAL, Case, CheckFailure, FunctionCheck, compare, hidden_rngs, visible_rngs
from seqlearn.grading import ngram as grading_ngram
from seqlearn.grading.ngram import CHECKS
from seqlearn.ngram import basics

# ----------------------------------------------------------------------------- independent implementations


def my_count_ngrams(sentences, n):
    out = {}  # a plain dict: a Counter is not required
    for sentence in sentences:
        tokens = ["<s>"] + list(sentence) + ["</s>"]
        for gram in zip(*(tokens[i:] for i in range(n))):
            if gram != ("<s>",):
                out[gram] = out.get(gram, 0) + 1
    return out


def my_add_k_prob(context, word, counts, k, vocab_size):
    h = tuple(context)
    total = sum(c for gram, c in counts.items() if gram[: len(h)] == h and len(gram) == len(h) + 1)
    return (counts.get(h + (word,), 0) + k) / (total + k * vocab_size)


def my_perplexity(log_probs):
    if len(log_probs) == 0:
        raise ValueError("no tokens")
    return float(np.exp(-np.mean(log_probs)))


def my_continuation_counts(counts):
    return Counter(gram[1:] for gram, c in counts.items() if c > 0)


def my_kn_bigram_prob(context, word, bigram_counts, d):
    before = {}
    for (a, b), c in bigram_counts.items():
        if c > 0:
            before.setdefault(b, set()).add(a)
    p_cont = len(before.get(word, ())) / sum(len(s) for s in before.values())
    following = {b: c for (a, b), c in bigram_counts.items() if a == context}
    total = sum(following.values())
    if total == 0:
        return p_cont
    weight = d * sum(1 for c in following.values() if c > 0) / total
    return max(following.get(word, 0) - d, 0) / total + weight * p_cont


def my_mkn_discounts(count_of_counts):
    n = [count_of_counts.get(r, 0) for r in range(1, 5)]
    if 0 in n[:3]:
        raise ValueError("n1, n2, n3 must be positive")
    y = n[0] / (n[0] + 2 * n[1])
    return tuple(r + 1 - (r + 2) * y * n[r + 1] / n[r] for r in range(3))


MINE = {
    "count_ngrams": my_count_ngrams,
    "add_k_prob": my_add_k_prob,
    "perplexity": my_perplexity,
    "continuation_counts": my_continuation_counts,
    "kn_bigram_prob": my_kn_bigram_prob,
    "mkn_discounts": my_mkn_discounts,
}


def _checker(name):
    return getattr(grading_ngram, f"check_{name}")


def _failure(check, fn, hidden=False) -> str:
    with pytest.raises(CheckFailure) as info:
        check(fn, hidden=hidden)
    return str(info.value)


# ----------------------------------------------------------------------------- Chapter 1 checkers


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("hidden", [False, True])
def test_an_independent_correct_implementation_passes(name, hidden, capsys):
    _checker(name)(MINE[name], hidden=hidden)
    assert f"{name}: all" in capsys.readouterr().out


def test_every_exercise_has_a_checker():
    assert sorted(CHECKS) == sorted(MINE) == sorted(basics.__all__)
    assert all(check.reference is getattr(basics, name) for name, check in CHECKS.items())


@pytest.mark.parametrize("name", sorted(MINE))
def test_visible_cases_include_the_worked_example_and_are_deterministic(name):
    check = CHECKS[name]
    first, second = check.cases(), check.cases()
    assert first == second
    assert first[0].label == "the worked example"
    assert len(first) == len(check.fixed_cases) + check.n_visible


@pytest.mark.parametrize("name", sorted(MINE))
def test_hidden_draws_differ_between_runs_and_replay_with_entropy(name):
    check = CHECKS[name]
    assert check.cases(hidden=True) != check.cases(hidden=True)
    assert check.cases(hidden=True, entropy=7) == check.cases(hidden=True, entropy=7)
    assert len(check.cases(hidden=True)) == check.n_hidden


def test_random_inputs_use_plain_python_strings():
    sentences = grading_ngram.random_sentences(np.random.default_rng(0), max_sentences=20)
    assert all(type(w) is str for s in sentences for w in s)
    assert repr(sentences).count("np.") == 0


@pytest.mark.parametrize("name", sorted(MINE))
@pytest.mark.parametrize("wrong", [None, [1, 2], "text", {"a": 1}, {1: 2.0}, {("a",): "x"}, (1.0,), math.nan, -1.0, 0])
def test_wrong_results_of_any_kind_fail_with_a_message(name, wrong):
    message = _failure(_checker(name), lambda *args: wrong)
    assert f"{name} failed visible case 1" in message
    assert "input:" in message and "problem:" in message and "hint:" in message


def test_a_visible_failure_names_input_expected_got_and_hint():
    def off_by_one(sentences, n):
        counts = my_count_ngrams(sentences, n)
        counts[("<s>", "the")] = counts.get(("<s>", "the"), 0) + 1
        return counts

    message = _failure(grading_ngram.check_count_ngrams, off_by_one)
    assert "visible case 1 of 7 (the worked example)" in message
    assert "input: sentences=[['the', 'cat', 'sat'], ['the', 'dog']], n=2" in message
    assert "the result[('<s>', 'the')] has the wrong value: expected 2, got 3" in message
    assert "hint: " in message


def test_targeted_hints():
    def with_bos_unigram(sentences, n):
        counts = my_count_ngrams(sentences, n)
        if n == 1:
            counts[("<s>",)] = len(sentences)
        return counts

    assert "('<s>',) is not a unigram" in _failure(grading_ngram.check_count_ngrams, with_bos_unigram)
    string_keys = _failure(grading_ngram.check_count_ngrams, lambda s, n: {" ".join(g): c for g, c in my_count_ngrams(s, n).items()})
    assert "keys must be tuples" in string_keys
    no_k_v = _failure(grading_ngram.check_add_k_prob, lambda h, w, counts, k, v: my_add_k_prob(h, w, counts, k, 0))
    assert "add k |V| to the denominator" in no_k_v
    assert "mind the sign" in _failure(grading_ngram.check_perplexity, lambda lp: 1 / my_perplexity(lp))

    def occurrences(counts):
        result = Counter()
        for gram, c in counts.items():
            result[gram[1:]] += c
        return result

    assert "distinct left neighbours" in _failure(grading_ngram.check_continuation_counts, occurrences)
    assert "for a context never seen" in _failure(
        grading_ngram.check_kn_bigram_prob, lambda v, w, counts, d: 0.0 if v == "zebra" else my_kn_bigram_prob(v, w, counts, d)
    )


def test_hidden_failures_withhold_inputs_and_keys():
    def extra_key(sentences, n):
        counts = my_count_ngrams(sentences, n)
        counts[("SECRET-KEY",)] = 1
        return counts

    message = _failure(grading_ngram.check_count_ngrams, extra_key, hidden=True)
    assert "count_ngrams failed hidden case 1 of 30." in message
    assert "input: withheld" in message
    assert "(keys withheld)" in message
    assert "SECRET-KEY" not in message and "sentences=" not in message and "'<s>'" not in message.split("hint:")[0]


def test_hidden_failures_swallow_prints_and_withhold_exception_messages(capsys):
    def leaky(sentences, n):
        marker = "HIDDEN-" + "INPUT"  # built at run time: the student's line of code is shown
        print(marker, sentences)
        raise KeyError(marker + repr(sentences))

    message = _failure(grading_ngram.check_count_ngrams, leaky, hidden=True)
    assert "raised KeyError (line" in message and "its message is withheld" in message
    assert "HIDDEN-INPUT" not in message
    assert "HIDDEN-INPUT" not in capsys.readouterr().out


def test_a_students_exception_is_reported_with_their_line():
    def crashes(log_probs):
        total = sum(log_probs)
        return math.exp(-total / (len(log_probs) - len(log_probs)))

    message = _failure(grading_ngram.check_perplexity, crashes)
    assert "it raised ZeroDivisionError: float division by zero" in message
    assert "of crashes: return math.exp(-total / (len(log_probs) - len(log_probs)))" in message


def test_not_implemented_yet():
    def blank(log_probs):
        raise NotImplementedError()

    message = _failure(grading_ngram.check_perplexity, blank)
    assert "it raised NotImplementedError: it is not implemented yet" in message
    assert "replace the `raise NotImplementedError()` line" in message


def test_expected_errors_must_be_raised():
    def no_check(log_probs):
        return math.exp(-sum(log_probs) / max(len(log_probs), 1))

    message = _failure(grading_ngram.check_perplexity, no_check)
    assert "visible case 3 of 7 (no tokens)" in message
    assert "it should raise ValueError here (perplexity of zero tokens is undefined" in message
    assert "but it returned a float" in message

    def wrong_error(count_of_counts):
        if count_of_counts.get(2, 0) == 0:
            raise ZeroDivisionError("n2")
        return my_mkn_discounts(count_of_counts)

    message = _failure(grading_ngram.check_mkn_discounts, wrong_error)
    assert "it should raise ValueError here, but it raised ZeroDivisionError: n2" in message


@pytest.mark.parametrize("hidden", [False, True])
def test_delegating_to_the_reference_scores_zero_and_says_why(hidden):
    message = _failure(grading_ngram.check_kn_bigram_prob, lambda *args: basics.kn_bigram_prob(*args), hidden=hidden)
    assert message.startswith("kn_bigram_prob scores zero:")
    assert REFUSAL in message and "seqlearn.ngram.basics.kn_bigram_prob" in message
    imported = _failure(grading_ngram.check_count_ngrams, basics.count_ngrams, hidden=hidden)
    assert REFUSAL in imported


def test_a_non_function_is_named():
    assert "count_ngrams should be a function, but it is None" in _failure(grading_ngram.check_count_ngrams, None)


def test_interrupts_propagate_without_the_students_message():
    def interrupted(log_probs):
        raise KeyboardInterrupt("SECRET")

    with pytest.raises(KeyboardInterrupt) as info:
        grading_ngram.check_perplexity(interrupted, hidden=True)
    assert "SECRET" not in str(info.value)


def test_the_student_cannot_alter_the_cases():
    def mutating(counts):
        result = my_continuation_counts(counts)
        counts.clear()
        return result

    grading_ngram.check_continuation_counts(mutating)
    assert CHECKS["continuation_counts"].cases()[0].inputs["counts"] == basics.count_ngrams(grading_ngram.EXAMPLE, 2)


def test_check_failure_renders_as_its_message_in_ipython():
    failure = CheckFailure("f failed visible case 1 of 2.\n    problem: x")
    assert isinstance(failure, AssertionError)
    lines = failure._render_traceback_()
    assert "CheckFailure" in lines[0] and "f failed visible case 1 of 2." in lines[0]
    assert lines[1] == "    problem: x"


# ----------------------------------------------------------------------------- compare


def test_compare_numbers():
    assert compare(0.1 + 0.2, 0.3) is None
    assert compare(1.0, 1.0 + 1e-6).describe() == "the result has the wrong value: expected 1.0, got 1.000001"
    assert compare(1.0, 1.0 + 1e-6, rtol=1e-5) is None
    assert compare(3, 3.0) is None and compare(3, np.int64(3)) is None
    assert compare(2, 3).describe() == "the result has the wrong value: expected 2, got 3"
    assert compare(math.nan, math.nan) is None and compare(math.inf, math.inf) is None
    assert compare(math.inf, 1e308) is not None and compare(1.0, math.nan) is not None
    assert compare(0.5, np.float32(0.5)) is None
    assert compare(0.5, True).problem == "type"
    assert compare(0.5, "0.5").describe() == "the result has the wrong type: expected a number, got a str"
    assert "use .item()" in compare(0.5, np.array(0.5)).got
    with pytest.raises(ValueError, match="tolerances"):
        compare(1.0, 1.0, rtol=-1)


def test_compare_bools_and_strings():
    assert compare(True, np.bool_(True)) is None
    assert compare(True, 1).problem == "type"
    assert compare("a", "b").describe() == "the result has the wrong value: expected 'a', got 'b'"
    assert compare(None, 0).describe() == "the result has the wrong type: expected None, got an int"


def test_compare_mappings():
    expected = Counter({("a", "b"): 2, ("b", "c"): 1})
    assert compare(expected, {("a", "b"): 2, ("b", "c"): 1, ("x", "y"): 0}) is None
    missing = compare(expected, {("a", "b"): 2})
    assert missing.describe() == "the result lacks 1 key(s) it should have, e.g. ('b', 'c')"
    assert missing.describe(hidden=True) == "the result lacks 1 key(s) it should have (keys withheld)"
    extra = compare(expected, {**expected, ("z",): 4})
    assert extra.describe() == "the result has 1 key(s) it should not have, e.g. ('z',)"
    wrong = compare(expected, {("a", "b"): 2, ("b", "c"): 1.5})
    assert wrong.describe() == "the result[('b', 'c')] has the wrong value: expected 1, got 1.5"
    assert wrong.describe(hidden=True) == "the result[<a key>] has the wrong value: expected 1, got 1.5"
    assert compare(expected, [("a", "b")]).describe() == "the result has the wrong type: expected a mapping (Counter or dict), got a list of length 1"
    assert compare({"a": 1}, {"a": 0}) is not None, "zeros only vanish for Counters"


def test_compare_sequences():
    assert compare((1.0, 2.0), [1.0, 2.0 + 1e-15]) is None
    assert compare((1.0, 2.0), (1.0,)).describe() == "the result has the wrong length: expected 2, got 1"
    assert compare((1.0, 2.0), (1.0, 3.0)).describe() == "the result[1] has the wrong value: expected 2.0, got 3.0"
    nested = compare([{"k": (1, 2)}], [{"k": (1, 3)}])
    assert nested.where() == "the result[0]['k'][1]" and nested.where(hidden=True) == "the result[0][<a key>][1]"
    assert compare((1.0, 2.0), np.array([1.0, 2.0])).problem == "type"


def test_compare_numpy_arrays():
    expected = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert compare(expected, expected + 1e-13) is None
    assert compare(expected, expected.tolist()).describe() == (
        "the result has the wrong type: expected a numpy array of shape (2, 3) and dtype float64, got a list of length 2"
    )
    assert compare(expected, expected.T).describe() == "the result has the wrong shape: expected (2, 3), got (3, 2)"
    assert compare(expected, expected.astype(np.int64)).problem == "dtype"
    assert compare(expected, expected.astype(np.float32)) is None
    got = expected.copy()
    got[1, 2] = 7.5
    assert compare(expected, got).describe() == (
        "the result[1, 2] has the wrong value: expected 5.0, got 7.5 (1 of 6 entries differ)"
    )
    assert compare(np.array([1, 2]), np.array([1, 2], dtype=np.uint8)) is None
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) is None


def test_compare_torch_tensors():
    torch = pytest.importorskip("torch")
    expected = torch.tensor([[0.5, 1.0]], dtype=torch.float64)
    assert compare(expected, expected.clone() + 1e-14) is None
    assert compare(expected, expected.numpy()).describe() == (
        "the result has the wrong type: expected a torch.Tensor of shape (1, 2) and dtype torch.float64, "
        "got a numpy array of shape (1, 2) and dtype float64"
    )
    assert compare(expected, expected.T).problem == "shape"
    assert compare(expected, expected.float()).describe() == (
        "the result has the wrong dtype: expected torch.float64, got torch.float32"
    )
    assert compare(expected, torch.tensor([[0.5, 2.0]], dtype=torch.float64)).where() == "the result[0, 1]"
    assert "convert with .detach().cpu().numpy()" in compare(expected.numpy(), expected).got
    assert "use .item()" in compare(0.5, torch.tensor(0.5)).got
    assert compare(torch.tensor([1, 2]), torch.tensor([1, 2])) is None


# ----------------------------------------------------------------------------- machinery


def test_seeds():
    a = [rng.random() for rng in visible_rngs("exercise", 3)]
    assert a == [rng.random() for rng in visible_rngs("exercise", 3)]
    assert a != [rng.random() for rng in visible_rngs("another", 3)]
    assert len(set(a)) == 3
    b = [rng.random() for rng in hidden_rngs(3)]
    assert b != [rng.random() for rng in hidden_rngs(3)]
    assert [r.random() for r in hidden_rngs(2, entropy=5)] == [r.random() for r in hidden_rngs(2, entropy=5)]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="number of cases"):
            visible_rngs("x", bad)


def test_case_validation_and_keywords():
    with pytest.raises(TypeError, match="mapping"):
        Case([1, 2])
    with pytest.raises(ValueError, match="keywords"):
        Case({"a": 1}, keywords=("b",))
    case = Case({"x": [1, 2], "scale": 3}, keywords=("scale",))
    assert case.call(lambda x, *, scale: [v * scale for v in x]) == [3, 6]
    assert case.describe() == "x=[1, 2], scale=3"


def test_a_generic_function_check_for_arrays():
    def reference(x, scale):
        return np.asarray(x, dtype=np.float64) * scale

    check = FunctionCheck(
        name="scaled",
        reference=reference,
        random_case=lambda rng: Case({"x": rng.normal(size=int(rng.integers(1, 5))), "scale": 2.0}),
        hint="multiply every entry by scale",
    )
    check.check(lambda x, scale: np.array(x) * scale)
    check.check(lambda x, scale: np.array(x) * scale, hidden=True)
    message = _failure(check.check, lambda x, scale: list(np.array(x) * scale))
    assert "scaled failed visible case 1 of 4." in message
    assert "wrong type: expected a numpy array of shape" in message and "got a list" in message
    assert "hint: multiply every entry by scale" in message
