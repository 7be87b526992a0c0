r"""The chapters' experiments that loop over seeds and lengths, as tested functions.

:func:`task_cliff` trains the same network on a synthetic task at several lengths :math:`T`
and seeds and returns its best validation loss relative to the task's memoryless baseline:
the adding problem (:func:`seqlearn.tasks.adding_problem`, baseline
:math:`\operatorname{Var}(u_{t_1} + u_{t_2}) = 1/6`, always predicting the mean, 1) or the
copy task (:func:`seqlearn.tasks.copy_task`, baseline :math:`k \log n / (T + 2k)`,
:func:`seqlearn.tasks.copy_baseline_loss`). Chapter 3 runs it with the Elman network,
Chapter 4 with LSTMs and GRUs (``make_model``).

:func:`long_agreement_curves` trains language models on
:class:`seqlearn.data.agreement.LongAgreement` (subjects up to 80 words before their verbs) and
returns their agreement accuracy per bin of distance, a :class:`DistanceAgreement` per model:
where a network stops carrying the subject's number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from torch import nn

from ..parallel import map_in_workers
from ..tasks import adding_baseline_mse, adding_problem, copy_baseline_loss, copy_task, copy_vocab_size, one_hot
from ..validation import choice, flag, integer, real
from .model import SequenceRNN
from .train import fit_task

__all__ = [
    "CLIFF_TASKS",
    "TaskCliff",
    "task_cliff",
    "task_data",
    "TruncationAgreement",
    "truncated_bptt_agreement",
    "LONG_AGREEMENT",
    "DistanceAgreement",
    "long_agreement_curves",
    "subject_signal",
]

CLIFF_TASKS = ("adding", "copy")

LONG_AGREEMENT: dict[str, Any] = {"max_distance": 80, "short_fraction": 0.6, "attractor_rate": 0.5}
"""The long-distance agreement task of Chapters 3, 4 and 7 (:class:`seqlearn.data.agreement.LongAgreement`)."""


@dataclass(frozen=True)
class TaskCliff:
    """Best validation loss / baseline for each seed (rows) and sequence length (columns).

    ``curves[i, j, e]`` is the validation loss / baseline after epoch ``e + 1`` (seed ``i``,
    length ``j``), so ``relative_loss`` is its minimum over the epochs.
    """

    task: str
    lengths: tuple[int, ...]
    seeds: tuple[int, ...]
    relative_loss: np.ndarray  # (len(seeds), len(lengths))
    curves: np.ndarray  # (len(seeds), len(lengths), epochs)
    models: dict[tuple[int, int], nn.Module] = field(default_factory=dict)  # (seed, T) -> trained model

    def median(self) -> np.ndarray:
        """The median over seeds, one value per length."""
        return np.median(self.relative_loss, axis=0)

    def spread(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest and largest value over seeds, per length."""
        return self.relative_loss.min(axis=0), self.relative_loss.max(axis=0)

    def epochs_to(self, level: float) -> np.ndarray:
        """``(len(seeds), len(lengths))``: the first epoch (from 1) whose validation loss / baseline is
        below ``level``; NaN where no epoch is."""
        level = real(level, "level", low=0.0, low_open=True)
        below = self.curves < level
        first = np.argmax(below, axis=2) + 1.0
        return np.where(below.any(axis=2), first, np.nan)

    def table(self) -> dict[int, list[float]]:
        """``{T: [relative loss of each seed]}``, rounded to 3 decimals."""
        return {T: [round(float(v), 3) for v in self.relative_loss[:, j]] for j, T in enumerate(self.lengths)}


def task_data(task: str, n: int, T: int, seed: int, copy_symbols: int = 8, copy_k: int = 10):
    r"""``(x, y, baseline)`` of ``n`` sequences of a cliff task at length :math:`T`, seeded by ``seed``.

    ``"adding"``: ``x`` ``(n, T, 2)``, ``y`` ``(n,)``, baseline 1/6 (MSE). ``"copy"``: ``x``
    the one-hot inputs ``(n, T + 2k, n_symbols + 2)``, ``y`` the target ids ``(n, T + 2k)``,
    baseline :math:`k \log n / (T + 2k)` (cross-entropy per step, nats).
    """
    task = choice(task, "task", CLIFF_TASKS)
    if task == "adding":
        x, y = adding_problem(n, T, rng=seed)
        return x, y, adding_baseline_mse(T)
    ids, y = copy_task(n, T, copy_k, copy_symbols, rng=seed)
    return one_hot(ids, copy_vocab_size(copy_symbols)), y, copy_baseline_loss(T, copy_k, copy_symbols)


