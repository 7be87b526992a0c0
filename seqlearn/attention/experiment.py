r"""Chapter 7's experiments: the weights of a trained attention model, and the race at a budget too long for Binder.

* :func:`attention_map`: the weights :math:`a^{(j)}_{ts}` of every head of one layer on one sentence;
  :func:`subject_weight`: the weight the position that predicts the verb puts on the subject;
* :data:`LONG_RACE`, :func:`race_text`, :func:`race_factories`, :func:`run_race`: the Elman network,
  the GRU, the LSTM and the attention model trained on the same long-distance agreement text at
  one budget and scored per distance with :func:`seqlearn.rnn.agreement_race`;
* :func:`write_attention_models`, :func:`read_attention_models`: the trained attention models as
  state dicts (read with ``weights_only``, loaded strictly into :func:`race_factories`' architecture).

``python -m seqlearn.attention.experiment`` runs the race of :data:`LONG_RACE` on one CPU thread
and writes ``chapters/results/07_agreement_race.json`` (:func:`seqlearn.rnn.write_race`) and
``chapters/results/07_attention_models.pt``, which Chapter 7 reads.
"""

from __future__ import annotations

import argparse
import copy
import json
import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch

from .._files import replacing
from ..data import encode_sentences
from ..data.agreement import LongAgreement
from ..data.synthetic import AgreementExample, ToyEnglish
from ..data.vocab import Vocab
from ..gated.models import GatedLM
from ..lm import evaluating, model_device
from ..results import RESULTS_DIR
from ..rnn.model import RNNLM, RecurrentLM
from ..rnn.race import RaceResult, agreement_race, merge_races, read_race, write_race
from ..validation import integer
from .model import AttentionLM

__all__ = [
    "attention_map",
    "subject_weight",
    "LONG_RACE",
    "RACE_FILE",
    "MODELS_FILE",
    "race_text",
    "race_factories",
    "run_race",
    "write_attention_models",
    "read_attention_models",
]

LONG_RACE: dict = {
    "task": {"max_distance": 80, "short_fraction": 0.6, "attractor_rate": 0.5},
    "n_train": 12_000,
    "text_seed": 0,
    "distances": list(range(81)),
    "n_per_distance": 10,
    "examples_seed": 1,
    "models": {
        "attention": {"embedding_dim": 32, "n_layers": 2, "n_heads": 2, "hidden_size": 64},
        "GRU": {"embedding_dim": 32, "hidden_size": 48},
        "LSTM": {"embedding_dim": 32, "hidden_size": 40},
        "Elman RNN": {"embedding_dim": 32, "hidden_size": 64},
    },
    "seeds": [0, 1, 2],
    "lr": 1e-2,
    "epochs": 1,
    "batch_size": 4,
}
"""The shipped race: Chapter 7's text and models, 3,000 updates of 4 sentences (its live race: 375 of 32)."""

RACE_FILE = RESULTS_DIR / "07_agreement_race.json"
MODELS_FILE = RESULTS_DIR / "07_attention_models.pt"
_MODEL_CLASSES = {"Elman RNN": RNNLM, "GRU": GatedLM, "LSTM": GatedLM, "attention": AttentionLM}
_CELLS = {"GRU": "gru", "LSTM": "lstm"}
_MODULE = "seqlearn.attention.experiment"  # __name__ is "__main__" under python -m


def attention_map(model: AttentionLM, vocab: Vocab, tokens: Sequence[str], layer: int = -1) -> np.ndarray:
    r"""The weights :math:`a^{(j)}_{ts}` of every head of one layer of ``model`` on the sentence ``<s> tokens``.

    Returns
    -------
    numpy.ndarray, float64, shape ``(n_h, T, T)``
        ``[j, t]`` is where head :math:`j` looks from position :math:`t` (``<s>`` is position 0);
        it sums to 1 over :math:`s \le t`.
    """
    if not isinstance(model, AttentionLM):
        raise TypeError(f"model must be an AttentionLM, got {type(model).__name__}")
    if isinstance(tokens, str):
        raise TypeError("tokens must be a sequence of tokens, not a str")
    layer = integer(layer, "layer", low=-model.n_layers, high=model.n_layers - 1)
    ids = np.concatenate([[Vocab.bos_id], vocab.encode(list(tokens))])
    with evaluating(model):
        _, weights = model(torch.as_tensor(ids, device=model_device(model))[None])
    return weights[layer][0].double().cpu().numpy()


