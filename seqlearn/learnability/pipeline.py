r"""The diagnostics of a trained network, in the paper's order, and the whole Tier 2 experiment.

:func:`diagnose` takes a trained :class:`~seqlearn.learnability.task.GatedRegressor`, its
optimiser and a diagnostic set of the same task, and for every lag :math:`\ell` of a grid:

1. runs the cell with its gates (:func:`~seqlearn.learnability.models.run`);
2. computes :math:`\Gamma` by prefix sums, the base rates :math:`\Lambda` (Adam's Rayleigh rates,
   or the SGD rate) and :math:`\mu = \Lambda\Gamma`; accumulates the envelope
   :math:`\hat f(\ell)`, its gate-only part :math:`f_{gates}` (zero order, uniform rate) and the
   per-neuron mass :math:`\overline{|\mu^{(q)}|}`;
3. takes :math:`K` forward sensitivities and the matched statistic :math:`\psi`, per step and per
   sequence;
4. fits :math:`\hat\alpha(\ell), \hat\sigma(\ell)` by ECF on the per-sequence means, reads
   :math:`N_{req}(\ell)` off the SNR on a grid of :math:`N`, and :math:`H_N` for each :math:`N`.

Sequences go through in chunks, so memory stays bounded: the largest arrays are
``(chunk, n_lags, T, H)`` float64. :func:`learnability_experiment` trains and diagnoses several
architectures (in forked CPU processes where possible) and returns one :class:`Diagnostics` each.
:func:`train_networks` trains them without the diagnostics, :func:`write_networks` and
:func:`read_networks` keep the trained networks in a file (Chapter 5 ships its ten), and
``learnability_experiment(networks=...)`` diagnoses networks trained elsewhere, with the same results.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from ..device import resolve_device
from ..parallel import map_in_workers
from ..validation import choice, int_array, integer, real
from .effective_rates import adaptive_rates, base_rates, transport
from .ensemble import train_ensemble
from .fits import LineFit, envelope_fits, master_law_fit, unit_time_scales
from .masterlaw import MasterLawTest, master_law_test
from .matched import matched_statistic_and_terms, random_directions, sensitivities_along
from .models import ARCHITECTURES
from .stable import ecf_alpha
from .task import GatedRegressor, _adamw, achievable_r2, delayed_regression, r2_score
from .window import learnability_window, required_samples

__all__ = [
    "Diagnostics",
    "diagnose",
    "Tier2Config",
    "TrainedNetwork",
    "learnability_experiment",
    "train_networks",
    "write_networks",
    "read_networks",
]

MAX_INSTANTANEOUS = 100_000  # instantaneous samples per lag given to the ECF (the paper's subsample)
HEAVIEST_FIRST = ("gru", "lstm", "diag", "shared", "const")  # learnability_experiment's jobs by CPU cost


@dataclass
class Diagnostics:
    r"""Everything :func:`diagnose` measured on one trained network (NumPy arrays over the lag grid).

    Attributes
    ----------
    architecture : str
    lags : ``(n,)`` the lag grid
    f : ``(n,)`` the envelope :math:`\hat f(\ell) = \mathrm{mean}\, \lVert\mu_{t,\ell}\rVert_1`
    f_gates : ``(n,)`` its zero-order gate part at the uniform rate :math:`\eta`
    unit_mass : ``(n, H)`` :math:`\overline{|\mu^{(q)}_{t,\ell}|}` per neuron
    mean, alpha, sigma : ``(n,)`` sample mean and ECF :math:`(\hat\alpha, \hat\sigma)` of the
        per-sequence matched statistic :math:`\bar\psi_n(\ell)` (averaged over :math:`K` directions)
    alpha_instantaneous : ``(n,)`` ECF :math:`\hat\alpha` of the per-step statistic (first direction)
    unit_terms : ``(n_seq, n, H)`` float64, the per-neuron terms :math:`\varphi_{n,q}(\ell)` of the
        per-sequence statistic (:func:`~seqlearn.learnability.matched.matched_terms`, averaged over
        the :math:`K` directions): ``unit_terms.sum(-1)`` are the samples of ``mean``
    N_grid : ``(m,)``;  eps : the SNR threshold
    N_req : ``(n,)`` (``-1``: not reached on the grid);  H_N : ``(m,)`` the window at each grid ``N``
    r2, r2_max : the model's :math:`R^2` on the diagnostic set and the best achievable
    train_loss, val_loss : per-epoch losses;  seconds : training and diagnostics wall time
    """

    architecture: str
    lags: np.ndarray
    f: np.ndarray
    f_gates: np.ndarray
    unit_mass: np.ndarray
    mean: np.ndarray
    alpha: np.ndarray
    sigma: np.ndarray
    alpha_instantaneous: np.ndarray
    unit_terms: np.ndarray
    N_grid: np.ndarray
    eps: float
    N_req: np.ndarray
    H_N: np.ndarray
    r2: float
    r2_max: float
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def envelope_fits(self) -> dict[str, LineFit]:
        """:func:`~seqlearn.learnability.fits.envelope_fits` of ``f``: exponential and power-law lines."""
        return envelope_fits(self.lags, self.f)

    def time_scales(self) -> np.ndarray:
        """Per-neuron :math:`\\tau_q` from ``unit_mass`` (:func:`~seqlearn.learnability.fits.unit_time_scales`)."""
        return unit_time_scales(self.lags, self.unit_mass)

    def master_law(self) -> LineFit:
        r""":math:`\log N_{req}` on :math:`-\kappa_{\hat\alpha}\log\hat f` (:func:`.fits.master_law_fit`)."""
        return master_law_fit(self.f, self.alpha, self.N_req)

    def master_law_test(
        self, eps: float | None = None, seed: int = 0, folds=None, kappa: float = 2.0, n_null: int = 20
    ) -> MasterLawTest:
        r"""The cross-fitted master-law test of ``unit_terms`` against ``f``
        (:func:`~seqlearn.learnability.masterlaw.master_law_test`; ``eps`` defaults to this run's)."""
        eps = self.eps if eps is None else eps
        return master_law_test(self.unit_terms, self.f, eps, seed, folds, kappa, n_null)


def _rates(model: GatedRegressor, optimizer):
    """Adam's (H, H) per-weight rates, or the scalar SGD rate (1 without an optimiser)."""
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop)):
        return adaptive_rates(model.cell, optimizer), float(optimizer.param_groups[0]["lr"])
    lr = 1.0 if optimizer is None else float(optimizer.param_groups[0]["lr"])
    return lr, lr


