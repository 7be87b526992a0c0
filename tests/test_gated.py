"""seqlearn.gated: the from-scratch cells and layers equal torch.nn's, values and gradients (float64)."""

import subprocess
import sys

import pytest
import torch
from torch import nn

from seqlearn.gated import GRU, LSTM, GRUCell, LSTMCell, LSTMGates, init_forget_bias

pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64
TOL = 1e-10


def _randomise(module: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=F64))
    return module


def _grads(module: nn.Module) -> list[torch.Tensor]:
    return [p.grad.clone() for p in module.parameters()]


def _close(a, b, tol=TOL):
    assert a.shape == b.shape
    assert (a - b).abs().max().item() < tol


@pytest.mark.integration
def test_import_does_not_load_torch():
    code = "import sys, seqlearn.gated; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_equals_torch_cell_values_and_gradients(kind):
    ref = _randomise((nn.LSTMCell if kind == "lstm" else nn.GRUCell)(5, 4).double(), 1)
    cell = (LSTMCell if kind == "lstm" else GRUCell).from_torch(ref)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 5, generator=g, dtype=F64)
    h0 = torch.randn(3, 4, generator=g, dtype=F64)
    c0 = torch.randn(3, 4, generator=g, dtype=F64)
    if kind == "lstm":
        (h, c), (hr, cr) = cell(x, (h0, c0)), ref(x, (h0, c0))
        _close(h, hr)
        _close(c, cr)
        loss, loss_ref = (h**2).sum() + c.sum(), (hr**2).sum() + cr.sum()
    else:
        h, hr = cell(x, h0), ref(x, h0)
        _close(h, hr)
        loss, loss_ref = (h**2).sum(), (hr**2).sum()
    loss.backward()
    loss_ref.backward()
    for a, b in zip(_grads(cell), _grads(ref)):  # W_ih, W_hh, b_ih, b_hh == weight_ih, ...
        _close(a, b)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("fast", [True, False])
