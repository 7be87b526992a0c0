"""bench/learnability.py runs end to end on its tiny config (``--quick``, a few seconds) and says what it skipped."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from seqlearn.learnability.models import ARCHITECTURES

pytestmark = pytest.mark.integration  # runs the bench script in a fresh interpreter
SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "learnability.py"


def bench(*argv: str) -> str:
    result = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_quick_bench_reports_every_architecture_and_the_gpu_rows_or_why_not():
    out = bench("--quick")
    assert out.startswith(f"torch {torch.__version__}")
    table = out.split("\n1. ", 1)[1].split("\n2. ", 1)[0]
    for arch in ARCHITECTURES:
        assert f"\n   {arch} " in table
    assert "workers=1" in out and "workers=2" in out and "Binder" in out
    assert "loop reference" in out and "reverse mode" in out
    if torch.cuda.is_available():
        assert "\n3. quick config" in out and "skipped" not in out
    else:
        assert "\n3. " in out and "skipped, torch.cuda.is_available() is False" in out


def test_gpu_section_runs_on_the_cpu_when_asked():
    out = bench("--quick", "--skip-cpu", "--device-a", "cpu", "--architectures", "const,lstm")
    assert "\n1. " not in out and "\n2. " not in out
    section = out.split("\n3. ", 1)[1]
    assert "on cpu" in section and "\n   const " in section and "\n   lstm " in section
