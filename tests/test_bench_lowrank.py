"""bench/lowrank.py runs end to end on its quick config (``--quick``, a few seconds) and says what it skipped."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.integration  # runs the bench script in a fresh interpreter
SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "lowrank.py"


def bench(*argv: str) -> str:
    result = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_quick_bench_has_the_linear_and_erf_rows_and_the_gpu_rows_or_why_not():
    out = bench("--quick")
    assert out.startswith(f"torch {torch.__version__}")
    linear = out.split("\n1. ", 1)[1].split("\n2. ", 1)[0]
    erf = out.split("\n2. ", 1)[1].split("\n3. ", 1)[0]
    assert "overlap ODE" in linear and "exact map" in linear
    for N in (512, 1024):
        row = next(line.split() for line in linear.splitlines() if line.split()[:2] == ["linear", str(N)])
        assert len(row) == 8
        assert float(row[6]) < 1e-9 and float(row[7]) < 1e-9  # the exact map is GD on the vectors
        row = next(line.split() for line in erf.splitlines() if line.split()[:2] == ["erf", str(N)])
        assert len(row) == 6
        assert float(row[5]) < 0.05  # the Gaussian closure after a few epochs
    if torch.cuda.is_available():
        assert "\n3. Full networks on the GPU (" in out and "linear GPU" in out and "erf GPU" in out
    else:
        assert "\n3. " in out and "skipped, torch.cuda.is_available() is False" in out


def test_skip_gpu_says_so():
    out = bench("--quick", "--skip-gpu", "--sizes", "512", "--check-linear", "2", "--check-erf", "1")
    rows = [line.split()[:2] for line in out.splitlines() if line.startswith("   ")]
    assert ["linear", "512"] in rows and ["erf", "512"] in rows
    assert "\n3. Full networks on the GPU: skipped (--skip-gpu)" in out