class _Accumulator:
    """Running sums over chunks: envelope mass, gate mass, per-unit mass, matched statistics and their terms."""

    def __init__(self, n_lags: int, H: int):
        self.mass = np.zeros(n_lags)
        self.gate_mass = np.zeros(n_lags)
        self.unit = np.zeros((n_lags, H))
        self.count = np.zeros(n_lags)
        self.per_sequence: list[np.ndarray] = []  # each (chunk, n_lags)
        self.terms: list[np.ndarray] = []  # each (chunk, n_lags, H)
        self.instantaneous: list[list[np.ndarray]] = [[] for _ in range(n_lags)]

    def add_rates(self, mu: torch.Tensor, gates: torch.Tensor) -> None:
        """``mu`` and ``gates`` ``(B, n, T, H)`` on any device: reduced there, only the sums come back."""
        host = lambda t: t.cpu().numpy()  # noqa: E731
        self.count += host((~torch.isnan(mu[..., 0])).sum(dim=(0, 2)))  # valid windows per lag
        self.mass += host(torch.nansum(mu.abs().sum(-1), dim=(0, 2)))
        self.gate_mass += host(torch.nansum(gates.abs().sum(-1), dim=(0, 2)))
        self.unit += host(torch.nansum(mu.abs(), dim=(0, 2)))

    def add_psi(self, psi: torch.Tensor) -> None:
        """``psi`` ``(K, B, n, T)``: per-sequence means averaged over K; the first direction's steps."""
        self.per_sequence.append(torch.nanmean(psi, dim=-1).mean(dim=0).numpy())
        for i in range(psi.shape[2]):
            step = psi[0, :, i].reshape(-1)
            self.instantaneous[i].append(step[~torch.isnan(step)].numpy())

    def add_terms(self, terms: torch.Tensor) -> None:
        """``terms`` ``(K, B, n, H)``: the per-neuron per-sequence terms, averaged over K."""
        self.terms.append(terms.mean(dim=0).numpy())


