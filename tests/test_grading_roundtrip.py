"""The grading round trip with nbgrader for real, and the nbgrader tooling it relies on.

One module-scoped fixture grades five submissions of 01_ngram in a single autograde run
(solution, blank release, delegating answer, an infinite loop, a probe that records and
prints its hidden inputs) and generates their feedback; the tests inspect the results.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from seqlearn.grading.guard import REFUSAL
from seqlearn.grading.nbgrader_tools import (
    HideHiddenTests,
    check_grading,
    delegating_notebook,
    generate_exercises,
    hidden_test_lines,
    html_text,
    release_differences,
)
from seqlearn.grading.ngram import CHECKS

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_ngram"
NOTEBOOK = "01_ngram.ipynb"
TIMEOUT = 8  # seconds per cell for the round trip (the course default is 60)
LOOP_CELL = "count_ngrams_tests"

CORRECT_COUNT = """
    from collections import Counter
    counts = Counter()
    for sentence in sentences:
        padded = ["<s>", *sentence, "</s>"]
        for i in range(len(padded) - n + 1):
            if tuple(padded[i:i + n]) != ("<s>",):
                counts[tuple(padded[i:i + n])] += 1
"""

LOOP = """
def count_ngrams(sentences, n):
    i = 0
    while i < 10:
        pass
"""

PROBE = """
import json, os
from IPython.display import display
_calls = []  # markers are concatenated at run time, so the source does not contain them

def count_ngrams(sentences, n):
    _calls.append(1)
{correct}
    if len(_calls) <= {n_visible}:
        print("PROBE-" + "VISIBLE-CALL", sentences)
        return counts
    with open("hidden_inputs.jsonl", "a") as f:
        f.write(json.dumps([sentences, n]) + "\\n")
    print("PROBE-" + "HIDDEN-CALL", sentences, n)
    os.write(1, ("PROBE-" + "HIDDEN-FD\\n").encode())
    display("PROBE-" + "HIDDEN-DISPLAY")
    counts[("PROBE-" + "EXTRA-KEY",)] += 1
    return counts
"""


def _source() -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, as_version=4)


def _replace_cell(notebook, grade_id: str, source: str) -> nbformat.NotebookNode:
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _probe_source() -> str:
    n_visible = len(CHECKS["count_ngrams"].cases())
    return PROBE.format(correct=CORRECT_COUNT.strip("\n"), n_visible=n_visible)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(report, seconds) of one check_grading run with two extra submissions, kept on disk."""
    workdir = tmp_path_factory.mktemp("course")
    extra = {
        "loop": {NOTEBOOK: _replace_cell(_source(), "count_ngrams", LOOP)},
        "probe": {NOTEBOOK: _replace_cell(_source(), "count_ngrams", _probe_source())},
    }
    start = time.perf_counter()
    report = check_grading(ROOT, ASSIGNMENT, timeout=TIMEOUT, extra_submissions=extra, workdir=workdir)
    return report, time.perf_counter() - start


@pytest.fixture(scope="module")
def report(graded):
    return graded[0]


