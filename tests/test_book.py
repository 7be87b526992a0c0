"""The website `seqlearn book` builds: pages, figures, maths, links, exercises without solutions.

These tests build a two-chapter course made here (a minute); the real book is built and checked in
``test_chapters.py``, from the chapters as executed once per test run.
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

from seqlearn.book import BookError, build_book, chapter_title, gather_references
from seqlearn.notebooks import chapter_paths, course_root, execute_notebook
from seqlearn.release import SolutionLeak

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


RELEASE = new_notebook(
    cells=[
        new_markdown_cell("# Exercises 1"),
        new_code_cell("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"),
    ],
    metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}, "language_info": {"name": "python"}},
)


@pytest.fixture(scope="module")
def tiny_course(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("course")
    (root / "pyproject.toml").write_text("")
    shutil.copytree(ROOT / "book", root / "book")
    (root / "chapters").mkdir()
    nbformat.write(tiny_chapter(1, "02_two.ipynb"), root / "chapters/01_one.ipynb")
    nbformat.write(tiny_chapter(2, "01_one.ipynb"), root / "chapters/02_two.ipynb")
    (root / "exercises/01_one").mkdir(parents=True)
    nbformat.write(RELEASE, root / "exercises/01_one/01_one.ipynb")
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
@pytest.mark.browser
def test_tiny_book_maths_and_figures_render_in_chromium(tiny_book):
    """Screenshots: build/test-artifacts/tiny-book/."""
    require_browser()
    seen = check_in_browser(tiny_book.index.parent, ["chapters/01_one.html"], artifacts_dir("tiny-book"))
    assert seen["chapters/01_one.html"] == {"maths": 2, "errors": 0, "images": [True, True]}


def test_a_release_holding_a_solution_is_refused(tiny_course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(tiny_course, root)
    leaked = nbformat.read(root / "exercises/01_one/01_one.ipynb", as_version=4)
    leaked.cells[1].source = "### BEGIN SOLUTION\ndef f(x):\n    return x\n### END SOLUTION"
    nbformat.write(leaked, root / "exercises/01_one/01_one.ipynb")
    with pytest.raises(SolutionLeak, match="01_one"):
        build_book(tmp_path / "book", root=root, repository=REPOSITORY)


@pytest.mark.integration
def test_a_broken_cross_reference_fails_the_build(tiny_course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(tiny_course, root)
    nbformat.write(tiny_chapter(2, "03_missing.ipynb"), root / "chapters/02_two.ipynb")
    with pytest.raises(BookError, match="03_missing"):
        build_book(tmp_path / "book", root=root, repository=REPOSITORY)


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
