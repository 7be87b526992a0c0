r"""The chapter's experiments that loop over seeds and lengths, as tested functions.

:func:`adding_cliff` trains the same Elman network on the adding problem
(:func:`seqlearn.tasks.adding_problem`) at several sequence lengths :math:`T` and seeds, and
returns its best validation MSE relative to the memoryless baseline
:math:`\operatorname{Var}(u_{t_1} + u_{t_2}) = 1/6` (always predicting the mean, 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..tasks import adding_baseline_mse, adding_problem
from ..validation import integer
from .model import SequenceRNN
from .train import fit_task

__all__ = ["AddingCliff", "adding_cliff", "TruncationAgreement", "truncated_bptt_agreement"]


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


@dataclass(frozen=True)
class TruncationAgreement:
    """Agreement accuracy of language models trained with truncated BPTT, per seed, ``k`` and distance."""

    ks: tuple[int, ...]
    seeds: tuple[int, ...]
    distances: tuple[int, ...]
    accuracy: np.ndarray  # (len(seeds), len(ks), len(distances))

    def median(self) -> np.ndarray:
        """The median over seeds, shape ``(len(ks), len(distances))``."""
        return np.median(self.accuracy, axis=0)

    def at(self, k: int, distance: int) -> np.ndarray:
        """The accuracy of every seed for truncation length ``k`` at subject-verb ``distance``."""
        return self.accuracy[:, self.ks.index(k), self.distances.index(distance)]


def truncated_bptt_agreement(
    train_stream,
    vocab,
    ks,
    seeds=(0, 1),
    *,
    distances=(1, 2, 4, 8, 16),
    n_per_distance: int = 100,
    embedding_dim: int = 32,
    hidden_size: int = 64,
    epochs: int = 2,
    batch_size: int = 32,
    lr: float = 3e-3,
    device=None,
) -> TruncationAgreement:
    r"""Train an :class:`~seqlearn.rnn.model.RNNLM` with truncated BPTT for each :math:`k` and seed; score agreement.

    Each model reads ``train_stream`` as :func:`~seqlearn.rnn.train.train_rnn_lm` does with
    ``bptt=k``: ``batch_size`` parallel rows, chunks of :math:`k` steps in order, the state
    carried from chunk to chunk and detached at every boundary, so no gradient reaches back
    more than :math:`k` steps. It is then scored on the toy language's agreement examples
    (:func:`seqlearn.data.synthetic.agreement_examples`, ``n_per_distance`` at each distance,
    seed 0) with :func:`seqlearn.lm.agreement_scorer`. Seed :math:`s` seeds the model.
    """
    from ..data.synthetic import agreement_accuracy, agreement_examples
    from ..lm import agreement_scorer
    from .model import RNNLM
    from .train import train_rnn_lm

    ks = tuple(integer(k, "k", low=1) for k in ks)
    seeds = tuple(integer(s, "seed", low=0) for s in seeds)
    distances = tuple(integer(d, "distance", low=0) for d in distances)
    if not ks or not seeds or not distances:
        raise ValueError("truncated_bptt_agreement needs at least one k, one seed and one distance")
    examples = agreement_examples(distances, n_per_distance=n_per_distance, seed=0)
    accuracy = np.empty((len(seeds), len(ks), len(distances)))
    for i, s in enumerate(seeds):
        for j, k in enumerate(ks):
            lm = RNNLM(len(vocab), embedding_dim=embedding_dim, hidden_size=hidden_size, init="orthogonal", seed=s)
            train_rnn_lm(
                lm, train_stream, None, lr=lr, epochs=epochs, batch_size=batch_size, bptt=k,
                device=device, seed=s, progress=False,
            )  # fmt: skip
            score = cast(Callable[[Sequence[str], Sequence[str]], Sequence[float]], agreement_scorer(lm, vocab))
            by_distance = agreement_accuracy(score, examples)
            accuracy[i, j] = [by_distance[d] for d in distances]
    return TruncationAgreement(ks, seeds, distances, accuracy)
