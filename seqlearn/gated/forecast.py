r"""One-step prediction of a scalar series by an LSTM trained with BPTT on overlapping windows.

Chapter 4 sets this against an echo state network on the Mackey-Glass series: the same training
steps, the same test steps, one solve against many epochs. The LSTM (:class:`SequenceGated`,
``many_to_one=False``) reads :math:`u_t` and predicts :math:`\hat u_{t+1} = W_{hy} h_t + b_y` at every
step. It is trained on windows of ``window`` steps taken every ``window // 2`` steps of the training
part,

.. math:: x^{(j)} = (u_{s_j}, \dots, u_{s_j + w - 1}), \qquad y^{(j)} = (u_{s_j + 1}, \dots, u_{s_j + w}),
   \qquad s_j = j\,\lfloor w/2 \rfloor,

with Adam on the mean squared error (:func:`seqlearn.rnn.fit_task`'s loss), gradient norm clipped. For
the test it first reads the last ``window`` training steps, to settle its state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch

from ..rnn.data import TensorBatches
from ..rnn.train import TASK_LOSSES
from ..training import fit
from ..validation import integer, real, real_array
from .models import SequenceGated

__all__ = ["ForecastRun", "series_windows", "train_forecaster"]


def series_windows(series, n_train: int, window: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Overlapping training windows of ``series[:n_train + 1]``: inputs and next-step targets.

    Window :math:`j` starts at :math:`s_j = j \lfloor w/2 \rfloor` for every :math:`s_j < n_{train} - w`.

    Returns
    -------
    x : numpy.ndarray, float32, shape ``(B, window, 1)``
    y : numpy.ndarray, float32, shape ``(B, window)``, ``y[j, t] = series[s_j + t + 1]``
    """
    u = real_array(series, "series", ndim=1)
    n = integer(n_train, "n_train", low=2, high=len(u) - 1)
    w = integer(window, "window", low=2, high=n - 1)
    starts = np.arange(0, n - w, w // 2)
    x = np.stack([u[s : s + w] for s in starts])[:, :, None].astype(np.float32)
    y = np.stack([u[s + 1 : s + w + 1] for s in starts]).astype(np.float32)
    return x, y


@dataclass
class ForecastRun:
    """What :func:`train_forecaster` measured.

    Attributes
    ----------
    predictions : dict
        ``predictions[e]``: the one-step predictions of the ``n_test`` steps after the training part
        (``predictions[e][t]`` predicts ``series[n_train + t + 1]``) after ``e`` epochs, shape ``(n_test,)``.
    seconds : dict
        ``seconds[e]``: training time up to epoch ``e`` (the test predictions not included).
    n_params : int
        Trained parameters.
    updates_per_epoch : int
        Adam steps per epoch.
    """

    predictions: dict[int, np.ndarray]
    seconds: dict[int, float]
    n_params: int
    updates_per_epoch: int


def _test_predictions(model: SequenceGated, u: np.ndarray, n_train: int, n_test: int, window: int) -> np.ndarray:
    """(n_test,): the model reads u[n_train - window : n_train + n_test]; its last n_test outputs."""
    context = torch.tensor(u[n_train - window : n_train + n_test], dtype=torch.float32)[None, :, None]  # (1, T, 1)
    with torch.no_grad():
        return model(context)[0, window:, 0].numpy().astype(np.float64)


def train_forecaster(
    series,
    n_train: int,
    n_test: int,
    epochs: Sequence[int],
    *,
    hidden_size: int = 32,
    window: int = 100,
    lr: float = 1e-2,
    batch_size: int = 16,
    clip_grad_norm: float = 1.0,
    seed: int = 0,
    progress: bool = False,
) -> ForecastRun:
    r"""Train one LSTM forecaster (CPU) and predict the test steps after each number of ``epochs``.

    One model is trained for ``max(epochs)`` epochs; at each epoch count in ``epochs`` it predicts
    the test steps. Training continues with the same optimiser state and batch order, so the
    predictions after :math:`e` epochs are those of a fresh model trained for :math:`e` epochs from
    the same seed (tested), at the cost of one run.

    Parameters
    ----------
    series : array ``(T,)``
        The scalar series :math:`u_t`; ``T >= n_train + n_test + 1``.
    n_train, n_test : int
        The training part ``series[:n_train + 1]`` and the test steps after it.
    epochs : sequence of int
        Increasing epoch counts, the last the length of the run.
    hidden_size, window, lr, batch_size, clip_grad_norm, seed
        The LSTM's width :math:`H`, the window :math:`w`, Adam's learning rate, batch size and clipping;
        ``seed`` draws the initial weights and the batch order.
    progress : bool
        Print a line per epoch count: the test NRMSE is not known here, so the line gives the epochs
        and the seconds so far.

    Returns
    -------
    ForecastRun
    """
    u = real_array(series, "series", ndim=1)
    n_train, n_test = integer(n_train, "n_train", low=2), integer(n_test, "n_test", low=1)
    if len(u) < n_train + n_test + 1:
        raise ValueError(f"series must hold n_train + n_test + 1 = {n_train + n_test + 1} steps, got {len(u)}")
    counts = [integer(e, "each epoch count", low=1) for e in epochs]
    if not counts or any(b <= a for a, b in pairwise(counts)):
        raise ValueError(f"epochs must be a non-empty increasing sequence, got {list(epochs)}")
    clip = real(clip_grad_norm, "clip_grad_norm", low=0.0, low_open=True)
    x, y = series_windows(u, n_train, window)
    model = SequenceGated(1, hidden_size, 1, cell="lstm", many_to_one=False, seed=seed)
    batches = TensorBatches(x, y, batch_size, shuffle=True, seed=seed, device="cpu")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    run = ForecastRun({}, {}, sum(p.numel() for p in model.parameters()), len(batches))
    done, seconds = 0, 0.0
    for e in counts:
        start = time.perf_counter()
        fit(model, TASK_LOSSES["mse"], optimizer, batches, epochs=e - done, clip_grad_norm=clip, device="cpu",
            progress=False)  # fmt: skip
        seconds += time.perf_counter() - start
        done = e
        run.seconds[e] = seconds
        run.predictions[e] = _test_predictions(model, u, n_train, n_test, window)
        if progress:
            print(f"LSTM: {e} epochs trained in {seconds:.1f} s")
    return run
