"""HTML pages of executed notebooks read offline: local MathJax, no CDN scripts, explorers as images."""

import matplotlib.pyplot as plt
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from offline_html import read_page

from seqlearn.course.notebooks import MATHJAX_DIR, _write_html, execute_notebook
from seqlearn.viz import explorer


def draw(a):
    _fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, a])
    plt.show()


def executed_tiny_notebook():
    """Maths, and an explorer cell with the output and widget state a kernel would leave."""
    widget = explorer(draw, a=(1, 5, 1))
    bundle = widget._repr_mimebundle_()
    plt.close("all")
    cell = new_code_cell("explorer(draw, a=(1, 5, 1))", execution_count=1)
    cell.outputs = [new_output("display_data", data=bundle)]
    nb = new_notebook(cells=[new_markdown_cell("The square: $$x^2$$, see [here](https://example.org)."), cell])
    state = {widget.model_id: {"model_name": "VBoxModel", "state": {}}}
    nb.metadata.widgets = {"application/vnd.jupyter.widget-state+json": {"version_major": 2, "state": state}}
    return nb


@pytest.fixture
def page_path(tmp_path):
    return _write_html(executed_tiny_notebook(), "tiny", tmp_path / "html")


@pytest.mark.integration
def test_page_loads_nothing_from_the_network(page_path):
    page = read_page(page_path)
    assert page.resources, "the parser found no resource at all"
    assert page.external_resources() == []
    assert "widget-state" not in page_path.read_text(encoding="utf-8")


@pytest.mark.integration
def test_page_uses_the_local_mathjax(page_path):
    scripts = [url for url in read_page(page_path).resources if "MathJax.js" in url]
    assert scripts == [f"{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"]
    mathjax = page_path.parent / MATHJAX_DIR
    assert (mathjax / "MathJax.js").is_file()
    assert (mathjax / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()
    assert "$$x^2$$" in page_path.read_text(encoding="utf-8")


@pytest.mark.integration
def test_explorer_shows_its_image_instead_of_the_widget(page_path):
    (cell,) = read_page(page_path).cells_calling("explorer")
    assert cell.images == 1
    assert "interactive(children" not in page_path.read_text(encoding="utf-8")


@pytest.mark.integration
def test_mathjax_is_copied_once_and_repaired_when_incomplete(page_path):
    mathjax = page_path.parent / MATHJAX_DIR
    stamp = (mathjax / "MathJax.js").stat().st_mtime_ns
    _write_html(executed_tiny_notebook(), "again", page_path.parent)
    assert (mathjax / "MathJax.js").stat().st_mtime_ns == stamp
    (mathjax / "config" / "Safe.js").unlink()
    _write_html(executed_tiny_notebook(), "again", page_path.parent)
    assert (mathjax / "config" / "Safe.js").is_file()
    assert sorted(p.name for p in page_path.parent.iterdir()) == ["again.html", MATHJAX_DIR, "tiny.html"]


@pytest.mark.parametrize("where", ["file/sub", "file"])
def test_unwritable_html_dir_fails_before_the_notebook_runs(tmp_path, where):
    (tmp_path / "file").write_text("not a directory")
    marker = tmp_path / "ran"
    nb = new_notebook(cells=[new_code_cell(f"open({str(marker)!r}, 'w').close()")])
    nbformat.write(nb, tmp_path / "nb.ipynb")
    with pytest.raises(ValueError, match=r"cannot write to .*file"):
        execute_notebook(tmp_path / "nb.ipynb", html_dir=tmp_path / where)
    assert not marker.exists()
