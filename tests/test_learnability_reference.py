"""Chapter 5's exercise references (seqlearn.learnability.reference) against the package's implementations.

The transport factors against :func:`seqlearn.learnability.effective_rates.transport` on float64 torch
trajectories of a ConstGate and a DiagGate with drawn gate weights; the ECF estimate against
:func:`~seqlearn.learnability.stable.ecf_alpha` on stable samples; the window against
:func:`~seqlearn.learnability.window.learnability_window` and the closed forms against
:func:`~seqlearn.learnability.window.window_exponential` / ``window_power`` and the brief's numbers.
Then the bad inputs each refuses, and the guard.
"""

import math

import numpy as np
import pytest
import torch

from seqlearn.guard import ReferenceCallError, student_code
from seqlearn.learnability import reference as ref
from seqlearn.learnability.effective_rates import transport
from seqlearn.learnability.models import ConstGate, DiagGate, run
from seqlearn.learnability.stable import ecf_alpha, kappa, sample_stable
from seqlearn.learnability.window import learnability_window, window_exponential, window_power

F64 = {"dtype": torch.float64, "device": "cpu"}
LAGS = [1, 2, 5, 11, 12]


def _trajectory(cell, T=12, seed=3):
    x = torch.randn(1, T, cell.input_size, generator=torch.Generator().manual_seed(seed), **F64)
    with torch.no_grad():
        return run(cell, x)


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _diag_gate(H=4, seed=1):
    """A DiagGate with drawn gate weights W_s, U_s and per-neuron biases: every term of rho is exercised."""
    cell = DiagGate(3, H, s0=0.2, seed=seed, **F64)
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        cell.W_s.copy_(0.5 * torch.randn(cell.W_s.shape, generator=g, **F64))
        cell.U_s.copy_(0.8 * torch.randn(cell.U_s.shape, generator=g, **F64))
        cell.b_s.copy_(torch.linspace(-2.5, 0.5, H, **F64))
    return cell


# ----------------------------------------------------------------------------- Gamma


@pytest.mark.parametrize("s0", [0.05, 0.3, 0.8])
def test_gamma_const_equals_transport_on_a_constgate_trajectory(s0):
    cell = ConstGate(3, 5, s0=s0, seed=2, **F64)
    with torch.no_grad():
        cell.W_h.mul_(1.5)  # a strong diagonal: rho matters
    traj = _trajectory(cell)
    expected = _numpy(transport(traj, LAGS))[0]  # (n, T, H)
    got = ref.gamma_const(s0, _numpy(traj.gates["h_tilde"][0]), _numpy(torch.diagonal(cell.W_h)), LAGS)
    assert got.shape == expected.shape == (len(LAGS), 12, 5) and got.dtype == np.float64
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("seed", [1, 2])
def test_gamma_diag_equals_transport_on_a_diaggate_trajectory(seed):
    cell = _diag_gate(seed=seed)
    traj = _trajectory(cell, seed=seed)
    s = _numpy(traj.gates["s"][0])
    assert s.std(axis=0).min() > 1e-3 and np.ptp(s.mean(axis=0)) > 0.1, "gates vary over time and across neurons"
    expected = _numpy(transport(traj, LAGS))[0]
    got = ref.gamma_diag(
        s,
        _numpy(traj.gates["h_tilde"][0]),
        _numpy(traj.h[0, :-1]),  # h_{k-1} for the steps k = 1..T
        _numpy(torch.diagonal(cell.W_h)),
        _numpy(torch.diagonal(cell.U_s)),
        LAGS,
    )
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)
    zero_order = _numpy(transport(traj, LAGS, order=0))[0]
    assert not np.allclose(got, zero_order, equal_nan=True), "the first-order term is not negligible here"


def test_gamma_of_a_constant_gate_without_recurrence_is_the_gate_product():
    h_tilde = np.tanh(np.random.default_rng(0).normal(size=(6, 3)))
    got = ref.gamma_const(0.25, h_tilde, np.zeros(3), [1, 3, 6])
    for i, ell in enumerate([1, 3, 6]):
        assert np.all(np.isnan(got[i, : ell - 1]))
        np.testing.assert_allclose(got[i, ell - 1 :], 0.75**ell, rtol=1e-14)


def test_gamma_diag_with_a_constant_gate_and_no_gate_coupling_is_gamma_const():
    rng = np.random.default_rng(1)
    h_tilde, h_prev, w = np.tanh(rng.normal(size=(7, 2))), rng.uniform(-1, 1, (7, 2)), rng.normal(size=2)
    diag = ref.gamma_diag(np.full((7, 2), 0.4), h_tilde, h_prev, w, np.zeros(2), [2, 7, 1])
    np.testing.assert_allclose(diag, ref.gamma_const(0.4, h_tilde, w, [2, 7, 1]), rtol=1e-14, equal_nan=True)


# ----------------------------------------------------------------------------- alpha and kappa


