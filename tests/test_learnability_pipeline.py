"""Chapter 5's Tier 2 pipeline: the delayed regression task, forward sensitivities, the matched
statistic, the envelope and master-law fits, and the diagnostics of trained networks.

References: the task's equation by a loop, finite differences for the JVP, a per-entry loop for
the matched statistic, closed-form envelopes, and the pipeline against itself (chunking, workers).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from seqlearn.learnability.effective_rates import envelope, transport
from seqlearn.learnability.fits import envelope_fits, fit_line, master_law_fit, unit_time_scales
from seqlearn.learnability.matched import (
    matched_statistic,
    matched_statistic_and_terms,
    matched_terms,
    random_directions,
    sensitivities,
    sensitivities_along,
)
from seqlearn.learnability.models import ARCHITECTURES, run
from seqlearn.learnability.pipeline import (
    Tier2Config,
    diagnose,
    learnability_experiment,
    read_networks,
    train_networks,
    write_networks,
)
from seqlearn.learnability.task import GatedRegressor, achievable_r2, delayed_regression, r2_score

SHIPPED_NETWORKS = Path(__file__).resolve().parents[1] / "chapters" / "results" / "05_tier2_networks.pt"
TINY = Tier2Config(
    T=16, D=3, H=6, task_lags=(2, 4), coeffs=(0.6, 0.4), n_train=64, n_val=32, n_diag=80, epochs=2,
    batch_size=32, lags=(1, 2, 3, 5, 8, 12), K=2, chunk=32,
)  # fmt: skip


# --- the task -------------------------------------------------------------------------------------


def test_targets_follow_the_equation_by_a_loop():
    task = delayed_regression(5, 12, D=3, lags=(2, 5), coeffs=(0.7, -0.3), noise_std=0.0, seed=3)
    x, y, u = task.x.double().numpy(), task.y.double().numpy(), task.u
    assert np.linalg.norm(u) == pytest.approx(1.0)
    expected = np.zeros((5, 12))
    for n in range(5):
        for t in range(12):
            for ell, c in ((2, 0.7), (5, -0.3)):
                if t >= ell:
                    expected[n, t] += c * u @ x[n, t - ell]
    np.testing.assert_allclose(y, expected, atol=1e-6)


def test_a_diagnostic_set_shares_the_direction_and_not_the_draws():
    train = delayed_regression(4, 40, seed=1)
    diag = delayed_regression(4, 40, seed=2, u=train.u)
    np.testing.assert_array_equal(diag.u, train.u)
    assert not torch.equal(diag.x, train.x)


def test_the_oracle_reaches_the_achievable_r2():
    task = delayed_regression(3000, 40, seed=0)
    p = task.x.double() @ torch.as_tensor(task.u)  # u^T x_t, (n, T)
    oracle = torch.zeros_like(p)
    for ell, c in zip(task.lags, task.coeffs):
        oracle[:, ell:] += c * p[:, :-ell]
    assert r2_score(oracle, task.y.double()) == pytest.approx(achievable_r2(task), abs=0.01)
    # by hand: Var y_t = 0.16 + sum of c^2 over the lags <= t, mean over t = 0..39
    var = [0.16 + sum(c**2 for ell, c in zip((4, 8, 16, 32), (0.6, 0.5, 0.4, 0.3)) if t >= ell) for t in range(40)]
    assert achievable_r2(task) == pytest.approx(1 - 0.16 / np.mean(var))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"lags": (4, 40)}, "lags"),
        ({"lags": (4, 8), "coeffs": (0.5,)}, "one length"),
        ({"noise_std": -1.0}, "noise_std"),
        ({"u": np.zeros(8)}, "non-zero"),
        ({"u": np.ones(3)}, "length D"),
    ],
)
def test_bad_task_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        delayed_regression(4, 40, **kwargs)


# --- the regressor and the forward sensitivities ----------------------------------------------------


def _model(arch: str, seed: int = 0) -> GatedRegressor:
    model = GatedRegressor(arch, 3, 5, s0=0.2, layernorm=True, seed=seed, dtype=torch.float64)
    with torch.no_grad():  # move every gate off its pinned start, so each term of the JVP counts
        for p in model.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(seed + p.numel()), dtype=p.dtype))
    return model


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_states_are_the_cells_trajectory_and_the_readout_reads_them(arch):
    model = _model(arch)
    x = torch.randn(4, 7, 3, dtype=torch.float64)
    h = model(x, states=True)
    full, bare = run(model.cell, x), run(model.cell, x, gates=False)
    assert torch.equal(h, full.h) and torch.equal(bare.h, full.h) and bare.gates == {}
    assert full.gates and (bare.c is None) == (full.c is None) and (arch != "lstm" or torch.equal(bare.c, full.c))
    torch.testing.assert_close(model(x), h[:, 1:] @ model.readout.weight[0] + model.readout.bias)
    assert model.architecture == arch


def test_the_readout_starts_as_a_unit_row():
    model = GatedRegressor("diag", 3, 7, seed=1)
    assert float(model.readout.weight.detach().norm()) == pytest.approx(1.0)
    assert float(model.readout.bias.detach()) == 0.0


def test_directions_are_unit_seeded_and_distinct():
    model = _model("gru")
    first, second = random_directions(model, 2, seed=5)
    again = random_directions(model, 1, seed=5)[0]
    assert math.sqrt(sum(float((t**2).sum()) for t in first.values())) == pytest.approx(1.0)
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["cell.W_hh"], second["cell.W_hh"])
    assert set(first) == {name for name, _ in model.named_parameters()}


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_sensitivities_equal_central_differences(arch):
    model = _model(arch, seed=2)
    x = torch.randn(3, 9, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    w = random_directions(model, 1, seed=1)[0]
    v = sensitivities(model, x, w)
    eps = 1e-6

    def shifted(sign: float) -> torch.Tensor:
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.add_(sign * eps * w[name])
            h = model(x, states=True)
            for name, p in model.named_parameters():
                p.sub_(sign * eps * w[name])
        return h

    finite = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
    assert v.shape == (3, 10, 5)
    assert float(v[:, 0].abs().max()) == 0.0  # h_0 is given
    torch.testing.assert_close(v, finite, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_sensitivities_along_several_directions_are_each_directions_own(arch):
    model = _model(arch, seed=3)
    x = torch.randn(4, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    directions = random_directions(model, 3, seed=2)
    v = sensitivities_along(model, x, directions)
    assert v.shape == (3, 4, 8, 5)
    for k, w in enumerate(directions):
        torch.testing.assert_close(v[k], sensitivities(model, x, w), atol=1e-13, rtol=1e-12)
    assert not torch.allclose(v[0], v[1])  # the directions are distinct, and so are their sensitivities


def test_sensitivities_along_refuse_no_directions():
    with pytest.raises(ValueError, match="directions"):
        sensitivities_along(_model("gru", seed=0), torch.zeros(1, 2, 3, dtype=torch.float64), [])


def _matched_pieces(B: int, T: int, H: int, n_lags: int) -> tuple[torch.Tensor, ...]:
    """Random float64 ``mu`` (B, n_lags, T, H), ``delta`` (B, T, H) and ``v`` (B, T + 1, H)."""
    g = torch.Generator().manual_seed(0)
    mu = torch.randn(B, n_lags, T, H, generator=g, dtype=torch.float64)
    delta = torch.randn(B, T, H, generator=g, dtype=torch.float64)
    return mu, delta, torch.randn(B, T + 1, H, generator=g, dtype=torch.float64)


def test_matched_statistic_is_the_sum_over_neurons_by_a_loop():
    B, T, H, lags = 2, 6, 3, [1, 2, 4]
    mu, delta, v = _matched_pieces(B, T, H, len(lags))
    psi = matched_statistic(mu, delta, v, lags)
    for b in range(B):
        for i, ell in enumerate(lags):
            for t in range(1, T + 1):
                if t - ell < 1:
                    assert math.isnan(psi[b, i, t - 1])
                else:
                    expected = sum(mu[b, i, t - 1, q] * delta[b, t - 1, q] * v[b, t - ell, q] for q in range(H))
                    assert float(psi[b, i, t - 1]) == pytest.approx(float(expected), rel=1e-12, abs=1e-14)
    with pytest.raises(ValueError, match="delta must be"):
        matched_statistic(mu, delta[:, :-1], v, lags)


def test_matched_terms_are_the_per_neuron_window_means_by_a_loop():
    B, T, H, lags = 3, 7, 4, [1, 2, 5]
    mu, delta, v = _matched_pieces(B, T, H, len(lags))
    phi = matched_terms(mu, delta, v, lags)
    assert phi.shape == (B, len(lags), H) and phi.dtype == torch.float64
    for n in range(B):
        for i, ell in enumerate(lags):
            for q in range(H):
                ends = range(ell + 1, T + 1)
                window = [float(mu[n, i, t - 1, q] * delta[n, t - 1, q] * v[n, t - ell, q]) for t in ends]
                assert float(phi[n, i, q]) == pytest.approx(sum(window) / len(window), rel=1e-12, abs=1e-15)
    psi = matched_statistic(mu, delta, v, lags)
    torch.testing.assert_close(phi.sum(-1), torch.nanmean(psi, dim=-1), rtol=1e-12, atol=1e-14)  # psi-bar
    both = matched_statistic_and_terms(mu, delta, v, lags)
    assert torch.equal(both[1], phi) and torch.equal(both[0].nan_to_num(), psi.nan_to_num())
    with pytest.raises(ValueError, match="delta must be"):
        matched_terms(mu, delta, v[:, :-1], lags)


# --- fits ---------------------------------------------------------------------------------------------


def test_fit_line_recovers_a_line_and_refuses_a_point():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    fit = fit_line(x, 3 * x - 2)
    assert (fit.slope, fit.intercept, fit.r2, fit.n) == (pytest.approx(3), pytest.approx(-2), pytest.approx(1), 4)
    with pytest.raises(ValueError, match="constant"):
        fit_line([2.0, 2.0], [1.0, 3.0])


def test_envelope_fits_name_the_class():
    lags = np.arange(2, 60)
    exponential, power = np.exp(-lags / 20.0), lags**-0.7
    fits_e, fits_p = envelope_fits(lags, exponential), envelope_fits(lags, power)
    assert fits_e["exponential"].slope == pytest.approx(-1 / 20)
    assert fits_e["exponential"].r2 == pytest.approx(1.0) and fits_e["power"].r2 < 0.99
    assert fits_p["power"].slope == pytest.approx(-0.7)
    assert fits_p["power"].r2 == pytest.approx(1.0) and fits_p["exponential"].r2 < 0.99


def test_unit_time_scales_are_minus_one_over_log_retention():
    s = np.array([0.05, 0.2, 0.5])
    lags = np.arange(1, 12)
    mass = (1 - s[None, :]) ** lags[:, None]
    mass = np.column_stack([mass, np.ones(lags.size)])  # a neuron that does not decay
    tau = unit_time_scales(lags, mass)
    np.testing.assert_allclose(tau[:3], -1 / np.log1p(-s))
    assert tau[3] == np.inf


def test_master_law_fit_has_slope_one_on_the_law_itself():
    f = np.geomspace(1.0, 1e-2, 12)
    alpha = np.full(12, 1.5)  # kappa = 3
    N_req = np.round(5.0 * f**-3).astype(int)
    fit = master_law_fit(f, alpha, N_req)
    assert fit.slope == pytest.approx(1.0, abs=1e-3) and fit.r2 > 0.9999
    with pytest.raises(ValueError, match="too few"):
        master_law_fit(f, alpha, np.full(12, -1))


# --- diagnostics -------------------------------------------------------------------------------------


def _trained(arch: str = "diag"):
    from seqlearn.learnability.task import train_regressor

    train = delayed_regression(64, 16, D=3, lags=(2, 4), coeffs=(0.6, 0.4), seed=0)
    diag = delayed_regression(70, 16, D=3, lags=(2, 4), coeffs=(0.6, 0.4), seed=1, u=train.u)
    model = GatedRegressor(arch, 3, 6, seed=0)
    _, optimizer = train_regressor(model, train, diag, epochs=2, batch_size=32, progress=False)
    return model, optimizer, diag


def test_diagnostics_do_not_depend_on_the_chunk_size():
    model, optimizer, diag = _trained()
    lags = [1, 2, 3, 5, 8]
    a = diagnose(model, optimizer, diag, lags, K=2, chunk=70, progress=False)
    b = diagnose(model, optimizer, diag, lags, K=2, chunk=9, progress=False)
    for name in ("f", "f_gates", "unit_mass", "mean", "alpha", "sigma", "alpha_instantaneous"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-5, err_msg=name)  # float32 sums
    np.testing.assert_allclose(a.unit_terms, b.unit_terms, rtol=1e-5, atol=1e-6 * np.abs(a.unit_terms).max())


def test_unit_terms_sum_to_the_per_sequence_samples():
    from seqlearn.learnability.stable import ecf_alpha

    model, optimizer, diag = _trained("gru")
    lags = [1, 2, 3, 5, 8]
    d = diagnose(model, optimizer, diag, lags, K=3, chunk=32, progress=False)
    assert d.unit_terms.shape == (70, len(lags), 6) and d.unit_terms.dtype == np.float64
    samples = d.unit_terms.sum(-1)  # (n_seq, n): psi-bar_n, sum over neurons of the terms
    np.testing.assert_allclose(samples.mean(0), d.mean, rtol=1e-12, atol=1e-12 * np.abs(d.unit_terms).max())
    for i in range(len(lags)):  # the ECF fit of the same samples: alpha and sigma of the per-sequence statistic
        fit = ecf_alpha(samples[:, i])
        assert (fit.alpha, fit.sigma) == (pytest.approx(d.alpha[i], rel=1e-9), pytest.approx(d.sigma[i], rel=1e-9))
    test = d.master_law_test(n_null=3)
    assert test.eps == d.eps and test.null_slopes.shape == (3,) and test.oriented.mean.shape == (len(lags),)
    np.testing.assert_allclose(test.naive.mean, d.mean, rtol=1e-12, atol=1e-12 * np.abs(d.unit_terms).max())


def test_sgd_envelope_is_the_transport_envelope_and_the_const_gate_part_is_exact():
    model = GatedRegressor("const", 3, 6, s0=0.1, seed=0, dtype=torch.float64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    diag = delayed_regression(40, 16, D=3, lags=(2, 4), coeffs=(0.6, 0.4), seed=1)
    lags = [1, 2, 4, 7]
    d = diagnose(model, optimizer, diag, lags, K=1, chunk=16, progress=False)
    traj = run(model.cell, diag.x.double())
    np.testing.assert_allclose(d.f, envelope(transport(traj, lags), lr=0.01).numpy(), rtol=1e-10)
    np.testing.assert_allclose(d.f_gates, 0.01 * 6 * 0.9 ** np.array(lags), rtol=1e-12)


def test_experiment_outputs_are_sane_and_workers_do_not_change_them():
    one = learnability_experiment(ARCHITECTURES, seeds=(0,), config=TINY, workers=1, progress=False)
    two = learnability_experiment(ARCHITECTURES, seeds=(0,), config=TINY, workers=2, progress=False)
    assert list(one) == [(a, 0) for a in ARCHITECTURES]
    for key, d in one.items():
        for name in ("f", "mean", "alpha"):  # float32 models: sums in another order on other threads
            np.testing.assert_allclose(getattr(d, name), getattr(two[key], name), rtol=1e-4, err_msg=name)
        assert d.architecture == key[0]
        assert np.all(np.isfinite(d.f)) and np.all(d.f > 0) and np.all(d.f_gates > 0)
        assert np.all((d.alpha >= 1) & (d.alpha <= 2)) and np.all(
            (d.alpha_instantaneous >= 1) & (d.alpha_instantaneous <= 2)
        )
        assert np.all(np.diff(d.H_N) >= 0) and d.H_N.max() <= max(TINY.lags)
        assert np.all(np.isin(d.N_req, np.append(d.N_grid, -1)))
        assert d.N_grid.max() <= 2 * TINY.n_diag
        assert len(d.train_loss) == TINY.epochs and d.seconds["training"] > 0
    # the const gate's envelope decays at its rate, -ln(1 - s0) = 0.0513 per step, to first order
    const = one[("const", 0)].envelope_fits()["exponential"]
    assert const.slope == pytest.approx(math.log(0.95), abs=0.02)


def test_a_seed_trained_beside_others_is_the_seed_trained_alone():
    """Each architecture's seeds are one ensemble (three jobs on two workers: const's seeds one job each)."""
    archs = ("lstm", "const", "gru")  # the jobs run heaviest first; the keys come back in the order asked
    both = learnability_experiment(archs, seeds=(2, 1), config=TINY, workers=2, progress=False)
    alone = learnability_experiment(archs, seeds=(1,), config=TINY, progress=False)
    assert list(both) == [(a, s) for s in (2, 1) for a in archs]
    for key, d in alone.items():
        np.testing.assert_allclose(both[key].train_loss, d.train_loss, rtol=1e-6)
        np.testing.assert_allclose(both[key].f, d.f, rtol=1e-5)
        assert both[key].r2 == pytest.approx(d.r2, rel=1e-5)
        assert both[key].seconds["training"] > 0
    assert not np.allclose(both["lstm", 2].train_loss, both["lstm", 1].train_loss)  # each seed its own data


def test_networks_trained_apart_and_read_back_are_diagnosed_as_if_trained_here(tmp_path):
    archs = ("gru", "const")
    here = learnability_experiment(archs, seeds=(0, 1), config=TINY, progress=False)
    networks = train_networks(archs, seeds=(0, 1), config=TINY, progress=False)
    path = write_networks(tmp_path / "networks.pt", networks, TINY, {"command": "a test"})
    config, read, metadata = read_networks(path)
    assert config == TINY and metadata == {"command": "a test"} and list(read) == list(networks)
    for key, net in read.items():
        for name, tensor in net.model.items():
            assert torch.equal(tensor, networks[key].model[name])
    apart = learnability_experiment(archs, seeds=(0, 1), config=config, workers=2, progress=False, networks=read)
    assert list(apart) == list(here)
    for key, d in here.items():
        assert apart[key].train_loss == d.train_loss and apart[key].val_loss == d.val_loss
        for name in ("f", "unit_mass", "mean", "alpha", "sigma", "alpha_instantaneous", "unit_terms", "N_req"):
            np.testing.assert_array_equal(getattr(apart[key], name), getattr(d, name), err_msg=name)
        assert apart[key].r2 == d.r2


def test_the_shipped_networks_are_the_chapters():
    """chapters/results/05_tier2_networks.pt: Tier2Config(), every architecture for seeds 0 and 1, complete."""
    config, networks, metadata = read_networks(SHIPPED_NETWORKS)
    assert config == Tier2Config() and "train_networks" in metadata["command"]
    assert set(networks) == {(a, s) for a in ARCHITECTURES for s in (0, 1)}
    for (arch, s), net in networks.items():
        model = GatedRegressor(arch, config.D, config.H, s0=config.s0, layernorm=config.layernorm, seed=s)
        model.load_state_dict(net.model)  # strict: exactly the architecture's parameters
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        optimizer.load_state_dict(net.optimizer)
        assert len(net.train_loss) == len(net.val_loss) == config.epochs and net.seconds > 0


def test_bad_networks_are_refused(tmp_path):
    networks = train_networks(("const",), seeds=(0,), config=TINY, progress=False)
    with pytest.raises(ValueError, match="networks has no trained network"):
        learnability_experiment(("const",), seeds=(0, 1), config=TINY, progress=False, networks=networks)
    with pytest.raises(TypeError, match="config must be a Tier2Config"):
        write_networks(tmp_path / "n.pt", networks, {"T": 16})
    with pytest.raises(ValueError, match="non-empty"):
        write_networks(tmp_path / "n.pt", {}, TINY)
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a file of trained networks"):
        read_networks(tmp_path / "other.pt")
    with pytest.raises(ValueError, match="exactly the fields"):
        Tier2Config.from_dict({"T": 16})


def test_shipped_networks_serve_a_config_that_changes_only_the_diagnostics():
    """Another eps, K or set of lags reads the shipped networks; another H, T or epochs is refused by name."""
    for config in (Tier2Config(eps=10.0), Tier2Config(K=2, lags=(2, 4)), Tier2Config(n_diag=256, chunk=64)):
        trained, _, _ = read_networks(SHIPPED_NETWORKS, config=config)
        assert trained == Tier2Config() and config.training_differences(trained) == []
    for config, field in ((Tier2Config(H=64), "H: 64 vs 32"), (Tier2Config(epochs=10), "epochs: 10 vs 50")):
        with pytest.raises(ValueError, match=f"trained otherwise.*{field}"):
            read_networks(SHIPPED_NETWORKS, config=config)
    assert Tier2Config(T=32, lr=1e-3).training_differences(Tier2Config()) == ["T: 32 vs 64", "lr: 0.001 vs 0.005"]
    with pytest.raises(TypeError, match="other must be a Tier2Config"):
        Tier2Config().training_differences({"T": 64})


def test_config_a_is_the_papers_first_full_run():
    a = Tier2Config.config_a()
    assert (a.T, a.D, a.H, a.task_lags, a.noise_std, a.epochs, a.batch_size, a.lr) == (
        1024, 16, 128, (32, 64, 128, 192, 256), 0.3, 750, 512, 1e-3,
    )  # fmt: skip
    assert min(a.lags) == 4 and max(a.lags) == 256 and len(a.lags) == 128


def test_bad_pipeline_input_is_refused():
    with pytest.raises(TypeError, match="GatedRegressor"):
        diagnose(torch.nn.Linear(2, 2), None, delayed_regression(4, 8, lags=(2,), coeffs=(1.0,)), [1])
    with pytest.raises(ValueError, match="architecture"):
        learnability_experiment(["elman"], config=TINY, progress=False)
    with pytest.raises(TypeError, match="Tier2Config"):
        learnability_experiment(config={"T": 16}, progress=False)
    with pytest.raises(ValueError, match="distinct"):
        learnability_experiment(["const"], seeds=(1, 1), config=TINY, progress=False)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_diagnostics_equal_the_cpu_ones():
    """The same float64 model diagnosed on either device: the envelope, the statistics, N_req."""
    diag = delayed_regression(48, 16, D=3, lags=(2, 4), coeffs=(0.6, 0.4), seed=1)
    lags = [1, 2, 4, 7]
    results = []
    for device in ("cpu", "cuda"):
        model = GatedRegressor("lstm", 3, 6, seed=0, dtype=torch.float64, device=device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        results.append(diagnose(model, optimizer, diag, lags, K=2, chunk=16, progress=False))
    cpu, gpu = results
    for name in ("f", "f_gates", "unit_mass", "mean", "alpha", "sigma", "unit_terms"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(cpu, name), rtol=1e-7, err_msg=name)
