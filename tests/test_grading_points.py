"""What the exercises notebooks say about points is what nbgrader counts, and every written answer has a rubric.

The points live in the nbgrader metadata of the test cells and written answers; the headings ("Part 2 — ...
(6 points)"), the questions ("Question 1 (3 points)"), the introduction ("The five functions are worth 13 points
and the two written answers 4") and each rubric ("*Rubric (3 points):* 1 point for ...; 1 point for ...") must
say the same, so that a student and two graders read one split.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from seqlearn.grading import ASSIGNMENTS

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"(\d+(?:\.\d+)?)"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def _source(name: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _parts(notebook) -> list[tuple[str, float, float]]:
    """(heading, points it states, points of the graded cells until the next heading) of each Part."""
    parts, cells = [], notebook.cells
    for i, cell in enumerate(cells):
        stated = (
            re.match(rf"## (Part \d+) — .*\({NUMBER} points?", cell.source) if cell.cell_type == "markdown" else None
        )
        if stated:
            following = []
            for later in cells[i + 1 :]:
                if later.source.startswith("## "):
                    break
                following.append(later)
            graded = sum(_meta(c)["points"] for c in following if _meta(c).get("grade"))
            parts.append((stated.group(1), float(stated.group(2)), graded))
    return parts


def _written(notebook) -> list:
    return [c for c in notebook.cells if c.cell_type == "markdown" and _meta(c).get("grade")]


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_every_heading_states_the_points_its_cells_carry(name):
    parts = _parts(_source(name))
    assert parts, "no Part heading states its points"
    assert [(heading, stated) for heading, stated, _ in parts] == [(heading, graded) for heading, _, graded in parts]


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_introduction_states_the_totals(name):
    notebook = _source(name)
    found = re.search(
        rf"The (\w+) functions are worth {NUMBER} points and the two written answers {NUMBER}", notebook.cells[0].source
    )
    assert found, "the introduction states the points"
    manual = sum(_meta(c)["points"] for c in _written(notebook))
    graded = [c for c in notebook.cells if c.cell_type == "code" and _meta(c).get("grade")]
    functions = {c.metadata["nbgrader"]["grade_id"] for c in notebook.cells if _meta(c).get("solution")} - {
        _meta(c)["grade_id"] for c in _written(notebook)
    }
    assert WORDS[found.group(1)] == len(functions)
    assert float(found.group(2)) == sum(_meta(c)["points"] for c in graded)
    assert float(found.group(3)) == manual and len(_written(notebook)) == 2


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_every_written_answer_has_a_rubric_that_splits_its_points(name):
    notebook = _source(name)
    for i, answer in enumerate(notebook.cells):
        if answer not in _written(notebook):
            continue
        points = _meta(answer)["points"]
        question = notebook.cells[i - 1].source
        assert re.match(rf"\*\*Question \d+ \({points:g} points?\)\.\*\*", question), question[:60]
        (rubric,) = re.findall(r"\*Rubric \((\d+) points?\):\*(.*)", answer.source, flags=re.S)
        assert float(rubric[0]) == points
        shares = [float(p) for p in re.findall(rf"\b{NUMBER}\s+points?\s+for\b", rubric[1])]
        assert len(shares) >= 2 and sum(shares) == points, f"{_meta(answer)['grade_id']}: shares {shares}"
