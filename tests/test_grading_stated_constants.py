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


STATED = [
    ("01_ngram", "order_sweep_text", r"no perplexity lies below {} times the source's floor", FLOOR_SLACK),
    ("04_lstm_gru_esn", "memory_curve_text", r"within {} of the exact memory function", CURVE_TOLERANCE),
]
"""Each (assignment, cell, the sentence that states a constant, the grader's constant)."""


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("assignment, grade_id, sentence, constant", STATED)
def test_the_notebook_states_the_constant_the_grader_uses(folder, assignment, grade_id, sentence, constant):
    stated = re.findall(sentence.format(NUMBER), _text(folder, assignment, grade_id))
    assert stated, f"{assignment} states the constant in {grade_id}"
    assert [float(s) for s in stated] == [constant]
