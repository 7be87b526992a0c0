r"""Memory capacity of orthogonal reservoirs, linear and tanh, against the input scaling (Jaeger 2002).

The reservoir :math:`x_t = \phi(W_{in} u_t + W x_{t-1})` (no leak, no bias) with :math:`W = \rho\,Q`,
:math:`Q` a random orthogonal matrix (White, Lee & Sompolinsky 2004), is driven by an i.i.d. input
:math:`u_t \sim U(-0.5, 0.5)`, and :func:`~seqlearn.reservoir.diagnostics.memory_capacity` measures
:math:`\mathrm{MC} = \sum_{k=1}^{k_{max}} \mathrm{MC}_k \le N` after a washout.

:math:`W_{in} u` is linear in the input scaling :math:`s`: the tanh reservoir with scaling :math:`s`
driven by :math:`u` is the one with scaling 1 driven by :math:`s\,u`, so :func:`memory_sweep` runs all
scalings of a seed as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..rnn.jacobians import orthogonal_matrix
from ..validation import integer, real, real_array
from .diagnostics import memory_capacity
from .esn import EchoStateNetwork

__all__ = ["MemorySweep", "iid_input", "orthogonal_reservoir", "memory_sweep"]


def iid_input(n_steps: int, seed: int) -> np.ndarray:
    """``(n_steps,)`` i.i.d. draws from :math:`U(-0.5, 0.5)`, from ``numpy.random.default_rng(seed)``."""
    return np.random.default_rng(seed).uniform(-0.5, 0.5, integer(n_steps, "n_steps", low=1))


def orthogonal_reservoir(
    N: int, radius: float, seed: int, *, activation: str = "tanh", input_scaling: float = 1.0
) -> EchoStateNetwork:
    r"""An :class:`EchoStateNetwork` with :math:`W = \rho\,Q` (``radius`` :math:`\rho`), no bias, no leak, one input.

    :math:`Q` is :func:`~seqlearn.rnn.orthogonal_matrix` ``(N, 1, seed)``; :math:`W_{in}` is drawn from
    :math:`U(-s_{in}, s_{in})` with ``seed``.
    """
    W = orthogonal_matrix(N, real(radius, "radius", low=0.0), seed=seed)  # (N, N)
    return EchoStateNetwork(
        1, N, spectral_radius=None, W=W, bias_scaling=0.0, activation=activation, input_scaling=input_scaling,
        seed=seed,
    )  # fmt: skip


@dataclass(frozen=True)
class MemorySweep:
    """What :func:`memory_sweep` measured.

    Attributes
    ----------
    scales : numpy.ndarray, shape ``(S,)``
        The input scalings :math:`s_{in}` of the tanh reservoirs.
    linear : numpy.ndarray, shape ``(n_seeds,)``
        MC of the linear reservoir of each seed.
    tanh : numpy.ndarray, shape ``(n_seeds, S)``
        MC of the tanh reservoir of each seed at each scaling.
    linear_curve : numpy.ndarray, shape ``(k_max,)``
        The first seed's linear memory function :math:`\\mathrm{MC}_k`, :math:`k = 1..k_{max}`.
    tanh_curves : numpy.ndarray, shape ``(S, k_max)``
        The first seed's tanh memory functions, one per scaling.
    """

    scales: np.ndarray
    linear: np.ndarray
    tanh: np.ndarray
    linear_curve: np.ndarray
    tanh_curves: np.ndarray


def memory_sweep(
    N: int,
    scales,
    seeds: Sequence[int],
    *,
    radius: float = 0.9,
    n_steps: int = 5000,
    washout: int = 200,
    k_max: int | None = None,
    linear_scaling: float = 0.1,
) -> MemorySweep:
    r"""Memory capacity of :func:`orthogonal_reservoir` s, linear and tanh, for each seed and input scaling.

    Seed :math:`s` draws :math:`Q`, :math:`W_{in}` and the input :func:`iid_input` ``(washout + n_steps, s)``;
    the linear reservoir (input scaling ``linear_scaling``: a linear reservoir's MC does not depend on it) and
    the tanh reservoirs at every scaling in ``scales`` share them. The first ``washout`` states are
    dropped; ``k_max`` defaults to :math:`2N`.

    Returns
    -------
    MemorySweep
    """
    N = integer(N, "N", low=1)
    s_in = real_array(scales, "scales", ndim=1)
    if not s_in.size or (s_in <= 0).any():
        raise ValueError(f"scales must be positive input scalings, got {s_in}")
    seeds = [integer(s, "each seed", low=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    n_steps, washout = integer(n_steps, "n_steps", low=1), integer(washout, "washout", low=0)
    K = 2 * N if k_max is None else integer(k_max, "k_max", low=1)
    linear, tanh = np.empty(len(seeds)), np.empty((len(seeds), len(s_in)))
    curves: dict[str, np.ndarray] = {}
    for i, seed in enumerate(seeds):
        u = iid_input(washout + n_steps, seed)  # (washout + n_steps,)
        x_lin, _ = orthogonal_reservoir(N, radius, seed, activation="identity", input_scaling=linear_scaling).run(u)
        linear[i], r2_lin = memory_capacity(x_lin[washout:], u[washout:], K)
        x_tanh, _ = orthogonal_reservoir(N, radius, seed).run(s_in[:, None, None] * u[None, :, None])  # (S, T, N)
        fits = [memory_capacity(x[washout:], u[washout:], K) for x in x_tanh]
        tanh[i] = [mc for mc, _ in fits]
        if i == 0:
            curves = {"linear": r2_lin, "tanh": np.stack([r2 for _, r2 in fits])}
    return MemorySweep(s_in, linear, tanh, curves["linear"], curves["tanh"])
