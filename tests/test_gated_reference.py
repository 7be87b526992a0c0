"""Chapter 4's NumPy exercise references (seqlearn.gated.reference) against torch.nn and the echo state network."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from seqlearn.gated import reference as ref
from seqlearn.guard import REFUSAL, ReferenceCallError, student_code
from seqlearn.reservoir import EchoStateNetwork, memory_capacity, ridge_readout


def _torch_params(module, n_gates, H, D):
    p = {name: t.detach().numpy().copy() for name, t in module.named_parameters()}
    assert p["weight_ih_l0"].shape == (n_gates * H, D) and p["weight_hh_l0"].shape == (n_gates * H, H)
    return p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]


@pytest.mark.parametrize(("B", "D", "H"), [(3, 5, 4), (1, 1, 1), (2, 3, 6)])
def test_lstm_step_equals_torch_lstm_over_a_sequence(B, D, H):
    torch.manual_seed(B + D + H)
    lstm = torch.nn.LSTM(D, H, dtype=torch.float64)
    with torch.no_grad():  # spread the parameters so that every gate saturates somewhere
        for p in lstm.parameters():
            p.mul_(3.0)
    x = torch.randn(7, B, D, dtype=torch.float64)
    h0, c0 = torch.randn(1, B, H, dtype=torch.float64), torch.randn(1, B, H, dtype=torch.float64)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    params = _torch_params(lstm, 4, H, D)
    h, c = h0[0].numpy(), c0[0].numpy()
    for t in range(7):
        h, c = ref.lstm_step(x[t].numpy(), h, c, *params)
        np.testing.assert_allclose(h, out[t].detach().numpy(), rtol=0, atol=1e-12)
        assert h.dtype == c.dtype == np.float64 and h.shape == c.shape == (B, H)
    np.testing.assert_allclose(h, h_n[0].detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(c, c_n[0].detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("B", "D", "H"), [(3, 5, 4), (1, 1, 1), (2, 3, 6)])
def test_gru_step_equals_torch_gru_over_a_sequence(B, D, H):
    torch.manual_seed(10 + B + D + H)
    gru = torch.nn.GRU(D, H, dtype=torch.float64)
    with torch.no_grad():
        for p in gru.parameters():
            p.mul_(3.0)
    x = torch.randn(7, B, D, dtype=torch.float64)
    h0 = torch.randn(1, B, H, dtype=torch.float64)
    out, h_n = gru(x, h0)
    params = _torch_params(gru, 3, H, D)
    h = h0[0].numpy()
    for t in range(7):
        h = ref.gru_step(x[t].numpy(), h, *params)
        np.testing.assert_allclose(h, out[t].detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(h, h_n[0].detach().numpy(), rtol=0, atol=1e-12)


def _gru_variant(x, h, W_ih, W_hh, b_ih, b_hh, where):
    """A GRU step with the reset gate placed elsewhere: before the product, or with b_hn outside."""
    H = h.shape[1]
    sig = lambda a: 1.0 / (1.0 + np.exp(-a))  # noqa: E731
    gi = x @ W_ih.T + b_ih
    r = sig(gi[:, :H] + h @ W_hh[:H].T + b_hh[:H])
    z = sig(gi[:, H : 2 * H] + h @ W_hh[H : 2 * H].T + b_hh[H : 2 * H])
    if where == "before":
        n = np.tanh(gi[:, 2 * H :] + (r * h) @ W_hh[2 * H :].T + b_hh[2 * H :])
    else:
        n = np.tanh(gi[:, 2 * H :] + r * (h @ W_hh[2 * H :].T) + b_hh[2 * H :])
    return (1 - z) * n + z * h


@pytest.mark.parametrize("where", ["before", "bias outside"])
def test_the_other_reset_placements_differ_from_torch(where):
    """Negative control: the Cho-v3 / Keras reset_after=False variants are not torch's GRU."""
    torch.manual_seed(0)
    gru = torch.nn.GRU(3, 4, dtype=torch.float64)
    with torch.no_grad():
        for p in gru.parameters():
            p.mul_(3.0)
    x, h0 = torch.randn(1, 2, 3, dtype=torch.float64), torch.randn(1, 2, 4, dtype=torch.float64)
    out, _ = gru(x, h0)
    params = _torch_params(gru, 3, 4, 3)
    wrong = _gru_variant(x[0].numpy(), h0[0].numpy(), *params, where)
    assert np.abs(wrong - out[0].detach().numpy()).max() > 1e-3
    np.testing.assert_allclose(ref.gru_step(x[0].numpy(), h0[0].numpy(), *params), out[0].detach().numpy(), atol=1e-12)


