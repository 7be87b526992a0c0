"""The grading round trip with nbgrader for real, for every assignment, and the nbgrader tooling it relies on.

One module-scoped fixture, parametrized over the assignments under ``solutions/``, grades five
submissions of an assignment in a single autograde run (solution, blank release, delegating
answer, an infinite loop, a probe that records and prints its hidden inputs) and generates their
feedback; the tests inspect the results. What the tests need to know about an assignment (its
graded functions, their test cells and points) is read from the source notebook, and its checks
from :data:`seqlearn.grading.ASSIGNMENTS`.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from seqlearn import grading
from seqlearn.course.nbgrader_tools import (
    HideHiddenTests,
    check_grading,
    delegating_notebook,
    generate_exercises,
    hidden_test_lines,
    html_text,
    release_differences,
    student_submission,
)
from seqlearn.course.sealed import Limits, grade_assignment
from seqlearn.grading import REFUSAL

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir() and not p.name.startswith("."))
TIMEOUT = 8  # seconds per cell for the round trip (the course default is 60)

LOOP = """
def {name}({args}):
    i = 0
    while i < 10:
        pass
"""

PROBE = """
import json, os
from IPython.display import display
_calls = []  # markers are concatenated at run time, so the source does not contain them

{solution}

def {name}(*args, **kwargs):
    _calls.append(1)
    result = _solution_{name}(*args, **kwargs)
    if len(_calls) <= {n_visible}:
        print("PROBE-" + "VISIBLE-CALL", *args)
        return result
    with open("hidden_inputs.jsonl", "a") as f:
        f.write(json.dumps([[repr(a), str(a)] for a in args]) + "\\n")
    print("PROBE-" + "HIDDEN-CALL", *args)
    os.write(1, ("PROBE-" + "HIDDEN-FD\\n").encode())
    display("PROBE-" + "HIDDEN-DISPLAY")
    if isinstance(result, dict):
        result[("PROBE-" + "EXTRA-KEY",)] = 1
        return result
    raise RuntimeError("PROBE-" + "HIDDEN-RAISE " + repr(args))
