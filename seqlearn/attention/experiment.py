r"""Chapter 7's look inside a trained attention model: :func:`attention_map`, its weights on one sentence.

The race of recurrent and attention models on long-distance agreement is :func:`seqlearn.rnn.agreement_race`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..data.vocab import Vocab
from ..lm import evaluating, model_device
from ..validation import integer
from .model import AttentionLM

__all__ = ["attention_map"]


def attention_map(model: AttentionLM, vocab: Vocab, tokens: Sequence[str], layer: int = -1) -> np.ndarray:
    r"""The weights :math:`a^{(j)}_{ts}` of every head of one layer of ``model`` on the sentence ``<s> tokens``.

    Returns
    -------
    numpy.ndarray, float64, shape ``(n_h, T, T)``
        ``[j, t]`` is where head :math:`j` looks from position :math:`t` (``<s>`` is position 0);
        it sums to 1 over :math:`s \le t`.
    """
    if not isinstance(model, AttentionLM):
        raise TypeError(f"model must be an AttentionLM, got {type(model).__name__}")
    if isinstance(tokens, str):
        raise TypeError("tokens must be a sequence of tokens, not a str")
    layer = integer(layer, "layer", low=-model.n_layers, high=model.n_layers - 1)
    ids = np.concatenate([[Vocab.bos_id], vocab.encode(list(tokens))])
    with evaluating(model):
        _, weights = model(torch.as_tensor(ids, device=model_device(model))[None])
    return weights[layer][0].double().cpu().numpy()
