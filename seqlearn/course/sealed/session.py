"""Sealed grading, the session: one submission graded through its worker, the checks run in the grader.

:func:`grade_submission` reads each submitted notebook (:func:`read_submitted`: a regular file
reached through no symbolic link, of bounded size, else :class:`Refused`), builds its program
(:mod:`seqlearn.course.sealed.plan`) and runs it in a worker (:mod:`seqlearn.course.sealed.sandbox`)
step by step (:class:`_Session`, which restarts a worker that died, skipping the cell that killed it).
At each test cell, the same :class:`~seqlearn.grading.checks.FunctionCheck` as the notebook's runs
here on a :class:`_Proxy` of the student's function, whose calls go to the worker and whose answers
are decoded with the worker's codec; an exception of the student's code comes back as a builtin
type with a message of the grader's own (:func:`_student_exception`). Each test cell becomes a
:class:`PartResult` (full points or 0, with the grader's message and the entropy each hidden check
drew from, :mod:`seqlearn.course.sealed.draws`), each submission a :class:`SealedResult`.
A replay (``replay=``) grades only the test cells asked for, each hidden check from the entropy
given, with its failures revealed (input, expected and returned values): the instructor's view.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...grading import ASSIGNMENTS
from ...grading.checks import CheckFailure, FunctionCheck
from ...grading.worker import CodecError, decode, encode, input_arrays
from .draws import course_secret, hidden_entropy, program_digest
from .plan import NotebookPlan, TestCell, build_program, holds_source_code
from .sandbox import Limits, Runtime, Worker, WorkerLost

_MAX_NOTEBOOK = 32 * 2**20


# ----------------------------------------------------------------------------- checks through the worker

_BUILTIN_EXCEPTIONS = {
    name: cls for name, cls in vars(builtins).items() if isinstance(cls, type) and issubclass(cls, Exception)
}
_WITHHELD = "(the sealed grader does not show messages produced by your code)"
_NO_MODULE = re.compile(r"No module named '(seqlearn(?:\.[A-Za-z_][A-Za-z0-9_]*)*)'")


def _anonymous(wire: Any, depth: int = 0) -> Any:
    """A wire value with every ``opaque`` type name replaced by ``object`` (a name can spell a hidden input)."""
    if not isinstance(wire, list) or depth > 64:
        return wire
    if len(wire) == 2 and wire[0] == "opaque":
        return ["opaque", "object"]
    return [_anonymous(item, depth + 1) for item in wire]


def _student_exception(error: Any, located: bool = True) -> Exception:
    """A builtin exception of the type the worker named, with a message of the grader's own.

    ``located``: it names the line and function of the student's code that raised (not for hidden cases:
    a function's name, like a line number, can be made to spell the input).
    """
    name = error.get("type") if isinstance(error, dict) else None
    cls = _BUILTIN_EXCEPTIONS.get(name, Exception) if isinstance(name, str) else Exception
    message = _WITHHELD
    if name == "CodecError":
        return TypeError("the result could not be sent to the grader: it is too large or of an unsupported type")
    raw = error.get("message") if isinstance(error, dict) else None
    match = _NO_MODULE.match(raw) if isinstance(raw, str) and cls is ModuleNotFoundError else None
    if match:
        from ...guard import REFUSAL

        message = (
            f"No module named {match.group(1)!r}: under sealed grading the references and the rest of "
            f"seqlearn are not available to answers; {REFUSAL}. Write the computation yourself."
        )
    try:
        exc = cls(message)
    except Exception:
        exc = Exception(message)
    line, function = (error.get("line"), error.get("function")) if isinstance(error, dict) else (None, None)
    valid = type(line) is int and 0 < line < 10**6 and isinstance(function, str) and _FUNCTION.fullmatch(function)
    if located and valid:
        exc.seqlearn_location = f"line {line} of {function}"  # type: ignore[attr-defined]
    return exc


_FUNCTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}|<module>|<lambda>")


class _Proxy:
    """The student's function as the checks see it: each call goes to the worker."""

    def __init__(self, worker: Worker, key: str, name: str, deadline: float, hidden: bool = False):
        self.worker, self.key, self.name, self.deadline = worker, key, name, deadline
        self.hidden = hidden  # then no name the student's code made (a type's, a function's) reaches a message
        self.lost: str | None = None

    def __call__(self, *args, **kwargs):
        request = {"op": "call", "key": self.key, "name": self.name, "args": encode(list(args))}
        request["kwargs"] = encode(kwargs)
        try:
            answer = self.worker.request(request, self.deadline)
        except WorkerLost as exc:
            self.lost = str(exc)
            raise KeyboardInterrupt from None  # the checks let an interrupt through: grading stops here
        if answer.get("ok") is True and "result" in answer:
            try:
                after = decode(answer.get("after", ["list", []]))
                if isinstance(after, list) and len(after) == 2:
                    _apply_changes(list(args), after[0])  # what the call did to its arguments, as if here
                    _apply_changes(kwargs, after[1])
                result = _anonymous(answer["result"]) if self.hidden else answer["result"]
                return decode(result, aliases=input_arrays([list(args), kwargs]))
            except (CodecError, RecursionError, ValueError, TypeError):
                raise TypeError(
                    "the result could not be read by the grader (an unsupported or malformed value)"
                ) from None
        raise _student_exception(answer.get("error"), located=not self.hidden)


