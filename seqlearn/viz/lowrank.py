"""Chapter 6's plots: the overlap-space metric of a rank-1 network as a heatmap, and the figures of learning,
twins, forgetting and the twin explorer, drawn from overlap trajectories.

A trajectory is an array ``sigma`` of shape (E + 1, 10): the overlaps (in
:data:`~seqlearn.lowrank.overlaps.OVERLAPS` order) at epochs 0..E. The figure functions return the
:class:`matplotlib.figure.Figure` (made with ``pyplot``, so a notebook shows it) with its axes.
matplotlib is imported on first use, not when this module is imported.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..lowrank.overlaps import INVISIBLE, OVERLAPS, VISIBLE, index
from ..validation import integer, real, real_array

__all__ = [
    "LABEL",
    "metric_bins",
    "metric_heatmap",
    "plot_learning_filter",
    "plot_twins",
    "plot_forgetting",
    "plot_twin_panels",
    "plot_memory_decoding",
]

LABEL = {name: rf"$\sigma_{{{name}}}$" for name in OVERLAPS}
"""The overlaps' axis labels: ``"zm" -> "$\\sigma_{zm}$"``."""


def metric_bins(top: float, smallest: float = 0.01) -> np.ndarray:
    r"""Colour-bin edges symmetric about 0: :math:`\pm\,\text{smallest}\cdot 10^{k/2}` below ``top``, and
    :math:`\pm 1.001\,\text{top}` at the ends, shape (2K + 2,) increasing.

    Half-decade bins give an entry of 2 and one of 4 different colours and an entry of 0.01 one
    different from 0; :math:`(-\text{smallest}, \text{smallest})` is the central (white) bin.
    """
    smallest = real(smallest, "smallest", low=0.0, low_open=True)
    top = real(top, "top", low=smallest, low_open=True)
    inner = smallest * np.sqrt(10.0) ** np.arange(int(np.ceil(2 * np.log10(top / smallest))))
    inner = inner[inner < top]
    return np.concatenate([[-1.001 * top], -inner[::-1], inner, [1.001 * top]])


def metric_heatmap(ax, G_bar, *, visible: int = 4, smallest: float = 0.01):
    r"""Draw the metric :math:`\bar G(\sigma)` (10, 10) on ``ax``, coloured by half-decade bins of its entries.

    The entries span orders of magnitude (:math:`2` or :math:`4\sigma_{aa}` on the diagonal, cross overlaps of
    order :math:`1/\sqrt N` off it); a linear colour scale shows one or the other. The bins are
    :func:`metric_bins` up to :math:`\max|\bar G|`, on a diverging map with zero white; no entry
    is clipped. Lines after the first ``visible`` rows and columns mark the visible block. Rows and
    columns are labelled :math:`\sigma_{ab}` in :data:`~seqlearn.lowrank.overlaps.OVERLAPS` order.

    Returns the ``AxesImage`` (for a colour bar).
    """
    from matplotlib.colors import BoundaryNorm

    G_bar = real_array(G_bar, "G_bar", shape=(len(OVERLAPS), len(OVERLAPS)))
    visible = integer(visible, "visible", low=0, high=len(OVERLAPS))
    smallest = real(smallest, "smallest", low=0.0, low_open=True)
    bins = metric_bins(max(float(np.abs(G_bar).max()), 2 * smallest), smallest)
    image = ax.imshow(G_bar, cmap="RdBu_r", norm=BoundaryNorm(bins, 256))
    labels = [LABEL[name] for name in OVERLAPS]
    ax.set_xticks(range(len(OVERLAPS)), labels, rotation=90, fontsize=8)
    ax.set_yticks(range(len(OVERLAPS)), labels, fontsize=8)
    ax.axhline(visible - 0.5, color="k", lw=0.8)
    ax.axvline(visible - 0.5, color="k", lw=0.8)
    return image


def _trajectory(sigma, name: str, epochs: int | None = None) -> np.ndarray:
    """``sigma`` checked: (E + 1, 10) overlaps (E = ``epochs`` when given), finite."""
    return real_array(sigma, name, shape=(None if epochs is None else epochs + 1, len(OVERLAPS)))


def _final_overlaps(sigma: np.ndarray) -> dict[str, float]:
    r"""The end point in the solution set's coordinates: :math:`\sigma_{zm}, \sigma_{vu}, \sigma_{zu}\sigma_{vm}`."""
    zm, zu, vm, vu = (sigma[-1, OVERLAPS.index(name)] for name in ("zm", "zu", "vm", "vu"))
    return {LABEL["zm"]: zm, LABEL["vu"]: vu, r"$\sigma_{zu}\sigma_{vm}$": zu * vm}


