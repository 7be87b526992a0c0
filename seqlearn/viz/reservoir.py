r"""Chapter 4's figures on echo state networks: the echo state property, free runs, memory, cost.

Each function takes the computed numbers (arrays, not networks) and returns the
:class:`matplotlib.figure.Figure` (made with ``pyplot``, so a notebook shows it) with its axes.
matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..validation import integer, real, real_array

__all__ = [
    "plot_state_distances",
    "plot_free_run",
    "plot_memory_capacity",
    "plot_cost_accuracy",
    "plot_reservoir_panels",
]

BOUND_LABEL = r"bound $\sigma_{\max}^t \, \|x_0 - x'_0\|$"
COST_FAMILIES = {"ESN": ("o", "C0", "ESN: one ridge solve"), "LSTM": ("s", "C1", "LSTM (H = 32): BPTT with Adam")}


def _nonempty_mapping(value, name: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must hold at least one entry")
    return value


def _run_and_truth(truth, run, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``truth`` (L,) and the free run ``run`` of the same shape, checked."""
    truth = real_array(truth, "truth", ndim=1)
    return truth, real_array(run, name, shape=truth.shape)


def plot_state_distances(distances: Mapping, *, rate: float | None, washout: int, washout_label: str, N: int):
    r"""Distance :math:`\|x_t - x'_t\|_2` between two runs of a reservoir from different initial states under
    the same input, on a log axis: the echo state property is this distance going to 0.

    Curve k is drawn in colour ``C{k}``; a 2-D entry (seeds, T + 1) draws one thinner line per seed.
    Right after the first curve comes the contraction bound
    :math:`\|x_t - x'_t\| \le \sigma_{\max}(W)^t \|x_0 - x'_0\|` of a reservoir with
    :math:`\sigma_{\max}(W) = ` ``rate`` < 1 (none when ``rate`` is None).

    Parameters
    ----------
    distances : mapping label -> array, shape (T + 1,) or (S, T + 1)
        The distances at steps 0..T, all of the same T.
    rate : float in (0, 1) or None
        The first curve's contraction factor per step.
    washout : int
        Steps discarded before a readout is fitted (a vertical line), labelled ``washout_label``.
    N : int
        Reservoir size (in the title).

    Returns
    -------
    fig, ax : Figure and Axes
    """
    import matplotlib.pyplot as plt

    distances = _nonempty_mapping(distances, "distances")
    curves = {label: real_array(d, f"distances[{label!r}]", ndim=(1, 2)) for label, d in distances.items()}
    steps = np.arange(next(iter(curves.values())).shape[-1])
    if any(d.shape[-1] != len(steps) for d in curves.values()):
        raise ValueError(f"distances must all have {len(steps)} steps, got {[d.shape for d in curves.values()]}")
    if rate is not None:
        rate = real(rate, "rate", low=0.0, high=1.0, low_open=True, high_open=True)
    washout, N = integer(washout, "washout", low=0), integer(N, "N", low=1)
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    for k, (label, d) in enumerate(curves.items()):
        if d.ndim == 1:
            ax.semilogy(steps, d, color=f"C{k}", label=label)
        for i, row in enumerate(d if d.ndim == 2 else []):
            ax.semilogy(steps, row, color=f"C{k}", lw=1.2, alpha=0.8, label=label if i == 0 else None)
        if k == 0 and rate is not None:
            ax.semilogy(
                steps, d.reshape(-1, len(steps))[0, 0] * rate**steps, color="C0", ls="--", lw=1, label=BOUND_LABEL
            )
    ax.axvline(washout, color="grey", ls=":", lw=1, label=washout_label)
    ax.set(
        xlabel="step t",
        ylabel=r"$\|x_t - x'_t\|_2$",
        ylim=(1e-17, 1e3),
        title=f"Two runs from different initial states, the same input (N = {N})",
    )
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig, ax


