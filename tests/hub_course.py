"""A fresh copy of the course for an instructor, and the notebooks its students hand in.

Shared by the tests that run an instructor's whole cycle (``test_instructor_workflow.py``,
``test_hub.py``). :func:`fresh_course` copies what an nbgrader course directory of this course
holds (``nbgrader_config.py``, ``solutions/`` and ``exercises/``). :func:`full_submission` and
:func:`partial_submission` build a student's notebook from the solution and give the points it
deserves, counted from the source notebook's graded test cells (never from a grader's output).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from seqlearn.course.nbgrader_tools import course_directories, make_course, student_submission

ROOT = Path(__file__).resolve().parents[1]


def fresh_course(dest: Path, assignments: list[str] | None = None) -> Path:
    """Copy the course config, the sources and the releases of ``assignments`` (default: all) to ``dest``."""
    course = make_course(ROOT, dest, assignments)
    source, release = course_directories(ROOT)
    for folder in (course / source).iterdir():
        if folder.is_dir():
            shutil.copytree(ROOT / release / folder.name, course / release / folder.name, dirs_exist_ok=True)
    return course


def notebook_name(course: Path, assignment: str) -> str:
    """The file name of the assignment's (single) notebook."""
    source, _ = course_directories(course)
    (path,) = sorted((course / source / assignment).glob("*.ipynb"))
    return path.name


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _notebooks(course: Path, assignment: str) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """(source, release) versions of the assignment's notebook in ``course``."""
    source, release = course_directories(course)
    name = notebook_name(course, assignment)
    return tuple(nbformat.read(course / folder / assignment / name, as_version=4) for folder in (source, release))


def _test_cells(notebook) -> list[int]:
    """Indices of the autograded test cells: graded, not an answer."""
    return [i for i, c in enumerate(notebook.cells) if _meta(c).get("grade") and not _meta(c).get("solution")]


def full_submission(course: Path, assignment: str) -> tuple[nbformat.NotebookNode, float]:
    """The release answered with the solution's answers (as a student saves it), and its score: every point."""
    solution, release = _notebooks(course, assignment)
    return student_submission(solution, release), sum(_meta(solution.cells[i])["points"] for i in _test_cells(solution))


def partial_submission(course: Path, assignment: str) -> tuple[nbformat.NotebookNode, float]:
    """The solution with its first answer cell as released (blank), and the score it deserves.

    The blank answer loses the points of the test cell after it; every other test passes.
    """
    solution, total = full_submission(course, assignment)
    _, release = _notebooks(course, assignment)
    released = {c.id: c for c in release.cells}
    first = next(i for i, c in enumerate(solution.cells) if c.cell_type == "code" and _meta(c).get("solution"))
    solution.cells[first] = released[solution.cells[first].id]
    lost = _meta(solution.cells[min(i for i in _test_cells(solution) if i > first)])["points"]
    return solution, total - lost
