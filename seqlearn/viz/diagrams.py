"""Diagrams of the course's models, drawn by code: boxes, arrows and labels, nothing else.

Each public function draws one diagram with the symbols its chapter uses and returns the
:class:`matplotlib.figure.Figure` (made with ``pyplot``, so a notebook shows it; close it with
``plt.close(fig)``). matplotlib is imported on first use, not when this module is imported.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .style import PALETTE

__all__ = [
    "draw_ngram_window",
    "draw_interpolation_chain",
    "draw_nplm",
    "draw_unrolled_rnn",
    "draw_bptt_graph",
    "draw_lstm_cell",
    "draw_gru_cell",
    "draw_echo_state_network",
    "draw_leaky_gated_cell",
    "draw_lowrank_network",
    "draw_attention_lookup",
]

BLUE, ORANGE, GREEN, PINK, YELLOW, GREY = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4], "#777777"


class Node(NamedTuple):
    """A drawn box or circle: its centre and its patch (arrows are clipped to the patch)."""

    xy: tuple[float, float]
    patch: Any


# --------------------------------------------------------------------------- drawing primitives


def _check_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; TypeError for a non-integer, ValueError out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high} (to stay legible), got {value}")
    return int(value)


def _canvas(width: float, height: float):
    """A figure of ``width`` x ``height`` inches whose data units are inches, with no axes drawn."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _node(ax, xy, text, *, color=BLUE, width=0.9, height=0.5, shape="box", fontsize=11) -> Node:
    """A labelled box (``shape="box"``) or circle (``"circle"``, diameter ``height``) centred at ``xy``."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Circle, FancyBboxPatch, Patch

    x, y = xy
    face = to_rgba(color, 0.15)
    patch: Patch
    if shape == "circle":
        patch = Circle((x, y), height / 2, fc=face, ec=color, lw=1.4)
    else:
        corner = (x - width / 2, y - height / 2)
        patch = FancyBboxPatch(
            corner, width, height, boxstyle="round,pad=0,rounding_size=0.08", fc=face, ec=color, lw=1.4
        )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)
    return Node((x, y), patch)


def _label(ax, xy, text, *, color="k", fontsize=10, **kwargs):
    """A text label on a white background, so that lines behind it do not cross it."""
    box = {"fc": "white", "ec": "none", "pad": 0.5, "alpha": 0.9}
    return ax.text(*xy, text, ha="center", va="center", fontsize=fontsize, color=color, bbox=box, **kwargs)


def _arrow(ax, start, end, label=None, *, color="k", dashed=False, rad=0.0, offset=(0.0, 0.0), fontsize=10):
    """An arrow from ``start`` to ``end`` (Nodes or points), with ``label`` at its middle plus ``offset``."""
    from matplotlib.patches import FancyArrowPatch

    def point(p):
        return p.xy if isinstance(p, Node) else p

    a, b = point(start), point(end)
    arrow = FancyArrowPatch(
        a,
        b,
        patchA=start.patch if isinstance(start, Node) else None,
        patchB=end.patch if isinstance(end, Node) else None,
        arrowstyle="-|>",
        mutation_scale=12,
        color=color,
        lw=1.3,
        linestyle="--" if dashed else "-",
        connectionstyle=f"arc3,rad={rad}",
        shrinkA=1,
        shrinkB=1,
    )
    ax.add_patch(arrow)
    if label is not None:
        middle = ((a[0] + b[0]) / 2 + offset[0], (a[1] + b[1]) / 2 + offset[1])
        _label(ax, middle, label, color=color, fontsize=fontsize)
    return arrow


def _line(ax, points, *, color="k", dashed=False):
    """A plain polyline through ``points`` (a bus that arrows leave from)."""
    xs, ys = zip(*points, strict=True)
    ax.plot(xs, ys, color=color, lw=1.3, ls="--" if dashed else "-")


def _lag(k: int, symbol: str = "t") -> str:
    """``t``, ``t-1``, ``t-2``, ... as a subscript."""
    return symbol if k == 0 else f"{symbol}-{k}"


# --------------------------------------------------------------------------- Chapter 1


def draw_ngram_window(n: int = 3):
    r"""The Markov window of an n-gram model over a sentence.

    Draws the tokens :math:`w_{t-n}, \dots, w_t`, brackets the context :math:`h` of the last
    :math:`n-1` tokens and the shorter context :math:`h'` (:math:`h` without its first word) that
    smoothing falls back to, and marks what the model predicts, :math:`P(w_t \mid h)`. The token
    :math:`w_{t-n}` is drawn outside the window: the model never sees it.

    Parameters
    ----------
    n : int
        The order, 2 to 6.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = _check_int("n", n, 2, 6)
    width = 1.3 * (n + 2) + 0.6
    fig, ax = _canvas(width, 3.4)
    ax.text(0.5, 2.4, r"$\cdots$", ha="center", va="center", fontsize=12)
    tokens = {}
    for i, k in enumerate(range(n, -1, -1)):  # w_{t-n} ... w_t, left to right
        color = GREY if k == n else (ORANGE if k == 0 else BLUE)
        tokens[k] = _node(ax, (1.3 * (i + 1), 2.4), rf"$w_{{{_lag(k)}}}$", color=color, width=1.0)
    _bracket(ax, tokens[n - 1].xy[0], tokens[1].xy[0], 1.85, rf"context $h$: the last $n-1 = {n - 1}$ words")
    if n > 2:
        _bracket(ax, tokens[n - 2].xy[0], tokens[1].xy[0], 0.95, r"$h'$: $h$ without its first word")
    else:
        _label(ax, (tokens[1].xy[0], 0.95), r"$h'$: the empty context (unigram)")
    _arrow(
        ax,
        (tokens[1].xy[0], 3.05),
        (tokens[0].xy[0], 3.05),
        r"$P(w_t \mid h)$",
        color=ORANGE,
        rad=-0.4,
        offset=(0, 0.12),
    )
    ax.text(tokens[n].xy[0], 3.05, "outside the window", ha="center", fontsize=10, color=GREY)
    return fig


