"""Seeded torch generators, so every model draws its initial weights from its own seed.

A model built with ``seed=s`` draws from a private CPU generator seeded with ``s`` (never torch's
global one), and hands each sub-module a seed drawn from that generator: the same seed gives the
same weights, whatever else the program has drawn. Torch-side only (importing it imports torch).
"""

from __future__ import annotations

import torch

__all__ = ["torch_generator", "child_seed"]


def torch_generator(seed: int | None) -> torch.Generator:
    """A private CPU generator seeded with ``seed`` (``None``: a seed drawn from torch's global one)."""
    g = torch.Generator()
    g.manual_seed(int(seed) if seed is not None else int(torch.randint(2**62, ()).item()))
    return g


def child_seed(g: torch.Generator) -> int:
    """A seed for a sub-module's own generator, drawn from ``g``."""
    return int(torch.randint(2**62, (), generator=g))