def _chunk_rates(model: GatedRegressor, x: torch.Tensor, y: torch.Tensor, lags, lam, lr, acc: _Accumulator):
    """One chunk's trajectory, mu = Lambda Gamma and the output-projected error delta."""
    with torch.no_grad():
        traj = model.trajectory(x)
        residual = model.readout_of(traj) - y  # (B, T)
    gamma = transport(traj, lags)  # (B, n, T, H)
    mu = base_rates(traj, lags, lam) * gamma if isinstance(lam, torch.Tensor) else lr * gamma
    acc.add_rates(mu, lr * transport(traj, lags, order=0))
    w_out = model.readout.weight.detach().to(torch.float64)[0]  # (H,)
    delta = residual.to(torch.float64)[..., None] * w_out  # (B, T, H)
    return mu, delta


def _lag_statistics(per_sequence: np.ndarray, instantaneous: list[np.ndarray], rng) -> tuple[np.ndarray, ...]:
    """Per lag: mean, ECF alpha and sigma of the per-sequence samples; ECF alpha of the per-step ones."""
    n = per_sequence.shape[1]
    mean, alpha, sigma, alpha_inst = (np.empty(n) for _ in range(4))
    for i in range(n):
        fit = ecf_alpha(per_sequence[:, i])
        mean[i], alpha[i], sigma[i] = per_sequence[:, i].mean(), fit.alpha, fit.sigma
        steps = instantaneous[i]
        if steps.size > MAX_INSTANTANEOUS:
            steps = rng.choice(steps, MAX_INSTANTANEOUS, replace=False)
        alpha_inst[i] = ecf_alpha(steps).alpha
    return mean, alpha, sigma, alpha_inst


def diagnose(
    model: GatedRegressor,
    optimizer,
    task,
    lags,
    K: int = 4,
    N_grid=None,
    eps: float = 20.0,
    seed: int = 0,
    chunk: int = 128,
    progress: bool = True,
) -> Diagnostics:
    r"""Envelope, matched statistic, :math:`\hat\alpha`, :math:`N_{req}` and :math:`H_N` of a trained model.

    Parameters
    ----------
    model : GatedRegressor
    optimizer : the optimiser that trained it (Adam/AdamW/RMSProp: :math:`\Lambda` from its state;
        SGD: its learning rate; ``None``: :math:`\Lambda = 1`).
    task : DelayedRegression, the diagnostic sequences (the same :math:`u` as training).
    lags : lag grid, each in :math:`[1, T - 1]`.
    K : number of random parameter directions of the matched statistic.
    N_grid : sample sizes for :math:`N_{req}`; default geometric from 10 to twice the number of
        diagnostic sequences (beyond that the SNR formula extrapolates noise into signal).
    eps : SNR threshold :math:`\varepsilon` (the paper's 20).
    seed : seeds the directions and the instantaneous subsample.
    chunk : sequences per pass.
    """
    from tqdm.auto import tqdm

    if not isinstance(model, GatedRegressor):
        raise TypeError(f"model must be a GatedRegressor, got {type(model).__name__}")
    n_seq, T = task.y.shape
    lags = int_array(lags, "lags", ndim=1, low=1, high=T - 1)
    if N_grid is None:
        N_grid = np.unique(np.geomspace(10, 2 * n_seq, 24).round().astype(np.int64))
    N_grid = int_array(N_grid, "N_grid", ndim=1, low=1)
    eps, chunk = real(eps, "eps", low=0.0, low_open=True), integer(chunk, "chunk", low=1)
    start = time.perf_counter()
    param = next(model.parameters())
    to_model = {"device": param.device, "dtype": param.dtype}
    lam, lr = _rates(model, optimizer)
    directions = random_directions(model, K, seed)
    acc = _Accumulator(len(lags), model.cell.hidden_size)
    for i in tqdm(range(0, n_seq, chunk), disable=not progress, desc=f"diagnostics {model.architecture}"):
        x, y = task.x[i : i + chunk].to(**to_model), task.y[i : i + chunk].to(**to_model)
        mu, delta = _chunk_rates(model, x, y, lags, lam, lr, acc)
        v = sensitivities_along(model, x, directions).detach()  # (K, B, T + 1, H)
        psi, terms = zip(*(matched_statistic_and_terms(mu, delta, v_k, lags) for v_k in v))
        acc.add_psi(torch.stack(psi).cpu())
        acc.add_terms(torch.stack(terms).cpu())
    per_sequence = np.concatenate(acc.per_sequence)  # (n_seq, n)
    instantaneous = [np.concatenate(parts) for parts in acc.instantaneous]
    mean, alpha, sigma, alpha_inst = _lag_statistics(per_sequence, instantaneous, np.random.default_rng(seed))
    N_req = required_samples(mean, np.maximum(alpha, 1.01), sigma, N_grid, eps)
    with torch.no_grad():
        r2 = r2_score(model(task.x.to(**to_model)).cpu(), task.y.to(param.dtype))
    return Diagnostics(
        architecture=model.architecture,
        lags=lags,
        f=acc.mass / acc.count,
        f_gates=acc.gate_mass / acc.count,
        unit_mass=acc.unit / acc.count[:, None],
        mean=mean,
        alpha=alpha,
        sigma=sigma,
        alpha_instantaneous=alpha_inst,
        unit_terms=np.concatenate(acc.terms),
        N_grid=N_grid,
        eps=eps,
        N_req=N_req,
        H_N=learnability_window(lags, N_req, N_grid),
        r2=r2,
        r2_max=achievable_r2(task),
        seconds={"diagnostics": time.perf_counter() - start},
    )