def _bracket(ax, x0: float, x1: float, y: float, text: str) -> None:
    """A horizontal bracket from ``x0`` to ``x1`` at height ``y``, with ``text`` below it."""
    _line(ax, [(x0 - 0.45, y + 0.2), (x0 - 0.45, y), (x1 + 0.45, y), (x1 + 0.45, y + 0.2)], color=BLUE)
    _label(ax, ((x0 + x1) / 2, y - 0.3), text, color=BLUE)


def _context(order: int) -> str:
    """The context of an order-``order`` n-gram, w_{t-order+1} ... w_{t-1}, in mathtext ('' for a unigram)."""
    return r"\,".join(f"w_{{{_lag(k)}}}" for k in range(order - 1, 0, -1))


def _order_text(order: int, n: int) -> str:
    """The text of one box of the interpolation chain."""
    if order == 0:
        return "uniform\n" + r"$1/|V|$"
    counts = "raw counts $c$" if order == n else "continuation\ncounts $c'$"
    return (rf"$P(w \mid {_context(order)})$" if order > 1 else r"$P(w)$") + "\n" + counts


def draw_interpolation_chain(n: int = 3):
    r"""Interpolated (modified) Kneser-Ney as a chain of orders, from :math:`n` down to uniform.

    Each box is one order's estimate :math:`P(w \mid \cdot)`: the highest order counts raw counts
    :math:`c`, the lower orders continuation counts :math:`c'`, each discounted by :math:`D(c)`;
    each arrow hands the removed mass :math:`\gamma(\cdot)` of a context to the next shorter
    context, and the chain ends at the uniform distribution :math:`1/|V|`.

    Parameters
    ----------
    n : int
        The highest order, 1 to 5.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = _check_int("n", n, 1, 5)
    step = 3.2
    fig, ax = _canvas(step * (n + 1), 2.6)
    boxes = []
    for i, order in enumerate(range(n, -1, -1)):
        x = 1.3 + step * i
        boxes.append(
            _node(
                ax, (x, 1.4), _order_text(order, n), color=BLUE if order else GREY, width=2.1, height=1.1, fontsize=10
            )
        )
        ax.text(x, 2.3, f"order {order}" if order else "end", ha="center", fontsize=9, color=GREY)
    for i in range(n):
        context = _context(n - i) or r"\emptyset"
        _arrow(ax, boxes[i], boxes[i + 1], rf"$\gamma({context})$", color=ORANGE, offset=(0, 0.3), fontsize=9)
    ax.text(
        0.2,
        0.25,
        r"each box: $\frac{c(h\,w) - D(c(h\,w))}{\sum_x c(h\,x)} + \gamma(h)\,\times$ the next box"
        r" (with $c'$ for $c$ below the highest order)",
        fontsize=9,
    )
    return fig


# --------------------------------------------------------------------------- Chapter 2


def draw_nplm(n: int = 4):
    r"""Bengio et al.'s neural probabilistic language model, :math:`y = b + Wx + U\tanh(d + Hx)`.

    Draws the :math:`n-1` context words, each looked up in the one shared embedding matrix
    :math:`C` (:math:`|V| \times m`), their concatenation :math:`x \in \mathbb{R}^{(n-1)m}`, the
    tanh hidden layer of :math:`h` units (:math:`H`, :math:`d`), the output :math:`y` (:math:`U`,
    :math:`b`), the optional direct connections :math:`W` from :math:`x` to :math:`y` (dashed) and
    the softmax that gives :math:`P(w_t = i \mid \text{context})`.

    Parameters
    ----------
    n : int
        The order (the model sees :math:`n-1` words), 2 to 6.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = _check_int("n", n, 2, 6)
    width = max(7.0, 1.5 * (n - 1) + 1.0)
    fig, ax = _canvas(width, 7.0)
    xs = [width / 2 + 1.5 * (i - (n - 2) / 2) for i in range(n - 1)]
    x = _node(
        ax,
        (width / 2, 2.9),
        r"$x = [C_{w_{t-n+1}};\ \dots;\ C_{w_{t-1}}] \in \mathbb{R}^{(n-1)m}$",
        width=min(width - 0.4, 5.2),
        color=GREEN,
    )
    for i, xi in enumerate(xs):
        k = n - 1 - i
        word = _node(ax, (xi, 0.5), rf"$w_{{t-{k}}}$", width=1.0)
        vector = _node(ax, (xi, 1.7), rf"$C_{{w_{{t-{k}}}}}$", width=1.1, color=GREEN)
        _arrow(ax, word, vector, "$C$", offset=(0.22, 0))
        _arrow(ax, vector, (xi, 2.65))
    ax.text(0.15, 1.15, r"one shared $C$ ($|V| \times m$)", fontsize=9, color=GREEN)
    hidden = _node(
        ax, (width / 2 - 1.0, 4.3), r"$\tanh(d + Hx)$" + "\n" + "$h$ units", width=1.9, height=0.8, color=BLUE
    )
    y = _node(ax, (width / 2, 5.55), r"$y = b + Wx + U \tanh(d + Hx)$", width=3.6, color=ORANGE)
    p = _node(
        ax,
        (width / 2, 6.55),
        r"softmax: $P(w_t = i \mid \mathrm{context}) = e^{y_i} / \sum_j e^{y_j}$",
        width=min(width - 0.2, 5.6),
        color=ORANGE,
    )
    _arrow(ax, x, hidden, "$H,\\ d$", offset=(-0.45, 0))
    _arrow(ax, hidden, y, "$U$", offset=(-0.3, 0))
    _arrow(
        ax, (width / 2 + 1.0, 3.15), (width / 2 + 1.0, 5.3), "$W$ (direct\nconnections)", dashed=True, offset=(0.75, 0)
    )
    _arrow(ax, y, p, "$b$ added; normalise", offset=(1.2, 0), fontsize=9)
    return fig


