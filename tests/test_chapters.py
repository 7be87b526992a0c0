"""Every chapter runs top to bottom, headless, within Binder's budget (3 min, 1.5 GB); every
number its prose quotes is the one it computes; its HTML page reads offline, with each explorer
shown as an image; the book built from these runs has every chapter's page, the exercises without
their solutions and the bibliography. Each chapter is executed once per test run (``chapter_runs``
in conftest.py) for all of them: every test that needs an executed chapter is in this module."""

from pathlib import Path

import pytest
from book_pages import assert_offline, check_in_browser, code_lines, image_outputs, parse, raw_tex, straight_quotes
from browser_support import artifacts_dir, require_browser
from offline_html import read_page

from seqlearn.course.book import build_book, gather_references
from seqlearn.course.notebooks import chapter_paths, course_root, quotes

ROOT = course_root(Path(__file__).parent)
CHAPTERS = chapter_paths(ROOT)


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/NN_slug.ipynb found"


@pytest.mark.slow
@pytest.mark.timeout(900)  # the chapter's run (at most 3 min within the budget), or the book's first
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_within_binder_budget(path, chapter_runs):
    report = chapter_runs(path)
    print(report)
    assert report.within_binder_budget(), f"{report} is over Binder's 3 min / 1.5 GB"
    assert report.misquoted == [], "the prose quotes numbers the chapter does not compute:\n" + "\n".join(
        report.misquoted
    )
    page = read_page(report.html)
    assert page.external_resources() == [], "the chapter's HTML page needs the network"
    explorers = page.cells_calling("explorer")
    assert explorers, "no explorer cell found in the chapter's HTML page"
    assert all(cell.images for cell in explorers), "an explorer shows no image in the HTML page"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_quotes_its_numbers_from_the_run(path):
    import nbformat

    assert len(quotes(nbformat.read(path, as_version=4))) >= 10, "the prose quotes (almost) no computed number"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_is_committed_without_outputs(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert not any(c.get("outputs") or c.get("execution_count") for c in nb.cells if c.cell_type == "code")


# ---------------------------------------------------------------- the book of these runs


@pytest.fixture(scope="module")
def real_book(tmp_path_factory, chapter_runs):
    """The whole book, from the chapters as the chapter tests executed them (each is run once per test run)."""
    runs = [chapter_runs(chapter) for chapter in CHAPTERS]
    return build_book(tmp_path_factory.mktemp("real-book"), root=ROOT, runs=runs)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first to build the book: every chapter executed (8-9 min here), then Sphinx
def test_real_book_has_every_chapter_with_its_figures_and_no_raw_tex(real_book):
    html = real_book.index.parent
    staged = html.parent / "_source" / "chapters"
    assert real_book.misquoted == {}
    index = parse(real_book.index)
    for chapter in CHAPTERS:
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
    for reference in gather_references(CHAPTERS):
        assert straight_quotes(reference.text.replace("*", "")) in straight_quotes(text)


@pytest.mark.slow
@pytest.mark.browser
def test_real_book_maths_and_figures_render_in_chromium(real_book):
    """Every chapter page in chromium: maths typeset without errors, every figure loaded.

    Screenshots: build/test-artifacts/book/.
    """
    require_browser()
    pages = [f"chapters/{chapter.stem}.html" for chapter in CHAPTERS]
    for name, seen in check_in_browser(real_book.index.parent, pages, artifacts_dir("book")).items():
        assert seen["maths"] > 20 and seen["errors"] == 0, (name, seen)
        assert len(seen["images"]) >= 3 and all(seen["images"]), (name, seen)