def _feedback_text(report, student: str) -> str:
    return html_text(report.results[student].feedback[NOTEBOOK].read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- the round trip


@pytest.mark.slow
def test_round_trip_report_is_ok(report):
    assert report.ok, str(report)
    assert "grading round trip OK" in str(report)


@pytest.mark.slow
def test_solution_earns_every_autograded_point(report):
    solution = report.results["solution"]
    assert solution.auto_max == 14
    assert solution.auto_score == solution.auto_max
    assert all(score == points for score, points in solution.cell_scores.values())
    assert solution.manual_max == 4
    assert all("hidden cases passed" in text for text in solution.outputs.values())


@pytest.mark.slow
def test_blank_release_scores_zero_without_crashing(report):
    blank = report.results["blank"]
    assert blank.auto_score == 0
    assert len(blank.cell_scores) == 6
    for cell, text in blank.outputs.items():
        assert "not implemented yet" in text, cell
        assert "input:" in text and "hint:" in text, cell


@pytest.mark.slow
def test_delegating_answer_scores_zero_and_is_told_why(report):
    delegating = report.results["delegating"]
    assert delegating.auto_score == 0
    for cell, text in delegating.outputs.items():
        assert "scores zero" in text and REFUSAL in text, cell


def _cell_seconds(notebook_path: Path, grade_id: str) -> float:
    """How long a cell of an executed notebook ran (nbclient's timing metadata)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    (cell,) = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    timing = cell.metadata.execution
    start, end = (datetime.fromisoformat(timing[k]) for k in ("iopub.execute_input", "iopub.status.idle"))
    return (end - start).total_seconds()


@pytest.mark.slow
def test_infinite_loop_is_cut_off_by_the_timeout(graded):
    report, seconds = graded
    loop = report.results["loop"]
    assert loop.cell_scores[LOOP_CELL] == (0, 3)
    assert loop.auto_score == loop.auto_max - 3, "the other parts are still graded"
    assert "CellTimeoutError" in loop.outputs[LOOP_CELL]
    assert TIMEOUT <= _cell_seconds(loop.autograded[NOTEBOOK], LOOP_CELL) < TIMEOUT + 15
    assert seconds < 240


@pytest.mark.slow
def test_exercises_equal_a_fresh_generate_assignment(report):
    fresh = report.course_dir / "exercises" / ASSIGNMENT
    assert (fresh / NOTEBOOK).is_file()
    assert release_differences(fresh, ROOT / "exercises" / ASSIGNMENT) == []


@pytest.mark.slow
def test_probe_fails_a_hidden_case_only(report):
    probe = report.results["probe"]
    text = probe.outputs[LOOP_CELL]
    assert probe.cell_scores[LOOP_CELL] == (0, 3)
    assert probe.auto_score == probe.auto_max - 3
    assert "count_ngrams failed hidden case 1 of" in text
    assert "PROBE-EXTRA-KEY" not in text, "keys of hidden results are withheld"
    assert "PROBE-HIDDEN-CALL" not in text, "prints of student code are swallowed in hidden cases"


@pytest.mark.slow
@pytest.mark.parametrize("student", ["solution", "blank", "probe"])
def test_feedback_hides_hidden_tests(report, student):
    source = _source()
    hidden = hidden_test_lines(source)
    assert "check_count_ngrams(count_ngrams, hidden=True)" in hidden
    autograded = report.results[student].autograded[NOTEBOOK].read_text(encoding="utf-8")
    assert "check_count_ngrams(count_ngrams, hidden=True)" in autograded, "nbgrader restores hidden tests"

    text = _feedback_text(report, student)
    assert not [line for line in hidden if line in text]
    assert "BEGIN HIDDEN TESTS" not in text
    assert "check_count_ngrams(count_ngrams)" in text, "visible tests stay visible"
    assert text.count("hidden tests: not shown") == 6
    result = report.results[student]
    assert f"Score: {result.auto_score:.1f} / 18.0" in text
    assert "Score: 0.0 / 3.0" in text or student == "solution"


@pytest.mark.slow
def test_feedback_shows_no_hidden_input(report):
    probe = report.results["probe"]
    (recorded,) = list(probe.autograded[NOTEBOOK].parent.rglob("hidden_inputs.jsonl"))
    hidden_inputs = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert hidden_inputs, "the probe ran on a hidden input"
    autograded = probe.autograded[NOTEBOOK].read_text(encoding="utf-8")
    assert "PROBE-VISIBLE-CALL" in autograded and "PROBE-HIDDEN-DISPLAY" in autograded, "outputs the feedback must drop"

    text = _feedback_text(report, "probe")
    assert "count_ngrams failed hidden case 1 of" in text, "the student learns which hidden case failed"
    assert "input: withheld" in text
    for marker in ("HIDDEN-CALL", "HIDDEN-FD", "HIDDEN-DISPLAY", "EXTRA-KEY", "VISIBLE-CALL"):
        marker = "PROBE-" + marker
        assert marker not in text
    for sentences, n in hidden_inputs:
        assert repr(sentences) not in text and json.dumps(sentences) not in text


@pytest.mark.slow
def test_the_leak_detector_sees_code_in_stock_html(report):
    """Guard against a vacuous feedback test: unscrubbed HTML of the autograded notebook shows the hidden code."""
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter().from_filename(str(report.results["probe"].autograded[NOTEBOOK]))
    assert "check_count_ngrams(count_ngrams, hidden=True)" in html_text(page)


@pytest.mark.slow
def test_generate_exercises_leaves_no_litter(tmp_path):
    shutil.copy2(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / ASSIGNMENT, tmp_path / "solutions" / ASSIGNMENT)
    written = generate_exercises(tmp_path)
    assert written == [tmp_path / "exercises" / ASSIGNMENT / NOTEBOOK]
    assert release_differences(tmp_path / "exercises" / ASSIGNMENT, ROOT / "exercises" / ASSIGNMENT) == []
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
        generate_exercises(ROOT, ASSIGNMENT)


def test_release_differences_ignores_volatile_metadata_only(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(ROOT / "exercises" / ASSIGNMENT, a)
    shutil.copytree(ROOT / "exercises" / ASSIGNMENT, b)
    notebook = nbformat.read(b / NOTEBOOK, as_version=4)
    notebook.metadata.language_info["version"] = "3.99.0"
    notebook.metadata.kernelspec["display_name"] = "Python (course)"
    nbformat.write(notebook, b / NOTEBOOK)
    assert release_differences(a, b) == []
    notebook.cells[5].source += "\n# edited"
    nbformat.write(notebook, b / NOTEBOOK)
    assert release_differences(a, b) == [f"{NOTEBOOK}: cell 5 ({notebook.cells[5].id}) differs"]
    (b / "data.txt").write_text("x")
    assert f"data.txt: only in {b}" in release_differences(a, b)


def test_delegating_notebook_wraps_every_graded_function():
    notebook = delegating_notebook(_source())
    solution_cells = [
        c for c in notebook.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]
    assert len(solution_cells) == 6
    for cell in solution_cells:
        assert "import_module('seqlearn.ngram.basics')" in cell.source
        assert "BEGIN SOLUTION" not in cell.source
    with pytest.raises(ValueError, match="reference_module"):
        delegating_notebook(nbformat.v4.new_notebook())


def _hidden_cell() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(
        "check(f)\n### BEGIN HIDDEN TESTS\ncheck(f, hidden=True, secret=42)\n### END HIDDEN TESTS\nprint('after')"
    )
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="student printed SECRET-INPUT\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "SECRET-DISPLAY"}),
        nbformat.v4.new_output(
            "error", ename="CheckFailure", evalue="f failed hidden case 2 of 30.",
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