# --------------------------------------------------------------------------- Chapter 3


def _rnn_column(ax, t: int, x: float, *, outputs: bool = True) -> dict[str, Node]:
    """One time step of the Elman network at abscissa ``x``: nodes x_t, h_t and (optionally) y_t."""
    nodes = {
        "x": _node(ax, (x, 0.5), rf"$x_{{{t}}}$", color=GREEN),
        "h": _node(ax, (x, 2.0), rf"$h_{{{t}}}$", color=BLUE),
    }
    _arrow(ax, nodes["x"], nodes["h"], "$W_{xh}$", offset=(0.3, 0), fontsize=9)
    if outputs:
        nodes["y"] = _node(ax, (x, 3.5), rf"$y_{{{t}}}$", color=ORANGE)
        _arrow(ax, nodes["h"], nodes["y"], "$W_{hy}$", offset=(0.3, 0), fontsize=9)
    return nodes


def _forward_chain(ax, T: int, *, outputs: bool) -> list[Node]:
    """h_0 and T unrolled steps joined by W_hh arrows; returns the nodes h_1 ... h_T."""
    previous, states = _node(ax, (0.7, 2.0), "$h_0$", color=GREY), []
    for t in range(1, T + 1):
        states.append(_rnn_column(ax, t, 0.7 + 1.6 * t, outputs=outputs)["h"])
        _arrow(ax, previous, states[-1], "$W_{hh}$", offset=(0, 0.22), fontsize=9)
        previous = states[-1]
    return states


