"""Chapter 2: the neural probabilistic language model of Bengio et al. (2003).

:mod:`~seqlearn.nlm.basics` has the chapter's formulas in plain NumPy (the references its
exercises are graded against); :mod:`~seqlearn.nlm.model` the model in torch;
:mod:`~seqlearn.nlm.data` the (context, target) mini-batches built on the fly from an
encoded stream; :mod:`~seqlearn.nlm.train` training (SGD with the paper's schedule and
weight decay, or Adam); :mod:`~seqlearn.nlm.mixture` the NLM + n-gram mixture;
:mod:`~seqlearn.nlm.embeddings` nearest neighbours and a 2-D map of the learned
embeddings. The masked loss is :func:`seqlearn.losses.masked_cross_entropy`. Evaluation
(token log-probabilities, perplexity, the agreement scorer) is :mod:`seqlearn.lm`, the same
for every language model of the course.
"""

from .._lazy import lazy_exports, lazy_table
from .basics import best_interpolation_weight, context_windows, masked_cross_entropy, nlm_logits, perplexity_from_loss

# The torch-based parts load on first use, so that the NumPy references (and the grading
# code built on them) do not import torch.
_LAZY = lazy_table(__path__, ["data", "embeddings", "mixture", "model", "train"])

__all__ = [
    # textbook formulas (graded references)
    "context_windows",
    "nlm_logits",
    "masked_cross_entropy",
    "perplexity_from_loss",
    "best_interpolation_weight",
    # the model, its data and training, the mixture with an n-gram model, the embeddings
    *(name for names in _LAZY.values() for name in names),
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
