"""Device choice and seeding.

Every torch-based function in seqlearn takes ``device=`` and defaults to
:func:`default_device`: CUDA if available, else Apple's MPS, else the CPU. The environment
variable ``SEQLEARN_DEVICE`` (e.g. ``cpu``, ``cuda``, ``cuda:1``) overrides the choice.

On a CPU the same code computes different last bits on different processors: MKL, oneDNN,
torch's vectorised kernels, OpenBLAS and NumPy each pick the widest instructions the CPU has
(AVX-512 on many Intel servers, AVX2 on AMD's), and sum in a different order. A training run
amplifies those bits into a different network. :data:`CPU_KERNEL_PINS` makes every x86 CPU with
AVX2 run AVX2 code paths; the course's kernels run with it (Binder, ``make lab``,
:func:`seqlearn.course.notebooks.execute_notebook`). Machines of one vendor then compute the same bits;
an Intel and an AMD processor still differ in a few (measured: a chapter's trained numbers move in
their second digit), which is why every trained number the prose quotes states a tolerance.
``SEQLEARN_PIN_KERNELS=0`` turns the pins off: the kernels then take the machine's own code paths,
as on a JupyterHub image or a laptop that never heard of them, and a chapter's trained numbers
move within the tolerances its quotes state (:class:`seqlearn.course.notebooks.Quote`), as they do
under the pins from one vendor's CPU to another's.
``SEQLEARN_PIN_KERNELS=baseline`` pins them to the oldest x86-64 code paths instead
(:data:`CPU_KERNEL_BASELINE`): a floating-point path that differs from the AVX2 one on every x86
machine, which is how the tests stand in for "another machine".
"""

from __future__ import annotations

import os
import random

import numpy as np

from .validation import integer

__all__ = [
    "CPU_KERNEL_BASELINE",
    "CPU_KERNEL_PINS",
    "KERNEL_THREADS",
    "default_device",
    "kernel_env",
    "kernel_path",
    "resolve_device",
    "seed_everything",
]

ENV_VAR = "SEQLEARN_DEVICE"
PIN_VAR = "SEQLEARN_PIN_KERNELS"
_PIN_NAMES = {"1": "avx2", "yes": "avx2", "on": "avx2", "avx2": "avx2", "baseline": "baseline"}
_PIN_NAMES |= dict.fromkeys(("0", "no", "off", "native"), "native")

CPU_KERNEL_PINS = {
    "MKL_CBWR": "AVX2,STRICT",  # MKL's AVX2 branch, whatever the CPU's vendor (conditional numerical reproducibility)
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN: torch's fused CPU LSTM
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    "OPENBLAS_CORETYPE": "Haswell",  # NumPy's and SciPy's OpenBLAS: its AVX2 kernels
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",  # NumPy's loops: no AVX-512
}
"""Environment variables that pin the CPU kernels of MKL, oneDNN, torch, OpenBLAS and NumPy to
their AVX2 code paths. Each library reads its variable when it loads, so they must be set before
the process starts (a kernel's environment), not from inside it."""


CPU_KERNEL_BASELINE = {
    "MKL_CBWR": "COMPATIBLE",  # MKL's SSE2 branch
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "ATEN_CPU_CAPABILITY": "default",  # torch's scalar kernels
    "OPENBLAS_CORETYPE": "Nehalem",  # OpenBLAS's SSE4.2-era kernels
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",  # NumPy's baseline loops only
}
"""The same variables set to the oldest x86-64 code paths each library has: another floating-point
path than :data:`CPU_KERNEL_PINS` on every x86 CPU (``SEQLEARN_PIN_KERNELS=baseline``)."""

KERNEL_THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""One thread per math library in a course kernel, on every kernel path. The chapters' tensors are
small: a second thread saves little on a quiet machine, and where the cores are shared (Binder, a
hub, a test run beside other work) every parallel region waits for the thread that is not running.
Measured on two cores beside one busy process: a Chapter 6 cell took 15 s on one thread and did not
finish in 600 s on two. A chapter's independent jobs use the cores as forked workers instead
(:func:`seqlearn.parallel.map_in_workers`)."""

KERNEL_PATHS = {"avx2": CPU_KERNEL_PINS, "baseline": CPU_KERNEL_BASELINE, "native": {}}
"""What each ``SEQLEARN_PIN_KERNELS`` setting puts in a kernel's environment."""


def kernel_path(env=None) -> str:
    """The CPU code paths ``env`` (default ``os.environ``) asks for: ``"avx2"``, ``"baseline"`` or ``"native"``.

    ``SEQLEARN_PIN_KERNELS``: unset, 1, yes, on or avx2 -> ``"avx2"``; 0, no, off or native ->
    ``"native"``; baseline -> ``"baseline"``.

    Raises
    ------
    ValueError
        If ``SEQLEARN_PIN_KERNELS`` is set to anything else.
    """
    value = (os.environ if env is None else env).get(PIN_VAR, "").strip().lower() or "1"
    if value not in _PIN_NAMES:
        raise ValueError(
            f"{PIN_VAR} must be 1 (pin the CPU kernels to AVX2), 0 (the machine's own) or baseline, got {value!r}"
        )
    return _PIN_NAMES[value]


def kernel_env(env=None) -> dict[str, str]:
    """``env`` (default ``os.environ``) with the pins of :func:`kernel_path` and :data:`KERNEL_THREADS`
    added where it does not set them.

    :data:`CPU_KERNEL_PINS` by default; with ``SEQLEARN_PIN_KERNELS=0``, only the threads.
    """
    env = dict(os.environ if env is None else env)
    return {**KERNEL_PATHS[kernel_path(env)], **KERNEL_THREADS, **env}


def default_device():
    """The device seqlearn uses when none is given: ``$SEQLEARN_DEVICE``, else cuda > mps > cpu.

    Returns
    -------
    torch.device
    """
    import torch

    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        return resolve_device(override)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def resolve_device(device=None):
    """Turn ``None``, a string or a ``torch.device`` into an available ``torch.device``.

    Raises
    ------
    ValueError
        If the string is not a device name, or names a device this machine does not have.
    """
    import torch

    if device is None:
        return default_device()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r} is not a device name such as 'cpu' or 'cuda'") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} asks for CUDA, but torch sees no CUDA device here")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device={device!r} asks for MPS, which is not available here")
    return dev


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's, NumPy's and torch's global generators (all devices) with ``seed``.

    Returns a fresh ``numpy.random.Generator`` seeded with ``seed``, the preferred source of
    randomness in seqlearn code (it is passed around explicitly, never global).
    """
    seed = integer(seed, "seed", low=0)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (seeding the legacy global generator is the point)
    try:
        import torch
    except ImportError:  # numpy-only use of the package
        pass
    else:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)
