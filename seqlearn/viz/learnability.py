r"""Chapter 5's figures: the exactly solvable toy and the trained networks' diagnostics, one message each.

Each function takes the chapter's data objects and returns the :class:`matplotlib.figure.Figure`
(made with ``pyplot``, so a notebook shows it). The trained-network figures take ``runs``, a
mapping ``(architecture, seed) -> Diagnostics`` (:func:`~seqlearn.learnability.learnability_experiment`),
and ``names``, ``architecture -> label`` in the order of the colours; an architecture's first seed is
drawn thick and labelled, its other seeds thin. matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = [
    "plot_toy_laws",
    "plot_envelopes",
    "plot_time_scales",
    "plot_tail_index",
    "plot_requirement",
    "plot_windows",
]


def _subplots(ncols: int, width: float):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width, 3.9), squeeze=False, gridspec_kw={"wspace": 0.28})
    return fig, list(axes[0])


def _plain_minor_ticks(ax) -> None:
    """No labels on a log x axis's minor ticks (they overlap where the axis spans less than two decades)."""
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())


def _check_runs(runs: Mapping, names: Mapping) -> None:
    if not runs:
        raise ValueError("runs must hold at least one (architecture, seed) -> Diagnostics")
    unknown = sorted({arch for arch, _ in runs} - set(names))
    if unknown:
        raise ValueError(f"runs has architectures without a name in names: {unknown}")


def _styled(runs: Mapping, names: Mapping):
    """``(d, colour, thick, label)`` per run: one colour per architecture, its first seed thick and labelled."""
    _check_runs(runs, names)
    first: dict = {}
    for arch, seed in runs:
        first.setdefault(arch, seed)
    for (arch, seed), d in runs.items():
        thick = seed == first[arch]
        yield d, f"C{list(names).index(arch)}", thick, names[arch] if thick else None


def plot_toy_laws(laws: Mapping, windows: Mapping):
    r"""The toy against its closed forms: :math:`N_{req} = C f^{-\kappa_\alpha}` (left) and
    :math:`H_N = (\tau/\kappa_\alpha)\ln(N/C)` (right).

    ``laws`` and ``windows`` map :math:`\alpha` to a :class:`~seqlearn.learnability.ToyDetection`;
    each of ``windows`` has one time scale (``s`` of length 1). Left: measured :math:`N_{req}(\ell)`
    (points, lags detected inside the grid) against :math:`f(\ell)`, the master law as a line.
    Right: the measured window (steps) and the closed form (dashed).
    """
    from ..learnability.window import window_exponential

    if not laws or not windows:
        raise ValueError("laws and windows must each map at least one alpha to a ToyDetection")
    if any(d.s.size != 1 for d in windows.values()):
        raise ValueError("each ToyDetection of windows must have one time scale: the closed form is exponential")
    fig, (ax_law, ax_win) = _subplots(2, 12)
    for i, (alpha, d) in enumerate(laws.items()):
        inside = d.N_req > d.N_grid[0]
        f = np.geomspace(d.f[inside].min(), d.f[inside].max(), 50)
        ax_law.loglog(d.f[inside], d.N_req[inside], "o", ms=3, color=f"C{i}", label=rf"$\alpha$ = {alpha:g}: measured")
        ax_law.loglog(f, d.constant() * f ** -d.kappa, "-", lw=1, color=f"C{i}",
                      label=rf"$C f^{{-\kappa}}$, $\kappa$ = {d.kappa:.2f}")  # fmt: skip
    ax_law.set(xlabel=r"envelope $f(\ell)$", ylabel=r"$N_{req}(\ell)$", title="the master law")
    _plain_minor_ticks(ax_law)
    for i, (alpha, d) in enumerate(windows.items()):
        closed = window_exponential(d.N_grid, float(d.tau[0]), d.alpha, C=d.constant())
        ax_win.step(d.N_grid, d.window(), where="post", color=f"C{i}", label=rf"$\alpha$ = {alpha:g}: measured")
        ax_win.plot(d.N_grid, closed, "--", lw=1.2, color="k" if i == 0 else "grey",
                    label=rf"$(\tau/\kappa)\ln(N/C)$, $\alpha$ = {alpha:g}")  # fmt: skip
    ax_win.set(xscale="log", xlabel="samples N", ylabel=r"window $H_N$ (lags)",
               title=rf"one time scale, $\tau$ = {float(next(iter(windows.values())).tau[0]):.1f}")  # fmt: skip
    for ax in (ax_law, ax_win):
        ax.legend(fontsize=8)
    return fig


