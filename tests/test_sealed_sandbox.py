"""Sealed grading (``seqlearn grade``) as it is deployed: one submission never sinks another,
only regular files are graded, the level is never weaker than asked, and the sandbox holds no
reference however seqlearn is installed.

Each test grades a few submissions of 01_ngram in a scratch course and says what a hostile
one tried; the honest submission graded beside it keeps its full marks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from seqlearn.grading import sealed
from seqlearn.grading.nbgrader_tools import make_course, run_nbgrader, student_submission
from seqlearn.grading.sealed import Limits, PartResult, grade_assignment

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_ngram"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
LIMITS = Limits(timeout=10)
HAS_BWRAP = shutil.which("bwrap") is not None


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _notebook(kind: str):
    """``"blank"``: the release; ``"solution"``: the release answered with the solutions, as a student saves it."""
    blank = nbformat.read(ROOT / "exercises" / ASSIGNMENT / NOTEBOOK, as_version=4)
    if kind == "blank":
        return blank
    return student_submission(nbformat.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, as_version=4), blank)


def _with_answer(notebook, grade_id: str, source: str):
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if _meta(c).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _submit(course: Path, student: str, notebook) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / NOTEBOOK)
    return folder / NOTEBOOK


def _lost(result) -> dict[str, str]:
    return {g: p.reason for nb in result.parts.values() for g, p in nb.items() if p.failed}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course holding 01_ngram (recorded in its gradebook) and an honest submission."""
    course = make_course(ROOT, tmp_path_factory.mktemp("sandbox") / "course", [ASSIGNMENT])
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    _submit(course, "honest", _notebook("solution"))
    return course


# ----------------------------------------------------------------------------- one submission, one student

HUGE = "def add_k_prob(*args, **kwargs):\n    return 10**400\n"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_result_the_comparison_cannot_take_fails_only_that_students_part(course, jobs):
    """``10**400`` for a probability: float() of it overflows in the comparison."""
    _submit(course, "huge_number", _with_answer(_notebook("solution"), "add_k_prob", HUGE))
    _, results = grade_assignment(
        course, ASSIGNMENT, jobs=jobs, students=["honest", "huge_number"], limits=LIMITS, write=False
    )
    scores = {r.student: r for r in results}
    assert scores["honest"].score == scores["honest"].max_score == 14
    assert list(_lost(scores["huge_number"])) == ["add_k_prob_tests"], _lost(scores["huge_number"])
    assert scores["huge_number"].score == 12


class _Session:
    """A session whose worker is never asked: the checks raise before they call the function."""

    def __init__(self):
        self.steps = [("capture", "t", ["f"])]
        self.found = {"t": {"f": "callable"}}
        self.broken, self.worker = None, None

    def advance(self, upto: int) -> bool:
        return True

    def deadline(self) -> float:
        return 0.0


class _Raising:
    def check(self, student, hidden: bool = False) -> None:
        raise ZeroDivisionError("grader-side arithmetic on the student's result")


def test_any_error_of_the_checks_is_a_failed_part_not_a_stopped_run():
    test = sealed.TestCell("t", 2.0, (("ex", "f", True),), "check_ex(f, hidden=True)")
    part = sealed._run_test(_Session(), test, {"ex": _Raising()})  # type: ignore[arg-type]
    assert isinstance(part, PartResult) and part.failed and part.score == 0
    assert "ZeroDivisionError" in part.output and "grader-side" not in part.output


def _gradebook(course: Path) -> dict[str, dict[str, float | None]]:
    """Student -> autograded cell -> auto_score, as the gradebook holds them now."""
    from nbgrader.api import Gradebook

    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "seqlearn") as gradebook:
        for submission in gradebook.find_assignment(ASSIGNMENT).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell.cell_type == "code":
                        scores.setdefault(submission.student.id, {})[grade.name] = grade.auto_score
    return scores


@pytest.mark.integration
@pytest.mark.slow
def test_a_submission_that_cannot_be_written_costs_only_its_own_record(course, monkeypatch):
    _submit(course, "unwritable", _notebook("solution"))
    written = sealed._autograded_notebook

    def failing(plan, tests, submitted, parts):
        if "unwritable" in submitted.parts:
            raise RecursionError("a notebook too deep for nbformat")
        return written(plan, tests, submitted, parts)

    monkeypatch.setattr(sealed, "_autograded_notebook", failing)
    _, results = grade_assignment(course, ASSIGNMENT, jobs=1, students=["unwritable", "honest"], limits=LIMITS)
    problems = {r.student: r.problems for r in results}
    assert problems == {"unwritable": ["not written to the gradebook: RecursionError"], "honest": []}
    stored = _gradebook(course)
    assert sum(v or 0 for v in stored["honest"].values()) == 14
    assert not any(stored.get("unwritable", {}).values())


# ----------------------------------------------------------------------------- only regular files, no solutions


def _link(course: Path, student: str, target: Path, name: str = NOTEBOOK) -> None:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).symlink_to(target)


@pytest.mark.integration
@pytest.mark.slow
def test_symlinks_and_copies_of_the_solutions_are_refused(course, tmp_path):
    solutions = course / "solutions" / ASSIGNMENT
    _link(course, "linked_notebook", solutions / NOTEBOOK)  # placed in submitted/ (or collected as a link)
    (course / "submitted" / "linked_folder").mkdir()
    (course / "submitted" / "linked_folder" / ASSIGNMENT).symlink_to(solutions)
    (course / "submitted" / "linked_student").symlink_to(course / "submitted" / "honest")
    shutil.copytree(solutions, course / "submitted" / "copied" / ASSIGNMENT)  # what `nbgrader collect` made of a link
    pasted = _notebook("solution")  # the source's hidden tests pasted into a cell of the student's
    pasted.cells.append(nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\npass\n### END HIDDEN TESTS"))
    _submit(course, "pasted", pasted)
    secret = tmp_path / "instructor-secret.txt"
    secret.write_text("INSTRUCTOR-ONLY " * 10)
    _link(course, "linked_timestamp", secret, "timestamp.txt")
    (course / "submitted" / "linked_timestamp" / ASSIGNMENT / NOTEBOOK).write_text(nbformat.writes(_notebook("blank")))
    students = [
        "honest",
        "linked_notebook",
        "linked_folder",
        "linked_student",
        "copied",
        "pasted",
        "linked_timestamp",
    ]
    _, results = grade_assignment(course, ASSIGNMENT, jobs=2, students=students, limits=LIMITS)
    scores = {r.student: r.score for r in results}
    assert scores == dict.fromkeys(students, 0.0) | {"honest": 14.0}, scores
    problems = {r.student: " ".join(r.problems) for r in results}
    assert all("symbolic link" in problems[s] for s in ("linked_notebook", "linked_folder", "linked_student"))
    assert "solution or hidden-test code" in problems["copied"] and "hidden-test" in problems["pasted"]
    stored = _gradebook(course)
    assert all(not any(stored[s].values()) for s in students if s != "honest"), stored
    for student in students:
        for path in (course / "autograded" / student / ASSIGNMENT).glob("*"):
            text = path.read_text()
            assert "INSTRUCTOR-ONLY" not in text and "BEGIN SOLUTION" not in text, path
    assert not (course / "autograded" / "linked_timestamp" / ASSIGNMENT / "timestamp.txt").exists()
