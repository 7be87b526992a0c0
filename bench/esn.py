"""Benchmark: the echo state network of seqlearn.reservoir against ReservoirPy on Mackey-Glass.

    python bench/esn.py [--sizes 100,300,1000,2000] [--repeats 3] [--devices cpu,cuda] [--threads 0]
                        [--washout 100] [--train 3000] [--test 1000]

One-step-ahead prediction of the Mackey-Glass series (tau = 17, ``seqlearn.tasks.mackey_glass``:
Jaeger's Euler steps of 0.1 kept every 10th, squashed by tanh(y - 1), first 1000 samples
dropped): a washout, then ``--train`` teacher-forced steps for the ridge readout, then the
next ``--test`` steps predicted one step ahead from the state the training left. NRMSE is
RMSE / std of the test targets (``seqlearn.reservoir.nrmse``, Jaeger's normalisation) for
every model.

The same hyperparameters on both sides: spectral radius 1.25, leak rate 0.3, input scaling 1
with every unit driven by +-1 (seqlearn's ``input_distribution="bernoulli"``, ReservoirPy's
Bernoulli ``Win`` at ``input_connectivity=1``), N(0, 1) reservoir weights at density 0.1
(``rc_connectivity``), bias U(-0.2, 0.2), ridge 1e-8, tanh units, float64. What still differs
is each library's own: the random draws, and the readout (seqlearn reads [1; u_t; x_t] with
the ridge on every weight; ReservoirPy's ``Ridge`` reads x_t, centred, with an unpenalised bias).

Rows: seqlearn on NumPy (``device=None``), seqlearn's torch path on each device present, and
ReservoirPy 0.4.2 (``Reservoir >> Ridge``) when it is installed (``pip install
"seqlearn[bench]"``; without it only seqlearn's rows are printed). Times are seconds for
building the network + fitting (``fit``) and for the test run (``predict``); every number is the
median over ``--repeats`` networks (seeds 1, 2, ...), after one untimed warm-up run per model.
The ratio is ReservoirPy's fit + predict time over the row's, from this run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from seqlearn.reservoir import EchoStateNetwork, nrmse
from seqlearn.tasks import mackey_glass

SPECTRAL_RADIUS, LEAK_RATE, INPUT_SCALING, DENSITY, BIAS, RIDGE = 1.25, 0.3, 1.0, 0.1, 0.2, 1e-8

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # u_train, y_train, u_test, y_test


def series(washout: int, train: int, test: int) -> Split:
    """Inputs ``(T, 1)`` and next-step targets ``(T, 1)`` for training (washout included) and testing."""
    y = mackey_glass(washout + train + test + 1, discard=1000, squash=True)[:, None]
    n = washout + train
    return y[:n], y[1 : n + 1], y[n:-1], y[n + 1 :]


def seqlearn_model(N: int, seed: int, washout: int, device) -> tuple[Callable, Callable]:
    """``fit(u, y)`` (building the network first) and ``predict(u)`` (from the state after training)."""
    box = {}

    def fit(u, y):
        box["esn"] = esn = EchoStateNetwork(
            1,
            N,
            spectral_radius=SPECTRAL_RADIUS,
            leak_rate=LEAK_RATE,
            input_scaling=INPUT_SCALING,
            input_distribution="bernoulli",
            reservoir_distribution="normal",
            density=DENSITY,
            bias_scaling=BIAS,
            ridge=RIDGE,
            washout=washout,
            seed=seed,
            device=device,
        )
        esn.fit(u, y)

    def predict(u):
        esn = box["esn"]
        return esn.predict(u, x0=esn.last_state_[0])

    return fit, predict


def reservoirpy_model(N: int, seed: int, washout: int) -> tuple[Callable, Callable]:
    """ReservoirPy 0.4's ``Reservoir >> Ridge``, same hyperparameters (``Win``: Bernoulli +-1, ``W``: normal)."""
    from reservoirpy.mat_gen import uniform
    from reservoirpy.nodes import Reservoir, Ridge

    box = {}

    def fit(u, y):
        reservoir = Reservoir(
            N,
            lr=LEAK_RATE,
            sr=SPECTRAL_RADIUS,
            input_scaling=INPUT_SCALING,
            input_connectivity=1.0,
            rc_connectivity=DENSITY,
            bias=uniform(low=-BIAS, high=BIAS),
            seed=seed,
        )
        box["model"] = model = reservoir >> Ridge(ridge=RIDGE)
        model.fit(u, y, warmup=washout)

    def predict(u):
        return box["model"].run(u)  # the reservoir goes on from its state after training

    return fit, predict


