"""Chapter 5's long-lag results: regenerated at tiny size through the chapter's pipeline, written
atomically, read back and validated; the shipped file against the module's configuration.

References: the pipeline's own Diagnostics from a separate ``learnability_experiment`` call, the
window's definition by a loop over lags, per-neuron time scales by ``np.polyfit``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from seqlearn.learnability.long_lags import (
    LONG_LAGS_COMMAND,
    LONG_LAGS_SEEDS,
    config_from_dict,
    long_lag_config,
    read_results,
    run_long_lags,
    window_curves,
    write_results,
)
from seqlearn.learnability.models import ARCHITECTURES
from seqlearn.learnability.pipeline import Tier2Config, learnability_experiment

SHIPPED = Path(__file__).resolve().parents[1] / "chapters" / "results" / "05_long_lags.json"
TINY = Tier2Config(
    T=24, D=3, H=5, task_lags=(4, 12), coeffs=(0.6, 0.4), n_train=48, n_val=16, n_diag=64, epochs=2,
    batch_size=16, lags=(2, 3, 5, 8, 12), K=1, chunk=32,
)  # fmt: skip
TINY_ARCHITECTURES = ("const", "diag")


@pytest.fixture(scope="module")
def tiny_document():
    return run_long_lags(TINY, TINY_ARCHITECTURES, seeds=(0,), command="test")


def window_by_loop(lags, N_req, N_grid):
    """H_N = max{lag : 0 < N_req <= N}, 0 if none, one N at a time."""
    return [max([lag for lag, n in zip(lags, N_req) if 0 < n <= N], default=0) for N in N_grid]


def median_tau_by_polyfit(lags, unit_mass, min_points=5):
    """Median over neurons of -1 / slope of log mass on lag (inf without decay or with too few points)."""
    taus = []
    for m in unit_mass.T:
        keep = m > 0
        slope = np.polyfit(np.asarray(lags)[keep], np.log(m[keep]), 1)[0] if keep.sum() >= min_points else 0.0
        taus.append(-1 / slope if slope < 0 else np.inf)
    return np.median(taus)


def test_tiny_document_reports_the_pipelines_diagnostics(tiny_document):
    direct = learnability_experiment(TINY_ARCHITECTURES, (0,), TINY, device="cpu", progress=False)
    assert [(r["architecture"], r["seed"]) for r in tiny_document["runs"]] == list(direct)
    for record, d in zip(tiny_document["runs"], direct.values()):
        assert record["lags"] == list(TINY.lags)
        np.testing.assert_allclose(record["f"], d.f, rtol=1e-5)
        assert record["N_req"] == d.N_req.tolist() and record["N_grid"] == d.N_grid.tolist()
        assert record["H_N"] == window_by_loop(record["lags"], record["N_req"], record["N_grid"])
        assert record["r2"] == pytest.approx(d.r2, rel=1e-5)
        tau = median_tau_by_polyfit(TINY.lags, d.unit_mass)
        assert record["tau_median"] == (pytest.approx(tau, rel=1e-5) if np.isfinite(tau) else None)


def test_metadata_names_the_command_machine_and_config(tiny_document):
    meta = tiny_document["metadata"]
    assert meta["command"] == "test" and meta["wall_seconds"] > 0
    assert {"platform", "cpu_count", "torch"} <= set(meta["machine"])
    assert config_from_dict(json.loads(json.dumps(meta["config"]))) == TINY


def test_round_trip_is_exact_and_leaves_no_temporary_file(tiny_document, tmp_path):
    path = write_results(tiny_document, tmp_path / "results" / "long.json")
    assert read_results(path) == json.loads(json.dumps(tiny_document))
    assert [p.name for p in path.parent.iterdir()] == ["long.json"]


def test_window_curves_stack_the_seeds(tiny_document):
    curves = window_curves(tiny_document)
    assert list(curves) == list(TINY_ARCHITECTURES)
    for record in tiny_document["runs"]:
        N_grid, H_N = curves[record["architecture"]]
        assert N_grid.tolist() == record["N_grid"] and H_N.tolist() == [record["H_N"]]


def test_missing_file_raises_with_the_regeneration_command(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"seqlearn\.learnability\.long_lags"):
        read_results(tmp_path / "absent.json")


def test_garbled_file_raises(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"name": "long lags", "results": [')
    with pytest.raises(ValueError, match="not a JSON document"):
        read_results(path)


def test_the_file_is_a_shipped_results_document(tiny_document, tmp_path):
    path = write_results(tiny_document, tmp_path / "long.json")
    stored = json.loads(path.read_text())
    meta = tiny_document["metadata"]
    assert stored["name"] == "long lags" and stored["config"] == json.loads(json.dumps(meta["config"]))
    assert stored["results"] == {"workers": 1, "runs": tiny_document["runs"]}
    assert {k: stored["provenance"][k] for k in ("command", "machine", "seconds")} == {
        "command": "test", "machine": meta["machine"], "seconds": meta["wall_seconds"]}  # fmt: skip


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda doc: doc.pop("runs"), "runs"),
        (lambda doc: doc["metadata"].pop("command"), "command"),
        (lambda doc: doc["metadata"].pop("workers"), "workers"),
        (lambda doc: doc["metadata"]["config"].pop("T"), "fields"),
        (lambda doc: doc["runs"][0].pop("H_N"), "lacks"),
        (lambda doc: doc["runs"][0]["f"].pop(), "one value per lag"),
        (lambda doc: doc["runs"][0].update(architecture="elman"), "architecture"),
        (lambda doc: doc.update(schema=0), "schema"),
    ],
)
def test_incomplete_documents_are_refused(tiny_document, tmp_path, spoil, message):
    document = json.loads(json.dumps(tiny_document))
    spoil(document)
    with pytest.raises(ValueError, match=message):
        write_results(document, tmp_path / "x.json")


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda stored: stored["results"].pop("runs"), "runs"),
        (lambda stored: stored["results"].pop("workers"), "workers"),
        (lambda stored: stored["provenance"].pop("command"), "command"),
        (lambda stored: stored["config"].pop("T"), "fields"),
        (lambda stored: stored["results"]["runs"][0].pop("H_N"), "lacks"),
        (lambda stored: stored["results"]["runs"][0]["f"].pop(), "one value per lag"),
        (lambda stored: stored["results"]["runs"][0].update(architecture="elman"), "architecture"),
        (lambda stored: stored.update(name="adding cliffs"), "not of 'long lags'"),
    ],
)
def test_incomplete_files_are_refused(tiny_document, tmp_path, spoil, message):
    path = write_results(tiny_document, tmp_path / "x.json")
    stored = json.loads(path.read_text())
    spoil(stored)
    path.write_text(json.dumps(stored))
    with pytest.raises(ValueError, match=message):
        read_results(path)


def test_long_lag_config_reaches_far_beyond_constgates_time_scale():
    config = long_lag_config()
    tau = -1 / np.log(1 - 0.05)
    assert max(config.task_lags) >= 6 * tau and max(config.lags) >= max(config.task_lags)
    assert max(config.lags) < config.T and len(LONG_LAGS_SEEDS) >= 3


def test_shipped_file_matches_the_modules_configuration():
    document = read_results(SHIPPED)
    assert SHIPPED.stat().st_size <= 60_000
    meta = document["metadata"]
    assert config_from_dict(meta["config"]) == long_lag_config()
    assert meta["command"] == LONG_LAGS_COMMAND
    assert json.loads(json.dumps(dataclasses.asdict(long_lag_config()))) == meta["config"]
    runs = {(r["architecture"], r["seed"]) for r in document["runs"]}
    assert runs == {(a, s) for a in ARCHITECTURES for s in LONG_LAGS_SEEDS}
    for record in document["runs"]:
        assert record["lags"] == list(long_lag_config().lags)
        assert record["H_N"] == window_by_loop(record["lags"], record["N_req"], record["N_grid"])
