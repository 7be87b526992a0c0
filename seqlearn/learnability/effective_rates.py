r"""The transport factor :math:`\Gamma`: how much of a lag-:math:`\ell` gradient each neuron passes on.

Backpropagation through time carries the error at step :math:`t` to step :math:`t - \ell` by the
Jacobian product :math:`\prod_{j=t-\ell+1}^{t} J_j`, :math:`J_j = \partial h_j / \partial h_{j-1}`.
For a gated cell each Jacobian splits into a diagonal *leak* and the rest,
:math:`J_j = \mathrm{diag}(\lambda_j) + R_j`. Expanding the product to first order in
:math:`R` and keeping the diagonal (per-neuron) part gives the **transport factor**
(Livi, arXiv 2512.05790)

.. math::
    \Gamma^{(q)}_{t,\ell} = \Big[\prod_{j=t-\ell+1}^{t} \lambda^{(q)}_j\Big]
    \Big[1 + \sum_{k=t-\ell+1}^{t} \frac{\rho^{(q)}_k}{\lambda^{(q)}_k}\Big],
    \qquad \rho^{(q)}_k = (R_k)_{qq},

and the effective learning rate of plain SGD is :math:`\mu^{(q)}_{t,\ell} = \eta\,
\Gamma^{(q)}_{t,\ell}`, whose mass :math:`f(\ell) = \lVert \mu_{t,\ell} \rVert_1` is the
*envelope*. The per-architecture leak :math:`\lambda` and diagonal :math:`\rho` (derived for the
cells of :mod:`~seqlearn.learnability.models`; :math:`\sigma' = \sigma(1-\sigma)`, :math:`[\cdot]_{qq}`
a diagonal entry):

* leaky family: :math:`\lambda = 1 - s`, :math:`\rho = s (1 - \tilde h^2) [W_h]_{qq} +
  (\tilde h - h_{k-1})\,\partial s / \partial h_{k-1}`, with the last diagonal
  :math:`0` (ConstGate), :math:`s(1-s) (u_s)_q` (SharedGate), :math:`s(1-s) [U_s]_{qq}` (DiagGate);
  the LayerNorm Jacobian is ignored (as in the paper's code);
* GRU (torch's, :math:`h_k = (1-z) n + z h_{k-1}`): :math:`\lambda = z`,
  :math:`\rho = (1-z)(1-n^2)\,(r [W_{hn}]_{qq} + m\, r(1-r) [W_{hr}]_{qq}) + (h_{k-1} - n)\, z(1-z) [W_{hz}]_{qq}`
  with :math:`m = W_{hn} h_{k-1} + b_{hn}` (the reset gate multiplies :math:`m`); the paper's code
  adds two zero-order products, :math:`\prod r` and :math:`\prod (1 - z) r`, that this one leaves out;
* LSTM (transport through the cell, :math:`c_{t-\ell} \to h_t`): :math:`\lambda = f`,
  :math:`\rho_k = \tilde c_k e_{k-1}` with :math:`\tilde c_k = c_{k-1} f(1-f) [W_{hf}]_{qq} +
  i (1 - g^2) [W_{hg}]_{qq} + g\, i(1-i) [W_{hi}]_{qq}` and :math:`e_k = o_k (1 - \tanh^2 c_k)`
  (:math:`e_0 = 0`: :math:`h_0` is given), and the whole product is multiplied by :math:`e_t`;
  the output gate's path through :math:`h` is ignored.

**Prefix sums.** With :math:`L_t = \sum_{j \le t} \ln \lambda_j` and :math:`P_t = \sum_{j \le t}
\rho_j / \lambda_j` (float64, :math:`L_0 = P_0 = 0`), every window is a difference,
:math:`\Gamma_{t,\ell} = e^{L_t - L_{t-\ell}} (1 + P_t - P_{t-\ell})`: :func:`transport`
computes all lags and window ends at once; :func:`transport_loop` is the plain per-window product
and sum, the readable reference the tests hold it to.

**Adaptive optimisers.** Adam's per-weight rates :math:`\lambda_{qj} = \eta / (\sqrt{\hat v_{qj}}
+ \epsilon)` (:func:`adaptive_rates`, averaged over the recurrent matrices) reach neuron :math:`q`
as the Rayleigh quotient with the presynaptic state, :math:`\Lambda^{(q)} = \sum_j \lambda_{qj}
h_j^2 / \sum_j h_j^2` (:func:`rayleigh_rates`, :func:`base_rates`), and :math:`\mu = \Lambda \Gamma`.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import torch

from ..gated.cells import GRUCell, LSTMCell
from ..guard import reference
from ..validation import int_array, integer, real, real_array
from .models import DiagGate, LeakyGatedCell, SharedGate, Trajectory

__all__ = [
    "tau_const",
    "transport_terms",
    "transport",
    "transport_loop",
    "recurrent_matrices",
    "adaptive_rates",
    "rayleigh_rates",
    "base_rates",
    "envelope",
    "spectrum_envelope",
]


def tau_const(s: float) -> float:
    r"""The memory time of a constant write gate, :math:`\tau = -1 / \ln(1 - s)`, for ``s`` in (0, 1).

    A constant gate keeps :math:`(1 - s)^\ell = e^{-\ell/\tau}` of a state after :math:`\ell` steps.
    """
    s = real(s, "s", low=0.0, high=1.0, low_open=True, high_open=True)
    return -1.0 / math.log1p(-s)


def _f64(t: torch.Tensor) -> torch.Tensor:
    """``t`` detached as float64 (on the CPU if its device has no float64, as MPS)."""
    t = t.detach()
    if t.device.type == "mps":
        t = t.cpu()
    return t.to(torch.float64)


def _diag(W: torch.Tensor) -> torch.Tensor:
    return _f64(torch.diagonal(W))  # (H,)


def _leaky_terms(traj: Trajectory):
    cell, g = cast(LeakyGatedCell, traj.cell), traj.gates
    s, h_tilde = _f64(g["s"]), _f64(g["h_tilde"])  # (B, T, H)
    h_prev = _f64(traj.h[:, :-1])  # h_{k-1}, (B, T, H)
    rho = s * (1 - h_tilde**2) * _diag(cell.W_h)
    if traj.architecture == "shared":
        rho = rho + (h_tilde - h_prev) * s * (1 - s) * _f64(cast(SharedGate, cell).u_s)
    elif traj.architecture == "diag":
        rho = rho + (h_tilde - h_prev) * s * (1 - s) * _diag(cast(DiagGate, cell).U_s)
    return 1 - s, rho, None


def _gru_terms(traj: Trajectory):
    cell, g = cast(GRUCell, traj.cell), traj.gates
    r, z, n = _f64(g["r"]), _f64(g["z"]), _f64(g["n"])  # (B, T, H)
    h_prev = _f64(traj.h[:, :-1])  # (B, T, H)
    rr, rz, rn = (cell.gate_rows(name) for name in ("r", "z", "n"))
    W_hr, W_hz, W_hn = (_f64(cell.W_hh[rows]) for rows in (rr, rz, rn))  # each (H, H)
    m = h_prev @ W_hn.T + _f64(cell.b_hh[rn])  # W_hn h_{k-1} + b_hn, (B, T, H)
    candidate = (1 - z) * (1 - n**2) * (r * torch.diagonal(W_hn) + m * r * (1 - r) * torch.diagonal(W_hr))
    update = (h_prev - n) * z * (1 - z) * torch.diagonal(W_hz)
    return z, candidate + update, None


def _lstm_terms(traj: Trajectory):
    cell, g = cast(LSTMCell, traj.cell), traj.gates
    i, f, gg, o = (_f64(g[name]) for name in ("i", "f", "g", "o"))  # (B, T, H)
    assert traj.c is not None
    c = _f64(traj.c)  # c_0..c_T, (B, T + 1, H)
    ri, rf, rg = (cell.gate_rows(name) for name in ("i", "f", "g"))
    W_hi, W_hf, W_hg = (_diag(cell.W_hh[rows]) for rows in (ri, rf, rg))  # each (H,)
    c_prev = c[:, :-1]  # c_{k-1}, (B, T, H)
    c_tilde = c_prev * f * (1 - f) * W_hf + i * (1 - gg**2) * W_hg + gg * i * (1 - i) * W_hi
    e = o * (1 - torch.tanh(c[:, 1:]) ** 2)  # e_1..e_T = dh_k/dc_k, (B, T, H)
    e_prev = torch.cat([torch.zeros_like(e[:, :1]), e[:, :-1]], dim=1)  # e_0 = 0, .., e_{T-1}
    return f, c_tilde * e_prev, e


_TERMS = {"const": _leaky_terms, "shared": _leaky_terms, "diag": _leaky_terms, "gru": _gru_terms, "lstm": _lstm_terms}


def transport_terms(traj: Trajectory) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""The per-step leak :math:`\lambda_k`, diagonal :math:`\rho_k` and window-end factor of ``traj``.

    Returns three float64 tensors ``(B, T, H)``, index ``k - 1`` for step :math:`k`: ``leak``
    (clipped below at the smallest normal float64, so its logarithm is finite), ``rho`` and
    ``end`` (:math:`e_t` for the LSTM, ones otherwise).
    """
    if not isinstance(traj, Trajectory):
        raise TypeError(f"traj must be a seqlearn.learnability.models.Trajectory (from run), got {type(traj).__name__}")
    leak, rho, end = _TERMS[traj.architecture](traj)
    leak = leak.clamp_min(torch.finfo(torch.float64).tiny)
    return leak, rho, torch.ones_like(leak) if end is None else end


