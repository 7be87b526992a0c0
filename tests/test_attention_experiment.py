"""seqlearn.attention.experiment: attention maps are distributions over the past; the shipped race and
attention models are Chapter 7's, and a reduced race regenerates through the same code."""

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from seqlearn.attention.experiment import (
    LONG_RACE,
    MODELS_FILE,
    RACE_FILE,
    attention_map,
    race_factories,
    race_text,
    read_attention_models,
    run_race,
    subject_weight,
    write_attention_models,
)
from seqlearn.attention.model import AttentionLM
from seqlearn.data import Vocab
from seqlearn.data.synthetic import ToyEnglish
from seqlearn.rnn import RNNLM
from seqlearn.rnn.race import agreement_race, read_race, write_race

VOCAB = Vocab(ToyEnglish.vocabulary())
ROOT = Path(__file__).resolve().parent.parent
REDUCED = copy.deepcopy(LONG_RACE) | {
    "n_train": 24,
    "distances": [0, 6],
    "n_per_distance": 2,
    "seeds": [0, 1],
    "batch_size": 12,
    "task": {"max_distance": 8, "short_fraction": 0.6, "attractor_rate": 0.5},
}


def test_an_attention_map_is_a_distribution_over_earlier_positions():
    model = AttentionLM(len(VOCAB), 8, 2, n_heads=2, hidden_size=8, seed=0)
    a = attention_map(model, VOCAB, ["the", "cats", "near", "the", "dog", "are"], layer=0)
    assert a.shape == (2, 7, 7) and a.dtype == np.float64
    np.testing.assert_allclose(a.sum(axis=-1), 1.0, rtol=1e-6)
    assert np.all(np.triu(a, 1) == 0)
    assert np.array_equal(
        attention_map(model, VOCAB, ["the", "cats"], layer=-1), attention_map(model, VOCAB, ["the", "cats"], layer=1)
    )


def test_the_subject_weight_is_the_verb_rows_entry_at_the_head_noun():
    model = AttentionLM(len(VOCAB), 8, 2, n_heads=2, hidden_size=8, seed=1)
    _, vocab, _, examples = race_text(REDUCED)
    w = subject_weight(model, vocab, examples, layer=0)
    assert w.shape == (len(examples), 2)
    for ex, row in zip(examples, w, strict=True):
        a = attention_map(model, vocab, ex.prefix, layer=0)
        P = len(ex.prefix)  # the verb's query; at distance 0 the subject is the word just before the verb
        subject = P if ex.distance == 0 else P - ex.distance
        np.testing.assert_allclose(row, a[:, P, subject], rtol=1e-5, atol=1e-7)  # one batch against one sentence


def test_a_reduced_race_regenerates_through_the_shipped_code(tmp_path):
    result, attention = run_race(REDUCED, progress=False)
    assert list(result.accuracy) == list(LONG_RACE["models"]) and result.seeds == [0, 1]
    _, vocab, train, examples = race_text(REDUCED)
    direct = agreement_race(
        race_factories(len(vocab), REDUCED), train, vocab, examples, seeds=[0, 1], lr=REDUCED["lr"],
        epochs=REDUCED["epochs"], batch_size=REDUCED["batch_size"], progress=False,
    )  # fmt: skip
    assert result.accuracy == direct.accuracy and result.n_params == direct.n_params
    np.testing.assert_allclose(result.final_loss["GRU"], direct.final_loss["GRU"])
    write_race(result, tmp_path / "race.json", command="test", config=REDUCED)
    assert read_race(tmp_path / "race.json", REDUCED).accuracy == result.accuracy
    write_attention_models(attention, tmp_path / "models.pt", REDUCED)
    back = read_attention_models(tmp_path / "models.pt", REDUCED)
    assert sorted(back) == [0, 1]
    for seed, model in back.items():
        for name, tensor in attention[seed].state_dict().items():
            assert torch.equal(model.state_dict()[name], tensor)
    with pytest.raises(ValueError, match="another configuration"):
        read_attention_models(tmp_path / "models.pt", LONG_RACE)


def test_the_shipped_race_is_the_chapters_configuration():
    race = read_race(ROOT / RACE_FILE, LONG_RACE)
    assert set(race.accuracy) == {"Elman RNN", "GRU", "LSTM", "attention"} and race.seeds == LONG_RACE["seeds"]
    for name in race.accuracy:
        distances, acc = race.accuracy_array(name)
        assert distances.tolist() == LONG_RACE["distances"] and acc.shape == (3, 81)
        assert ((acc >= 0) & (acc <= 1)).all()
    assert "seqlearn.attention.experiment" in race.provenance["command"]


def test_the_shipped_attention_models_load_strictly_into_the_chapters_architecture():
    models = read_attention_models(ROOT / MODELS_FILE)
    assert sorted(models) == LONG_RACE["seeds"]
    fresh = race_factories(len(VOCAB))["attention"](0)
    for model in models.values():
        assert isinstance(model, AttentionLM) and model.state_dict().keys() == fresh.state_dict().keys()


def test_a_models_file_that_does_not_fit_the_architecture_is_refused(tmp_path):
    write_attention_models({0: race_factories(len(VOCAB), REDUCED)["attention"](0)}, tmp_path / "m.pt", REDUCED)
    document = torch.load(tmp_path / "m.pt", weights_only=True)
    del document["state_dicts"][0]["W_xy"]
    torch.save(document, tmp_path / "m.pt")
    with pytest.raises(ValueError, match="W_xy"):
        read_attention_models(tmp_path / "m.pt", REDUCED)
    torch.save({"config": REDUCED}, tmp_path / "m.pt")
    with pytest.raises(ValueError, match="not a file of attention models"):
        read_attention_models(tmp_path / "m.pt", REDUCED)


def test_bad_inputs_are_refused(tmp_path):
    model = AttentionLM(len(VOCAB), 8, 1, hidden_size=8)
    with pytest.raises(TypeError, match="AttentionLM"):
        attention_map(RNNLM(len(VOCAB), 4, 4), VOCAB, ["the"])
    with pytest.raises(TypeError, match="not a str"):
        attention_map(model, VOCAB, "the cat")
    with pytest.raises(ValueError, match="layer"):
        attention_map(model, VOCAB, ["the"], layer=1)
    with pytest.raises(TypeError, match="not one"):
        subject_weight(model, VOCAB, race_text(REDUCED)[3][0])
    with pytest.raises(ValueError, match="empty"):
        subject_weight(model, VOCAB, [])
    with pytest.raises(TypeError, match="AttentionLM"):
        subject_weight(RNNLM(len(VOCAB), 4, 4), VOCAB, race_text(REDUCED)[3])
    with pytest.raises(ValueError, match="models"):
        race_factories(len(VOCAB), {"models": {"transformer": {}}})
    with pytest.raises(ValueError, match="AttentionLM"):
        write_attention_models({0: RNNLM(len(VOCAB), 4, 4)}, tmp_path / "m.pt")
