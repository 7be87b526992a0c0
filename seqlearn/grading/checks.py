"""Generic machinery of the autograder: run a student's function, compare with the reference, explain.

An exercise is described by a :class:`FunctionCheck`: the reference it is graded against,
a few hand-written cases (the worked examples of the notebook) and a generator of random
cases. ``FunctionCheck.check(student_fn)`` runs the visible tests, and
``FunctionCheck.check(student_fn, hidden=True)`` the hidden ones. A test cell is one line
per kind of test::

    check_count_ngrams(count_ngrams)
    ### BEGIN HIDDEN TESTS
    check_count_ngrams(count_ngrams, hidden=True)
    ### END HIDDEN TESTS

A chapter's checks (see :mod:`seqlearn.grading.ngram`) are a few lines each::

    SCALE = FunctionCheck(
        name="scale",                        # the function's name in the notebook
        reference=seqlearn.some.scale,       # decorated with @reference
        random_case=lambda rng: Case({"x": rng.normal(size=3), "factor": 2.0}),
        fixed_cases=(Case({"x": np.ones(2), "factor": 3.0}, label="the worked example"),),
        hint="multiply every entry by the factor",
        rtol=1e-5,                           # float32 / torch results need looser tolerances
    )

and the chapter's table of them makes the functions test cells call, ``check_scale`` here::

    CHECKS = MappingProxyType({check.key: check for check in (SCALE, ...)})
    __all__ += define_checkers(globals(), CHECKS)

Each mistake costs points once
------------------------------
* A part that uses an earlier part's result is given that result, computed by the earlier
  part's reference (``given={"G_bar": lambda inputs: metric_bar(inputs["sigma"])}``): the
  student's function takes it as a keyword argument whose default, in the notebook, calls the
  student's own earlier function. Plain data, so the sealed grader's worker, which holds no
  reference, receives it like any other argument.
* Independent outputs of one function are graded apart: ``BPTT.entries(keys)`` makes one check
  per key of the returned mapping (``check_<name>_<key>``, on the function's own cases), each
  called by its own test cell with its share of the points.

Seed policy
-----------
* Visible cases are the hand-written cases followed by random cases drawn from seeds that
  are a pure function of the exercise's name (:func:`visible_rngs`): the same inputs on
  every machine and every run, so a student can reproduce a failure.
* Hidden cases are drawn from an entropy (:func:`hidden_rngs`): in a notebook, fresh OS
  entropy (:mod:`secrets`) at every run; under sealed grading, a value derived from the
  submission and a course secret (:mod:`seqlearn.course.sealed.draws`), so a regrade of the
  same submission draws the same cases, and recorded for the instructor, who can replay a
  draw (``check(fn, hidden=True, entropy=..., reveal=True)``, ``seqlearn replay``). The code
  that draws them is public (it ships with the package); what stays secret is the entropy,
  so no answer can be fitted to the hidden inputs.

What a failure says
-------------------
Results are compared by :func:`~seqlearn.grading.comparison.compare` (re-exported here, with
:class:`~seqlearn.grading.comparison.Mismatch`, :func:`~seqlearn.grading.comparison.same_values` and
:func:`~seqlearn.grading.comparison.matching_advice`, which the chapters' checks import from here).
A failure raises :class:`CheckFailure` (an ``AssertionError`` subclass, so test runners
treat it as a failed test) whose message names the function, the case, what differed
(wrong type, shape, dtype, length, missing or extra keys, or a value, with expected and
got), and a hint. For a visible case it also prints the input. For a hidden case it prints
nothing that the input or the student's code can spell out: not the input, not the expected
or the returned value (a function that returns its input would print it), not the shapes,
lengths or key counts that follow from them, not mapping keys, not the name of a class or an
exception class of the student's own, not the message of an exception the student's code
raised (it may quote the input); it says what kind of thing differs and where (which item or
entry), the types and dtypes by name, and the hints; the student's printed output is
swallowed. A student's exception is reported with its type, message and the line of their
code that raised it; a call to a graded reference (see :mod:`seqlearn.guard`) fails
the whole check with the guard's explanation.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dataclasses
import io
import secrets
import sysconfig
import textwrap
import traceback
import zlib
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..guard import ReferenceCallError, student_code
from ..validation import integer
from .comparison import Mismatch, _clip, _kind, compare, describe_type, matching_advice, same_values
from .worker import input_arrays

__all__ = [
    "Case",
    "CheckFailure",
    "FunctionCheck",
    "Mismatch",
    "compare",
    "define_checkers",
    "describe_type",
    "visible_rngs",
    "hidden_rngs",
    "same_values",
    "matching_advice",
]


class CheckFailure(AssertionError):
    """A failed autograder check; its message tells the student what to fix.

    In IPython the traceback is replaced by the message alone: the grader's stack frames
    would only distract from it.
    """

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or [""]
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {lines[0]}", *lines[1:]]


@dataclass(frozen=True)
class Case:
    """One input of a function under test.

    Parameters
    ----------
    inputs : mapping of str to object
        Argument name -> value, in the function's parameter order; passed positionally
        unless the name is in ``keywords``.
    keywords : tuple of str
        Names passed as keyword arguments.
    label : str
        Optional description shown in visible failures ("the worked example").
    """

    inputs: Mapping[str, Any]
    keywords: tuple[str, ...] = ()
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.inputs, Mapping):
            got = describe_type(self.inputs)
            raise TypeError(f"Case.inputs must be a mapping of argument names to values, got {got}")
        unknown = set(self.keywords) - set(self.inputs)
        if unknown:
            raise ValueError(f"Case.keywords names arguments that are not inputs: {sorted(unknown)}")

    def call(self, fn: Callable, inputs: Mapping[str, Any] | None = None) -> Any:
        """Call ``fn`` on ``inputs``, by default a deep copy of the case's (so it cannot alter the case)."""
        inputs = copy.deepcopy(dict(self.inputs)) if inputs is None else inputs
        args = [v for k, v in inputs.items() if k not in self.keywords]
        kwargs = {k: inputs[k] for k in self.keywords}
        return fn(*args, **kwargs)

    def describe(self) -> str:
        """The inputs as ``name=value, ...`` (abbreviated when long)."""
        return ", ".join(f"{k}={_clip(v, 600)}" for k, v in self.inputs.items())