def _lags(lags, T: int) -> np.ndarray:
    return int_array(lags, "lags", ndim=1, low=1, high=T)


def _order(order) -> int:
    return integer(order, "order", low=0, high=1)


@reference
def transport(traj: Trajectory, lags, order: int = 1) -> torch.Tensor:
    r""":math:`\Gamma^{(q)}_{t,\ell}` for every lag in ``lags`` and every window end :math:`t`, by prefix sums.

    Parameters
    ----------
    traj : Trajectory
        From :func:`~seqlearn.learnability.models.run`.
    lags : sequence of int
        Lags :math:`\ell`, each in :math:`[1, T]`.
    order : int
        1: the first-order factor; 0: the gate product alone, :math:`\prod_j \lambda_j` (times
        :math:`e_t` for the LSTM).

    Returns
    -------
    torch.Tensor, float64, shape ``(B, len(lags), T, H)``
        ``[b, i, t - 1, q]`` is :math:`\Gamma^{(q)}_{t, \ell_i}` of sequence :math:`b`, the window
        :math:`j = t - \ell_i + 1, \dots, t` (it carries :math:`h_{t-\ell_i}` to :math:`h_t`);
        NaN where :math:`t < \ell_i`.
    """
    leak, rho, end = transport_terms(traj)
    B, T, H = leak.shape
    lag = torch.as_tensor(_lags(lags, T), device=leak.device)  # (n,)
    order = _order(order)
    zero = leak.new_zeros(B, 1, H)
    L = torch.cat([zero, torch.cumsum(torch.log(leak), dim=1)], dim=1)  # L_0..L_T, (B, T + 1, H)
    P = torch.cat([zero, torch.cumsum(rho / leak, dim=1)], dim=1)  # P_0..P_T, (B, T + 1, H)
    t = torch.arange(1, T + 1, device=leak.device)  # window ends, (T,)
    start = (t[None, :] - lag[:, None]).clamp_min(0)  # t - l, (n, T)
    gamma = torch.exp(L[:, t][:, None] - L[:, start])  # (B, n, T, H)
    if order == 1:
        gamma = gamma * (1 + P[:, t][:, None] - P[:, start])
    gamma = gamma * end[:, None]
    valid = (t[None, :] >= lag[:, None])[None, :, :, None]  # (1, n, T, 1)
    return torch.where(valid, gamma, torch.full_like(gamma, math.nan))


