"""Feedback pages render their maths offline: each carries MathJax inside itself (``seqlearn.course.feedback``).

A one-exercise assignment made here goes through ``nbgrader generate_assignment``, ``autograde``
and ``generate_feedback`` with the course's ``nbgrader_config.py``. Its feedback page, copied
alone into an empty directory as the exchange passes it on, must typeset every formula in
chromium without asking for a single file.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from browser_support import artifacts_dir, launch_chromium, require_browser
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from traitlets.config.loader import PyFileConfigLoader

from seqlearn.course.feedback import FeedbackExporter, mathjax_script
from seqlearn.course.nbgrader_tools import run_nbgrader, student_submission

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_maths"
FORMULAS = [
    r"$x_t^2$",
    r"$\mathbb{R}^{n}$",
    r"$\mathbf{W} \odot \mathcal{L}$",
    r"$$h_t = \tanh(W_{hh} h_{t-1} + b), \qquad \lVert h \rVert \le 1$$",
    r"$$\begin{aligned} r_t &= \sigma(a) \\ n_t &= \tanh\big(b + r_t \odot c\big) \end{aligned}$$",
    r"$$f(x) = \begin{cases} 0 & x < 0 \\ x^2 & \text{otherwise} \end{cases}$$",
]


def _nbgrader(**fields) -> dict:
    return {"nbgrader": {"schema_version": 3, "locked": False, "solution": False, "grade": False, **fields}}


SOURCE = new_notebook(
    cells=[
        new_markdown_cell("# Exercises with maths\n\n" + "\n\n".join(FORMULAS)),
        new_code_cell(
            "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
            metadata=_nbgrader(solution=True, grade_id="square"),
        ),
        new_code_cell("assert square(3) == 9", metadata=_nbgrader(grade=True, locked=True, points=1, grade_id="test")),
    ],
    metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    },
)


class _Resources(HTMLParser):
    """The URLs a page's ``<script src>`` and ``<link href>`` load."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        url = attrs.get("src") if tag == "script" else attrs.get("href") if tag == "link" else None
        if url:
            self.urls.append(url)


def loaded_urls(page: str) -> list[str]:
    parser = _Resources()
    parser.feed(page)
    return parser.urls


@pytest.fixture(scope="module")
def feedback_page(tmp_path_factory) -> Path:
    """The feedback page of a student who answered the exercise, written by the course's nbgrader set-up."""
    course, name = tmp_path_factory.mktemp("course"), f"{ASSIGNMENT}.ipynb"
    shutil.copy2(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    for folder in ("solutions", "submitted/student"):
        (course / folder / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(SOURCE, course / "solutions" / ASSIGNMENT / name)
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "exercises" / ASSIGNMENT / name, as_version=4)
    nbformat.write(student_submission(SOURCE, release), course / "submitted/student" / ASSIGNMENT / name)
    run_nbgrader(course, "autograde", ASSIGNMENT, "--force")
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    return course / "feedback/student" / ASSIGNMENT / f"{ASSIGNMENT}.html"


def test_the_course_gives_generate_feedback_the_exporter_that_carries_mathjax():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert config.GenerateFeedback.exporter_class is FeedbackExporter


def test_a_page_carries_mathjax_instead_of_loading_it():
    notebook = new_notebook(cells=[new_markdown_cell("$x$")])
    body, _ = FeedbackExporter(template_name="classic").from_notebook_node(notebook)
    assert mathjax_script() in body
    assert not [url for url in loaded_urls(body) if "mathjax" in url.lower()]
    script = mathjax_script()
    assert script.count("</script") == 1 and script.endswith("</script>")


@pytest.mark.slow
def test_the_feedback_page_loads_no_mathjax_and_carries_it(feedback_page):
    page = feedback_page.read_text("utf-8")
    assert "Score: 1.0 / 1.0" in page
    assert mathjax_script() in page
    assert not [url for url in loaded_urls(page) if re.search(r"(?i)mathjax|cdn", url)], loaded_urls(page)


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_alone_typesets_every_formula_in_chromium_asking_for_no_file(feedback_page, tmp_path):
    """Screenshot: build/test-artifacts/feedback-page/."""
    require_browser()
    alone = tmp_path / "fetched" / feedback_page.name
    alone.parent.mkdir()
    shutil.copy2(feedback_page, alone)
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(alone.as_uri())
        page.wait_for_function("() => window.MathJax && MathJax.isReady && MathJax.Hub.queue.pending === 0")
        seen = page.evaluate(
            """() => ({
                maths: document.querySelectorAll('math').length,
                errors: document.querySelectorAll('merror, .MathJax_Error').length,
                text: [...document.querySelectorAll('math')].map(m => m.textContent).join(' '),
                aligned: [...document.querySelectorAll('mtable[columnalign] mtd')].map(c => c.style.textAlign),
                raw: document.querySelector('.text_cell_render').innerText.includes('$'),
            })"""
        )
        page.screenshot(path=artifacts_dir("feedback-page") / "feedback.png", full_page=True)
    assert asked == [alone.as_uri()]
    assert seen["maths"] == len(FORMULAS) and seen["errors"] == 0 and not seen["raw"]
    assert "ℝ" in seen["text"] and "𝐖" in seen["text"] and "ℒ" in seen["text"]
    assert seen["aligned"][:4] == ["right", "left", "right", "left"]  # aligned's two rows
    assert seen["aligned"][4:] == ["left", "left", "left", "left"]  # the two cases
