"""The diagrams of seqlearn.viz: each draws its labelled parts, refuses bad sizes, and closes."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text

from seqlearn import viz
from seqlearn.viz import diagrams

# function, keyword arguments, texts the figure must contain
EXPECTED = [
    ("draw_ngram_window", {"n": 3}, ["$w_{t-3}$", "$w_{t-2}$", "$w_{t-1}$", "$w_t$", r"$P(w_t \mid h)$"]),
    (
        "draw_interpolation_chain",
        {"n": 3},
        [r"$P(w \mid w_{t-2}\,w_{t-1})$", r"$\gamma(w_{t-1})$", "order 1", "$1/|V|$"],
    ),
    (
        "draw_nplm",
        {"n": 4},
        ["$w_{t-3}$", "$w_{t-1}$", "$C_{w_{t-2}}$", "$C$", "$U$", r"$y = b + Wx + U \tanh(d + Hx)$"],
    ),
    ("draw_unrolled_rnn", {"T": 4}, ["$h_0$", "$x_1$", "$h_4$", "$y_4$", "$W_{xh}$", "$W_{hh}$", "$W_{hy}$"]),
    (
        "draw_bptt_graph",
        {"T": 3},
        [r"$\delta_1$", r"$\delta_3$", r"$\delta_4 = 0$", "$e_2$", r"$W_{hh}^\top$", r"$W_{hy}^\top$"],
    ),
    ("draw_lstm_cell", {}, ["$c_{t-1}$", "$c_t$", "$f_t$", "$i_t$", "$g_t$", "$o_t$", "$h_{t-1}$", "$h_t$", "$x_t$"]),
    ("draw_gru_cell", {}, ["$r_t$", "$z_t$", "$n_t$", "$1 - z_t$", r"$h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$"]),
    ("draw_echo_state_network", {"N": 10}, ["$u_t$", "$y_t$", "$W_{in}$ (fixed)"]),
    ("draw_leaky_gated_cell", {"ell": 2}, ["$s_t$", r"$\lambda_t = 1 - s_t$", "$h_{t-2}$", r"$\lambda^{(q)}_{t-1}$"]),
    ("draw_lowrank_network", {}, ["$x_t$", "$f_t$", "input vector $m$", "$u$", "$v$", r"$v^\top h_t / N$"]),
    (
        "draw_attention_lookup",
        {"T": 5, "subject": 2},
        ["$h_0$", "$h_5$", "$q_5$", "$k_1, v_1$", "$a_{52}$", "$W_{hh}$"],
    ),
]

# function, keyword arguments that must be refused with ValueError
BAD = [
    ("draw_ngram_window", {"n": 1}),
    ("draw_ngram_window", {"n": 7}),
    ("draw_interpolation_chain", {"n": 0}),
    ("draw_nplm", {"n": 1}),
    ("draw_unrolled_rnn", {"T": 0}),
    ("draw_unrolled_rnn", {"T": 9}),
    ("draw_bptt_graph", {"T": 0}),
    ("draw_echo_state_network", {"N": 2}),
    ("draw_leaky_gated_cell", {"ell": 0}),
    ("draw_attention_lookup", {"T": 2}),
    ("draw_attention_lookup", {"T": 5, "subject": 5}),
]


def _plain(text):
    """Mathtext with one-character subscripts unbraced: ``x_{1}`` reads ``x_1``."""
    return re.sub(r"_\{(\w)\}", r"_\1", text)


def _texts(fig):
    return {_plain(t.get_text()) for t in fig.findobj(Text)}


@pytest.mark.parametrize(("name", "kwargs", "texts"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_each_diagram_draws_its_labelled_parts(name, kwargs, texts):
    fig = getattr(diagrams, name)(**kwargs)
    try:
        assert isinstance(fig, Figure)
        drawn = _texts(fig)
        missing = [t for t in texts if not any(t in d for d in drawn)]
        assert missing == [], f"{name} lacks {missing}"
        assert fig.findobj(FancyArrowPatch), f"{name} draws no arrows"
    finally:
        plt.close(fig)
    assert not plt.fignum_exists(fig.number)


def test_every_diagram_is_tested_and_exported():
    assert {e[0] for e in EXPECTED} == set(diagrams.__all__)
    assert set(diagrams.__all__) <= set(viz.__all__)
    assert all(getattr(viz, name) is getattr(diagrams, name) for name in diagrams.__all__)


@pytest.mark.parametrize(("name", "kwargs"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD])
def test_bad_sizes_are_refused(name, kwargs):
    before = plt.get_fignums()
    with pytest.raises(ValueError, match="must be between"):
        getattr(diagrams, name)(**kwargs)
    assert plt.get_fignums() == before, "a refused call leaves no figure open"


def test_non_integers_are_refused():
    with pytest.raises(TypeError, match="T must be an integer"):
        diagrams.draw_unrolled_rnn(T=2.5)
    with pytest.raises(TypeError, match="n must be an integer"):
        diagrams.draw_nplm(n=True)


def test_the_unrolled_network_has_one_copy_per_step():
    for T in (1, 5):
        fig = diagrams.draw_unrolled_rnn(T=T)
        texts = [_plain(t.get_text()) for t in fig.findobj(Text)]
        plt.close(fig)
        assert texts.count("$W_{hh}$") == T and texts.count("$W_{xh}$") == T and texts.count("$W_{hy}$") == T
        assert f"$x_{T}$" in texts and f"$x_{T + 1}$" not in texts


def test_the_reservoir_is_the_same_for_the_same_seed():
    def arrows(seed):
        fig = diagrams.draw_echo_state_network(N=8, seed=seed)
        n = len(fig.findobj(FancyArrowPatch))
        plt.close(fig)
        return n

    assert arrows(3) == arrows(3)


def test_the_attention_lookup_reaches_every_earlier_position_in_one_step():
    fig = diagrams.draw_attention_lookup(T=6, subject=2)
    texts = [_plain(t.get_text()) for t in fig.findobj(Text)]
    widths = sorted(a.get_linewidth() for a in fig.findobj(FancyArrowPatch))
    plt.close(fig)
    assert texts.count("$W_{hh}$") == 6 and sum(t.startswith("$k_") for t in texts) == 6
    assert widths[-1] > 2 * widths[0] and widths.count(widths[-1]) == 1, "one heavy arrow: the subject's"
