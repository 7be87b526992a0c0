"""The website `seqlearn book` builds: pages, figures, maths, links, exercises without solutions.

The fast tests build a two-chapter course made here (a minute); the slow test builds the real book
once for the module (every chapter executed, several minutes) and checks every page of it.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import shutil
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from browser_support import artifacts_dir, launch_chromium, require_browser
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from offline_html import read_page

from seqlearn.book import BookError, build_book, chapter_title, gather_references
from seqlearn.notebooks import chapter_paths, course_root
from seqlearn.release import SolutionLeak

ROOT = course_root(Path(__file__).parent)
REPOSITORY = "https://github.com/example/course"


class _BookPage(HTMLParser):
    """The parts of a MyST-NB page the tests look at: output images, text outside code, links."""

    SKIPPED = frozenset({"script", "style", "pre", "code"})

    def __init__(self):
        super().__init__()
        self.output_images = 0
        self.text: list[str] = []
        self.code: list[str] = []
        self.links: list[str] = []
        self.article_links: list[str] = []  # those in the page's own content, not its navigation
        self._in_article = 0
        self._divs: list[bool] = []  # for each open <div>: is it a cell's output area?
        self._skipping = 0
        self._in_pre = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            self._divs.append("cell_output" in (attrs.get("class") or "").split())
        elif tag == "img" and any(self._divs):
            self.output_images += 1
        elif tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
            if self._in_article:
                self.article_links.append(attrs["href"])
        if tag in self.SKIPPED:
            self._skipping += 1
        self._in_pre += tag == "pre"
        self._in_article += tag == "article"

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            self._divs.pop()
        if tag in self.SKIPPED:
            self._skipping -= 1
        self._in_pre -= tag == "pre"
        self._in_article -= tag == "article"

    def handle_data(self, data):
        if not self._skipping:
            self.text.append(data)
        elif self._in_pre:
            self.code.append(data)

    def plain_text(self) -> str:
        """The page's text outside code, whitespace collapsed."""
        return " ".join("".join(self.text).split())

    def code_lines(self) -> set[str]:
        """Every line of the page's code blocks, stripped (syntax highlighting undone)."""
        return {line.strip() for line in "".join(self.code).splitlines()}


def parse(page: Path) -> _BookPage:
    parser = _BookPage()
    parser.feed(page.read_text("utf-8"))
    return parser


def raw_tex(page: _BookPage) -> list[str]:
    """Dollar-delimited maths left in the page's text: what MyST failed to parse as maths."""
    return re.findall(r"\$\$.*?\$\$|\$[^$\s][^$]*?\$", " ".join(page.text), flags=re.S)


