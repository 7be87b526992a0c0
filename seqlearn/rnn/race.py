r"""Recurrent and attention language models at one budget, scored on long-distance agreement.

* :func:`batched_agreement_scorer`: the ``score_fn`` of :func:`seqlearn.data.agreement_accuracy`
  for a whole evaluation set, computed in one pass of the model's ``token_logprobs`` over all
  ``<s> prefix candidate`` sentences instead of one call per example (the same numbers as
  :func:`seqlearn.lm.agreement_scorer`, many times faster);
* :func:`agreement_race`: train each model of a set of factories on the same text with
  :func:`seqlearn.rnn.train_rnn_lm` (the same number of updates for each), for several seeds, and
  score agreement per distance. Chapters 3, 4 and 7 run it on :class:`seqlearn.data.agreement.LongAgreement`;
* :func:`write_race` and :func:`read_race`: a race too long for Binder, shipped as
  ``chapters/results/<name>.json`` (its accuracies, configuration, and the command, machine and time
  that made it, as :mod:`seqlearn.results` writes them) and read back as a :class:`RaceResult` without models;
  :func:`merge_races` joins races run on parts of the models or seeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.synthetic import AgreementExample, agreement_accuracy
from ..data.vocab import Vocab
from ..results import read_results, write_results
from ..validation import integer
from .model import RecurrentLM
from .train import train_rnn_lm

__all__ = [
    "batched_agreement_scorer",
    "RaceResult",
    "agreement_race",
    "RACE_RESULTS",
    "write_race",
    "read_race",
    "merge_races",
]

RACE_RESULTS = "agreement_race"
"""The experiment name of a shipped race (:func:`seqlearn.results.read_results`)."""


def _check_examples(examples) -> list[AgreementExample]:
    examples = list(examples)
    if not examples:
        raise ValueError("examples is empty")
    for i, ex in enumerate(examples):
        if not isinstance(ex, AgreementExample):
            raise TypeError(f"examples[{i}] is a {type(ex).__name__}, not an AgreementExample")
    return examples


def batched_agreement_scorer(
    model, vocab: Vocab, examples: Sequence[AgreementExample]
) -> Callable[[Sequence[str], Sequence[str]], Sequence[float]]:
    r"""A ``score_fn(prefix, candidates)`` that looks up :math:`\log P(c \mid \langle s\rangle\,\mathrm{prefix})`.

    The log-probabilities of ``correct`` and ``wrong`` after every example's prefix are computed
    at once: the stream of the :math:`2N` sentences ``<s> prefix c`` goes through the model's
    ``token_logprobs`` once, and each sentence's last entry is its candidate's. The returned
    function answers for those examples only (a ``KeyError`` for any other prefix), in the shape
    :func:`seqlearn.data.agreement_accuracy` expects.

    Parameters
    ----------
    model : language model
        Anything with ``token_logprobs(stream)`` that conditions each token on its own sentence.
    vocab : Vocab
        The model's vocabulary.
    examples : sequence of AgreementExample

    Returns
    -------
    callable
        ``score_fn(prefix, [correct, wrong])``: the two log-probabilities, as a list.
    """
    if not callable(getattr(model, "token_logprobs", None)):
        raise TypeError(f"model must be a language model with token_logprobs(stream), got {type(model).__name__}")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.Vocab, got {type(vocab).__name__}")
    examples = _check_examples(examples)
    keys = [(tuple(ex.prefix), ex.correct, ex.wrong) for ex in examples]
    sentences = [
        np.concatenate([[Vocab.bos_id], vocab.encode(list(prefix)), vocab.encode([c])])
        for prefix, *candidates in keys
        for c in candidates
    ]
    logp = np.asarray(model.token_logprobs(np.concatenate(sentences)))  # (sum of (P_i + 1),)
    last = np.cumsum([len(s) - 1 for s in sentences]) - 1  # each sentence's candidate
    table = dict(zip(keys, logp[last].reshape(len(keys), 2), strict=True))

    def score_fn(prefix: Sequence[str], candidates: Sequence[str]) -> list[float]:
        correct, wrong = candidates
        return table[(tuple(prefix), correct, wrong)].tolist()

    return score_fn


@dataclass
class RaceResult:
    """What :func:`agreement_race` measured.

    Attributes
    ----------
    accuracy : dict
        ``accuracy[name][i]`` is ``{distance: accuracy}`` of model ``name`` trained with ``seeds[i]``.
    seeds : list of int
    n_params : dict
        Trainable parameters of each model.
    final_loss : dict
        ``final_loss[name][i]``: the training loss (nats per token) of the last epoch.
    seconds : dict
        ``seconds[name]``: wall time of training and scoring, all seeds together.
    models : dict
        ``models[name]``: the model trained with the first seed (empty when read from a file).
    config : dict
        What the race was run with, when it was read from a file (:func:`read_race`).
    provenance : dict
        The command, machine, time and date that made a shipped race (:func:`read_race`).
    """

    accuracy: dict[str, list[dict[int, float]]]
    seeds: list[int]
    n_params: dict[str, int]
    final_loss: dict[str, list[float]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    models: dict[str, RecurrentLM] = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def accuracy_array(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(distances (K,), accuracies (n_seeds, K))`` of model ``name``."""
        runs = self.accuracy[name]
        distances = np.array(sorted(runs[0]))
        return distances, np.array([[run[d] for d in distances] for run in runs])


