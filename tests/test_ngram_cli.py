"""The ``seqlearn ngram`` command (estimate, perplexity), run in-process and as a subprocess."""

import argparse
import io
import re
import subprocess
import sys

import pytest

from seqlearn.ngram import ModifiedKneserNey, read_arpa
from seqlearn.ngram.cli import add_subparser, main

TRAIN = "a b c\na b\nb c a\nc\na a b c\n"
TEST = "a b zz\nc a\n"


def run(monkeypatch, capsys, argv, stdin: str | bytes = ""):
    data = stdin.encode() if isinstance(stdin, str) else stdin
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_writes_the_models_arpa(monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount", "0.5", "1", "1.5"], TRAIN)
    assert code == 0 and out.startswith("\\data\\\nngram 1=6\nngram 2=10\n") and out.endswith("\\end\\\n")
    assert "2-gram" in err
    model = ModifiedKneserNey(2, discounts=(0.5, 1, 1.5)).fit([line.split() for line in TRAIN.splitlines()])
    buffer = io.StringIO()
    model.to_arpa(buffer)
    assert out == buffer.getvalue()


def test_estimate_then_perplexity(monkeypatch, capsys, tmp_path):
    arpa = tmp_path / "kn.arpa"
    argv = ["estimate", "-o", "3", "--method", "kn", "--discount", "0.7", "--arpa", str(arpa)]
    code, _, _ = run(monkeypatch, capsys, argv, TRAIN)
    assert code == 0
    code, out, _ = run(monkeypatch, capsys, ["perplexity", str(arpa)], TEST)
    assert code == 0
    report = read_arpa(arpa).evaluate([line.split() for line in TEST.splitlines()])
    lines = dict(line.split("\t") for line in out.strip().splitlines())
    assert float(lines["Perplexity including OOVs:"]) == pytest.approx(report.perplexity, rel=1e-5)
    assert float(lines["Perplexity excluding OOVs:"]) == pytest.approx(report.perplexity_without_oov, rel=1e-5)
    assert (lines["OOVs:"], lines["Tokens:"]) == ("1", "7")  # zz; a b zz </s> c a </s>


@pytest.mark.parametrize("method", ["mle", "addk", "abs"])
def test_other_methods(monkeypatch, capsys, method):
    order = "1" if method == "addk" else "2"
    extra = ["--discount", "0.5"] if method == "abs" else ["--k", "0.5"] if method == "addk" else []
    code, out, _ = run(monkeypatch, capsys, ["estimate", "--order", order, "--method", method, *extra], TRAIN)
    assert code == 0 and read_arpa(io.StringIO(out)).order == int(order)


def test_discount_fallback_like_lmplz(monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount-fallback"], TRAIN)
    assert code == 0 and "[0.5, 1.0, 1.5]" in err
    explicit = run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount", "0.5", "1", "1.5"], TRAIN)[1]
    assert out == explicit  # every order of this tiny text falls back
    argv = ["estimate", "-o", "2", "--method", "kn", "--discount-fallback", "0.3"]
    code, out, _ = run(monkeypatch, capsys, argv, TRAIN)
    assert code == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["estimate", "--order", "0"], "order n must be an int >= 1, got 0"),
        (["estimate", "--order", "2"], r"pass --discount-fallback \(lmplz's 0.5 1 1.5\), or --discount"),
        (["estimate", "--order", "2", "--method", "addk"], "not a backoff model"),
        (["estimate", "--order", "2", "--method", "kn", "--discount", "1.5"], r"\[0, 1\]"),
        (["estimate", "--order", "2", "--method", "mle", "--discount", "0.5"], "does not apply"),
        (["estimate", "--order", "1", "--method", "addk", "--discount-fallback"], "does not apply"),
        (["estimate", "--order", "2", "--method", "kn", "--discount-fallback"], "needs a value"),
        (["perplexity", "/nonexistent/model.arpa"], "No such file"),
    ],
)
def test_bad_input_is_reported(monkeypatch, capsys, argv, message):
    code, _, err = run(monkeypatch, capsys, argv, TRAIN)
    assert code == 1
    assert "error:" in err and re.search(message, err), err


@pytest.mark.parametrize("method", ["abs", "kn"])
def test_undefined_discounts_name_the_flags(monkeypatch, capsys, method):
    code, _, err = run(monkeypatch, capsys, ["estimate", "--order", "2", "--method", method], "a a a\n" * 3)
    assert code == 1 and "pass --discount-fallback D, or --discount" in err and "discounts=" not in err


@pytest.mark.parametrize("method", ["mle", "abs", "kn", "mkn"])
def test_order_beyond_every_sentence(monkeypatch, capsys, method):
    """Orders above the longest sentence + 2 have no n-grams: the model is the lower orders'."""
    text = "a b c d\nb c\nc a b\n"
    options = {"mle": [], "abs": ["--discount", "0.5"], "kn": ["--discount", "0.5"], "mkn": ["--discount-fallback"]}
    sentences = [line.split() for line in text.splitlines()]
    scores = []
    for order in ("6", "21"):
        code, out, err = run(
            monkeypatch, capsys, ["estimate", "--order", order, "--method", method, *options[method]], text
        )
        assert code == 0, err
        scores.append(read_arpa(io.StringIO(out)).evaluate(sentences).perplexity)
    assert scores[0] == pytest.approx(scores[1], rel=1e-6)


NOT_UTF8 = b"a b c\nb \xff c\n"


def test_non_utf8_standard_input_names_the_line(monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount-fallback"], NOT_UTF8)
    assert code == 1 and out == ""
    assert "standard input, line 2, column 3: byte 0xff is not UTF-8" in err


def test_non_utf8_file_names_the_file_and_line(monkeypatch, capsys, tmp_path):
    text = tmp_path / "train.txt"
    text.write_bytes(NOT_UTF8)
    code, _, err = run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount-fallback", "--text", str(text)])
    assert code == 1 and f"{text}, line 2, column 3: byte 0xff is not UTF-8" in err
    arpa = tmp_path / "m.arpa"
    run(monkeypatch, capsys, ["estimate", "--order", "2", "--discount-fallback", "--arpa", str(arpa)], TRAIN)
    arpa.write_bytes(arpa.read_bytes() + b"\xfe\n")
    code, _, err = run(monkeypatch, capsys, ["perplexity", str(arpa)], TEST)
    assert code == 1 and f"{arpa}, line " in err and "0xfe is not UTF-8" in err


def test_empty_training_text(monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, ["estimate", "--order", "2"], "\n\n")
    assert code == 1 and "empty corpus" in err


def test_add_subparser_registers_ngram():
    parser = argparse.ArgumentParser(prog="seqlearn")
    add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["ngram", "perplexity", "model.arpa"])
    assert args.command == "ngram" and args.ngram_command == "perplexity" and callable(args.func)
    with pytest.raises(SystemExit):
        parser.parse_args(["ngram", "estimate"])  # --order is required


@pytest.mark.integration
def test_module_runs_as_a_script(tmp_path):
    arpa = tmp_path / "m.arpa"
    estimate = [sys.executable, "-m", "seqlearn.ngram.cli", "estimate", "--order", "2", "--discount", "0.5", "1", "1.5"]
    done = subprocess.run(estimate, input=TRAIN, capture_output=True, text=True, check=True)
    arpa.write_text(done.stdout)
    done = subprocess.run(
        [sys.executable, "-m", "seqlearn.ngram.cli", "perplexity", str(arpa)],
        input=TEST,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Perplexity including OOVs:" in done.stdout and "Tokens:\t7" in done.stdout