# ----------------------------------------------------------------------------- seeds

COVERAGE_DRAWS = 400
"""Seeded draws searched for the branches that a check's visible cases miss (see ``FunctionCheck.branch``)."""


def visible_rngs(name: str, n: int) -> list[np.random.Generator]:
    """``n`` generators for the visible cases of exercise ``name``: the same on every run.

    The seed is the CRC-32 of the name (Python's ``hash`` of a str changes between runs).
    """
    _check_count(n)
    root = np.random.SeedSequence(zlib.crc32(name.encode("utf-8")))
    return [np.random.default_rng(s) for s in root.spawn(n)]


def hidden_rngs(n: int, entropy: int | None = None) -> list[np.random.Generator]:
    """``n`` generators for hidden cases, seeded from fresh OS entropy unless ``entropy`` is given.

    ``entropy`` exists so an instructor can replay a draw; graded hidden tests never pass it.
    """
    _check_count(n)
    if entropy is None:
        entropy = secrets.randbits(128)
    root = np.random.SeedSequence(entropy)
    return [np.random.default_rng(s) for s in root.spawn(n)]


def _check_count(n) -> None:
    integer(n, "the number of cases", low=0)


# ----------------------------------------------------------------------------- running student code


@dataclass(frozen=True)
class _Raised:
    """What a student's function raised: type name, message, and where in their code."""

    type_name: str
    message: str
    location: str
    builtin: bool = True  # a builtin exception type (another's name is the student's: it can spell the input)

    @classmethod
    def from_exception(cls, exc: BaseException) -> _Raised:
        where = getattr(exc, "seqlearn_location", None)  # set by the sealed grader, which has no traceback
        location = where if isinstance(where, str) else _student_location(exc)
        builtin = getattr(builtins, type(exc).__name__, None) is type(exc)
        return cls(type(exc).__name__, str(exc), location, builtin)

    def describe(self, hidden: bool) -> str:
        where = f" ({self.location})" if self.location else ""
        if hidden:
            name = self.type_name if self.builtin else "an exception of a class of its own"
            return f"raised {name}{where}; its message is withheld because it may quote the hidden input"
        return f"raised {self.type_name}: {self.message}{where}"


def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    dirs.add(str(Path(__file__).resolve().parents[1]))  # seqlearn itself
    return tuple(dirs)


def _student_location(exc: BaseException) -> str:
    """``line N of <function>: <code>`` for the innermost frame of the student's own code."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # drop Case.call
    library = _library_dirs()
    own = [f for f in frames if not str(Path(f.filename).resolve()).startswith(library)] or frames
    if not own:
        return ""
    frame = own[-1]
    code = f": {frame.line.strip()}" if frame.line else ""
    return f"line {frame.lineno} of {frame.name}{code}"


@contextlib.contextmanager
def _silenced(active: bool):
    """Swallow what the student's code prints (hidden cases: it could print the input)."""
    if not active:
        yield
        return
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


