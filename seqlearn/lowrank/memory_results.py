r"""The twin experiment's shipped results: run at the paper's protocol for several seeds, compacted, written,
read back, and summarised over however many seeds a file holds.

``python -m seqlearn.lowrank.memory_results --out FILE`` runs
:func:`paper_results` for some seeds and writes its compacted record (:func:`compact`) as a shipped-results
document (:func:`save_results`, :mod:`seqlearn.results`); :func:`load_results` reads it back checked, in
:func:`paper_results`' form. Chapter 6's ``chapters/results/06_memory.json`` is such a file (its ``provenance``
says how it was produced). The summaries (:func:`seed_accuracies`, :func:`qperp_differences`,
:func:`memory_summary`) reduce a file of any number of seeds to per-seed numbers, so that what a chapter quotes
from it is a range or a bound over all of its runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import platform
import sys
import time

import numpy as np

from ..results import read_results, write_results
from ..validation import choice, integer, real, real_array
from . import _kernel
from .memory import SPLITS, TIMES, MemoryProtocol, decode_times, memory_experiment
from .overlaps import OVERLAPS, blocks

__all__ = [
    "paper_results",
    "compact",
    "save_results",
    "load_results",
    "seed_accuracies",
    "qperp_differences",
    "memory_summary",
    "main",
]


LOSS_POINTS = 200  # epochs of the loss computed per phase (log-spaced); every LOSS_THINNING-th of them is shipped
LOSS_THINNING = 10
DIGITS = 6  # significant digits of the shipped overlaps, losses and checks (accuracies are kept exact)
RESULT_KEYS = ("command", "machine", "wall_seconds", "cpu_seconds", "protocol", "overlaps", "times", "noises",
               "loss_epochs", "runs")  # fmt: skip
RUN_KEYS = ("seed", "seconds", "sigma", "twin_difference", "loss", "smallest_eigenvalue", "gram_valid",
            "balance_drift", "accuracy")  # fmt: skip
CONFIG_KEYS = ("protocol", "noises")  # the keys of the results that the shipped document keeps as its config
_NAME = "twin memory"  # the shipped document's name
_PROVENANCE = {"command": "command", "machine": "machine", "wall_seconds": "seconds"}  # result key -> provenance key


def _machine() -> dict:
    """The machine a run took place on: CPU, cores, Python, NumPy and the kernel's loop."""
    cpu = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    threads = os.environ.get("NUMBA_NUM_THREADS", str(os.cpu_count()))
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "kernel": _kernel.engine() + (f" ({threads} threads)" if _kernel.engine() == "numba" else ""),
    }


def _loss_epochs(epochs_ab: int, epochs_c: int) -> np.ndarray:
    """The epochs whose losses are kept: about ``LOSS_POINTS`` log-spaced ones in each phase, and its last."""
    kept = [
        np.unique(np.geomspace(1, n, LOSS_POINTS).astype(int)) - 1 + first
        for first, n in ((0, epochs_ab), (epochs_ab, epochs_c))
    ]
    return np.concatenate(kept)


def _accuracies(sigma, protocol: MemoryProtocol, noises, seed: int) -> dict:
    """``{split: {noise: {time: {features: [accuracies]}}}}`` for both splits and every noise."""
    out: dict = {}
    for split in SPLITS:
        for noise in noises:
            acc = decode_times(
                sigma, split=split, resamples=protocol.resamples, held_out=protocol.held_out, noise=noise, rng=seed
            )
            for (when, kind), values in acc.items():
                out.setdefault(split, {}).setdefault(repr(float(noise)), {}).setdefault(when, {})[kind] = (
                    values.tolist()
                )
    return out


def _rounded(values):
    """Nested lists of floats with ``DIGITS`` significant digits (bools and ints as they are)."""
    if isinstance(values, list):
        return [_rounded(v) for v in values]
    return values if isinstance(values, (bool, int)) else float(f"{values:.{DIGITS}g}")