def plot_learning_filter(G_bar, losses, sigma_network, sigma_ode, solution, *, eta: float):
    r"""Learning the filter in overlap space, five panels: the metric, the losses, the visible and invisible
    overlaps, and where learning ends.

    The overlaps follow :math:`\dot\sigma = -\eta\,\bar G(\sigma)\,\nabla_\sigma L`; the loss depends on the four
    visible overlaps only, and the zero-loss set is :math:`\sigma_{zm} = \sigma^*_{zm}`,
    :math:`\sigma_{vu} = \sigma^*_{vu}`, :math:`\sigma_{zu}\sigma_{vm} = p^*`.

    Parameters
    ----------
    G_bar : array, shape (10, 10)
        The metric at initialisation (:func:`metric_heatmap`).
    losses : mapping label -> array, shape (E + 1,)
        Losses at epochs 0..E of up to three runs (solid, dashed, dotted; epoch 0 is not drawn on the log axis).
    sigma_network, sigma_ode : array, shape (E + 1, 10)
        Overlaps of the network trained by gradient descent and of the overlap ODE (dashed).
    solution : (zm, vu, product)
        The zero-loss solution set.
    eta : float
        Learning rate (title).

    Returns
    -------
    fig, axes : Figure and its five Axes (metric, loss, visible, invisible, end point)
    """
    import matplotlib.pyplot as plt

    styles = ("-", "--", ":")
    if not isinstance(losses, Mapping) or not 1 <= len(losses) <= len(styles):
        raise ValueError(f"losses must be a mapping of 1 to {len(styles)} label -> loss curve")
    net = _trajectory(sigma_network, "sigma_network")
    E = len(net) - 1
    ode = _trajectory(sigma_ode, "sigma_ode", E)
    curves = {label: real_array(loss, f"losses[{label!r}]", shape=(E + 1,)) for label, loss in losses.items()}
    targets = real_array(solution, "solution", shape=(3,))
    eta = real(eta, "eta", low=0.0, low_open=True)
    fig = plt.figure(figsize=(15, 7.6))
    grid = fig.add_gridspec(2, 3, wspace=0.32, hspace=0.42)
    top = grid[0, :].subgridspec(1, 2, width_ratios=(1, 2), wspace=0.45)  # room for the colour bar's labels
    axes = [fig.add_subplot(top[0])]
    image = metric_heatmap(axes[0], G_bar)  # half-decade colour bins: the 2s, the 4s and the O(1/sqrt N) terms
    axes[0].set(title=r"the metric $\bar G(\sigma)$ at initialisation")
    fig.colorbar(image, ax=axes[0], fraction=0.046)
    axes.append(fig.add_subplot(top[1]))
    epochs = np.arange(E + 1)
    for (label, loss), style in zip(curves.items(), styles):
        axes[1].loglog(epochs[1:], loss[1:], style, lw=2 if style == "-" else 1.5, label=label)
    axes[1].set(xlabel="epoch", ylabel="loss L", title=rf"learning the filter, $\eta$ = {eta:g}")
    axes[1].legend(fontsize=8)
    for k, (names, title) in enumerate(
        ((VISIBLE["linear"], "visible overlaps"), (INVISIBLE["linear"], "invisible overlaps"))
    ):
        ax = fig.add_subplot(grid[1, k])
        for i, name in enumerate(names):
            j = OVERLAPS.index(name)
            ax.plot(epochs, net[:, j], color=f"C{i}", label=LABEL[name])
            ax.plot(epochs, ode[:, j], "k--", lw=0.8)
        ax.set(xscale="symlog", xlabel="epoch", ylabel="overlap", title=f"{title}: network, ODE (dashed)")
        ax.legend(fontsize=7, ncol=2)
        axes.append(ax)
    ax = fig.add_subplot(grid[1, 2])
    final = _final_overlaps(net)
    ax.bar(range(3), list(final.values()), color="C0", label="network after training")
    ax.hlines(
        targets, np.arange(3) - 0.4, np.arange(3) + 0.4, colors="k", linestyles="--", label="zero-loss solution set"
    )
    ax.set_xticks(range(3), list(final))
    ax.set(ylabel="value", title="where learning ends")
    ax.legend(fontsize=8, loc="lower right")
    axes.append(ax)
    return fig, axes


