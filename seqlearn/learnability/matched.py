r"""The matched statistic: lag-:math:`\ell` gradient evidence, one number per step or per sequence.

Backpropagation carries the error at step :math:`t` back to the state at :math:`t - \ell`, and a
parameter direction :math:`w` moves that state by the forward sensitivity
:math:`v_{t-\ell} = (\partial h_{t-\ell}/\partial\theta)[w]` (a Jacobian-vector product, by
:func:`torch.func.jvp`). Weighting each neuron's transported error by its effective learning
rate gives (Livi, arXiv 2512.05790)

.. math::
    \psi_{n,t}(\ell) = \sum_q \mu^{(q)}_{n,t,\ell}\, \delta^{(q)}_{n,t}\, v^{(q)}_{n,t-\ell},
    \qquad \delta_{n,t} = (\hat y_{n,t} - y_{n,t})\, w_{out},

with :math:`\mu = \Lambda\Gamma` (:mod:`~seqlearn.learnability.effective_rates`). Two sample types:
*instantaneous* (every sequence :math:`n` and window end :math:`t`, pooled) and *per-sequence
means* :math:`\bar\psi_n(\ell) = \mathrm{mean}_t\, \psi_{n,t}(\ell)`, further averaged over
:math:`K` random unit directions :math:`w_k` (the paper's final runs). The second are the
:math:`N` independent samples of the learnability window; averaging over steps pulls their
tails towards the Gaussian. :func:`matched_terms` keeps the per-sequence means apart per neuron,
:math:`\varphi_{n,q}(\ell)` with :math:`\sum_q \varphi_{n,q}(\ell) = \bar\psi_n(\ell)`.
"""

from __future__ import annotations

import math

import torch
from torch.func import functional_call, jvp, vmap

from ..seeding import torch_generator
from ..validation import integer

__all__ = [
    "random_directions",
    "sensitivities",
    "sensitivities_along",
    "matched_statistic",
    "matched_terms",
    "matched_statistic_and_terms",
]


