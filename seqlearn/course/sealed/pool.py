"""Sealed grading, the pool: a class graded in parallel, then written to the gradebook.

:func:`grade_assignment` loads the assignment's plans (:mod:`seqlearn.course.sealed.plan`),
finds the submissions under ``submitted/``, checks the isolation level
(:func:`~seqlearn.course.sealed.sandbox.detect_level`) and grades the submissions in ``jobs``
grading processes, each with a worker slot of its own (its :class:`~seqlearn.course.sealed.sandbox.Runtime`,
its uid where the level gives one), one submission at a time
(:func:`~seqlearn.course.sealed.session.grade_submission`). An error of the grader on one
submission is recorded as that student's problem, and the class goes on. The results are then
written (:func:`~seqlearn.course.sealed.gradebook.write_results`).
"""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from .draws import course_secret
from .gradebook import _course_timeout, write_results
from .plan import load_assignment
from .sandbox import Limits, Runtime, _make_runtime, detect_level, free_uid_block
from .session import SealedResult, _failure, grade_submission

# ----------------------------------------------------------------------------- the class, in parallel

_POOL_STATE: dict[str, Any] = {}


def _init_pool(slots, root: str, level: str, limits: Limits, run: int, hide: tuple[str, ...]) -> None:
    slot = slots.get()
    _POOL_STATE["runtime"] = _make_runtime(Path(root) / f"slot-{slot}", level, slot, run, hide)
    _POOL_STATE["limits"] = limits


def _grade_in_pool(course: str, assignment: str, student: str, plans, secret: bytes, replay) -> SealedResult:
    state = _POOL_STATE
    return _grade_isolated(course, assignment, student, plans, state["runtime"], state["limits"], secret, replay)


def _grade_isolated(
    course, assignment: str, student: str, plans, runtime: Runtime, limits: Limits, secret: bytes, replay=None
) -> SealedResult:
    """:func:`grade_submission`, where any error is recorded as this student's problem (the class goes on)."""
    try:
        return grade_submission(course, assignment, student, plans, runtime, limits, secret, replay)
    except Exception as exc:  # a grader bug must not stop the class: record it
        result = SealedResult(student)
        result.problems.append(f"grader error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
        for plan in plans:
            result.parts[plan.name] = {t.grade_id: _failure(t, "grader error") for t in plan.tests}
        return result


def _students(course: Path, assignment: str, students) -> list[str]:
    # links are listed, to be refused with the reason (read_submitted), not silently skipped
    found = sorted(
        p.parent.name for p in (course / "submitted").glob(f"*/{assignment}") if p.is_dir() or p.is_symlink()
    )
    if students is None:
        return found
    missing = sorted(set(students) - set(found))
    if missing:
        raise ValueError(f"no submission of {assignment} by {missing} in {course / 'submitted'}")
    return list(students)


def grade_assignment(
    course,
    assignment: str,
    *,
    jobs: int | None = None,
    students: Sequence[str] | None = None,
    level: str | None = None,
    limits: Limits | None = None,
    write: bool = True,
    progress=None,
    replay=None,
) -> tuple[str, list[SealedResult]]:
    """Grade every submission of ``assignment`` in ``course``; write the gradebook and autograded notebooks.

    Parameters
    ----------
    course : path
        The nbgrader course directory (``nbgrader_config.py``, ``submitted/``, the gradebook).
    assignment : str
        E.g. ``"01_ngram"``; ``nbgrader generate_assignment`` must have recorded it in the gradebook.
    jobs : int, optional
        Submissions graded at once (default: the number of CPUs).
    students : list of str, optional
        Only these students (default: everyone under ``submitted/``).
    level : str, optional
        Isolation level (default: the strongest that works, :func:`detect_level`).
    limits : Limits, optional
        The workers' resource limits.
    write : bool
        Write scores to the gradebook and autograded notebooks (default); False only grades.
    progress : callable, optional
        Called with each :class:`SealedResult` as it is finished.
    replay : mapping, optional
        Notebook -> test cell -> {call: entropy}: grade only these cells of ``students`` from these
        recorded draws, failures revealed (see :func:`~.session.grade_submission`); nothing is written.

    Returns
    -------
    (level, results)
    """
    course = Path(course).resolve()
    limits = limits or Limits(timeout=_course_timeout(course))
    secret = course_secret(course)
    plans = load_assignment(course, assignment)
    names = _students(course, assignment, students)
    level = detect_level(level)
    jobs = max(1, min(jobs or len(os.sched_getaffinity(0)), max(len(names), 1)))  # the CPUs this process may use
    results: list[SealedResult] = []
    with tempfile.TemporaryDirectory(prefix="seqlearn-sealed-") as tmp:
        Path(tmp).chmod(0o711)
        block = free_uid_block(os.getpid(), jobs) if os.geteuid() == 0 else os.getpid()
        if jobs == 1:
            runtime = _make_runtime(Path(tmp) / "slot-0", level, 0, block, hide=(str(course),))
            for name in names:
                results.append(_grade_isolated(course, assignment, name, plans, runtime, limits, secret, replay))
                if progress:
                    progress(results[-1])
        else:
            import multiprocessing

            context = multiprocessing.get_context("fork")  # the grader's own processes: no re-import
            slots = context.Queue()
            for slot in range(jobs):
                slots.put(slot)
            setup: tuple = (slots, tmp, level, limits, block, (str(course),))
            with ProcessPoolExecutor(jobs, context, initializer=_init_pool, initargs=setup) as pool:
                futures = [
                    pool.submit(_grade_in_pool, str(course), assignment, n, plans, secret, replay) for n in names
                ]
                for future in futures:
                    results.append(future.result())
                    if progress:
                        progress(results[-1])
    if write and replay is None:
        write_results(course, assignment, plans, results)
    return level, results
