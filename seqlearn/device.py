"""Device choice and seeding.

Every torch-based function in seqlearn takes ``device=`` and defaults to
:func:`default_device`: CUDA if available, else Apple's MPS, else the CPU. The environment
variable ``SEQLEARN_DEVICE`` (e.g. ``cpu``, ``cuda``, ``cuda:1``) overrides the choice.
"""

from __future__ import annotations

import os
import random

import numpy as np

from .validation import integer

__all__ = ["default_device", "resolve_device", "seed_everything"]

ENV_VAR = "SEQLEARN_DEVICE"


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
