"""Chapter 5's five architectures and their transport factors, against independent references.

References: closed forms ((1 - s)^l, -1/ln(1 - s), sums of (1 - s_q)^l), the plain per-window
loop, float64 autograd Jacobian products, and Chapter 4's GRU / LSTM layers (the fused torch
kernel) for the trajectories.
"""

import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from seqlearn.gated import GRU, LSTM, GRUCell, LSTMCell
from seqlearn.learnability.effective_rates import (
    adaptive_rates,
    base_rates,
    envelope,
    rayleigh_rates,
    recurrent_matrices,
    spectrum_envelope,
    tau_const,
    transport,
    transport_loop,
    transport_terms,
)
from seqlearn.learnability.models import (
    ARCHITECTURES,
    ConstGate,
    DiagGate,
    SharedGate,
    architecture_of,
    build,
    run,
)

F64 = {"dtype": torch.float64, "device": "cpu"}


def _inputs(B, T, D, seed=3):
    return torch.randn(B, T, D, generator=torch.Generator().manual_seed(seed), **F64)


def _tiny(arch, scale=1.0, seed=1, H=4):
    """A float64 model with random recurrent gate couplings, all recurrent weights scaled by ``scale``.

    The paper's initialisation zeroes the write / retention gate's weights; they are drawn here
    (0.3 N(0, 1)) so that every term of the first-order factor is exercised.
    """
    cell = build(arch, 3, H, s0=0.05, seed=seed, **F64)
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        if arch in ("gru", "lstm"):
            rows = cell.gate_rows("z" if arch == "gru" else "f")
            cell.W_hh[rows] = 0.3 * torch.randn(cell.W_hh[rows].shape, generator=g, **F64)
        for name, p in cell.named_parameters():
            if name in ("W_h", "W_hh"):
                p.mul_(scale)
            if name in ("u_s", "U_s"):
                p.copy_(0.3 * scale * torch.randn(p.shape, generator=g, **F64))
    return cell


def _exact_diagonals(cell, x):
    """[b, k, q] = d h_T[q] / d state_k[q] by autograd (state: h_k, or c_k for the LSTM), k = 0..T.

    A zero perturbation delta_k is added to each state; the gradient of h_T with respect to it
    is the row of the exact Jacobian product. The LSTM step is written out from its gates so the
    perturbation enters c_k before h_k = o_k tanh(c_k) is formed.
    """
    arch = architecture_of(cell)
    B, T, _ = x.shape
    H = cell.hidden_size
    deltas = [torch.zeros(B, H, requires_grad=True, **F64) for _ in range(T + 1)]
    h = torch.zeros(B, H, **F64)
    if arch == "lstm":
        c = torch.zeros(B, H, **F64) + deltas[0]  # h_0 is given, not o_0 tanh(c_0)
    else:
        h = h + deltas[0]
    for t in range(T):
        if arch == "lstm":
            q = cell.gates(x[:, t], h)
            c = q.f * c + q.i * q.g + deltas[t + 1]
            h = q.o * torch.tanh(c)
        else:
            h = cell(x[:, t], h) + deltas[t + 1]
    out = torch.zeros(B, T + 1, H, **F64)
    for q in range(H):
        grads = torch.autograd.grad(h[:, q].sum(), deltas, retain_graph=True)
        out[:, :, q] = torch.stack([g[:, q] for g in grads], dim=1)
    return out


# --- brief 4.4 item 1: the constant gate's time scale -------------------------------------------


def test_tau_const_closed_form():
    assert tau_const(0.05) == pytest.approx(19.50, abs=0.01)
    assert tau_const(0.005) == pytest.approx(199.5, abs=0.1)
    s = 0.2
    assert (1 - s) ** tau_const(s) == pytest.approx(math.exp(-1))  # e-folding after tau steps


# --- the models ---------------------------------------------------------------------------------


def test_gru_and_lstm_are_chapter_4s_cells_and_match_its_layers():
    x = _inputs(5, 12, 3)
    for arch, layer_type, cell_type in (("gru", GRU, GRUCell), ("lstm", LSTM, LSTMCell)):
        cell = build(arch, 3, 6, s0=0.05, seed=4, **F64)
        assert type(cell) is cell_type
        layer = layer_type(3, 6, seed=0, **F64)  # fused torch kernel (fast path)
        layer.cells[0].load_state_dict(cell.state_dict())
        assert layer.uses_fast_path()
        y = layer(x)[0]
        traj = run(cell, x)
        torch.testing.assert_close(traj.h[:, 1:], y, rtol=1e-12, atol=1e-12)
    gru_traj = run(build("gru", 3, 6, s0=0.05, seed=4, **F64), x)
    lstm_traj = run(build("lstm", 3, 6, s0=0.05, seed=4, **F64), x)
    torch.testing.assert_close(gru_traj.gates["z"], torch.full_like(gru_traj.gates["z"], 0.95))
    torch.testing.assert_close(lstm_traj.gates["f"], torch.full_like(lstm_traj.gates["f"], 0.95))


