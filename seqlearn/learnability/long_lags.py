r"""The learnability window at task lags well beyond ConstGate's time scale: a shipped, regenerable result.

At the chapter's CPU scale (:class:`~seqlearn.learnability.pipeline.Tier2Config`: task lags 4-32,
diagnostic lags up to 48) the window :math:`H_N` saturates near the task's longest lag for every
network, because those lags are not much longer than ConstGate's :math:`\tau = -1/\ln(1 - 0.05)
\approx 19.5`. :func:`long_lag_config` stretches the task to lags of 128 and the diagnostics to 192
(sequences of 256 steps) and shrinks the networks and the training instead, so that every
architecture, three seeds, runs through the chapter's own
:func:`~seqlearn.learnability.pipeline.learnability_experiment` in about a quarter of an hour on
one CPU core.

:func:`run_long_lags` runs it and returns a JSON-ready document: per architecture and seed the lag
grid, the envelope :math:`\hat f(\ell)`, ``N_grid``, :math:`H_N(N)`, :math:`N_{req}(\ell)`, the
median per-neuron time scale :math:`\tau_q` and :math:`R^2`; beside them the command that
regenerates it, the machine, the wall time and the configuration. :func:`write_results` writes it as a
shipped-results document (:mod:`seqlearn.results`: the configuration, the runs, the provenance), whole or
not at all; :func:`read_results` reads it back in :func:`run_long_lags`' form and validates it;
:func:`window_curves` returns the arrays that draw :math:`H_N(N)` per architecture. Regenerate the shipped
file with::

    OMP_NUM_THREADS=1 python -m seqlearn.learnability.long_lags --out chapters/results/05_long_lags.json
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time
from pathlib import Path

import numpy as np

from ..results import ShippedResults
from ..results import read_results as read_shipped
from ..results import write_results as write_shipped
from ..validation import choice
from .models import ARCHITECTURES
from .pipeline import Diagnostics, Tier2Config, learnability_experiment

__all__ = [
    "LONG_LAGS_COMMAND",
    "LONG_LAGS_SEEDS",
    "long_lag_config",
    "config_from_dict",
    "run_record",
    "run_long_lags",
    "write_results",
    "read_results",
    "window_curves",
]

LONG_LAGS_COMMAND = (
    "OMP_NUM_THREADS=1 python -m seqlearn.learnability.long_lags --out chapters/results/05_long_lags.json"
)
LONG_LAGS_SEEDS = (0, 1, 2)
SCHEMA = 1
_NAME = "long lags"  # the shipped document's name
RECORD_ARRAYS = ("lags", "f", "N_req", "N_grid", "H_N")
RECORD_SCALARS = ("tau_median", "r2", "r2_max")


def long_lag_config() -> Tier2Config:
    r"""The long-lag run: task lags 8-128 (``T`` = 256), 12 diagnostic lags from 2 to 192.

    What costs time is smaller than in the chapter's ``Tier2Config()``: ``H`` = 16 neurons, 30
    epochs, ``K`` = 2 directions (1,024 training and 1,024 diagnostic sequences, as there). The longest
    task lag is :math:`6.6\,\tau` of ConstGate's gate (:math:`e^{-128/19.5} \approx 1.4\cdot10^{-3}`).
    """
    return dataclasses.replace(
        Tier2Config(),
        T=256,
        H=16,
        task_lags=(8, 32, 64, 128),
        epochs=30,
        batch_size=64,
        lags=(2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192),
        K=2,
        chunk=64,
    )


def config_from_dict(values: dict) -> Tier2Config:
    """The :class:`Tier2Config` a document's ``metadata["config"]`` describes (:meth:`Tier2Config.from_dict`)."""
    return Tier2Config.from_dict(values)


def _short(x: np.ndarray) -> list:
    """Floats to 6 significant digits, integers as they are (keeps the file small)."""
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.integer):
        return [int(v) for v in x]
    return [float(f"{v:.6g}") for v in x]


def run_record(d: Diagnostics, seed: int) -> dict:
    r"""One run's record: lags, envelope, :math:`N_{req}`, ``N_grid``, :math:`H_N`, median :math:`\tau`, :math:`R^2`.

    ``tau_median`` is the median over neurons of :meth:`Diagnostics.time_scales` (``inf`` when most
    neurons do not decay over the lag grid, written as ``null``).
    """
    tau = float(np.median(d.time_scales()))
    return {
        "architecture": d.architecture,
        "seed": int(seed),
        "lags": _short(d.lags),
        "f": _short(d.f),
        "N_req": _short(d.N_req),
        "N_grid": _short(d.N_grid),
        "H_N": _short(d.H_N),
        "tau_median": float(f"{tau:.6g}") if np.isfinite(tau) else None,
        "r2": float(f"{d.r2:.6g}"),
        "r2_max": float(f"{d.r2_max:.6g}"),
    }


def _machine() -> dict:
    import torch

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "torch_threads": torch.get_num_threads(),
    }


