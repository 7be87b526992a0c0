"""seqlearn.reservoir.esn: the leaky echo state network and its ridge readout, against plain loops, closed
forms and the documented draws."""

import warnings

import numpy as np
import pytest

from seqlearn.reservoir import (
    EchoStateNetwork,
    IllConditionedWarning,
    nrmse,
    ridge_readout,
    spectral_radius,
)
from seqlearn.tasks import mackey_glass


def test_leaky_update_equals_a_plain_loop_and_streams():
    esn = EchoStateNetwork(2, 7, spectral_radius=0.8, leak_rate=0.3, bias_scaling=0.4, density=0.5, seed=1)
    u = np.random.default_rng(2).normal(size=(3, 12, 2))
    states, last = esn.run(u)
    for b in range(3):
        x = np.zeros(7)
        for t in range(12):
            x = 0.7 * x + 0.3 * np.tanh(esn.W_in @ u[b, t] + esn.W @ x + esn.b)
            np.testing.assert_allclose(states[b, t], x, rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(last, states[:, -1])
    first, mid = esn.run(u[0, :5])
    rest, _ = esn.run(u[0, 5:], x0=mid)  # streaming in chunks equals one run
    np.testing.assert_allclose(np.concatenate([first, rest]), states[0], rtol=1e-13)


@pytest.mark.parametrize("N", [30, 600])  # dense eigvals and ARPACK
def test_spectral_radius_of_the_scaled_reservoir_is_the_target(N):
    esn = EchoStateNetwork(1, N, spectral_radius=1.25, density=0.1, seed=3)
    assert np.abs(np.linalg.eigvals(esn.W)).max() == pytest.approx(1.25, rel=1e-8)
    assert spectral_radius(esn.W) == pytest.approx(1.25, rel=1e-8)
    assert (esn.W != 0).mean() == pytest.approx(0.1, abs=0.03)


def test_same_seed_same_network_and_no_global_rng():
    np.random.seed(0)  # noqa: NPY002
    a = EchoStateNetwork(1, 20, seed=5)
    np.random.seed(1)  # noqa: NPY002
    b = EchoStateNetwork(1, 20, seed=5)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.W_in, b.W_in)
    assert not np.array_equal(a.W, EchoStateNetwork(1, 20, seed=6).W)


def test_ridge_readout_equals_the_naive_closed_form():
    rng = np.random.default_rng(0)
    Z, Y = rng.normal(size=(15, 4)), rng.normal(size=(15, 2))
    for lam in (0.0, 1e-3, 2.5):
        naive = np.linalg.inv(Z.T @ Z + lam * np.eye(4)) @ Z.T @ Y
        np.testing.assert_allclose(ridge_readout(Z, Y, lam), naive, rtol=1e-10, atol=1e-12)


def test_fit_is_the_ridge_solution_on_post_washout_features():
    rng = np.random.default_rng(1)
    esn = EchoStateNetwork(1, 6, spectral_radius=0.9, ridge=1e-2, washout=5, density=1.0, seed=0)
    u, y = rng.normal(size=(2, 30, 1)), rng.normal(size=(2, 30, 1))
    esn.fit(u, y)
    X, _ = esn.run(u)
    Z = np.concatenate([np.ones((2, 30, 1)), u, X], axis=-1)[:, 5:].reshape(-1, 8)
    naive = np.linalg.inv(Z.T @ Z + 1e-2 * np.eye(8)) @ Z.T @ y[:, 5:].reshape(-1, 1)
    np.testing.assert_allclose(esn.W_out_, naive.T, rtol=1e-8, atol=1e-10)
    pred = esn.predict(u)
    assert pred.shape == (2, 30, 1)
    np.testing.assert_allclose(pred[:, 5:].reshape(-1, 1), Z @ naive, rtol=1e-8, atol=1e-10)


