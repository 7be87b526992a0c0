"""Independent CPU jobs in forked worker processes (the chapters' seed and architecture sweeps).

:func:`map_in_workers` is ``[fn(*job) for job in jobs]`` computed ``workers`` at a time in
forked processes, one torch thread each. A forked worker inherits ``fn`` (closures need no
pickling); each job must be seeded on its own, so the results equal those of one process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import torch

from .device import resolve_device

__all__ = ["map_in_workers"]

_WORK: list[Callable] = []  # the function forked workers run (inherited, so closures need no pickling)


def _run_job(args):
    torch.set_num_threads(1)
    return _WORK[-1](*args)


def map_in_workers(fn: Callable, jobs: list[tuple], workers: int, on_done: Callable, device) -> list:
    """``[fn(*job) for job in jobs]``, in up to ``workers`` forked processes where that is possible.

    Forks only on the CPU, where the platform can fork and CUDA is not initialised; otherwise
    (and for ``workers == 1`` or a single job) runs the jobs one after the other here.
    ``on_done()`` is called after each job, in order (e.g. a progress bar's ``update``).
    """
    import multiprocessing as mp

    on_cpu = resolve_device(device).type == "cpu" and not torch.cuda.is_initialized()
    forkable = "fork" in mp.get_all_start_methods() and on_cpu
    if workers == 1 or len(jobs) == 1 or not forkable:
        out = []
        for job in jobs:
            out.append(fn(*job))
            on_done()
        return out
    importlib.import_module("torch._dynamo")  # a torch.optim step imports it (2 s): once here, not in every worker

    _WORK.append(fn)
    try:
        with mp.get_context("fork").Pool(min(workers, len(jobs))) as pool:
            out = []
            for result in pool.imap(_run_job, jobs):
                out.append(result)
                on_done()
            return out
    finally:
        _WORK.pop()