def draw_unrolled_rnn(T: int = 4):
    r"""The Elman network unrolled over :math:`T` steps: one copy per step, the same weights in each.

    Draws the inputs :math:`x_t`, the states :math:`h_t` (from :math:`h_0`) and the outputs
    :math:`y_t`, and labels every arrow with the matrix it applies, :math:`W_{xh}`, :math:`W_{hh}`
    and :math:`W_{hy}`, the same three at every step:
    :math:`h_t = \phi(W_{hh} h_{t-1} + W_{xh} x_t + b_h)`, :math:`y_t = W_{hy} h_t + b_y`.

    Parameters
    ----------
    T : int
        The number of steps drawn, 1 to 8.

    Returns
    -------
    matplotlib.figure.Figure
    """
    T = _check_int("T", T, 1, 8)
    fig, ax = _canvas(1.6 * T + 1.6, 4.6)
    _forward_chain(ax, T, outputs=True)
    ax.text(0.2, 4.25, r"$h_t = \phi(W_{hh} h_{t-1} + W_{xh} x_t + b_h)$,   $y_t = W_{hy} h_t + b_y$", fontsize=10)
    return fig


def draw_bptt_graph(T: int = 4):
    r"""The computation graph of backpropagation through time, forward and backward.

    Forward (black): the states :math:`h_t` driven by the inputs :math:`x_t` through
    :math:`W_{hh}` and :math:`W_{xh}`. Backward (orange, dashed): the error terms
    :math:`\delta_t = \partial L / \partial z_t`, each collecting the output error
    :math:`e_t = \partial L_t / \partial y_t` through :math:`W_{hy}^\top` and the later error term
    :math:`\delta_{t+1}` through :math:`W_{hh}^\top`, times :math:`\operatorname{diag}\phi'(z_t)`
    taken from the forward pass, starting from :math:`\delta_{T+1} = 0`:
    :math:`\delta_t = \operatorname{diag}(\phi'(z_t))(W_{hy}^\top e_t + W_{hh}^\top \delta_{t+1})`.

    Parameters
    ----------
    T : int
        The number of steps drawn, 1 to 8.

    Returns
    -------
    matplotlib.figure.Figure
    """
    T = _check_int("T", T, 1, 8)
    fig, ax = _canvas(1.6 * T + 3.0, 6.6)
    later = _node(ax, (0.7 + 1.6 * (T + 1), 3.5), rf"$\delta_{{{T + 1}}} = 0$", color=GREY, width=1.25)
    deltas = {}
    for t, h in enumerate(_forward_chain(ax, T, outputs=False), start=1):
        e = _node(ax, (h.xy[0], 5.0), rf"$e_{{{t}}}$", color=ORANGE)
        deltas[t] = _node(ax, (h.xy[0], 3.5), rf"$\delta_{{{t}}}$", color=ORANGE)
        _arrow(ax, e, deltas[t], r"$W_{hy}^\top$", color=ORANGE, dashed=True, offset=(0.32, 0), fontsize=9)
        _arrow(ax, h, deltas[t], rf"$\phi'(z_{{{t}}})$", color=GREY, dashed=True, offset=(0.36, 0), fontsize=8)
    for t in range(T, 0, -1):
        _arrow(ax, later, deltas[t], r"$W_{hh}^\top$", color=ORANGE, dashed=True, offset=(0, 0.22), fontsize=9)
        later = deltas[t]
    ax.text(
        0.2,
        6.3,
        r"$e_t = \partial L_t / \partial y_t$,   $\delta_t = \partial L / \partial z_t"
        r" = \mathrm{diag}(\phi'(z_t))\,(W_{hy}^\top e_t + W_{hh}^\top \delta_{t+1})$",
        fontsize=10,
    )
    ax.text(
        0.2,
        5.8,
        r"gradients: $\partial L / \partial W_{hh} = \sum_t \delta_t h_{t-1}^\top$,"
        r"   $\partial L / \partial W_{xh} = \sum_t \delta_t x_t^\top$",
        fontsize=10,
        color=GREY,
    )
    return fig


# --------------------------------------------------------------------------- Chapter 4


def _gate(ax, x: float, y: float, fn: str, name: str, color=PINK) -> Node:
    """A gate box (``fn`` = sigma or tanh) with its output's name written beside it."""
    node = _node(ax, (x, y), fn, color=color, width=0.75, height=0.5)
    ax.text(x + 0.45, y + 0.45, name, fontsize=10, color=color)
    return node


def _op(ax, x: float, y: float, symbol: str) -> Node:
    """A small circle for an elementwise operation (product or sum)."""
    return _node(ax, (x, y), symbol, color="k", height=0.42, shape="circle", fontsize=12)


def _bus(ax, y: float, x0: float, x1: float, taps, source: Node, inputs: Node) -> None:
    """The line that carries ``h_{t-1}`` and ``x_t`` to every gate in ``taps`` (Nodes above it)."""
    _line(ax, [(source.xy[0], source.xy[1] - 0.25), (source.xy[0], y), (x1, y)])
    _arrow(ax, inputs, (inputs.xy[0], y))
    for tap in taps:
        _arrow(ax, (tap.xy[0], y), tap)