def test_leaky_step_is_the_equation():
    cell = _tiny("diag", seed=7)
    with torch.no_grad():
        cell.W_s.copy_(0.2 * torch.randn(cell.W_s.shape, generator=torch.Generator().manual_seed(1), **F64))
    x, h0 = _inputs(4, 1, 3)[:, 0], 0.5 * _inputs(4, 1, 4, seed=5)[:, 0]
    W_x, b_x, W_h = cell.W_x.detach(), cell.b_x.detach(), cell.W_h.detach()
    s = torch.sigmoid(x @ cell.W_s.detach().T + cell.b_s.detach() + h0 @ cell.U_s.detach().T)
    expected = (1 - s) * h0 + s * torch.tanh(x @ W_x.T + b_x + h0 @ W_h.T)
    torch.testing.assert_close(cell(x, h0), expected, rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(W_h @ W_h.T / 1.0, torch.eye(4, **F64), rtol=0, atol=1e-12)  # scale 1: orthogonal


def test_leaky_family_is_one_system_at_initialisation():
    x = _inputs(3, 15, 2)
    states = [run(build(a, 2, 5, s0=0.05, seed=9, layernorm=True, **F64), x).h for a in ("const", "shared", "diag")]
    torch.testing.assert_close(states[1], states[0], rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(states[2], states[0], rtol=1e-14, atol=1e-14)


# --- brief 4.4 item 2: closed form and the plain loop ----------------------------------------------


def test_const_gate_without_self_coupling_transports_exactly_one_minus_s_to_the_l():
    s, T = 0.05, 30
    cell = ConstGate(3, 8, s0=s, seed=2, **F64)
    with torch.no_grad():
        cell.W_h.fill_diagonal_(0.0)
    lags = np.arange(1, T + 1)
    gamma = transport(run(cell, _inputs(4, T, 3)), lags)
    for i, ell in enumerate(lags):
        window = gamma[:, i, ell - 1 :]
        assert not window.isnan().any()
        torch.testing.assert_close(window, torch.full_like(window, (1 - s) ** ell), rtol=0, atol=1e-10)
        assert gamma[:, i, : ell - 1].isnan().all()


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("order", [0, 1])
def test_prefix_sums_equal_the_plain_loop(arch, order):
    traj = run(_tiny(arch, scale=1.5), _inputs(3, 24, 3))
    lags = [1, 2, 5, 11, 24]
    fast, slow = transport(traj, lags, order=order), transport_loop(traj, lags, order=order)
    assert fast.dtype == torch.float64 and fast.shape == (3, 5, 24, 4)
    torch.testing.assert_close(fast, slow, rtol=0, atol=1e-10, equal_nan=True)


def test_float32_models_give_float64_factors_close_to_the_float64_model():
    cell = _tiny("diag", scale=1.0)
    single = build("diag", 3, 4, seed=0, dtype=torch.float32, device="cpu")
    single.load_state_dict({k: v.float() for k, v in cell.state_dict().items()})
    x, lags = _inputs(2, 10, 3), [1, 4, 10]
    gamma = transport(run(single, x.float()), lags)
    assert gamma.dtype == torch.float64
    torch.testing.assert_close(gamma, transport(run(cell, x), lags), rtol=1e-5, atol=1e-6, equal_nan=True)


# --- brief 4.4 item 3: the first-order expansion against the exact Jacobian product ----------------


def _window_end_factors(cell, x, lags, order=1):
    T = x.shape[1]
    return transport(run(cell, x), lags, order=order)[:, :, T - 1]  # window ends at T, (B, n, H)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_first_order_factor_follows_the_exact_jacobian_diagonal(arch):
    T, lags = 20, np.arange(1, 21)
    x = _inputs(8, T, 3)
    cell = _tiny(arch, scale=1.0)
    first, zeroth = _window_end_factors(cell, x, lags), _window_end_factors(cell, x, lags, order=0)
    exact = _exact_diagonals(cell, x)[:, T - lags]  # lag l: state T - l, (B, n, H)
    rho = spearmanr(first.mean(dim=(0, 2)).numpy(), exact.mean(dim=(0, 2)).numpy()).statistic
    assert rho >= 0.97
    # the first-order term accounts for most of what the gate product alone misses
    assert (first - exact).abs().max() < 0.5 * (zeroth - exact).abs().max()


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_first_order_error_is_second_order_in_the_recurrent_weights(arch):
    """Halving every recurrent weight divides the error by about 4 (a missing term: by 2)."""
    T, lags = 20, np.arange(1, 21)
    x = _inputs(8, T, 3)
    errors = []
    for scale in (0.125, 0.0625):
        cell = _tiny(arch, scale=scale)
        exact = _exact_diagonals(cell, x)[:, T - lags]
        errors.append((_window_end_factors(cell, x, lags) - exact).abs().max().item())
    assert 3.5 < errors[0] / errors[1] < 4.6


# --- brief 4.4 item 6b: envelopes of a gate spectrum ----------------------------------------------

LAGS_6B = np.unique(np.geomspace(2, 512, 30).round().astype(int))


def _r2(x, y):
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    return slope, 1 - residual.var() / y.var()


def _spectrum_model(s_q):
    cell = DiagGate(1, len(s_q), s0=0.05, seed=0, **F64)
    with torch.no_grad():
        cell.b_s.copy_(torch.logit(torch.as_tensor(s_q, **F64)))
    return cell


def test_constant_gate_envelope_is_exponential_with_rate_ln_one_minus_s():
    f = spectrum_envelope(np.full(256, 0.05), LAGS_6B)
    slope, r2 = _r2(LAGS_6B, np.log(f))
    assert slope == pytest.approx(math.log(0.95), abs=1e-9)
    assert r2 == pytest.approx(1.0, abs=1e-12)
    # the same envelope from a ConstGate's gate products (zero order), over all window ends
    traj = run(ConstGate(1, 256, s0=0.05, seed=0, **F64), _inputs(1, 512, 1))
    f_model = envelope(transport(traj, LAGS_6B, order=0), lr=1.0).numpy()
    np.testing.assert_allclose(f_model, f, rtol=1e-10)


def test_power_law_gate_spectrum_gives_a_power_law_envelope():
    u = np.random.default_rng(0).uniform(size=256)
    beta = 0.7
    s_power = 0.5 * u ** (1 / beta)  # density of s proportional to s^(beta - 1)
    s_power = np.clip(s_power, 1e-12, None)
    f_power = spectrum_envelope(s_power, LAGS_6B)
    slope, r2_pow = _r2(np.log(LAGS_6B), np.log(f_power))
    assert abs(slope + beta) < 0.1
    _, r2_exp = _r2(LAGS_6B.astype(float), np.log(f_power))
    assert r2_pow > 0.99 and r2_pow > r2_exp
    f_const = spectrum_envelope(np.full(256, 0.05), LAGS_6B)
    ratio_const, ratio_power = f_const[0] / f_const[-1], f_power[0] / f_power[-1]
    assert ratio_const > 1e10 and ratio_power < 100
    # a DiagGate with b_q = logit(s_q) realises this spectrum: its zero-order envelope is the sum
    traj = run(_spectrum_model(s_power), _inputs(1, 512, 1))
    f_model = envelope(transport(traj, LAGS_6B, order=0), lr=0.1).numpy()
    np.testing.assert_allclose(f_model, 0.1 * f_power, rtol=1e-10)


def test_envelope_averages_the_l1_mass_over_sequences_and_window_ends():
    g = torch.Generator().manual_seed(0)
    gamma = torch.randn(2, 1, 3, 4, generator=g, dtype=torch.float64)
    gamma[:, 0, 0] = math.nan  # lag 2 over T = 3: window ends 2 and 3
    by_hand = gamma[:, 0, 1:].abs().sum(-1).mean() * 0.5
    torch.testing.assert_close(envelope(gamma, lr=0.5), by_hand.reshape(1))


# --- brief 4.4 item 4: adaptive base rates ---------------------------------------------------------


def test_rayleigh_rates_constant_isotropic_and_zero_states():
    g = torch.Generator().manual_seed(0)
    h = torch.randn(5, 7, 6, generator=g, dtype=torch.float64)
    c = 0.013
    torch.testing.assert_close(rayleigh_rates(torch.full((6, 6), c, **F64), h), torch.full((5, 7, 6), c, **F64))
    lam = torch.rand(6, 6, generator=g, dtype=torch.float64)
    iso = torch.sign(h) * 0.4  # every |h_j| equal
    row_mean = lam.mean(dim=1).expand(5, 7, 6)
    torch.testing.assert_close(rayleigh_rates(lam, iso), row_mean)
    torch.testing.assert_close(rayleigh_rates(lam, torch.zeros(2, 6, **F64)), row_mean[0, :2])
    by_hand = torch.stack([(lam[q] * h[1, 2] ** 2).sum() / (h[1, 2] ** 2).sum() for q in range(6)])
    torch.testing.assert_close(rayleigh_rates(lam, h)[1, 2], by_hand)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_adam_rates_are_the_step_adam_took(arch):
    """After one Adam step the update is -lr g / (|g| + eps), so lambda = -(step) / g, from the update itself."""
    cell = _tiny(arch, scale=1.0)
    optimizer = torch.optim.Adam(cell.parameters(), lr=0.01)
    before = [p.detach().clone() for p, _ in recurrent_matrices(cell)]
    run(cell, _inputs(4, 6, 3)).h[:, -1].pow(2).sum().backward()
    grads = [p.grad.detach().clone() for p, _ in recurrent_matrices(cell)]
    optimizer.step()
    expected = torch.stack(
        [((b - p.detach()) / g)[rows] for (p, rows), b, g in zip(recurrent_matrices(cell), before, grads)]
    ).mean(dim=0)
    torch.testing.assert_close(adaptive_rates(cell, optimizer), expected, rtol=1e-6, atol=0)


def test_base_rates_use_the_presynaptic_state_of_the_perturbation():
    cell = _tiny("diag")
    traj = run(cell, _inputs(2, 8, 3))
    lam = torch.rand(4, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    rates = base_rates(traj, [1, 3, 8], lam)
    assert rates.shape == (2, 3, 8, 4)
    torch.testing.assert_close(rates[:, 1, 7], rayleigh_rates(lam, traj.h[:, 8 - 3 - 1]))  # t = 8, l = 3: h_4
    torch.testing.assert_close(rates[:, 2, 7], lam.mean(dim=1).expand(2, 4))  # k = 0: no presynaptic state
    assert rates[:, 1, :2].isnan().all()


# --- bad input ------------------------------------------------------------------------------------


def test_bad_input_is_refused_with_a_clear_error():
    for s in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="s must be"):
            tau_const(s)
    with pytest.raises(TypeError, match="s must be"):
        tau_const("0.05")
    with pytest.raises(ValueError, match="name must be one of"):
        build("rnn", 2, 3)
    with pytest.raises(ValueError, match="s0 must be"):
        SharedGate(2, 3, s0=1.0, device="cpu")
    with pytest.raises(TypeError, match="cell must be"):
        architecture_of(torch.nn.Linear(2, 3))
    cell = build("const", 2, 3, **F64)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D\)"):
        run(cell, torch.zeros(4, 2, **F64))
    with pytest.raises(TypeError, match="dtype"):
        run(cell, torch.zeros(1, 4, 2, dtype=torch.float32))
    with pytest.raises(ValueError, match="c0 is for the LSTM only"):
        run(cell, torch.zeros(1, 4, 2, **F64), c0=torch.zeros(1, 3, **F64))
    traj = run(cell, torch.zeros(1, 4, 2, **F64))
    for lags in ([0], [5], [[1, 2]]):
        with pytest.raises(ValueError, match="lags"):
            transport(traj, lags)
    with pytest.raises(TypeError, match="lags"):
        transport(traj, [1.5])
    with pytest.raises(ValueError, match="order"):
        transport(traj, [1], order=2)
    with pytest.raises(TypeError, match="traj must be"):
        transport_terms("traj")
    with pytest.raises(ValueError, match="gamma must have shape"):
        envelope(torch.zeros(3, 4))
    with pytest.raises(ValueError, match="lr must be"):
        envelope(torch.zeros(1, 1, 1, 1), lr=0.0)
    with pytest.raises(ValueError, match="lam must have shape"):
        rayleigh_rates(torch.zeros(3, 4, **F64), torch.zeros(2, 4, **F64))
    with pytest.raises(TypeError, match="optimizer must be"):
        adaptive_rates(cell, torch.optim.SGD(cell.parameters(), lr=0.1))
    with pytest.raises(ValueError, match="taken a step"):
        adaptive_rates(cell, torch.optim.Adam(cell.parameters(), lr=0.1))
    with pytest.raises(TypeError, match="cell must be"):
        recurrent_matrices(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="write gates"):
        spectrum_envelope([0.5, 1.0], [1, 2])


# --- devices --------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_cuda_factors_equal_the_cpu_ones(arch):
    cpu = _tiny(arch, scale=1.0)
    gpu = build(arch, 3, 4, s0=0.05, seed=1, dtype=torch.float64, device="cuda")
    gpu.load_state_dict(cpu.state_dict())
    x = _inputs(3, 16, 3)
    lags = [1, 3, 16]
    expected = transport(run(cpu, x), lags)
    got = transport(run(gpu, x.cuda()), lags)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-9, atol=1e-12, equal_nan=True)
