"""seqlearn.reservoir.memory: the batched sweep against reservoirs run one scaling at a time, and the bound MC <= N."""

import numpy as np
import pytest

from seqlearn.reservoir import EchoStateNetwork, memory_capacity
from seqlearn.reservoir.memory import iid_input, memory_sweep, orthogonal_reservoir
from seqlearn.rnn import orthogonal_matrix

N, T, WASHOUT = 10, 1200, 100
SCALES = np.array([0.01, 1.0, 4.0])


def test_the_reservoir_is_the_orthogonal_one():
    esn = orthogonal_reservoir(N, 0.9, seed=2, input_scaling=0.5)
    np.testing.assert_allclose(esn.W, orthogonal_matrix(N, 0.9, seed=2))
    np.testing.assert_allclose(np.linalg.svd(esn.W, compute_uv=False), 0.9)
    assert np.abs(esn.W_in).max() <= 0.5 and not esn.b.any()


def test_the_sweep_equals_one_reservoir_per_scaling():
    sweep = memory_sweep(N, SCALES, [0, 1], n_steps=T, washout=WASHOUT)
    assert sweep.tanh.shape == (2, 3) and sweep.linear.shape == (2,) and sweep.tanh_curves.shape == (3, 2 * N)
    for i, seed in enumerate((0, 1)):
        u = np.random.default_rng(seed).uniform(-0.5, 0.5, WASHOUT + T)
        for j, s in enumerate(SCALES):
            esn = EchoStateNetwork(1, N, spectral_radius=None, W=orthogonal_matrix(N, 0.9, seed=seed),
                                   bias_scaling=0.0, input_scaling=s, seed=seed)  # fmt: skip
            x, _ = esn.run(u)
            mc, r2 = memory_capacity(x[WASHOUT:], u[WASHOUT:], 2 * N)
            assert sweep.tanh[i, j] == pytest.approx(mc, rel=1e-9)
            if i == 0:
                np.testing.assert_allclose(sweep.tanh_curves[j], r2, rtol=1e-9, atol=1e-12)


def test_linear_memory_is_nearly_n_and_saturation_costs_memory():
    sweep = memory_sweep(N, SCALES, [0], n_steps=T, washout=WASHOUT)
    assert 0.8 * N < sweep.linear[0] <= N + 2 * N * 10 / T  # the bound, plus a generous finite-sample bias
    assert sweep.tanh[0, 0] == pytest.approx(sweep.linear[0], rel=0.02)  # tanh z ~ z for small inputs
    assert sweep.tanh[0, 2] < 0.7 * sweep.tanh[0, 0]
    assert sweep.linear_curve[0] > 0.8 and sweep.linear_curve[-1] < 0.1  # recent inputs are kept, old ones fade


def test_bad_input_is_refused():
    assert iid_input(5, 0).shape == (5,) and np.abs(iid_input(100, 1)).max() <= 0.5
    with pytest.raises(ValueError, match="scales"):
        memory_sweep(N, [0.0, 1.0], [0])
    with pytest.raises(ValueError, match="seeds is empty"):
        memory_sweep(N, SCALES, [])
    with pytest.raises(ValueError, match="radius"):
        orthogonal_reservoir(N, -1.0, 0)
