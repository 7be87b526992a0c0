"""Every chapter runs top to bottom, headless, within Binder's budget (3 min, 1.5 GB); every
number its prose quotes is the one it computes; its HTML page reads offline, with each explorer
shown as an image."""

import pytest
from offline_html import read_page

from seqlearn.notebooks import chapter_paths, course_root, execute_notebook, quotes

CHAPTERS = chapter_paths(course_root(__file__))


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/NN_slug.ipynb found"


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_within_binder_budget(path, monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLEARN_DEVICE", "cpu")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    report = execute_notebook(path, timeout=300, html_dir=tmp_path)
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