def transport_loop(traj: Trajectory, lags, order: int = 1) -> torch.Tensor:
    r""":func:`transport` by a plain loop over windows: a product and a sum per window (the reference).

    Same arguments and result; :math:`O(T^2)` per lag instead of :math:`O(T)`.
    """
    leak, rho, end = transport_terms(traj)
    B, T, H = leak.shape
    lags = _lags(lags, T)
    order = _order(order)
    gamma = leak.new_full((B, len(lags), T, H), math.nan)
    for i, ell in enumerate(lags):
        for t in range(ell, T + 1):  # window end, 1-based
            product, total = leak.new_ones(B, H), leak.new_zeros(B, H)
            for j in range(t - ell + 1, t + 1):  # steps of the window, 1-based
                product = product * leak[:, j - 1]
                total = total + rho[:, j - 1] / leak[:, j - 1]
            factor = product * (1 + total) if order == 1 else product
            gamma[:, i, t - 1] = end[:, t - 1] * factor
    return gamma


def recurrent_matrices(cell) -> list[tuple[torch.nn.Parameter, slice]]:
    r"""The cell's :math:`H \times H` recurrent matrices, as (parameter, rows) pairs.

    :math:`W_h` (and :math:`U_s` for DiagGate); the GRU's :math:`W_{hr}, W_{hz}, W_{hn}` and the
    LSTM's :math:`W_{hi}, W_{hf}, W_{hg}, W_{ho}`, each a row block of ``W_hh``.
    """
    if isinstance(cell, (GRUCell, LSTMCell)):
        return [(cell.W_hh, cell.gate_rows(name)) for name in cell.gate_names]
    if isinstance(cell, LeakyGatedCell):
        H = cell.hidden_size
        pairs = [(cell.W_h, slice(0, H))]
        return [*pairs, (cell.U_s, slice(0, H))] if isinstance(cell, DiagGate) else pairs
    raise TypeError(f"cell must be one of the five architectures' cells, got {type(cell).__name__}")


