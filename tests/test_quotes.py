"""Numbers quoted in a chapter's prose are checked against what the chapter computes."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from seqlearn.course.notebooks import Quote, execute_notebook, quotes

PROSE = (
    "Perplexity falls to 12.23<!--q: ppl | .2f --> with $\\lambda = 0.56$<!--q: lam|.2f-->; "
    "the share of unseen trigrams is 4.2%<!--q: 100 * share | .1f -->, of 1,234<!--q: n | ,d --> in all."
)


def _notebook(tmp_path, *, ppl="12.2341", lam="0.555", share="0.0421", n="1234"):
    nb = new_notebook(
        cells=[
            new_markdown_cell(PROSE),
            new_code_cell(f"ppl, lam, share, n = {ppl}, {lam}, {share}, {n}"),
        ]
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def test_quotes_are_found_with_their_expressions():
    nb = new_notebook(cells=[new_markdown_cell(PROSE), new_markdown_cell("no number<!-- a plain comment -->")])
    for cell in nb.cells:
        cell.id = "md"
    assert quotes(nb) == [
        Quote("md", "12.23", "ppl", ".2f"),
        Quote("md", "0.56", "lam", ".2f"),
        Quote("md", "4.2", "100 * share", ".1f"),
        Quote("md", "1,234", "n", ",d"),
    ]


def test_quotes_in_scientific_notation_are_read_whole():
    nb = new_notebook(cells=[new_markdown_cell("a gap of 2e-16<!--q: gap | .0e --> and 3.5e+04<!--q: n | .1e -->")])
    nb.cells[0].id = "md"
    assert quotes(nb) == [Quote("md", "2e-16", "gap", ".0e"), Quote("md", "3.5e+04", "n", ".1e")]


@pytest.mark.slow
def test_matching_quotes_pass_and_others_are_named(tmp_path):
    assert execute_notebook(_notebook(tmp_path), timeout=60).misquoted == []
    report = execute_notebook(_notebook(tmp_path, ppl="12.25", n="1235"), timeout=60)
    assert len(report.misquoted) == 2
    assert "the text says 12.23, the chapter computes 12.25 (ppl | .2f)" in report.misquoted[0]
    assert "the text says 1,234, the chapter computes 1,235 (n | ,d)" in report.misquoted[1]


@pytest.mark.slow
def test_a_quote_whose_expression_fails_is_named(tmp_path):
    path = _notebook(tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += " And 3<!--q: missing_name | d -->."
    nbformat.write(nb, path)
    (problem,) = execute_notebook(path, timeout=60).misquoted
    assert "computes NameError: name 'missing_name' is not defined" in problem


@pytest.mark.slow
def test_the_kernel_runs_with_the_cpu_kernel_pins(tmp_path, monkeypatch):
    """The quoted numbers are computed with the same code paths on every x86 CPU (seqlearn.device)."""
    from seqlearn.device import CPU_KERNEL_PINS

    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Zen")  # a value set by the user is kept
    prose = "".join(f"{len(v)}<!--q: len(os.environ[{k!r}]) | d --> " for k, v in CPU_KERNEL_PINS.items())
    nb = new_notebook(cells=[new_markdown_cell(prose), new_code_cell("import os, torch")])
    nbformat.write(nb, tmp_path / "nb.ipynb")
    (kept,) = execute_notebook(tmp_path / "nb.ipynb", timeout=60).misquoted
    assert "OPENBLAS_CORETYPE" in kept and "computes 3 " in kept


def test_a_tolerance_is_read_after_the_spec():
    nb = new_notebook(cells=[new_markdown_cell("loss 0.07<!--q: loss | .2f ~ 0.01 --> and 120<!--q: n | d ~ 5% -->")])
    nb.cells[0].id = "md"
    assert quotes(nb) == [Quote("md", "0.07", "loss", ".2f", "0.01"), Quote("md", "120", "n", "d", "5%")]


@pytest.mark.parametrize("bad", ["a lot", "-0.1", "5 %", "0.1%%"])
def test_a_tolerance_that_is_not_a_number_is_refused(bad):
    nb = new_notebook(cells=[new_markdown_cell(f"loss 0.07<!--q: loss | .2f ~ {bad} -->")])
    nb.cells[0].id = "md"
    with pytest.raises(ValueError, match="cell md: a quote's tolerance"):
        quotes(nb)


@pytest.mark.parametrize(
    ("quote", "computed", "accepted"),
    [
        (Quote("c", "0.07", "x", ".2f", "0.01"), "0.07", True),
        (Quote("c", "0.07", "x", ".2f", "0.01"), "0.08", True),
        (Quote("c", "0.07", "x", ".2f", "0.01"), "0.09", False),
        (Quote("c", "0.07", "x", ".2f"), "0.08", False),  # no tolerance: digit for digit
        (Quote("c", "1,200", "x", ",d", "5%"), "1,260", True),  # 5% of the computed value
        (Quote("c", "1,200", "x", ",d", "5%"), "1,270", False),
        (Quote("c", "0.07", "x", ".2f", "0.01"), "NameError: name 'x' is not defined", False),
    ],
)
def test_a_quote_accepts_its_value_within_its_tolerance_only(quote, computed, accepted):
    assert quote.accepts(computed) is accepted


@pytest.mark.slow
@pytest.mark.parametrize("pins", ["0", "1"])
def test_on_every_kernel_path_a_quote_may_move_within_its_tolerance(tmp_path, monkeypatch, pins):
    nb = new_notebook(
        cells=[
            new_markdown_cell(
                "about 0.07<!--q: a | .2f ~ 0.01 -->, about 0.07<!--q: b | .2f ~ 0.01 -->, 3<!--q: c | d -->"
            ),
            new_code_cell("a, b, c = 0.076, 0.09, 4"),
        ]
    )
    nbformat.write(nb, tmp_path / "nb.ipynb")
    monkeypatch.setenv("SEQLEARN_PIN_KERNELS", pins)
    misquoted = execute_notebook(tmp_path / "nb.ipynb", timeout=60).misquoted
    assert len(misquoted) == 2
    assert "computes 0.09 (b | .2f ~ 0.01)" in misquoted[0] and "computes 4 (c | d)" in misquoted[1]


@pytest.mark.slow
def test_off_the_pins_the_kernel_gets_none_of_them(tmp_path, monkeypatch):
    from seqlearn.device import CPU_KERNEL_PINS

    for name in CPU_KERNEL_PINS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SEQLEARN_PIN_KERNELS", "0")
    prose = "".join(f"0<!--q: int({k!r} in os.environ) | d --> " for k in CPU_KERNEL_PINS)
    nb = new_notebook(cells=[new_markdown_cell(prose), new_code_cell("import os")])
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert execute_notebook(tmp_path / "nb.ipynb", timeout=60).misquoted == []