def subject_weight(
    model: AttentionLM, vocab: Vocab, examples: Sequence[AgreementExample], layer: int = -1
) -> np.ndarray:
    r"""The weight :math:`a^{(j)}_{t s^*}` each head puts on the subject from the position that predicts the verb.

    For an example with prefix :math:`w_1 \dots w_P` and distance :math:`d`, the query is position
    :math:`t = P` (the last word before the verb) and the subject's head noun is :math:`s^* = P - d`.
    All examples go through the model in one batch, right-padded to the longest: under the causal
    mask no position reads a later one, so the padding changes none of the weights read here
    (the same numbers as :func:`attention_map` sentence by sentence).

    Returns
    -------
    numpy.ndarray, float64, shape ``(N, n_h)``
    """
    if not isinstance(model, AttentionLM):
        raise TypeError(f"model must be an AttentionLM, got {type(model).__name__}")
    if isinstance(examples, AgreementExample):
        raise TypeError("examples must be a sequence of AgreementExample, not one")
    examples = list(examples)
    if not examples:
        raise ValueError("examples is empty")
    for ex in examples:
        if not isinstance(ex, AgreementExample):
            raise TypeError(f"examples holds a {type(ex).__name__}, not an AgreementExample")
    layer = integer(layer, "layer", low=-model.n_layers, high=model.n_layers - 1)
    P = np.array([len(ex.prefix) for ex in examples])  # (N,): each verb's query position
    ids = np.full((len(examples), P.max() + 1), Vocab.bos_id)  # (N, T), right-padded
    for i, ex in enumerate(examples):
        ids[i, : P[i] + 1] = np.concatenate([[Vocab.bos_id], vocab.encode(list(ex.prefix))])
    with evaluating(model):
        _, weights = model(torch.as_tensor(ids, device=model_device(model)))
    subject = P - np.array([ex.distance for ex in examples])  # (N,): s* = P - d
    return weights[layer][np.arange(len(examples)), :, P, subject].double().cpu().numpy()  # (N, n_h)


def race_text(config: Mapping = LONG_RACE) -> tuple[LongAgreement, Vocab, np.ndarray, list[AgreementExample]]:
    """``(task, vocab, train, examples)``: the agreement text, its encoded training stream and the scored items."""
    task = LongAgreement(**config["task"])
    vocab = Vocab(ToyEnglish.vocabulary())
    sentences = [
        [*ex.prefix, ex.correct, *ex.suffix] for ex in task.sample_examples(config["n_train"], rng=config["text_seed"])
    ]
    examples = task.agreement_examples(
        config["distances"], n_per_distance=config["n_per_distance"], seed=config["examples_seed"]
    )
    return task, vocab, encode_sentences(sentences, vocab), examples


def race_factories(vocab_size: int, config: Mapping = LONG_RACE) -> dict[str, Callable[[int], RecurrentLM]]:
    """``{name: factory(seed)}`` for the models of ``config["models"]`` (Elman RNN, GRU, LSTM, attention)."""
    unknown = set(config["models"]) - set(_MODEL_CLASSES)
    if unknown:
        raise ValueError(f"config names models {sorted(unknown)}; known: {sorted(_MODEL_CLASSES)}")

    def factory(name: str) -> Callable[[int], RecurrentLM]:
        sizes = dict(config["models"][name], **({"cell": _CELLS[name]} if name in _CELLS else {}))
        return lambda seed: _MODEL_CLASSES[name](vocab_size, seed=seed, **sizes)

    return {name: factory(name) for name in config["models"]}


def _merge(total: RaceResult, part: RaceResult) -> None:
    """Add ``part``'s one run (one model, one seed) to ``total``."""
    for name, runs in part.accuracy.items():
        total.accuracy.setdefault(name, []).extend(runs)
        total.final_loss.setdefault(name, []).extend(part.final_loss[name])
        total.seconds[name] = total.seconds.get(name, 0.0) + part.seconds[name]
        total.n_params[name] = part.n_params[name]
        total.models.setdefault(name, part.models[name])


def run_race(
    config: Mapping = LONG_RACE, *, progress: bool = True, after_each: Callable[[RaceResult], None] | None = None
) -> tuple[RaceResult, dict[int, AttentionLM]]:
    """Run ``config``'s race, model after model and seed after seed; return it and the attention model of each seed.

    Each run is :func:`seqlearn.rnn.agreement_race` of one model and one seed, so the numbers are
    those of one call with every model and seed. ``after_each(result)`` is called with the race so
    far after each model's last seed (to write it as it grows).
    """
    _, vocab, train, examples = race_text(config)
    budget = {key: config[key] for key in ("lr", "epochs", "batch_size")}
    total = RaceResult({}, [int(s) for s in config["seeds"]], {})
    attention: dict[int, AttentionLM] = {}
    for name, factory in race_factories(len(vocab), config).items():
        for seed in total.seeds:
            part = agreement_race({name: factory}, train, vocab, examples, seeds=[seed], progress=progress, **budget)
            _merge(total, part)
            if isinstance(model := part.models[name], AttentionLM):
                attention[seed] = model
        if after_each is not None:
            after_each(total)
    return total, attention


