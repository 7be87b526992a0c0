"""Replayable hidden tests of sealed grading: a regrade draws the same cases, ``seqlearn replay`` shows one.

One scratch course of 01_ngram, graded twice (``seqlearn grade`` twice): a *borderline*
submission, whose ``perplexity`` is wrong only on lengths that no visible case has (so it passes
the visible cases and fails hidden ones), and a *snooping* one, whose answer cell tries to read
the course's key of hidden draws and to seed every random generator it can reach.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from seqlearn.course.nbgrader_tools import make_course, run_nbgrader, student_submission
from seqlearn.course.sealed import load_assignment
from seqlearn.course.sealed.draws import SECRET_FILE, program_digest
from seqlearn.course.sealed.plan import build_program
from seqlearn.grading.ngram import PERPLEXITY

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_ngram"
CELL = "perplexity_tests"
SEQLEARN = str(Path(sys.executable).with_name("seqlearn"))

BORDERLINE = """
import math
def perplexity(log_probs):
    if not log_probs:
        raise ValueError("no tokens")
    value = math.exp(-sum(log_probs) / len(log_probs))
    return value * 1.5 if len(log_probs) in {bad} else value
"""

SNOOPING = """
import math, os, random, secrets
import numpy as np
np.random.seed(0); random.seed(0)
secrets.randbits = lambda k: 0
os.environ["SEQLEARN_HIDDEN_ENTROPY"] = "0"
try:
    with open({secret!r}) as f:
        KEY = f.read()
except OSError:
    KEY = None
def perplexity(log_probs):
    if not log_probs:
        raise ValueError("no tokens")
    return 0.0 if KEY else math.exp(-sum(log_probs) / len(log_probs))
"""


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _with_answer(notebook, grade_id: str, source: str):
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if _meta(c).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _grade(course: Path) -> str:
    proc = subprocess.run([SEQLEARN, "grade", ASSIGNMENT, "--jobs", "1"], cwd=course, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _records(course: Path, student: str) -> dict:
    """Test cell -> (its output text, its metadata.seqlearn) in the student's autograded notebook."""
    notebook = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return {
        _meta(c)["grade_id"]: (json.dumps(c.outputs), dict(c.metadata["seqlearn"]))
        for c in notebook.cells
        if "seqlearn" in c.metadata
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = make_course(ROOT, tmp_path_factory.mktemp("replay") / "course", [ASSIGNMENT])
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    name = f"{ASSIGNMENT}.ipynb"
    blank = nbformat.read(course / "exercises" / ASSIGNMENT / name, as_version=4)
    solution = student_submission(nbformat.read(course / "solutions" / ASSIGNMENT / name, as_version=4), blank)
    visible_lengths = {len(case.inputs["log_probs"]) for case in PERPLEXITY.cases()}
    bad = sorted(set(range(1, 30)) - visible_lengths)  # the hidden cases' lengths are 1..29
    answers = {
        "borderline": BORDERLINE.format(bad=set(bad)),
        "snooping": SNOOPING.format(secret=str(course / SECRET_FILE)),
    }
    for student, source in answers.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_with_answer(solution, "perplexity", source), folder / name)
    first = _grade(course)
    records = {s: _records(course, s) for s in answers}
    second = _grade(course)
    return {
        "course": course,
        "bad": bad,
        "runs": (first, second),
        "records": records,
        "regraded": {s: _records(course, s) for s in answers},
    }


def _score_lines(stdout: str) -> list[str]:
    """The per-student lines of ``seqlearn grade`` (score and lost cells), without their seconds."""
    return sorted(re.sub(r"\s+[\d.]+ s", "", line) for line in stdout.splitlines() if line.startswith("  "))


@pytest.mark.slow
def test_the_borderline_submission_passes_visible_cases_and_fails_hidden_ones(graded):
    output, record = graded["records"]["borderline"][CELL]
    assert "failed hidden case" in output and "failed visible case" not in output
    assert record["passed"] is False and [d["check"] for d in record["hidden_draws"]] == ["perplexity"]


@pytest.mark.slow
def test_a_regrade_gives_identical_marks_messages_and_draws(graded):
    first, second = graded["runs"]
    assert _score_lines(first) == _score_lines(second) and len(_score_lines(first)) == 2
    assert graded["records"] == graded["regraded"]


@pytest.mark.slow
def test_the_draw_is_the_documented_hmac_of_the_program_under_the_course_key(graded):
    course = graded["course"]
    key_file = course / SECRET_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    (plan,) = load_assignment(course, ASSIGNMENT)
    for student, records in graded["records"].items():
        submitted = json.loads((course / "submitted" / student / ASSIGNMENT / plan.name).read_text())
        program = program_digest(build_program(plan, submitted))
        for grade_id, (_, record) in records.items():
            assert record["program"] == program
            for draw in record["hidden_draws"]:
                message = json.dumps([student, plan.name, grade_id, draw["call"], draw["check"], program]).encode()
                expected = int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:16], "big")
                assert int(draw["entropy"], 16) == expected


@pytest.mark.slow
def test_an_answer_cell_can_neither_read_the_key_nor_move_the_draw(graded):
    level = re.search(r"isolation level: (\w+)", graded["runs"][0]).group(1)
    if level == "rlimits":
        pytest.skip("at the rlimits level the worker runs as the grading user and can read the key")
    output, record = graded["records"]["snooping"][CELL]
    assert record["passed"] is True, output  # the key was not readable: the honest branch ran
    draws = {d["entropy"] for r in graded["records"].values() for _, rec in r.values() for d in rec["hidden_draws"]}
    assert "0x0" not in draws and len(draws) == sum(
        len(rec["hidden_draws"]) for r in graded["records"].values() for _, rec in r.values()
    )


@pytest.mark.slow
def test_replay_reproduces_the_hidden_failure_with_its_input(graded):
    course = graded["course"]
    output, record = graded["records"]["borderline"][CELL]
    number = int(re.search(r"failed hidden case (\d+) of 30", output).group(1))
    (draw,) = record["hidden_draws"]
    case = PERPLEXITY.cases(hidden=True, entropy=int(draw["entropy"], 16))[number - 1]
    assert len(case.inputs["log_probs"]) in graded["bad"]  # the recorded draw holds the failing case
    proc = subprocess.run(
        [SEQLEARN, "replay", ASSIGNMENT, "borderline", CELL], cwd=course, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"perplexity failed hidden case {number} of 30." in proc.stdout
    assert f"input: {case.describe()}" in proc.stdout and "has the wrong value: expected" in proc.stdout
    lines = proc.stdout.splitlines()
    problem = next(i for i, line in enumerate(lines) if "problem:" in line)
    assert problem < next(i for i, line in enumerate(lines) if "input:" in line)  # the problem first
    everyone = subprocess.run([SEQLEARN, "replay", ASSIGNMENT, "snooping"], cwd=course, capture_output=True, text=True)
    assert "nothing to replay" in everyone.stdout


@pytest.mark.slow
def test_the_recorded_draw_never_reaches_the_feedback_page(graded):
    course = graded["course"]
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", "--student", "borderline")
    page = (course / "feedback" / "borderline" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Score:" in page
    for _, record in graded["records"]["borderline"].values():
        assert record["program"] not in page
        for draw in record["hidden_draws"]:
            assert draw["entropy"] not in page and str(int(draw["entropy"], 16)) not in page
    assert "hidden_draws" not in page
