r"""Invisible overlaps as a memory of past tasks: the twin experiment, run in overlap space.

**Protocol** (the paper's Fig. 4d-f; :class:`MemoryProtocol`). Each twin pair shares a random
start (the six cross overlaps :math:`|\mathcal N(0, 0.4^2)|`, the four norms :math:`U(0.5, 2)`).
Twin 1 learns task A (flip-flop, waits 1-2 s, input 2, target 1), twin 2 task B (decision
making); each network's rate :math:`\eta` is divided by 5 the first time its loss drops below
0.015. Then both learn the teacher task C, whose loss is the code's :math:`T\,dt` times the mean
squared error. Every phase is the overlap ODE :math:`\sigma \leftarrow \sigma - \eta\,\bar
G(\sigma)\, \nabla_\sigma L`, its ten overlaps updated at once or one after another
(:func:`seqlearn.lowrank.overlaps.update_step`), with :math:`\nabla_\sigma L` through the
effective erf model (:func:`seqlearn.lowrank.erf.overlap_gradient`); all twins train together,
batched over networks, each on its own trials: fresh ones every step (the paper) or drawn from
pools generated once (the chapter's scale).

**Decoding.** Which task did a network learn first? A logistic regression on standardised
features, either the seven visible or the three invisible overlaps, at three times (start, end of
A/B, end of C), optionally with :math:`\mathcal N(0, s^2)` noise on the training features, tested
on held-out networks: whole pairs (``split="pairs"``: both twins of a test pair are unseen), or,
after the start, two networks of each label drawn independently (``split="labels"``, the paper's
code: a test network's twin is then usually in the training set). The claim under test: after C
the visible overlaps have converged to the teacher's (decoding at chance) while the invisible
ones, which integrate the training history, still tell A from B.

**Checks.** Overlap space does not need vectors, so nothing keeps the overlaps a Gram matrix;
each run reports every network's smallest eigenvalue of :math:`\Gamma` (:func:`~seqlearn.lowrank
.overlaps.gram`) and how far :math:`\sigma_{uu} - \sigma_{vv}` (conserved by the simultaneous
step, :func:`~seqlearn.lowrank.erf`'s rescaling symmetry) drifted.

**Scales.** :meth:`MemoryProtocol.paper` is the paper's protocol (about 30 min per seed on one
core with pooled trials); :meth:`MemoryProtocol.binder` the same at a size a chapter runs live
(4,000 steps, seconds), long enough for the invisible overlaps to keep the history through C.

**Shipped results.** :mod:`~seqlearn.lowrank.memory_results` runs the paper's protocol for some seeds
(``python -m seqlearn.lowrank.memory_results --out FILE``), writes and reads the record Chapter 6 ships
(``chapters/results/06_memory.json``) and summarises it over however many seeds it holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..validation import choice, flag, generator, integer, real, real_array
from .erf import READS, Batch, _loss_gradient
from .overlaps import INVISIBLE, OVERLAPS, UPDATES, VISIBLE, gram, index, update_step
from .tasks import decision_making, flip_flop, teacher

__all__ = [
    # the experiment
    "MemoryProtocol",
    "MemoryExperiment",
    "twin_start",
    "memory_experiment",
    # the decoders
    "TIMES",
    "SPLITS",
    "logistic_fit",
    "decode",
    "decode_times",
]

TIMES = ("start", "A/B", "C")
SPLITS = ("labels", "pairs")
DIVERGED = ("raise", "freeze")  # what a network whose loss becomes non-finite does
GRAM_TOLERANCE = 1e-12  # a smallest eigenvalue above -this counts as positive semidefinite


@dataclass(frozen=True)
class MemoryProtocol:
    r"""Every setting of a twin experiment. The defaults are the chapter's scale; :meth:`paper` the paper's.

    Attributes
    ----------
    pairs : int >= 3
        Twin pairs (``2 pairs`` networks; the decoders hold out ``held_out`` pairs, or ``held_out`` networks of
        each label after the start with ``split="labels"``).
    dt : float
        The Euler step; every trial is 20 s, :math:`T = 20 / dt` steps.
    batch : int
        Trials per network and step.
    pool : int or None
        Trials per task generated once, each step drawing ``batch`` of them per network; ``None``:
        fresh trials every step (as the paper).
    epochs_ab, eta_ab, drop_below : int, float, float
        Phase A/B: steps, rate, and the loss below which a network's rate is divided by 5 (once).
    epochs_c, eta_c : int, float
        Phase C: steps and rate.
    gram_start : bool
        Draw the twins' starts again until each is a positive definite Gram matrix (:func:`twin_start`);
        the paper's code does not check (and seed 0's pool run at its protocol lost a network whose
        start was none to a non-finite loss at epoch 117 of A/B, whatever the update and the read).
    diverged : ``"raise"`` or ``"freeze"``
        What a network whose loss becomes non-finite does: stop the run (``FloatingPointError``), or stop
        learning, keeping its last finite overlaps and a non-finite loss from then on
        (:attr:`MemoryExperiment.diverged`), so that a run can report how many networks left.
    max_step : float or None
        Cap on any overlap's change in one step (each network's step scaled down to it); the metric
        grows with the norms, so a fixed :math:`\eta` can overshoot once they have grown.
    update : ``"simultaneous"`` or ``"sequential"``
        The overlaps' update (:data:`~seqlearn.lowrank.overlaps.UPDATES`); the paper's code is sequential.
    read : ``"before"`` or ``"after"``
        Where the effective model's output is read (:data:`~seqlearn.lowrank.erf.READS`), for the
        students and the teacher alike; the paper's code reads after.
    split : ``"labels"`` or ``"pairs"``
        The decoders' held-out networks after the start (:data:`SPLITS`; the start is always split by pair).
    resamples, held_out, noise : int, int, float
        The decoders' random splits, held-out pairs (or networks per label), and the std of the
        noise added to the training features (see :func:`decode`).
    """

    pairs: int = 8
    dt: float = 0.1
    batch: int = 32
    pool: int | None = 1024
    epochs_ab: int = 800
    eta_ab: float = 0.02
    drop_below: float = 0.015
    epochs_c: int = 800
    eta_c: float = 5e-3
    gram_start: bool = False
    max_step: float | None = None
    diverged: str = "raise"
    update: str = "simultaneous"
    read: str = "before"
    split: str = "labels"
    resamples: int = 50
    held_out: int = 2
    noise: float = 0.0

    def __post_init__(self):
        integer(self.pairs, "pairs", low=integer(self.held_out, "held_out", low=1) + 1)
        for name in ("batch", "epochs_ab", "epochs_c", "resamples"):
            integer(getattr(self, name), name, low=1)
        if self.pool is not None:
            integer(self.pool, "pool", low=1)
        for name in ("dt", "eta_ab", "eta_c"):
            real(getattr(self, name), name, low=0.0, low_open=True)
        real(self.drop_below, "drop_below")
        real(self.noise, "noise", low=0.0)
        if self.max_step is not None:
            real(self.max_step, "max_step", low=0.0, low_open=True)
        flag(self.gram_start, "gram_start")
        choice(self.update, "update", UPDATES)
        choice(self.read, "read", READS)
        choice(self.diverged, "diverged", DIVERGED)
        choice(self.split, "split", SPLITS)

    @classmethod
    def paper(cls, **changes) -> MemoryProtocol:
        """The paper's protocol: 10 pairs, dt 0.05 (T 400), 128 fresh trials per step, 30,000 A/B epochs at
        :math:`\\eta` 0.01 and 30,000 C epochs at 1e-3, sequential updates, output read after the update,
        no step cap. Two departures from its code: the starts are Gram matrices (``gram_start``), and the
        decoders hold out pairs (its code splits by label). ``changes`` override fields."""
        paper = cls(
            pairs=10, dt=0.05, batch=128, pool=None, epochs_ab=30_000, eta_ab=0.01, epochs_c=30_000, eta_c=1e-3,
            gram_start=True, update="sequential", read="after", split="pairs",
        )  # fmt: skip
        return paper.replace(**changes)

    @classmethod
    def binder(cls, **changes) -> MemoryProtocol:
        """The paper's protocol at the scale a chapter can run live (about 4,000 steps, ~15 s on one core): dt 0.1
        (T 200), 16 trials per step from 1024-trial pools, 2,000 A/B epochs at :math:`\\eta` 0.02 and 2,000 C epochs
        at 1e-3. Long enough that task B is nearly learned (loss ~0.05; at 400 A/B epochs it is not, and C erases
        the twins' differences), so the invisible overlaps still tell A from B after C without feature noise."""
        return cls.paper(dt=0.1, batch=16, pool=1024, epochs_ab=2000, eta_ab=0.02, epochs_c=2000).replace(**changes)

    def replace(self, **changes) -> MemoryProtocol:
        """A copy with ``changes`` (field names); ``TypeError`` naming any field that does not exist."""
        fields = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise TypeError(f"unknown protocol fields {unknown}; the fields are {fields}")
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class MemoryExperiment:
    r"""The twins' overlaps and losses, the checks, and the decoders' accuracies.

    Attributes
    ----------
    protocol : MemoryProtocol
    sigma : np.ndarray, shape (3, 2, pairs, 10)
        Overlaps at the start, the end of A/B and the end of C; axis 1 is (twin A, twin B).
    loss : np.ndarray, shape (epochs_ab + epochs_c, 2, pairs)
        Each step's batch loss (masked MSE in A/B; :math:`T\,dt` times the MSE in C).
    twin_difference : np.ndarray, shape (3, pairs, 10)
        :math:`\sigma_A - \sigma_B` per pair at the three times.
    smallest_eigenvalue : np.ndarray, shape (3, 2, pairs)
        The smallest eigenvalue of each network's Gram matrix :math:`\Gamma`: at the start, and the
        lowest over every step of A/B and of C (:attr:`gram_valid` compares it with 0).
    balance_drift : np.ndarray, shape (2, 2, pairs)
        :math:`\max |(\sigma_{uu} - \sigma_{vv})_t - (\sigma_{uu} - \sigma_{vv})_0|` over the steps of A/B and of C.
    accuracy : dict
        ``{(time, features): (resamples,) test accuracies}``, time in :data:`TIMES`, features
        ``"visible"`` or ``"invisible"`` (the protocol's split and noise).
    """

    protocol: MemoryProtocol
    sigma: np.ndarray
    loss: np.ndarray
    twin_difference: np.ndarray
    smallest_eigenvalue: np.ndarray
    balance_drift: np.ndarray
    accuracy: dict[tuple[str, str], np.ndarray]

    @property
    def diverged(self) -> np.ndarray:
        """Whether each network's loss became non-finite (``diverged="freeze"``), shape (2, pairs)."""
        return ~np.isfinite(self.loss).all(axis=0)

    @property
    def gram_valid(self) -> np.ndarray:
        """Whether each network's overlaps were a positive semidefinite Gram matrix, shape (3, 2, pairs) (as
        :attr:`smallest_eigenvalue`: at the start, throughout A/B, throughout C)."""
        return self.smallest_eigenvalue >= -GRAM_TOLERANCE


def twin_start(pairs: int, rng=None, *, gram: bool = False) -> np.ndarray:
    r"""Random starts, shape (pairs, 10): cross overlaps :math:`|\mathcal N(0, 0.4^2)|`, norms :math:`U(0.5, 2)`.

    As in the paper, the draws are not checked to be a positive definite Gram matrix (overlap
    space does not need vectors) unless ``gram``: then every start that is not one is drawn again
    until it is (the overlaps of real vectors).
    """
    pairs = integer(pairs, "pairs", low=1)
    rng = generator(rng)
    sigma = np.empty((pairs, len(OVERLAPS)))
    redraw = np.ones(pairs, dtype=bool)
    while redraw.any():
        n = int(redraw.sum())
        sigma[np.ix_(redraw, index(["zm", "zu", "vm", "vu", "mu", "zv"]))] = np.abs(rng.normal(0.0, 0.4, (n, 6)))
        sigma[np.ix_(redraw, index(["mm", "uu", "vv", "zz"]))] = rng.uniform(0.5, 2.0, (n, 4))
        redraw = _smallest_eigenvalue(sigma) <= 0 if flag(gram, "gram") else np.zeros(pairs, dtype=bool)
    return sigma


def _draw(pool: Batch, nets: int, batch: int, rng: np.random.Generator) -> Batch:
    """``batch`` trials per network from a pool of ``(P, T)`` arrays: each ``(nets, batch, T)``."""
    picks = rng.integers(0, pool[0].shape[0], (nets, batch))
    return pool[0][picks], pool[1][picks], pool[2][picks]


def _stack(*batches: Batch) -> Batch:
    """Batches for groups of networks joined along the network axis."""
    return tuple(np.concatenate(parts) for parts in zip(*batches))  # type: ignore[return-value]


def _tasks(protocol: MemoryProtocol, rng: np.random.Generator) -> dict[str, Callable[[int], Batch]]:
    """The three tasks' trial generators, ``n -> (x, y, mask)`` each ``(n, T)``; C's teacher reads as the students."""
    dt = protocol.dt

    return {
        "A": lambda n: flip_flop(n, rng=rng, dt=dt, stim_range=(1.0, 2.0), input_amp=2.0, target_amp=1.0),
        "B": lambda n: decision_making(n, rng=rng, dt=dt),
        "C": lambda n: teacher(n, rng=rng, dt=dt, read=protocol.read),
    }


def _drawers(protocol: MemoryProtocol, rng: np.random.Generator) -> tuple[Callable[[], Batch], Callable[[], Batch]]:
    """Per step: the A/B batch (twins A on A, then twins B on B) and the C batch, each ``(2 pairs, batch, T)``."""
    tasks, pairs, batch = _tasks(protocol, rng), protocol.pairs, protocol.batch
    if protocol.pool is None:

        def fresh(task: str, nets: int) -> Batch:
            return tuple(a.reshape(nets, batch, -1) for a in tasks[task](nets * batch))  # type: ignore[return-value]

        return (lambda: _stack(fresh("A", pairs), fresh("B", pairs))), (lambda: fresh("C", 2 * pairs))
    pools = {name: task(protocol.pool) for name, task in tasks.items()}

    def draw_ab() -> Batch:
        return _stack(_draw(pools["A"], pairs, batch, rng), _draw(pools["B"], pairs, batch, rng))

    return draw_ab, (lambda: _draw(pools["C"], 2 * pairs, batch, rng))


def _capped(sigma: np.ndarray, new: np.ndarray, max_step: float | None) -> np.ndarray:
    """``new``, with each network's step ``new - sigma`` scaled down to at most ``max_step`` per overlap."""
    if max_step is None:
        return new
    step = new - sigma
    return sigma + step * np.minimum(max_step / np.abs(step).max(-1, keepdims=True), 1.0)


def _smallest_eigenvalue(sigma: np.ndarray) -> np.ndarray:
    """The smallest eigenvalue of each network's Gram matrix, shape (nets,)."""
    return np.linalg.eigvalsh(gram(sigma))[..., 0]


def _balance(sigma: np.ndarray) -> np.ndarray:
    r""":math:`\sigma_{uu} - \sigma_{vv}` per network, shape (nets,)."""
    return sigma[..., OVERLAPS.index("uu")] - sigma[..., OVERLAPS.index("vv")]


def _train(sigma, draw, epochs, eta, *, protocol, scale, drop_below, balance0, frozen, bar, phase):
    """``epochs`` steps of the overlap ODE for every network, ``draw()`` a batch per step.

    Each network's rate ``eta`` (nets,) is divided by 5 the first time its loss is below
    ``drop_below``; the gradient is ``scale`` times the masked MSE's. Returns the overlaps, the
    losses ``(epochs, nets)``, the lowest Gram eigenvalue, the largest balance drift and whether each network
    is frozen (its loss non-finite now or before, ``frozen``; only with ``protocol.diverged == "freeze"``).
    """
    after = protocol.read == "after"
    losses, dropped, frozen = [], np.zeros(len(eta), dtype=bool), frozen.copy()
    lowest, drift = _smallest_eigenvalue(sigma), np.zeros(len(eta))
    for epoch in range(epochs):
        loss, grad = _loss_gradient(sigma, draw(), protocol.dt, after)
        loss = scale * loss
        bad = ~np.isfinite(loss) | ~np.isfinite(grad).all(-1)
        if bad.any() and protocol.diverged == "raise":
            raise FloatingPointError(
                f"networks {np.flatnonzero(bad).tolist()} diverged (non-finite loss) at epoch {epoch} "
                f"of phase {phase}: lower the phase's eta, pass max_step, or diverged='freeze'"
            )
        frozen |= bad
        loss = np.where(frozen, np.inf, loss)  # a frozen network's loss stays non-finite
        newly = ~dropped & (loss < drop_below)
        eta, dropped = np.where(newly, eta / 5, eta), dropped | newly
        step = np.where(frozen[:, None], 0.0, scale * eta[:, None] * grad)  # eta_n dL_n/dsigma_n; frozen: none
        sigma = _capped(sigma, update_step(sigma, step, 1.0, protocol.update), protocol.max_step)
        lowest = np.minimum(lowest, _smallest_eigenvalue(sigma))
        drift = np.maximum(drift, np.abs(_balance(sigma) - balance0))
        losses.append(loss)
        bar.update(1)
    return sigma, np.array(losses), lowest, drift, frozen


def logistic_fit(X, y, *, C: float = 1.0, iterations: int = 30) -> np.ndarray:
    r"""An L2-regularised logistic regression by Newton's method: weights ``(d + 1,)``, the intercept last.

    Minimises :math:`C \sum_i \ell(y_i, w^\top x_i + b) + \tfrac12 \|w\|^2` (the intercept is not
    penalised), :math:`\ell` the log loss, as scikit-learn's ``LogisticRegression(C=C)``.

    Parameters
    ----------
    X : array, shape (n, d)
    y : array of 0/1, shape (n,)
    """
    X1 = np.column_stack([X, np.ones(len(X))])
    penalty = np.diag(np.r_[np.ones(X.shape[1]), 0.0]) / C
    w = np.zeros(X1.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-X1 @ w))
        hessian = X1.T @ (X1 * (p * (1 - p))[:, None]) + penalty + 1e-12 * np.eye(len(w))
        w = w - np.linalg.solve(hessian, X1.T @ (p - y) + penalty @ w)
    return w