@pytest.mark.parametrize("alpha", [1.0, 1.2, 1.5, 1.8, 2.0])
def test_the_ecf_estimate_equals_ecf_alpha_on_20000_stable_samples(alpha):
    x = 3.0 + sample_stable(alpha, 20_000, scale=0.7, rng=np.random.default_rng(int(10 * alpha)))
    fit = ecf_alpha(x)
    assert fit.method == "ecf"
    got = ref.ecf_alpha_estimate(x)
    assert isinstance(got, float) and got == pytest.approx(fit.alpha, rel=1e-12, abs=1e-12)
    assert got == pytest.approx(alpha, abs=0.06)


@pytest.mark.parametrize("alpha", [1.01, 1.25, 1.5, 2.0])
def test_kappa_alpha_is_kappa(alpha):
    assert ref.kappa_alpha(alpha) == kappa(alpha) == pytest.approx(alpha / (alpha - 1))


# ----------------------------------------------------------------------------- the window


def test_window_from_table_equals_learnability_window():
    rng = np.random.default_rng(0)
    for _ in range(200):
        L = int(rng.integers(1, 10))
        lags = rng.permutation(np.arange(1, 40))[:L]
        N_req = np.where(rng.random(L) < 0.3, -1, rng.integers(1, 200, L))
        N = rng.integers(1, 300, size=int(rng.integers(1, 5)))
        assert np.array_equal(ref.window_from_table(lags, N_req, N), learnability_window(lags, N_req, N))
        assert ref.window_from_table(lags, N_req, int(N[0])) == learnability_window(lags, N_req, int(N[0]))


def test_window_from_table_takes_the_largest_qualifying_lag_of_a_non_contiguous_set():
    lags, N_req = np.array([8, 3, 1, 5, 2]), np.array([500, 30, 4, 12, -1])
    H = ref.window_from_table(lags, N_req, np.array([3, 4, 12, 29, 30, 10**9]))
    assert H.dtype == np.int64 and H.tolist() == [0, 1, 5, 5, 5, 8]
    assert ref.window_from_table(lags, N_req, 20) == 5 and isinstance(ref.window_from_table(lags, N_req, 20), int)
    assert ref.window_from_table([1], [-1], 10**9) == 0


@pytest.mark.parametrize(
    ("envelope", "param", "alpha", "expected"),
    [
        ("exponential", 20.0, 2.0, 92.1),
        ("exponential", 20.0, 1.5, 61.4),
        ("power", 1.0, 2.0, 100.0),
        ("power", 1.0, 1.5, 21.5),
    ],
)
def test_the_closed_forms_give_the_briefs_numbers(envelope, param, alpha, expected):
    h_n = ref.window_closed_form(1e4, envelope, param, alpha)
    assert isinstance(h_n, float) and h_n == pytest.approx(expected, abs=0.05)


def test_the_closed_forms_equal_window_exponential_and_window_power():
    N = np.array([1.0, 7.0, 1e3, 2.5e5])
    for alpha in (1.1, 1.5, 2.0):
        np.testing.assert_allclose(
            ref.window_closed_form(N, "exponential", 13.0, alpha), window_exponential(N, 13.0, alpha), rtol=1e-14
        )
        np.testing.assert_allclose(
            ref.window_closed_form(N, "power", 0.7, alpha), window_power(N, 0.7, alpha), rtol=1e-14
        )
        assert ref.window_closed_form(N, "exponential", 13.0, alpha)[2] == pytest.approx(
            13.0 / kappa(alpha) * math.log(1e3)
        )
    assert ref.window_closed_form(N, "power", 1.0, 2.0).shape == (4,)


# ----------------------------------------------------------------------------- bad input

CONST = {"s": 0.5, "h_tilde": np.zeros((3, 2)), "w_hh_diag": np.ones(2), "lags": [1, 2]}
DIAG = {
    "s": np.full((3, 2), 0.5),
    "h_tilde": np.zeros((3, 2)),
    "h_prev": np.zeros((3, 2)),
    "w_hh_diag": np.ones(2),
    "u_s_diag": np.ones(2),
    "lags": [1, 2],
}


