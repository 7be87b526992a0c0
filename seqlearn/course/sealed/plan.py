"""Sealed grading, the plan: what grading a notebook runs, built from the course's files alone.

From the source notebooks of an assignment, :func:`load_assignment` makes a :class:`NotebookPlan`
per notebook: its release version (whose locked cells a student cannot change) and its autograded
test cells (:class:`TestCell`), each the ``check_<name>(<function>[, hidden=True])`` calls it may
hold and nothing else. From a submission, :func:`build_program` makes the student's program: the
release's locked code cells, the student's answers (matched by ``grade_id``) and the code cells the
student added, in notebook order, with a *capture* of the tested functions where each test cell
stands. :func:`holds_source_code` tells a copy of the source notebook (solution or hidden-test
delimiters) from a notebook a student saved.

Nothing here runs code: the program is text, run by :mod:`seqlearn.course.sealed.sandbox`'s worker.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from ...grading import ASSIGNMENTS
from ...grading.checks import FunctionCheck

_CHECK_PREFIX = "check_"


# ----------------------------------------------------------------------------- the assignment


@dataclass(frozen=True)
class TestCell:
    """An autograded test cell: its grade id, points and the checks it calls, in order."""

    grade_id: str
    points: float
    calls: tuple[tuple[str, str, bool], ...]  # (exercise name, the student's function name, hidden)
    source: str


@dataclass(frozen=True)
class NotebookPlan:
    """What grading one notebook needs: the release (locked cells) and source (tests) versions."""

    name: str
    release: nbformat.NotebookNode
    tests: tuple[TestCell, ...]

    @property
    def test_ids(self) -> set[str]:
        return {t.grade_id for t in self.tests}


def _nbgrader(cell) -> dict:
    """A cell's nbgrader metadata, or ``{}`` if it has none or it is not a mapping (corrupted)."""
    metadata = cell.get("metadata") if isinstance(cell, Mapping) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, Mapping) else None
    return dict(meta) if isinstance(meta, Mapping) else {}


def _test_calls(source: str, checks: Mapping[str, FunctionCheck], grade_id: str) -> tuple[tuple[str, str, bool], ...]:
    """The ``check_<name>(<function>[, hidden=True])`` calls of a test cell; anything else is refused."""
    calls = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        call = node.value if isinstance(node, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id.startswith(_CHECK_PREFIX)
            and call.func.id[len(_CHECK_PREFIX) :] in checks
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Name)
            and all(k.arg == "hidden" and isinstance(k.value, ast.Constant) for k in call.keywords)
        ):
            raise ValueError(
                f"test cell {grade_id!r} has code the sealed grader cannot run: {ast.unparse(node)!r} "
                "(test cells may only import and call check_<name>(<name>[, hidden=True]))"
            )
        hidden = any(bool(k.value.value) for k in call.keywords)  # type: ignore[attr-defined]
        calls.append((call.func.id[len(_CHECK_PREFIX) :], call.args[0].id, hidden))
    return tuple(calls)


def load_assignment(course, assignment: str) -> list[NotebookPlan]:
    """The notebooks of ``assignment`` in ``course`` with their test cells (from the source notebooks)."""
    from ..nbgrader_tools import course_directories

    course = Path(course)
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"no graded exercises for assignment {assignment!r}; known: {sorted(ASSIGNMENTS)}")
    checks = ASSIGNMENTS[assignment].CHECKS
    source_dir, release_dir = course_directories(course)
    plans = []
    for path in sorted((course / source_dir / assignment).glob("*.ipynb")):
        source = nbformat.read(path, as_version=4)
        release = nbformat.read(course / release_dir / assignment / path.name, as_version=4)
        tests = tuple(
            TestCell(
                meta["grade_id"], float(meta["points"]), _test_calls(cell.source, checks, meta["grade_id"]), cell.source
            )
            for cell in source.cells
            if cell.cell_type == "code" and (meta := _nbgrader(cell)).get("grade") and not meta.get("solution")
        )
        plans.append(NotebookPlan(path.name, release, tests))
    if not plans:
        raise ValueError(f"assignment {assignment!r} has no notebooks in {course / source_dir / assignment}")
    return plans


SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
"""nbgrader's delimiters of solution and hidden-test code: a release, hence a submission, holds none."""


def holds_source_code(student: Mapping) -> bool:
    """Whether a submitted notebook holds solution or hidden-test code: nbgrader's delimiters in any cell.

    A release has none (nbgrader removed them with the code between them), so neither has a
    notebook a student saved: one that holds them is a copy of the source notebook in ``solutions/``.
    """
    cells = student.get("cells") if isinstance(student, Mapping) else None
    sources = [_code_text(c.get("source", "")) for c in cells or () if isinstance(c, Mapping)]
    return any(marker in text for text in sources for marker in SOLUTION_MARKERS)


# ----------------------------------------------------------------------------- the program


def _code_text(source) -> str:
    """A cell's source as one string (a list keeps only its strings; anything else is empty)."""
    if isinstance(source, list):
        return "".join(line for line in source if isinstance(line, str))
    return source if isinstance(source, str) else ""


def _code(source) -> str:
    text = _code_text(source)
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(text)  # %magics and !shell become (failing) calls
    except Exception:
        return text


def build_program(plan: NotebookPlan, student: Mapping, notes: list[str] | None = None) -> list[tuple[str, str, Any]]:
    """The steps of a student's program: ``("exec", label, source)`` and ``("capture", test id, names)``.

    Locked code cells come from the release, answers from the student (by grade id), cells the
    student added (code cells with no nbgrader id of the release) follow the cell they were
    added after. An answer cell split in two or copied (both keep its grade id) is all its cells
    in order, and one whose type changed (a code answer made Markdown) is of its release type, as
    nbgrader reverts it; each such repair is said in ``notes``. ``ValueError`` if the submission
    is not a notebook.
    """
    cells = student.get("cells") if isinstance(student, Mapping) else None
    if not isinstance(cells, list):
        raise ValueError("the submission is not a notebook (it has no list of cells)")
    release_ids = {_nbgrader(c).get("grade_id") for c in plan.release.cells} - {None}
    answers: dict[str, list[Mapping]] = {}
    extra: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for cell in cells:
        if not isinstance(cell, Mapping):
            raise ValueError("the submission has a cell that is not a JSON object")
        grade_id = _nbgrader(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id in release_ids:
            anchor = grade_id
            answers.setdefault(grade_id, []).append(cell)
        elif cell.get("cell_type") == "code":
            extra.setdefault(anchor, []).append(_code(cell.get("source", "")))
    tests = {t.grade_id: t for t in plan.tests}
    steps: list[tuple[str, str, Any]] = [
        ("exec", f"<added cell {i + 1}>", s) for i, s in enumerate(extra.get(None, []))
    ]
    for cell in plan.release.cells:
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        if cell.cell_type == "code":
            if grade_id in tests:
                names = sorted({name for _, name, _ in tests[grade_id].calls})
                steps.append(("capture", grade_id, names))
            elif meta.get("solution"):
                mine = answers.get(str(grade_id), [])
                steps.append(("exec", f"<answer {grade_id}>", "\n".join(_code(c.get("source", "")) for c in mine)))
                _note_repairs(str(grade_id), mine, notes)
            else:
                steps.append(("exec", f"<cell {grade_id or cell.get('id')}>", cell.source))
        steps += [("exec", f"<added cell after {grade_id}>", s) for s in extra.get(grade_id, [])]
    return steps


def _note_repairs(grade_id: str, cells: list[Mapping], notes: list[str] | None) -> None:
    """Say in ``notes`` how a code answer's cells were taken: several of them, or of another type."""
    if notes is None:
        return
    if len(cells) > 1:
        notes.append(f"answer {grade_id} is in {len(cells)} cells (split or copied): graded as one, in order")
    kinds = sorted({str(c.get("cell_type"))[:20] for c in cells} - {"code"})
    if kinds:
        notes.append(f"answer {grade_id} was made a {' and '.join(kinds)} cell: graded as the code cell it is")
