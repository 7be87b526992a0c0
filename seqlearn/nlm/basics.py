"""The formulas of Chapter 2 in plain NumPy: the references its exercises are graded against.

Small and readable, one array at a time; :mod:`seqlearn.nlm.model` computes the same things
in torch, batched, on any device. Sentences are encoded as in Chapter 1 (one flat stream
``<s> w_1 ... w_k </s> <s> ...``, see :func:`seqlearn.data.vocab.encode_sentences`).
"""

from __future__ import annotations

import math

import numpy as np

from ..data.vocab import Vocab
from ..guard import reference
from ..validation import integer

__all__ = ["context_windows", "nlm_logits", "masked_cross_entropy", "perplexity_from_loss", "best_interpolation_weight"]


def _int_stream(stream) -> np.ndarray:
    stream = np.asarray(stream)
    if stream.ndim != 1 or not np.issubdtype(stream.dtype, np.integer):
        raise TypeError(f"stream must be a 1-D integer array, got shape {stream.shape} and dtype {stream.dtype}")
    if stream.size == 0 or stream[0] != Vocab.bos_id:
        raise ValueError("stream must be non-empty and start with <s> (see encode_sentences)")
    return stream


@reference
def context_windows(stream, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The (context, target) pairs of an n-gram window model over an encoded stream.

    Every token that is not ``<s>`` is a target :math:`w_t`; its context is the
    :math:`n - 1` tokens before it, :math:`(w_{t-n+1}, \dots, w_{t-1})`, where positions left
    of the sentence's ``<s>`` are filled with ``<s>`` (a window never reaches into the
    previous sentence).

    Returns
    -------
    contexts : int64 array, shape ``(T, n - 1)``, oldest token first
    targets : int64 array, shape ``(T,)``
    """
    n = integer(n, "the order n", low=1)
    stream = _int_stream(stream)
    positions = np.flatnonzero(stream != Vocab.bos_id)  # (T,)
    start = np.maximum.accumulate(np.where(stream == Vocab.bos_id, np.arange(len(stream)), 0))  # sentence's <s>
    offsets = np.arange(n - 1, 0, -1)  # (n-1,) how far back each context slot looks
    back = positions[:, None] - offsets[None, :]  # (T, n-1)
    inside = back >= start[positions][:, None]
    contexts = np.where(inside, stream[np.maximum(back, 0)], Vocab.bos_id)
    return contexts.astype(np.int64), stream[positions].astype(np.int64)


@reference
def nlm_logits(contexts, C, H, d, U, b, W=None) -> np.ndarray:
    r"""Bengio et al.'s (2003) neural language model, up to the softmax.

    .. math::
        x = [C_{w_{t-n+1}}; \dots; C_{w_{t-1}}], \qquad
        y = b + W x + U \tanh(d + H x)

    Shapes: ``contexts`` (B, n-1) ints, ``C`` (|V|, m), ``H`` (h, (n-1) m), ``d`` (h,),
    ``U`` (|V|, h), ``b`` (|V|,), ``W`` (|V|, (n-1) m) or None (no direct connections).
    Returns the logits ``y``, shape (B, |V|).
    """
    contexts = np.asarray(contexts)
    x = np.asarray(C)[contexts].reshape(len(contexts), -1)  # (B, (n-1) m)
    y = b + np.tanh(d + x @ np.asarray(H).T) @ np.asarray(U).T  # (B, |V|)
    return y if W is None else y + x @ np.asarray(W).T


@reference
def masked_cross_entropy(logits, targets, mask) -> float:
    r"""Mean negative log-likelihood over the real tokens only.

    .. math::
        L = \frac{\sum_t m_t \left(-\log \mathrm{softmax}(y_t)_{w_t}\right)}{\sum_t m_t}

    ``logits`` (..., |V|), ``targets`` and ``mask`` (...) with mask 1 for real tokens and 0 for
    padding, so padding neither adds loss nor counts in the denominator. The softmax is
    computed stably (subtracting each row's maximum).
    """
    logits, targets, mask = np.asarray(logits, dtype=float), np.asarray(targets), np.asarray(mask, dtype=float)
    if mask.sum() <= 0:
        raise ValueError("the mask selects no token: the mean loss over zero tokens is undefined")
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1))
    nll = log_z - np.take_along_axis(shifted, targets[..., None], axis=-1)[..., 0]
    return float((mask * nll).sum() / mask.sum())


@reference
def perplexity_from_loss(mean_nll: float) -> float:
    r"""Perplexity :math:`e^{L}` of a mean negative log-likelihood :math:`L` in nats per token."""
    if math.isnan(mean_nll) or mean_nll < 0:
        raise ValueError(f"a mean negative log-likelihood is a number >= 0, got {mean_nll}")
    return math.exp(mean_nll)


@reference
def best_interpolation_weight(p_a, p_b, tol: float = 1e-10) -> float:
    r"""The weight :math:`\lambda \in [0, 1]` of the mixture :math:`\lambda p_a + (1 - \lambda) p_b`
    with the lowest perplexity on the given tokens.

    ``p_a`` and ``p_b`` are the two models' probabilities of the same T validation tokens.
    The mean log-likelihood :math:`\ell(\lambda) = \frac1T \sum_t \log(\lambda p_{a,t} +
    (1 - \lambda) p_{b,t})` is concave, so its maximiser is found by bisection on the sign
    of :math:`\ell'(\lambda) = \frac1T \sum_t \frac{p_{a,t} - p_{b,t}}{\lambda p_{a,t} + (1-\lambda) p_{b,t}}`.
    """
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    if p_a.shape != p_b.shape or p_a.ndim != 1 or p_a.size == 0:
        raise ValueError(f"p_a and p_b must be 1-D arrays of the same non-zero length, got {p_a.shape} and {p_b.shape}")
    if np.any(~np.isfinite(p_a)) or np.any(~np.isfinite(p_b)) or p_a.min() < 0 or p_b.min() < 0:
        raise ValueError("p_a and p_b must be probabilities (finite, >= 0)")

    def slope(lam):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.mean((p_a - p_b) / (lam * p_a + (1 - lam) * p_b))

    if slope(0.0) <= 0:
        return 0.0
    if slope(1.0) >= 0:
        return 1.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
    return (lo + hi) / 2
