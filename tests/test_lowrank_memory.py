"""seqlearn.lowrank.memory: the protocol's two scales, the split by pair, the Gram and balance checks of a run, and
the shipped results regenerated at a reduced size through the same entry point."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from seqlearn.lowrank.memory import SPLITS, TIMES, MemoryProtocol, decode_times, memory_experiment, twin_start
from seqlearn.lowrank.memory import _split as split_networks
from seqlearn.lowrank.memory_results import (
    compact,
    load_results,
    main,
    memory_summary,
    paper_results,
    qperp_differences,
    save_results,
    seed_accuracies,
)
from seqlearn.lowrank.overlaps import OVERLAPS, gram, overlaps

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_default_protocol_is_the_chapters_scale_and_paper_is_the_papers():
    chapter = MemoryProtocol()
    assert (chapter.pairs, chapter.dt, chapter.batch, chapter.pool) == (8, 0.1, 32, 1024)
    assert (chapter.epochs_ab, chapter.eta_ab, chapter.epochs_c, chapter.eta_c) == (800, 0.02, 800, 5e-3)
    assert (chapter.update, chapter.read, chapter.split, chapter.max_step) == ("simultaneous", "before", "labels", None)
    paper = MemoryProtocol.paper()
    assert (paper.pairs, paper.dt, paper.batch, paper.pool) == (10, 0.05, 128, None)
    assert (paper.epochs_ab, paper.eta_ab, paper.epochs_c, paper.eta_c) == (30_000, 0.01, 30_000, 1e-3)
    assert (paper.update, paper.read, paper.split, paper.max_step) == ("sequential", "after", "pairs", None)
    assert paper.drop_below == chapter.drop_below == 0.015
    assert paper.gram_start and not chapter.gram_start
    assert MemoryProtocol.paper(pairs=4).pairs == 4 and MemoryProtocol.binder(epochs_ab=7).epochs_ab == 7
    binder = MemoryProtocol.binder()
    assert (binder.dt, binder.batch, binder.pool, binder.epochs_ab, binder.eta_ab, binder.epochs_c) == (
        0.1, 16, 1024, 2000, 0.02, 2000)  # fmt: skip
    assert binder.replace(dt=0.05, batch=128, pool=None, epochs_ab=30_000, eta_ab=0.01, epochs_c=30_000) == paper


@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"pairs": 2}, ValueError, "pairs must be an int >= 3"),
        ({"update": "parallel"}, ValueError, "update must be one of"),
        ({"read": "now"}, ValueError, "read must be one of"),
        ({"split": "twins"}, ValueError, "split must be one of"),
        ({"pool": 0}, ValueError, "pool must be an int >= 1"),
        ({"eta_c": 0.0}, ValueError, "eta_c must be"),
        ({"epochs": 3}, TypeError, r"unknown protocol fields \['epochs'\]"),
    ],
)
def test_bad_protocols_are_refused(change, error, match):
    with pytest.raises(error, match=match):
        MemoryProtocol().replace(**change)


def test_gram_starts_are_positive_definite_and_plain_starts_are_the_papers_draws():
    plain, checked = twin_start(300, 4), twin_start(300, 4, gram=True)
    smallest = np.linalg.eigvalsh(gram(plain))[:, 0]
    assert (smallest < 0).mean() > 0.05  # the paper's draws are often no Gram matrix
    assert np.linalg.eigvalsh(gram(checked))[:, 0].min() > 0
    kept = smallest > 0  # the first draw of every start that was one is kept as it is
    np.testing.assert_array_equal(checked[kept], plain[kept])


def test_the_pair_split_holds_out_both_twins_and_the_label_split_need_not():
    rng = np.random.default_rng(0)
    for _ in range(20):
        test = split_networks(10, 2, True, rng)  # twins A, then twins B
        np.testing.assert_array_equal(test[:10], test[10:])
        assert test.sum() == 4
    apart = [not np.array_equal(t[:10], t[10:]) for t in (split_networks(10, 2, False, rng) for _ in range(20))]
    assert np.mean(apart) > 0.5


def test_decode_times_splits_by_pair_after_the_start_only_when_asked():
    """Twins B = twins A shifted by a per-pair constant: held-out pairs cannot be told apart, seen pairs can."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 1, 8, 10)) * 2
    sigma = np.concatenate([a, a + rng.standard_normal((1, 1, 8, 10)) * 0.05], axis=1)
    by_pairs = decode_times(sigma, split="pairs", resamples=20, rng=0)
    assert sorted(by_pairs) == sorted((t, f) for t in TIMES for f in ("visible", "invisible"))
    assert all(v.shape == (20,) for v in by_pairs.values())
    np.testing.assert_array_equal(
        by_pairs["start", "visible"], decode_times(sigma, split="labels", rng=0)["start", "visible"][:20]
    )


