"""Sealed grading, the replay: one student's graded test cells run again from their recorded draws.

``seqlearn replay NN_slug STUDENT [CELL]`` (:func:`replay_submission`) reads the draws that
grading recorded in ``autograded/<student>/NN_slug/`` (each test cell's ``metadata.seqlearn``,
:func:`~seqlearn.course.sealed.gradebook.draws_record`), grades the submission's cell again in a
worker, each hidden check drawing its cases from the recorded entropy, and returns the grader's
messages with the hidden failures revealed: the failing case's input, the expected and the
returned value, as a visible failure says them. Nothing is written: not the gradebook, not the
autograded notebooks. Without ``CELL`` every test cell that lost its points is replayed.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from .plan import _nbgrader, load_assignment
from .pool import grade_assignment
from .session import PartResult


def recorded_draws(course, assignment: str, student: str) -> dict[str, dict[str, dict]]:
    """Notebook -> test cell -> its ``metadata.seqlearn`` record, from the student's autograded notebooks.

    ``FileNotFoundError`` if the submission was not graded by ``seqlearn grade``.
    """
    folder = Path(course) / "autograded" / student / assignment
    records: dict[str, dict[str, dict]] = {}
    for plan in load_assignment(course, assignment):
        path = folder / plan.name
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist: grade {student}'s submission with `seqlearn grade` first")
        cells = nbformat.read(path, as_version=4).cells
        records[plan.name] = {
            _nbgrader(c)["grade_id"]: dict(c.metadata["seqlearn"])
            for c in cells
            if _nbgrader(c).get("grade_id") in plan.test_ids and "seqlearn" in c.metadata
        }
    return records


def replay_submission(
    course, assignment: str, student: str, cell: str | None = None, level: str | None = None, limits=None
) -> tuple[list[str], dict[str, dict[str, PartResult]]]:
    """Replay ``student``'s test cell ``cell`` (default: each one that lost its points) from its recorded draws.

    Returns ``(notes, parts)``: what to know first (nothing to replay, a submission changed since it
    was graded) and notebook -> test cell -> the replayed :class:`PartResult`, whose output reveals
    a hidden failure. ``ValueError`` if ``cell`` is not a graded test cell of the assignment.
    """
    records = recorded_draws(course, assignment, student)
    chosen = {
        notebook: {grade_id: record for grade_id, record in cells.items() if _wanted(grade_id, record, cell)}
        for notebook, cells in records.items()
    }
    if cell is not None and not any(cell in cells for cells in chosen.values()):
        known = sorted(g for cells in records.values() for g in cells)
        raise ValueError(f"{cell!r} is not a graded test cell of {assignment}; its test cells: {known}")
    replay = {
        notebook: {g: {d["call"]: int(d["entropy"], 16) for d in r["hidden_draws"]} for g, r in cells.items()}
        for notebook, cells in chosen.items()
        if cells
    }
    if not replay:
        return [f"{student} lost no points in a test cell of {assignment}: nothing to replay"], {}
    _, (result,) = grade_assignment(
        course, assignment, jobs=1, students=[student], level=level, limits=limits, replay=replay
    )
    notes = list(result.problems)
    for notebook, cells in chosen.items():
        program = result.programs.get(notebook)
        if cells and program != next(iter(cells.values())).get("program"):
            notes.append(
                f"{notebook} changed since it was graded: the recorded draws run on the submission as it is now"
            )
    return notes, result.parts


def _wanted(grade_id: str, record: dict, cell: str | None) -> bool:
    """Whether to replay a recorded test cell: the one asked for, else every one that lost its points."""
    return grade_id == cell if cell is not None else not record.get("passed", True)
