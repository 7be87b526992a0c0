r"""Linear interpolation of two language models, as Bengio et al. (2003) mix their NLM with an n-gram model.

.. math::
    p_{\text{mix}}(w_t \mid h_t) = \lambda\, p_a(w_t \mid h_t) + (1 - \lambda)\, p_b(w_t \mid h_t)

The weight :math:`\lambda` is fitted on validation tokens (the one that minimises their
perplexity, :func:`seqlearn.nlm.basics.best_interpolation_weight`) and the mixture is then
evaluated on test tokens. Both models must score the same tokens in the same order: every
language model of the course does on the same encoded stream
(:func:`seqlearn.lm.token_logprobs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import probability
from .basics import best_interpolation_weight

__all__ = ["fit_mixture", "mixture_logprobs", "MixtureReport", "evaluate_mixture"]


def _logprob_pair(logp_a, logp_b) -> tuple[np.ndarray, np.ndarray]:
    logp_a, logp_b = np.asarray(logp_a, dtype=float), np.asarray(logp_b, dtype=float)
    if logp_a.shape != logp_b.shape or logp_a.ndim != 1 or logp_a.size == 0:
        raise ValueError(
            f"the two models' log-probabilities must be 1-D arrays of the same non-zero length "
            f"(the same tokens), got shapes {logp_a.shape} and {logp_b.shape}"
        )
    if np.isnan(logp_a).any() or np.isnan(logp_b).any() or (logp_a > 1e-9).any() or (logp_b > 1e-9).any():
        raise ValueError("log-probabilities must be <= 0 and not NaN (natural-log probabilities of tokens)")
    if np.isneginf(np.maximum(logp_a, logp_b)).any():
        raise ValueError("a token has probability 0 under both models: the mixture's perplexity is infinite")
    return np.minimum(logp_a, 0.0), np.minimum(logp_b, 0.0)


def _perplexity(logp: np.ndarray) -> float:
    return math.exp(-float(np.mean(logp)))


def fit_mixture(logp_a_val, logp_b_val) -> float:
    r"""The weight :math:`\lambda` of model ``a`` that minimises the mixture's validation perplexity.

    Parameters
    ----------
    logp_a_val, logp_b_val : array, shape ``(T,)``
        Natural-log probabilities of the same T validation tokens under the two models.

    Returns
    -------
    float
        :math:`\lambda \in [0, 1]`, the maximiser of
        :math:`\frac1T \sum_t \log(\lambda p_{a,t} + (1 - \lambda) p_{b,t})`.

    Notes
    -----
    The probabilities are passed to :func:`~seqlearn.nlm.basics.best_interpolation_weight`
    rescaled per token by :math:`e^{-\max(\log p_{a,t}, \log p_{b,t})}`: the sign of the
    objective's slope, :math:`\sum_t (p_{a,t} - p_{b,t}) / (\lambda p_{a,t} + (1-\lambda) p_{b,t})`,
    is unchanged, and no probability underflows to 0.
    """
    logp_a, logp_b = _logprob_pair(logp_a_val, logp_b_val)
    top = np.maximum(logp_a, logp_b)  # (T,)
    return float(best_interpolation_weight(np.exp(logp_a - top), np.exp(logp_b - top)))


def mixture_logprobs(logp_a, logp_b, lam: float) -> np.ndarray:
    r"""Natural-log probabilities of the mixture, :math:`\log(\lambda p_a + (1 - \lambda) p_b)`.

    Computed stably as ``logaddexp(log(lam) + logp_a, log(1 - lam) + logp_b)``; shape ``(T,)``.
    """
    logp_a, logp_b = _logprob_pair(logp_a, logp_b)
    lam = probability(lam, "the mixture weight lam")
    if lam == 0 or lam == 1:
        return (logp_a if lam == 1 else logp_b).copy()
    return np.logaddexp(math.log(lam) + logp_a, math.log1p(-lam) + logp_b)


@dataclass(frozen=True)
class MixtureReport:
    """Test perplexities of two models and of their mixture with the validation-fitted weight."""

    lam: float
    perplexity_a: float
    perplexity_b: float
    perplexity_mixture: float

    def __str__(self) -> str:
        return (
            f"model a: {self.perplexity_a:.3f}   model b: {self.perplexity_b:.3f}   "
            f"mixture (lambda = {self.lam:.3f}): {self.perplexity_mixture:.3f}"
        )


def evaluate_mixture(logp_a_val, logp_b_val, logp_a_test, logp_b_test) -> MixtureReport:
    r"""Fit :math:`\lambda` on validation tokens, report test perplexities :math:`e^{-\bar\ell}`."""
    lam = fit_mixture(logp_a_val, logp_b_val)
    a, b = _logprob_pair(logp_a_test, logp_b_test)
    return MixtureReport(lam, _perplexity(a), _perplexity(b), _perplexity(mixture_logprobs(a, b, lam)))
