"""bench/ngram.py runs end to end on its quick config (``--quick``, seconds) and says why a peer is absent."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # runs the bench script in a fresh interpreter
SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "ngram.py"


def test_quick_bench_prints_the_table_against_kenlm_or_why_not():
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.match(r".+, \d+ cores, load average [\d.]+ at the start; median of 1 run", out)
    assert "corpus: synthetic corpus of Penn Treebank's shape (--quick)" in out
    rows = {line.split("|")[0].strip(): line.split("|")[1:] for line in out.splitlines() if line.count("|") == 3}
    for row in (
        "load the 3-gram ARPA",
        "load the 5-gram ARPA",
        "score 5-gram, all tokens in one call",
        "score 5-gram, sentence scores in one call",
        "score 5-gram, one sentence per call",
        "estimate MKN 5-gram -> ARPA (CLI)",
        "seqlearn ngram perplexity, 5-gram",
    ):
        assert row in rows, row
    if importlib.util.find_spec("kenlm") is not None:
        assert "MiB" in rows["load the 5-gram ARPA"][1] and "x memory" in rows["load the 5-gram ARPA"][2]
        differences = [float(x) for x in re.findall(r"relative difference ([\d.e+-]+)", out)]
        assert len(differences) == 2 and max(differences) < 1e-6
    else:
        assert "KenLM's Python module is not installed" in out
    lmplz_built = (SCRIPT.parents[1] / "build" / "kenlm" / "build" / "bin" / "lmplz").exists()
    if shutil.which("lmplz") is None and not lmplz_built:
        assert "lmplz is absent" in out and "measured earlier" in out
    else:
        assert re.search(r"lmplz -S \d+M: .* wall, .* CPU, peak \d+ MiB", rows["estimate MKN 5-gram -> ARPA (CLI)"][1])
        assert "x wall" in rows["estimate MKN 5-gram -> ARPA (CLI)"][2]
    assert "\nNLTK:\n" in out and ("5-gram perplexity: NLTK" in out or "NLTK is not installed" in out)