def test_paper_protocol_at_a_small_size_runs_with_fresh_trials_and_reports_its_checks():
    small = {"pairs": 3, "batch": 4, "epochs_ab": 6, "epochs_c": 4, "resamples": 3}
    runs = {u: memory_experiment(protocol=MemoryProtocol.paper(update=u, **small), rng=2, progress=False)
            for u in ("sequential", "simultaneous")}  # fmt: skip
    run = runs["sequential"]
    assert run.protocol.pool is None and run.protocol.read == "after"
    assert run.sigma.shape == (3, 2, 3, 10) and run.loss.shape == (10, 2, 3)
    assert run.smallest_eigenvalue.shape == run.gram_valid.shape == (3, 2, 3)
    assert run.balance_drift.shape == (2, 2, 3)
    np.testing.assert_array_equal(run.twin_difference[0], 0.0)
    assert np.isfinite(run.loss).all()
    assert runs["simultaneous"].balance_drift.max() < 1e-12 < run.balance_drift.max()
    np.testing.assert_array_equal(run.gram_valid, run.smallest_eigenvalue >= -1e-12)


def test_shipped_results_regenerate_at_a_reduced_size_and_reload_equal(tmp_path):
    """``python -m seqlearn.lowrank.memory_results`` (its ``main``) at 3 pairs and a few epochs: the file's schema,
    and the file reloads equal to the in-memory results of the same call."""
    out = tmp_path / "memory.json"
    argv = ["--out", str(out), "--seeds", "0", "1", "--pairs", "3", "--epochs-ab", "5", "--epochs-c", "4"]
    main(argv)
    saved = load_results(out)
    assert saved["command"] == "python -m seqlearn.lowrank.memory_results " + " ".join(argv)
    assert set(saved) == {"command", "machine", "wall_seconds", "cpu_seconds", "protocol", "overlaps", "times",
                          "noises", "loss_epochs", "runs"}  # fmt: skip
    assert {"cpu", "cores", "python", "numpy", "kernel"} <= set(saved["machine"])
    assert saved["protocol"] == {**MemoryProtocol.paper().__dict__, "pairs": 3, "epochs_ab": 5, "epochs_c": 4}
    assert saved["noises"] == [0.0, 0.3] and [run["seed"] for run in saved["runs"]] == [0, 1]
    run = saved["runs"][0]
    assert np.shape(run["sigma"]) == (3, 2, 3, 10) and np.shape(run["twin_difference"]) == (3, 3, 10)
    assert np.shape(run["loss"]) == (len(saved["loss_epochs"]), 2, 3) and saved["loss_epochs"][-1] == 8
    assert np.shape(run["gram_valid"]) == (3, 2, 3) and np.shape(run["balance_drift"]) == (2, 2, 3)
    assert set(run["accuracy"]) == set(SPLITS)
    for split in SPLITS:
        assert set(run["accuracy"][split]) == {"0.0", "0.3"}
        for noise in ("0.0", "0.3"):
            assert np.shape(run["accuracy"][split][noise]["C"]["invisible"]) == (50,)
    again = paper_results(
        [0, 1], protocol=MemoryProtocol.paper(pairs=3, epochs_ab=5, epochs_c=4), command=saved["command"],
        out=tmp_path / "again.json",
    )  # fmt: skip
    assert load_results(tmp_path / "again.json") == again
    for key in ("protocol", "overlaps", "times", "noises", "loss_epochs", "command"):
        assert again[key] == saved[key]
    for a, b in zip(again["runs"], saved["runs"]):
        assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    json.dumps(again)  # plain JSON types throughout


SHIPPED = Path(__file__).resolve().parents[1] / "chapters" / "results" / "06_memory.json"


def test_the_shipped_results_read_back_at_the_papers_protocol_with_pooled_trials():
    saved = load_results(SHIPPED)
    assert os.path.getsize(SHIPPED) <= 60_000
    protocol = MemoryProtocol(**saved["protocol"])
    assert protocol == MemoryProtocol.paper(pool=8192) and protocol.replace(pool=None) == MemoryProtocol.paper()
    assert "pool" in saved["provenance"] and saved["machine"]["kernel"].startswith("numba")
    for run in saved["runs"]:
        assert np.shape(run["sigma"]) == (3, 2, 10, 10) and np.shape(run["gram_valid"]) == (3, 2, 10)
        assert np.shape(run["balance_drift"]) == (2, 2, 10) and np.shape(run["loss"]) == (
            len(saved["loss_epochs"]),
            2,
            10,
        )
        for split in SPLITS:
            for noise in ("0.0", "0.3"):
                for when in TIMES:
                    assert {k: np.shape(v) for k, v in run["accuracy"][split][noise][when].items()} == {
                        "visible": (50,), "invisible": (50,)}  # fmt: skip
    assert saved["loss_epochs"][0] == 0 and {29_999, 59_999} <= set(saved["loss_epochs"])