def agreement_race(
    factories: Mapping[str, Callable[[int], RecurrentLM]],
    train_stream,
    vocab: Vocab,
    examples: Sequence[AgreementExample],
    seeds: Sequence[int] = (0,),
    *,
    lr: float = 1e-2,
    epochs: int = 1,
    batch_size: int = 32,
    clip_grad_norm: float | None = 1.0,
    device="cpu",
    progress: bool = True,
) -> RaceResult:
    r"""Train every model on the same text at the same budget, for each seed; score agreement per distance.

    ``factories[name](seed)`` builds a fresh language model (an :class:`~seqlearn.rnn.model.RNNLM`,
    a :class:`~seqlearn.gated.models.GatedLM`, an :class:`~seqlearn.attention.model.AttentionLM`);
    :func:`seqlearn.rnn.train_rnn_lm` trains it with Adam (learning rate ``lr``, gradient norm
    clipped at ``clip_grad_norm``) for ``epochs`` passes of ``batch_size`` sentences, the batch
    order seeded by the same seed, so every model makes the same number of updates on the same
    batches. Each is then scored with :func:`seqlearn.data.agreement_accuracy` through
    :func:`batched_agreement_scorer`.

    Returns
    -------
    RaceResult
    """
    from tqdm.auto import tqdm

    if not factories:
        raise ValueError("factories is empty: give at least one model")
    seeds = [integer(s, "each seed", low=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    examples = _check_examples(examples)
    result = RaceResult({}, seeds, {})
    runs = [(name, seed) for name in factories for seed in seeds]
    for name, seed in tqdm(runs, desc="training", disable=not progress):
        start = time.perf_counter()
        model = factories[name](seed)
        history = train_rnn_lm(
            model, train_stream, lr=lr, epochs=epochs, batch_size=batch_size,
            clip_grad_norm=clip_grad_norm, device=device, seed=seed, progress=False,
        )  # fmt: skip
        scorer = batched_agreement_scorer(model, vocab, examples)
        result.accuracy.setdefault(name, []).append(agreement_accuracy(scorer, examples))
        result.final_loss.setdefault(name, []).append(history.train_loss[-1])
        result.seconds[name] = result.seconds.get(name, 0.0) + time.perf_counter() - start
        result.n_params[name] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        result.models.setdefault(name, model)
    return result


def write_race(result: RaceResult, path, *, command: str, config=None, seconds: float | None = None):
    """Write ``result``'s numbers (not its models) to ``path`` as a shipped result; return the path.

    The document (:func:`seqlearn.results.write_results`, experiment :data:`RACE_RESULTS`) holds
    the seeds, the distances, ``accuracy[name]`` as a list per seed of accuracies per distance,
    the parameters, final losses and seconds of each model, ``config`` (what the race was run
    with, so a reader can check it) and the provenance: ``command``, the machine and ``seconds``
    (by default the sum of the models' times).
    """
    if not isinstance(result, RaceResult):
        raise TypeError(f"result must be a RaceResult, got {type(result).__name__}")
    if not result.accuracy:
        raise ValueError("result has no model: nothing to write")
    distances = sorted(next(iter(result.accuracy.values()))[0])
    numbers = {
        "seeds": list(result.seeds),
        "distances": distances,
        "accuracy": {name: result.accuracy_array(name)[1].tolist() for name in result.accuracy},
        "n_params": dict(result.n_params),
        "final_loss": {name: [float(x) for x in losses] for name, losses in result.final_loss.items()},
        "seconds": {name: round(float(s), 1) for name, s in result.seconds.items()},
    }
    total = sum(result.seconds.values()) if seconds is None else seconds
    return write_results(path, RACE_RESULTS, dict(config or {}), numbers, command=command, seconds=total)


def read_race(path, config=None) -> RaceResult:
    """The :class:`RaceResult` that :func:`write_race` wrote to ``path``, without models.

    Given ``config``, the file must have been made with it (a ``ValueError`` names the keys that
    differ); ``result.config`` and ``result.provenance`` say how it was made.
    """
    shipped = read_results(path, RACE_RESULTS, config)
    numbers = shipped.results
    distances = [int(d) for d in numbers["distances"]]
    accuracy = {
        name: [dict(zip(distances, map(float, run), strict=True)) for run in runs]
        for name, runs in numbers["accuracy"].items()
    }
    return RaceResult(
        accuracy,
        [int(s) for s in numbers["seeds"]],
        {name: int(n) for name, n in numbers["n_params"].items()},
        final_loss={name: list(losses) for name, losses in numbers["final_loss"].items()},
        seconds={name: float(s) for name, s in numbers["seconds"].items()},
        config=shipped.config,
        provenance=shipped.provenance,
    )


def merge_races(*results: RaceResult) -> RaceResult:
    """One race from races of the same models run on parts of the seeds (or parts of the models), without models.

    Each ``(model, seed)`` run must come from exactly one of ``results``, and every model must
    have run with every seed of the union; ``seconds`` add up. The runs of one model and seed
    do not depend on the others (:func:`agreement_race`), so the merged race equals one run of all.
    """
    runs: dict[tuple[str, int], tuple[dict[int, float], float]] = {}
    merged = RaceResult({}, [], {})
    for part in results:
        if not isinstance(part, RaceResult):
            raise TypeError(f"each result must be a RaceResult, got {type(part).__name__}")
        for name, accuracies in part.accuracy.items():
            for seed, accuracy, loss in zip(part.seeds, accuracies, part.final_loss[name], strict=True):
                if (name, seed) in runs:
                    raise ValueError(f"{name} with seed {seed} is in more than one result")
                runs[name, seed] = accuracy, loss
            merged.n_params[name] = part.n_params[name]
            merged.seconds[name] = merged.seconds.get(name, 0.0) + part.seconds[name]
    if not runs:
        raise ValueError("no runs to merge")
    merged.seeds = sorted({seed for _, seed in runs})
    for name in merged.n_params:
        missing = [seed for seed in merged.seeds if (name, seed) not in runs]
        if missing:
            raise ValueError(f"{name} has no run with seeds {missing}")
        merged.accuracy[name] = [runs[name, seed][0] for seed in merged.seeds]
        merged.final_loss[name] = [runs[name, seed][1] for seed in merged.seeds]
    return merged