def plot_twins(steps, outputs, target, losses, sigma_1, sigma_2, *, later: int):
    r"""Twins: two networks :math:`\theta_1, \theta_2` with the same visible but different invisible overlaps.

    Left: their outputs :math:`f_t` at epoch 0 (the same function) and at epoch ``later`` (not the same),
    against the target. Middle: the losses of S twin pairs and of the overlap ODE from
    :math:`\sigma(\theta_2)`, the first pair thick. Right: the visible overlaps of the first pair.

    Parameters
    ----------
    steps : array, shape (T,)
        Times t of the outputs.
    outputs : array, shape (2, 2, T)
        ``outputs[e, i]``: the output of twin i + 1 at epoch 0 (e = 0) and at epoch ``later`` (e = 1).
    target : array, shape (T,)
    losses : array, shape (S, 3, E + 1)
        Per pair: the losses of :math:`\theta_1`, :math:`\theta_2` and the ODE from :math:`\sigma(\theta_2)`.
    sigma_1, sigma_2 : array, shape (E + 1, 10)
        The first pair's overlaps.
    later : int
        The epoch of the second outputs.

    Returns
    -------
    fig, axes : Figure and its three Axes
    """
    import matplotlib.pyplot as plt

    steps = real_array(steps, "steps", ndim=1)
    outputs = real_array(outputs, "outputs", shape=(2, 2, len(steps)))
    target = real_array(target, "target", shape=(len(steps),))
    losses = real_array(losses, "losses", shape=(None, 3, None))
    if len(losses) == 0:
        raise ValueError("losses must hold at least one twin pair")
    E = losses.shape[2] - 1
    sigma_1, sigma_2 = _trajectory(sigma_1, "sigma_1", E), _trajectory(sigma_2, "sigma_2", E)
    later = integer(later, "later", low=0, high=E)
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.9), gridspec_kw={"wspace": 0.3})
    for (epoch, alpha), pair in zip(((0, None), (later, 0.5)), outputs):
        axes[0].plot(steps, pair[0], color="C0", alpha=alpha, label=rf"$\theta_1$, epoch {epoch}")
        axes[0].plot(steps, pair[1], "--", color="C1", alpha=alpha, label=rf"$\theta_2$, epoch {epoch}")
    axes[0].plot(steps, target, "k:", lw=1, label="target F$_1$")
    axes[0].set(xlabel="time t", ylabel="output $f_t$", title="same function at epoch 0, not after")
    axes[0].legend(fontsize=7)
    for seed, (a, b, c) in enumerate(losses):
        kw = {"lw": 1.6 if seed == 0 else 0.6}
        axes[1].semilogy(a, color="C0", label=r"$\theta_1$" if seed == 0 else None, **kw)
        axes[1].semilogy(b, color="C1", label=r"$\theta_2$" if seed == 0 else None, **kw)
        axes[1].semilogy(c, "k:", label=r"ODE from $\sigma(\theta_2)$" if seed == 0 else None, **kw)
    thin = f" (thin: seeds 1-{len(losses) - 1})" if len(losses) > 1 else ""
    axes[1].set(xlabel="epoch", ylabel="loss L", title=f"{len(losses)} twin pairs{thin}")
    axes[1].legend(fontsize=8)
    for name, colour in zip(VISIBLE["linear"], ("C2", "C3", "C4", "C5")):
        j = OVERLAPS.index(name)
        axes[2].plot(sigma_1[:, j], color=colour, label=LABEL[name])
        axes[2].plot(sigma_2[:, j], "--", color=colour)
    axes[2].set(xlabel="epoch", ylabel="overlap", title=r"visible overlaps: $\theta_1$ (solid), $\theta_2$ (dashed)")
    axes[2].legend(fontsize=8, ncol=2)
    return fig, axes


