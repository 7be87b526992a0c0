"""The README's instructor workflow, run verbatim on a fresh copy of the course with two students.

The block after ``<!-- instructor-workflow -->`` in README.md is read line by line: each
instructor command runs in the course directory after ``source .venv/bin/activate`` (the
copy's ``.venv`` links to this interpreter's environment), and the command in a
``# students: ...`` comment then runs in each student's home directory (with the same
environment: on a hub, students have nbgrader too). The exchange is a
temporary directory, named in a user-level ``nbgrader_config.py`` (``JUPYTER_CONFIG_DIR``),
as a JupyterHub's administrator would configure it; the commands themselves are untouched.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hub_course import fresh_course, partial_submission

from seqlearn.course.nbgrader_tools import WrapLongLines, release_differences

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- instructor-workflow -->"
STUDENT = pwd.getpwuid(os.getuid()).pw_name


def workflow_lines() -> list[tuple[str, str]]:
    """``(who, command)`` for each line of the README's block; who is "instructor" or "students"."""
    readme = (ROOT / "README.md").read_text()
    assert MARKER in readme, "README.md lost the instructor-workflow block"
    block = re.search(r"```bash\n(.*?)```", readme[readme.index(MARKER) :], re.S).group(1)
    lines = []
    for line in block.splitlines():
        if line.startswith("# students:"):
            lines.append(("students", line.removeprefix("# students:").strip()))
        else:
            lines.append(("instructor", line.partition("#")[0].strip()))
    return lines


def _run(command: str, cwd: Path, env: dict) -> None:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"`{command}` failed in {cwd} (exit {proc.returncode}):\n{proc.stderr[-3000:]}"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("workflow")
    course = fresh_course(tmp / "course")
    (course / ".venv").symlink_to(Path(sys.prefix))
    exchange, config = tmp / "exchange", tmp / "jupyter"
    exchange.mkdir(mode=0o777)
    config.mkdir()
    (config / "nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config)}
    home = tmp / "home"
    home.mkdir()

    (_, activate), *steps = workflow_lines()
    assert activate == "source .venv/bin/activate"
    for who, command in steps:
        if who == "instructor":
            _run(f"{activate} && {command}", course, env)
            continue
        _run(f"source {course}/.venv/bin/activate && {command}", home, env)
        if "fetch_assignment" in command:
            notebook, deserved = partial_submission(course, "01_ngram")
            nbformat.write(notebook, home / "01_ngram/01_ngram.ipynb")
    return {"course": course, "home": home, "deserved": deserved}


def test_the_block_covers_the_whole_cycle():
    commands = " ".join(c for _, c in workflow_lines())
    for step in ("generate_assignment", "release_assignment", "submit", "collect", "autograde", "release_feedback"):
        assert f"nbgrader {step} 01_ngram" in commands


@pytest.mark.slow
def test_the_student_is_graded_in_the_gradebook(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course['course'] / 'gradebook.db'}", "seqlearn") as gradebook:
        score = gradebook.find_submission("01_ngram", STUDENT).code_score
    assert course["deserved"] > 0 and score == course["deserved"]


@pytest.mark.slow
def test_the_student_fetches_their_feedback(course):
    pages = list((course["home"] / "01_ngram/feedback").rglob("01_ngram.html"))
    assert len(pages) == 1, f"fetched {len(pages)} feedback pages"
    page = pages[0].read_text()
    assert f"Score: {course['deserved']:.1f} / " in page  # the notebook's total, first
    assert WrapLongLines.css in page  # long hint lines wrap at the page's edge


@pytest.mark.slow
def test_the_release_is_left_as_committed(course):
    assert release_differences(ROOT / "exercises", course["course"] / "exercises") == []