def image_outputs(notebook: Path) -> int:
    """How many image outputs the executed notebook holds (what its page must show)."""
    nb = nbformat.read(notebook, as_version=4)
    return sum(
        any(key.startswith("image/") for key in output.get("data", {}))
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def assert_offline(page_path: Path) -> None:
    page = read_page(page_path)
    assert page.external_resources() == [], f"{page_path.name} loads from the network"
    for url in page.resources:
        local = (page_path.parent / url.split("?")[0].split("#")[0]).resolve()
        assert url.startswith("data:") or local.is_file(), f"{page_path.name}: {url} is missing"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 as a static web server would; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


TYPESET = """() => window.MathJax && MathJax.isReady && MathJax.Hub.queue.pending === 0
    && [...document.querySelectorAll('article .math.notranslate')]
        .every(e => e.querySelector('.MathJax, .MathJax_Display'))"""
"""True once MathJax has run and typeset every maths element of the page's content."""

RENDERED = """() => ({
    maths: document.querySelectorAll('article .math.notranslate').length,
    errors: document.querySelectorAll('.MathJax_Error, merror, .merror').length,
    images: [...document.querySelectorAll('article .cell_output img')].map(img => img.complete && img.naturalWidth > 0),
})"""
"""How many maths elements the content has, how many MathJax errors, and whether each output image loaded."""


def check_in_browser(html: Path, pages: list[str], shots: Path) -> dict[str, dict]:
    """Open each page of the site at ``html`` in chromium; return what :data:`RENDERED` reads there.

    Waits until MathJax has typeset every maths element (a page where it cannot times out), and
    leaves a full-page screenshot of each page in ``shots``.
    """
    seen = {}
    with serve(html) as base, launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for name in pages:
            page.goto(f"{base}/{name}")
            page.wait_for_function(TYPESET, timeout=60_000)
            seen[name] = page.evaluate(RENDERED)
            page.screenshot(path=shots / (name.replace("/", "_") + ".png"), full_page=True)
    return seen


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
    return build_book(tmp_path_factory.mktemp("book"), root=tiny_course, repository=REPOSITORY)


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


@pytest.fixture(scope="module")
def real_book(tmp_path_factory):
    return build_book(tmp_path_factory.mktemp("real-book"), root=ROOT)


def straight_quotes(text: str) -> str:
    """``text`` with the typographic quotes Sphinx's smartquotes puts in made straight again."""
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def code_lines(notebook: Path, *, between_markers: bool) -> set[str]:
    """The stripped code lines of ``notebook``: inside nbgrader's solution and hidden-test markers, or outside."""
    lines, inside = set(), False
    for cell in nbformat.read(notebook, as_version=4).cells:
        for line in cell.source.splitlines() if cell.cell_type == "code" else []:
            if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
                inside = True
            elif re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
                inside = False
            elif inside == between_markers and len(line.strip()) > 12:
                lines.add(line.strip())
    return lines


@pytest.mark.slow
@pytest.mark.timeout(1800)  # it builds the book: every chapter executed (8-9 min here), then Sphinx
def test_real_book_has_every_chapter_with_its_figures_and_no_raw_tex(real_book):
    html = real_book.index.parent
    staged = html.parent / "_source" / "chapters"
    assert real_book.misquoted == {}
    index = parse(real_book.index)
    for chapter in chapter_paths(ROOT):
        page_path = html / "chapters" / f"{chapter.stem}.html"
        assert f"chapters/{chapter.stem}.html" in index.links
        page = parse(page_path)
        expected = image_outputs(staged / chapter.name)
        assert expected >= 3 and page.output_images == expected, f"{chapter.stem}: {page.output_images}/{expected}"
        assert raw_tex(page) == [], f"{chapter.stem} shows unparsed maths"
        assert_offline(page_path)
        assert any(link.startswith("https://mybinder.org/v2/gh/") for link in page.links)


@pytest.mark.slow
def test_real_book_shows_exercises_without_solutions(real_book):
    html = real_book.index.parent
    for solution in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        page = parse(html / "exercises" / solution.parent.name / f"{solution.stem}.html")
        shown = page.code_lines()
        given = code_lines(solution, between_markers=False)  # what students get: the page shows it
        hidden = code_lines(solution, between_markers=True) - given
        assert hidden and len(given & shown) > 0.9 * len(given), solution.stem
        assert hidden & shown == set(), f"{solution.stem} shows {sorted(hidden & shown)[:3]}"


@pytest.mark.slow
def test_real_book_bibliography_lists_every_reference(real_book):
    text = parse(real_book.index.parent / "bibliography.html").plain_text()
    for reference in gather_references(chapter_paths(ROOT)):
        assert straight_quotes(reference.text.replace("*", "")) in straight_quotes(text)


@pytest.mark.slow
@pytest.mark.browser
def test_real_book_maths_and_figures_render_in_chromium(real_book):
    """Every chapter page in chromium: maths typeset without errors, every figure loaded.

    Screenshots: build/test-artifacts/book/.
    """
    require_browser()
    pages = [f"chapters/{chapter.stem}.html" for chapter in chapter_paths(ROOT)]
    for name, seen in check_in_browser(real_book.index.parent, pages, artifacts_dir("book")).items():
        assert seen["maths"] > 20 and seen["errors"] == 0, (name, seen)
        assert len(seen["images"]) >= 3 and all(seen["images"]), (name, seen)