def random_directions(model: torch.nn.Module, K: int, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    r""":math:`K` directions :math:`w_k \sim \mathcal N(0, I)` over all trainable parameters, each of unit norm.

    Each is a dict ``name -> tensor`` shaped like the parameter; the norm is taken over all
    parameters jointly. Seeded: direction :math:`k` depends on ``seed`` and :math:`k` only.
    """
    K = integer(K, "K", low=1)
    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    directions = []
    for k in range(K):
        g = torch_generator(integer(seed, "seed", low=0) * 1009 + k)
        w = {name: torch.randn(p.shape, generator=g, dtype=torch.float64) for name, p in params.items()}
        norm = math.sqrt(sum(float((t**2).sum()) for t in w.values()))
        directions.append({name: (w[name] / norm).to(p.dtype).to(p.device) for name, p in params.items()})
    return directions


def _trajectory_of_parameters(model: torch.nn.Module, x: torch.Tensor):
    r"""The trainable parameters :math:`\theta` (detached) and the map from them to :math:`h_0 .. h_T` over ``x``."""
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    buffers = dict(model.named_buffers())

    def states(p: dict) -> torch.Tensor:
        return functional_call(model, (p, buffers), (x,), {"states": True})

    return params, states


def sensitivities(model: torch.nn.Module, x: torch.Tensor, direction: dict) -> torch.Tensor:
    r"""The forward sensitivity of the whole state trajectory, :math:`v_t = (\partial h_t/\partial\theta)[w]`.

    ``model``: a :class:`~seqlearn.learnability.task.GatedRegressor` (``model(x, states=True)``
    returns :math:`h_0, \dots, h_T`); ``x`` ``(B, T, D)``; ``direction`` from
    :func:`random_directions`. Returns ``(B, T + 1, H)`` (:math:`v_0 = 0`: :math:`h_0` is
    given), by one forward-mode pass.
    """
    params, states = _trajectory_of_parameters(model, x)
    tangents = {name: direction[name] for name in params}
    return jvp(states, (params,), (tangents,))[1]


def sensitivities_along(model: torch.nn.Module, x: torch.Tensor, directions: list[dict]) -> torch.Tensor:
    r""":func:`sensitivities` along each of :math:`K` directions, ``(K, B, T + 1, H)``, in one vectorised pass.

    :math:`v^{(k)}_t = (\partial h_t/\partial\theta)[w_k]` for :math:`k = 1, \dots, K`: the tangents
    :math:`w_k` are stacked along a leading axis and :func:`torch.func.vmap` maps the forward-mode pass
    over it, so the trajectory's operations run once for all :math:`K` (the same values as one
    :func:`sensitivities` per direction, at a fraction of the cost of :math:`K` passes).
    """
    if not isinstance(directions, (list, tuple)) or not directions:
        raise ValueError("directions must be a non-empty list of directions (dicts from random_directions)")
    params, states = _trajectory_of_parameters(model, x)
    tangents = {name: torch.stack([w[name] for w in directions]) for name in params}  # each (K, ...)
    return vmap(lambda tangent: jvp(states, (params,), (tangent,))[1])(tangents)


def _lagged_products(mu: torch.Tensor, delta: torch.Tensor, v: torch.Tensor, lags) -> torch.Tensor:
    r"""Each neuron's :math:`\mu^{(q)}_{n,t,\ell}\, \delta^{(q)}_{n,t}\, v^{(q)}_{n,t-\ell}`: ``(B, n_lags, T, H)``
    float64, NaN where :math:`t - \ell < 1`."""
    B, _, T, H = mu.shape
    if delta.shape != (B, T, H) or v.shape != (B, T + 1, H):
        raise ValueError(
            f"delta must be (B, T, H) = {(B, T, H)} and v (B, T + 1, H) = {(B, T + 1, H)}, "
            f"got {tuple(delta.shape)} and {tuple(v.shape)}"
        )
    lag = torch.as_tensor(lags, device=mu.device).reshape(-1)  # (n,)
    t = torch.arange(1, T + 1, device=mu.device)  # window ends
    start = (t[None, :] - lag[:, None]).clamp_min(0)  # t - l, (n, T)
    v_start = v.to(torch.float64)[:, start]  # (B, n, T, H)
    products = mu * delta.to(torch.float64)[:, None] * v_start  # (B, n, T, H)
    valid = (t[None, :] - lag[:, None] >= 1)[None, :, :, None]  # (1, n, T, 1)
    return torch.where(valid, products, torch.full_like(products, math.nan))


def matched_statistic(mu: torch.Tensor, delta: torch.Tensor, v: torch.Tensor, lags) -> torch.Tensor:
    r""":math:`\psi_{n,t}(\ell) = \sum_q \mu^{(q)}_{n,t,\ell}\, \delta^{(q)}_{n,t}\, v^{(q)}_{n,t-\ell}`.

    Parameters
    ----------
    mu : ``(B, n_lags, T, H)``, indexed like :func:`~seqlearn.learnability.effective_rates.transport`
        (``[:, i, t - 1]``: the window ending at :math:`t`).
    delta : ``(B, T, H)``, ``[:, t - 1]`` = :math:`\delta_t`, the output-projected error at :math:`h_t`.
    v : ``(B, T + 1, H)``, :math:`v_0, \dots, v_T` from :func:`sensitivities`.
    lags : the lags of ``mu``'s second axis.

    Returns
    -------
    ``(B, n_lags, T)`` float64: ``[:, i, t - 1]`` = :math:`\psi_t(\ell_i)`; NaN where
    :math:`t - \ell_i < 1` (no sensitivity at :math:`h_0`).
    """
    return _lagged_products(mu, delta, v, lags).sum(dim=-1)


def matched_terms(mu: torch.Tensor, delta: torch.Tensor, v: torch.Tensor, lags) -> torch.Tensor:
    r"""The per-neuron terms of the per-sequence mean, :math:`\varphi_{n,q}(\ell) = \mathrm{mean}_t\,
    \mu^{(q)}_{n,t,\ell}\, \delta^{(q)}_{n,t}\, v^{(q)}_{n,t-\ell}`.

    The summands of :func:`matched_statistic`, averaged over the valid window ends
    :math:`t = \ell + 1, \dots, T` instead of summed over the neurons: :math:`\sum_q
    \varphi_{n,q}(\ell) = \bar\psi_n(\ell)` (to rounding). Kept apart, they let each neuron be
    oriented by the sign of its own mean (:mod:`~seqlearn.learnability.masterlaw`). Arguments as
    in :func:`matched_statistic`.

    Returns
    -------
    ``(B, n_lags, H)`` float64 (NaN for a lag :math:`\ge T`: no valid window).
    """
    return torch.nanmean(_lagged_products(mu, delta, v, lags), dim=2)


def matched_statistic_and_terms(
    mu: torch.Tensor, delta: torch.Tensor, v: torch.Tensor, lags
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`matched_statistic` ``(B, n_lags, T)`` and :func:`matched_terms` ``(B, n_lags, H)`` from one product."""
    products = _lagged_products(mu, delta, v, lags)
    return products.sum(dim=-1), torch.nanmean(products, dim=2)
