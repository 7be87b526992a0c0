"""Device choice and seeding.

Every torch-based function in seqlearn takes ``device=`` and defaults to
:func:`default_device`: CUDA if available, else Apple's MPS, else the CPU. The environment
variable ``SEQLEARN_DEVICE`` (e.g. ``cpu``, ``cuda``, ``cuda:1``) overrides the choice.

On a CPU the same code computes different last bits on different processors: MKL, oneDNN,
torch's vectorised kernels, OpenBLAS and NumPy each pick the widest instructions the CPU has
(AVX-512 on many Intel servers, AVX2 on AMD's), and sum in a different order. A training run
amplifies those bits into a different network. :data:`CPU_KERNEL_PINS` makes every x86 CPU with
AVX2 run the same (AVX2) code paths; the course's kernels run with it (Binder, ``make lab``,
:func:`seqlearn.notebooks.execute_notebook`), so a chapter computes the numbers its prose quotes.
``SEQLEARN_PIN_KERNELS=0`` turns the pins off: the kernels then take the machine's own code paths,
as on a JupyterHub image or a laptop that never heard of them, and a chapter's trained numbers
move within the tolerances its quotes state (:class:`seqlearn.notebooks.Quote`).
"""

from __future__ import annotations

import os
import random

import numpy as np

from .validation import integer

__all__ = ["CPU_KERNEL_PINS", "default_device", "kernels_pinned", "pinned_cpu_env", "resolve_device", "seed_everything"]

ENV_VAR = "SEQLEARN_DEVICE"
PIN_VAR = "SEQLEARN_PIN_KERNELS"
_PIN_VALUES = {"1": True, "yes": True, "on": True, "0": False, "no": False, "off": False, "native": False}

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


def kernels_pinned(env=None) -> bool:
    """Whether ``env`` (default ``os.environ``) asks for :data:`CPU_KERNEL_PINS`: yes unless ``SEQLEARN_PIN_KERNELS=0``.

    Raises
    ------
    ValueError
        If ``SEQLEARN_PIN_KERNELS`` is set to anything but 1/yes/on or 0/no/off/native.
    """
    value = (os.environ if env is None else env).get(PIN_VAR, "1").strip().lower() or "1"
    if value not in _PIN_VALUES:
        raise ValueError(f"{PIN_VAR} must be 1 (pin the CPU kernels) or 0 (the machine's own), got {value!r}")
    return _PIN_VALUES[value]


def pinned_cpu_env(env=None) -> dict[str, str]:
    """``env`` (default ``os.environ``) with :data:`CPU_KERNEL_PINS` added where it does not set them.

    With ``SEQLEARN_PIN_KERNELS=0`` in ``env``, ``env`` as it is (:func:`kernels_pinned`).
    """
    env = dict(os.environ if env is None else env)
    return {**CPU_KERNEL_PINS, **env} if kernels_pinned(env) else env


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