def test_mackey_glass_one_step_and_free_run():
    y = mackey_glass(3600, discard=100, squash=True)
    u, target = y[:-1], y[1:]
    esn = EchoStateNetwork(
        1, 300, spectral_radius=1.25, leak_rate=0.3, input_scaling=0.5, bias_scaling=0.5, density=1.0, seed=0
    )
    esn.fit(u[:2600], target[:2600])
    pred = esn.predict(u[2600:], x0=esn.last_state_[0])
    err, persistence = nrmse(target[2600:], pred), nrmse(target[2600:], u[2600:])
    assert err < 3e-3 and err < 0.1 * persistence  # measured 7.8e-4 with 3000 training steps
    free = esn.generate(84, u[:2601])
    assert free.shape == (84,)
    assert nrmse(target[2600:2684], free) < 0.1  # measured ~6e-3


def test_generate_teacher_forced_start_equals_predict():
    y = mackey_glass(600, discard=100, squash=True)
    esn = EchoStateNetwork(1, 50, spectral_radius=1.1, leak_rate=0.5, seed=2).fit(y[:-1], y[1:])
    assert esn.generate(1, y[:400])[0] == pytest.approx(esn.predict(y[:400])[-1], rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"leak_rate": 0.0}, ValueError, "leak_rate"),
        ({"leak_rate": 1.5}, ValueError, "leak_rate"),
        ({"ridge": -1.0}, ValueError, "ridge"),
        ({"hidden_size": 0}, ValueError, "hidden_size"),
        ({"hidden_size": 2.0}, TypeError, "hidden_size"),
        ({"spectral_radius": 0.0}, ValueError, "spectral_radius"),
        ({"density": 0.0}, ValueError, "density"),
        ({"input_scaling": -0.1}, ValueError, "input_scaling"),
        ({"washout": -1}, ValueError, "washout"),
        ({"activation": "relu"}, ValueError, "activation"),
        ({"seed": "x"}, TypeError, "seed"),
    ],
)
def test_impossible_hyperparameters(kwargs, error, match):
    args = {"input_size": 1, "hidden_size": 5, **kwargs}
    with pytest.raises(error, match=match):
        EchoStateNetwork(**args)


def test_usage_errors():
    esn = EchoStateNetwork(1, 5, washout=10, density=1.0, seed=0)
    with pytest.raises(ValueError, match=r"needs more than washout=10 steps, got 10"):
        esn.fit(np.zeros(10), np.zeros(10))
    with pytest.raises(RuntimeError, match="fit"):
        esn.predict(np.zeros(10))
    with pytest.raises(ValueError, match="features"):
        esn.run(np.zeros((10, 2)))
    with pytest.raises(ValueError, match="spectral radius 0"):
        EchoStateNetwork(1, 1, density=1e-9, seed=0)
    two = EchoStateNetwork(2, 5, washout=0, density=1.0, seed=0).fit(np.zeros((20, 2)) + 1e-3, np.ones((20, 1)))
    with pytest.raises(ValueError, match="as many outputs as inputs"):
        two.generate(3, np.zeros((4, 2)))


def test_ill_conditioned_ridge_problem_warns():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 1))
    Z = np.concatenate([z, z, rng.normal(size=(50, 1))], axis=1)  # two equal columns
    with pytest.warns(IllConditionedWarning, match="ridge"):
        W = ridge_readout(Z, rng.normal(size=50), 0.0)
    assert np.isfinite(W).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ridge_readout(Z, rng.normal(size=50), 1e-3)  # a ridge fixes it


@pytest.mark.integration
def test_importing_the_package_loads_neither_scipy_nor_torch():
    import subprocess
    import sys

    code = "import sys, seqlearn.reservoir; print(sorted({'scipy', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------- draws and validation