def _apply_changes(before: Any, after: Any, depth: int = 0) -> Any:
    """Make ``before`` (an argument sent to the worker) what the student's call left it as; returns it."""
    if depth > 64:
        return before
    if isinstance(before, np.ndarray):
        if isinstance(after, np.ndarray) and after.shape == before.shape:
            with contextlib.suppress(Exception):
                before[...] = after
        return before
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after):
            before[:] = [_apply_changes(b, a, depth + 1) for b, a in zip(before, after)]
        else:
            before[:] = after
    elif isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after):
        for b, a in zip(before, after):
            _apply_changes(b, a, depth + 1)
    elif isinstance(before, dict) and isinstance(after, dict):
        if list(before) == list(after):
            for key in before:
                before[key] = _apply_changes(before[key], after[key], depth + 1)
        else:
            before.clear()
            before.update(after)
    return before


@dataclass
class PartResult:
    """One test cell of one submission: score, the grader's message, and why it failed (if it did)."""

    grade_id: str
    score: float
    points: float
    output: str
    failed: bool
    reason: str = ""
    draws: tuple[tuple[int, str, int], ...] = ()  # (call in the cell, exercise, entropy) of each hidden check


@dataclass
class SealedResult:
    """How the sealed grader graded one submission (its notebooks' test cells, or the reason it could not be;
    nbgrader's own autograding gives :class:`seqlearn.course.nbgrader_tools.NbgraderResult`)."""

    student: str
    parts: dict[str, dict[str, PartResult]] = field(default_factory=dict)  # notebook -> grade id -> part
    programs: dict[str, str] = field(default_factory=dict)  # notebook -> program_digest of what was graded
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(p.score for nb in self.parts.values() for p in nb.values())

    @property
    def max_score(self) -> float:
        return sum(p.points for nb in self.parts.values() for p in nb.values())


def _failure(test: TestCell, reason: str, output: str | None = None) -> PartResult:
    return PartResult(test.grade_id, 0.0, test.points, output or reason, True, reason)


