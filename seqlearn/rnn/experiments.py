r"""The chapter's experiments that loop over seeds and lengths, as tested functions.

:func:`adding_cliff` trains the same Elman network on the adding problem
(:func:`seqlearn.tasks.adding_problem`) at several sequence lengths :math:`T` and seeds, and
returns its best validation MSE relative to the memoryless baseline
:math:`\operatorname{Var}(u_{t_1} + u_{t_2}) = 1/6` (always predicting the mean, 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..tasks import adding_baseline_mse, adding_problem
from ..validation import integer
from .model import SequenceRNN
from .train import fit_task

__all__ = ["AddingCliff", "adding_cliff"]


@dataclass(frozen=True)
class AddingCliff:
    """Best validation MSE / baseline for each seed (rows) and sequence length (columns)."""

    lengths: tuple[int, ...]
    seeds: tuple[int, ...]
    relative_mse: np.ndarray  # (len(seeds), len(lengths))

    def median(self) -> np.ndarray:
        """The median over seeds, one value per length."""
        return np.median(self.relative_mse, axis=0)

    def spread(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest and largest value over seeds, per length."""
        return self.relative_mse.min(axis=0), self.relative_mse.max(axis=0)

    def table(self) -> dict[int, list[float]]:
        """``{T: [relative MSE of each seed]}``, rounded to 3 decimals."""
        return {T: [round(float(v), 3) for v in self.relative_mse[:, j]] for j, T in enumerate(self.lengths)}


def adding_cliff(
    lengths,
    seeds=(0, 1, 2),
    *,
    n_train: int = 4000,
    n_val: int = 1000,
    hidden_size: int = 32,
    nonlinearity: str = "tanh",
    init: str = "orthogonal",
    epochs: int = 8,
    lr: float = 1e-2,
    clip_grad_norm: float | None = 1.0,
    device=None,
    progress: bool = False,
) -> AddingCliff:
    r"""Train a :class:`~seqlearn.rnn.model.SequenceRNN` on the adding problem at each length and seed.

    For seed :math:`s` and length :math:`T`: training data ``adding_problem(n_train, T,
    rng=s)``, validation data ``adding_problem(n_val, T, rng=10_000 + s)``, the model and the
    mini-batch order seeded with :math:`s`; :func:`~seqlearn.rnn.train.fit_task` with Adam,
    MSE, ``epochs`` passes and gradient clipping. The result is the lowest validation MSE over
    the epochs divided by :func:`~seqlearn.tasks.adding_baseline_mse` (1/6): about 1 means the
    network learned nothing beyond the mean, 0 that it solved the task.
    """
    lengths = tuple(integer(T, "T", low=2) for T in lengths)
    seeds = tuple(integer(s, "seed", low=0) for s in seeds)
    if not lengths or not seeds:
        raise ValueError("adding_cliff needs at least one length and one seed")
    from tqdm.auto import tqdm

    relative = np.empty((len(seeds), len(lengths)))
    cells = [(i, j) for i in range(len(seeds)) for j in range(len(lengths))]
    for i, j in tqdm(cells, disable=not progress, desc="adding cliff", unit="run"):
        s, T = seeds[i], lengths[j]
        x_tr, y_tr = adding_problem(n_train, T, rng=s)
        x_va, y_va = adding_problem(n_val, T, rng=10_000 + s)
        model = SequenceRNN(2, hidden_size, 1, nonlinearity=nonlinearity, init=init, seed=s)
        history = fit_task(
            model, x_tr, y_tr, x_va, y_va, loss="mse", lr=lr, epochs=epochs,
            clip_grad_norm=clip_grad_norm, device=device, seed=s,
        )  # fmt: skip
        relative[i, j] = min(history.val_loss) / adding_baseline_mse(T)
    return AddingCliff(lengths, seeds, relative)