@dataclass(frozen=True)
class FunctionCheck:
    """How one exercise is graded: a reference, fixed cases, a random-case generator, hints.

    Parameters
    ----------
    name : str
        The function's name in the notebook (used in messages and to derive visible seeds).
    reference : callable
        The graded reference (a :func:`seqlearn.guard.reference`).
    random_case : callable
        ``random_case(rng) -> Case``: one random input drawn with a ``numpy`` Generator.
    fixed_cases : tuple of Case
        Hand-written visible cases (the notebook's worked examples), run first.
    n_visible, n_hidden : int
        Number of random visible and hidden cases.
    hint : str
        General advice appended to every failure.
    targeted_hint : callable, optional
        ``targeted_hint(case, expected, got) -> str or None``: advice for a specific wrong
        value. It must return fixed text (never quote the input): it is shown for hidden
        cases too.
    rtol, atol : float
        Tolerances of :func:`compare`.
    new_arrays : bool
        The function must return new arrays: returning (a view of) an argument's array fails.
    branch : callable, optional
        ``branch(case) -> hashable``: which branch of the function a case takes (an order ``n``,
        a nonlinearity). The visible cases then include a seeded case of every branch that
        :data:`COVERAGE_DRAWS` draws of the generator reach, so hidden cases test no branch the
        visible ones skip.
    given : mapping of str to callable
        Results of earlier parts the student's function is given as keyword arguments:
        argument name -> ``value(inputs)``, computed from the case's inputs by the earlier part's
        reference. The reference computes them itself, so a mistake in an earlier part costs
        its points once, not again in every part that uses it.
    entry : str, optional
        Grade only this entry of the result (a key of the mapping it returns): one check per
        entry (:meth:`entries`), each in its own test cell, gives independent outputs their own
        points. The cases are the whole function's (:attr:`name` seeds them).

    Notes
    -----
    If the reference raises ``ValueError`` or ``TypeError`` on a case, the student's
    function must raise the same type there.
    """

    name: str
    reference: Callable
    random_case: Callable[[np.random.Generator], Case]
    fixed_cases: tuple[Case, ...] = ()
    n_visible: int = 4
    n_hidden: int = 30
    hint: str = ""
    targeted_hint: Callable[[Case, Any, Any], str | None] | None = None
    rtol: float = 1e-9
    atol: float = 1e-12
    new_arrays: bool = False
    branch: Callable[[Case], Hashable] | None = None
    given: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    entry: str | None = None

    @property
    def key(self) -> str:
        """The check's name in a chapter's ``CHECKS`` (and ``check_<key>``): ``name``, or ``name_entry``."""
        return self.name if self.entry is None else f"{self.name}_{self.entry}"

    @property
    def graded(self) -> str:
        """What the messages name: the function, or the entry of its result (``bptt_gradients['W_hh']``)."""
        return self.name if self.entry is None else f"{self.name}[{self.entry!r}]"

    def entries(self, keys) -> tuple[FunctionCheck, ...]:
        """One check per key of the result, on this check's cases: the parts of a partial credit."""
        return tuple(dataclasses.replace(self, entry=key) for key in keys)

    def cases(self, hidden: bool = False, entropy: int | None = None) -> list[Case]:
        """The visible cases (fixed, seeded random, then one per branch they miss), or a fresh draw of hidden ones."""
        if hidden:
            return [self.random_case(rng) for rng in hidden_rngs(self.n_hidden, entropy)]
        visible = [*self.fixed_cases, *(self.random_case(rng) for rng in visible_rngs(self.name, self.n_visible))]
        return visible + self._coverage_cases(visible)

    def _coverage_cases(self, visible: list[Case]) -> list[Case]:
        """Seeded random cases of the branches (see ``branch``) that ``visible`` does not reach."""
        if self.branch is None:
            return []
        cached = self.__dict__.get("_coverage")
        if cached is not None:  # the draw is a pure function of the check: made once
            return list(cached)
        seen = {self.branch(case) for case in visible}
        extra = []
        for rng in visible_rngs(f"{self.name} coverage", COVERAGE_DRAWS):
            case = self.random_case(rng)
            key = self.branch(case)
            if key not in seen:
                seen.add(key)
                extra.append(case)
        object.__setattr__(self, "_coverage", tuple(extra))  # a cache, not a field: the dataclass is frozen
        return extra

    def check(self, student: Callable, hidden: bool = False, entropy: int | None = None, reveal: bool = False) -> None:
        """Grade ``student`` on the visible (or hidden) cases; raise :class:`CheckFailure` on the first failure.

        ``entropy``: the hidden draw (default: fresh, see :func:`hidden_rngs`). ``reveal``: a hidden
        failure says all a visible one does (input, expected and returned values): the instructor's
        replay of a recorded draw, never a student's feedback. Prints one line on success.
        """
        if not callable(student):
            raise CheckFailure(f"{self.graded} should be a function, but it is {describe_type(student)}.")
        cases = self.cases(hidden=hidden, entropy=entropy)
        withheld = hidden and not reveal
        for number, case in enumerate(cases, start=1):
            problem = self._first_problem(student, case, withheld)
            if problem:
                raise CheckFailure(self._message(self._given(case), number, len(cases), hidden, reveal, *problem))
        print(f"{self.graded}: all {len(cases)} {'hidden' if hidden else 'visible'} cases passed.")

    def _given(self, case: Case) -> Case:
        """``case`` as the student's function is called on it: with the earlier parts' results of ``given``."""
        if not self.given:
            return case
        given = {name: value(case.inputs) for name, value in self.given.items()}
        return Case({**case.inputs, **given}, keywords=(*case.keywords, *given), label=case.label)

    def _first_problem(self, student: Callable, case: Case, hidden: bool) -> tuple[str, str | None] | None:
        """``(what went wrong, targeted hint)`` for one case, or ``None`` if it passed."""
        expected, expected_error = self._expected(case)
        called = self._given(case)
        inputs = copy.deepcopy(dict(called.inputs))
        got, error = self._run_student(student, called, hidden, inputs)
        if error is not None:
            return _error_problem(error, expected_error, hidden)
        changed = [name for name, value in called.inputs.items() if _changed(value, inputs[name])]
        if changed:
            return f"it changed its argument {changed[0]!r} in place", (
                "leave the caller's arguments as they were: work on a copy (e.g. x = x.copy()) or build new arrays"
            )
        aliased = [name for name, value in inputs.items() if self.new_arrays and _shares_arrays(got, value)]
        if aliased:
            return f"it returned an array of its argument {aliased[0]!r} itself instead of a new array", (
                "the caller's arrays must not come back: return new arrays (e.g. g * 1.0 or g.copy()), even when "
                "nothing changes"
            )
        if expected_error is not None:
            reason = "" if hidden else f" ({expected_error})"
            should = f"it should raise {type(expected_error).__name__} here{reason}"
            return f"{should}, but it returned {_kind(got) if hidden else describe_type(got)}", None
        mismatch = compare(self._entry(expected), self._entry(got), rtol=self.rtol, atol=self.atol)
        if mismatch is None:
            return None
        return mismatch.describe(hidden), self._targeted_hint(case, expected, got, mismatch)

    def _entry(self, result: Any) -> Any:
        """What is graded of a result: all of it, or ``{entry: result[entry]}`` (a result without it is
        compared whole, so the comparison says what it lacks)."""
        if self.entry is None or not isinstance(result, Mapping) or self.entry not in result:
            return result
        return {self.entry: result[self.entry]}

    def _targeted_hint(self, case: Case, expected: Any, got: Any, mismatch: Mismatch) -> str | None:
        """The exercise's specific advice; only asked when ``got`` has the expected type.

        A result too odd for the hint function (it raises) simply gets no specific advice.
        """
        if self.targeted_hint is None or (mismatch.problem == "type" and not mismatch.path):
            return None
        try:
            return self.targeted_hint(case, expected, got)
        except Exception:
            return None

    def _expected(self, case: Case) -> tuple[Any, Exception | None]:
        """The reference's result on ``case``, or the ValueError/TypeError it raises."""
        try:
            return case.call(self.reference), None
        except (ValueError, TypeError) as exc:
            return None, exc

    def _run_student(
        self, student: Callable, case: Case, hidden: bool, inputs: dict | None = None
    ) -> tuple[Any, BaseException | None]:
        """The student's result on ``case`` (called on ``inputs``, a copy of its inputs), or the exception it raised.

        Calling a graded reference fails the whole check. An interrupt (nbgrader's timeout)
        propagates, stripped of any message the student's code gave it.
        """
        try:
            with student_code(), _silenced(hidden):
                return case.call(student, inputs), None
        except ReferenceCallError as exc:
            raise CheckFailure(f"{self.graded} scores zero: {exc}") from None
        except KeyboardInterrupt:
            raise KeyboardInterrupt from None
        except BaseException as exc:  # the student's bug (even SystemExit), reported as such
            return None, exc

    def _message(
        self, case: Case, number: int, total: int, hidden: bool, reveal: bool, problem: str, targeted: str | None
    ) -> str:
        """The failure: what went wrong first, then the hints, then the input (which can be long)."""
        kind = "hidden" if hidden else "visible"
        label = f" ({case.label})" if case.label and not hidden else ""
        lines = [f"{self.graded} failed {kind} case {number} of {total}{label}.", f"    problem: {problem}"]
        lines += [f"    hint: {hint}" for hint in (targeted, self.hint) if hint]
        if hidden and not reveal:
            lines.append("    input: withheld (hidden cases are drawn at grading time)")
        else:
            lines.append(f"    input: {case.describe()}")
        return "\n".join(lines)