class _Session:
    """A submission's notebook running in a worker, step by step, restarted (skipping the culprit cell) when it dies."""

    MAX_STARTS = 4
    START_PAUSES = (0.5, 2.0, 5.0)  # seconds before each new try of a worker that failed to start

    def __init__(self, runtime: Runtime, limits: Limits, steps: list[tuple[str, str, Any]]):
        self.worker = Worker(runtime, limits)
        self.limits, self.steps = limits, steps
        self.skip: set[int] = set()
        self.found: dict[str, dict[str, str]] = {}
        self.starts = 0
        self.position = 0  # the next step the live worker has not run
        self.broken: str | None = None
        self.end = time.monotonic() + limits.notebook_seconds

    def deadline(self) -> float:
        """The per-cell timeout from now, within the notebook's total time."""
        return min(time.monotonic() + self.limits.timeout, self.end)

    def advance(self, upto: int) -> bool:
        """Run the program's steps up to index ``upto`` in a live worker, as the notebook would reach it.

        A worker that died is restarted and the steps replayed from the start, skipping a step that
        killed one or ran past the timeout. False (and ``broken`` says why) when that keeps failing.
        """
        while self.broken is None:
            if self.worker.proc is None and not self._restart():
                break
            while self.position <= upto:
                index, (op, label, payload) = self.position, self.steps[self.position]
                self.position += 1
                if index in self.skip:
                    continue
                try:
                    if op == "exec":
                        self.worker.request({"op": "exec", "name": label, "source": payload}, self.deadline())
                    else:
                        request = {"op": "capture", "key": label, "names": payload}
                        found = self.worker.request(request, self.deadline()).get("found")
                        self.found[label] = found if isinstance(found, dict) else {}
                except WorkerLost:
                    self.skip.add(index)
                    self.worker.close()
                    break
            else:
                return True
        return False

    def _restart(self) -> bool:
        if time.monotonic() >= self.end:
            self.broken = f"the notebook ran past its total time limit ({self.limits.notebook_seconds:g} s)"
        elif self.starts >= self.MAX_STARTS:
            self.broken = "the worker kept dying while running the notebook's cells"
        else:
            self.starts += 1
            self.position = 0
            problem = self._start()
            if problem:
                self.broken = f"the worker could not start ({problem})"
        return self.broken is None

    def _start(self) -> str | None:
        """Start the worker, retrying after a pause if it fails (a busy machine); why it failed, or None."""
        problem = None
        for pause in (*self.START_PAUSES, None):
            try:
                self.worker.start()
                return None
            except (WorkerLost, OSError) as exc:
                self.worker.close()
                problem = str(exc)
            if pause is None or time.monotonic() + pause >= self.end:
                break
            time.sleep(pause)
        return problem

    def close(self) -> None:
        self.worker.cleanup()


def _run_test(
    session: _Session,
    test: TestCell,
    checks: Mapping[str, FunctionCheck],
    entropies: Mapping[int, int] | None = None,
    reveal: bool = False,
) -> PartResult:
    """Grade one test cell where it stands in the notebook: after the cells above it, before those below.

    ``entropies``: call in the cell -> the entropy of that hidden check (default: fresh OS entropy),
    recorded in the result. ``reveal``: hidden failures say everything, as visible ones do (a replay).
    """
    if entropies is None:
        entropies = {i: secrets.randbits(128) for i, (_, _, hidden) in enumerate(test.calls) if hidden}
    draws = tuple((i, exercise, entropies[i]) for i, (exercise, _, hidden) in enumerate(test.calls) if hidden)
    result = _run_checks(session, test, checks, entropies, reveal)
    result.draws = draws
    return result


def _run_checks(session, test, checks, entropies, reveal) -> PartResult:
    """:func:`_run_test`'s grading: the first failing check of the cell, else full points."""
    (position,) = [i for i, (op, label, _) in enumerate(session.steps) if op == "capture" and label == test.grade_id]
    if not session.advance(position):
        return _failure(test, session.broken or "the worker is not available")
    found = session.found.get(test.grade_id, {})
    deadline = session.deadline()
    printed = io.StringIO()
    for call, (exercise, name, hidden) in enumerate(test.calls):
        kind = found.get(name, "missing")
        if kind == "missing":
            return _failure(test, f"NameError: name {name!r} is not defined")
        if kind != "callable":
            return _failure(test, f"CheckFailure: {name} should be a function, but it is not")
        proxy = _Proxy(session.worker, test.grade_id, name, deadline, hidden and not reveal)
        try:
            with contextlib.redirect_stdout(printed):
                checks[exercise].check(proxy, hidden=hidden, entropy=entropies.get(call), reveal=reveal)
        except CheckFailure as failure:
            return _failure(test, f"{name} failed", f"CheckFailure: {failure}")
        except KeyboardInterrupt:
            reason = proxy.lost or "interrupted"
            session.worker.close()
            return _failure(test, f"{name}: {reason}", f"CheckFailure: {name} could not be graded: {reason}")
        except Exception as exc:  # the checks could not judge what came back: this part fails, nothing more
            return _uncomparable(test, name, exc)
    return PartResult(test.grade_id, test.points, test.points, printed.getvalue(), False)


class Refused(ValueError):
    """A submitted file the grader will not grade: the reason is the message (the grader's words only)."""


