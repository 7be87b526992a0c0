"""Every chapter runs top to bottom, headless, within Binder's budget (3 min, 1.5 GB)."""

import pytest

from seqlearn.notebooks import chapter_paths, course_root, execute_notebook

CHAPTERS = chapter_paths(course_root(__file__))


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/NN_slug.ipynb found"


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_within_binder_budget(path, monkeypatch):
    monkeypatch.setenv("SEQLEARN_DEVICE", "cpu")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    report = execute_notebook(path, timeout=300)
    print(report)
    assert report.within_binder_budget(), f"{report} is over Binder's 3 min / 1.5 GB"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_is_committed_without_outputs(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert not any(c.get("outputs") or c.get("execution_count") for c in nb.cells if c.cell_type == "code")