def test_lstm_equals_torch_lstm(num_layers, batch_first, fast):
    ref = _randomise(nn.LSTM(5, 4, num_layers, batch_first=batch_first).double(), 3)
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
        _close(a, b, 1e-12)
    w = torch.randn(y.shape, generator=g, dtype=F64)
    ((y * w).sum() + h.sum() + (c**2).sum()).backward()
    ((yr * w).sum() + hr.sum() + (cr**2).sum()).backward()
    _close(x.grad, x_ref.grad)
    for a, b in zip(_grads(ours), _grads(ref)):
        _close(a, b)


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("fast", [True, False])
def test_gru_equals_torch_gru(num_layers, fast):
    ref = _randomise(nn.GRU(5, 4, num_layers, batch_first=True).double(), 5)
    ours = GRU.from_torch(ref)
    ours.fast = fast
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 7, 5, generator=g, dtype=F64)
    h0 = torch.randn(num_layers, 3, 4, generator=g, dtype=F64)
    y, h = ours(x, h0)
    yr, hr = ref(x, h0)
    _close(y, yr, 1e-12)
    _close(h, hr, 1e-12)
    ((y**2).sum() + h.sum()).backward()
    ((yr**2).sum() + hr.sum()).backward()
    for a, b in zip(_grads(ours), _grads(ref)):
        _close(a, b)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_fast_path_equals_step_loop(kind):
    layers = (LSTM if kind == "lstm" else GRU)(3, 6, num_layers=3, seed=0, dtype=F64)
    x = torch.randn(2, 9, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    fast = layers(x)
    slow = layers(x, None, True)  # asking for the gates takes the loop
    _close(fast[0], slow[0], 1e-12)
    assert len(slow[2]) == 3 and len(slow[2][0]) == 9


def test_gru_negative_control_b_hn_outside_the_reset_product():
    cell = _randomise(GRUCell(5, 4, dtype=F64), 7)
    x, h = torch.randn(3, 5, dtype=F64), torch.randn(3, 4, dtype=F64)
    rn = cell.gate_rows("n")
    q = cell.gates(x, h)
    merged = torch.tanh(x @ cell.W_ih[rn].T + cell.b_ih[rn] + cell.b_hh[rn] + q.r * (h @ cell.W_hh[rn].T))
    wrong = (1 - q.z) * merged + q.z * h
    assert (wrong - cell(x, h)).abs().max() > 1e-3


def test_returned_gates_reproduce_the_step():
    cell = LSTMCell(3, 4, seed=1, dtype=F64)
    x, h0, c0 = torch.randn(2, 3, dtype=F64), torch.randn(2, 4, dtype=F64), torch.randn(2, 4, dtype=F64)
    (h, c), q = cell(x, (h0, c0), return_gates=True)
    _close(c, q.f * c0 + q.i * q.g, 1e-15)
    _close(h, q.o * torch.tanh(c), 1e-15)
    assert all(v.min() > 0 and v.max() < 1 for v in (q.i, q.f, q.o))


def test_roundtrip_from_torch_and_back():
    ref = _randomise(nn.LSTM(5, 4, 2).double(), 8)
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
    _close(GRU.from_torch(ref)(x)[0], ref(x)[0], 1e-12)


def test_forget_bias():
    cell = LSTMCell(3, 4, forget_bias=1.0, seed=0)
    H = 4
    assert torch.equal(cell.b_ih[H : 2 * H] + cell.b_hh[H : 2 * H], torch.ones(H))
    plain = LSTMCell(3, 4, seed=0)
    for rows in (slice(0, H), slice(2 * H, 4 * H)):
        assert torch.equal(cell.b_ih[rows], plain.b_ih[rows])
    layers = LSTM(3, 4, num_layers=2, forget_bias=2.0, seed=0)
    for c in layers.cells:
        assert torch.equal(c.b_ih[H : 2 * H] + c.b_hh[H : 2 * H], torch.full((H,), 2.0))
    ref = init_forget_bias(nn.LSTM(3, 4, 2), 1.0)
    assert torch.equal((ref.bias_ih_l1 + ref.bias_hh_l1)[H : 2 * H], torch.ones(H))
    with pytest.raises(TypeError, match="LSTM"):
        init_forget_bias(nn.GRU(3, 4))


def test_initialisation_is_torch_like_and_seeded():
    a, b = GRUCell(3, 16, seed=5), GRUCell(3, 16, seed=5)
    assert torch.equal(a.W_hh, b.W_hh)
    assert a.W_hh.abs().max() <= 0.25 and a.W_ih.shape == (48, 3) and a.W_hh.dtype == torch.float32


def test_bad_inputs_raise_clear_errors():
    cell = LSTMCell(3, 4)
    with pytest.raises(ValueError, match="shape"):
        cell(torch.zeros(2, 5))
    with pytest.raises(TypeError, match="dtype"):
        cell(torch.zeros(2, 3, dtype=F64))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        cell([[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="h must have shape"):
        cell(torch.zeros(2, 3), (torch.zeros(2, 5), torch.zeros(2, 4)))
    with pytest.raises(ValueError, match="hidden_size"):
        LSTMCell(3, 0)
    with pytest.raises(TypeError, match="input_size"):
        GRUCell(3.0, 4)
    with pytest.raises(TypeError, match="forget_bias"):
        LSTMCell(3, 4, forget_bias="1")
    layers = GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"\(B, T, D\)"):
        layers(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="h0 must have shape"):
        layers(torch.zeros(2, 5, 3), torch.zeros(1, 2, 4))
    with pytest.raises(TypeError, match=r"nn\.GRU"):
        GRU.from_torch(nn.LSTM(3, 4))
    with pytest.raises(TypeError, match="LSTM"):
        LSTMCell.from_torch(nn.GRUCell(3, 4))
    with pytest.raises(ValueError, match="layer"):
        LSTMCell.from_torch(nn.LSTM(3, 4, 2), layer=2)
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
    _close(layers(x)[0], y, 1e-15)
    plain = LSTM(3, 4, num_layers=2, seed=0, dtype=F64)
    assert (plain(x)[0] - y).abs().max() > 1e-3
