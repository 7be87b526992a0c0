"""seqlearn.lowrank.closure_results: the long erf-closure run regenerated at a reduced size through its command."""

import numpy as np
import pytest

from seqlearn.lowrank.closure_results import closure_run, load_closure, main
from seqlearn.lowrank.erf import recommended_init, train_both
from seqlearn.lowrank.tasks import flip_flop

pytestmark = pytest.mark.usefixtures("one_thread")
SMALL = {"epochs": 3, "N": 40, "dt": 0.5}


def test_the_command_writes_a_run_that_reads_back_with_its_provenance(tmp_path):
    out = tmp_path / "closure.json"
    argv = ["--out", str(out), "--epochs", "3", "--N", "40", "--dt", "0.5"]
    main(argv)
    saved = load_closure(out)
    assert saved["provenance"]["command"] == "python -m seqlearn.lowrank.closure_results " + " ".join(argv)
    assert {"machine", "seconds", "date"} <= set(saved["provenance"])
    assert saved["config"] == {**SMALL, "eta": 0.05, "batch": 10, "seed": 0}
    assert saved["epoch"] == [0, 1, 2, 3] and len(saved["loss_network"]) == len(saved["loss_ode"]) == 3
    run = closure_run(**SMALL)
    assert {key: saved[key] for key in run if key != "config"} == {key: v for key, v in run.items() if key != "config"}


def test_the_gap_is_the_largest_overlap_difference_of_network_and_ode_on_the_same_batches():
    run = closure_run(**SMALL)
    rng = np.random.default_rng(0)
    batches = [flip_flop(10, rng=rng, dt=0.5) for _ in range(3)]
    full, ode = train_both(*recommended_init(40, rng=0), batches, eta=0.05, dt=0.5, device="cpu")
    np.testing.assert_allclose(run["gap"], np.abs(full.sigma - ode.sigma).max(axis=1))
    np.testing.assert_allclose(run["loss_network"], full.loss)
    assert run["gap"][0] == 0.0 and 0.9 < min(run["qq"]) <= 1.0


def test_a_missing_file_names_the_command_and_bad_settings_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"python -m seqlearn\.lowrank\.closure_results --out"):
        load_closure(tmp_path / "none.json")
    with pytest.raises(ValueError, match="epochs must be"):
        closure_run(0)
    with pytest.raises(ValueError, match="eta must be"):
        closure_run(3, eta=0.0)


def test_the_shipped_long_run_reads_back_at_the_chapters_settings():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "chapters" / "results" / "06_erf_closure.json"
    shipped = load_closure(path)
    assert path.stat().st_size <= 30_000
    assert shipped["config"] == {"epochs": 1000, "N": 600, "dt": 0.05, "eta": 0.05, "batch": 10, "seed": 0}
    assert shipped["provenance"]["command"].startswith("python -m seqlearn.lowrank.closure_results")
    assert shipped["epoch"][0] == 0 and shipped["epoch"][-1] == 1000
    assert len(shipped["gap"]) == len(shipped["epoch"]) == len(shipped["loss_ode"]) + 1
    assert shipped["gap"][0] == 0.0 and np.isfinite(shipped["gap"]).all() and len(shipped["qq"]) == 4