@pytest.mark.parametrize(
    ("function", "kwargs", "error", "match"),
    [
        (ref.kappa_alpha, {"alpha": 1.0}, ValueError, "alpha"),
        (ref.kappa_alpha, {"alpha": 2.5}, ValueError, "alpha"),
        (ref.kappa_alpha, {"alpha": "1.5"}, TypeError, "alpha"),
        (ref.ecf_alpha_estimate, {"x": np.ones(19)}, ValueError, "at least 20"),
        (
            ref.ecf_alpha_estimate,
            {"x": np.r_[-np.arange(1.0, 21.0), np.zeros(60), np.arange(1.0, 21.0)]},
            ValueError,
            "interquartile",
        ),
        (ref.ecf_alpha_estimate, {"x": np.ones((5, 5))}, ValueError, "x must be 1-D"),
        (ref.ecf_alpha_estimate, {"x": np.r_[np.nan, np.arange(30.0)]}, ValueError, "x must be finite"),
        (ref.gamma_const, {**CONST, "s": 1.0}, ValueError, "s must be"),
        (ref.gamma_const, {**CONST, "s": 0.0}, ValueError, "s must be"),
        (ref.gamma_const, {**CONST, "lags": [0]}, ValueError, "lags"),
        (ref.gamma_const, {**CONST, "lags": [4]}, ValueError, "lags"),
        (ref.gamma_const, {**CONST, "lags": [1.5]}, TypeError, "lags"),
        (ref.gamma_const, {**CONST, "w_hh_diag": np.ones(3)}, ValueError, "w_hh_diag"),
        (ref.gamma_const, {**CONST, "h_tilde": np.zeros(3)}, ValueError, "h_tilde"),
        (ref.gamma_const, {**CONST, "h_tilde": np.full((3, 2), 1.5)}, ValueError, "h_tilde"),
        (ref.gamma_const, {**CONST, "h_tilde": np.zeros((0, 2))}, ValueError, "h_tilde"),
        (ref.gamma_diag, {**DIAG, "s": np.full((3, 2), 1.0)}, ValueError, "s must hold write gates"),
        (ref.gamma_diag, {**DIAG, "s": np.full((2, 2), 0.5)}, ValueError, "s must have shape"),
        (ref.gamma_diag, {**DIAG, "h_prev": np.zeros((3, 3))}, ValueError, "h_prev"),
        (ref.gamma_diag, {**DIAG, "u_s_diag": np.ones(1)}, ValueError, "u_s_diag"),
        (ref.window_from_table, {"lags": [1, 2], "N_req": [3], "N": 5}, ValueError, "N_req"),
        (ref.window_from_table, {"lags": [0, 2], "N_req": [3, 4], "N": 5}, ValueError, "lags"),
        (ref.window_from_table, {"lags": [1, 2], "N_req": [3, -2], "N": 5}, ValueError, "N_req"),
        (ref.window_from_table, {"lags": [1, 2], "N_req": [3.5, 4], "N": 5}, TypeError, "N_req"),
        (
            ref.window_closed_form,
            {"N": 1e4, "envelope": "logarithmic", "param": 1.0, "alpha": 1.5},
            ValueError,
            "envelope",
        ),
        (ref.window_closed_form, {"N": 1e4, "envelope": 1, "param": 1.0, "alpha": 1.5}, TypeError, "envelope"),
        (ref.window_closed_form, {"N": 1e4, "envelope": "power", "param": 0.0, "alpha": 1.5}, ValueError, "param"),
        (ref.window_closed_form, {"N": 1e4, "envelope": "power", "param": 1.0, "alpha": 1.0}, ValueError, "alpha"),
        (ref.window_closed_form, {"N": 0.5, "envelope": "power", "param": 1.0, "alpha": 1.5}, ValueError, "N must"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(function, kwargs, error, match):
    with pytest.raises(error, match=match):
        function(**kwargs)


def test_the_ecf_estimate_refuses_too_few_points_in_the_band(monkeypatch):
    """Real data hardly reach this branch (the grid is scaled by the IQR), so |phi|^2 is replaced by a steep drop."""
    from seqlearn.learnability import stable

    x = sample_stable(1.5, 500, rng=np.random.default_rng(0))
    for inside, raises in ((4, True), (5, False)):
        steep = np.r_[np.ones(20), np.linspace(0.9, 0.02, inside), np.full(30 - inside, 1e-3)]
        monkeypatch.setattr(stable, "_ecf_squared_modulus", lambda x, t, steep=steep: steep)
        if raises:
            with pytest.raises(ValueError, match=r"at least 5 grid points with 0\.01 < \|phi\|\^2 < 0\.95, got 4"):
                ref.ecf_alpha_estimate(x)
        else:
            assert 1.0 <= ref.ecf_alpha_estimate(x) <= 2.0


@pytest.mark.parametrize("name", ref.__all__)
def test_every_reference_refuses_to_run_in_a_graded_answer(name):
    function = getattr(ref, name)
    assert function.__seqlearn_reference__
    with student_code(), pytest.raises(ReferenceCallError, match=name):
        function()


@pytest.mark.parametrize(
    "module, name",
    [
        ("stable", "kappa"),
        ("stable", "ecf_alpha"),
        ("window", "learnability_window"),
        ("window", "window_exponential"),
        ("window", "window_power"),
        ("effective_rates", "transport"),
    ],
)
def test_the_package_functions_the_exercises_repeat_refuse_too(module, name):
    """Otherwise an answer could delegate to the package and pass the notebook's own test cells."""
    import importlib

    function = getattr(importlib.import_module(f"seqlearn.learnability.{module}"), name)
    with student_code(), pytest.raises(ReferenceCallError, match=name):
        function()