def plot_free_run(truth, run, nrmse, *, on_track: int, N: int, trials: int, tau: float, reference: tuple[float, str]):
    r"""A free-running reservoir against the series (left) and its NRMSE at each horizon h (right, log axis).

    :math:`\mathrm{NRMSE}(h) = \sqrt{\langle (\hat y_{t_0+h} - y_{t_0+h})^2 \rangle_{trials}} / \sigma_y`;
    1 is the error of predicting the mean. The left panel marks the last horizon H and the first step whose error
    exceeds :math:`0.1\,\sigma_y`; the right one a published NRMSE at H.

    Parameters
    ----------
    truth, run : array, shape (L,)
        The series and the free run after the end of teacher forcing.
    nrmse : array, shape (S, H)
        NRMSE of each seed at horizons 1..H.
    on_track : int
        First step with error above :math:`0.1\,\sigma_y`.
    N, trials : int
        Reservoir size and trials averaged over (labels).
    tau : float
        The Mackey-Glass delay (title).
    reference : (value, label)
        A published NRMSE at horizon H.

    Returns
    -------
    fig, axes : Figure and its two Axes
    """
    import matplotlib.pyplot as plt

    truth, run = _run_and_truth(truth, run, "run")
    nrmse = real_array(nrmse, "nrmse", ndim=2)
    on_track, N, trials = integer(on_track, "on_track", low=0), integer(N, "N", low=1), integer(trials, "trials", low=1)
    value, label = reference
    value = real(value, "reference", low=0.0, low_open=True)
    H = nrmse.shape[1]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    steps = np.arange(1, len(truth) + 1)
    ax1.plot(steps, truth, color="k", lw=1.2, label="Mackey-Glass series")
    ax1.plot(steps, run, color="C1", ls="--", label="ESN, free running")
    ax1.axvline(H, color="grey", ls=":", lw=1, label=f"{H} steps")
    ax1.axvline(on_track, color="C3", ls=":", lw=1, label=r"first error $> 0.1\,\sigma$")
    ax1.set(xlabel="steps after the end of teacher forcing", ylabel="y", title="Free run vs truth (seed 0, trial 1)")
    ax1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    for i, curve in enumerate(nrmse):
        ax2.semilogy(
            np.arange(1, H + 1),
            curve,
            color="C1",
            alpha=0.8,
            lw=1.2,
            label=f"ESN, N = {N} ({len(nrmse)} seeds)" if i == 0 else None,
        )
    ax2.axhline(1.0, color="k", ls=":", lw=1, label="predicting the mean")
    ax2.plot([H], [value], "k*", ms=11, label=label)
    ax2.set(
        xlabel="free-running steps",
        ylabel=f"NRMSE over {trials} trials",
        ylim=(1e-5, 3),
        title=rf"Error of the free run, $\tau$ = {tau:g}",
    )
    ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    return fig, (ax1, ax2)


