"""Benchmark: Chapter 5's Tier 2 pipeline (seqlearn.learnability.pipeline): cost on 2 CPU cores and on a GPU.

    python bench/learnability.py [--quick] [--skip-cpu] [--epochs-a 2] [--diag-a 64]
                                 [--architectures const,shared,diag,gru,lstm] [--arch diag]
                                 [--repeats 3] [--device-a cuda] [--seeds 2]

1. The whole Tier 2 experiment at the chapter's scale (``Tier2Config()``'s defaults, printed in the
   section's title) on the CPU, one torch thread per process as the pipeline runs it: per
   architecture the training seconds, the diagnostics seconds (``Diagnostics.seconds``), R^2 and
   the achievable R^2 (from the ``workers=1`` run); then the
   wall time of ``learnability_experiment`` over all architectures with ``workers=1`` against
   ``workers=2`` (forked processes), their ratio, and the ``workers=2`` time over Binder's
   3 minutes on 2 cores. Both runs must agree (max |R^2 difference| is printed).
2. Where the diagnostics' time goes, for one architecture (``--arch``) at the same scale: each
   stage of :func:`~seqlearn.learnability.pipeline.diagnose` timed on one chunk (best of
   ``--repeats``) and projected over the diagnostic set, next to the measured
   ``Diagnostics.seconds`` of section 1; then two kernels against a peer:
   ``transport`` (prefix sums) against ``transport_loop`` (the per-window product and sum) on
   16 sequences, and ``sensitivities`` (forward mode, ``torch.func.jvp``) against the same
   Jacobian-vector product by reverse-mode autograd (``torch.autograd.functional.jvp``, the
   double-backward trick: a VJP with a graph, then its VJP along the direction) on one chunk.
   Ratios are the peer's time over seqlearn's; the max |difference| checks they compute one thing.
3. On a GPU (``torch.cuda.is_available()``; skipped with a line saying so otherwise): the paper's
   configuration A (``Tier2Config.config_a()``: T 1024, H 128, 8000 training sequences in batches
   of 512, 128 lags) for each architecture: one untimed warm-up step, ``--epochs-a`` timed epochs
   (validation included), and the diagnostics on ``--diag-a`` and on twice as many sequences,
   which split their time into a fixed part (the ECF fits, whose instantaneous samples are
   capped at 100k) and a per-sequence part. Extrapolated: the full run per architecture and seed
   (750 epochs + 8000 diagnostic sequences), per seed (the five architectures) and for the
   paper's whole run (5 seeds x 5 architectures), against the paper's "roughly one day per DGX
   Spark run" (its README; a DGX Spark is a GB10, not the GPU measured here).

4. The seeds of one architecture trained together: for each architecture, ``--seeds`` seeds trained
   by one ``train_regressor`` call each against one ``train_ensemble`` (the pipeline's way), at the
   chapter's scale on the CPU, one torch thread: CPU seconds (``time.process_time``) and wall seconds
   of each, the two runs interleaved (the first one alternates between architectures), their
   ratios, and the largest difference between the two runs' trained parameters (0: bit for bit).

``--quick`` runs every section on a tiny config (seconds, a smoke test: its numbers say nothing
about the chapter); ``--skip-cpu`` skips sections 1, 2 and 4.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from collections.abc import Callable

import numpy as np
import torch
from _machine import cpu_name, cuda_names, load
from torch.func import functional_call

from seqlearn.learnability.effective_rates import adaptive_rates, base_rates, transport, transport_loop
from seqlearn.learnability.ensemble import train_ensemble
from seqlearn.learnability.matched import matched_statistic, random_directions, sensitivities
from seqlearn.learnability.models import ARCHITECTURES
from seqlearn.learnability.pipeline import MAX_INSTANTANEOUS, Diagnostics, Tier2Config, learnability_experiment
from seqlearn.learnability.pipeline import diagnose as diagnose_model
from seqlearn.learnability.stable import ecf_alpha
from seqlearn.learnability.task import GatedRegressor, delayed_regression, train_regressor

QUICK = Tier2Config(
    T=16, D=3, H=6, task_lags=(2, 4), coeffs=(0.6, 0.4), n_train=64, n_val=32, n_diag=80, epochs=2,
    batch_size=32, lags=(1, 2, 3, 5, 8, 12), K=2, chunk=32,
)  # fmt: skip
BINDER_SECONDS, BINDER_CORES = 180.0, 2  # every chapter must run on mybinder.org in 3 minutes on 2 cores
PAPER_SECONDS, PAPER_SEEDS = 86_400.0, 5  # "a single DGX Spark run completes in roughly one day": 5 seeds x 5 archs
LOOP_SEQUENCES = 16  # transport_loop's input: O(T^2) Python steps per lag


def sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def best_time(f: Callable, repeats: int, device="cpu"):
    """Best wall seconds of ``f()`` over ``repeats`` calls after one warm-up call, and its last result."""
    out = f()
    best = float("inf")
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        out = f()
        sync(device)
        best = min(best, time.perf_counter() - start)
    return best, out


def describe(c: Tier2Config) -> str:
    return (
        f"T={c.T} D={c.D} H={c.H}, {c.n_train} training sequences, {c.epochs} epochs of batch {c.batch_size}, "
        f"{c.n_diag} diagnostic sequences, {len(c.lags)} lags, K={c.K}, chunk {c.chunk}"
    )


# --- 1. the whole experiment on the CPU ----------------------------------------------------------------


def experiment(config: Tier2Config, architectures: list[str], workers: int):
    start = time.perf_counter()
    out = learnability_experiment(architectures, (0,), config, workers=workers, device="cpu", progress=False)
    return time.perf_counter() - start, out


def makespan(durations: list[float], workers: int) -> float:
    """Wall time of jobs handed out in order, each to the first free worker (``Pool.imap``'s schedule)."""
    free = [0.0] * workers
    for d in durations:
        free[free.index(min(free))] += d
    return max(free)


def cpu_experiment(config: Tier2Config, architectures: list[str]) -> dict[str, Diagnostics]:
    print(f"1. Tier 2 experiment on the CPU, one thread per process ({describe(config)})")
    experiment(QUICK, architectures[:1], 1)  # warm-up: imports and first-call costs
    t1, one = experiment(config, architectures, 1)
    t2, two = experiment(config, architectures, 2)
    print(f"   {'architecture':12} {'training s':>10} {'diagnose s':>10} {'total s':>8} {'R2':>6} {'max R2':>6}")
    for (arch, _), d in one.items():
        train, diag = d.seconds["training"], d.seconds["diagnostics"]
        print(f"   {arch:12} {train:10.1f} {diag:10.1f} {train + diag:8.1f} {d.r2:6.3f} {d.r2_max:6.3f}")
    drift = max(abs(d.r2 - two[key].r2) for key, d in one.items())
    jobs = [d.seconds["training"] + d.seconds["diagnostics"] for d in one.values()]
    print(
        f"   learnability_experiment over {len(architectures)} architectures: workers=1 {t1:.1f} s, "
        f"workers=2 {t2:.1f} s, ratio (workers=1 / workers=2) {t1 / t2:.2f}; max |R2 difference| {drift:.1e}"
    )
    print(
        f"   workers=2 if two processes ran as fast as one: {makespan(jobs, 2):.1f} s (the workers=1 job times, "
        f"handed out in order as the pool does), ratio {t1 / makespan(jobs, 2):.2f}"
    )
    print(
        f"   workers=2 over Binder's {BINDER_SECONDS:.0f} s on {BINDER_CORES} cores: {t2 / BINDER_SECONDS:.2f} "
        f"(this machine: {os.cpu_count()} cores; {load()}: other processes slow workers=2 first)"
    )
    return {arch: d for (arch, _), d in one.items()}


# --- 2. inside diagnose(): stages, and two kernels against a peer ---------------------------------------


def trained_for_one_step(config: Tier2Config, arch: str):
    """A chapter-sized model after one AdamW step (so Adam's rates exist), and a diagnostic set."""
    c = config
    train = delayed_regression(c.batch_size, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=0)
    diag = delayed_regression(c.n_diag, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=1, u=train.u)
    model = GatedRegressor(arch, c.D, c.H, s0=c.s0, layernorm=c.layernorm, seed=0, device="cpu")
    _, optimizer = train_regressor(model, train, train, 1, c.batch_size, c.lr, c.weight_decay, c.clip, 0, "cpu", False)
    return model, optimizer, diag


def sensitivities_reverse(model: torch.nn.Module, x: torch.Tensor, direction: dict) -> torch.Tensor:
    """The peer of ``sensitivities``: the same JVP by reverse mode (``torch.autograd.functional.jvp``)."""
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    buffers, names = dict(model.named_buffers()), list(params)

    def states(*values: torch.Tensor) -> torch.Tensor:
        return functional_call(model, (dict(zip(names, values)), buffers), (x,), {"states": True})

    return torch.autograd.functional.jvp(states, tuple(params.values()), tuple(direction[n] for n in names))[1]


def ecf_stage(config: Tier2Config, rng: np.random.Generator) -> None:
    """The ECF fits of one diagnose(): per lag, the per-sequence means and the (capped) per-step samples."""
    for ell in config.lags:
        ecf_alpha(rng.standard_normal(config.n_diag))
        ecf_alpha(rng.standard_normal(min(config.n_diag * (config.T - ell), MAX_INSTANTANEOUS)))


def diagnostics_breakdown(config: Tier2Config, arch: str, repeats: int, measured: Diagnostics | None) -> None:
    c = config
    print(f"\n2. Inside diagnose(): {arch}, one chunk of {c.chunk} sequences (best of {repeats}), {describe(c)}")
    model, optimizer, diag = trained_for_one_step(c, arch)
    x, y = diag.x[: c.chunk], diag.y[: c.chunk]
    lam = adaptive_rates(model.cell, optimizer)
    w = random_directions(model, 1, seed=0)[0]
    with torch.no_grad():
        traj = model.trajectory(x)
        residual = model.readout_of(traj) - y
    mu = base_rates(traj, c.lags, lam) * transport(traj, c.lags)
    delta = residual.to(torch.float64)[..., None] * model.readout.weight.detach().to(torch.float64)[0]
    v = sensitivities(model, x, w).detach()
    n_chunks = -(-c.n_diag // c.chunk)

    def trajectory():
        with torch.no_grad():
            return model.trajectory(x)

    def r2_forward():
        with torch.no_grad():
            return model(diag.x)

    rng = np.random.default_rng(0)
    stages = [  # name, function, calls per diagnose()
        ("trajectory (no grad)", trajectory, n_chunks),
        ("transport, order 1 (prefix sums)", lambda: transport(traj, c.lags), n_chunks),
        ("transport, order 0 (gate mass)", lambda: transport(traj, c.lags, order=0), n_chunks),
        ("base rates (Rayleigh)", lambda: base_rates(traj, c.lags, lam), n_chunks),
        ("sensitivities (torch.func.jvp)", lambda: sensitivities(model, x, w), n_chunks * c.K),
        ("matched statistic", lambda: matched_statistic(mu, delta, v, c.lags), n_chunks * c.K),
        ("ECF fits, all lags (normal samples)", lambda: ecf_stage(c, rng), 1),
        ("R2 forward over the diagnostic set", r2_forward, 1),
    ]
    times = [(name, best_time(f, repeats)[0], calls) for name, f, calls in stages]
    total = sum(t * calls for _, t, calls in times)
    print(f"   {'stage':38} {'ms per call':>11} {'calls':>6} {'projected s':>11} {'share':>6}")
    for name, t, calls in times:
        print(f"   {name:38} {t * 1e3:11.2f} {calls:6d} {t * calls:11.2f} {t * calls / total:6.1%}")
    line = f"   sum of the stages {total:.1f} s"
    if measured is not None:
        seconds = measured.seconds["diagnostics"]
        line += f"; diagnose() measured in section 1: {seconds:.1f} s (the rest, {seconds - total:.1f} s: the "
        line += "accumulators' sums and NaN masks, and the first-pass costs a best-of-N time leaves out)"
    print(line)

    with torch.no_grad():
        small = model.trajectory(diag.x[:LOOP_SEQUENCES])
    t_fast, fast = best_time(lambda: transport(small, c.lags), repeats)
    t_loop, loop = best_time(lambda: transport_loop(small, c.lags), repeats)
    error = float((fast - loop).abs().nan_to_num(0.0).max())
    print(
        f"   transport ({LOOP_SEQUENCES} sequences, {len(c.lags)} lags): prefix sums {t_fast * 1e3:.2f} ms, "
        f"loop reference {t_loop * 1e3:.1f} ms, ratio (loop / prefix sums) {t_loop / t_fast:.0f}, "
        f"max |difference| {error:.1e}"
    )
    t_fwd, forward = best_time(lambda: sensitivities(model, x, w).detach(), repeats)
    t_rev, reverse = best_time(lambda: sensitivities_reverse(model, x, w).detach(), repeats)
    error = float((forward - reverse).abs().max())
    print(
        f"   sensitivities ({c.chunk} sequences, one direction, {x.dtype}): torch.func.jvp {t_fwd * 1e3:.1f} ms, "
        f"reverse mode (autograd.functional.jvp) {t_rev * 1e3:.1f} ms, ratio (reverse / forward) "
        f"{t_rev / t_fwd:.2f}, max |difference| {error:.1e} (max |v| {float(forward.abs().max()):.1e})"
    )


# --- 3. configuration A on a GPU ---------------------------------------------------------------------------


def config_a_on(device: str, quick: bool, architectures: list[str], epochs: int, n_diag: int) -> None:
    base = QUICK if quick else Tier2Config.config_a()
    full_epochs, full_diag = Tier2Config.config_a().epochs, Tier2Config.config_a().n_diag
    title = "quick config (a smoke test, no extrapolation)" if quick else "the paper's configuration A"
    if torch.device(device).type == "cuda" and not torch.cuda.is_available():
        build = f"built for CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        print(
            f"\n3. {title} on the GPU: skipped, torch.cuda.is_available() is False here "
            f"(torch {torch.__version__}, {build}); the GPU rows need a CUDA GPU"
        )
        return
    print(f"\n3. {title} on {device}: {epochs} timed epoch(s), diagnostics on {n_diag} and {2 * n_diag} sequences")
    learnability_experiment(architectures[:1], (0,), QUICK, device=device, progress=False)  # warm-up: imports, context
    c = base
    print(f"   {describe(c)}; {torch.get_num_threads()} CPU thread(s) for the CPU side of diagnose()")
    print(
        f"   {'architecture':12} {'s/epoch':>8} {'diag fixed s':>12} {'s/sequence':>10} "
        f"{'full run h':>10}  (full: {full_epochs} epochs + {full_diag} diagnostic sequences, one seed)"
    )
    per_seed = 0.0
    for arch in architectures:
        train = delayed_regression(c.n_train, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=0)
        val = delayed_regression(c.n_val, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=10_000, u=train.u)
        diag = delayed_regression(2 * n_diag, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=20_000, u=train.u)
        model = GatedRegressor(arch, c.D, c.H, s0=c.s0, layernorm=c.layernorm, seed=0, device=device)
        xb, yb = train.x[: c.batch_size].to(device), train.y[: c.batch_size].to(device)
        torch.mean((model(xb) - yb) ** 2).backward()  # warm-up: kernels, cuBLAS handles, allocator
        model.zero_grad(set_to_none=True)
        sync(device)
        start = time.perf_counter()
        _, optimizer = train_regressor(
            model, train, val, epochs, c.batch_size, c.lr, c.weight_decay, c.clip, 0, device, False
        )
        sync(device)
        per_epoch = (time.perf_counter() - start) / epochs
        seconds = []
        for n in (n_diag, 2 * n_diag):
            part = dataclasses.replace(diag, x=diag.x[:n], y=diag.y[:n])
            d = diagnose_model(model, optimizer, part, c.lags, c.K, eps=c.eps, seed=0, chunk=c.chunk, progress=False)
            seconds.append(d.seconds["diagnostics"])
        per_sequence = (seconds[1] - seconds[0]) / n_diag
        if per_sequence <= 0:  # timing noise: charge everything to the sequences
            per_sequence = seconds[1] / (2 * n_diag)
        fixed = max(seconds[0] - n_diag * per_sequence, 0.0)
        full = full_epochs * per_epoch + fixed + full_diag * per_sequence
        per_seed += full
        hours = "-" if quick else f"{full / 3600:.2f}"
        print(f"   {arch:12} {per_epoch:8.2f} {fixed:12.2f} {per_sequence:10.4f} {hours:>10}")
    if quick:
        return
    whole = PAPER_SEEDS * per_seed * len(ARCHITECTURES) / len(architectures)
    subset = "" if len(architectures) == len(ARCHITECTURES) else f", scaled from {len(architectures)} architectures"
    print(
        f"   one seed, {len(ARCHITECTURES)} architectures: {per_seed / 3600:.1f} h{subset}; the paper's run "
        f"({PAPER_SEEDS} seeds x {len(ARCHITECTURES)} architectures): {whole / 3600:.1f} h, "
        f"ratio to the paper's ~1 day {whole / PAPER_SECONDS:.2f}"
    )


# --- 4. the seeds of one architecture: one run each against one ensemble -----------------------------------


def seed_runs(config: Tier2Config, arch: str, seeds: list[int]) -> list[GatedRegressor]:
    """The seeds' models, untrained, as the pipeline builds them."""
    c = config
    return [GatedRegressor(arch, c.D, c.H, s0=c.s0, layernorm=c.layernorm, seed=s, device="cpu") for s in seeds]


def ensemble_data(c: Tier2Config, seeds: list[int]):
    """Each seed's training and validation sets, as the pipeline draws them."""
    trains = [delayed_regression(c.n_train, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=s) for s in seeds]
    vals = [
        delayed_regression(c.n_val, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=s + 10_000, u=t.u)
        for s, t in zip(seeds, trains)
    ]
    return trains, vals


def train_separately(models, trains, vals, seeds, run) -> None:
    for model, train, val, s in zip(models, trains, vals, seeds):
        train_regressor(model, train, val, *run, s, "cpu", False)


def train_together(models, trains, vals, seeds, run) -> None:
    train_ensemble(models, trains, vals, seeds, *run, "cpu", False)


def timed(f: Callable, *args) -> tuple[float, float]:
    """CPU and wall seconds of ``f(*args)``."""
    cpu, wall = time.process_time(), time.perf_counter()
    f(*args)
    return time.process_time() - cpu, time.perf_counter() - wall


def ensemble_against_separate(config: Tier2Config, architectures: list[str], n_seeds: int) -> None:
    c, seeds = config, list(range(n_seeds))
    print(f"\n4. {n_seeds} seeds per architecture, one train_regressor each against one train_ensemble ({describe(c)})")
    trains, vals = ensemble_data(c, seeds)
    run = (c.epochs, c.batch_size, c.lr, c.weight_decay, c.clip)
    for f in (train_separately, train_together):  # warm-up: first-call costs (a torch.optim step imports torch._dynamo)
        f(seed_runs(QUICK, architectures[0], [0]), *ensemble_data(QUICK, [0]), [0], (1, *run[1:]))
    print(
        f"   {'architecture':12} {'separate cpu s':>14} {'wall s':>7} {'ensemble cpu s':>14} {'wall s':>7} "
        f"{'ratio cpu':>9} {'ratio wall':>10} {'max |diff|':>10}"
    )
    for k, arch in enumerate(architectures):
        models = {"separate": seed_runs(c, arch, seeds), "ensemble": seed_runs(c, arch, seeds)}
        train = {"separate": train_separately, "ensemble": train_together}
        spent = {
            name: timed(train[name], models[name], trains, vals, seeds, run) for name in list(train)[:: 1 - 2 * (k % 2)]
        }
        (cpu_s, wall_s), (cpu_e, wall_e) = spent["separate"], spent["ensemble"]
        pairs = zip(models["separate"], models["ensemble"])
        diff = max(
            float((p - q).abs().max())
            for a, b in pairs
            for p, q in zip(a.state_dict().values(), b.state_dict().values())
        )
        print(
            f"   {arch:12} {cpu_s:14.2f} {wall_s:7.2f} {cpu_e:14.2f} {wall_e:7.2f} "
            f"{cpu_s / cpu_e:9.2f} {wall_s / wall_e:10.2f} {diff:10.1e}"
        )
    print(f"   ({load()}; ratios: separate over ensemble; the first run alternates between architectures)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tiny config: a smoke test in seconds")
    ap.add_argument("--skip-cpu", action="store_true", help="skip sections 1 and 2 (the CPU runs)")
    ap.add_argument("--epochs-a", type=int, default=2, help="timed training epochs of configuration A")
    ap.add_argument("--diag-a", type=int, default=64, help="diagnostic sequences of configuration A (and twice)")
    ap.add_argument("--architectures", default=",".join(ARCHITECTURES))
    ap.add_argument("--arch", default="diag", help="the architecture of section 2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device-a", default="cuda", help="the device of section 3 (cpu: exercise it without a GPU)")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per architecture in section 4")
    args = ap.parse_args()
    architectures = args.architectures.split(",")
    unknown = sorted(set(architectures + [args.arch]) - set(ARCHITECTURES))
    if unknown:
        ap.error(f"unknown architecture(s) {unknown}; choose from {ARCHITECTURES}")
    if args.epochs_a < 1 or args.diag_a < 1 or args.repeats < 1 or args.seeds < 1:
        ap.error("--epochs-a, --diag-a, --repeats and --seeds must be >= 1")
    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the pipeline's workers run
    config = QUICK if args.quick else Tier2Config()
    gpus = cuda_names()
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s) for sections 1-2 "
        f"({default_threads} by default, {os.cpu_count()} cores); CPU: {cpu_name()}; "
        f"CUDA: {', '.join(gpus) if gpus else 'none'}; {load()}"
    )
    if not args.skip_cpu:
        measured = cpu_experiment(config, architectures)
        diagnostics_breakdown(config, args.arch, args.repeats, measured.get(args.arch))
    torch.set_num_threads(default_threads)
    n_diag = min(args.diag_a, QUICK.chunk) if args.quick else args.diag_a
    config_a_on(args.device_a, args.quick, architectures, args.epochs_a, n_diag)
    if not args.skip_cpu:
        torch.set_num_threads(1)
        ensemble_against_separate(config, architectures, args.seeds)


if __name__ == "__main__":
    main()
