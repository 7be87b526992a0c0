"""Shipped results: written whole, read back equal, refused when missing, garbled, foreign or stale."""

from __future__ import annotations

import json

import pytest

from seqlearn.results import machine, read_results, write_results


def test_a_document_reads_back_as_written(tmp_path):
    path = write_results(
        tmp_path / "r" / "x.json",
        "toy",
        {"lags": (1, 2), "eps": 0.5},
        {"f": [0.25, 0.125]},
        command="cmd",
        seconds=3.14,
    )
    shipped = read_results(path, "toy", {"lags": [1, 2], "eps": 0.5})
    assert shipped.results == {"f": [0.25, 0.125]} and shipped.config == {"lags": [1, 2], "eps": 0.5}
    assert shipped.provenance["command"] == "cmd" and shipped.provenance["seconds"] == 3.1
    assert shipped.provenance["machine"]["cpu_count"] == machine()["cpu_count"]
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]  # no temporary file left behind


def test_an_experiment_may_describe_its_machine_itself(tmp_path):
    host = {"cpu": "a CPU", "kernel": "numba (1 threads)"}
    path = write_results(tmp_path / "x.json", "toy", {}, {}, command="c", seconds=1, host=host)
    assert (
        json.loads(path.read_text())["provenance"]["machine"] == host == read_results(path, "toy").provenance["machine"]
    )


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = write_results(tmp_path / "x.json", "toy", {}, {"a": 1}, command="c", seconds=1)
    with pytest.raises(ValueError, match="Out of range float"):
        write_results(path, "toy", {}, {"a": float("nan")}, command="c", seconds=1)  # NaN is not JSON
    assert read_results(path, "toy").results == {"a": 1}
    assert len(list(tmp_path.iterdir())) == 1


def test_bad_files_are_refused_with_the_reason(tmp_path):
    with pytest.raises(FileNotFoundError, match="no shipped results"):
        read_results(tmp_path / "missing.json", "toy")
    garbled = tmp_path / "garbled.json"
    garbled.write_text('{"name": "toy", ')
    with pytest.raises(ValueError, match="not a JSON document"):
        read_results(garbled, "toy")
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"name": "toy", "results": {}}))
    with pytest.raises(ValueError, match="needs the keys"):
        read_results(partial, "toy")
    path = write_results(tmp_path / "x.json", "toy", {"epochs": 30, "lr": 0.01}, {}, command="c", seconds=1)
    with pytest.raises(ValueError, match="of 'toy', not of 'other'"):
        read_results(path, "other")
    with pytest.raises(ValueError, match=r"\(epochs differ\)"):
        read_results(path, "toy", {"epochs": 5, "lr": 0.01})
    with pytest.raises(ValueError, match="need a name"):
        write_results(tmp_path / "y.json", "", {}, {}, command="c", seconds=1)