def test_lstm_step_by_hand():
    """D = H = 1, all weights 0 and biases chosen: i = f = o = sigma(0) = 1/2, g = tanh(1)."""
    b_ih = np.array([0.0, 0.0, 1.0, 0.0])
    h, c = ref.lstm_step(
        np.ones((1, 1)), np.zeros((1, 1)), np.full((1, 1), 2.0), np.zeros((4, 1)), np.zeros((4, 1)), b_ih, np.zeros(4)
    )
    c_expected = 0.5 * 2.0 + 0.5 * math.tanh(1.0)
    assert c[0, 0] == pytest.approx(c_expected, abs=1e-15)
    assert h[0, 0] == pytest.approx(0.5 * math.tanh(c_expected), abs=1e-15)


def test_the_steps_leave_their_arguments_alone_and_accept_lists():
    rng = np.random.default_rng(0)
    args = [rng.normal(size=s) for s in ((2, 3), (2, 4), (12, 3), (12, 4), (12,), (12,))]
    copies = [a.copy() for a in args]
    as_lists = ref.gru_step(*[a.tolist() for a in args])
    np.testing.assert_array_equal(ref.gru_step(*args), as_lists)
    assert all(np.array_equal(a, b) for a, b in zip(args, copies))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"x": np.zeros(3)}, "x must be 2-D"),
        ({"h": np.zeros((3, 4))}, "same number of rows"),
        ({"W_ih": np.zeros((12, 3))}, "W_ih must have shape (16, 3)"),
        ({"b_hh": np.zeros(15)}, "b_hh must have shape (16"),
        ({"c": np.zeros((2, 5))}, "c must have shape (2, 4)"),
    ],
)
def test_lstm_step_names_a_wrong_shape(change, message):
    args = {
        "x": np.zeros((2, 3)),
        "h": np.zeros((2, 4)),
        "c": np.zeros((2, 4)),
        "W_ih": np.zeros((16, 3)),
        "W_hh": np.zeros((16, 4)),
        "b_ih": np.zeros(16),
        "b_hh": np.zeros(16),
    }
    with pytest.raises(ValueError, match=re.escape(message)):
        ref.lstm_step(**{**args, **change})


@pytest.mark.parametrize("leak_rate", [1.0, 0.3])
def test_reservoir_update_is_the_echo_state_networks_step(leak_rate):
    esn = EchoStateNetwork(2, 6, spectral_radius=1.1, leak_rate=leak_rate, density=0.5, bias_scaling=0.5, seed=3)
    rng = np.random.default_rng(1)
    u = rng.normal(size=(3, 9, 2))  # a batch of 3 sequences
    states, _ = esn.run(u)
    x = np.zeros((3, 6))
    for t in range(9):
        x = ref.reservoir_update(x, u[:, t], esn.W, esn.W_in, esn.b, leak_rate)
        np.testing.assert_allclose(x, states[:, t], rtol=0, atol=1e-13)
        single = ref.reservoir_update(
            states[0, t - 1] if t else np.zeros(6), u[0, t], esn.W, esn.W_in, esn.b, leak_rate
        )
        np.testing.assert_allclose(single, states[0, t], rtol=0, atol=1e-13)


def test_reservoir_update_by_hand():
    x = ref.reservoir_update(
        np.array([1.0]), np.array([2.0]), np.array([[0.5]]), np.array([[0.25]]), np.array([-1.0]), 0.5
    )
    assert x[0] == pytest.approx(0.5 * 1.0 + 0.5 * math.tanh(0.5 + 0.5 - 1.0), abs=1e-15)
    with pytest.raises(ValueError, match="leak_rate"):
        ref.reservoir_update(np.ones(1), np.ones(1), np.ones((1, 1)), np.ones((1, 1)), np.ones(1), 0.0)
    with pytest.raises(ValueError, match="W_in must have shape"):
        ref.reservoir_update(np.ones(2), np.ones(1), np.eye(2), np.ones((2, 3)), np.ones(2), 1.0)


def test_the_readout_references_are_the_reservoirs_functions():
    rng = np.random.default_rng(2)
    Z, Y = rng.normal(size=(30, 4)), rng.normal(size=(30, 2))
    np.testing.assert_array_equal(ref.ridge_readout(Z, Y, 0.1), ridge_readout(Z, Y, 0.1))
    u = rng.uniform(-0.5, 0.5, 400)
    states, _ = EchoStateNetwork(1, 5, spectral_radius=0.8, density=1.0, seed=0).run(u)
    mc, r2 = ref.memory_capacity(states, u, 10)
    expected = memory_capacity(states, u, 10)
    assert mc == expected[0] and np.array_equal(r2, expected[1])


@pytest.mark.parametrize("name", ref.__all__)
def test_every_reference_refuses_under_grading(name):
    function = getattr(ref, name)
    assert function.__seqlearn_reference__
    with student_code(), pytest.raises(ReferenceCallError, match=REFUSAL):
        function()


@pytest.mark.integration
def test_importing_the_references_loads_neither_torch_nor_scipy():
    import subprocess
    import sys

    code = "import sys, seqlearn.gated.reference; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not [m for m in loaded if m.split(".")[0] in ("torch", "scipy")]