def _changed(before: Any, after: Any) -> bool:
    """Whether an argument came back different from what was passed (NaN equals NaN)."""
    try:
        return compare(before, after, rtol=0.0, atol=0.0) is not None
    except Exception:
        return False


def _shares_arrays(result: Any, argument: Any) -> bool:
    """Whether an array of ``result`` shares memory with an array of ``argument``."""
    mine = input_arrays(argument)
    return any(np.shares_memory(a, b) for a in input_arrays(result) for b in mine if a.size and b.size)


def _error_problem(
    error: BaseException, expected_error: Exception | None, hidden: bool
) -> tuple[str, str | None] | None:
    """What to say about an exception the student's function raised (``None`` if it was expected)."""
    if expected_error is not None and isinstance(error, type(expected_error)):
        return None
    if isinstance(error, NotImplementedError) and expected_error is None:
        return "it raised NotImplementedError: it is not implemented yet", (
            "replace the `raise NotImplementedError()` line with your solution and run the cell again"
        )
    should = f"it should raise {type(expected_error).__name__} here, but it " if expected_error else "it "
    return should + _Raised.from_exception(error).describe(hidden), None


# ----------------------------------------------------------------------------- the functions test cells call

_CHECKER_DOC = """Grade your ``{name}`` on its visible cases, or on fresh hidden ones with ``hidden=True``.

{summary}

Parameters
----------
student_fn : callable
    Your ``{name}``.
hidden : bool
    Run the hidden cases, drawn fresh at each run (under sealed grading, from the submission and a
    course secret); a failure does not show their input.

Raises
------
CheckFailure
    At the first case that fails, saying what went wrong, with a hint.

Notes
-----
{hint}
"""