def run_long_lags(
    config: Tier2Config | None = None,
    architectures=ARCHITECTURES,
    seeds=LONG_LAGS_SEEDS,
    workers: int = 1,
    command: str = LONG_LAGS_COMMAND,
    progress: bool = False,
) -> dict:
    """Train and diagnose every architecture and seed with :func:`learnability_experiment` on
    ``config`` (default :func:`long_lag_config`) on the CPU; the document :func:`write_results` writes."""
    config = long_lag_config() if config is None else config
    start = time.perf_counter()
    results = learnability_experiment(architectures, seeds, config, workers, device="cpu", progress=progress)
    seconds = time.perf_counter() - start
    return {
        "schema": SCHEMA,
        "metadata": {
            "command": command,
            "machine": _machine(),
            "workers": int(workers),
            "wall_seconds": round(seconds, 1),
            "config": dataclasses.asdict(config),
        },
        "runs": [run_record(d, s) for (_, s), d in results.items()],
    }


def _check_record(record, i: int) -> None:
    """ValueError naming the run and the field when a record is incomplete or inconsistent."""
    where = f"runs[{i}]"
    if not isinstance(record, dict):
        raise ValueError(f"{where} must be an object, got {type(record).__name__}")
    missing = [k for k in ("architecture", "seed", *RECORD_ARRAYS, *RECORD_SCALARS) if k not in record]
    if missing:
        raise ValueError(f"{where} lacks {missing}")
    choice(record["architecture"], f"{where}.architecture", ARCHITECTURES)
    arrays = {k: np.asarray(record[k], dtype=float) for k in RECORD_ARRAYS}
    for k, v in arrays.items():
        if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
            raise ValueError(f"{where}.{k} must be a non-empty list of finite numbers")
    if arrays["f"].size != arrays["lags"].size or arrays["N_req"].size != arrays["lags"].size:
        raise ValueError(f"{where}: f and N_req must have one value per lag ({arrays['lags'].size})")
    if arrays["H_N"].size != arrays["N_grid"].size:
        raise ValueError(f"{where}: H_N must have one value per N_grid entry ({arrays['N_grid'].size})")


def _validated(document, path: Path) -> dict:
    """``document`` itself after checking its schema; ValueError naming ``path`` and what is wrong."""
    try:
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise ValueError(f"not a schema-{SCHEMA} long-lag document")
        meta = document["metadata"]
        for key in ("command", "machine", "workers", "wall_seconds", "config"):
            if key not in meta:
                raise ValueError(f"metadata lacks {key!r}")
        config_from_dict(meta["config"])
        runs = document["runs"]
        if not isinstance(runs, list) or not runs:
            raise ValueError("runs must be a non-empty list")
        for i, record in enumerate(runs):
            _check_record(record, i)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: invalid long-lag results ({err})") from None
    return document


def write_results(document: dict, path) -> Path:
    """Validate :func:`run_long_lags`' ``document`` and write it to ``path``, whole or not at all.

    The file is a :func:`seqlearn.results.write_results` document named ``"long lags"``: the
    configuration as its ``config``, the runs and the number of workers as its ``results``, the
    command, machine and wall seconds as its ``provenance``.
    """
    path = Path(path)
    meta = _validated(document, path)["metadata"]
    results = {"workers": meta["workers"], "runs": document["runs"]}
    seconds, host = meta["wall_seconds"], meta["machine"]
    return write_shipped(path, _NAME, meta["config"], results, command=meta["command"], seconds=seconds, host=host)


def _document(shipped: ShippedResults) -> dict:
    """The shipped document in :func:`run_long_lags`' form (``KeyError`` naming what it lacks)."""
    provenance, results = shipped.provenance, shipped.results
    metadata = {
        "command": provenance["command"],
        "machine": provenance["machine"],
        "workers": results["workers"],
        "wall_seconds": provenance["seconds"],
        "config": shipped.config,
    }
    return {"schema": SCHEMA, "metadata": metadata, "runs": results["runs"]}


def read_results(path) -> dict:
    """The document at ``path`` in :func:`run_long_lags`' form, validated.

    Raises
    ------
    FileNotFoundError
        No file at ``path`` (the message names the command that writes it).
    ValueError
        Not JSON, not the long-lag document (:func:`seqlearn.results.read_results`), or incomplete.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no long-lag results at {path}; regenerate them with: {LONG_LAGS_COMMAND}")
    try:
        document = _document(read_shipped(path, _NAME))
    except (KeyError, TypeError) as err:
        raise ValueError(f"{path}: invalid long-lag results (no {err})") from None
    return _validated(document, path)


def window_curves(document: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""``{architecture: (N_grid (m,), H_N (seeds, m))}``, the shipped :math:`H_N(N)` ready to draw.

    Every run of an architecture shares ``N_grid`` (one configuration); ValueError otherwise.
    """
    curves: dict[str, tuple[np.ndarray, list]] = {}
    for record in document["runs"]:
        N_grid = np.asarray(record["N_grid"])
        grid, rows = curves.setdefault(record["architecture"], (N_grid, []))
        if not np.array_equal(grid, N_grid):
            raise ValueError(f"the runs of {record['architecture']} have different N grids")
        rows.append(record["H_N"])
    return {a: (grid, np.asarray(rows)) for a, (grid, rows) in curves.items()}


def main(argv=None) -> None:
    """Command line: run the long-lag experiment and write its results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--workers", type=int, default=1, help="CPU processes (default 1)")
    args = parser.parse_args(argv)
    document = run_long_lags(workers=args.workers, progress=True)
    path = write_results(document, args.out)
    print(f"{len(document['runs'])} runs in {document['metadata']['wall_seconds']:.0f} s -> {path}")


if __name__ == "__main__":
    main()