def adaptive_rates(cell, optimizer: torch.optim.Optimizer) -> torch.Tensor:
    r"""Adam's (or RMSProp's) per-weight rates, averaged over the cell's recurrent matrices: ``(H, H)`` float64.

    .. math::
        \lambda_{qj} = \frac{\eta}{\sqrt{\hat v_{qj}} + \epsilon}, \qquad
        \hat v = \frac{v}{1 - \beta_2^{n}} \ \text{(Adam, AdamW)}, \quad \hat v = v \ \text{(RMSProp)},

    read from ``optimizer``'s state after :math:`n \ge 1` steps (the first moment is ignored), the
    mean taken over :func:`recurrent_matrices`.
    """
    if not isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop)):
        raise TypeError(f"optimizer must be torch.optim.Adam, AdamW or RMSprop, got {type(optimizer).__name__}")
    blocks = []
    for p, rows in recurrent_matrices(cell):
        group = next((g for g in optimizer.param_groups if any(q is p for q in g["params"])), None)
        state = optimizer.state.get(p, {})
        if group is None or not state:
            raise ValueError("optimizer must hold the cell's recurrent matrices and have taken a step")
        if isinstance(optimizer, torch.optim.RMSprop):
            v = _f64(state["square_avg"])
        else:
            step = float(state["step"])
            v = _f64(state["exp_avg_sq"]) / (1 - group["betas"][1] ** step)
        blocks.append(group["lr"] / (torch.sqrt(v[rows]) + group["eps"]))  # (H, H)
    return torch.stack(blocks).mean(dim=0)


