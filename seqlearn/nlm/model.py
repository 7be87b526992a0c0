r"""Bengio, Ducharme, Vincent & Jauvin's (2003) neural probabilistic language model in torch.

The model predicts a token from the :math:`n - 1` tokens before it. Each context word
:math:`w` is looked up in a shared embedding matrix :math:`C` (row :math:`C_w \in
\mathbb{R}^m`); the rows are concatenated into :math:`x`, passed through one tanh hidden
layer, and scored for every word of the vocabulary:

.. math::
    x = [C_{w_{t-n+1}}; \dots; C_{w_{t-1}}] \in \mathbb{R}^{(n-1) m}, \qquad
    y = b + W x + U \tanh(d + H x) \in \mathbb{R}^{|V|}, \qquad
    P(w_t = i \mid w_{t-n+1}^{t-1}) = \mathrm{softmax}(y)_i .

:math:`W` (the direct connections from the embeddings to the output) is optional.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["BengioNLM", "bengio_parameter_count"]


def _check_size(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def bengio_parameter_count(vocab_size: int, order: int, m: int, h: int, direct: bool = True) -> int:
    r"""Number of free parameters of :class:`BengioNLM`.

    .. math::
        |\theta| = |V| (1 + n m + h) + h (1 + (n - 1) m)

    with direct connections :math:`W`; without them, :math:`|V| (1 + m + h) + h (1 + (n - 1) m)`.
    The terms are :math:`C` (:math:`|V| m`), :math:`b` (:math:`|V|`), :math:`U` (:math:`|V| h`),
    :math:`W` (:math:`|V| (n-1) m`), :math:`H` (:math:`h (n-1) m`) and :math:`d` (:math:`h`).
    """
    V, n = _check_size(vocab_size, "vocab_size", 1), _check_size(order, "order n", 2)
    m, h = _check_size(m, "m", 1), _check_size(h, "h", 1)
    if direct:
        return V * (1 + n * m + h) + h * (1 + (n - 1) * m)
    return V * (1 + m + h) + h * (1 + (n - 1) * m)


class BengioNLM(nn.Module):
    r"""The neural probabilistic language model of Bengio et al. (2003).

    .. math::
        x = [C_{w_{t-n+1}}; \dots; C_{w_{t-1}}], \qquad y = b + W x + U \tanh(d + H x)

    Parameters
    ----------
    vocab_size : int
        :math:`|V|`, the number of token ids (specials included).
    order : int
        :math:`n \ge 2`: the model predicts a token from the :math:`n - 1` before it.
    m : int
        Embedding dimension (the columns of :math:`C`).
    h : int
        Number of hidden tanh units.
    direct : bool
        Whether the output has the direct connections :math:`W x`.
    seed : int, optional
        Seed of the initialisation (a private generator; the global one is not touched).

    Attributes
    ----------
    C : Parameter, shape ``(|V|, m)``
        The shared word embeddings, :math:`C_w` in row ``w``.
    H : Parameter, shape ``(h, (n-1) m)``
        Hidden layer weights.
    d : Parameter, shape ``(h,)``
        Hidden layer biases.
    U : Parameter, shape ``(|V|, h)``
        Hidden-to-output weights.
    b : Parameter, shape ``(|V|,)``
        Output biases.
    W : Parameter, shape ``(|V|, (n-1) m)``, or None
        Direct embedding-to-output weights (``None`` when ``direct=False``).

    Notes
    -----
    The parameter names are those of the paper's equations; :attr:`n_parameters` counts them
    (:func:`bengio_parameter_count` gives the closed form). The initialisation is described
    in :meth:`reset_parameters`.
    """

    def __init__(self, vocab_size: int, order: int, m: int, h: int, direct: bool = True, seed: int | None = None):
        super().__init__()
        self.vocab_size = _check_size(vocab_size, "vocab_size", 1)
        self.order = _check_size(order, "order n", 2)
        self.m, self.h = _check_size(m, "m", 1), _check_size(h, "h", 1)
        if not isinstance(direct, bool):
            raise TypeError(f"direct must be a bool, got {type(direct).__name__}")
        self.direct = direct
        V, k = self.vocab_size, (self.order - 1) * self.m
        self.C = nn.Parameter(torch.empty(V, self.m))
        self.H = nn.Parameter(torch.empty(self.h, k))
        self.d = nn.Parameter(torch.empty(self.h))
        self.U = nn.Parameter(torch.empty(V, self.h))
        self.b = nn.Parameter(torch.empty(V))
        self.W = nn.Parameter(torch.empty(V, k)) if direct else None
        self.reset_parameters(seed)

    def reset_parameters(self, seed: int | None = None) -> None:
        r"""Draw fresh parameters.

        :math:`C_{ij} \sim \mathcal{N}(0, 1/m)`, so that an embedding has norm about 1;
        :math:`H, U, W` uniform in :math:`\pm 1/\sqrt{\text{fan-in}}` (as ``torch.nn.Linear``);
        the biases :math:`d, b` start at 0.
        """
        g = torch.Generator(device="cpu")
        if seed is None:
            g.seed()
        else:
            g.manual_seed(int(seed))
        with torch.no_grad():
            for name, param in self.named_parameters():
                value = torch.empty(param.shape, dtype=param.dtype)
                if name == "C":
                    value.normal_(0.0, 1.0 / math.sqrt(self.m), generator=g)
                elif name in ("d", "b"):
                    value.zero_()
                else:
                    bound = 1.0 / math.sqrt(param.shape[1])
                    value.uniform_(-bound, bound, generator=g)
                param.copy_(value)

    def extra_repr(self) -> str:
        return f"|V|={self.vocab_size}, n={self.order}, m={self.m}, h={self.h}, direct={self.direct}"

    @property
    def n_parameters(self) -> int:
        r"""Number of free parameters, :math:`|V|(1 + nm + h) + h(1 + (n-1)m)` with :math:`W`."""
        return sum(p.numel() for p in self.parameters())

    def weights(self) -> list[nn.Parameter]:
        """The weights and embeddings ``[C, H, U, W]`` (``W`` only with direct connections)."""
        return [p for p in (self.C, self.H, self.U, self.W) if p is not None]

    def biases(self) -> list[nn.Parameter]:
        """The biases ``[d, b]``."""
        return [self.d, self.b]

    def _check_contexts(self, contexts) -> torch.Tensor:
        if not isinstance(contexts, torch.Tensor):
            raise TypeError(f"contexts must be a torch tensor of token ids, got {type(contexts).__name__}")
        if contexts.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"contexts must be an int64 (or int32) tensor of token ids, got dtype {contexts.dtype}")
        if contexts.ndim != 2 or contexts.shape[1] != self.order - 1:
            raise ValueError(f"contexts must have shape (B, n - 1) = (B, {self.order - 1}), "
                             f"got {tuple(contexts.shape)}")
        if contexts.numel():
            low, high = (int(v) for v in torch.aminmax(contexts))
            if low < 0 or high >= self.vocab_size:
                bad = low if low < 0 else high
                raise ValueError(f"context id {bad} is outside the vocabulary (valid ids are 0..{self.vocab_size - 1})")
        return contexts

    def embed(self, contexts: torch.Tensor) -> torch.Tensor:
        r"""The concatenated context embeddings :math:`x`; ``(B, n-1)`` ids -> ``(B, (n-1) m)``."""
        contexts = self._check_contexts(contexts)
        return F.embedding(contexts, self.C).reshape(len(contexts), -1)

    def forward(self, contexts: torch.Tensor) -> torch.Tensor:
        r"""Logits :math:`y = b + W x + U \tanh(d + H x)`.

        Parameters
        ----------
        contexts : torch.Tensor, int64, shape ``(B, n - 1)``
            Token ids of each context, oldest first.

        Returns
        -------
        torch.Tensor, shape ``(B, |V|)``
            The logits; ``torch.log_softmax(y, -1)`` gives :math:`\log P(\cdot \mid \text{context})`.
        """
        x = self.embed(contexts)  # (B, (n-1) m)
        a = torch.tanh(F.linear(x, self.H, self.d))  # (B, h)
        y = F.linear(a, self.U, self.b)  # (B, |V|)
        return y if self.W is None else y + F.linear(x, self.W)

    def log_probs(self, contexts: torch.Tensor) -> torch.Tensor:
        r""":math:`\log P(\cdot \mid \text{context})` for every word; shape ``(B, |V|)``."""
        return torch.log_softmax(self(contexts), dim=-1)
