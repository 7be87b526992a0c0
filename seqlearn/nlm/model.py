r"""Bengio, Ducharme, Vincent & Jauvin's (2003) neural probabilistic language model in torch.

The model predicts a token from the :math:`n - 1` tokens before it. Each context word
:math:`w` is looked up in a shared embedding matrix :math:`C` (row :math:`C_w \in
\mathbb{R}^m`); the rows are concatenated into :math:`x`, passed through one layer of
:math:`h` tanh units, and scored for every word of the vocabulary:

.. math::
    x = [C_{w_{t-n+1}}; \dots; C_{w_{t-1}}] \in \mathbb{R}^{(n-1) m}, \qquad
    y = b + W x + U \tanh(d + H x) \in \mathbb{R}^{|V|}, \qquad
    P(w_t = i \mid w_{t-n+1}^{t-1}) = \mathrm{softmax}(y)_i .

:math:`W` (the direct connections from the embeddings to the output) is optional. The
constructor's arguments follow torch (``embedding_dim`` is the paper's :math:`m`,
``hidden_size`` its :math:`h`); the parameters keep the paper's names.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..data.vocab import Vocab
from ..lm import evaluating, model_device
from ..validation import flag, integer
from .data import WindowBatches

__all__ = ["BengioNLM", "bengio_parameter_count"]


def _check_sizes(vocab_size, order, embedding_dim, hidden_size) -> tuple[int, int, int, int]:
    r""":math:`|V| \ge 1, n \ge 2, m \ge 1, h \ge 1` as ints."""
    return (
        integer(vocab_size, "vocab_size", low=1),
        integer(order, "order n", low=2),
        integer(embedding_dim, "embedding_dim m", low=1),
        integer(hidden_size, "hidden_size h", low=1),
    )


def bengio_parameter_count(
    vocab_size: int, order: int, embedding_dim: int, hidden_size: int, direct: bool = True
) -> int:
    r"""Number of free parameters of :class:`BengioNLM`.

    .. math::
        |\theta| = |V| (1 + n m + h) + h (1 + (n - 1) m)

    with direct connections :math:`W`; without them, :math:`|V| (1 + m + h) + h (1 + (n - 1) m)`,
    where :math:`m` = ``embedding_dim`` and :math:`h` = ``hidden_size``. The terms are
    :math:`C` (:math:`|V| m`), :math:`b` (:math:`|V|`), :math:`U` (:math:`|V| h`),
    :math:`W` (:math:`|V| (n-1) m`), :math:`H` (:math:`h (n-1) m`) and :math:`d` (:math:`h`).
    """
    V, n, m, h = _check_sizes(vocab_size, order, embedding_dim, hidden_size)
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
    embedding_dim : int
        :math:`m`, the embedding dimension (the columns of :math:`C`).
    hidden_size : int
        :math:`h`, the number of hidden tanh units.
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

    Examples
    --------
    >>> import torch
    >>> model = BengioNLM(vocab_size=10, order=3, embedding_dim=4, hidden_size=8, seed=0)
    >>> model.n_parameters == bengio_parameter_count(10, 3, 4, 8)
    True
    >>> logits = model(torch.tensor([[1, 2], [3, 4]]))  # two contexts of n - 1 = 2 token ids
    >>> tuple(logits.shape)
    (2, 10)
    """

    def __init__(
        self,
        vocab_size: int,
        order: int,
        embedding_dim: int,
        hidden_size: int,
        direct: bool = True,
        seed: int | None = None,
    ):
        super().__init__()
        V, n, m, h = _check_sizes(vocab_size, order, embedding_dim, hidden_size)
        self.vocab_size, self.order, self.embedding_dim, self.hidden_size = V, n, m, h
        self.direct = flag(direct, "direct")
        k = (n - 1) * m
        self.C = nn.Parameter(torch.empty(V, m))
        self.H = nn.Parameter(torch.empty(h, k))
        self.d = nn.Parameter(torch.empty(h))
        self.U = nn.Parameter(torch.empty(V, h))
        self.b = nn.Parameter(torch.empty(V))
        self.W = nn.Parameter(torch.empty(V, k)) if self.direct else None
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
                    value.normal_(0.0, 1.0 / math.sqrt(self.embedding_dim), generator=g)
                elif name in ("d", "b"):
                    value.zero_()
                else:
                    bound = 1.0 / math.sqrt(param.shape[1])
                    value.uniform_(-bound, bound, generator=g)
                param.copy_(value)

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, order={self.order}, embedding_dim={self.embedding_dim}, "
            f"hidden_size={self.hidden_size}, direct={self.direct}"
        )

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
            raise ValueError(
                f"contexts must have shape (B, n - 1) = (B, {self.order - 1}), got {tuple(contexts.shape)}"
            )
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

    def next_token_distribution(self, prefixes) -> np.ndarray:
        r""":math:`\log P(\cdot \mid \langle s \rangle\, \mathrm{prefix})` after each of :math:`G` unfinished sentences.

        The fast path of :func:`seqlearn.lm.next_token_distribution` (one forward pass): the
        context of each prefix is its last :math:`n - 1` tokens of ``<s> prefix``, slots left of
        ``<s>`` holding ``<s>``, as in :class:`WindowBatches`.

        Parameters
        ----------
        prefixes : int array, shape ``(G, P)``
            Word ids of each sentence so far (no ``<s>``), all of the same length :math:`P \ge 0`.

        Returns
        -------
        numpy.ndarray, float64, shape ``(G, |V|)``
        """
        prefixes = np.asarray(prefixes, dtype=np.int64)  # (G, P)
        n = self.order
        pad = np.full((len(prefixes), n - 1), Vocab.bos_id, dtype=np.int64)
        contexts = np.concatenate([pad, prefixes], axis=1)[:, prefixes.shape[1] :]  # (G, n-1): the last n-1
        with evaluating(self):
            logp = self.log_probs(torch.as_tensor(contexts, device=model_device(self)))  # (G, |V|)
        return logp.double().cpu().numpy()

    def token_logprobs(self, stream, batch_size: int = 4096) -> np.ndarray:
        r"""Natural-log :math:`\log P(w_t \mid w_{t-n+1}^{t-1})` of every predicted token of ``stream``.

        One entry per token that is not ``<s>`` (words and ``</s>``), in stream order, its
        context never reaching left of its sentence's ``<s>`` (:class:`WindowBatches`): aligned
        1:1 with Chapter 1's ``LanguageModel.token_logprobs``. Computed where the model is, in
        batches of ``batch_size`` windows, in evaluation mode without gradients (see
        :func:`seqlearn.lm.token_logprobs` for the choice of device).

        Parameters
        ----------
        stream : array of int, shape ``(L,)``
            An encoded stream, its :math:`T` predicted tokens scored through
            :math:`T` windows of :math:`n - 1` tokens each.
        batch_size : int
            Windows per forward pass.

        Returns
        -------
        numpy.ndarray, float64, shape ``(T,)``
        """
        windows = WindowBatches(stream, self.order, batch_size, vocab_size=self.vocab_size, device=model_device(self))
        out = []
        with evaluating(self):
            for contexts, targets in windows:
                logits = self(contexts)  # (B, |V|)
                picked = logits.gather(1, targets[:, None])[:, 0]  # (B,)
                out.append(picked - torch.logsumexp(logits, dim=1))
        return torch.cat(out).double().cpu().numpy()
