"""The website `seqlearn book` builds: pages, figures, maths, links, exercises without solutions.

These tests build a two-chapter course with one assignment made here (two minutes); the real book
is built and checked in ``test_chapters.py``, from the chapters as executed once per test run.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from book_pages import assert_offline, check_in_browser, image_outputs, parse, raw_tex
from browser_support import artifacts_dir, require_browser
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import seqlearn.course.book as book_module
from seqlearn.course.book import BookError, build_book, chapter_title, gather_references
from seqlearn.course.notebooks import chapter_paths, course_root, execute_notebook
from seqlearn.course.release import SolutionLeak

ROOT = course_root(Path(__file__).parent)
REPOSITORY = "https://github.com/example/course"


# ---------------------------------------------------------------- a course made here


DRAW = """import matplotlib.pyplot as plt
from seqlearn.viz import explorer

def draw(a):
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, a])
    ax.set_xlabel("step")
    ax.set_ylabel("value")
    plt.show()
"""


def tiny_chapter(n: int, other: str) -> nbformat.NotebookNode:
    """A chapter with a title, maths, a link to ``other``, a figure, an explorer and references."""
    return new_notebook(
        cells=[
            new_markdown_cell(
                f"# Chapter {n}: tiny\n\nThe square $x^2$ and\n\n$$\\sum_i x_i$$\n\nSee [the other]({other})."
            ),
            new_code_cell(DRAW + "draw(1)"),
            new_code_cell("explorer(draw, a=(1, 5, 1))"),
            new_markdown_cell(
                "## References\n\n- A. B. Zeta. Last work. 2001.\n- C. Alpha and D. Beta. A long title\n"
                f"  that wraps. 199{n}.\n- E. F. Shared. Cited twice. 2020."
            ),
        ]
    )


def _nbgrader(**fields) -> dict:
    return {"nbgrader": {"schema_version": 3, "locked": False, "solution": False, "grade": False, **fields}}


SOURCE = new_notebook(
    cells=[
        new_markdown_cell("# Exercises 1"),
        new_code_cell(
            "def f(x):\n    ### BEGIN SOLUTION\n    return x * x  # the instructor's answer\n    ### END SOLUTION",
            metadata=_nbgrader(solution=True, grade_id="f"),
        ),
        new_code_cell(
            "assert f(2) == 4\n### BEGIN HIDDEN TESTS\nassert f(3) == 9  # a hidden check\n### END HIDDEN TESTS",
            metadata=_nbgrader(grade=True, locked=True, points=1, grade_id="test_f"),
        ),
    ],
    metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    },
)
"""The source of the tiny course's one assignment (``solutions/01_one``)."""