def draw_lstm_cell():
    r"""One step of the LSTM cell as ``torch.nn.LSTM`` computes it (gate order :math:`i, f, g, o`).

    Draws the cell-state line :math:`c_{t-1} \to c_t` along the top, the constant error carousel
    :math:`c_t = f_t \odot c_{t-1} + i_t \odot g_t` (one product and one sum, no weight matrix),
    the input, forget and output gates :math:`i_t, f_t, o_t` (sigmoid) and the candidate
    :math:`g_t` (tanh), all fed by :math:`x_t` and :math:`h_{t-1}`, and the output
    :math:`h_t = o_t \odot \tanh(c_t)`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _canvas(10.0, 5.6)
    c_prev = _node(ax, (0.6, 4.4), "$c_{t-1}$", color=BLUE)
    forget = _op(ax, 3.0, 4.4, r"$\times$")
    add = _op(ax, 5.0, 4.4, "$+$")
    c_t = _node(ax, (9.4, 4.4), "$c_t$", color=BLUE)
    f = _gate(ax, 3.0, 2.3, r"$\sigma$", "$f_t$")
    i = _gate(ax, 4.2, 2.3, r"$\sigma$", "$i_t$")
    g = _gate(ax, 5.6, 2.3, r"$\tanh$", "$g_t$", color=GREEN)
    o = _gate(ax, 7.0, 2.3, r"$\sigma$", "$o_t$")
    write = _op(ax, 5.0, 3.3, r"$\times$")
    squash = _node(ax, (8.2, 3.55), r"$\tanh$", color=GREEN, width=0.75, height=0.45)
    read = _op(ax, 8.2, 2.3, r"$\times$")
    h_t = _node(ax, (9.4, 1.2), "$h_t$", color=ORANGE)
    h_prev = _node(ax, (0.6, 1.9), "$h_{t-1}$", color=ORANGE)
    x_t = _node(ax, (1.6, 0.35), "$x_t$", color=GREEN)
    _arrow(ax, c_prev, forget)
    _arrow(ax, forget, add)
    _arrow(ax, add, c_t)
    _arrow(ax, f, forget)
    _arrow(ax, i, write)
    _arrow(ax, g, write)
    _arrow(ax, write, add)
    _arrow(ax, (8.2, 4.4), squash)
    _arrow(ax, squash, read)
    _arrow(ax, o, read)
    _line(ax, [(8.45, 2.3), (9.4, 2.3)])
    _arrow(ax, (9.4, 2.3), h_t)
    _bus(ax, 1.2, 0.6, 7.0, [f, i, g, o], h_prev, x_t)
    _label(ax, (6.2, 4.95), r"constant error carousel: $c_t = f_t \odot c_{t-1} + i_t \odot g_t$", color=BLUE)
    ax.text(
        2.3,
        0.25,
        r"every gate: $\sigma(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot})$;"
        r"   $h_t = o_t \odot \tanh(c_t)$",
        fontsize=9,
    )
    return fig


def draw_gru_cell():
    r"""One step of the GRU cell as ``torch.nn.GRU`` computes it (gate order :math:`r, z, n`).

    Draws the state line :math:`h_{t-1} \to h_t` along the top with the update
    :math:`h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}` (the update gate :math:`z_t` weights the
    *old* state), the reset gate :math:`r_t` applied after the product,
    :math:`r_t \odot (W_{hn} h_{t-1} + b_{hn})`, inside the candidate :math:`n_t` (tanh), and the
    gates fed by :math:`x_t` and :math:`h_{t-1}`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _canvas(10.0, 5.6)
    h_prev = _node(ax, (0.6, 4.4), "$h_{t-1}$", color=ORANGE)
    keep = _op(ax, 4.0, 4.4, r"$\times$")
    add = _op(ax, 6.6, 4.4, "$+$")
    h_t = _node(ax, (9.4, 4.4), "$h_t$", color=ORANGE)
    z = _gate(ax, 4.0, 2.0, r"$\sigma$", "$z_t$")
    n = _gate(ax, 6.6, 2.0, r"$\tanh$", "$n_t$", color=GREEN)
    r = _gate(ax, 8.6, 2.0, r"$\sigma$", "$r_t$")
    one_minus = _node(ax, (5.3, 2.9), "$1 - z_t$", color=PINK, width=0.85, height=0.42, fontsize=9)
    write = _op(ax, 6.6, 3.4, r"$\times$")
    x_t = _node(ax, (1.6, 0.35), "$x_t$", color=GREEN)
    _arrow(ax, h_prev, keep)
    _arrow(ax, keep, add)
    _arrow(ax, add, h_t)
    _arrow(ax, z, keep)
    _arrow(ax, z, one_minus)
    _arrow(ax, one_minus, write)
    _arrow(ax, n, write)
    _arrow(ax, write, add)
    _arrow(ax, r, n, r"$r_t \odot (W_{hn} h_{t-1} + b_{hn})$", offset=(0, -0.42), fontsize=9)
    _bus(ax, 1.0, 0.6, 8.6, [z, n, r], h_prev, x_t)
    _label(ax, (5.0, 4.95), r"$h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$", color=ORANGE)
    ax.text(
        2.3,
        0.25,
        r"$r_t, z_t = \sigma(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot})$;"
        r"   $n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))$",
        fontsize=9,
    )
    return fig