def task_cliff(
    task,
    lengths,
    seeds=(0, 1, 2),
    *,
    make_model: Callable[[int], nn.Module] | None = None,
    n_train: int = 4000,
    n_val: int = 1000,
    hidden_size: int = 32,
    nonlinearity: str = "tanh",
    init: str = "orthogonal",
    epochs: int = 8,
    batch_size: int = 64,
    lr: float = 1e-2,
    clip_grad_norm: float | None = 1.0,
    copy_symbols: int = 8,
    copy_k: int = 10,
    keep_models: bool = False,
    workers: int = 1,
    device=None,
    progress: bool = False,
) -> TaskCliff:
    r"""Train a network on ``task`` (``"adding"`` or ``"copy"``) at each length and seed.

    For seed :math:`s` and length :math:`T`: training data from seed :math:`s`, validation
    data from seed :math:`10000 + s` (:func:`task_data`); the model ``make_model(s)``, by
    default an Elman :class:`~seqlearn.rnn.model.SequenceRNN` with ``hidden_size``,
    ``nonlinearity`` and ``init`` (many-to-one for the adding problem, one output per step
    for the copy task), seeded with :math:`s`; :func:`~seqlearn.rnn.train.fit_task` with Adam,
    MSE (adding) or cross-entropy (copy), ``epochs`` passes, mini-batches of ``batch_size``
    in an order seeded by :math:`s`, and gradient clipping. The result is the lowest
    validation loss over the epochs divided by the memoryless baseline: about 1 means the
    network learned nothing beyond it, 0 that it solved the task (and the whole validation
    curve, ``TaskCliff.curves``). With ``keep_models`` the
    trained models (the weights of the best epoch) are kept in ``TaskCliff.models`` by
    ``(seed, T)``, for diagnostics after training (on the CPU).

    ``workers > 1`` trains that many runs at a time in forked processes, one CPU thread each
    (where the platform can fork; elsewhere, and on a GPU, one after the other): the same
    computations as ``workers=1``, since each run is seeded on its own.
    """
    task = choice(task, "task", CLIFF_TASKS)
    keep_models = flag(keep_models, "keep_models")
    workers = integer(workers, "workers", low=1)
    lengths = tuple(integer(T, "T", low=2) for T in lengths)
    seeds = tuple(integer(s, "seed", low=0) for s in seeds)
    if not lengths or not seeds:
        raise ValueError("task_cliff needs at least one length and one seed")
    if make_model is None:
        D, O = (2, 1) if task == "adding" else (copy_vocab_size(copy_symbols), copy_symbols + 1)

        def make_model(s: int) -> SequenceRNN:
            return SequenceRNN(D, hidden_size, O, task == "adding", nonlinearity, init, seed=s)

    from tqdm.auto import tqdm

    def run(s: int, T: int) -> tuple[np.ndarray, dict | None]:
        x_tr, y_tr, baseline = task_data(task, n_train, T, s, copy_symbols, copy_k)
        x_va, y_va, _ = task_data(task, n_val, T, 10_000 + s, copy_symbols, copy_k)
        model = make_model(s)
        history = fit_task(
            model, x_tr, y_tr, x_va, y_va, loss="mse" if task == "adding" else "ce", lr=lr,
            epochs=epochs, batch_size=batch_size, clip_grad_norm=clip_grad_norm, device=device, seed=s,
        )  # fmt: skip
        return np.array(history.val_loss) / baseline, (model.state_dict() if keep_models else None)

    jobs = [(s, T) for T in sorted(lengths, reverse=True) for s in seeds]  # longest first: the workers end together
    bar = tqdm(total=len(jobs), disable=not progress, desc=f"{task} cliff", unit="run")
    results = dict(zip(jobs, map_in_workers(run, jobs, workers, bar.update, device)))
    bar.close()
    curves = np.array([[results[s, T][0] for T in lengths] for s in seeds])  # (seeds, lengths, epochs)
    models = {}
    for (s, T), (_, state) in results.items():
        if state is not None:
            models[s, T] = make_model(s)
            models[s, T].load_state_dict(state)
    return TaskCliff(task, lengths, seeds, curves.min(axis=2), curves, models)


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