def write_attention_models(models: Mapping[int, AttentionLM], path, config: Mapping = LONG_RACE) -> Path:
    """Save ``{seed: model}``'s state dicts with ``config`` (plain tensors and values: :func:`torch.save`)."""
    if not models or not all(isinstance(m, AttentionLM) for m in models.values()):
        raise ValueError("models must be a non-empty {seed: AttentionLM}")
    document = {
        "config": json.loads(json.dumps(dict(config))),
        "state_dicts": {
            int(seed): {k: v.detach().cpu().clone() for k, v in m.state_dict().items()} for seed, m in models.items()
        },
    }
    with replacing(path) as tmp:
        torch.save(document, tmp)
    return Path(path)


def read_attention_models(path, config: Mapping = LONG_RACE) -> dict[int, AttentionLM]:
    """``{seed: AttentionLM}`` from :func:`write_attention_models`' file, loaded strictly into ``config``'s model.

    The file is read with ``weights_only=True`` (no code is loaded); a file made with another
    ``config`` is a ``ValueError``.
    """
    document = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(document, dict) or set(document) != {"config", "state_dicts"}:
        raise ValueError(f"{path}: not a file of attention models (write_attention_models writes config, state_dicts)")
    if document["config"] != json.loads(json.dumps(dict(config))):
        raise ValueError(f"{path} was made with another configuration: regenerate it with python -m {_MODULE}")
    vocab_size = len(Vocab(ToyEnglish.vocabulary()))
    models = {}
    for seed, state in document["state_dicts"].items():
        models[int(seed)] = model = AttentionLM(vocab_size, seed=int(seed), **config["models"]["attention"])
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as error:
            raise ValueError(
                f"{path}: seed {seed}'s weights do not fit the attention model of config ({error})"
            ) from None
        model.eval()
    return models


def main(argv: Sequence[str] | None = None) -> None:
    """Run :data:`LONG_RACE` on one thread and write :data:`RACE_FILE` and :data:`MODELS_FILE` under ``--root``.

    ``--models`` and ``--seeds`` run part of it into ``--race`` (and the attention models, if run,
    into ``--models-file``); ``--merge`` joins such parts into :data:`RACE_FILE`.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {_MODULE}", description=main.__doc__)
    parser.add_argument("--root", default=".", help="the course's root (default: the current directory)")
    parser.add_argument("--models", nargs="+", default=list(LONG_RACE["models"]), help="the models to run")
    parser.add_argument("--seeds", nargs="+", type=int, default=LONG_RACE["seeds"], help="the seeds to run")
    parser.add_argument("--race", help=f"where to write the race (default: {RACE_FILE} under --root)")
    parser.add_argument("--models-file", help=f"where to write the attention models (default: {MODELS_FILE})")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="join these parts of LONG_RACE into --race")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    command = shlex.join(["python", "-m", _MODULE, *(sys.argv[1:] if argv is None else argv)])
    race_path = Path(args.race) if args.race else Path(args.root) / RACE_FILE
    if args.merge:
        parts = [read_race(path) for path in args.merge]
        commands = "; ".join(part.provenance["command"] for part in parts)
        seconds = sum(part.provenance["seconds"] for part in parts)
        write_race(merge_races(*parts), race_path, command=commands, config=LONG_RACE, seconds=seconds)
        return
    config = copy.deepcopy(LONG_RACE)
    config["models"] = {name: LONG_RACE["models"][name] for name in args.models}
    config["seeds"] = list(args.seeds)
    start = time.perf_counter()

    def write(result: RaceResult) -> None:
        write_race(result, race_path, command=command, config=config, seconds=time.perf_counter() - start)

    result, attention = run_race(config, after_each=write)
    if attention:
        write_attention_models(attention, args.models_file or Path(args.root) / MODELS_FILE, LONG_RACE)
    for name in result.accuracy:
        distances, acc = result.accuracy_array(name)
        print(f"{name}: beyond 20 words {acc[:, distances >= 20].mean(1).round(3)}, {result.seconds[name]:.0f} s")


if __name__ == "__main__":
    main()