def _split(pairs: int, held_out: int, grouped: bool, rng: np.random.Generator) -> np.ndarray:
    """Test membership of the ``2 pairs`` networks (twins A, then twins B), shape (2 pairs,).

    Grouped: ``held_out`` whole pairs. Stratified: ``held_out`` twins A and ``held_out`` twins B,
    drawn independently (a test network's twin may be in the training set).
    """
    if grouped:
        return np.tile(np.isin(np.arange(pairs), rng.choice(pairs, held_out, replace=False)), 2)
    return np.concatenate([np.isin(np.arange(pairs), rng.choice(pairs, held_out, replace=False)) for _ in "AB"])


def decode(
    features, *, grouped: bool = True, resamples: int = 50, held_out: int = 2, noise: float = 0.0, rng=None
) -> np.ndarray:
    r"""Cross-validated accuracy of telling twin A from twin B by their features.

    Each resample standardises the training set (after adding ``noise`` std Gaussian noise to it),
    fits :func:`logistic_fit` and scores the held-out networks: ``held_out`` whole pairs if
    ``grouped`` (the paper's split at the start, where twins are identical), else ``held_out``
    networks of each label (the paper's split after training).

    Parameters
    ----------
    features : array, shape (2, pairs, d)
        Axis 0 is the label (twin A = 0, twin B = 1).

    Returns
    -------
    np.ndarray, shape (resamples,)
        Test accuracies (chance 0.5).
    """
    features = real_array(features, "features", ndim=3)
    if features.shape[0] != 2:
        raise ValueError(f"features must have shape (2, pairs, d), got {features.shape}")
    pairs = features.shape[1]
    held_out = integer(held_out, "held_out", low=1, high=pairs - 1)
    noise = real(noise, "noise", low=0.0)
    rng = generator(rng)
    labels = np.repeat([0.0, 1.0], pairs)
    X = features.reshape(2 * pairs, -1)
    accuracies = []
    for _ in range(integer(resamples, "resamples", low=1)):
        test = _split(pairs, held_out, grouped, rng)
        train_X = X[~test] + noise * rng.standard_normal(X[~test].shape)
        mean, std = train_X.mean(0), train_X.std(0) + 1e-12
        w = logistic_fit((train_X - mean) / std, labels[~test])
        predicted = ((X[test] - mean) / std) @ w[:-1] + w[-1] > 0
        accuracies.append(np.mean(predicted == labels[test]))
    return np.array(accuracies)