def plot_forgetting(sigma_cycle, ends, sigma_noise, invariant):
    r"""Forgetting in overlap space: an :math:`F_1`-:math:`F_2`-:math:`F_1` protocol by gradient descent against
    label noise on :math:`F_1`.

    Left: one visible and two invisible overlaps along both runs, the first phase's end values dashed.
    Middle: every overlap at the end of the first :math:`F_1` against its value after :math:`F_1` again (dots)
    and after the label noise (crosses); the diagonal is no change. Right: the invariant
    :math:`I_1 = \sigma_{zz}+\sigma_{vv}-\sigma_{mm}-\sigma_{uu}` minus its start, conserved by gradient flow.

    Parameters
    ----------
    sigma_cycle : array, shape (E + 1, 10)
        The protocol's overlaps; ``ends`` (3 epochs) mark the ends of its phases.
    ends : sequence of 3 int
    sigma_noise : array, shape (E' + 1, 10)
        The label-noise run's overlaps (its first phase the same as the protocol's).
    invariant : mapping label -> array, shape (E'' + 1,)
        :math:`I_1` along each run.

    Returns
    -------
    fig, axes : Figure and its three Axes
    """
    import matplotlib.pyplot as plt

    cycle, noise = _trajectory(sigma_cycle, "sigma_cycle"), _trajectory(sigma_noise, "sigma_noise")
    if len(ends) != 3:
        raise ValueError(f"ends must hold the 3 phases' last epochs, got {len(ends)}")
    ends = [integer(e, "ends", low=0, high=len(cycle) - 1) for e in ends]
    if not isinstance(invariant, Mapping) or not invariant:
        raise ValueError("invariant must be a non-empty mapping label -> I_1 along a run")
    invariant = {label: real_array(v, f"invariant[{label!r}]", ndim=1) for label, v in invariant.items()}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), gridspec_kw={"wspace": 0.3})
    for name, colour in (("vu", "C0"), ("uu", "C1"), ("mu", "C2")):
        j = OVERLAPS.index(name)
        seen = "visible" if name in VISIBLE["linear"] else "invisible"
        axes[0].plot(np.arange(len(cycle)), cycle[:, j], color=colour, label=f"{LABEL[name]} ({seen})")
        axes[0].plot(np.arange(len(noise)), noise[:, j], ":", color=colour)
        axes[0].axhline(cycle[ends[0], j], color=colour, lw=0.6, ls="--")
    for e in ends:
        axes[0].axvline(e, color="grey", lw=0.6)
    axes[0].set(xlabel="epoch", ylabel="overlap", title="GD F$_1$-F$_2$-F$_1$ (solid), label noise on F$_1$ (dotted)")
    axes[0].legend(fontsize=7)
    A1, A2, A3 = cycle[ends[0]], cycle[ends[2]], noise[-1]
    vis, inv = index(VISIBLE["linear"]), index(INVISIBLE["linear"])
    lim = (min(A1.min(), A3.min()) - 0.1, max(A1.max(), A3.max()) + 0.1)
    axes[1].plot(lim, lim, "k:", lw=1, label="no change")
    axes[1].scatter(A1[vis], A2[vis], color="C0", marker="o", label="F$_1$ again by GD, visible")
    axes[1].scatter(A1[inv], A2[inv], color="C1", marker="o", label="F$_1$ again by GD, invisible")
    axes[1].scatter(A1[vis], A3[vis], color="C0", marker="x", s=60, label="after label noise, visible")
    axes[1].scatter(A1[inv], A3[inv], color="C1", marker="x", s=60, label="after label noise, invisible")
    axes[1].set(xlim=lim, ylim=lim, xlabel="overlap at the end of the first F$_1$", ylabel="overlap later",
                title="return under GD, drift under label noise")  # fmt: skip
    axes[1].legend(fontsize=7)
    for label, values in invariant.items():
        axes[2].plot(np.arange(len(values)), values - values[0], label=label)
    axes[2].axhline(0, color="k", lw=0.6, ls=":", label="conserved")
    axes[2].set(xlabel="epoch", ylabel=r"$I_1(t) - I_1(0)$",
                title=r"the invariant $I_1 = \sigma_{zz}+\sigma_{vv}-\sigma_{mm}-\sigma_{uu}$")  # fmt: skip
    axes[2].legend(fontsize=8)
    return fig, axes


