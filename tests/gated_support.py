"""Helpers of the tests of seqlearn.gated: random float64 parameters, gradients, a max-abs comparison."""

import torch
from torch import nn

F64 = torch.float64
TOL = 1e-10


def randomise(module: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=F64))
    return module


def grads(module: nn.Module) -> list[torch.Tensor]:
    return [p.grad.clone() for p in module.parameters()]


def close(a, b, tol=TOL):
    assert a.shape == b.shape
    assert (a - b).abs().max().item() < tol