def _ring(n_units: int, centre: tuple[float, float], radius: float) -> np.ndarray:
    """The positions of ``n_units`` points on a circle; shape (n_units, 2)."""
    angle = 2 * np.pi * np.arange(n_units) / n_units
    return np.column_stack([centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle)])


def draw_echo_state_network(N: int = 12, seed: int = 0):
    r"""An echo state network: a fixed random reservoir and the one trained part, its linear readout.

    Draws the input :math:`u_t`, the fixed input weights :math:`W_{in}` (grey), the reservoir of
    :math:`N` units with sparse random recurrent weights :math:`W` (grey, never trained), the
    state :math:`x_t` and the readout :math:`W_{out}` (orange, the only trained weights, fitted by
    ridge regression) to the output :math:`y_t = W_{out}[1; u_t; x_t]`.

    Parameters
    ----------
    N : int
        The number of reservoir units drawn, 3 to 40.
    seed : int
        Seed of the random recurrent connections drawn (10% of the possible ones, at least N).

    Returns
    -------
    matplotlib.figure.Figure
    """
    N = _check_int("N", N, 3, 40)
    rng = np.random.default_rng(seed)
    fig, ax = _canvas(9.0, 5.0)
    centre, radius = (4.5, 2.6), 1.6
    units = _ring(N, centre, radius)
    i, j = np.nonzero(rng.random((N, N)) < max(0.1, 1.0 / N))
    for a, b in zip(i, j, strict=True):
        if a != b:
            _arrow(ax, tuple(units[b]), tuple(units[a]), color=GREY, rad=0.2)
    nodes = [_node(ax, tuple(p), "", color=BLUE, height=0.32, shape="circle") for p in units]
    u = _node(ax, (0.6, 2.6), "$u_t$", color=GREEN)
    y = _node(ax, (8.4, 2.6), "$y_t$", color=ORANGE)
    for k in np.argsort(units[:, 0])[: max(2, N // 3)]:
        _arrow(ax, u, nodes[k], color=GREY)
    for k in np.argsort(-units[:, 0])[: max(2, N // 2)]:
        _arrow(ax, nodes[k], y, color=ORANGE)
    _arrow(ax, u, (8.0, 2.25), color=ORANGE, rad=0.45)
    _label(ax, (1.9, 3.5), "$W_{in}$ (fixed)", color=GREY)
    _label(ax, centre, f"reservoir: $N = {N}$ units,\nstate $x_t$\n$W$ fixed, random", color=BLUE, fontsize=9)
    _label(ax, (7.3, 3.75), "$W_{out}$: trained\n(ridge regression)", color=ORANGE)
    ax.text(
        0.2,
        0.2,
        r"$x_t = (1-a)\,x_{t-1} + a\,\tanh(W_{in} u_t + W x_{t-1} + b)$,"
        r"   $y_t = W_{out}\,[1;\, u_t;\, x_t]$",
        fontsize=10,
    )
    return fig


# --------------------------------------------------------------------------- Chapter 5


def draw_leaky_gated_cell(ell: int = 3):
    r"""The leaky gated cell of Chapter 5 and the transport of a lag-:math:`\ell` term through it.

    Top: one step, :math:`h_t = (1 - s_t) \odot h_{t-1} + s_t \odot \tilde h_t`, with the write gate
    :math:`s_t`, the candidate :math:`\tilde h_t = \tanh(a_t)`,
    :math:`a_t = \mathrm{LN}(W_x x_t + b_x + W_h h_{t-1})`, and the leak :math:`\lambda_t = 1 - s_t`.
    Bottom: :math:`\ell` steps from :math:`h_{t-\ell}` to :math:`h_t`; each step multiplies
    neuron :math:`q`'s term by its leak :math:`\lambda^{(q)}_j` (plus the rest, :math:`R_j`), so the
    transport factor is :math:`\Gamma^{(q)}_{t,\ell} \approx \prod_j \lambda^{(q)}_j` to zero order.

    Parameters
    ----------
    ell : int
        The lag drawn in the bottom chain, 1 to 6.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ell = _check_int("ell", ell, 1, 6)
    fig, ax = _canvas(max(9.0, 1.5 * ell + 2.5), 6.4)
    h_prev = _node(ax, (0.7, 5.0), "$h_{t-1}$", color=ORANGE)
    leak = _op(ax, 3.6, 5.0, r"$\times$")
    add = _op(ax, 6.0, 5.0, "$+$")
    h_t = _node(ax, (8.2, 5.0), "$h_t$", color=ORANGE)
    s = _gate(ax, 3.6, 3.3, "$s_t$", "")
    ax.text(2.1, 3.25, "write gate", fontsize=10, color=PINK)
    one_minus = _node(ax, (3.6, 4.2), r"$\lambda_t = 1 - s_t$", color=PINK, width=1.35, height=0.4, fontsize=9)
    candidate = _node(ax, (6.0, 3.3), r"$\tilde h_t = \tanh(a_t)$", color=GREEN, width=1.7, height=0.5, fontsize=10)
    write = _op(ax, 6.0, 4.2, r"$\times$")
    x_t = _node(ax, (1.8, 2.3), "$x_t$", color=GREEN)
    for a, b in (
        (h_prev, leak),
        (leak, add),
        (add, h_t),
        (s, one_minus),
        (one_minus, leak),
        (candidate, write),
        (write, add),
    ):
        _arrow(ax, a, b)
    _arrow(ax, s, write, rad=-0.3)
    _bus(ax, 2.7, 0.7, 6.0, [s, candidate], h_prev, x_t)
    ax.text(2.6, 2.25, r"$a_t = \mathrm{LN}(W_x x_t + b_x + W_h h_{t-1})$", fontsize=9)
    _label(ax, (4.4, 5.6), r"$h_t = (1 - s_t) \odot h_{t-1} + s_t \odot \tilde h_t$", color=ORANGE)
    _leak_chain(ax, ell, y=1.0)
    return fig


def _leak_chain(ax, ell: int, y: float) -> None:
    """States h_{t-ell} ... h_t in a row, each arrow the leak lambda_j of one step."""
    states = [
        _node(ax, (0.8 + 1.5 * i, y), rf"$h_{{{_lag(ell - i)}}}$", color=ORANGE, width=1.0) for i in range(ell + 1)
    ]
    for i in range(ell):
        j = _lag(ell - i - 1)
        _arrow(ax, states[i], states[i + 1], rf"$\lambda^{{(q)}}_{{{j}}}$", color=PINK, offset=(0, 0.3), fontsize=9)
    ax.text(
        0.3,
        y - 0.75,
        r"$\Gamma^{(q)}_{t,\ell} \approx \prod_{j=t-\ell+1}^{t} \lambda^{(q)}_j$ (zero order),"
        rf"  here $\ell = {ell}$;  $\mu^{{(q)}}_{{t,\ell}} = \Lambda^{{(q)}}\,\Gamma^{{(q)}}_{{t,\ell}}$",
        fontsize=10,
    )


# --------------------------------------------------------------------------- Chapter 6


def draw_lowrank_network():
    r"""The rank-1 network of Chapter 6 and the overlaps its function depends on.

    Draws the scalar input :math:`x_t` entering through the input vector :math:`m`, the population
    state :math:`h_t \in \mathbb{R}^N`, the rank-one connectivity :math:`J = u v^\top / N` as a loop
    through one number (the projection :math:`v^\top h_t / N`, sent back along :math:`u`), and the
    readout :math:`f_t = z^\top h_{t+1} / N`. Beside it: the latent state
    :math:`h_t = \kappa_m m + \kappa_u u` and the overlaps :math:`\sigma_{ab} = a^\top b / N`, the
    visible block :math:`M` and the invisible blocks :math:`P` and :math:`R`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _canvas(10.0, 4.8)
    x = _node(ax, (0.6, 2.4), "$x_t$", color=GREEN)
    h = _node(ax, (3.6, 2.4), "$h_t \\in \\mathbb{R}^N$\n$N$ units", color=BLUE, width=1.5, height=1.5, shape="circle")
    project = _node(ax, (3.6, 4.3), r"$v^\top h_t / N$", color=PINK, width=1.3, height=0.45, fontsize=10)
    f = _node(ax, (6.4, 2.4), "$f_t$", color=ORANGE)
    _arrow(ax, x, h, "input vector $m$", offset=(0, 0.3), color=GREEN)
    _arrow(ax, h, f, r"readout $z^\top h / N$", offset=(0, 0.3), color=ORANGE)
    _arrow(ax, (3.1, 3.05), project, "$v$", rad=-0.5, offset=(-0.55, 0.1), color=PINK)
    _arrow(ax, project, (4.1, 3.05), "$u$", rad=-0.5, offset=(0.55, 0.1), color=PINK)
    _label(ax, (3.6, 0.95), r"$J = u v^\top / N$ (rank one, never formed)", color=PINK, fontsize=9)
    ax.text(
        0.2,
        0.25,
        r"$h_{t+1} = h_t + dt\,(-h_t + u\,(v^\top h_t)/N + m\,x_t)$,   $h_t = \kappa_m(t)\, m + \kappa_u(t)\, u$",
        fontsize=10,
    )
    ax.text(7.3, 3.9, "overlaps $\\sigma_{ab} = a^\\top b / N$", fontsize=10)
    ax.text(
        7.3, 3.2, "visible $M$:\n$\\sigma_{zm}, \\sigma_{zu}, \\sigma_{vm}, \\sigma_{vu}$", fontsize=10, color=ORANGE
    )
    ax.text(
        7.3,
        2.0,
        "invisible $P$: $\\sigma_{zz}, \\sigma_{zv}, \\sigma_{vv}$\n"
        "invisible $R$: $\\sigma_{mm}, \\sigma_{mu}, \\sigma_{uu}$",
        fontsize=10,
        color=GREY,
    )
    return fig


# --------------------------------------------------------------------------- Chapter 7


def draw_attention_lookup(T: int = 6, subject: int = 1):
    r"""Memory by state against memory by lookup: the RNN's chain above, one attention query below.

    Above, the Elman network of Chapter 3: the inputs :math:`x_1 .. x_T` enter the states
    :math:`h_1 .. h_T`, and whatever reaches step :math:`T` from step ``subject`` passes through
    every :math:`W_{hh}` arrow between them. Below, causal self-attention: the query :math:`q_T` of
    the last position scores the keys :math:`k_s` of every position :math:`s \le T` at once and
    reads their values with the weights :math:`a_{Ts}`; the arrow from position ``subject`` (the
    subject of a sentence, say) is drawn heavy, one step long whatever the distance.

    Parameters
    ----------
    T : int
        The number of positions drawn, 3 to 8.
    subject : int
        The position whose arrow is highlighted, 1 to ``T - 1``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    T = _check_int("T", T, 3, 8)
    subject = _check_int("subject", subject, 1, T - 1)
    fig, ax = _canvas(1.6 * T + 1.4, 7.4)
    previous = _node(ax, (0.7, 5.6), "$h_0$", color=GREY)
    for t in range(1, T + 1):
        x = 0.7 + 1.6 * t
        h = _node(ax, (x, 5.6), rf"$h_{{{t}}}$", color=BLUE)
        _arrow(ax, _node(ax, (x, 4.4), rf"$x_{{{t}}}$", color=GREEN), h)
        _arrow(ax, previous, h, "$W_{hh}$", offset=(0, 0.22), fontsize=9, color=PINK if t > subject else "k")
        previous = h
    ax.text(
        0.2,
        6.9,
        rf"by state: step {subject} reaches step {T} through {T - subject} products with $W_{{hh}}$",
        fontsize=10,
    )
    query = _node(ax, (0.7 + 1.6 * T, 2.6), rf"$q_{{{T}}}$", color=ORANGE)
    for s in range(1, T + 1):
        key = _node(ax, (0.7 + 1.6 * s, 0.7), rf"$k_{{{s}}}, v_{{{s}}}$", color=GREEN, width=1.1)
        heavy = s == subject
        arrow = _arrow(ax, key, query, rf"$a_{{{T}{s}}}$" if heavy or s == T else None, color=PINK if heavy else GREY,
                       rad=-0.15 if s < T else 0.0, offset=(0, 0.35) if heavy else (0.3, 0))  # fmt: skip
        arrow.set_linewidth(2.6 if heavy else 1.0)
    ax.text(
        0.2,
        3.6,
        rf"by lookup: $c_{{{T}}} = \sum_{{s \leq {T}}} a_{{{T}s}}\, v_s$,   "
        rf"$a_{{{T}s}} = \mathrm{{softmax}}_s(q_{{{T}}}^\top k_s / \sqrt{{d_k}})$: one step from any $s$",
        fontsize=10,
    )
    return fig
