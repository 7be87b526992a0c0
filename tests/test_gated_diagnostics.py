"""seqlearn.gated.diagnostics: gate statistics, time scales, the cell-state Jacobian against autograd."""

import math

import pytest
import torch

from seqlearn.gated import LSTM, GRUCell, LSTMCell
from seqlearn.gated.diagnostics import (
    cell_state_jacobians,
    gate_statistics,
    jacobian_norms,
    state_jacobians,
    time_scales,
)

pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64


def _autograd_jacobians(cell, x, h0, c0):
    """d c_T / d c_s by autograd, c_s perturbed with o_s held fixed (h_s = o_s tanh(c_s))."""
    T = x.shape[0]
    out = []
    for lag in range(T):
        s = T - lag  # perturb c_s, s = 1..T
        h, c = h0[None], c0[None]
        o = None
        for t in range(s):
            (h, c), q = cell(x[t : t + 1], (h, c), return_gates=True)
            o = q.o

        def rest(c_s, h_fixed=h, o_s=o, s=s):
            hh, cc = (o_s * torch.tanh(c_s[None]), c_s[None]) if o_s is not None else (h_fixed, c_s[None])
            for t in range(s, T):
                hh, cc = cell(x[t : t + 1], (hh, cc))
            return cc[0]

        out.append(torch.autograd.functional.jacobian(rest, c[0].detach()))
    return torch.stack(out)


def _setup(seed=0, T=6, D=3, H=4):
    g = torch.Generator().manual_seed(seed)
    cell = LSTMCell(D, H, seed=seed, dtype=F64)
    with torch.no_grad():
        for p in cell.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=F64))
    x = torch.randn(T, D, generator=g, dtype=F64)
    return cell, x, torch.randn(H, generator=g, dtype=F64), torch.randn(H, generator=g, dtype=F64)


def test_cell_state_jacobians_equal_autograd():
    cell, x, h0, c0 = _setup()
    J = cell_state_jacobians(cell, x, (h0, c0))
    assert J.shape == (6, 4, 4)
    assert torch.equal(J[0], torch.eye(4, dtype=F64))
    assert (J - _autograd_jacobians(cell, x, h0, c0)).abs().max() < 1e-12


def test_without_recurrent_weights_only_the_carousel_remains():
    cell, x, h0, c0 = _setup(1)
    with torch.no_grad():
        cell.W_hh.zero_()
    exact = cell_state_jacobians(cell, x, (h0, c0))
    carousel = cell_state_jacobians(cell, x, (h0, c0), gate_terms=False)
    assert (exact - carousel).abs().max() < 1e-14
    (_, _), q = cell(x[-1:], (torch.zeros(1, 4, dtype=F64), torch.zeros(1, 4, dtype=F64)), return_gates=True)
    assert torch.allclose(carousel[1], torch.diag(q.f[0]), atol=1e-15)  # lag 1: diag(f_T)


def test_constant_error_carousel_is_the_identity_when_f_is_one():
    cell, x, h0, c0 = _setup(2)
    with torch.no_grad():
        cell.b_ih[4:8] = 1e3  # f = sigma(huge) = 1 in float64
    J = cell_state_jacobians(cell, x, (h0, c0), gate_terms=False)
    assert torch.equal(J, torch.eye(4, dtype=F64).expand(6, 4, 4))
    assert torch.allclose(jacobian_norms(J), torch.ones(6, dtype=F64))


def test_time_scales_and_gate_statistics():
    f = torch.tensor([math.exp(-1 / 10), math.exp(-1 / 2), 1.0], dtype=F64)
    assert torch.allclose(time_scales(f)[:2], torch.tensor([10.0, 2.0], dtype=F64))
    assert time_scales(f)[2] == math.inf
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        time_scales(torch.tensor([0.0, 0.5]))
    layers = LSTM(3, 5, forget_bias=1.0, seed=0, dtype=F64)
    _, _, gates = layers(torch.randn(2, 8, 3, dtype=F64), None, True)
    f_values = torch.stack([q.f for q in gates[0]], dim=1)  # (B, T, H)
    stats = gate_statistics(f_values)
    assert stats.mean.shape == (5,) and (stats.min <= stats.mean).all() and (stats.mean <= stats.max).all()
    assert torch.allclose(stats.tau, -1 / torch.log(f_values.reshape(-1, 5).mean(0)))
    with pytest.raises(TypeError):
        gate_statistics([0.5])


def test_bad_arguments():
    cell, x, _, _ = _setup()
    with pytest.raises(TypeError, match="LSTMCell"):
        cell_state_jacobians(torch.nn.LSTMCell(3, 4), x)
    with pytest.raises(ValueError, match="shape"):
        cell_state_jacobians(cell, x[None])
    with pytest.raises(TypeError, match="gate_terms"):
        cell_state_jacobians(cell, x, gate_terms=1)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_state_jacobians_equal_autograd_through_the_rollout(kind):
    cell, x, h0, c0 = _setup(3)
    if kind == "gru":
        cell = GRUCell(3, 4, seed=3, dtype=F64)
    state = (h0, c0) if kind == "lstm" else h0
    J = state_jacobians(cell, x, state)
    S = 8 if kind == "lstm" else 4
    assert J.shape == (6, S, S) and torch.equal(J[0], torch.eye(S, dtype=F64))
    for lag in (1, 3, 5):  # J[l] = d s_T / d s_{T-l}, T = 6
        s = 6 - lag
        with torch.no_grad():
            h, c = h0[None], c0[None]
            for t in range(s):
                if kind == "lstm":
                    h, c = cell(x[t : t + 1], (h, c))
                else:
                    h = cell(x[t : t + 1], h)
            start = torch.cat([h[0], c[0]]) if kind == "lstm" else h[0]

        def rollout(v, s=s):
            hh, cc = v[None, :4], v[None, 4:]
            for t in range(s, 6):
                if kind == "lstm":
                    hh, cc = cell(x[t : t + 1], (hh, cc))
                else:
                    hh = cell(x[t : t + 1], hh)
            return torch.cat([hh[0], cc[0]]) if kind == "lstm" else hh[0]

        direct = torch.autograd.functional.jacobian(rollout, start)
        assert (J[lag] - direct).abs().max() < 1e-12
    assert jacobian_norms(J).shape == (6,)
