"""Benchmark: the from-scratch LSTM/GRU of seqlearn.gated against torch.nn.LSTM/GRU.

    python bench/gated.py [--threads 1] [--devices cpu,cuda] [--repeats 3] [--steps 5]
                          [--batch 64] [--length 100] [--input 32] [--hidden 128] [--layers 1]

Training throughput (forward + backward + Adam step), in time steps x sequences per second,
best of ``--repeats`` runs of ``--steps`` steps, on every device present, for three models
with the same weights: ``seqlearn.gated.LSTM``/``GRU`` on the fast path (the fused torch
kernel fed the cells' parameters; cuDNN on a GPU), the same layers forced onto the step loop
of the from-scratch cells (``fast=False``), and the peer a user would pick,
``torch.nn.LSTM``/``GRU``. Ratios are seqlearn over peer from one run.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from seqlearn.gated import GRU, LSTM


def throughput(model: nn.Module, x: torch.Tensor, steps: int, repeats: int) -> float:
    """Best sequences x time steps per second of ``steps`` Adam steps on a squared-output loss."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = float("inf")
    for _ in range(repeats + 1):  # the first run warms up
        if x.is_cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad()
            y = model(x)[0]
            (y**2).mean().backward()
            opt.step()
        if x.is_cuda:
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return steps * x.shape[0] * x.shape[1] / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--devices", default="cpu,cuda")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=100)
    ap.add_argument("--input", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    devices = [d for d in args.devices.split(",") if d == "cpu" or (d == "cuda" and torch.cuda.is_available())]
    print(
        f"B={args.batch} T={args.length} D={args.input} H={args.hidden} L={args.layers}, "
        f"{args.threads} CPU thread(s), torch {torch.__version__}"
    )
    print(
        f"{'device':6} {'model':5} {'fast path':>12} {'step loop':>12} {'torch.nn':>12} {'fast/nn':>8} {'loop/nn':>8}"
    )
    for device in devices:
        x = torch.randn(args.batch, args.length, args.input, device=device)
        for name, ours_type, peer_type in (("LSTM", LSTM, nn.LSTM), ("GRU", GRU, nn.GRU)):
            peer = peer_type(args.input, args.hidden, args.layers, batch_first=True).to(device)
            fast = ours_type.from_torch(peer)
            loop = ours_type.from_torch(peer)
            loop.fast = False
            rates = [throughput(m, x, args.steps, args.repeats) for m in (fast, loop, peer)]
            print(
                f"{device:6} {name:5} {rates[0]:12,.0f} {rates[1]:12,.0f} {rates[2]:12,.0f} "
                f"{rates[0] / rates[2]:8.2f} {rates[1] / rates[2]:8.2f}"
            )
    print("(sequences x time steps per second, forward + backward + Adam; ratios from this run)")


if __name__ == "__main__":
    main()