def test_default_draws_follow_the_documented_recipe():
    """Seeded networks are the documented draw (so results quoted from a seed stay put):
    mask U(0, 1) < density, values U(-1, 1), rescaled to rho; then W_in U(-s, s), b U(-s_b, s_b)."""
    N, rho, s, s_b = 50, 1.1, 0.7, 0.3
    esn = EchoStateNetwork(2, N, spectral_radius=rho, input_scaling=s, bias_scaling=s_b, density=0.2, seed=9)
    rng = np.random.default_rng(9)
    mask = rng.random((N, N)) < 0.2
    W = np.where(mask, rng.uniform(-1.0, 1.0, (N, N)), 0.0)
    W *= rho / np.abs(np.linalg.eigvals(W)).max()
    np.testing.assert_allclose(esn.W, W, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(esn.W_in, rng.uniform(-s, s, (N, 2)))
    np.testing.assert_array_equal(esn.b, rng.uniform(-s_b, s_b, N))


def test_bernoulli_inputs_and_normal_reservoir_weights():
    esn = EchoStateNetwork(
        1,
        300,
        spectral_radius=0.95,
        input_scaling=0.4,
        density=0.2,
        input_distribution="bernoulli",
        reservoir_distribution="normal",
        seed=0,
    )
    assert set(np.unique(esn.W_in)) == {-0.4, 0.4}
    assert 0.4 < (esn.W_in > 0).mean() < 0.6
    assert np.abs(np.linalg.eigvals(esn.W)).max() == pytest.approx(0.95, rel=1e-8)
    v = esn.W[esn.W != 0]
    kurtosis = ((v - v.mean()) ** 4).mean() / v.var() ** 2  # 3 for a normal, 1.8 for a uniform
    assert kurtosis == pytest.approx(3.0, abs=0.15)
    assert len(v) / esn.W.size == pytest.approx(0.2, abs=0.01)


def test_sparse_reservoir_update_equals_a_plain_loop():
    """From 400 units on a sparse W multiplies in CSR form: the same states as the dense loop."""
    esn = EchoStateNetwork(1, 450, spectral_radius=1.2, leak_rate=0.4, density=0.05, seed=4)
    u = np.random.default_rng(5).uniform(-1, 1, 60)
    states, _ = esn.run(u)
    x = np.zeros(450)
    for t in range(60):
        x = 0.6 * x + 0.4 * np.tanh(esn.W_in[:, 0] * u[t] + esn.W @ x + esn.b)
        np.testing.assert_allclose(states[t], x, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"spectral_radius": -1.0}, r"spectral_radius must be a finite real number > 0, got -1"),
        ({"spectral_radius": float("inf")}, r"spectral_radius must be a finite real number > 0"),
        ({"leak_rate": 0.0}, r"leak_rate must be a finite real number in \(0, 1\], got 0"),
        ({"leak_rate": 1.01}, r"leak_rate must be a finite real number in \(0, 1\], got 1.01"),
        ({"input_scaling": -0.5}, r"input_scaling must be a finite real number >= 0, got -0.5"),
        ({"bias_scaling": -0.5}, r"bias_scaling must be a finite real number >= 0, got -0.5"),
        ({"ridge": -1e-8}, r"ridge must be a finite real number >= 0, got -1e-08"),
        ({"ridge": float("nan")}, r"ridge must be a finite real number >= 0, got nan"),
        ({"density": 0.0}, r"density must be a finite real number in \(0, 1\], got 0"),
        ({"density": 1.5}, r"density must be a finite real number in \(0, 1\], got 1.5"),
        ({"washout": -1}, r"washout"),
        ({"input_distribution": "normal"}, r"input_distribution must be one of \['uniform', 'bernoulli'\]"),
        ({"reservoir_distribution": "bernoulli"}, r"reservoir_distribution must be one of \['uniform', 'normal'\]"),
        ({"device": "not-a-device"}, r"device='not-a-device' is not a device name"),
    ],
)
def test_out_of_range_hyperparameters_name_the_parameter_and_the_range(kwargs, match):
    with pytest.raises(ValueError, match=match):
        EchoStateNetwork(1, 5, **kwargs)


def test_a_sequence_no_longer_than_the_washout_is_refused():
    esn = EchoStateNetwork(1, 5, washout=20, density=1.0, seed=0)
    with pytest.raises(ValueError, match=r"fit needs more than washout=20 steps, got 20"):
        esn.fit(np.zeros(20), np.zeros(20))
    with pytest.raises(ValueError, match=r"fit needs more than washout=20 steps, got 7"):
        esn.fit(np.zeros((3, 7, 1)), np.zeros((3, 7, 1)))
    esn.fit(np.zeros(21) + 0.1, np.zeros(21))  # one step past the washout is enough