"""


@dataclass(frozen=True)
class Part:
    """One autograded test cell: the function a student writes, its solution cell, the cell and the check it calls.

    A function whose independent outputs earn points of their own has a test cell per output, each a part.
    """

    function: str
    solution_cell: str
    test_cell: str
    points: float
    check: str


@dataclass(frozen=True)
class Assignment:
    name: str
    notebook: str
    source: nbformat.NotebookNode
    parts: tuple[Part, ...]
    manual_points: float

    @property
    def auto_points(self) -> float:
        return sum(p.points for p in self.parts)

    @property
    def checks(self):
        """The exercise name -> its FunctionCheck, from the table of assignments."""
        return grading.ASSIGNMENTS[self.name].CHECKS

    @property
    def first(self) -> Part:
        return self.parts[0]

    @property
    def functions(self) -> list[str]:
        """The graded functions, in the notebook's order."""
        return list(dict.fromkeys(p.function for p in self.parts))

    def hidden_call(self, part: Part | None = None) -> str:
        part = part or self.first
        return f"check_{part.check}({part.function}, hidden=True)"


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _parts(source: nbformat.NotebookNode) -> tuple[Part, ...]:
    """The test cells, each with the solution code cell above it and the check it calls."""
    parts, pending = [], None
    for cell in source.cells:
        meta = _nbgrader(cell)
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            (function,) = [n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
            pending = (function, meta["grade_id"])
        elif meta.get("grade") and pending:
            (check,) = re.findall(rf"^check_(\w+)\({pending[0]}\)$", cell.source, flags=re.M)
            parts.append(Part(pending[0], pending[1], meta["grade_id"], meta["points"], check))
    return tuple(parts)


def _load(name: str) -> Assignment:
    (path,) = sorted((ROOT / "solutions" / name).glob("*.ipynb"))
    source = nbformat.read(path, as_version=4)
    written = [c for c in source.cells if _nbgrader(c).get("grade") and c.cell_type == "markdown"]
    manual = sum(_nbgrader(c)["points"] for c in written)
    return Assignment(name, path.name, source, _parts(source), manual)


def _replace_cell(notebook, grade_id: str, source: str) -> nbformat.NotebookNode:
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if _nbgrader(c).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _cell_source(notebook, grade_id: str) -> str:
    (cell,) = [c for c in notebook.cells if _nbgrader(c).get("grade_id") == grade_id]
    return cell.source


def _loop_source(assignment: Assignment) -> str:
    part = assignment.first
    body = ast.parse(_cell_source(assignment.source, part.solution_cell)).body
    (function,) = [n for n in body if isinstance(n, ast.FunctionDef)]
    return LOOP.format(name=part.function, args=ast.unparse(function.args))


def _probe_source(assignment: Assignment) -> str:
    part = assignment.first
    n_visible = len(assignment.checks[part.function].cases())
    source = _cell_source(assignment.source, part.solution_cell)
    solution = re.sub(rf"\bdef {part.function}\(", f"def _solution_{part.function}(", source)
    return PROBE.format(solution=solution, name=part.function, n_visible=n_visible)


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def assignment(request) -> Assignment:
    return _load(request.param)


@pytest.fixture(scope="module")
def graded(assignment, tmp_path_factory):
    """(report, seconds) of one check_grading run with two extra submissions, kept on disk."""
    workdir = tmp_path_factory.mktemp(f"course-{assignment.name}")
    cell = assignment.first.solution_cell
    extra = {
        "loop": {assignment.notebook: _replace_cell(assignment.source, cell, _loop_source(assignment))},
        "probe": {assignment.notebook: _replace_cell(assignment.source, cell, _probe_source(assignment))},
    }
    start = time.perf_counter()
    report = check_grading(ROOT, assignment.name, timeout=TIMEOUT, extra_submissions=extra, workdir=workdir)
    return report, time.perf_counter() - start


@pytest.fixture(scope="module")
def report(graded):
    return graded[0]


def _feedback_text(report, assignment: Assignment, student: str) -> str:
    return html_text(report.results[student].feedback[assignment.notebook].read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- the assignments


def test_every_assignment_is_found_and_has_its_checks():
    assert "01_ngram" in ASSIGNMENTS and "02_neural_lm" in ASSIGNMENTS
    assert sorted(grading.ASSIGNMENTS) == ASSIGNMENTS


def test_assignments_follow_the_course_rules(assignment):
    """4-8 autograded parts worth points, 1-2 written answers, each part graded by its check of the table."""
    assert 4 <= len(assignment.functions) <= 8
    assert all(p.points > 0 for p in assignment.parts)
    written = [c for c in assignment.source.cells if _nbgrader(c).get("grade") and c.cell_type == "markdown"]
    assert 1 <= len(written) <= 2 and assignment.manual_points > 0
    assert {p.check for p in assignment.parts} <= set(assignment.checks)
    assert sorted(assignment.functions) == sorted({c.name for c in assignment.checks.values()})
    assert "seqlearn" not in assignment.source.metadata, "the table of assignments, not the notebook, names references"
    for part in assignment.parts:
        assert assignment.checks[part.function].reference.__seqlearn_reference__
        tests = _cell_source(assignment.source, part.test_cell)
        assert f"from {grading.ASSIGNMENTS[assignment.name].__name__} import check_{part.check}\n" in tests
        assert f"check_{part.check}({part.function})" in tests
        cell = nbformat.v4.new_code_cell(tests)
        assert assignment.hidden_call(part) in hidden_test_lines(nbformat.v4.new_notebook(cells=[cell]))
    ids = [c.id for c in assignment.source.cells]
    assert ids == [_nbgrader(c)["grade_id"] for c in assignment.source.cells], "fixed cell ids, equal to the grade ids"
    assert len(set(ids)) == len(ids)


# ----------------------------------------------------------------------------- the round trip


@pytest.mark.slow
def test_round_trip_report_is_ok(report):
    assert report.ok, str(report)
    assert "grading round trip OK" in str(report)


@pytest.mark.slow
def test_solution_earns_every_autograded_point(report, assignment):
    solution = report.results["solution"]
    assert solution.auto_max == assignment.auto_points
    assert solution.auto_score == solution.auto_max
    assert all(score == points for score, points in solution.cell_scores.values())
    assert solution.manual_max == assignment.manual_points
    assert all("hidden cases passed" in text for text in solution.outputs.values())


@pytest.mark.slow
def test_blank_release_scores_zero_without_crashing(report, assignment):
    blank = report.results["blank"]
    assert blank.auto_score == 0
    assert len(blank.cell_scores) == len(assignment.parts)
    for cell, text in blank.outputs.items():
        assert "not implemented yet" in text, cell
        assert "input:" in text and "hint:" in text, cell


@pytest.mark.slow
def test_delegating_answer_scores_zero_and_is_told_why(report, assignment):
    delegating = report.results["delegating"]
    assert delegating.auto_score == 0
    assert len(delegating.outputs) == len(assignment.parts)
    for cell, text in delegating.outputs.items():
        assert "scores zero" in text and REFUSAL in text, cell


def _cell_seconds(notebook_path: Path, grade_id: str) -> float:
    """How long a cell of an executed notebook ran (nbclient's timing metadata)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    (cell,) = [c for c in notebook.cells if _nbgrader(c).get("grade_id") == grade_id]
    timing = cell.metadata.execution
    start, end = (datetime.fromisoformat(timing[k]) for k in ("iopub.execute_input", "iopub.status.idle"))
    return (end - start).total_seconds()


@pytest.mark.slow
def test_infinite_loop_is_cut_off_by_the_timeout(graded, assignment):
    report, seconds = graded
    loop, part = report.results["loop"], assignment.first
    assert loop.cell_scores[part.test_cell] == (0, part.points)
    assert loop.auto_score == loop.auto_max - part.points, "the other parts are still graded"
    assert "CellTimeoutError" in loop.outputs[part.test_cell]
    assert TIMEOUT <= _cell_seconds(loop.autograded[assignment.notebook], part.test_cell) < TIMEOUT + 15
    assert seconds < 240


@pytest.mark.slow
def test_exercises_equal_a_fresh_generate_assignment(report, assignment):
    fresh = report.course_dir / "exercises" / assignment.name
    assert (fresh / assignment.notebook).is_file()
    assert release_differences(fresh, ROOT / "exercises" / assignment.name) == []


@pytest.mark.slow
def test_probe_fails_a_hidden_case_only(report, assignment):
    probe, part = report.results["probe"], assignment.first
    text = probe.outputs[part.test_cell]
    assert probe.cell_scores[part.test_cell] == (0, part.points)
    assert probe.auto_score == probe.auto_max - part.points
    assert f"{part.function} failed hidden case 1 of" in text
    assert "PROBE-EXTRA-KEY" not in text, "keys of hidden results are withheld"
    assert "PROBE-HIDDEN-RAISE" not in text, "messages of exceptions in hidden cases are withheld"
    assert "PROBE-HIDDEN-CALL" not in text, "prints of student code are swallowed in hidden cases"


@pytest.mark.slow
@pytest.mark.parametrize("student", ["solution", "blank", "probe"])
def test_feedback_hides_hidden_tests(report, assignment, student):
    hidden = hidden_test_lines(assignment.source)
    assert assignment.hidden_call() in hidden
    autograded = report.results[student].autograded[assignment.notebook].read_text(encoding="utf-8")
    assert assignment.hidden_call() in autograded, "nbgrader restores hidden tests"

    text = _feedback_text(report, assignment, student)
    assert not [line for line in hidden if line in text]
    assert "BEGIN HIDDEN TESTS" not in text
    part = assignment.first
    assert f"check_{part.function}({part.function})" in text, "visible tests stay visible"
    assert text.count("hidden tests: not shown") == len(assignment.parts)
    result = report.results[student]
    assert f"Score: {result.auto_score:.1f} / {assignment.auto_points + assignment.manual_points:.1f}" in text
    assert f"Score: 0.0 / {part.points:.1f}" in text or student == "solution"


@pytest.mark.slow
def test_feedback_shows_no_hidden_input(report, assignment):
    probe = report.results["probe"]
    (recorded,) = list(probe.autograded[assignment.notebook].parent.rglob("hidden_inputs.jsonl"))
    hidden_inputs = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert hidden_inputs, "the probe ran on a hidden input"
    autograded = probe.autograded[assignment.notebook].read_text(encoding="utf-8")
    assert "PROBE-VISIBLE-CALL" in autograded and "PROBE-HIDDEN-DISPLAY" in autograded, "outputs the feedback must drop"

    text = _feedback_text(report, assignment, "probe")
    assert f"{assignment.first.function} failed hidden case 1 of" in text, "the student learns which hidden case failed"
    assert "input: withheld" in text
    for marker in ("HIDDEN-CALL", "HIDDEN-FD", "HIDDEN-DISPLAY", "HIDDEN-RAISE", "EXTRA-KEY", "VISIBLE-CALL"):
        marker = "PROBE-" + marker
        assert marker not in text
    shown = {form for call in hidden_inputs for arg in call for form in arg if len(form) >= 12 and form in text}
    assert not shown


@pytest.mark.slow
def test_the_leak_detector_sees_code_in_stock_html(report, assignment):
    """Guard against a vacuous feedback test: unscrubbed HTML of the autograded notebook shows the hidden code."""
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter().from_filename(str(report.results["probe"].autograded[assignment.notebook]))
    assert assignment.hidden_call() in html_text(page)


@pytest.mark.slow
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_generate_exercises_leaves_no_litter(tmp_path, name):
    shutil.copy2(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / name, tmp_path / "solutions" / name)
    written = generate_exercises(tmp_path)
    notebook = _load(name).notebook
    assert written == [tmp_path / "exercises" / name / notebook]
    assert release_differences(tmp_path / "exercises" / name, ROOT / "exercises" / name) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exercises", "nbgrader_config.py", "solutions"]


# ----------------------------------------------------------------------------- tooling (no nbgrader run)


def test_course_config():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert Path(config.CourseDirectory.root) == ROOT
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "exercises"
    assert config.CourseDirectory.db_url == f"sqlite:///{ROOT / 'gradebook.db'}"
    assert config.Execute.timeout == config.ExecutePreprocessor.timeout == 60
    assert HideHiddenTests in config.GenerateFeedback.preprocessors


def test_generate_exercises_rejects_unknown_assignments():
    with pytest.raises(ValueError, match="no assignment"):
        generate_exercises(ROOT, ["99_nothing"])
    with pytest.raises(TypeError, match="list of names"):
        generate_exercises(ROOT, ASSIGNMENTS[0])


def test_release_differences_ignores_volatile_metadata_only(tmp_path, assignment):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(ROOT / "exercises" / assignment.name, a)
    shutil.copytree(ROOT / "exercises" / assignment.name, b)
    name = assignment.notebook
    notebook = nbformat.read(b / name, as_version=4)
    notebook.metadata.language_info["version"] = "3.99.0"
    notebook.metadata.kernelspec["display_name"] = "Python (course)"
    nbformat.write(notebook, b / name)
    assert release_differences(a, b) == []
    notebook.cells[5].source += "\n# edited"
    nbformat.write(notebook, b / name)
    assert release_differences(a, b) == [f"{name}: cell 5 ({notebook.cells[5].id}) differs"]
    (b / "data.txt").write_text("x")
    assert f"data.txt: only in {b}" in release_differences(a, b)


def test_delegating_notebook_wraps_every_graded_function(assignment):
    notebook = delegating_notebook(assignment.source, assignment.name)
    solution_cells = [c for c in notebook.cells if c.cell_type == "code" and _nbgrader(c).get("solution")]
    assert len(solution_cells) == len(assignment.functions)
    for function, cell in zip(assignment.functions, solution_cells):
        reference = assignment.checks[function].reference
        assert f"import_module({reference.__module__!r}).{function}(" in cell.source
        assert "BEGIN SOLUTION" not in cell.source
    with pytest.raises(ValueError, match="no graded exercises for assignment '99_nothing'"):
        delegating_notebook(assignment.source, "99_nothing")


def _hidden_cell() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(
        "check(f)\n### BEGIN HIDDEN TESTS\ncheck(f, hidden=True, secret=42)\n### END HIDDEN TESTS\nprint('after')"
    )
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="student printed SECRET-INPUT\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "SECRET-DISPLAY"}),
        nbformat.v4.new_output(
            "error",
            ename="CheckFailure",
            evalue="f failed hidden case 2 of 30.",
            traceback=["---> 3 check(f, hidden=True, secret=42)", "CheckFailure: f failed hidden case 2 of 30."],
        ),
    ]
    return cell


def test_hide_hidden_tests_scrubs_source_and_outputs():
    visible = nbformat.v4.new_code_cell("print('visible')")
    visible.outputs = [nbformat.v4.new_output("stream", name="stdout", text="visible\n")]
    notebook = nbformat.v4.new_notebook(cells=[_hidden_cell(), visible])
    scrubbed, _ = HideHiddenTests().preprocess(notebook, {})
    hidden, kept = scrubbed.cells
    assert hidden.source == "check(f)\n# (hidden tests: not shown)\nprint('after')"
    assert [o.output_type for o in hidden.outputs] == ["error"]
    assert hidden.outputs[0].traceback == ["CheckFailure: f failed hidden case 2 of 30."]
    assert "secret" not in json.dumps(hidden) and "SECRET" not in json.dumps(hidden)
    assert kept.source == "print('visible')" and kept.outputs[0].text == "visible\n"


def test_hide_hidden_tests_drops_messages_of_other_errors_and_unclosed_regions():
    cell = _hidden_cell()
    cell.source = "check(f)\n### BEGIN HIDDEN TESTS\ncheck(f, hidden=True, secret=42)"
    cell.outputs[2].ename, cell.outputs[2].evalue = "SystemExit", "SECRET-INPUT"
    scrubbed, _ = HideHiddenTests().preprocess(nbformat.v4.new_notebook(cells=[cell]), {})
    (cell,) = scrubbed.cells
    assert cell.source == "check(f)\n# (hidden tests: not shown)"
    assert cell.outputs[0].traceback == ["SystemExit"]


def test_hidden_test_lines_and_html_text():
    notebook = nbformat.v4.new_notebook(cells=[_hidden_cell()])
    assert hidden_test_lines(notebook) == [
        "### BEGIN HIDDEN TESTS",
        "check(f, hidden=True, secret=42)",
        "### END HIDDEN TESTS",
    ]
    page = '<style>.x{}</style><span class="n">check</span><span class="p">(</span>a &amp; b<span>)</span>'
    assert html_text(page) == "check(a & b)"


# ----------------------------------------------------------------------------- every mistake costs points once

ONE_MISTAKE = {
    "continuation counts": ("01_ngram", "continuation_counts", "+= 1", "+= c", ["continuation_counts_tests"]),
    "the forward pass": ("03_rnn_bptt", "elman_forward", "x_t + b_h", "x_t", ["elman_forward_tests"]),
    "one gradient": (
        "03_rnn_bptt",
        "bptt_gradients",
        '"b_y": e.sum',
        '"b_y": 2.0 * e.sum',
        ["bptt_gradients_b_y_tests"],
    ),
    "the metric": ("06_lowrank", "metric_bar", " + (b == d) * s[a + c]", "", ["metric_bar_tests"]),
}
"""A mistake -> (assignment, the answer it is made in, the text it replaces there, the mistake, the only test
cells that may lose points): in an earlier part that later parts use (continuation counts, the forward pass, the
metric), in one gradient of six."""


@pytest.mark.slow
@pytest.mark.parametrize("mistake", sorted(ONE_MISTAKE))
def test_one_mistake_costs_its_own_points_under_nbgrader_and_the_sealed_grader(mistake, tmp_path):
    name, answer, right, wrong, failing = ONE_MISTAKE[mistake]
    assignment = _load(name)
    release = nbformat.read(ROOT / "exercises" / name / assignment.notebook, as_version=4)
    submission = student_submission(assignment.source, release)
    (cell,) = [c for c in submission.cells if _nbgrader(c).get("grade_id") == answer]
    assert cell.source.count(right) == 1
    cell.source = cell.source.replace(right, wrong)
    extra = {"mistaken": {assignment.notebook: submission}}
    report = check_grading(ROOT, name, timeout=20, extra_submissions=extra, workdir=tmp_path / "course")
    nbgrader = {cell: score for cell, (score, _) in report.results["mistaken"].cell_scores.items()}
    _, results = grade_assignment(tmp_path / "course", name, jobs=2, write=False, limits=Limits(timeout=20))
    (sealed,) = [
        {g: p.score for g, p in r.parts[assignment.notebook].items()} for r in results if r.student == "mistaken"
    ]
    assert sealed == nbgrader
    points = {p.test_cell: p.points for p in assignment.parts}
    assert [cell for cell, score in sealed.items() if score < points[cell]] == failing
    assert sum(sealed.values()) == assignment.auto_points - sum(points[cell] for cell in failing)