def plot_twin_panels(base_loss, base_sigma, twin_loss=None, twin_sigma=None, *, smallest: float, product: float):
    r"""A run from :math:`\theta_1` and from a twin with other invisible overlaps: the loss and the path of the
    visible pair :math:`(\sigma_{zu}, \sigma_{vm})` towards the solutions :math:`\sigma_{zu}\sigma_{vm} = p^*`.

    A twin whose overlaps are no Gram matrix (smallest eigenvalue ``smallest`` <= 0) has no run: pass
    ``twin_loss`` and ``twin_sigma`` as None, and the title says so.

    Parameters
    ----------
    base_loss : array, shape (E + 1,)
    base_sigma : array, shape (E + 1, 10)
    twin_loss, twin_sigma : arrays of the same shapes, or None
    smallest : float
        Smallest eigenvalue of the twin's Gram matrix.
    product : float
        :math:`p^*`, the solutions' product (> 0).

    Returns
    -------
    fig, axes : Figure and its two Axes
    """
    import matplotlib.pyplot as plt

    base_loss = real_array(base_loss, "base_loss", ndim=1)
    E = len(base_loss) - 1
    base_sigma = _trajectory(base_sigma, "base_sigma", E)
    if (twin_loss is None) != (twin_sigma is None):
        raise ValueError("twin_loss and twin_sigma must both be given or both be None")
    smallest, product = real(smallest, "smallest"), real(product, "product", low=0.0, low_open=True)
    zu, vm = OVERLAPS.index("zu"), OVERLAPS.index("vm")
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), gridspec_kw={"wspace": 0.25})
    axes[0].semilogy(base_loss, color="grey", lw=2, label=r"$\theta_1$")
    axes[1].plot(base_sigma[:, zu], base_sigma[:, vm], color="grey", lw=2, label=r"$\theta_1$")
    if twin_loss is not None:
        twin_loss = real_array(twin_loss, "twin_loss", ndim=1)
        twin_sigma = _trajectory(twin_sigma, "twin_sigma", len(twin_loss) - 1)
        axes[0].semilogy(twin_loss, color="C1", label="twin")
        axes[1].plot(twin_sigma[:, zu], twin_sigma[:, vm], color="C1", label="twin")
        title = f"twin: loss {twin_loss[-1]:.2g} after {len(twin_loss) - 1} epochs"
    else:
        title = f"not a Gram matrix (smallest eigenvalue {smallest:.2f})"
    axes[0].set(xlabel="epoch", ylabel="loss L", title=title)
    hyperbola = np.linspace(0.2, 3.0, 200)
    axes[1].plot(
        hyperbola, product / hyperbola, "k:", lw=1, label=rf"solutions $\sigma_{{zu}}\sigma_{{vm}}$ = {product:.2f}"
    )
    axes[1].set(
        xlim=(-0.5, 3), ylim=(-0.5, 3), xlabel=LABEL["zu"], ylabel=LABEL["vm"], title="visible overlaps during learning"
    )
    for ax in axes:
        ax.legend(fontsize=8)
    return fig, axes


def plot_memory_decoding(live, shipped):
    r"""Which task came first, decoded after C: a live run's accuracies and a shipped file's, one bar per decoder.

    Visible decoders are blue, invisible orange. A live bar is the mean over the decoder's random splits, its
    error bar their standard deviation; a shipped bar is the mean over seeds, with each seed's mean as a black
    dot (one dot for a file of one seed). The dotted line is chance.

    Parameters
    ----------
    live : mapping (label, features) -> array, shape (resamples,)
        Test accuracies of each split, ``features`` ``"visible"`` or ``"invisible"``.
    shipped : mapping (label, features) -> array, shape (seeds,)
        Each seed's mean accuracy (:func:`seqlearn.lowrank.memory_results.memory_summary`).

    Returns
    -------
    fig, ax : Figure and its Axes
    """
    import matplotlib.pyplot as plt

    bars = {**_accuracies(live, "live"), **_accuracies(shipped, "shipped")}
    seeds = {len(values) for key, values in bars.items() if key in shipped}
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for k, ((label, kind), acc) in enumerate(bars.items()):
        colour = "C0" if kind == "visible" else "C1"
        if (label, kind) in shipped:
            ax.bar(k, acc.mean(), color=colour, alpha=0.8)
            ax.plot(np.full(len(acc), k), acc, "k.", ms=6, label="one seed" if k == len(live) else None)
        else:
            ax.bar(k, acc.mean(), yerr=acc.std(), capsize=3, color=colour, label=f"{kind} overlaps" if k < 2 else None)
    ax.axhline(0.5, color="k", ls=":", lw=1, label="chance")
    ax.set_xticks(range(len(bars)), [label.replace(", ", "\n") for label, _ in bars], fontsize=8)
    title = f"which task came first? (held-out pairs; shipped: {', '.join(map(str, sorted(seeds)))} seed(s))"
    ax.set(ylabel="decoding accuracy after C", ylim=(0, 1.1), title=title)
    ax.legend(fontsize=8, ncol=4, loc="lower right")
    return fig, ax


def _accuracies(decoded, name: str) -> dict:
    """``decoded`` checked: a non-empty mapping (label, ``"visible"``/``"invisible"``) -> 1-D accuracies in [0, 1]."""
    if not isinstance(decoded, Mapping) or not decoded:
        raise ValueError(f"{name} must be a non-empty mapping (label, features) -> accuracies")
    out = {}
    for key, values in decoded.items():
        if not (isinstance(key, tuple) and len(key) == 2 and key[1] in ("visible", "invisible")):
            raise ValueError(f"{name}'s keys must be (label, 'visible' or 'invisible'), got {key!r}")
        values = real_array(values, f"{name}[{key!r}]", ndim=1)
        if len(values) == 0 or values.min() < 0 or values.max() > 1:
            raise ValueError(f"{name}[{key!r}] must hold accuracies in [0, 1], got {values}")
        out[key] = values
    return out