@dataclass(frozen=True)
class DistanceAgreement:
    """Agreement accuracy of one model per seed (rows) and bin of subject-verb distances (columns).

    ``accuracy[i, j]`` is the share of the evaluation items at distances
    :math:`[b_j, b_j + w)` on which the model trained with ``seeds[i]`` prefers the agreeing verb
    (chance: 1/2), with :math:`b_j` = ``bins[j]`` and :math:`w` = ``width``.
    """

    bins: np.ndarray  # (K,) the first distance of each bin
    width: int
    seeds: tuple[int, ...]
    accuracy: np.ndarray  # (len(seeds), K)
    n_params: int
    final_loss: tuple[float, ...]  # per seed, nats per token
    model: nn.Module | None = None  # the model trained with seeds[0]

    def mean_between(self, low: int, high: int | None = None) -> float:
        """The mean over seeds and bins of the bins that start in ``[low, high)`` (``high=None``: no upper end)."""
        low = integer(low, "low", low=0)
        inside = self.bins >= low
        if high is not None:
            inside &= self.bins < integer(high, "high", low=low + 1)
        if not inside.any():
            raise ValueError(f"no bin starts in [{low}, {high}): the bins start at {self.bins.tolist()}")
        return float(self.accuracy[:, inside].mean())


def long_agreement_curves(
    factories,
    seeds=(0, 1),
    *,
    task=None,
    n_train: int = 12_000,
    n_per_distance: int = 10,
    width: int = 10,
    lr: float = 1e-2,
    batch_size: int = 32,
    workers: int = 1,
    device="cpu",
    progress: bool = True,
) -> dict[str, DistanceAgreement]:
    r"""Train each language model once over long-distance agreement text; its accuracy per bin of distance.

    The training text is ``n_train`` sentences of ``task`` (a
    :class:`~seqlearn.data.agreement.LongAgreement`, by default :data:`LONG_AGREEMENT`'s) drawn
    with seed 0 over :meth:`ToyEnglish.vocabulary <seqlearn.data.synthetic.ToyEnglish.vocabulary>`;
    the evaluation set holds ``n_per_distance`` items at every distance
    :math:`0, \dots, d_{\max}` (seed 1). :func:`seqlearn.rnn.agreement_race` trains
    ``factories[name](seed)`` for every seed with Adam (``lr``, gradient norm clipped at 1) for
    one pass in batches of ``batch_size``, :math:`\lceil n_{\text{train}} / B \rceil` updates,
    and scores it; :func:`seqlearn.data.agreement.binned_accuracy` groups the accuracies into bins
    of ``width`` distances. These are Chapter 7's settings, so the chapters' curves agree.
    ``workers > 1`` trains that many seeds at a time in forked processes
    (:func:`seqlearn.parallel.map_in_workers`): the same computations, since each seed's run is
    seeded on its own.

    Parameters
    ----------
    factories : mapping name -> callable
        ``factories[name](seed)`` builds a fresh language model over ``len(vocab)`` tokens, where
        ``vocab = Vocab(ToyEnglish.vocabulary())``.
    seeds : sequence of int

    Returns
    -------
    dict
        ``{name: DistanceAgreement}``.
    """
    from ..data import Vocab, encode_sentences
    from ..data.agreement import LongAgreement, binned_accuracy
    from ..data.synthetic import ToyEnglish
    from .race import agreement_race

    task = LongAgreement(**LONG_AGREEMENT) if task is None else task
    if not isinstance(task, LongAgreement):
        raise TypeError(f"task must be a seqlearn.data.agreement.LongAgreement, got {type(task).__name__}")
    n_train = integer(n_train, "n_train", low=1)
    width = integer(width, "width", low=1)
    vocab = Vocab(ToyEnglish.vocabulary())
    train = encode_sentences(task.sample(n_train, rng=0), vocab)
    examples = task.agreement_examples(range(task.max_distance + 1), n_per_distance=n_per_distance, seed=1)
    seeds = tuple(integer(s, "each seed", low=0) for s in seeds)
    workers = integer(workers, "workers", low=1)
    if not seeds:
        raise ValueError("seeds is empty: give at least one")

    def one_seed(seed: int):
        return agreement_race(
            factories, train, vocab, examples, seeds=[seed], lr=lr, epochs=1, batch_size=batch_size,
            device=device, progress=False,
        )  # fmt: skip

    from tqdm.auto import tqdm

    bar = tqdm(total=len(seeds), desc="training", unit="seed", disable=not progress)
    races = map_in_workers(one_seed, [(s,) for s in seeds], workers, bar.update, device)  # one per seed
    bar.close()
    curves = {}
    for name in races[0].accuracy:
        binned = [binned_accuracy(race.accuracy[name][0], examples, width=width) for race in races]
        curves[name] = DistanceAgreement(
            np.array(list(binned[0])), width, seeds, np.array([list(b.values()) for b in binned]),
            races[0].n_params[name], tuple(race.final_loss[name][0] for race in races), races[0].models[name],
        )  # fmt: skip
    return curves