def decode_times(sigma, *, split: str = "labels", resamples: int = 50, held_out: int = 2, noise: float = 0.0, rng=None):
    """The decoders of a run's overlaps ``sigma`` ``(3, 2, pairs, 10)`` at the three times, on both feature sets.

    Returns ``{(time, features): (resamples,) accuracies}`` as :attr:`MemoryExperiment.accuracy`;
    ``split`` (:data:`SPLITS`) holds out whole pairs at every time (``"pairs"``) or only at the start.
    """
    sigma = real_array(sigma, "sigma", ndim=4)
    choice(split, "split", SPLITS)
    rng = generator(rng)
    return {
        (time, kind): decode(
            sigma[k][..., index(names)],
            grouped=k == 0 or split == "pairs",
            resamples=resamples,
            held_out=held_out,
            noise=noise,
            rng=rng,
        )
        for k, time in enumerate(TIMES)
        for kind, names in (("visible", VISIBLE["erf"]), ("invisible", INVISIBLE["erf"]))
    }


def memory_experiment(
    pairs: int | None = None, *, protocol: MemoryProtocol | None = None, rng=None, progress: bool = True, **changes
) -> MemoryExperiment:
    r"""The twin experiment in overlap space: A vs B, then C, then decode the history.

    The settings are ``protocol`` (default :class:`MemoryProtocol`'s, the chapter's scale; the
    paper's is :meth:`MemoryProtocol.paper`) with ``pairs`` and any field given by name in
    ``changes``, e.g. ``memory_experiment(6, epochs_ab=400, max_step=0.02)``.

    Raises
    ------
    FloatingPointError
        If a network's loss becomes non-finite (its overlaps left the set of Gram matrices).
    TypeError
        For a keyword that is not a :class:`MemoryProtocol` field.

    Returns
    -------
    MemoryExperiment
    """
    from tqdm.auto import tqdm

    protocol = (MemoryProtocol() if protocol is None else protocol).replace(
        **changes, **({} if pairs is None else {"pairs": pairs})
    )
    rng = generator(rng)
    pairs = protocol.pairs
    draw_ab, draw_c = _drawers(protocol, rng)
    start = twin_start(pairs, rng, gram=protocol.gram_start)
    sigma = np.concatenate([start, start])  # (2 pairs, 10): twins A, then B
    T = round(20.0 / protocol.dt)
    phases = [
        ("A/B", draw_ab, protocol.epochs_ab, protocol.eta_ab, 1.0, protocol.drop_below),
        ("C", draw_c, protocol.epochs_c, protocol.eta_c, T * protocol.dt, -np.inf),
    ]
    balance0, frozen = _balance(sigma), np.zeros(2 * pairs, dtype=bool)
    snapshots, losses, lowest, drifts = [sigma], [], [_smallest_eigenvalue(sigma)], []
    total = protocol.epochs_ab + protocol.epochs_c
    with tqdm(total=total, disable=not progress, desc="twins: A/B, then C", unit="epoch") as bar:
        for phase, draw, epochs, eta, scale, drop in phases:
            sigma, loss, low, drift, frozen = _train(
                sigma,
                draw,
                epochs,
                np.full(2 * pairs, eta),
                protocol=protocol,
                scale=scale,
                drop_below=drop,
                balance0=balance0,
                frozen=frozen,
                bar=bar,
                phase=phase,
            )
            snapshots.append(sigma)
            losses.append(loss)
            lowest.append(low)
            drifts.append(drift)
    sigmas = np.stack([s.reshape(2, pairs, len(OVERLAPS)) for s in snapshots])  # (3, 2, pairs, 10)
    accuracy = decode_times(
        sigmas,
        split=protocol.split,
        resamples=protocol.resamples,
        held_out=protocol.held_out,
        noise=protocol.noise,
        rng=rng,
    )
    return MemoryExperiment(
        protocol=protocol,
        sigma=sigmas,
        loss=np.concatenate(losses).reshape(-1, 2, pairs),
        twin_difference=sigmas[:, 0] - sigmas[:, 1],
        smallest_eigenvalue=np.stack(lowest).reshape(3, 2, pairs),
        balance_drift=np.stack(drifts).reshape(2, 2, pairs),
        accuracy=accuracy,
    )
