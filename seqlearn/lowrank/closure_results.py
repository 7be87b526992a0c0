r"""The erf closure over a long run: the network trained by gradient descent against the overlap ODE, shipped.

Chapter 6 checks the Gaussian closure live over 100 epochs; the paper trained and compared for 2,000.
:func:`closure_run` does the comparison over any number of epochs with :func:`~seqlearn.lowrank.erf.train_both`
(the network on its vectors and the ODE on its overlaps, on the same flip-flop batches), and keeps what the
chapter shows: the largest difference of any overlap at every epoch (:math:`\max_k |\sigma_k^{net} - \sigma_k^{ODE}|`),
both losses, and the trained vectors' Q-Q correlations, on about :data:`POINTS` log-spaced epochs.

``python -m seqlearn.lowrank.closure_results --out FILE --epochs 1000`` writes it as a shipped-results document
(:mod:`seqlearn.results`: the command, the machine and the seconds in its provenance); :func:`load_closure` reads it
back. Chapter 6's ``chapters/results/06_erf_closure.json`` is such a file.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ..results import read_results, write_results
from ..validation import integer, real

__all__ = ["POINTS", "closure_run", "closure_results", "load_closure", "main"]

POINTS = 200  # log-spaced epochs kept of a run (and its first and last)
_NAME = "erf closure"
_COMMAND = "python -m seqlearn.lowrank.closure_results"


def _kept(epochs: int) -> np.ndarray:
    """Epochs 0..``epochs`` thinned to about :data:`POINTS` log-spaced ones, with 0 and ``epochs``."""
    return np.unique(np.r_[0, np.geomspace(1, epochs, POINTS).astype(int), epochs])


def closure_run(
    epochs: int = 1000, *, N: int = 600, dt: float = 0.05, eta: float = 0.05, batch: int = 10, seed: int = 0
) -> dict:
    r"""Network (gradient descent on the vectors) against overlap ODE on the flip-flop for ``epochs`` epochs.

    The vectors start at :func:`~seqlearn.lowrank.erf.recommended_init` (``N`` units, ``seed``); epoch ``k`` is
    one step of both on batch ``k`` of ``batch`` fresh flip-flop trials (20 s, step ``dt``), learning rate ``eta``
    (the vectors' is :math:`N\eta`).

    Returns
    -------
    dict
        ``config`` (the arguments) and, at the kept epochs ``epoch`` (:func:`_kept`, shape (K,)): ``gap`` the largest
        :math:`|\sigma^{net}_k - \sigma^{ODE}_k|` over the ten overlaps, ``loss_network`` and ``loss_ode`` (the batch's
        masked MSE before that epoch's step; the last epoch has none, so these stop one short: shape (K - 1,));
        ``qq`` the Q-Q correlations of the trained ``m, u, v, z`` (4,); plain lists, JSON-ready.
    """
    from .erf import qq_correlation, recommended_init, train_both
    from .tasks import flip_flop

    epochs, N, batch = (integer(x, name, low=1) for x, name in ((epochs, "epochs"), (N, "N"), (batch, "batch")))
    seed = integer(seed, "seed", low=0)
    dt, eta = real(dt, "dt", low=0.0, low_open=True), real(eta, "eta", low=0.0, low_open=True)
    rng = np.random.default_rng(seed)
    batches = [flip_flop(batch, rng=rng, dt=dt) for _ in range(epochs)]
    full, ode = train_both(*recommended_init(N, rng=seed), batches, eta=eta, dt=dt, device="cpu")
    kept = _kept(epochs)
    gap = np.abs(full.sigma - ode.sigma).max(axis=-1)  # (epochs + 1,)
    return {
        "config": {"epochs": epochs, "N": N, "dt": dt, "eta": eta, "batch": batch, "seed": seed},
        "epoch": kept.tolist(),
        "gap": gap[kept].tolist(),
        "loss_network": np.asarray(full.loss)[kept[:-1]].tolist(),
        "loss_ode": np.asarray(ode.loss)[kept[:-1]].tolist(),
        "qq": qq_correlation(np.stack(full.vectors or ())).tolist(),  # a network run always has its vectors
    }


def closure_results(out, *, command: str | None = None, **settings) -> dict:
    """:func:`closure_run` with ``settings``, written to ``out`` with its command, machine and seconds; returns
    what :func:`load_closure` reads back."""
    began = time.perf_counter()
    run = closure_run(**settings)
    results = {key: value for key, value in run.items() if key != "config"}
    command = command if command is not None else " ".join([_COMMAND, *sys.argv[1:]])
    write_results(out, _NAME, run["config"], results, command=command, seconds=time.perf_counter() - began)
    return load_closure(out)


def load_closure(path) -> dict:
    """The run :func:`closure_results` wrote to ``path``: :func:`closure_run`'s dict plus ``provenance``.

    Raises ``FileNotFoundError`` (naming the command that writes it) or ``ValueError`` (not this experiment's file).
    """
    try:
        shipped = read_results(path, _NAME)
    except FileNotFoundError:
        raise FileNotFoundError(f"no results file {str(path)!r}; {_COMMAND} --out {path} writes one") from None
    return {"config": shipped.config, **shipped.results, "provenance": shipped.provenance}


def main(argv=None) -> None:
    """``python -m seqlearn.lowrank.closure_results``: :func:`closure_results` from the command line."""
    ap = argparse.ArgumentParser(description="The erf closure: network against overlap ODE over a long run.")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--N", type=int, default=600, help="units")
    ap.add_argument("--dt", type=float, default=0.05)
    args = ap.parse_args(argv)
    command = " ".join([_COMMAND, *(sys.argv[1:] if argv is None else argv)])
    run = closure_results(args.out, command=command, epochs=args.epochs, N=args.N, dt=args.dt)
    print(f"{args.epochs} epochs in {run['provenance']['seconds']:.0f} s: largest overlap gap {max(run['gap']):.4f}")


if __name__ == "__main__":
    main()