def compact(results: dict) -> dict:
    """:func:`paper_results`' full record in its shipped form: the losses at every ``LOSS_THINNING``-th kept epoch
    (and each phase's last), the overlaps, losses and checks to ``DIGITS`` significant digits; everything else
    (the accuracies of every split, the metadata) as it is."""
    epochs = np.asarray(results["loss_epochs"])
    ends = np.isin(epochs, [results["protocol"]["epochs_ab"] - 1, epochs[-1]])
    kept = np.flatnonzero(ends | (np.arange(len(epochs)) % LOSS_THINNING == 0))
    runs = [
        {**run, **{key: _rounded(run[key]) for key in ("sigma", "twin_difference", "smallest_eigenvalue",
                                                          "balance_drift")},
         "loss": _rounded(np.asarray(run["loss"])[kept].tolist())}
        for run in results["runs"]
    ]  # fmt: skip
    return {**results, "loss_epochs": epochs[kept].tolist(), "runs": runs}


def save_results(results: dict, out) -> None:
    """Write :func:`paper_results`' ``results`` to ``out`` as a shipped-results document, whole or not at all.

    The document (:func:`seqlearn.results.write_results`, named ``"twin memory"``) keeps the
    :data:`CONFIG_KEYS` as its ``config``, the command, machine and wall seconds as its
    ``provenance`` and everything else as its ``results``.
    """
    config = {key: results[key] for key in CONFIG_KEYS}
    rest = {key: value for key, value in results.items() if key not in {*CONFIG_KEYS, *_PROVENANCE}}
    write_results(
        out, _NAME, config, rest, command=results["command"], seconds=results["wall_seconds"], host=results["machine"]
    )


def paper_results(
    seeds=(0, 1, 2),
    *,
    protocol: MemoryProtocol | None = None,
    noises=(0.0, 0.3),
    out=None,
    command: str | None = None,
    progress: bool = False,
) -> dict:
    r"""The twin experiment for several seeds, decoded with and without feature noise: the shipped results.

    Each seed trains once (``protocol``, default :meth:`MemoryProtocol.paper`); its overlaps are
    decoded on both splits (:data:`SPLITS`) with every training-feature noise in ``noises``. The
    result (written to ``out`` as JSON if given) holds, per seed: the overlaps at the three times,
    the twin differences, the losses at about 200 log-spaced epochs per phase (``loss_epochs``),
    the Gram and :math:`\sigma_{uu} - \sigma_{vv}` checks, the accuracies and the seconds; and the
    protocol, the command, the machine, the total wall and CPU seconds.

    Returns
    -------
    dict
        What the file holds (:func:`load_results` reads it back equal).
    """
    protocol = MemoryProtocol.paper() if protocol is None else protocol
    noises = [real(noise, "noise", low=0.0) for noise in noises]
    seeds = [integer(seed, "seed", low=0) for seed in seeds]
    wall, cpu = time.perf_counter(), time.process_time()
    epochs = _loss_epochs(protocol.epochs_ab, protocol.epochs_c)
    runs = []
    for seed in seeds:
        began = time.perf_counter()
        run = memory_experiment(protocol=protocol, rng=seed, progress=progress)
        runs.append(
            {
                "seed": seed,
                "seconds": time.perf_counter() - began,
                "sigma": run.sigma.tolist(),
                "twin_difference": run.twin_difference.tolist(),
                "loss": run.loss[epochs].tolist(),
                "smallest_eigenvalue": run.smallest_eigenvalue.tolist(),
                "gram_valid": run.gram_valid.tolist(),
                "balance_drift": run.balance_drift.tolist(),
                "accuracy": _accuracies(run.sigma, protocol, noises, seed),
            }
        )
    results = compact({
        "command": command if command is not None else " ".join([os.path.basename(sys.executable), *sys.argv]),
        "machine": _machine(),
        "wall_seconds": round(time.perf_counter() - wall, 1),  # as the provenance keeps it
        "cpu_seconds": time.process_time() - cpu,
        "protocol": dataclasses.asdict(protocol),
        "overlaps": list(OVERLAPS),
        "times": list(TIMES),
        "noises": noises,
        "loss_epochs": epochs.tolist(),
        "runs": runs,
    })  # fmt: skip
    if out is not None:
        save_results(results, out)
    return results