def read_submitted(course, student: str, assignment: str, name: str, limit: int) -> bytes:
    """The bytes of ``submitted/<student>/<assignment>/<name>`` in ``course``, at most ``limit`` of them.

    Only a regular file is read, reached through no symbolic link (``O_NOFOLLOW`` at every step
    below ``submitted/``): a link to ``solutions/`` or to a file outside is refused, not followed.

    Raises
    ------
    Refused
        A part of the path is a symbolic link, the file is not a regular file, or it is larger than ``limit``.
    OSError
        It does not exist or cannot be read.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fds = [os.open(Path(course) / "submitted", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        for part, what in ((student, os.O_DIRECTORY), (assignment, os.O_DIRECTORY), (name, os.O_NONBLOCK)):
            try:
                fds.append(os.open(part, flags | what, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused(f"{part} is a symbolic link (only regular files are graded)") from None
                raise
        info = os.fstat(fds[-1])
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{name} is not a regular file")
        with os.fdopen(os.dup(fds[-1]), "rb") as file:
            data = file.read(limit + 1)
        if len(data) > limit or info.st_size > limit:
            raise Refused(f"larger than {limit // 2**20} MiB" if limit >= 2**20 else f"larger than {limit} bytes")
        return data
    finally:
        for fd in fds:
            os.close(fd)


def _entropies(secret: bytes, student: str, plan: NotebookPlan, test: TestCell, program: str) -> dict[int, int]:
    """Call in the cell -> the entropy of that hidden check of this program (:func:`~.draws.hidden_entropy`)."""
    return {
        i: hidden_entropy(secret, student, plan.name, test.grade_id, i, exercise, program)
        for i, (exercise, _, hidden) in enumerate(test.calls)
        if hidden
    }


def _uncomparable(test: TestCell, name: str, exc: Exception) -> PartResult:
    """A test cell whose checks raised on a student's result: failed, naming the error's type only."""
    kind = type(exc).__name__ if type(exc) in _BUILTIN_EXCEPTIONS.values() else "an error"
    reason = f"{name}: its result could not be compared with the expected one ({kind})"
    return _failure(test, reason, f"CheckFailure: {reason}")


def grade_submission(
    course,
    assignment: str,
    student: str,
    plans: Sequence[NotebookPlan],
    runtime: Runtime,
    limits: Limits,
    secret: bytes | None = None,
    replay: Mapping[str, Mapping[str, Mapping[int, int]]] | None = None,
) -> SealedResult:
    """Grade one student's submission of ``assignment`` (every notebook), in its own worker per notebook.

    ``secret``: the key of the hidden draws (default: the course's, :func:`~.draws.course_secret`).
    ``replay``: notebook -> test cell -> {call: entropy}: grade only these cells, from these draws,
    with failures revealed (:func:`~seqlearn.course.sealed.replay.replay_submission`).
    """
    start = time.perf_counter()
    result = SealedResult(student)
    checks = ASSIGNMENTS[assignment].CHECKS
    secret = course_secret(course) if secret is None and replay is None else secret
    for plan in plans:
        if replay is not None and plan.name not in replay:
            continue
        try:
            notebook = json.loads(read_submitted(course, student, assignment, plan.name, _MAX_NOTEBOOK))
            if holds_source_code(notebook):
                raise Refused("it holds solution or hidden-test code of the source notebook, which no answer holds")
            steps = build_program(plan, notebook, result.problems)
        except (OSError, ValueError, RecursionError) as exc:
            why = f"was refused: {exc}" if isinstance(exc, Refused) else f"could not be read: {type(exc).__name__}"
            reason = f"{plan.name} {why}"
            result.problems.append(reason)
            result.parts[plan.name] = {t.grade_id: _failure(t, reason) for t in plan.tests}
            continue
        program = result.programs[plan.name] = program_digest(steps)
        session = _Session(runtime, limits, steps)
        try:
            if replay is None:
                assert secret is not None  # the course's key, read above whenever nothing is replayed
                result.parts[plan.name] = {
                    t.grade_id: _run_test(session, t, checks, _entropies(secret, student, plan, t, program))
                    for t in plan.tests
                }
            else:
                cells = replay[plan.name]
                result.parts[plan.name] = {
                    t.grade_id: _run_test(session, t, checks, cells[t.grade_id], reveal=True)
                    for t in plan.tests
                    if t.grade_id in cells
                }
        finally:
            session.close()
    result.seconds = time.perf_counter() - start
    return result
