"""seqlearn.gated.cells: the from-scratch LSTM and GRU cells equal torch.nn's, values and gradients (float64)."""

import subprocess
import sys

import pytest
import torch
from gated_support import F64, close, grads, randomise
from torch import nn

from seqlearn.gated import GRUCell, LSTMCell, init_forget_bias

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.integration
def test_import_does_not_load_torch():
    code = "import sys, seqlearn.gated; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_equals_torch_cell_values_and_gradients(kind):
    ref = randomise((nn.LSTMCell if kind == "lstm" else nn.GRUCell)(5, 4).double(), 1)
    cell = (LSTMCell if kind == "lstm" else GRUCell).from_torch(ref)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 5, generator=g, dtype=F64)
    h0 = torch.randn(3, 4, generator=g, dtype=F64)
    c0 = torch.randn(3, 4, generator=g, dtype=F64)
    if kind == "lstm":
        (h, c), (hr, cr) = cell(x, (h0, c0)), ref(x, (h0, c0))
        close(h, hr)
        close(c, cr)
        loss, loss_ref = (h**2).sum() + c.sum(), (hr**2).sum() + cr.sum()
    else:
        h, hr = cell(x, h0), ref(x, h0)
        close(h, hr)
        loss, loss_ref = (h**2).sum(), (hr**2).sum()
    loss.backward()
    loss_ref.backward()
    for a, b in zip(grads(cell), grads(ref)):  # W_ih, W_hh, b_ih, b_hh == weight_ih, ...
        close(a, b)


def test_gru_negative_control_b_hn_outside_the_reset_product():
    cell = randomise(GRUCell(5, 4, dtype=F64), 7)
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
    close(c, q.f * c0 + q.i * q.g, 1e-15)
    close(h, q.o * torch.tanh(c), 1e-15)
    assert all(v.min() > 0 and v.max() < 1 for v in (q.i, q.f, q.o))


def test_initialisation_is_torch_like_and_seeded():
    a, b = GRUCell(3, 16, seed=5), GRUCell(3, 16, seed=5)
    assert torch.equal(a.W_hh, b.W_hh)
    assert a.W_hh.abs().max() <= 0.25 and a.W_ih.shape == (48, 3) and a.W_hh.dtype == torch.float32


def test_forget_bias():
    cell = LSTMCell(3, 4, forget_bias=1.0, seed=0)
    H = 4
    assert torch.equal(cell.b_ih[H : 2 * H] + cell.b_hh[H : 2 * H], torch.ones(H))
    plain = LSTMCell(3, 4, seed=0)
    for rows in (slice(0, H), slice(2 * H, 4 * H)):
        assert torch.equal(cell.b_ih[rows], plain.b_ih[rows])
    ref = init_forget_bias(nn.LSTM(3, 4, 2), 1.0)
    assert torch.equal((ref.bias_ih_l1 + ref.bias_hh_l1)[H : 2 * H], torch.ones(H))
    with pytest.raises(TypeError, match="LSTM"):
        init_forget_bias(nn.GRU(3, 4))


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
    with pytest.raises(TypeError, match="LSTM"):
        LSTMCell.from_torch(nn.GRUCell(3, 4))
    with pytest.raises(ValueError, match="layer"):
        LSTMCell.from_torch(nn.LSTM(3, 4, 2), layer=2)