def rayleigh_rates(lam: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    r"""Per-neuron base rates :math:`\Lambda^{(q)} = \sum_j \lambda_{qj} h_j^2 / \sum_j h_j^2` (float64).

    ``lam`` ``(H, H)``, ``h`` the presynaptic state ``(..., H)``; where :math:`h = 0` the row mean
    :math:`\frac1H \sum_j \lambda_{qj}` (also what isotropic states give). Returns ``(..., H)``.
    """
    if not isinstance(lam, torch.Tensor) or not isinstance(h, torch.Tensor):
        raise TypeError("lam and h must be torch.Tensors")
    H = h.shape[-1]
    if lam.shape != (H, H):
        raise ValueError(f"lam must have shape (H, H) = ({H}, {H}) for h's last dimension, got {tuple(lam.shape)}")
    lam, h2 = _f64(lam), _f64(h) ** 2
    norm = h2.sum(dim=-1, keepdim=True)  # (..., 1)
    quotient = (h2 @ lam.T) / torch.where(norm > 0, norm, torch.ones_like(norm))  # (..., H)
    return torch.where(norm > 0, quotient, lam.mean(dim=1).expand_as(quotient))


def base_rates(traj: Trajectory, lags, lam: torch.Tensor) -> torch.Tensor:
    r""":math:`\Lambda^{(q)}_{t,\ell}`, aligned with :func:`transport`: ``(B, len(lags), T, H)`` float64.

    The Rayleigh rate (:func:`rayleigh_rates`) at the presynaptic state of the perturbation time
    :math:`k = t - \ell`, :math:`h_{k-1}` (the row mean when :math:`k = 0`); NaN where
    :math:`t < \ell`. Then :math:`\mu = \Lambda \Gamma` and ``envelope(mu)`` is the adaptive envelope.
    """
    if not isinstance(traj, Trajectory):
        raise TypeError(f"traj must be a seqlearn.learnability.models.Trajectory (from run), got {type(traj).__name__}")
    h = _f64(traj.h)  # h_0..h_T, (B, T + 1, H)
    B, T, H = h.shape[0], h.shape[1] - 1, h.shape[2]
    lag = torch.as_tensor(_lags(lags, T), device=h.device)  # (n,)
    padded = torch.cat([h.new_zeros(B, 1, H), h], dim=1)  # index k holds h_{k-1}; h_{-1} := 0, (B, T + 2, H)
    t = torch.arange(1, T + 1, device=h.device)
    k = (t[None, :] - lag[:, None]).clamp_min(0)  # perturbation times, (n, T)
    rates = rayleigh_rates(lam.to(h.device), padded[:, k])  # (B, n, T, H)
    valid = (t[None, :] >= lag[:, None])[None, :, :, None]
    return torch.where(valid, rates, torch.full_like(rates, math.nan))


def envelope(gamma: torch.Tensor, lr: float = 1.0) -> torch.Tensor:
    r"""The SGD envelope :math:`\hat f(\ell) = \mathrm{mean}_{b,t} \sum_q |\eta\, \Gamma^{(q)}_{b,t,\ell}|`.

    ``gamma`` ``(B, n, T, H)`` from :func:`transport` (NaN outside the windows); the mean runs
    over sequences and the :math:`T - \ell + 1` window ends of each lag. Returns ``(n,)``. For
    an adaptive optimiser pass :math:`\mu = \Lambda \Gamma` (``base_rates(...) * gamma``) and ``lr=1``.
    """
    if not isinstance(gamma, torch.Tensor):
        raise TypeError(f"gamma must be a torch.Tensor (from transport), got {type(gamma).__name__}")
    if gamma.ndim != 4:
        raise ValueError(f"gamma must have shape (B, n_lags, T, H), got {tuple(gamma.shape)}")
    lr = real(lr, "lr", low=0.0, low_open=True)
    mass = (lr * gamma.abs()).sum(dim=-1)  # ||mu||_1 per sequence, lag, window end; NaN outside, (B, n, T)
    return torch.nanmean(mass.transpose(0, 1).reshape(gamma.shape[1], -1), dim=1)  # (n,)


def spectrum_envelope(s, lags, lr: float = 1.0) -> np.ndarray:
    r"""The zero-order envelope of constant per-neuron gates, :math:`f(\ell) = \eta \sum_q (1 - s_q)^\ell`.

    A Laplace transform of the gate spectrum: one :math:`s` gives an exponential; a density
    :math:`p(s) \propto s^{\beta - 1}` near 0 gives :math:`f \propto \ell^{-\beta}`. ``s``: the
    write gates, each in (0, 1), shape ``(H,)``; ``lags`` ``(n,)``, each >= 1. Returns ``(n,)``.
    """
    s = real_array(s, "s", ndim=1)
    if s.size == 0 or (s <= 0).any() or (s >= 1).any():
        raise ValueError("s must be a non-empty array of write gates, each in (0, 1)")
    lags = int_array(lags, "lags", ndim=1, low=1)
    lr = real(lr, "lr", low=0.0, low_open=True)
    return lr * np.exp(lags[:, None] * np.log1p(-s)[None, :]).sum(axis=1)  # (n,)