def test_compact_thins_the_losses_keeping_each_phases_last_and_rounds_to_six_digits():
    epochs = list(range(50))  # A/B is epochs 0-29, C 30-49
    results = {"protocol": {"epochs_ab": 30}, "loss_epochs": epochs, "runs": [{
        "sigma": [[1 / 3]], "twin_difference": [2 / 3], "smallest_eigenvalue": [-1e-13 / 3], "balance_drift": [0.0],
        "loss": [[k + 1 / 7] for k in epochs], "accuracy": {"pairs": [0.25, 0.75]}, "seed": 4}]}  # fmt: skip
    small = compact(results)
    assert small["loss_epochs"] == [0, 10, 20, 29, 30, 40, 49]
    run = small["runs"][0]
    assert run["loss"] == [[0.142857], [10.1429], [20.1429], [29.1429], [30.1429], [40.1429], [49.1429]]
    assert run["sigma"] == [[0.333333]] and run["smallest_eigenvalue"] == [-3.33333e-14]
    assert run["accuracy"] == {"pairs": [0.25, 0.75]} and run["seed"] == 4


def test_save_results_is_atomic_and_load_results_names_what_is_wrong(tmp_path):
    out = tmp_path / "r.json"
    with pytest.raises(FileNotFoundError, match=r"python -m seqlearn\.lowrank\.memory_results --out"):
        load_results(out)
    good = {"command": "c", "machine": {"cores": 2}, "wall_seconds": 1.5, "cpu_seconds": 1.25, "protocol": {"dt": 0.1},
            **{key: [] for key in ("overlaps", "times", "noises", "loss_epochs", "runs")}}  # fmt: skip
    save_results(good, out)
    with pytest.raises(TypeError):
        save_results({**good, "runs": [object()]}, out)  # not JSON
    assert load_results(out) == good and os.listdir(tmp_path) == ["r.json"]  # the old file, no temporary left
    stored = json.loads(out.read_text())  # a seqlearn.results document
    assert stored["name"] == "twin memory" and stored["config"] == {"protocol": {"dt": 0.1}, "noises": []}
    assert {k: stored["provenance"][k] for k in ("command", "machine", "seconds")} == {
        "command": "c", "machine": {"cores": 2}, "seconds": 1.5}  # fmt: skip
    assert stored["results"] == {
        "cpu_seconds": 1.25,
        **{key: [] for key in ("overlaps", "times", "loss_epochs", "runs")},
    }
    out.write_text('{"command": ')
    with pytest.raises(ValueError, match="not a JSON document"):
        load_results(out)
    out.write_text(json.dumps({**stored, "name": "long lags"}))
    with pytest.raises(ValueError, match="of 'long lags', not of 'twin memory'"):
        load_results(out)
    out.write_text(json.dumps({**stored, "results": {"runs": []}}))
    with pytest.raises(ValueError, match="it needs the keys"):
        load_results(out)
    save_results({**good, "runs": [{"seed": 0}]}, out)
    with pytest.raises(ValueError, match=r"run 0 lacks \['seconds'"):
        load_results(out)


@pytest.fixture(scope="module")
def three_seeds(tmp_path_factory):
    """A small results file of three runs, written and read back through the shipped file's code."""
    out = tmp_path_factory.mktemp("memory") / "three.json"
    protocol = MemoryProtocol.paper(pairs=3, epochs_ab=20, epochs_c=20, dt=0.5, batch=16, resamples=5, held_out=1)
    paper_results([0, 1, 2], protocol=protocol, out=out, command="test")
    return load_results(out)


def test_the_summaries_hold_one_entry_per_seed_of_a_three_run_file(three_seeds):
    summary = memory_summary(three_seeds)
    np.testing.assert_array_equal(summary["seeds"], [0, 1, 2])
    assert sorted(summary["accuracy"]) == sorted((n, f) for n in (0.0, 0.3) for f in ("visible", "invisible"))
    for (noise, kind), per_seed in summary["accuracy"].items():
        expected = [np.mean(run["accuracy"]["pairs"][repr(noise)]["C"][kind]) for run in three_seeds["runs"]]
        np.testing.assert_array_equal(per_seed, expected)
    assert summary["gram_valid"].shape == summary["smallest_eigenvalue"].shape == (3,)
    assert ((summary["gram_valid"] >= 0) & (summary["gram_valid"] <= 1)).all()
    lowest = [min(np.ravel(run["smallest_eigenvalue"])) for run in three_seeds["runs"]]
    np.testing.assert_array_equal(summary["smallest_eigenvalue"], lowest)
    drift = [np.asarray(run["balance_drift"]) for run in three_seeds["runs"]]  # (phase, twin, pair)
    np.testing.assert_array_equal(summary["balance_drift"], [[d[:, 0].max(), d[:, 1].max()] for d in drift])
    assert summary["qperp_median"].shape == (3, 2, 3)
    assert ((summary["zz_agree"] >= 0.5) & (summary["zz_agree"] <= 1)).all()
    assert set(summary["zz_sign"]) <= {-1.0, 1.0} and (summary["zz_sign_p"] <= 1).all()
    single = {**three_seeds, "runs": three_seeds["runs"][1:2]}  # the same file with one seed
    np.testing.assert_array_equal(memory_summary(single)["accuracy"][0.0, "invisible"],
                                  summary["accuracy"][0.0, "invisible"][1:2])  # fmt: skip


