"""Sealed grading, the gradebook: the results of a class written where nbgrader keeps them.

:func:`write_results` records each :class:`~seqlearn.course.sealed.session.SealedResult` in
the course's gradebook through :class:`nbgrader.api.Gradebook` (found as nbgrader finds it:
:func:`_nbgrader_config`, :func:`_db`): autograded test cells get their ``auto_score``, written
answers nbgrader's "no response" zero when unchanged, and manual scores are never touched. Beside
it, :func:`_autograded_notebook` writes ``autograded/<student>/NN_slug/``: the submission with the
source notebook's test cells, whose outputs are the grader's messages and whose ``seqlearn``
metadata records the graded program's digest and the entropy of each hidden check (for
``seqlearn replay``; feedback pages do not show cell metadata), and the submission's nbgrader
records (timestamp, secret), so that ``nbgrader generate_feedback`` works as after autograde. One
submission whose record cannot be written costs only its own.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat

from .plan import NotebookPlan, _code_text, _nbgrader, holds_source_code
from .sandbox import Limits
from .session import _MAX_NOTEBOOK, PartResult, Refused, SealedResult, read_submitted

# ----------------------------------------------------------------------------- the course's nbgrader settings


def _nbgrader_config(course: Path):
    """nbgrader's configuration as nbgrader loads it for this course: the ``nbgrader_config.py``
    of each Jupyter configuration directory (system, environment, user: a hub's settings for
    every course usually live in ``/etc/jupyter``), then the course's own, each overriding the
    ones before."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for directory in [*reversed(jupyter_config_path()), str(course)]:
        if (Path(directory) / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=directory).load_config())
    return config


def _course_timeout(course: Path) -> float:
    """nbgrader's per-cell timeout for the course (``Execute.timeout``, or the
    ``ExecutePreprocessor.timeout`` it inherits), else :attr:`Limits.timeout`."""
    with contextlib.suppress(Exception):  # a configuration nbgrader cannot load either: the default
        config = _nbgrader_config(course)
        for section in ("Execute", "ExecutePreprocessor"):
            value = config.get(section, {}).get("timeout")
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
    return Limits.timeout


# ----------------------------------------------------------------------------- the gradebook and feedback


def _db(course: Path) -> tuple[str, str]:
    config = _nbgrader_config(course).get("CourseDirectory", {})
    url, course_id = config.get("db_url", ""), config.get("course_id", "")
    return url or f"sqlite:///{course / 'gradebook.db'}", course_id or "default_course"


def _output(text: str, failed: bool) -> nbformat.NotebookNode:
    if not failed:
        return nbformat.v4.new_output("stream", name="stdout", text=text)
    ename, _, evalue = text.partition(": ")
    return nbformat.v4.new_output("error", ename=ename or "CheckFailure", evalue=evalue, traceback=[text])


def _autograded_notebook(plan: NotebookPlan, source_tests, submitted: Path, parts: Mapping[str, PartResult]):
    """The submission as nbgrader's autograde would leave it: source test cells, with the grader's outputs.

    ``submitted`` is ``<course>/submitted/<student>/<assignment>/<notebook>``, read as :func:`read_submitted` reads it.
    """
    try:
        course, (student, assignment, name) = submitted.parents[3], submitted.parts[-3:]
        data = read_submitted(course, student, assignment, name, _MAX_NOTEBOOK)
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
        if holds_source_code(notebook):
            raise Refused("holds source code")
        students: dict[Any, list[str]] = {}
        for mine in notebook.cells:  # an answer split in two, or of a changed type, keeps its text
            students.setdefault(_nbgrader(mine).get("grade_id"), []).append(_code_text(mine.get("source", "")))
    except Exception:
        students = {}
    result = nbformat.from_dict(plan.release)
    for index, cell in enumerate(result.cells):
        meta = _nbgrader(cell)
        grade_id = str(meta.get("grade_id"))
        if grade_id in parts:
            cell.source = source_tests[grade_id].source
            cell.outputs = [_output(parts[grade_id].output, parts[grade_id].failed)]
        elif meta.get("solution") and grade_id in students:
            cell.source = "\n".join(students[grade_id])
        result.cells[index] = cell
    return result