def _checker(check: FunctionCheck, module: str) -> Callable[..., None]:
    """``check_<name>(student_fn, hidden=False)``: grade with ``check``, named and documented as in ``module``."""

    def grade(student_fn, hidden: bool = False) -> None:
        check.check(student_fn, hidden=hidden)

    reference = f"{check.reference.__module__}.{check.reference.__qualname__}"
    graded = "each result" if check.entry is None else f"the entry {check.entry!r} of each result"
    summary = (
        f"Runs ``student_fn`` on {len(check.fixed_cases) + check.n_visible} visible cases (the notebook's worked "
        f"examples first) or on {check.n_hidden} hidden ones, compares {graded} with seqlearn's "
        f"``{reference}``, and prints one line when every case passes."
    )
    grade.__name__ = grade.__qualname__ = f"check_{check.key}"
    grade.__module__ = module
    grade.__doc__ = _CHECKER_DOC.format(
        name=check.name, summary=textwrap.fill(summary, 88), hint=textwrap.fill(check.hint, 88)
    )
    return grade


def define_checkers(namespace: dict, checks: Mapping[str, FunctionCheck]) -> list[str]:
    """Define ``check_<name>(student_fn, hidden=False)`` for each of ``checks`` in ``namespace``.

    Parameters
    ----------
    namespace : dict
        A chapter module's ``globals()``: test cells import the functions from that module.
    checks : mapping of str to FunctionCheck
        The chapter's ``CHECKS``.

    Returns
    -------
    list of str
        The names defined, for the module's ``__all__``.
    """
    checkers = [_checker(check, namespace["__name__"]) for check in checks.values()]
    namespace.update({checker.__name__: checker for checker in checkers})
    return [checker.__name__ for checker in checkers]