def subject_signal(model, vocab, examples) -> np.ndarray:
    r"""How much of the subject's state reaches the verb: :math:`\lVert \partial h_T / \partial h_{T-d} \rVert_2`.

    For an example whose subject's head noun stands :math:`d` words before the verb, the Elman
    language model reads ``<s> prefix``; :math:`h_T` is its state after the last word of the
    prefix (the state that predicts the verb) and :math:`h_{T-d}` its state after the head noun.
    The norm of the product of the :math:`d` step Jacobians between them,

    .. math::
        \Big\lVert \prod_{j=T-d+1}^{T} J_j \Big\rVert_2, \qquad J_j = \operatorname{diag}\big(\phi'(z_j)\big)\, W_{hh},

    bounds how much a change of :math:`h_{T-d}` (what the subject wrote into the state) moves
    :math:`h_T`, and, transposed, how much of the verb's error reaches the subject in BPTT
    (section 3 of Chapter 3). Computed in float64 with :func:`seqlearn.rnn.elman_preactivations`,
    :func:`seqlearn.rnn.step_jacobians` and :func:`seqlearn.rnn.product_norms_vs_lag` from the
    model's embedding :math:`E` and recurrent weights.

    Parameters
    ----------
    model : RNNLM
        An Elman language model (:class:`seqlearn.rnn.model.RNNLM`).
    vocab : Vocab
    examples : sequence of AgreementExample

    Returns
    -------
    (N,) array, one norm per example (1 at :math:`d = 0`).
    """
    from ..data import Vocab
    from .elman import elman_preactivations
    from .jacobians import product_norms_vs_lag, step_jacobians
    from .model import RNNLM
    from .race import _check_examples

    if not isinstance(model, RNNLM):
        raise TypeError(f"model must be a seqlearn.rnn.RNNLM (an Elman language model), got {type(model).__name__}")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.Vocab, got {type(vocab).__name__}")
    examples = _check_examples(examples)
    cell, phi = model.rnn, model.rnn.nonlinearity
    E, W_hh, W_xh, b_h = (p.detach().cpu().double().numpy() for p in (model.E, cell.W_hh, cell.W_xh, cell.b_h))
    norms = []
    for ex in examples:
        ids = np.concatenate([[Vocab.bos_id], vocab.encode(list(ex.prefix))])  # (T,)
        z = elman_preactivations(E[ids], np.zeros(len(b_h)), W_hh, W_xh, b_h, phi)  # (T, H)
        norms.append(product_norms_vs_lag(step_jacobians(z, W_hh, phi), max_lag=ex.distance)[ex.distance])
    return np.array(norms)