def plot_envelopes(runs: Mapping, names: Mapping, lags, retention: float = 0.95):
    r"""Measured envelopes :math:`\hat f(\ell)/\hat f(\ell_0)` on log-linear (left) and log-log axes (right).

    References: the gate product :math:`\lambda^{\ell - \ell_0}` (``retention`` :math:`\lambda`, a
    line on the left) and :math:`(\ell/\ell_0)^{-1}` (a line on the right). ``lags`` ``(L,)``.
    """
    lags = np.asarray(lags, dtype=float)
    fig, axes = _subplots(2, 12)
    for d, color, thick, label in _styled(runs, names):
        if np.shape(d.f) != lags.shape:
            raise ValueError(f"each run's f must have the shape of lags {lags.shape}, got {np.shape(d.f)}")
        for ax in axes:
            ax.plot(lags, d.f / d.f[0], color=color, lw=1.6 if thick else 0.6, label=label)
    axes[0].plot(lags, retention ** (lags - lags[0]), "k:", lw=1,
                 label=rf"${retention:g}^{{\ell - {lags[0]:g}}}$ (ConstGate's gate)")  # fmt: skip
    axes[1].plot(lags, (lags / lags[0]) ** -1.0, "k--", lw=1, label=r"$\ell^{-1}$")
    axes[0].set(yscale="log", title="log-linear: an exponential is a line")
    axes[1].set(xscale="log", yscale="log", title="log-log: a power law is a line")
    _plain_minor_ticks(axes[1])
    axes[1].set_xticks(lags[[0, lags.size // 2, -1]], [f"{v:g}" for v in lags[[0, lags.size // 2, -1]]])
    for ax in axes:
        ax.set(xlabel=r"lag $\ell$", ylabel=rf"$\hat f(\ell)/\hat f({lags[0]:g})$")
        ax.legend(fontsize=7)
    return fig


def plot_time_scales(runs: Mapping, names: Mapping, tau_reference: float):
    r"""Each run's spectrum of per-neuron time scales :math:`\tau_q` as a CCDF, with ``tau_reference`` marked."""
    fig, (ax,) = _subplots(1, 6.4)
    for d, color, thick, label in _styled(runs, names):
        tau = np.sort(d.time_scales()[np.isfinite(d.time_scales())])
        ax.step(
            tau, 1 - np.arange(tau.size) / tau.size, where="post", color=color, lw=1.6 if thick else 0.6, label=label
        )
    ax.axvline(tau_reference, color="k", ls=":", lw=1, label=rf"$\tau$ = {tau_reference:.1f} (initial gate)")
    ax.set(xscale="log", yscale="log", xlabel=r"per-neuron time scale $\tau_q$ (steps)",
           ylabel=r"fraction of neurons with $\tau_q \geq$ x", title="time-scale spectra")  # fmt: skip
    ax.legend(fontsize=7)
    return fig


def plot_tail_index(runs: Mapping, names: Mapping, lags):
    r""":math:`\hat\alpha(\ell)` of the per-sequence means (solid) and of single steps (dashed), Gaussian at 2."""
    fig, (ax,) = _subplots(1, 6.4)
    for d, color, thick, label in _styled(runs, names):
        lw = 1.6 if thick else 0.6
        ax.plot(lags, d.alpha, color=color, lw=lw, label=label)
        ax.plot(lags, d.alpha_instantaneous, "--", color=color, lw=lw)
    ax.axhline(2, color="k", ls=":", lw=1, label=r"Gaussian, $\alpha$ = 2")
    ax.set(xlabel=r"lag $\ell$", ylabel=r"$\hat\alpha(\ell)$", ylim=(1, 2.05),
           title=r"$\hat\alpha$: per sequence (solid), per step (dashed)")  # fmt: skip
    ax.legend(fontsize=7, ncol=2)
    return fig


def plot_requirement(runs: Mapping, names: Mapping, N_max: int, noise_floor: float):
    r"""The continuous requirement :math:`N^* = (\varepsilon\hat\gamma/|\bar m|)^{\hat\kappa}` against
    :math:`\hat f`, one point per lag.

    Each run's ``mean``, ``alpha`` (floored at 1.01), ``sigma`` (the fitted scale :math:`\hat\gamma`) and
    ``eps``; lines at the grid's largest ``N_max`` and at a pure-noise lag's typical ``noise_floor``.
    """
    from ..learnability.window import required_samples_continuous

    fig, (ax,) = _subplots(1, 6.4)
    for d, color, thick, label in _styled(runs, names):
        N_star = required_samples_continuous(d.mean, np.maximum(d.alpha, 1.01), d.sigma, d.eps)
        ax.loglog(d.f, N_star, "o", ms=3.5 if thick else 2.5, color=color, label=label)
    ax.axhline(N_max, color="k", ls=":", lw=1, label=f"grid's largest N = {N_max}")
    ax.axhline(noise_floor, color="grey", ls="--", lw=1, label="typical N* of pure noise")
    ax.set(xlabel=r"envelope $\hat f(\ell)$", ylabel=r"$N^*(\ell) = (\varepsilon\hat\gamma/|\bar m|)^{\hat\kappa}$",
           title="samples needed against the envelope")  # fmt: skip
    _plain_minor_ticks(ax)
    ax.legend(fontsize=7)
    return fig


def plot_windows(runs: Mapping, names: Mapping, lag_max: int, n_measured: int):
    r"""Each run's :math:`H_N` against :math:`N`, with the largest lag and the sequences measured marked."""
    fig, (ax,) = _subplots(1, 6.4)
    for d, color, thick, label in _styled(runs, names):
        ax.step(d.N_grid, d.H_N, where="post", color=color, lw=1.6 if thick else 0.6, label=label)
    ax.axhline(lag_max, color="k", ls=":", lw=1, label=f"largest lag of the grid ({lag_max})")
    ax.axvline(n_measured, color="grey", ls="--", lw=1, label=f"sequences measured ({n_measured})")
    ax.set(xscale="log", xlabel="samples N", ylabel=r"window $H_N$ (lags)", title="the window of each run")
    ax.legend(fontsize=7)
    return fig