@dataclass(frozen=True)
class Tier2Config:
    r"""One Tier 2 run: the task, the networks, training and diagnostics (defaults: the chapter's CPU scale).

    ``config_a()`` gives this pipeline at the sizes of the paper's first full configuration
    (T = 1024, H = 128, a GPU's work), not that configuration's protocol.
    """

    T: int = 64
    D: int = 8
    H: int = 32
    task_lags: tuple[int, ...] = (4, 8, 16, 32)
    coeffs: tuple[float, ...] = (0.6, 0.5, 0.4, 0.3)
    noise_std: float = 0.4
    n_train: int = 1024
    n_val: int = 256
    n_diag: int = 1024
    s0: float = 0.05
    layernorm: bool = True
    epochs: int = 50
    batch_size: int = 128
    lr: float = 5e-3
    weight_decay: float = 1e-4
    clip: float = 1.0
    lags: tuple[int, ...] = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48)
    K: int = 4
    eps: float = 20.0
    chunk: int = 128

    DIAGNOSTIC_FIELDS: ClassVar[tuple[str, ...]] = ("n_diag", "lags", "K", "eps", "chunk")
    """The fields that only the diagnostics read: networks trained under one value serve every other."""

    def training_differences(self, other: Tier2Config) -> list[str]:
        """``field: ours vs theirs`` for each field outside :attr:`DIAGNOSTIC_FIELDS` where ``other`` differs."""
        if not isinstance(other, Tier2Config):
            raise TypeError(f"other must be a Tier2Config, got {type(other).__name__}")
        return [
            f"{f.name}: {getattr(self, f.name)!r} vs {getattr(other, f.name)!r}"
            for f in dataclasses.fields(self)
            if f.name not in self.DIAGNOSTIC_FIELDS and getattr(self, f.name) != getattr(other, f.name)
        ]

    @classmethod
    def from_dict(cls, values: dict) -> Tier2Config:
        """The configuration that ``dataclasses.asdict`` gave ``values`` (lists back to tuples), all fields named."""
        if not isinstance(values, dict):
            raise TypeError(f"config must be a dict, got {type(values).__name__}")
        fields = {f.name for f in dataclasses.fields(cls)}
        if set(values) != fields:
            raise ValueError(f"config must have exactly the fields {sorted(fields)}, got {sorted(values)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})  # type: ignore[arg-type]

    @classmethod
    def config_a(cls) -> Tier2Config:
        r"""This pipeline at the sizes of the paper's configuration A: T 1024, H 128, 750 epochs, 128 lags in [4, 256].

        The task, the networks' sizes, the optimiser, the epochs and the lag grid are configuration A's;
        the protocol is this pipeline's, which differs from A's in: :math:`\varepsilon = 20` (A: 0.1);
        samples of per-sequence means, :math:`N` counting sequences (A: per-step samples pooled over
        :math:`t`, :math:`N` counting steps, each lag's :math:`\psi` sign-flipped by its mean);
        :math:`\mu = \Lambda\Gamma` with Adam's Rayleigh rates (A: :math:`\Gamma` alone); the best
        validation epoch restored, one fixed validation set (A: the last epoch, a fresh validation sample
        each epoch); :math:`N` grid 24 points from 10 to 16,000 (A: 17 from 25 to 12,800); the envelope
        summed over neurons (A: averaged); :math:`W_x` not orthogonal and no LayerNorm in the GRU and
        LSTM (A: both); seed 0 (A: 212, 1001, 2002, 3003, 4004). :func:`diagnose` keeps the first
        direction's per-step :math:`\psi` of every lag for the ECF, about 7 GB of host memory at these
        sizes, besides ``chunk``-sized ``(16, 128, 1024, 128)`` float64 arrays of 2.1 GB each.
        """
        return cls(
            T=1024,
            D=16,
            H=128,
            task_lags=(32, 64, 128, 192, 256),
            coeffs=(0.6, 0.5, 0.4, 0.32, 0.26),
            noise_std=0.3,
            n_train=8000,
            n_val=1024,
            n_diag=8000,
            epochs=750,
            batch_size=512,
            lr=1e-3,
            lags=tuple(int(v) for v in np.unique(np.linspace(4, 256, 128).round())),
            K=1,
            chunk=16,  # (16, 128 lags, 1024, 128) float64 arrays: 2.1 GB each
        )


@dataclass
class TrainedNetwork:
    """One trained network as :func:`diagnose` needs it: its best-validation weights, its AdamW state, its history.

    ``model`` and ``optimizer`` are ``state_dict()`` s (CPU tensors) of a
    :class:`~seqlearn.learnability.task.GatedRegressor` and of the AdamW that trained it;
    ``seconds`` is this seed's share of its ensemble's training time.
    """

    model: dict
    optimizer: dict
    train_loss: list[float]
    val_loss: list[float]
    seconds: float


def _task(c: Tier2Config, n: int, seed: int, u=None):
    """``n`` sequences of the configuration's delayed regression (direction ``u``, or the seed's own)."""
    return delayed_regression(n, c.T, c.D, c.task_lags, c.coeffs, c.noise_std, seed=seed, u=u)


def _network(c: Tier2Config, architecture: str, seed: int, device) -> GatedRegressor:
    """The configuration's untrained regressor of ``architecture``, initialised from ``seed``."""
    return GatedRegressor(architecture, c.D, c.H, s0=c.s0, layernorm=c.layernorm, seed=seed, device=device)


def _train_job(
    config: Tier2Config, architecture: str, seeds: list[int], device, progress: bool
) -> list[TrainedNetwork]:
    """One architecture, all its seeds: each seed's data, one batched training (:func:`.ensemble.train_ensemble`)."""
    c = config
    trains = [_task(c, c.n_train, s) for s in seeds]
    vals = [_task(c, c.n_val, s + 10_000, train.u) for s, train in zip(seeds, trains)]
    models = [_network(c, architecture, s, device) for s in seeds]
    fitted = train_ensemble(
        models, trains, vals, seeds, c.epochs, c.batch_size, c.lr, c.weight_decay, c.clip, device, progress
    )
    to_cpu = lambda state: {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in state.items()}  # noqa: E731
    return [
        TrainedNetwork(
            to_cpu(model.state_dict()),
            {**(sd := optimizer.state_dict()), "state": {i: to_cpu(st) for i, st in sd["state"].items()}},
            list(history.train_loss),
            list(history.val_loss),
            history.seconds / len(seeds),
        )
        for model, (history, optimizer) in zip(models, fitted)
    ]


def _diagnose_job(
    config: Tier2Config, architecture: str, seeds: list[int], networks: list[TrainedNetwork], device, progress: bool
) -> list[Diagnostics]:
    """Each seed's trained network restored and diagnosed on its own diagnostic sequences."""
    c = config
    results = []
    for s, net in zip(seeds, networks):
        model = _network(c, architecture, s, device)
        model.load_state_dict(net.model)
        optimizer = _adamw(model.parameters(), c.lr, c.weight_decay)
        optimizer.load_state_dict(net.optimizer)
        diag = _task(c, c.n_diag, s + 20_000, _task(c, c.n_train, s).u)
        result = diagnose(model, optimizer, diag, c.lags, c.K, eps=c.eps, seed=s, chunk=c.chunk, progress=progress)
        result.train_loss, result.val_loss = list(net.train_loss), list(net.val_loss)
        result.seconds["training"] = net.seconds
        results.append(result)
    return results


def _train_and_diagnose(
    config: Tier2Config, architecture: str, seeds: list[int], device, progress: bool
) -> list[Diagnostics]:
    """One architecture, all its seeds: trained as one ensemble, then each seed diagnosed."""
    networks = _train_job(config, architecture, seeds, device, progress)
    return _diagnose_job(config, architecture, seeds, networks, device, progress)


def _checked_runs(config, architectures, seeds, workers) -> tuple[Tier2Config, list[str], list[int], int]:
    """The experiment's arguments, checked: a Tier2Config, known architectures, distinct seeds, workers >= 1."""
    config = config or Tier2Config()
    if not isinstance(config, Tier2Config):
        raise TypeError(f"config must be a Tier2Config, got {type(config).__name__}")
    architectures = list(dict.fromkeys(choice(a, "architecture", ARCHITECTURES) for a in architectures))
    seeds = [int(s) for s in int_array(seeds, "seeds", ndim=1, low=0)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}")
    return config, architectures, seeds, integer(workers, "workers", low=1)


def _map_jobs(architectures, seeds, workers: int, job, device, progress: bool) -> dict:
    """``{(architecture, seed): result}`` of ``job(architecture, its_seeds, progress)``, in workers, heaviest first.

    One job per architecture; when the architectures do not divide evenly among the workers, the
    cheapest one's seeds are jobs of their own, which fill the last round.
    """
    from tqdm.auto import tqdm

    jobs = [(a, seeds) for a in sorted(architectures, key=HEAVIEST_FIRST.index)]
    if workers > 1 and len(seeds) > 1 and len(jobs) % workers:
        cheapest, _ = jobs.pop()
        jobs += [(cheapest, [s]) for s in seeds]
    inner = progress and workers == 1
    sizes = iter([len(job_seeds) for _, job_seeds in jobs])  # map_in_workers reports the jobs in order
    with tqdm(total=len(architectures) * len(seeds), disable=not progress, desc="runs") as bar:
        results = map_in_workers(
            lambda a, job_seeds: job(a, job_seeds, inner), jobs, workers, lambda: bar.update(next(sizes)), device
        )
    found = {(a, s): d for (a, job_seeds), done in zip(jobs, results) for s, d in zip(job_seeds, done)}
    return {(a, s): found[a, s] for s in seeds for a in architectures}


def train_networks(
    architectures=ARCHITECTURES,
    seeds=(0,),
    config: Tier2Config | None = None,
    workers: int = 1,
    device=None,
    progress: bool = True,
) -> dict[tuple[str, int], TrainedNetwork]:
    r"""Train each architecture for each seed, as :func:`learnability_experiment` does, without the diagnostics.

    Returns ``{(architecture, seed): TrainedNetwork}``, which :func:`learnability_experiment`
    (``networks=``) diagnoses exactly as if it had trained them itself, and :func:`write_networks`
    keeps in a file.
    """
    config, architectures, seeds, workers = _checked_runs(config, architectures, seeds, workers)
    device = resolve_device(device)
    job = lambda a, job_seeds, inner: _train_job(config, a, job_seeds, device, inner)  # noqa: E731
    return _map_jobs(architectures, seeds, workers, job, device, progress)


def write_networks(path, networks: dict[tuple[str, int], TrainedNetwork], config: Tier2Config, metadata=None) -> Path:
    """Write :func:`train_networks`' result and its configuration to ``path`` (:func:`torch.save`); returns the path."""
    if not isinstance(config, Tier2Config):
        raise TypeError(f"config must be a Tier2Config, got {type(config).__name__}")
    if not networks or not all(isinstance(n, TrainedNetwork) for n in networks.values()):
        raise ValueError("networks must be a non-empty {(architecture, seed): TrainedNetwork} from train_networks")
    document = {
        "config": asdict(config),
        "metadata": json.loads(json.dumps(dict(metadata or {}), default=str)),  # plain values: read with weights_only
        "networks": [{"architecture": a, "seed": int(s), **asdict(net)} for (a, s), net in networks.items()],
    }
    path = Path(path)
    torch.save(document, path)
    return path


def read_networks(
    path, config: Tier2Config | None = None
) -> tuple[Tier2Config, dict[tuple[str, int], TrainedNetwork], dict]:
    """``(config, networks, metadata)`` from a file :func:`write_networks` wrote (tensors only: no code is loaded).

    Given ``config``, the networks must have been trained as it trains them: a field outside
    :attr:`Tier2Config.DIAGNOSTIC_FIELDS` that differs is a ``ValueError`` naming it (diagnose such a
    configuration on networks :func:`train_networks` trains with it).
    """
    document = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(document, dict) or set(document) != {"config", "metadata", "networks"}:
        raise ValueError(f"{path}: not a file of trained networks (write_networks writes config, metadata, networks)")
    trained = Tier2Config.from_dict(document["config"])
    if config is not None and (differences := config.training_differences(trained)):
        raise ValueError(
            f"{path}: its networks were trained otherwise than config trains them ({'; '.join(differences)}, "
            "config vs file): train them with train_networks(..., config=config)"
        )
    config = trained
    networks = {
        (n["architecture"], int(n["seed"])): TrainedNetwork(
            n["model"], n["optimizer"], list(n["train_loss"]), list(n["val_loss"]), float(n["seconds"])
        )
        for n in document["networks"]
    }
    return config, networks, document["metadata"]


def learnability_experiment(
    architectures=ARCHITECTURES,
    seeds=(0,),
    config: Tier2Config | None = None,
    workers: int = 1,
    device=None,
    progress: bool = True,
    networks: dict[tuple[str, int], TrainedNetwork] | None = None,
) -> dict[tuple[str, int], Diagnostics]:
    r"""Train and diagnose each architecture for each seed: ``{(architecture, seed): Diagnostics}``.

    One job per architecture: its seeds trained as one ensemble
    (:func:`~seqlearn.learnability.ensemble.train_ensemble`: every seed exactly as
    :func:`~seqlearn.learnability.task.train_regressor` trains it alone, at a fraction of the
    cost), then each seed diagnosed. ``workers > 1`` runs that many jobs at a time in forked CPU
    processes, one thread each, the heaviest first (where the platform can fork and the device is
    the CPU; elsewhere one after the other): the same results, each job seeded on its own. When the
    architectures do not divide evenly among the workers, the cheapest one's seeds are jobs of
    their own, which fill the last round. A result's ``seconds["training"]`` is its seed's share
    of its ensemble's training time. With ``networks`` (from :func:`train_networks` or
    :func:`read_networks`, trained with this ``config``) nothing is trained: those networks are
    diagnosed, with the same results as if they had been trained here.
    """
    config, architectures, seeds, workers = _checked_runs(config, architectures, seeds, workers)
    device = resolve_device(device)
    if networks is None:
        job = lambda a, job_seeds, inner: _train_and_diagnose(config, a, job_seeds, device, inner)  # noqa: E731
    else:
        missing = [(a, s) for a in architectures for s in seeds if (a, s) not in networks]
        if missing:
            raise ValueError(f"networks has no trained network for {missing}")
        job = lambda a, job_seeds, inner: _diagnose_job(  # noqa: E731
            config, a, job_seeds, [networks[a, s] for s in job_seeds], device, inner
        )
    return _map_jobs(architectures, seeds, workers, job, device, progress)