def test_seed_accuracies_picks_the_decoder_and_refuses_what_the_file_lacks(three_seeds):
    labels = seed_accuracies(three_seeds, split="labels", noise=0.3, when="A/B", features="visible")
    expected = [np.mean(run["accuracy"]["labels"]["0.3"]["A/B"]["visible"]) for run in three_seeds["runs"]]
    np.testing.assert_array_equal(labels, expected)
    with pytest.raises(ValueError, match=r"noise must be one of the file's noises \[0.0, 0.3\]"):
        seed_accuracies(three_seeds, noise=0.5)
    with pytest.raises(ValueError, match="when must be one of"):
        seed_accuracies(three_seeds, when="end")
    with pytest.raises(ValueError, match="split must be one of"):
        memory_summary(three_seeds, split="twins")


def test_qperp_differences_are_the_twins_gram_matrices_of_z_and_v_outside_span_m_u():
    """Against vectors: project z and v off span{m, u} and take their dot products over N."""
    rng = np.random.default_rng(3)
    N, pairs = 400, 2
    sigma = np.empty((2, pairs, len(OVERLAPS)))
    expected = np.empty((pairs, 3))
    for p in range(pairs):
        perps = []
        for twin in range(2):
            m, u, v, z = rng.standard_normal((4, N)) + rng.standard_normal(N) * 0.5
            sigma[twin, p] = overlaps(m, u, v, z)
            B = np.stack([m, u], 1)
            perp = [a - B @ np.linalg.lstsq(B, a, rcond=None)[0] for a in (z, v)]
            perps.append([perp[0] @ perp[0] / N, perp[0] @ perp[1] / N, perp[1] @ perp[1] / N])
        expected[p] = np.subtract(*perps)
    np.testing.assert_allclose(qperp_differences(sigma), expected, atol=1e-10)
    np.testing.assert_allclose(qperp_differences(sigma[None])[0], expected, atol=1e-10)
    with pytest.raises(ValueError, match=r"sigma must have shape \(\.\.\., 2, pairs, 10\)"):
        qperp_differences(sigma[:1])


def test_the_sign_test_is_the_binomial_tail_across_pairs():
    from math import comb

    from seqlearn.lowrank.memory_results import _sign_test

    assert _sign_test(-np.ones(10)) == pytest.approx(2 / 2**10)
    values = np.array([1.0, 2, 3, -1, 4, 5, 6, 0.0])  # 6 of 7 non-zero positive
    assert _sign_test(values) == pytest.approx(2 * (comb(7, 0) + comb(7, 1)) / 2**7)
    assert _sign_test(np.array([1.0, -1.0])) == 1.0


def test_the_module_command_still_runs_the_shipped_results():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "seqlearn.lowrank.memory_results", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--out" in done.stdout and "--seeds" in done.stdout


def test_a_diverging_network_stops_the_run_or_is_frozen_where_it_left():
    small = MemoryProtocol.paper(pairs=3, batch=4, dt=0.5, epochs_ab=5, epochs_c=30, eta_c=0.5, resamples=3,
                                 held_out=1, update="simultaneous")  # fmt: skip
    with pytest.raises(FloatingPointError, match="diverged='freeze'"):
        memory_experiment(protocol=small, rng=0, progress=False)
    run = memory_experiment(protocol=small.replace(diverged="freeze"), rng=0, progress=False)
    steady = memory_experiment(protocol=small.replace(diverged="freeze", eta_c=1e-3), rng=0, progress=False)
    assert run.diverged.all() and not steady.diverged.any()
    assert np.isfinite(run.sigma).all() and not run.gram_valid[2].any()
    broken = ~np.isfinite(run.loss)  # (epochs, 2, pairs): once non-finite, non-finite to the end
    first = broken.argmax(axis=0)
    assert all(broken[f:, i, p].all() for (i, p), f in np.ndenumerate(first))
    np.testing.assert_array_equal(run.sigma[1], steady.sigma[1])  # A/B is the same; only C diverged
    with pytest.raises(ValueError, match="diverged must be one of"):
        MemoryProtocol(diverged="stop")
