"""The autograder's machinery: comparisons, messages, seeds, cases, and the functions test cells call.

The checks of the chapters' exercises are tested in ``test_grading_chapters.py``.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from seqlearn.grading import Case, CheckFailure, FunctionCheck, compare, hidden_rngs, visible_rngs
from seqlearn.grading.checks import define_checkers


def _failure(check, fn, hidden=False) -> str:
    with pytest.raises(CheckFailure) as info:
        check(fn, hidden=hidden)
    return str(info.value)


def test_the_checks_re_export_the_comparison_the_chapters_import_from_them():
    from seqlearn.grading import checks, comparison

    assert set(comparison.__all__) <= set(checks.__all__)
    for name in comparison.__all__:
        assert getattr(checks, name) is getattr(comparison, name), name
    assert compare(1.0, 1.5) == comparison.compare(1.0, 1.5) is not None


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
    assert missing.describe(hidden=True) == "the result lacks key(s) it should have (keys withheld)"
    extra = compare(expected, {**expected, ("z",): 4})
    assert extra.describe() == "the result has 1 key(s) it should not have, e.g. ('z',)"
    wrong = compare(expected, {("a", "b"): 2, ("b", "c"): 1.5})
    assert wrong.describe() == "the result[('b', 'c')] has the wrong value: expected 1, got 1.5"
    assert (
        wrong.describe(hidden=True)
        == "the result[<a key>] has the wrong value (the values are withheld in hidden cases)"
    )
    assert (
        compare(expected, [("a", "b")]).describe()
        == "the result has the wrong type: expected a mapping (Counter or dict), got a list of length 1"
    )
    assert compare({"a": 1}, {"a": 0}) is not None, "zeros only vanish for Counters"
    assert compare(expected, [1]).describe(hidden=True) == (
        "the result has the wrong type: expected a mapping (Counter or dict), got a list"
    )


def test_compare_sequences():
    assert compare([1.0, 2.0], (1.0, 2.0 + 1e-15)) is None
    as_list = compare((1.0, 2.0), [1.0, 2.0])  # a tuple is documented: a list fails, saying so
    assert as_list.problem == "type" and "return a tuple" in as_list.describe(hidden=True)
    assert compare((1.0, 2.0), (1.0,)).describe() == "the result has the wrong length: expected 2, got 1"
    assert compare((1.0, 2.0), (1.0, 3.0)).describe() == "the result[1] has the wrong value: expected 2.0, got 3.0"
    nested = compare([{"k": (1, 2)}], [{"k": (1, 3)}])
    assert nested.where() == "the result[0]['k'][1]" and nested.where(hidden=True) == "the result[0][<a key>][1]"
    assert compare((1.0, 2.0), np.array([1.0, 2.0])).problem == "type"
    assert compare((1.0, 2.0), (1.0,)).describe(hidden=True) == (
        "the result has the wrong length: it is shorter than expected"
    )
    assert compare([(1.0, 2.0)], [(1.0, 4.0)]).describe(hidden=True) == (
        "the result[0][1] has the wrong value (the values are withheld in hidden cases)"
    )


def test_compare_numpy_arrays():
    expected = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert compare(expected, expected + 1e-13) is None
    assert compare(expected, expected.tolist()).describe() == (
        "the result has the wrong type: expected a numpy array of shape (2, 3) and dtype float64, "
        "got a list of length 2"
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
    hidden = {
        "the result has the wrong type: expected a numpy array, got a list": expected.tolist(),
        "the result has the wrong shape: axis 0 is longer than expected": expected.T,
        "the result has the wrong shape: expected 2 dimension(s), got 1": expected.ravel(),
        "the result has the wrong dtype: expected float64 (or another of kind 'f'), got int64": expected.astype(int),
        "the result has the wrong dtype: expected float64 (or another of kind 'f'), got a dtype of kind 'U'": (
            expected.astype(str)
        ),
        "the result[1, 2] has the wrong value (the values are withheld in hidden cases)": got,
    }
    assert [compare(expected, g).describe(hidden=True) for g in hidden.values()] == list(hidden)


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
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="number of cases"):
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


def test_define_checkers_makes_the_functions_test_cells_call(capsys):
    check = FunctionCheck(
        name="doubled",
        reference=lambda x: 2 * x,
        random_case=lambda rng: Case({"x": float(rng.normal())}),
        fixed_cases=(Case({"x": 1.5}, label="the worked example"),),
        hint="multiply by two",
    )
    namespace = {"__name__": "seqlearn.grading.example"}
    assert define_checkers(namespace, {"doubled": check}) == ["check_doubled"]
    checker = namespace["check_doubled"]
    assert (checker.__name__, checker.__qualname__, checker.__module__) == (
        "check_doubled",
        "check_doubled",
        "seqlearn.grading.example",
    )
    doc = " ".join(checker.__doc__.split())
    assert "Grade your ``doubled``" in doc and "5 visible cases" in doc
    assert "30 hidden ones" in doc and "multiply by two" in doc
    checker(lambda x: x + x)
    checker(lambda x: x + x, hidden=True)
    assert capsys.readouterr().out == "doubled: all 5 visible cases passed.\ndoubled: all 30 hidden cases passed.\n"
    assert _failure(checker, lambda x: x) == _failure(check.check, lambda x: x)


# ----------------------------------------------------------------------------- given results, entries graded apart


def _parts_check(**kwargs) -> FunctionCheck:
    def reference(x):
        return {"sum": float(np.sum(x)), "max": float(np.max(x))}

    return FunctionCheck(
        name="summary",
        reference=reference,
        random_case=lambda rng: Case({"x": rng.normal(size=3)}),
        n_visible=2,
        n_hidden=3,
        **kwargs,
    )


def test_a_given_argument_is_the_earlier_parts_reference_result_passed_to_the_student_only():
    calls = []

    def later(x, total=None):
        calls.append(total)
        return {"sum": total, "max": float(np.max(x))}

    check = _parts_check(given={"total": lambda inputs: float(np.sum(inputs["x"]))})
    check.check(later)
    check.check(later, hidden=True)
    assert len(calls) == 5 and all(isinstance(t, float) for t in calls)
    message = _failure(check.check, lambda x, total=None: {"sum": total + 1.0, "max": float(np.max(x))})
    assert "input: x=" in message and ", total=" in message, "a visible failure shows what the function was given"
    assert _failure(check.check, lambda x: {}).count("TypeError") == 1, "the argument is passed by name"


def test_an_entry_check_grades_one_entry_of_the_result_on_the_whole_functions_cases(capsys):
    whole = _parts_check()
    by_sum, by_max = whole.entries(("sum", "max"))
    assert (by_sum.key, by_max.key, by_sum.name) == ("summary_sum", "summary_max", "summary")
    assert [c.inputs["x"].tolist() for c in by_max.cases()] == [c.inputs["x"].tolist() for c in whole.cases()]

    def wrong_max(x):
        return {"sum": float(np.sum(x)), "max": 0.0}

    by_sum.check(wrong_max)
    by_sum.check(wrong_max, hidden=True)
    assert capsys.readouterr().out.startswith("summary['sum']: all 2 visible cases passed.")
    message = _failure(by_max.check, wrong_max)
    assert message.startswith("summary['max'] failed visible case 1 of 2.")
    assert "the result['max'] has the wrong value" in message
    assert "lacks 1 key(s) it should have, e.g. 'max'" in _failure(by_max.check, lambda x: {"sum": float(np.sum(x))})
    assert "wrong type" in _failure(by_max.check, lambda x: [1.0])
    namespace = {"__name__": "seqlearn.grading.example"}
    assert define_checkers(namespace, {c.key: c for c in (whole, by_sum, by_max)}) == [
        "check_summary",
        "check_summary_sum",
        "check_summary_max",
    ]
    assert "compares the entry 'max' of each result" in " ".join(namespace["check_summary_max"].__doc__.split())


# ----------------------------------------------------------------------------- dtype, mutation, aliasing


def _scale_check(**kwargs) -> FunctionCheck:
    def scale(x, factor):
        return x * factor

    return FunctionCheck(
        name="scale",
        reference=scale,
        random_case=lambda rng: Case({"x": rng.normal(size=4), "factor": float(rng.uniform(1, 2))}),
        n_hidden=3,
        **kwargs,
    )


def test_a_float32_answer_is_named_a_dtype_problem():
    mismatch = compare(np.array([0.1, 0.2]), np.array([0.1, 0.2], dtype=np.float32))
    assert mismatch.problem == "dtype" and "float32" in mismatch.got and "lower precision" in mismatch.got
    assert compare(0.1, np.float32(0.1)).problem == "dtype"
    assert compare(np.array([0.5]), np.array([0.5], dtype=np.float32)) is None  # exact in float32: fine
    with pytest.raises(CheckFailure, match=r"wrong dtype.*float32, whose lower precision"):
        _scale_check().check(lambda x, factor: (x * factor).astype(np.float32))


@pytest.mark.parametrize("hidden", [False, True])
def test_changing_an_argument_in_place_fails(hidden):
    def in_place(x, factor):
        x *= factor
        return x

    with pytest.raises(CheckFailure, match=r"changed its argument 'x' in place"):
        _scale_check().check(in_place, hidden=hidden)


def test_returning_the_callers_array_fails_where_new_arrays_are_asked_for():
    def same(x, factor):
        return x if factor == 1 else x * factor

    check = _scale_check(new_arrays=True, fixed_cases=(Case({"x": np.ones(2), "factor": 1}),), n_visible=0)
    with pytest.raises(CheckFailure, match=r"returned an array of its argument 'x' itself"):
        check.check(same)
    check.check(lambda x, factor: x * factor)
    _scale_check(fixed_cases=(Case({"x": np.ones(2), "factor": 1}),), n_visible=0).check(same)


# ----------------------------------------------------------------------------- what a hidden failure shows


def _word(rng) -> Case:
    return Case({"word": "".join(rng.choice(list("qxzjkvw"), size=12))})


def _floats(rng) -> Case:
    return Case({"x": rng.normal(size=int(rng.integers(5, 9)))})


def _raise_named(word):
    raise type(word, (Exception,), {})()


def _total(x) -> float:
    return float(np.sum(x))


LEAKS = [
    # (reference, case, answer, what the hidden message says, the strings of the case it must not show)
    pytest.param(
        str.upper, _word, lambda word: word, "has the wrong value", lambda x: [x["word"], x["word"].upper()], id="input"
    ),
    pytest.param(
        _total,
        _floats,
        lambda x: _total(x) + 1,
        "has the wrong value",
        lambda x: [repr(_total(x["x"])), repr(_total(x["x"]) + 1)],
        id="computed",
    ),
    pytest.param(
        _total,
        _floats,
        lambda x: x,
        "wrong type: expected a number, got a numpy array (use .item() to get the number)",
        lambda x: [str(x["x"].shape), "float64"],
        id="array-for-number",
    ),
    pytest.param(
        lambda x: x * 2,
        _floats,
        lambda x: np.append(x, 0.0) * 2,
        "wrong shape: axis 0 is longer than expected",
        lambda x: [str(x["x"].shape), str((len(x["x"]) + 1,))],
        id="shape",
    ),
    pytest.param(
        list,
        _floats,
        lambda x: [*x, 0.0],
        "wrong length: it is longer than expected",
        lambda x: [f"expected {len(x['x'])}", f"got {len(x['x']) + 1}"],
        id="length",
    ),
    pytest.param(
        str.upper,
        _word,
        lambda word: type(word, (), {})(),
        "wrong type: expected a str, got an object of a type of its own",
        lambda x: [x["word"]],
        id="class-named-after-it",
    ),
    pytest.param(
        str.upper,
        _word,
        _raise_named,
        "raised an exception of a class of its own (line",
        lambda x: [x["word"]],
        id="exception-named-after-it",
    ),
]


@pytest.mark.parametrize(("reference", "draw", "answer", "says", "shown"), LEAKS)
def test_hidden_failures_show_nothing_of_the_result_or_the_input(reference, draw, answer, says, shown):
    """An answer that returned its input, or a value computed from it, carried the hidden input into the
    message as the value it got (or as the shape, length, or name of a class, it returned)."""
    drawn: list[Case] = []

    def random_case(rng):
        drawn.append(draw(rng))
        return drawn[-1]

    check = FunctionCheck(name="f", reference=reference, random_case=random_case, n_visible=1, n_hidden=3, hint="H")
    visible = _failure(check.check, answer)
    assert "f failed visible case 1 of 1." in visible and all(s in visible for s in shown(drawn[0].inputs)), visible
    drawn.clear()
    hidden = _failure(check.check, answer, hidden=True)
    assert "f failed hidden case 1 of 3." in hidden and "input: withheld" in hidden and "hint: H" in hidden
    assert says in hidden, hidden
    assert not [s for s in shown(drawn[0].inputs) if s in hidden], hidden


# ----------------------------------------------------------------------------- visible cases cover every branch


def _all_checks():
    from seqlearn.grading import ASSIGNMENTS

    return {name: check for module in ASSIGNMENTS.values() for name, check in module.CHECKS.items()}


@pytest.mark.parametrize("name", sorted(n for n, c in _all_checks().items() if c.branch is not None))
def test_visible_cases_take_every_branch_the_hidden_ones_take(name):
    check = _all_checks()[name]
    visible = {check.branch(case) for case in check.cases()}
    hidden = {check.branch(case) for case in check.cases(hidden=True, entropy=2026) for _ in [0]}
    hidden |= {check.branch(check.random_case(rng)) for rng in hidden_rngs(500, entropy=7)}
    assert hidden <= visible, f"{name}: hidden cases take {sorted(map(str, hidden - visible))}, visible never"


def test_the_branches_a_review_found_are_covered():
    checks = _all_checks()
    assert 4 in {checks["context_windows"].branch(c) for c in checks["context_windows"].cases()}
    assert "tanh" in {checks["elman_forward"].branch(c) for c in checks["elman_forward"].cases()}


def test_coverage_cases_are_the_same_on_every_run():
    check = _all_checks()["context_windows"]
    first, second = check.cases(), check.cases()
    assert [c.inputs["n"] for c in first] == [c.inputs["n"] for c in second]
    assert all(np.array_equal(a.inputs["stream"], b.inputs["stream"]) for a, b in zip(first, second))
