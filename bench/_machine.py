"""What a benchmark prints about the machine it ran on (shared by the bench scripts, not a benchmark)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import torch


def cuda_names() -> list[str]:
    """The CUDA devices' names, asked in a child process so that this one's CUDA stays uninitialised
    (a process that has initialised CUDA can no longer fork CPU workers)."""
    if not torch.cuda.is_available():
        return []
    code = "import torch; [print(torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    return out.stdout.split("\n")[:-1] or [f"{torch.cuda.device_count()} device(s), names unavailable"]


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def load() -> str:
    """The 1-minute load average: other processes on a small machine distort every timing."""
    return f"load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "load average unknown"