def load_results(path) -> dict:
    """The results :func:`paper_results` wrote to ``path``, in its form, checked to hold its keys.

    A note in the document's provenance (how a converted file was made) comes back as ``"provenance"``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (naming the command that writes it).
    ValueError
        If the file is not JSON, not the twin experiment's document (:func:`seqlearn.results.read_results`)
        or lacks a key of :data:`RESULT_KEYS` or of a run's :data:`RUN_KEYS`.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no results file {path!r}; python -m seqlearn.lowrank.memory_results --out {path} writes one"
        )
    shipped = read_results(path, _NAME)
    provenance = _PROVENANCE | {"provenance": "note"}
    results = {key: shipped.provenance[name] for key, name in provenance.items() if name in shipped.provenance}
    results |= shipped.config | shipped.results
    if not all(key in results for key in RESULT_KEYS):
        raise ValueError(
            f"{path!r} is not a results file: it needs the keys {list(RESULT_KEYS)}, got {sorted(results)}"
        )
    for k, run in enumerate(results["runs"]):
        missing = [key for key in RUN_KEYS if key not in run]
        if missing:
            raise ValueError(f"{path!r}: run {k} lacks {missing}")
    return results


FEATURES = ("visible", "invisible")
QPERP = ("zz", "zv", "vv")  # the entries of Q_perp, a symmetric 2 x 2 matrix


def seed_accuracies(results: dict, *, split: str = "pairs", noise: float = 0.0, when: str = "C",
                    features: str = "invisible") -> np.ndarray:  # fmt: skip
    """Each run's mean decoding accuracy over its splits, shape (seeds,), from :func:`load_results`' ``results``.

    ``split`` (:data:`~seqlearn.lowrank.memory.SPLITS`), ``noise`` (one of the file's ``noises``), ``when``
    (:data:`~seqlearn.lowrank.memory.TIMES`) and ``features`` (``"visible"`` or ``"invisible"``) pick the decoder.
    """
    choice(split, "split", SPLITS)
    choice(when, "when", TIMES)
    choice(features, "features", FEATURES)
    noise = real(noise, "noise")
    if noise not in [float(n) for n in results["noises"]]:
        raise ValueError(f"noise must be one of the file's noises {results['noises']}, got {noise}")
    key = repr(noise)
    return np.array([np.mean(run["accuracy"][split][key][when][features]) for run in results["runs"]])


def qperp_differences(sigma) -> np.ndarray:
    r"""Twin A minus twin B of the Schur complement :math:`Q_\perp = P - M R^{-1} M^\top`, shape (..., pairs, 3).

    :math:`Q_\perp = A_\perp^\top A_\perp / N` is the Gram matrix of the parts of :math:`z` and :math:`v` outside
    :math:`\mathrm{span}\{m, u\}`: what the invisible overlaps hold beyond what the visible ones imply. The entries
    are :data:`QPERP` (``zz``, ``zv``, ``vv``).

    Parameters
    ----------
    sigma : array, shape (..., 2, pairs, 10)
        Overlaps with the twins on axis -3 (twin A, twin B), e.g. a run's ``sigma`` (3, 2, pairs, 10).
    """
    sigma = real_array(sigma, "sigma")
    if sigma.ndim < 3 or sigma.shape[-3] != 2 or sigma.shape[-1] != len(OVERLAPS):
        raise ValueError(f"sigma must have shape (..., 2, pairs, {len(OVERLAPS)}), got {sigma.shape}")
    M, P, R = blocks(sigma)
    Q = P - M @ np.linalg.solve(R, np.swapaxes(M, -1, -2))  # (..., 2, pairs, 2, 2)
    entries = np.stack([Q[..., 0, 0], Q[..., 0, 1], Q[..., 1, 1]], axis=-1)  # (..., 2, pairs, 3)
    return entries[..., 0, :, :] - entries[..., 1, :, :]


def _sign_test(values: np.ndarray) -> float:
    """Two-sided sign test of ``values`` (pairs,) against a median of 0: the binomial probability of a split at
    least as lopsided as the one seen, among the non-zero values."""
    positive, n = int((values > 0).sum()), int((values != 0).sum())
    tail = sum(math.comb(n, k) for k in range(min(positive, n - positive) + 1)) / 2.0**n
    return min(1.0, 2 * tail)


def memory_summary(results: dict, *, split: str = "pairs") -> dict:
    r"""Per-seed summaries of :func:`load_results`' ``results``, each an array with the seeds on axis 0.

    Returns
    -------
    dict
        ``seeds`` (S,); ``accuracy[noise, features]`` (S,) mean decoding accuracy after C on ``split``, for every
        noise of the file and both feature sets; ``gram_valid`` (S,) the fraction of networks whose overlaps stayed a
        Gram matrix throughout; ``smallest_eigenvalue`` (S,) the lowest over networks and phases;
        ``balance_drift`` (S, 2) the largest drift of :math:`\sigma_{uu} - \sigma_{vv}` of twins A and of twins B;
        ``qperp_median`` (S, 2, 3) the median over pairs of :math:`|\Delta Q_\perp|` (twin A minus twin B) after
        A/B and after C, entries :data:`QPERP`; ``zz_sign`` (S,) the sign of most pairs' :math:`\Delta Q_{\perp, zz}`
        after C, ``zz_agree`` (S,) the fraction of pairs that share it, ``zz_sign_p`` (S,) the two-sided sign test's
        p-value across pairs.
    """
    choice(split, "split", SPLITS)
    runs = results["runs"]
    differences = [qperp_differences(np.asarray(run["sigma"])[1:]) for run in runs]  # (2, pairs, 3): A/B, C
    zz = [d[1, :, 0] for d in differences]  # (pairs,) after C
    signs = np.array([np.sign(np.median(d)) or 1.0 for d in zz])
    return {
        "seeds": np.array([run["seed"] for run in runs]),
        "accuracy": {
            (float(noise), kind): seed_accuracies(results, split=split, noise=noise, features=kind)
            for noise in results["noises"]
            for kind in FEATURES
        },
        "gram_valid": np.array([np.all(run["gram_valid"], axis=0).mean() for run in runs]),
        "smallest_eigenvalue": np.array([np.min(run["smallest_eigenvalue"]) for run in runs]),
        "balance_drift": np.array([np.max(run["balance_drift"], axis=(0, 2)) for run in runs]),
        "qperp_median": np.array([np.median(np.abs(d), axis=1) for d in differences]),
        "zz_sign": signs,
        "zz_agree": np.array([np.mean(np.sign(d) == s) for d, s in zip(zz, signs)]),
        "zz_sign_p": np.array([_sign_test(d) for d in zz]),
    }


def main(argv=None) -> None:
    """``python -m seqlearn.lowrank.memory_results``: :func:`paper_results` from the command line."""
    ap = argparse.ArgumentParser(description="The twin experiment at the paper's protocol, for several seeds.")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--noises", type=float, nargs="+", default=[0.0, 0.3], help="training-feature noise stds")
    ap.add_argument("--pairs", type=int, help="override the protocol's pairs (10)")
    ap.add_argument("--epochs-ab", type=int, help="override the A/B epochs (30,000)")
    ap.add_argument("--epochs-c", type=int, help="override the C epochs (30,000)")
    ap.add_argument("--progress", action="store_true", help="show a progress bar")
    args = ap.parse_args(argv)
    changes = {name: getattr(args, name) for name in ("pairs", "epochs_ab", "epochs_c") if getattr(args, name)}
    command = " ".join(["python -m seqlearn.lowrank.memory_results", *(sys.argv[1:] if argv is None else argv)])
    results = paper_results(
        args.seeds, protocol=MemoryProtocol.paper(**changes), noises=args.noises, out=args.out, command=command,
        progress=args.progress,
    )  # fmt: skip
    for run in results["runs"]:
        acc = run["accuracy"]["pairs"]
        line = ", ".join(
            f"noise {noise}: C visible {np.mean(acc[noise]['C']['visible']):.2f} invisible "
            f"{np.mean(acc[noise]['C']['invisible']):.2f}"
            for noise in acc
        )
        print(f"seed {run['seed']} ({run['seconds']:.0f} s): {line}")


if __name__ == "__main__":
    main()