def saved_work(source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What a working tree's ``exercises/`` may hold after someone worked in it: the exercise with an
    answer typed in, run and saved with its output, and the hidden check copied in by hand."""
    notebook = nbformat.from_dict(source)
    answer, test = notebook.cells[1], notebook.cells[2]
    answer.source = "def f(x):\n    return x ** 2  # a saved answer"
    answer.outputs = [nbformat.v4.new_output("stream", text="a saved output\n")]
    test.source = test.source.replace("### BEGIN HIDDEN TESTS\n", "").replace("### END HIDDEN TESTS", "")
    return notebook


@pytest.fixture(scope="module")
def tiny_course(tmp_path_factory) -> Path:
    """Two chapters and one assignment, whose ``exercises/`` holds saved work instead of the release."""
    root = tmp_path_factory.mktemp("course")
    (root / "pyproject.toml").write_text("")
    shutil.copytree(ROOT / "book", root / "book")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "chapters").mkdir()
    nbformat.write(tiny_chapter(1, "02_two.ipynb"), root / "chapters/01_one.ipynb")
    nbformat.write(tiny_chapter(2, "01_one.ipynb"), root / "chapters/02_two.ipynb")
    for folder, notebook in (("solutions", SOURCE), ("exercises", saved_work(SOURCE))):
        (root / folder / "01_one").mkdir(parents=True)
        nbformat.write(notebook, root / folder / "01_one/01_one.ipynb")
    return root


@pytest.fixture(scope="module")
def tiny_book(tiny_course, tmp_path_factory):
    """The tiny course's book, its first chapter given as already executed: ``.executed`` names those it ran."""
    given = execute_notebook(tiny_course / "chapters/01_one.ipynb", executed_dir=tmp_path_factory.mktemp("given"))
    executed: list[str] = []
    book = build_book(
        tmp_path_factory.mktemp("book"),
        root=tiny_course,
        repository=REPOSITORY,
        runs=[given],
        on_run=lambda run: executed.append(run.name),
    )
    book.executed = executed
    return book


@pytest.mark.integration
def test_a_chapter_given_executed_is_rendered_not_run_again(tiny_book):
    assert tiny_book.executed == ["02_two"]
    assert [run.name for run in tiny_book.runs] == ["01_one", "02_two"]
    assert tiny_book.runs[0].notebook.parent.name.startswith("given")


@pytest.mark.integration
def test_a_run_without_its_executed_notebook_is_refused(tiny_course, tmp_path):
    run = execute_notebook(tiny_course / "chapters/01_one.ipynb")
    with pytest.raises(ValueError, match=r"executed notebook.*01_one"):
        build_book(tmp_path / "book", root=tiny_course, repository=REPOSITORY, runs=[run])


def test_references_are_gathered_once_and_sorted_by_first_author(tiny_course):
    references = gather_references(chapter_paths(tiny_course))
    texts = [r.text for r in references]
    assert texts == [
        "C. Alpha and D. Beta. A long title that wraps. 1991.",
        "C. Alpha and D. Beta. A long title that wraps. 1992.",
        "E. F. Shared. Cited twice. 2020.",
        "A. B. Zeta. Last work. 2001.",
    ]
    assert [r.chapters for r in references] == [["01_one"], ["02_two"], ["01_one", "02_two"], ["01_one", "02_two"]]


def test_a_chapter_needs_a_title(tmp_path):
    nbformat.write(new_notebook(cells=[new_markdown_cell("no heading")]), tmp_path / "x.ipynb")
    with pytest.raises(ValueError, match="no '# ' title"):
        chapter_title(tmp_path / "x.ipynb")


@pytest.mark.integration
def test_tiny_book_has_each_chapter_with_its_figures_and_maths(tiny_book):
    html = tiny_book.index.parent
    staged = html.parent / "_source" / "chapters"
    for name in ("01_one", "02_two"):
        page_path = html / "chapters" / f"{name}.html"
        page = parse(page_path)
        assert image_outputs(staged / f"{name}.ipynb") == 2  # the figure and the explorer's PNG
        assert page.output_images == 2
        assert raw_tex(page) == []
        assert_offline(page_path)
        assert f"https://mybinder.org/v2/gh/example/course/main?urlpath=lab/tree/chapters/{name}.ipynb" in page.links
    assert "widget-view" not in (html / "chapters/01_one.html").read_text("utf-8")


@pytest.mark.integration
def test_tiny_book_links_chapters_exercises_and_bibliography(tiny_book):
    html = tiny_book.index.parent
    index = parse(tiny_book.index)
    for href in ("chapters/01_one.html", "chapters/02_two.html", "exercises/01_one/01_one.html", "bibliography.html"):
        assert href in index.links
    assert "02_two.html" in parse(html / "chapters/01_one.html").article_links  # the cross-reference resolved
    bibliography = parse(html / "bibliography.html")
    text = bibliography.plain_text()
    assert text.index("Alpha") < text.index("Shared") < text.index("Zeta")
    assert bibliography.article_links.count("chapters/02_two.html") == 3
    assert bibliography.article_links.count("chapters/01_one.html") == 3
    exercise = parse(html / "exercises/01_one/01_one.html")
    assert "Exercises 1" in exercise.plain_text() and exercise.output_images == 0
    assert "raise NotImplementedError()" in exercise.code_lines()


@pytest.mark.integration
def test_the_exercise_page_is_the_fresh_release_not_the_saved_work(tiny_book, tiny_course):
    """The course's ``exercises/`` holds an answer, its output and the hidden check (:func:`saved_work`):
    the page shows what nbgrader releases from ``solutions/`` instead, and the working tree is left alone."""
    path = tiny_book.index.parent / "exercises/01_one/01_one.html"
    text = path.read_text("utf-8")
    for saved in ("a saved answer", "a saved output", "a hidden check", "the instructor's answer"):
        assert saved not in text
    assert {"assert f(2) == 4", "raise NotImplementedError()"} <= parse(path).code_lines()
    assert nbformat.read(tiny_course / "exercises/01_one/01_one.ipynb", as_version=4) == saved_work(SOURCE)


@pytest.mark.integration
@pytest.mark.browser
def test_tiny_book_maths_and_figures_render_in_chromium(tiny_book):
    """Screenshots: build/test-artifacts/tiny-book/."""
    require_browser()
    seen = check_in_browser(tiny_book.index.parent, ["chapters/01_one.html"], artifacts_dir("tiny-book"))
    assert seen["chapters/01_one.html"] == {"maths": 2, "errors": 0, "images": [True, True]}


@pytest.mark.integration
def test_a_source_that_nbgrader_refuses_fails_the_build_saying_why(tiny_course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(tiny_course, root)
    broken = nbformat.read(root / "solutions/01_one/01_one.ipynb", as_version=4)
    broken.cells[0].source += "\n\n### BEGIN HIDDEN TESTS\nnot a test cell\n### END HIDDEN TESTS"
    nbformat.write(broken, root / "solutions/01_one/01_one.ipynb")
    with pytest.raises(BookError, match=r"seqlearn exercises(?s:.*)Hidden test region detected in a non-grade cell"):
        build_book(tmp_path / "book", root=root, repository=REPOSITORY)


def test_a_release_holding_a_solution_is_refused(tiny_course, tmp_path, monkeypatch):
    """Should a release still hold solution code, the book refuses it (nbgrader's own checks come first)."""
    release = tmp_path / "release"
    (release / "01_one").mkdir(parents=True)
    nbformat.write(SOURCE, release / "01_one/01_one.ipynb")
    monkeypatch.setattr(book_module, "_generate_release", lambda root, workdir: release)
    with pytest.raises(SolutionLeak, match="01_one"):
        build_book(tmp_path / "book", root=tiny_course, repository=REPOSITORY)


def test_a_course_without_its_solutions_has_no_exercise_pages_to_build(tiny_course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(tiny_course, root, ignore=shutil.ignore_patterns("solutions"))
    with pytest.raises(FileNotFoundError, match=r"generated from solutions/.* lacks solutions"):
        build_book(tmp_path / "book", root=root, repository=REPOSITORY)


@pytest.mark.integration
def test_a_failed_sphinx_build_names_each_cause(tiny_course, tmp_path):
    """A broken cross-reference and a heading jump Sphinx refuses (H1 to H3): the message quotes both warnings."""
    root = tmp_path / "course"
    shutil.copytree(tiny_course, root)
    chapter = tiny_chapter(2, "03_missing.ipynb")
    chapter.cells.insert(1, new_markdown_cell("### A jump from the title"))
    nbformat.write(chapter, root / "chapters/02_two.ipynb")
    with pytest.raises(BookError) as failed:
        build_book(tmp_path / "book", root=root, repository=REPOSITORY)
    message = str(failed.value)
    assert message.startswith("sphinx-build failed (exit 1):\n"), message
    assert re.search(r"02_two.ipynb.*WARNING.*03_missing", message), message
    assert re.search(r"02_two.ipynb.*WARNING.*H1 to H3", message), message


def test_a_tool_s_output_is_cut_to_the_lines_that_name_the_problem():
    noise = [f"reading sources... [{i}%]" for i in range(100)]
    warnings = [f"/src/page{i}.md:3: WARNING: problem {i} " + "x" * 1000 for i in range(20)]
    traceback = ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "KeyError: 'chapters'"]
    lines = book_module._tail("\n".join([*noise, *warnings, *traceback])).splitlines()
    assert lines[0] == "(10 earlier lines left out)"
    assert lines[-1] == "KeyError: 'chapters'" and "problem 19" in lines[-3]
    assert len(lines) == 13 and max(map(len, lines)) <= 300
    assert book_module._tail("only this\n\nand this\n") == "only this\nand this"


@pytest.mark.parametrize("url", ["http://github.com/a/b", "https://gitlab.com/a/b", "github.com/a/b", ""])
def test_the_repository_must_be_a_github_url(tiny_course, tmp_path, url):
    with pytest.raises(ValueError, match="repository must be"):
        build_book(tmp_path / "book", root=tiny_course, repository=url)


# ---------------------------------------------------------------- the real course


def markdown_links(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("chapter", chapter_paths(ROOT), ids=lambda p: p.stem)
def test_chapter_links_resolve_in_jupyterlab(chapter):
    """A relative link in a chapter opens a file of the repository (in JupyterLab as in the book)."""
    relative = [link for link in markdown_links(chapter) if not re.match(r"https?://|#", link)]
    assert relative, "a chapter links to its exercises at least"
    for link in relative:
        assert (chapter.parent / link).is_file(), f"{chapter.name} links to {link}, which does not exist"


@pytest.mark.parametrize("chapter", chapter_paths(ROOT), ids=lambda p: p.stem)
def test_every_chapter_has_references(chapter):
    assert any(chapter.stem in r.chapters for r in gather_references([chapter]))
