"""seqlearn.rnn.race: the one-pass scorer equals the course's per-example scorer, and the race
trains every model at the same budget."""

import numpy as np
import pytest

from seqlearn.attention.model import AttentionLM
from seqlearn.data import Vocab, encode_sentences
from seqlearn.data.agreement import LongAgreement
from seqlearn.data.synthetic import ToyEnglish, agreement_accuracy
from seqlearn.gated import GatedLM
from seqlearn.lm import agreement_scorer
from seqlearn.rnn import RNNLM
from seqlearn.rnn.race import (
    RaceResult,
    agreement_race,
    batched_agreement_scorer,
    merge_races,
    read_race,
    write_race,
)

VOCAB = Vocab(ToyEnglish.vocabulary())
TASK = LongAgreement(max_distance=15)


@pytest.mark.parametrize(
    "make", [lambda V: AttentionLM(V, 8, 2, hidden_size=8, seed=0), lambda V: RNNLM(V, 8, 8, seed=0)]
)
def test_the_one_pass_scorer_gives_the_per_example_scores(make):
    model = make(len(VOCAB))
    examples = TASK.agreement_examples([0, 4, 15], n_per_distance=3, seed=0)
    fast, slow = batched_agreement_scorer(model, VOCAB, examples), agreement_scorer(model, VOCAB)
    for ex in examples:
        np.testing.assert_allclose(fast(ex.prefix, [ex.correct, ex.wrong]), slow(ex.prefix, [ex.correct, ex.wrong]))
    assert agreement_accuracy(fast, examples) == agreement_accuracy(slow, examples)


def test_the_race_trains_each_model_for_each_seed_on_the_same_batches():
    train = encode_sentences(TASK.sample(40, rng=0), VOCAB)
    examples = TASK.agreement_examples([0, 10], n_per_distance=4, seed=1)
    V = len(VOCAB)
    factories = {
        "attention": lambda s: AttentionLM(V, 8, 1, hidden_size=8, seed=s),
        "gru": lambda s: GatedLM(V, 8, 8, cell="gru", seed=s),
    }
    result = agreement_race(factories, train, VOCAB, examples, seeds=[0, 1], batch_size=20, progress=False)
    assert set(result.accuracy) == {"attention", "gru"} and result.seeds == [0, 1]
    distances, acc = result.accuracy_array("gru")
    assert distances.tolist() == [0, 10] and acc.shape == (2, 2) and ((acc >= 0) & (acc <= 1)).all()
    assert result.n_params["attention"] == sum(p.numel() for p in result.models["attention"].parameters())
    assert all(len(losses) == 2 and np.isfinite(losses).all() for losses in result.final_loss.values())
    again = agreement_race(factories, train, VOCAB, examples, seeds=[0], batch_size=20, progress=False)
    assert again.accuracy["gru"][0] == result.accuracy["gru"][0], "the same seed gives the same run"


def test_bad_inputs_are_refused():
    model = AttentionLM(len(VOCAB), 8, 1, hidden_size=8)
    examples = TASK.agreement_examples([1], n_per_distance=2)
    with pytest.raises(TypeError, match="token_logprobs"):
        batched_agreement_scorer(object(), VOCAB, examples)
    with pytest.raises(TypeError, match="vocab"):
        batched_agreement_scorer(model, ["the"], examples)
    with pytest.raises(ValueError, match="examples is empty"):
        batched_agreement_scorer(model, VOCAB, [])
    with pytest.raises(TypeError, match=r"examples\[0\]"):
        batched_agreement_scorer(model, VOCAB, ["the cat"])
    with pytest.raises(ValueError, match="factories is empty"):
        agreement_race({}, np.array([1, 5, 2]), VOCAB, examples)


def test_a_written_race_reads_back_equal_without_models(tmp_path):
    result = RaceResult(
        {"gru": [{0: 1.0, 5: 0.5}, {0: 0.75, 5: 0.25}], "elman": [{0: 0.5, 5: 0.0}, {0: 1.0, 5: 0.5}]},
        [3, 4],
        {"gru": 120, "elman": 80},
        final_loss={"gru": [2.5, 2.25], "elman": [3.0, 2.75]},
        seconds={"gru": 1.25, "elman": 2.0},
        models={"gru": RNNLM(len(VOCAB), 4, 4, seed=0)},
    )
    path = write_race(result, tmp_path / "race.json", command="python -m x", config={"batch_size": 4})
    back = read_race(path, config={"batch_size": 4})
    assert back.accuracy == result.accuracy and back.seeds == [3, 4] and back.n_params == result.n_params
    assert back.final_loss == result.final_loss and back.seconds == {"gru": 1.2, "elman": 2.0}
    assert back.models == {} and back.config == {"batch_size": 4}
    assert back.provenance["command"] == "python -m x" and back.provenance["seconds"] == 3.2
    assert {"platform", "cpu_count"} <= set(back.provenance["machine"])
    np.testing.assert_array_equal(back.accuracy_array("elman")[1], [[0.5, 0.0], [1.0, 0.5]])
    with pytest.raises(ValueError, match="batch_size"):
        read_race(path, config={"batch_size": 32})


def test_writing_a_race_refuses_what_is_not_one(tmp_path):
    with pytest.raises(TypeError, match="RaceResult"):
        write_race({"gru": []}, tmp_path / "race.json", command="x")
    with pytest.raises(ValueError, match="no model"):
        write_race(RaceResult({}, [0], {}), tmp_path / "race.json", command="x")
    with pytest.raises(FileNotFoundError):
        read_race(tmp_path / "missing.json")


def test_races_run_in_parts_merge_into_the_whole():
    whole = RaceResult(
        {"gru": [{0: 1.0}, {0: 0.5}, {0: 0.25}], "elman": [{0: 0.5}, {0: 0.75}, {0: 0.0}]},
        [0, 1, 2],
        {"gru": 12, "elman": 8},
        final_loss={"gru": [1.0, 2.0, 3.0], "elman": [4.0, 5.0, 6.0]},
        seconds={"gru": 3.0, "elman": 6.0},
    )

    def part(name, seeds):
        runs = [whole.seeds.index(s) for s in seeds]
        return RaceResult(
            {name: [whole.accuracy[name][i] for i in runs]}, seeds, {name: whole.n_params[name]},
            final_loss={name: [whole.final_loss[name][i] for i in runs]},
            seconds={name: whole.seconds[name] / 3 * len(seeds)},
        )  # fmt: skip

    merged = merge_races(part("elman", [2]), part("gru", [0, 1, 2]), part("elman", [1, 0]))
    assert merged.seeds == [0, 1, 2] and merged.accuracy == whole.accuracy and merged.final_loss == whole.final_loss
    assert merged.n_params == whole.n_params and merged.seconds == whole.seconds
    with pytest.raises(ValueError, match="more than one"):
        merge_races(part("gru", [0, 1]), part("gru", [1, 2]))
    with pytest.raises(ValueError, match=r"elman has no run with seeds \[1\]"):
        merge_races(part("gru", [0, 1, 2]), part("elman", [0, 2]))
    with pytest.raises(TypeError, match="RaceResult"):
        merge_races(whole, {"gru": []})
