r"""A tiny causal self-attention language model in torch: memory by lookup instead of by state.

A position :math:`t` of a sentence enters as :math:`x_t = E[w_t] + p_t`, the token's embedding
plus a learned position vector. One attention layer (one head) computes a query, a key and a value
at every position,

.. math::
    q_t = W_Q x_t + b_Q, \qquad k_s = W_K x_s + b_K, \qquad v_s = W_V x_s + b_V \qquad (\in \mathbb R^{d_k}),

weighs the positions :math:`s \le t` (the causal mask: never a later one) by a softmax of the
scaled dot products,

.. math::
    a_{ts} = \frac{\exp(q_t^\top k_s / \sqrt{d_k})}{\sum_{s' \le t} \exp(q_t^\top k_{s'} / \sqrt{d_k})}
    \quad (s \le t), \qquad a_{ts} = 0 \quad (s > t),

and adds the looked-up context back to the input (a residual connection),

.. math::
    c_t = \sum_{s \le t} a_{ts} v_s, \qquad x'_t = x_t + W_O c_t .

A layer may have several heads, each with its own :math:`W_Q, W_K, W_V` and weights, their contexts
side by side before :math:`W_O` (Vaswani et al. 2017): one head can track the local grammar while
another looks far back. After the last layer a position-wise tanh layer (also residual) and the output layer give the
logits of the next token, :math:`y_t = W_{xy} x_t + b_y`. Nothing is carried from step to step:
every position reads the whole prefix afresh, at a cost of :math:`T^2` dot products per layer.

* :class:`CausalSelfAttention`: one causal attention layer of one or more heads, returning the
  weights :math:`a_{ts}` of each head beside its output;
* :class:`AttentionLM`: embeddings, ``n_layers`` attention layers and the output; a
  :class:`~seqlearn.rnn.model.RecurrentLM` in the sense of reading whole sentences from nothing,
  so :func:`seqlearn.rnn.train_rnn_lm` trains it and :mod:`seqlearn.lm` evaluates it (perplexity,
  agreement) with the same code as the Elman and gated networks.

The constructors follow the course's names (``embedding_dim`` is the width :math:`D`, ``n_heads``
torch's ``num_heads``); the parameters keep the chapter's letters
(``W_Q``, ``W_K``, ``W_V``, ``W_O``).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..rnn.model import RecurrentLM
from ..seeding import child_seed, torch_generator
from ..validation import integer

__all__ = ["causal_mask", "CausalSelfAttention", "AttentionLM"]


def causal_mask(T: int, device=None) -> torch.Tensor:
    """``(T, T)`` bool, True where :math:`s > t` (a later position, which query :math:`t` may not see)."""
    T = integer(T, "T", low=1)
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def _check_inputs(x, D: int) -> None:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating-point torch tensor, got {type(x).__name__}")
    if x.ndim != 3 or x.shape[2] != D or x.shape[1] < 1:
        raise ValueError(f"x must have shape (B, T, D) with D = {D} and T >= 1, got {tuple(x.shape)}")


class CausalSelfAttention(nn.Module):
    r"""Causal scaled dot-product self-attention with :math:`n_h` heads: :math:`W_O [c^{(1)}_t; \dots; c^{(n_h)}_t]`.

    Head :math:`j` has its own :math:`W_Q^{(j)}, W_K^{(j)}, W_V^{(j)}` (rows :math:`j d_k` to
    :math:`(j+1) d_k - 1` of ``W_Q``, ``W_K``, ``W_V``) and its own weights :math:`a^{(j)}_{ts}`, so two
    heads can look at different positions; their contexts are concatenated and mapped back by
    :math:`W_O`. With one head this is the layer of the module docstring.

    Parameters
    ----------
    embedding_dim : int
        :math:`D`, the width of the inputs and of the output.
    n_heads : int
        :math:`n_h \ge 1`.
    key_dim : int, optional
        :math:`d_k`, the size of each head's queries, keys and values (default :math:`D / n_h`,
        which must then be whole).
    seed : int, optional
        Seed of the initial weights (uniform in :math:`\pm 1/\sqrt{\text{fan-in}}`, like ``nn.Linear``).

    Attributes
    ----------
    W_Q, W_K, W_V : Parameter ``(n_h d_k, D)``; b_Q, b_K, b_V : Parameter ``(n_h d_k,)`` (zero at the start);
    W_O : Parameter ``(D, n_h d_k)``
    """

    def __init__(self, embedding_dim: int, n_heads: int = 1, key_dim: int | None = None, seed: int | None = None):
        super().__init__()
        self.embedding_dim = D = integer(embedding_dim, "embedding_dim D", low=1)
        self.n_heads = n_h = integer(n_heads, "n_heads", low=1)
        if key_dim is None and D % n_h:
            raise ValueError(f"embedding_dim D = {D} is not a multiple of n_heads = {n_h}: give key_dim")
        self.key_dim = d_k = D // n_h if key_dim is None else integer(key_dim, "key_dim d_k", low=1)
        g = torch_generator(seed)

        def uniform(rows: int, cols: int) -> nn.Parameter:
            return nn.Parameter((2 * torch.rand(rows, cols, generator=g) - 1) / math.sqrt(cols))

        self.W_Q, self.W_K, self.W_V = uniform(n_h * d_k, D), uniform(n_h * d_k, D), uniform(n_h * d_k, D)
        self.W_O = uniform(D, n_h * d_k)
        self.b_Q, self.b_K, self.b_V = (nn.Parameter(torch.zeros(n_h * d_k)) for _ in range(3))

    def extra_repr(self) -> str:
        return f"embedding_dim={self.embedding_dim}, n_heads={self.n_heads}, key_dim={self.key_dim}"

    def _heads(self, x: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """``x @ W.T + b`` split into the heads: ``(B, n_h, T, d_k)``."""
        B, T, _ = x.shape
        return (x @ W.T + b).view(B, T, self.n_heads, self.key_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r"""The layer's output ``(B, T, D)`` and the weights :math:`a^{(j)}_{ts}` ``(B, n_h, T, T)``.

        Row :math:`t` of each head's weights sums to 1 over :math:`s \le t` and is 0 for :math:`s > t`.
        """
        _check_inputs(x, self.embedding_dim)
        B, T, _ = x.shape
        q = self._heads(x, self.W_Q, self.b_Q)  # (B, n_h, T, d_k): q_t = W_Q x_t + b_Q, per head
        k = self._heads(x, self.W_K, self.b_K)
        v = self._heads(x, self.W_V, self.b_V)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.key_dim)  # (B, n_h, T, T): q_t . k_s / sqrt(d_k)
        scores = scores.masked_fill(causal_mask(T, x.device), float("-inf"))
        a = torch.softmax(scores, dim=-1)  # zero above the diagonal
        c = (a @ v).transpose(1, 2).reshape(B, T, self.n_heads * self.key_dim)  # (B, T, n_h d_k): heads side by side
        return c @ self.W_O.T, a


class AttentionLM(RecurrentLM):
    r"""Token and position embeddings, causal self-attention layers and a softmax output.

    :math:`x_t = E[w_t] + p_t`; each layer adds :math:`W_O c_t` (:class:`CausalSelfAttention`);
    then :math:`x_t \leftarrow x_t + W_{2} \tanh(W_{1} x_t + b_1) + b_2` (a position-wise layer of
    ``hidden_size`` units, which reads only position :math:`t`) and :math:`y_t = W_{xy} x_t + b_y`.
    It predicts the tokens of Chapters 1-4 (every word and ``</s>``) with the same loss, so it is
    trained by :func:`seqlearn.rnn.train_rnn_lm` (whole sentences; it carries no state, so
    truncated BPTT does not apply) and evaluated by :mod:`seqlearn.lm` exactly like the
    :class:`~seqlearn.rnn.model.RNNLM`.

    Parameters
    ----------
    vocab_size : int
        :math:`|V|`.
    embedding_dim : int
        :math:`D`, the width of every position's vector.
    n_layers : int
        Attention layers, 1 or more.
    n_heads : int
        Heads per layer (:class:`CausalSelfAttention`).
    hidden_size : int
        Units of the position-wise tanh layer; 0 for none.
    max_len : int
        The longest input (``<s>`` and the words) it has position vectors for.
    seed : int, optional

    Attributes
    ----------
    E : Parameter ``(|V|, D)``; p : Parameter ``(max_len, D)``; layers : ModuleList of CausalSelfAttention;
    W_xy : Parameter ``(|V|, D)``; b_y : Parameter ``(|V|,)``
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_dim: int = 32,
        n_layers: int = 2,
        n_heads: int = 1,
        hidden_size: int = 64,
        max_len: int = 128,
        seed: int | None = None,
    ):
        super().__init__()
        self.vocab_size = V = integer(vocab_size, "vocab_size", low=4)
        self.embedding_dim = D = integer(embedding_dim, "embedding_dim D", low=1)
        self.n_layers = integer(n_layers, "n_layers", low=1)
        self.hidden_size = integer(hidden_size, "hidden_size", low=0)
        self.max_len = integer(max_len, "max_len", low=1)
        g = torch_generator(seed)
        self.E = nn.Parameter(torch.randn(V, D, generator=g) * 0.1)
        self.p = nn.Parameter(torch.zeros(self.max_len, D))  # an unseen position adds nothing
        self.n_heads = integer(n_heads, "n_heads", low=1)
        self.layers = nn.ModuleList(
            CausalSelfAttention(D, self.n_heads, seed=child_seed(g)) for _ in range(self.n_layers)
        )
        self.W_1 = nn.Parameter(torch.randn(self.hidden_size, D, generator=g) / math.sqrt(D))
        self.b_1 = nn.Parameter(torch.zeros(self.hidden_size))
        self.W_2 = nn.Parameter(torch.randn(D, self.hidden_size, generator=g) / math.sqrt(max(self.hidden_size, 1)))
        self.b_2 = nn.Parameter(torch.zeros(D))
        self.W_xy = nn.Parameter(torch.randn(V, D, generator=g) / math.sqrt(D))
        self.b_y = nn.Parameter(torch.zeros(V))

    def _check_ids(self, ids) -> None:
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.is_floating_point():
            raise ValueError("ids must be an integer tensor of shape (B, T)")
        if not 1 <= ids.shape[1] <= self.max_len:
            raise ValueError(
                f"ids has {ids.shape[1]} positions; this model has position vectors for 1 to {self.max_len}"
            )

    def attend(self, ids: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        r"""The vectors :math:`x_t` ``(B, T, D)`` after the last layer; each layer's weights ``(B, n_h, T, T)``."""
        self._check_ids(ids)
        x = self.E[ids] + self.p[: ids.shape[1]]  # (B, T, D)
        weights = []
        for layer in self.layers:
            out, a = layer(x)
            x = x + out
            weights.append(a)
        if self.hidden_size:
            x = x + torch.tanh(x @ self.W_1.T + self.b_1) @ self.W_2.T + self.b_2
        return x, weights

    def forward(self, ids: torch.Tensor, state=None) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Logits ``(B, T, |V|)`` of the next token after each of ``ids`` ``(B, T)``, and the layers' weights.

        ``state`` must be None: attention carries nothing from one call to the next.
        """
        if state is not None:
            raise ValueError("an AttentionLM carries no state between calls: train it on whole sentences (bptt=None)")
        x, weights = self.attend(ids)
        return x @ self.W_xy.T + self.b_y, weights
