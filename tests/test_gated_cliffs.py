"""Chapter 4's cliffs: the networks, the budgets, and the shipped results regenerated at reduced size."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from seqlearn.gated import SequenceGated
from seqlearn.gated.cliffs import (
    ARCHITECTURES,
    SHIPPED_CLIFFS,
    CliffBudget,
    adding_cliffs,
    cliff_model,
    cliffs_from_results,
    cliffs_to_results,
    read_shipped_cliffs,
    write_cliffs,
)
from seqlearn.rnn import SequenceRNN, task_cliff

SHIPPED = Path(__file__).resolve().parents[1] / SHIPPED_CLIFFS


def test_the_networks_are_the_chapters():
    assert isinstance(cliff_model("Elman RNN", 0), SequenceRNN)
    lstm, lstm1, gru = (cliff_model(name, 0) for name in ARCHITECTURES[1:])
    assert isinstance(gru, SequenceGated) and isinstance(lstm, SequenceGated)
    plain, biased = lstm.state_dict(), lstm1.state_dict()
    differ = [key for key in plain if not torch.equal(plain[key], biased[key])]
    assert differ and all(
        key.rsplit(".", 1)[-1].startswith("b_") for key in differ
    )  # the same seed: only the forget bias differs
    with pytest.raises(ValueError, match="architecture"):
        cliff_model("Transformer", 0)


def test_the_budgets():
    assert CliffBudget.chapter().updates == 315
    assert CliffBudget.shipped().updates == 6 * CliffBudget.chapter().updates
    assert dataclasses.replace(CliffBudget.shipped(), epochs=5, lengths=(25, 50)) == CliffBudget.chapter()
    assert CliffBudget.shipped().lengths == (25, 50, 75)


def test_a_reduced_regeneration_goes_through_task_cliff_and_reads_back(tmp_path):
    """Two networks, one length, one seed, two epochs: the file's cliffs equal task_cliff's own, run alone."""
    budget = CliffBudget(lengths=(6,), seeds=(1,), n_train=128, n_val=64, epochs=2, batch_size=32)
    path = tmp_path / "cliffs.json"
    written = write_cliffs(path, budget, command="test")
    cliffs, provenance = read_shipped_cliffs(path, budget)
    assert set(cliffs) == set(ARCHITECTURES) and provenance["command"] == "test"
    alone = task_cliff(
        "adding", (6,), (1,), make_model=lambda s: cliff_model("GRU", s), n_train=128, n_val=64, epochs=2,
        batch_size=32, lr=budget.lr, clip_grad_norm=budget.clip_grad_norm, device="cpu",
    )  # fmt: skip
    np.testing.assert_allclose(cliffs["GRU"].curves, alone.curves, rtol=0, atol=1e-6)
    np.testing.assert_allclose(cliffs["Elman RNN"].curves, written["Elman RNN"].curves, rtol=0, atol=1e-6)
    assert cliffs["GRU"].relative_loss.shape == (1, 1)
    with pytest.raises(ValueError, match="epochs differ"):
        read_shipped_cliffs(path, dataclasses.replace(budget, epochs=3))


def test_malformed_cliffs_are_refused():
    good = cliffs_to_results(
        adding_cliffs(CliffBudget(lengths=(4,), seeds=(0,), n_train=32, n_val=16, epochs=1, batch_size=32), ["GRU"])
    )
    assert set(cliffs_from_results(good)) == {"GRU"}
    with pytest.raises(ValueError, match="malformed"):
        cliffs_from_results({"GRU": {"lengths": [4]}})
    with pytest.raises(ValueError, match="shape"):
        cliffs_from_results({"GRU": {**good["GRU"], "curves": [[1.0]]}})


def test_the_shipped_file_is_the_shipped_budgets():
    """The committed results read back, were made with CliffBudget.shipped(), and hold every network."""
    cliffs, provenance = read_shipped_cliffs(SHIPPED)
    assert set(cliffs) == set(ARCHITECTURES)
    assert provenance["command"].startswith("python -m seqlearn.gated.cliffs")
    assert all(c.curves.shape == (3, 3, 30) for c in cliffs.values())