def plot_memory_capacity(memory_functions: Mapping, scales, mc_tanh, mc_linear, *, N: int, radius: float):
    r"""Memory functions :math:`\mathrm{MC}_k = r^2(u(n-k), y_k(n))` (left) and the memory capacity
    :math:`\mathrm{MC} = \sum_k \mathrm{MC}_k` of tanh reservoirs against the input scaling (right).

    Jaeger's bound :math:`\mathrm{MC} \le N` and the linear reservoir's median are the reference lines.
    At most four memory functions (black, C0, C1, C3), each labelled with its sum.

    Parameters
    ----------
    memory_functions : mapping label -> array, shape (K,)
        :math:`\mathrm{MC}_k` at delays 1..K.
    scales : array, shape (L,)
        Input scalings :math:`s_{in}`, > 0 (log axis).
    mc_tanh : array, shape (S, L)
        Memory capacity of each seed's tanh reservoir at each scaling.
    mc_linear : array, shape (S,)
        Memory capacity of each seed's linear reservoir.
    N : int
        Reservoir size.
    radius : float
        Spectral radius of the orthogonal :math:`W = \rho Q` (title).

    Returns
    -------
    fig, axes : Figure and its two Axes
    """
    import matplotlib.pyplot as plt

    memory_functions = _nonempty_mapping(memory_functions, "memory_functions")
    styles = ("k-", "C0-", "C1-", "C3-")
    if len(memory_functions) > len(styles):
        raise ValueError(f"memory_functions must hold at most {len(styles)} curves, got {len(memory_functions)}")
    scales = real_array(scales, "scales", ndim=1)
    if np.any(scales <= 0):
        raise ValueError("scales must be > 0 (a log axis)")
    mc_tanh = real_array(mc_tanh, "mc_tanh", shape=(None, len(scales)))
    mc_linear = real_array(mc_linear, "mc_linear", ndim=1)
    N, radius = integer(N, "N", low=1), real(radius, "radius", low=0.0, low_open=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    for (name, r2), style in zip(memory_functions.items(), styles):
        r2 = real_array(r2, f"memory_functions[{name!r}]", ndim=1)
        ax1.plot(np.arange(1, len(r2) + 1), r2, style, lw=1.4, label=f"{name}: MC = {r2.sum():.1f}")
    ax1.axvline(N, color="grey", ls=":", lw=1, label=f"k = N = {N}")
    ax1.set(xlabel="delay k", ylabel=r"$\mathrm{MC}_k = r^2(u(n-k), y_k(n))$", title="Memory function (seed 0)")
    ax1.legend(fontsize=8, loc="upper right")
    ax2.fill_between(
        scales, mc_tanh.min(0), mc_tanh.max(0), color="C1", alpha=0.25, label=f"tanh, range over {len(mc_tanh)} seeds"
    )
    ax2.semilogx(scales, np.median(mc_tanh, axis=0), "o-", color="C1", label="tanh, median")
    ax2.axhline(N, color="k", ls="--", lw=1, label=f"bound MC = N = {N}")
    median = np.median(mc_linear)
    ax2.axhline(median, color="k", ls=":", lw=1, label=f"linear reservoir, median {median:.1f}")
    ax2.set(
        xlabel=r"input scaling $s_{in}$",
        ylabel="memory capacity MC",
        ylim=(0, 1.1 * N),
        title=rf"Saturation costs memory (N = {N}, $W$ = {radius:g} Q)",
    )
    ax2.legend(fontsize=8, loc="lower left")
    return fig, (ax1, ax2)


def plot_cost_accuracy(results: Mapping, persistence: float, *, families: Mapping = COST_FAMILIES):
    r"""Test NRMSE against training seconds, both on log axes, one labelled point per trained model.

    A model's family is the first key of ``families`` its name starts with, which gives its marker,
    colour and legend entry. The horizontal line is the persistence forecast :math:`\hat y_{t+1} = y_t`.

    Parameters
    ----------
    results : mapping name -> (seconds, nrmse)
    persistence : float
        NRMSE of the persistence forecast.
    families : mapping prefix -> (marker, colour, label)

    Returns
    -------
    fig, ax : Figure and Axes
    """
    import matplotlib.pyplot as plt

    results = _nonempty_mapping(results, "results")
    persistence = real(persistence, "persistence", low=0.0, low_open=True)
    points = {}
    for name, (seconds, error) in results.items():
        family = next((f for f in families if name.startswith(f)), None)
        if family is None:
            raise ValueError(f"results[{name!r}] starts with none of the families {list(families)}")
        where = f"results[{name!r}]"
        points[name] = (
            real(seconds, where, low=0.0, low_open=True),
            real(error, where, low=0.0, low_open=True),
            family,
        )
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    for name, (seconds, error, family) in points.items():
        marker, colour, _ = families[family]
        ax.loglog(seconds, error, marker, color=colour, ms=7)
        ax.annotate(name, (seconds, error), textcoords="offset points", xytext=(6, 4), fontsize=8)
    for marker, colour, label in families.values():
        ax.plot([], [], marker, color=colour, label=label)
    ax.axhline(persistence, color="k", ls=":", lw=1, label="persistence")
    ax.set(
        xlabel="training time (s, this machine)",
        ylabel="one-step test NRMSE",
        ylim=(1e-4, 0.5),
        title="Mackey-Glass, one step ahead: accuracy per second of training",
    )
    ax.set_xlim(right=4 * max(seconds for seconds, _, _ in points.values()))  # room for the labels
    ax.legend(fontsize=8, loc="lower right")
    return fig, ax


def plot_reservoir_panels(
    truth, free, distance, memory_function, *, sigma: float, s_max: float, rho: float, leak: float, input_scaling: float
):
    r"""One reservoir three ways: a free run against the series, the echo state test, the memory function.

    The first panel's title is the free run's NRMSE :math:`\sqrt{\langle(\hat y - y)^2\rangle}/\sigma`; the second
    draws the contraction bound :math:`(1 - a + a\,\sigma_{\max})^t\,\|x_0 - x'_0\|` of a leaky reservoir
    when :math:`\sigma_{\max}(W) < 1` (it holds only then); the third's title is
    :math:`\mathrm{MC} = \sum_k \mathrm{MC}_k` over delays 1..K = 2N.

    Parameters
    ----------
    truth, free : array, shape (L,)
        The series and the free run.
    distance : array, shape (T + 1,)
        :math:`\|x_t - x'_t\|` of two runs from different initial states.
    memory_function : array, shape (2N,)
        :math:`\mathrm{MC}_k` at delays 1..2N.
    sigma : float
        Standard deviation of the series.
    s_max, rho, leak, input_scaling : float
        The reservoir's largest singular value, spectral radius, leak rate a and input scaling.

    Returns
    -------
    fig, axes : Figure and its three Axes
    """
    import matplotlib.pyplot as plt

    truth, free = _run_and_truth(truth, free, "free")
    distance = real_array(distance, "distance", ndim=1)
    r2 = real_array(memory_function, "memory_function", ndim=1)
    if len(r2) % 2:
        raise ValueError(f"memory_function must have 2N entries (an even number), got {len(r2)}")
    sigma = real(sigma, "sigma", low=0.0, low_open=True)
    s_max, rho, input_scaling = (
        real(v, n, low=0.0) for v, n in ((s_max, "s_max"), (rho, "rho"), (input_scaling, "input_scaling"))
    )
    leak = real(leak, "leak", low=0.0, high=1.0, low_open=True)
    N = len(r2) // 2
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.6), gridspec_kw={"wspace": 0.3})
    axes[0].plot(truth, color="k", lw=1.2, label="truth")
    axes[0].plot(free, color="C1", ls="--", label="free run")
    error = np.sqrt(np.mean((free - truth) ** 2)) / sigma
    axes[0].set(
        xlabel="free-running steps", ylabel="y", ylim=(0.2, 1.5), title=f"NRMSE over {len(truth)} steps: {error:.3g}"
    )
    axes[0].legend(fontsize=8, loc="lower left")
    axes[1].semilogy(distance, color="C0", label=r"$\|x_t - x'_t\|$")
    if s_max < 1:  # the contraction bound holds only then
        bound = distance[0] * (1 - leak + leak * s_max) ** np.arange(len(distance))
        axes[1].semilogy(bound, "k--", lw=1, label="contraction bound")
    axes[1].set(
        xlabel="step t", ylabel="distance", ylim=(1e-16, 1e3), title=rf"ESP test: $\sigma_{{\max}}$ = {s_max:.2f}"
    )
    axes[1].legend(fontsize=8, loc="lower left")
    axes[2].plot(np.arange(1, 2 * N + 1), r2, color="C2")
    axes[2].axvline(N, color="grey", ls=":", lw=1, label=f"k = N = {N}")
    axes[2].set(xlabel="delay k", ylabel=r"$\mathrm{MC}_k$", ylim=(0, 1.05), title=f"memory capacity {r2.sum():.1f}")
    axes[2].legend(fontsize=8, loc="upper right")
    fig.suptitle(rf"$\rho$ = {rho:.2f}, a = {leak:.2f}, $s_{{in}}$ = {input_scaling:g}", y=1.02)
    return fig, axes
