"""seqlearn.reservoir.diagnostics: the echo state property, memory capacity and NRMSE, against
contractions, delay lines and closed forms."""

import numpy as np
import pytest

from seqlearn.reservoir import EchoStateNetwork, echo_state_distance, memory_capacity, nrmse


def _orthogonal(N, seed=0):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((N, N)))
    return Q


def test_echo_state_property_contraction_and_its_failure():
    rng = np.random.default_rng(0)
    W = 0.9 * _orthogonal(40)  # sigma_max = 0.9 < 1: a contraction for any input
    esn = EchoStateNetwork(1, 40, spectral_radius=None, W=W, leak_rate=0.5, seed=1)
    d = echo_state_distance(esn, rng.uniform(-1, 1, 500), seed=2)
    assert d.shape == (501,) and d[0] > 1 and d[-1] < 1e-8
    assert (np.diff(d) <= 1e-12).all()
    big = EchoStateNetwork(1, 40, spectral_radius=1.5, bias_scaling=0.0, seed=1)
    states, _ = big.run(np.zeros(300), x0=np.full(40, 0.5))
    assert np.linalg.norm(states[-1]) > 0.1  # zero input, rho > 1: the state does not collapse to 0


def _mc(N, activation, scale, T=6000):
    esn = EchoStateNetwork(
        1,
        N,
        spectral_radius=None,
        W=0.9 * _orthogonal(N),
        input_scaling=scale,
        bias_scaling=0.0,
        activation=activation,
        seed=1,
    )
    u = np.random.default_rng(2).uniform(-0.5, 0.5, T + 1000)
    X, _ = esn.run(u)
    return memory_capacity(X[1000:], u[1000:], 2 * N)


def test_memory_capacity_of_a_linear_reservoir_approaches_N_and_tanh_loses_it():
    N = 30
    mc, mc_k = _mc(N, "identity", 0.1)
    assert 0.9 * N <= mc <= N + 0.5 and mc_k.shape == (2 * N,)
    assert mc_k[0] > 0.99 and (mc_k >= 0).all() and (mc_k <= 1).all()
    assert _mc(N, "tanh", 1.0)[0] < 0.7 * N


def test_memory_capacity_of_a_perfect_delay_line():
    u = np.random.default_rng(0).uniform(-1, 1, 3000)
    X = np.stack([np.roll(u, k) for k in range(5)], axis=1)  # x_t = (u_t, ..., u_{t-4})
    mc, mc_k = memory_capacity(X, u, 8)
    assert mc_k[:4] == pytest.approx(np.ones(4), abs=1e-12)
    assert mc == pytest.approx(4.0, abs=0.05)


def test_nrmse():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    assert nrmse(y, y) == 0.0
    assert nrmse(y, np.full(4, y.mean())) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same shape"):
        nrmse(y, y[:3])