def measure(make: Callable, N: int, data: Split, repeats: int) -> tuple[float, float, float]:
    """Median fit seconds, predict seconds and test NRMSE of ``make(N, seed)`` over seeds 1..repeats."""
    u_train, y_train, u_test, y_test = data
    fit, predict = make(N, 0)
    fit(u_train, y_train)  # warm-up: imports, first-call costs
    predict(u_test)
    fits, predicts, errors = [], [], []
    for seed in range(1, repeats + 1):
        fit, predict = make(N, seed)
        start = time.perf_counter()
        fit(u_train, y_train)
        fitted = time.perf_counter()
        pred = predict(u_test)
        done = time.perf_counter()
        fits.append(fitted - start)
        predicts.append(done - fitted)
        errors.append(nrmse(y_test, np.asarray(pred).reshape(y_test.shape)))
    return statistics.median(fits), statistics.median(predicts), statistics.median(errors)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,300,1000,2000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--devices", default="cpu,cuda", help="devices for seqlearn's torch path")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--washout", type=int, default=100)
    ap.add_argument("--train", type=int, default=3000)
    ap.add_argument("--test", type=int, default=1000)
    args = ap.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    data = series(args.washout, args.train, args.test)

    models: dict[str, Callable[[int, int], tuple[Callable, Callable]]] = {
        "seqlearn numpy": lambda N, seed: seqlearn_model(N, seed, args.washout, None)
    }
    versions = [f"numpy {np.__version__}"]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        if args.threads:
            torch.set_num_threads(args.threads)
        versions.append(f"torch {torch.__version__} ({torch.get_num_threads()} CPU threads)")
        for device in args.devices.split(","):
            if device == "cpu" or (device == "cuda" and torch.cuda.is_available()):
                models[f"seqlearn torch {device}"] = lambda N, seed, d=device: seqlearn_model(N, seed, args.washout, d)
    try:
        import reservoirpy
    except ImportError:
        reservoirpy = None
        print('ReservoirPy is not installed (pip install "seqlearn[bench]"): seqlearn\'s numbers only.')
    else:
        versions.append(f"reservoirpy {reservoirpy.__version__}")
        models[f"reservoirpy {reservoirpy.__version__}"] = lambda N, seed: reservoirpy_model(N, seed, args.washout)

    print(
        f"Mackey-Glass tau=17, one step ahead: washout {args.washout}, train {args.train}, test {args.test}; "
        f"sr {SPECTRAL_RADIUS}, leak {LEAK_RATE}, input +-{INPUT_SCALING}, density {DENSITY}, "
        f"bias U(+-{BIAS}), ridge {RIDGE:g}; medians over {args.repeats} seeds; " + ", ".join(versions)
    )
    print(f"{'N':>5} {'model':22} {'fit s':>8} {'predict s':>10} {'total s':>8} {'NRMSE':>9} {'rpy/this':>9}")
    for N in sizes:
        rows = {name: measure(make, N, data, args.repeats) for name, make in models.items()}
        peer = next((fit + pred for name, (fit, pred, _) in rows.items() if name.startswith("reservoirpy")), None)
        for name, (fit, pred, err) in rows.items():
            ratio = f"{peer / (fit + pred):9.2f}" if peer is not None else f"{'-':>9}"
            print(f"{N:5d} {name:22} {fit:8.3f} {pred:10.3f} {fit + pred:8.3f} {err:9.2e} {ratio}", flush=True)
    print("(seconds: build + fit, predict; NRMSE = RMSE / std of the test targets; ratios from this run)")


if __name__ == "__main__":
    main()