def draws_record(part: PartResult, program: str) -> dict:
    """What a test cell's ``metadata.seqlearn`` records: the graded program's digest, whether the cell
    passed, and each hidden check's call, exercise and entropy (hex), as ``seqlearn replay`` reads them."""
    draws = [{"call": call, "check": exercise, "entropy": f"{entropy:#x}"} for call, exercise, entropy in part.draws]
    return {"program": program, "passed": not part.failed, "hidden_draws": draws}


def write_results(course, assignment: str, plans: Sequence[NotebookPlan], results: Sequence[SealedResult]) -> None:
    """Record ``results`` in the course's gradebook and write the autograded notebooks feedback is made from."""
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course)
    url, course_id = _db(course)
    with warnings.catch_warnings(), Gradebook(url, course_id) as gradebook:
        warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's own, as in autograde
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise ValueError(
                f"no assignment {assignment!r} in the gradebook: run `nbgrader generate_assignment {assignment}` first"
            ) from None
        for result in results:
            try:
                _write_result(course, assignment, plans, result, gradebook)
            except Exception as exc:  # one submission's record must not cost the others theirs
                gradebook.db.rollback()
                result.problems.append(f"not written to the gradebook: {type(exc).__name__}")


def _write_result(course: Path, assignment: str, plans: Sequence[NotebookPlan], result: SealedResult, gradebook):
    """Record one submission's scores and write its autograded notebooks (committed together)."""
    submitted = course / "submitted" / result.student / assignment
    gradebook.update_or_create_student(result.student)
    timestamp = _timestamp(course, result.student, assignment)
    extra = {"timestamp": timestamp} if timestamp else {}
    gradebook.update_or_create_submission(assignment, result.student, **extra)
    out_dir = course / "autograded" / result.student / assignment
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in _NBGRADER_RECORDS:
        _copy_record(course, result.student, assignment, name, out_dir)
    for plan in plans:
        parts = result.parts.get(plan.name, {})
        notebook_id = Path(plan.name).stem
        for part in parts.values():
            grade = gradebook.find_grade(part.grade_id, notebook_id, assignment, result.student)
            grade.auto_score = part.score
            grade.needs_manual_grade = grade.manual_score is not None
        tests = {t.grade_id: t for t in plan.tests}
        autograded = _autograded_notebook(plan, tests, submitted / plan.name, parts)
        for cell in autograded.cells:
            meta = _nbgrader(cell)
            if meta.get("grade_id") in parts:  # the draws it was graded with, for seqlearn replay
                cell.metadata["seqlearn"] = draws_record(parts[meta["grade_id"]], result.programs.get(plan.name, ""))
            if meta.get("solution") or meta.get("task"):
                _record_answer(gradebook, cell, meta, notebook_id, assignment, result.student)
        nbformat.write(autograded, out_dir / plan.name)
    gradebook.db.commit()


def _record_answer(gradebook, cell, meta, notebook_id: str, assignment: str, student: str) -> None:
    """nbgrader's treatment of an answer cell: 0 and "No response." when unchanged, else left for the grader."""
    from nbgrader.utils import compute_checksum, determine_grade

    if meta.get("grade"):
        grade = gradebook.find_grade(meta["grade_id"], notebook_id, assignment, student)
        auto, _ = determine_grade(cell)
        grade.auto_score = auto
        grade.needs_manual_grade = grade.manual_score is not None or auto is None
    comment = gradebook.find_comment(meta["grade_id"], notebook_id, assignment, student)
    unchanged = meta.get("checksum") == compute_checksum(cell)
    comment.auto_comment = "No response." if unchanged else None


_NBGRADER_RECORDS = ("timestamp.txt", "submission_secret.txt")
"""What nbgrader keeps beside a submission: ``release_feedback`` finds the exchange's feedback folder by the secret."""


_MAX_RECORD = 4096


def _copy_record(course: Path, student: str, assignment: str, name: str, out_dir: Path) -> None:
    """Copy one of :data:`_NBGRADER_RECORDS` beside the autograded notebook, if it is a small regular file."""
    target = out_dir / name
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    try:
        data = read_submitted(course, student, assignment, name, _MAX_RECORD)
    except (OSError, ValueError):
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _timestamp(course: Path, student: str, assignment: str):
    from nbgrader.utils import parse_utc

    with contextlib.suppress(Exception):
        text = read_submitted(course, student, assignment, "timestamp.txt", _MAX_RECORD).decode("utf-8")
        return parse_utc(text.strip())
    return None