def test_fit_on_collinear_states_warns_ill_conditioned():
    """Zero input into a linear reservoir with no bias: every state is 0, Z^T Z is singular at ridge 0."""
    esn = EchoStateNetwork(1, 8, activation="identity", bias_scaling=0.0, ridge=0.0, washout=5, density=1.0, seed=0)
    with pytest.warns(IllConditionedWarning, match="ridge=0"):
        esn.fit(np.zeros(40), np.random.default_rng(0).normal(size=40))
    assert np.isfinite(esn.W_out_).all()


# ---------------------------------------------------------------------- the torch path


def _assert_paths_agree(device, N):
    """The torch path on ``device`` against the NumPy path: states, readout, predictions, free run."""
    kw = dict(spectral_radius=1.1, leak_rate=0.5, bias_scaling=0.3, density=0.1, ridge=1e-2, washout=50, seed=2)
    ref, dev = EchoStateNetwork(1, N, **kw), EchoStateNetwork(1, N, device=device, **kw)
    np.testing.assert_array_equal(dev.W, ref.W)  # the same draw
    y = mackey_glass(700, discard=100, squash=True)
    u = np.random.default_rng(3).uniform(-1, 1, (3, 40, 1))
    x0 = np.random.default_rng(4).uniform(-1, 1, (3, N))
    for got, want in zip(dev.run(u, x0), ref.run(u, x0)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    ref.fit(y[:-1], y[1:])
    dev.fit(y[:-1], y[1:])
    scale = np.abs(ref.W_out_).max()
    np.testing.assert_allclose(dev.W_out_, ref.W_out_, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(dev.last_state_, ref.last_state_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dev.predict(y[:200]), ref.predict(y[:200]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(dev.generate(50, y[:200]), ref.generate(50, y[:200]), rtol=0, atol=1e-10)
    assert isinstance(dev.predict(y[:10]), np.ndarray) and dev.predict(y[:10]).shape == (10,)


@pytest.mark.parametrize("N", [30, 450])  # NumPy: dense and CSR products
def test_torch_path_on_cpu_equals_the_numpy_path(N):
    _assert_paths_agree("cpu", N)


@pytest.mark.gpu
@pytest.mark.parametrize("N", [30, 450])
def test_torch_path_on_cuda_equals_the_numpy_path(N):
    _assert_paths_agree("cuda", N)


@pytest.mark.parametrize("device", [None, "cpu"])
def test_ridge_readout_on_either_path_equals_the_naive_closed_form(device):
    rng = np.random.default_rng(0)
    Z, Y = rng.normal(size=(15, 4)), rng.normal(size=(15, 2))
    for lam in (0.0, 1e-3, 2.5):
        naive = np.linalg.inv(Z.T @ Z + lam * np.eye(4)) @ Z.T @ Y
        got = ridge_readout(Z, Y, lam, device=device)
        assert isinstance(got, np.ndarray) and got.shape == (4, 2)
        np.testing.assert_allclose(got, naive, rtol=1e-10, atol=1e-12)
    assert ridge_readout(Z, Y[:, 0], 0.1, device=device).shape == (4,)


def test_ill_conditioned_ridge_problem_warns_on_the_torch_path_too():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 1))
    Z = np.concatenate([z, z, rng.normal(size=(50, 1))], axis=1)
    Y = rng.normal(size=50)
    with pytest.warns(IllConditionedWarning, match="ridge"):
        W = ridge_readout(Z, Y, 0.0, device="cpu")
    with pytest.warns(IllConditionedWarning):
        np.testing.assert_allclose(W, ridge_readout(Z, Y, 0.0), rtol=1e-8, atol=1e-10)


@pytest.mark.integration
def test_the_numpy_path_runs_without_torch():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from seqlearn.reservoir import EchoStateNetwork\n"
        "u = np.sin(np.arange(300) / 5)\n"
        "esn = EchoStateNetwork(1, 20, washout=20, seed=0).fit(u[:-1], u[1:])\n"
        "esn.predict(u[:50]); esn.generate(5, u[:50])\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
