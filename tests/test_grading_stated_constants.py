"""The constants an exercises notebook states in words are the ones its grader uses.

A grading rule a notebook explains to the student ("no perplexity lies below 0.7 times the source's floor")
is read from the notebook's text and compared with the grader's constant, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from seqlearn.grading.gated import CURVE_TOLERANCE
from seqlearn.grading.ngram import FLOOR_SLACK

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"(\d+(?:\.\d+)?)"


def _text(folder: str, assignment: str, grade_id: str) -> str:
    """The words of one cell of an exercises notebook, its line breaks as spaces."""
    notebook = nbformat.read(ROOT / folder / assignment / f"{assignment}.ipynb", as_version=4)
    (cell,) = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return " ".join(cell.source.split())


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
def test_exercises_1_states_the_floor_slack_the_grader_uses(folder):
    text = _text(folder, "01_ngram", "order_sweep_text")
    stated = re.findall(rf"no perplexity lies below {NUMBER} times the source's floor", text)
    assert stated, "Part 7 states the slack on the floor"
    assert [float(s) for s in stated] == [FLOOR_SLACK]


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
def test_exercises_4_states_the_tolerance_the_grader_uses(folder):
    text = _text(folder, "04_lstm_gru_esn", "memory_curve_text")
    stated = re.findall(rf"within {NUMBER} of the exact memory function", text)
    assert stated, "Part 6 states the tolerance on r^2_k"
    assert [float(s) for s in stated] == [CURVE_TOLERANCE]
