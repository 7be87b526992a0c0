"""Benchmark: Chapter 6's overlap ODE (and the exact overlap map) against the full rank-1 network.

    python bench/lowrank.py [--quick] [--skip-gpu] [--threads 1] [--sizes 512,1024,2048,4096,8192]
                            [--epochs-linear 5] [--check-linear 50] [--epochs-erf 3] [--check-erf 20] [--repeats 9]

1. Linear rank-1 network, filter task (c* 0.2, dt 0.05, T 400, eta 5e-3): seconds per
   gradient-descent epoch of the full network on vectors, by backpropagation through time in NumPy
   float64 (``gd_vectors(..., gradient="bptt")``) and by torch autograd through
   ``network_output_torch`` (float64, CPU), at each N (median of ``--epochs-linear`` single
   epochs), against one step of the overlap ODE (``gd_overlaps(method="ode")``) and of the exact
   map (``method="map"``), which do not depend on N (median epoch of a 200-epoch run). Ratio
   full / ODE at each N (target: >= 100x at N = 4096), and "same trajectories": the max overlap
   difference after ``--check-linear`` epochs between each full network and the exact map
   (expected ~1e-12: the map is GD on the vectors, exactly).
2. erf rank-1 network, flip-flop (dt 0.05, 20 s trials so T = 400, batch 10, eta 5e-2, the
   recommended init): seconds per epoch of ``train_full`` (torch autograd, CPU) against
   ``train_overlaps`` (the overlap ODE through the 2-D effective model) at each N, on the same
   batches: each epoch timed alone and the median of ``--epochs-erf`` taken; then the max overlap
   deviation after ``--check-erf`` epochs (the Gaussian closure: O(1/sqrt N) plus O(eta), ~1e-2).
3. On a GPU (``torch.cuda.is_available()``): the full networks of 1 and 2 (the torch paths) with
   ``device="cuda"`` at the same N, seconds per epoch and the ratio GPU / CPU; otherwise one line
   says the GPU rows were skipped.
4. One overlap-space gradient step at the paper's memory experiment's size (20 networks x 128 trials x
   T 400, flip-flop trials, float64): ``overlap_gradient``'s loss and gradient by the former torch adjoint
   recursion (kept in tests/test_lowrank_kernel.py as the reference) against the kernel's NumPy loop and
   its numba loop on 1 and 2 threads (``seqlearn.lowrank._kernel``); CPU and wall ms per step, the median
   of ``--repeats`` calls each, the engines interleaved (target: <= 10 ms on two cores), and the largest
   relative difference from the former adjoint.

``--quick`` runs N in {512, 1024} with a few epochs and 2 repeats in section 4 (a smoke test, < 30 s);
``--skip-gpu`` skips
section 3. The CPU rows use ``--threads`` torch threads (default 1: with two threads on a machine
whose cores are busy with other work, the erf rows at N >= 4096 slowed to seconds per epoch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from _machine import cpu_name, cuda_names, load

from seqlearn.lowrank import _kernel
from seqlearn.lowrank.erf import overlap_gradient, recommended_init, train_full, train_overlaps
from seqlearn.lowrank.linear import Phase, filter_loss, filter_task, gd_overlaps, gd_vectors, network_output_torch
from seqlearn.lowrank.linear import random_vectors as linear_vectors
from seqlearn.lowrank.memory import twin_start
from seqlearn.lowrank.overlaps import overlaps
from seqlearn.lowrank.tasks import flip_flop

SIZES = (512, 1024, 2048, 4096, 8192)
QUICK_SIZES = (512, 1024)
DT, T_LINEAR, ETA_LINEAR, C_STAR = 0.05, 400, 5e-3, 0.2
T_MAX_ERF, BATCH_ERF, ETA_ERF = 20.0, 10, 5e-2
ODE_EPOCHS = 200  # the overlap-space runs are timed over this many epochs (one is ~0.1 ms)
TARGET_N, TARGET_RATIO = 4096, 100.0


def sync(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def median_epoch(step: Callable, state, epochs: int, device: str = "cpu"):
    """``state <- step(state)`` ``epochs`` times, each timed alone: the median seconds and the last state."""
    times = []
    for _ in range(epochs):
        sync(device)
        start = time.perf_counter()
        state = step(state)
        sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times), state


# --- 1. linear ---------------------------------------------------------------------------------------


def torch_gd_linear(theta0: np.ndarray, task, epochs: int, device: str = "cpu") -> tuple[float, np.ndarray]:
    """GD on the vectors by autograd through ``network_output_torch`` (float64): median s/epoch, overlaps after."""
    N = theta0.shape[-1]
    theta = torch.as_tensor(theta0, dtype=torch.float64, device=device)

    def step(theta: torch.Tensor) -> torch.Tensor:
        theta = theta.detach().requires_grad_(True)
        filter_loss(network_output_torch(theta, task, device=device), task).backward()
        assert theta.grad is not None
        return (theta - N * ETA_LINEAR * theta.grad).detach()

    seconds, theta = median_epoch(step, theta, epochs, device)
    return seconds, overlaps(*theta.cpu().numpy())


def bptt_gd_linear(theta0: np.ndarray, task, epochs: int) -> tuple[float, np.ndarray]:
    """GD on the vectors by NumPy BPTT (``gd_vectors``), one epoch per call: median s/epoch, overlaps after."""

    def step(theta: np.ndarray) -> np.ndarray:
        run = gd_vectors(theta, [Phase(task, 1)], eta=ETA_LINEAR, gradient="bptt")
        assert run.theta is not None
        return run.theta

    seconds, theta = median_epoch(step, theta0, epochs)
    return seconds, overlaps(*theta)


def ode_seconds(sigma0: np.ndarray, task, method: str) -> float:
    """Seconds per epoch of ``gd_overlaps(method=...)``, the median of 3 runs of ``ODE_EPOCHS`` epochs."""
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        gd_overlaps(sigma0, [Phase(task, ODE_EPOCHS)], eta=ETA_LINEAR, method=method)
        runs.append((time.perf_counter() - start) / ODE_EPOCHS)
    return statistics.median(runs)


def linear_section(sizes: tuple[int, ...], epochs: int, check: int) -> dict[int, float]:
    task = filter_task(C_STAR, dt=DT, T=T_LINEAR)
    print(
        f"1. Linear rank-1 network, filter task (c* {C_STAR}, dt {DT}, T {T_LINEAR}, eta {ETA_LINEAR}): "
        f"s/epoch (full: median of {epochs} epochs), same trajectories after {check} epochs"
    )
    sigma0 = overlaps(*linear_vectors(64, 0))
    torch_gd_linear(linear_vectors(64, 0), task, 1)  # warm-up: torch's first autograd call costs seconds
    t_ode, t_map = ode_seconds(sigma0, task, "ode"), ode_seconds(sigma0, task, "map")
    print(
        f"   overlap ODE {t_ode * 1e3:.3f} ms/epoch, exact map {t_map * 1e3:.3f} ms/epoch "
        f"(independent of N; median of 3 runs of {ODE_EPOCHS} epochs)"
    )
    print(
        f"   {'row':7} {'N':>5} {'BPTT s':>8} {'torch s':>8} {'BPTT/ODE':>9} {'torch/ODE':>9} "
        f"{'|BPTT-map|':>10} {'|torch-map|':>11}"
    )
    torch_seconds = {}
    for N in sizes:
        theta0 = linear_vectors(N, N)
        sigma0 = overlaps(*theta0)
        t_bptt, _ = bptt_gd_linear(theta0, task, epochs)
        t_torch, _ = torch_gd_linear(theta0, task, epochs)
        torch_seconds[N] = t_torch
        exact = gd_overlaps(sigma0, [Phase(task, check)], eta=ETA_LINEAR, method="map").sigma[-1]
        full = gd_vectors(theta0, [Phase(task, check)], eta=ETA_LINEAR, gradient="bptt").sigma[-1]
        _, by_torch = torch_gd_linear(theta0, task, check)
        print(
            f"   {'linear':7} {N:5d} {t_bptt:8.4f} {t_torch:8.4f} {t_bptt / t_ode:9.0f} {t_torch / t_ode:9.0f} "
            f"{np.abs(full - exact).max():10.1e} {np.abs(by_torch - exact).max():11.1e}"
        )
        if N == TARGET_N:
            verdict = "met" if min(t_bptt, t_torch) / t_ode >= TARGET_RATIO else "NOT met"
            print(f"   target full/ODE >= {TARGET_RATIO:.0f}x at N = {TARGET_N}: {verdict}")
    return torch_seconds


# --- 2. erf ------------------------------------------------------------------------------------------


def erf_batches(epochs: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [flip_flop(BATCH_ERF, rng=rng, dt=DT, t_max=T_MAX_ERF) for _ in range(epochs)]


def erf_full(vectors, batches: list, device: str = "cpu") -> tuple[float, np.ndarray]:
    """``train_full`` one batch per call (each timed): the median s/epoch and the overlaps after the last."""
    it = iter(batches)

    def step(vectors):
        m, u, v, z = vectors
        run = train_full(m, u, v, z, [next(it)], eta=ETA_ERF, dt=DT, device=device)
        return run.vectors

    seconds, vectors = median_epoch(step, vectors, len(batches), device)
    return seconds, overlaps(*vectors)


def erf_ode(sigma0: np.ndarray, batches: list) -> tuple[float, np.ndarray]:
    """``train_overlaps`` one batch per call (each timed): the median s/epoch and the overlaps after the last."""
    it = iter(batches)

    def step(sigma):
        return train_overlaps(sigma, [next(it)], eta=ETA_ERF, dt=DT, device="cpu").sigma[-1]

    return median_epoch(step, sigma0, len(batches))


def erf_section(sizes: tuple[int, ...], epochs: int, check: int) -> dict[int, float]:
    T = round(T_MAX_ERF / DT)
    print(
        f"\n2. erf rank-1 network, flip-flop (dt {DT}, T {T}, batch {BATCH_ERF}, eta {ETA_ERF}, recommended init): "
        f"s/epoch (median of the first {epochs} epochs), overlap deviation after {check} epochs, same batches"
    )
    batches = erf_batches(max(epochs, check))
    warm = recommended_init(64, np.random.default_rng(0))  # warm-up: torch's first autograd call costs seconds
    erf_full(warm, batches[:1])
    erf_ode(overlaps(*warm), batches[:1])
    print(f"   {'row':7} {'N':>5} {'full s':>8} {'ODE s':>8} {'full/ODE':>9} {'max |full-ODE|':>14}")
    full_seconds = {}
    for N in sizes:
        vectors = recommended_init(N, np.random.default_rng(N))
        sigma0 = overlaps(*vectors)
        t_full, _ = erf_full(vectors, batches[:epochs])
        t_ode, _ = erf_ode(sigma0, batches[:epochs])
        full_seconds[N] = t_full
        _, sigma_full = erf_full(vectors, batches[:check])
        _, sigma_ode = erf_ode(sigma0, batches[:check])
        print(
            f"   {'erf':7} {N:5d} {t_full:8.4f} {t_ode:8.4f} {t_full / t_ode:9.1f} "
            f"{np.abs(sigma_full - sigma_ode).max():14.1e}"
        )
    return full_seconds


# --- 3. the full networks on a GPU -------------------------------------------------------------------


def gpu_section(sizes, epochs_linear: int, epochs_erf: int, cpu_linear: dict, cpu_erf: dict) -> None:
    if not torch.cuda.is_available():
        build = f"built for CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        print(
            f"\n3. Full networks on the GPU: skipped, torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, {build}): this machine has no GPU"
        )
        return
    print("\n3. Full networks on the GPU (torch, float64, device='cuda'): s/epoch and GPU/CPU")
    task = filter_task(C_STAR, dt=DT, T=T_LINEAR)
    batches = erf_batches(epochs_erf)
    torch_gd_linear(linear_vectors(sizes[0], 0), task, 1, "cuda")  # warm-up: context, kernels
    erf_full(recommended_init(sizes[0], np.random.default_rng(0)), batches[:1], "cuda")
    print(f"   {'row':11} {'N':>5} {'GPU s':>8} {'CPU s':>8} {'GPU/CPU':>8}")
    for N in sizes:
        t_gpu, _ = torch_gd_linear(linear_vectors(N, N), task, epochs_linear, "cuda")
        print(f"   {'linear GPU':11} {N:5d} {t_gpu:8.4f} {cpu_linear[N]:8.4f} {t_gpu / cpu_linear[N]:8.2f}")
    for N in sizes:
        t_gpu, _ = erf_full(recommended_init(N, np.random.default_rng(N)), batches, "cuda")
        print(f"   {'erf GPU':11} {N:5d} {t_gpu:8.4f} {cpu_erf[N]:8.4f} {t_gpu / cpu_erf[N]:8.2f}")


# --- 4. the overlap-space step of the memory experiment -----------------------------------------------

STEP_NETS, STEP_BATCH = 20, 128


def former_adjoint():
    """The former torch adjoint recursion (the tests' reference class), loaded from its test module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tests" / "test_lowrank_kernel.py"
    spec = importlib.util.spec_from_file_location("lowrank_kernel_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TorchAdjoint


def step_section(repeats: int) -> None:
    rng = np.random.default_rng(0)
    pool = flip_flop(512, rng=rng, dt=DT, stim_range=(1.0, 2.0), input_amp=2.0, target_amp=1.0)
    picks = rng.integers(0, 512, (STEP_NETS, STEP_BATCH))
    batch = tuple(a[picks] for a in pool)
    sigma = np.concatenate([twin_start(STEP_NETS // 2, rng)] * 2)
    T = batch[0].shape[-1]
    print(
        f"\n4. erf overlap-space step, memory experiment size ({STEP_NETS} nets x {STEP_BATCH} trials x T {T}, "
        f"float64): ms per step (median of {repeats}, engines interleaved)"
    )
    adjoint = former_adjoint()
    x, y, mask = (torch.as_tensor(a) for a in batch)

    def former():
        with torch.no_grad():
            run = adjoint(torch.as_tensor(sigma), x, DT)
            return run.gradient(2 * mask * (run.y_hat - y) / mask.sum((-2, -1))[..., None, None]).numpy()

    def kernel(engine: str, threads: int):
        def step():
            if engine == "numba":
                import numba

                numba.set_num_threads(threads)
            os.environ["SEQLEARN_NUMBA"] = "1" if engine == "numba" else "0"
            return overlap_gradient(sigma, batch, dt=DT, device="cpu")[1].numpy()

        return step

    rows = {"torch adjoint (former)": former, "kernel, NumPy loop": kernel("numpy", 1)}
    if "numba" in _kernel.ENGINES:
        import numba

        rows |= {
            f"kernel, numba {n} thread(s)": kernel("numba", n) for n in (1, 2) if n <= numba.config.NUMBA_NUM_THREADS
        }
    else:
        print("   (numba is not installed: pip install seqlearn[fast] for its rows)")
    reference = former()
    for step in rows.values():
        step()  # warm-up: compilation, first allocations
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for _ in range(repeats):
        for name, step in rows.items():
            cpu, wall = time.process_time(), time.perf_counter()
            step()
            times[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    print(f"   {'row':5} {'engine':28} {'CPU ms':>8} {'wall ms':>8} {'max rel diff':>12}")
    for name, step in rows.items():
        cpu = statistics.median(t[0] for t in times[name]) * 1e3
        wall = statistics.median(t[1] for t in times[name]) * 1e3
        diff = np.abs(step() - reference).max() / np.abs(reference).max()
        print(f"   {'step':5} {name:28} {cpu:8.1f} {wall:8.1f} {diff:12.1e}")
    os.environ.pop("SEQLEARN_NUMBA", None)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N in {512, 1024}, few epochs: a smoke test (< 30 s)")
    ap.add_argument("--skip-gpu", action="store_true", help="skip section 3")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: robust on a shared machine)")
    ap.add_argument("--sizes", default=None, help="comma-separated N (default 512..8192; quick: 512,1024)")
    ap.add_argument("--epochs-linear", type=int, default=None, help="timed linear epochs (default 5; quick 2)")
    ap.add_argument("--check-linear", type=int, default=None, help="linear epochs before comparing (50; quick 5)")
    ap.add_argument("--epochs-erf", type=int, default=None, help="timed erf epochs (default 3; quick 1)")
    ap.add_argument("--check-erf", type=int, default=None, help="erf epochs before comparing (20; quick 2)")
    ap.add_argument(
        "--repeats", type=int, default=None, help="timed calls per engine in section 4 (default 9; quick 2)"
    )
    args = ap.parse_args()
    sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    epochs_linear = args.epochs_linear or (2 if args.quick else 5)
    check_linear = args.check_linear or (5 if args.quick else 50)
    epochs_erf = args.epochs_erf or (1 if args.quick else 3)
    check_erf = args.check_erf or (2 if args.quick else 20)
    if min(sizes) < 4 or min(epochs_linear, check_linear, epochs_erf, check_erf) < 1:
        ap.error("every N must be >= 4 and every epoch count >= 1")
    if args.threads < 1:
        ap.error("--threads must be >= 1")
    default_threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    gpus = cuda_names()
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s) ({default_threads} by default), "
        f"{os.cpu_count()} cores; "
        f"CPU: {cpu_name()}; CUDA: {', '.join(gpus) if gpus else 'none'}; {load()}"
    )
    cpu_linear = linear_section(sizes, epochs_linear, check_linear)
    cpu_erf = erf_section(sizes, epochs_erf, check_erf)
    if args.skip_gpu:
        print("\n3. Full networks on the GPU: skipped (--skip-gpu)")
    else:
        gpu_section(sizes, epochs_linear, epochs_erf, cpu_linear, cpu_erf)
    step_section(args.repeats or (2 if args.quick else 9))


if __name__ == "__main__":
    main()
