"""seqlearn.gated.layers: the from-scratch multi-layer LSTM and GRU equal torch.nn's, values and gradients
(float64), on the fused fast path and on the step loop."""

import pytest
import torch
from gated_support import F64, close, grads, randomise
from torch import nn

from seqlearn.gated import GRU, LSTM, GRUCell, LSTMCell, LSTMGates

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("fast", [True, False])
def test_lstm_equals_torch_lstm(num_layers, batch_first, fast):
    ref = randomise(nn.LSTM(5, 4, num_layers, batch_first=batch_first).double(), 3)
    ours = LSTM.from_torch(ref)
    ours.fast = fast
    assert ours.uses_fast_path() is fast
    g = torch.Generator().manual_seed(4)
    x = torch.randn((3, 7, 5) if batch_first else (7, 3, 5), generator=g, dtype=F64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    h0 = torch.randn(num_layers, 3, 4, generator=g, dtype=F64)
    c0 = torch.randn(num_layers, 3, 4, generator=g, dtype=F64)
    y, (h, c) = ours(x, (h0, c0))
    yr, (hr, cr) = ref(x_ref, (h0, c0))
    for a, b in [(y, yr), (h, hr), (c, cr)]:
        close(a, b, 1e-12)
    w = torch.randn(y.shape, generator=g, dtype=F64)
    ((y * w).sum() + h.sum() + (c**2).sum()).backward()
    ((yr * w).sum() + hr.sum() + (cr**2).sum()).backward()
    close(x.grad, x_ref.grad)
    for a, b in zip(grads(ours), grads(ref)):
        close(a, b)


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("fast", [True, False])
def test_gru_equals_torch_gru(num_layers, fast):
    ref = randomise(nn.GRU(5, 4, num_layers, batch_first=True).double(), 5)
    ours = GRU.from_torch(ref)
    ours.fast = fast
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 7, 5, generator=g, dtype=F64)
    h0 = torch.randn(num_layers, 3, 4, generator=g, dtype=F64)
    y, h = ours(x, h0)
    yr, hr = ref(x, h0)
    close(y, yr, 1e-12)
    close(h, hr, 1e-12)
    ((y**2).sum() + h.sum()).backward()
    ((yr**2).sum() + hr.sum()).backward()
    for a, b in zip(grads(ours), grads(ref)):
        close(a, b)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_fast_path_equals_step_loop(kind):
    layers = (LSTM if kind == "lstm" else GRU)(3, 6, num_layers=3, seed=0, dtype=F64)
    x = torch.randn(2, 9, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    fast = layers(x)
    slow = layers(x, None, True)  # asking for the gates takes the loop
    close(fast[0], slow[0], 1e-12)
    assert len(slow[2]) == 3 and len(slow[2][0]) == 9


def test_roundtrip_from_torch_and_back():
    ref = randomise(nn.LSTM(5, 4, 2).double(), 8)
    ours = LSTM.from_torch(ref)
    back = nn.LSTM(5, 4, 2).double()
    back.load_state_dict({k: v.detach() for k, v in ours._torch_parameters().items()})
    for (n, p), (m, q) in zip(ref.named_parameters(), back.named_parameters()):
        assert n == m and torch.equal(p, q)
    second = LSTMCell.from_torch(ref, layer=1)
    assert torch.equal(second.W_ih, ref.weight_ih_l1) and torch.equal(second.b_hh, ref.bias_hh_l1)


def test_from_torch_without_biases_zeroes_them():
    ref = nn.GRU(3, 2, bias=False).double()
    cell = GRUCell.from_torch(ref)
    assert not cell.b_ih.any() and not cell.b_hh.any()
    x = torch.randn(4, 1, 3, dtype=F64)
    close(GRU.from_torch(ref)(x)[0], ref(x)[0], 1e-12)


def test_forget_bias():
    H = 4
    layers = LSTM(3, H, num_layers=2, forget_bias=2.0, seed=0)
    for c in layers.cells:
        assert torch.equal(c.b_ih[H : 2 * H] + c.b_hh[H : 2 * H], torch.full((H,), 2.0))


def test_bad_inputs_raise_clear_errors():
    layers = GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"\(B, T, D\)"):
        layers(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="h0 must have shape"):
        layers(torch.zeros(2, 5, 3), torch.zeros(1, 2, 4))
    with pytest.raises(TypeError, match=r"nn\.GRU"):
        GRU.from_torch(nn.LSTM(3, 4))
    with pytest.raises(ValueError, match="bidirectional"):
        LSTM.from_torch(nn.LSTM(3, 4, bidirectional=True))


class ConstantForgetCell(LSTMCell):
    """A Chapter 5 style gate family: the forget gate fixed at 0.9."""

    def gates(self, x, h):
        q = super().gates(x, h)
        return LSTMGates(i=q.i, f=torch.full_like(q.f, 0.9), g=q.g, o=q.o)


class ConstantForgetLSTM(LSTM):
    cell_type = ConstantForgetCell


def test_a_cell_with_other_gates_runs_the_loop_and_its_gates():
    layers = ConstantForgetLSTM(3, 4, num_layers=2, seed=0, dtype=F64)
    assert isinstance(layers.cells[1], ConstantForgetCell) and not layers.uses_fast_path()
    x = torch.randn(2, 5, 3, dtype=F64)
    y, _, gates = layers(x, None, True)
    assert all(torch.equal(q.f, torch.full_like(q.f, 0.9)) for q in gates[0])
    close(layers(x)[0], y, 1e-15)
    plain = LSTM(3, 4, num_layers=2, seed=0, dtype=F64)
    assert (plain(x)[0] - y).abs().max() > 1e-3
