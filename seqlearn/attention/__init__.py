r"""Chapter 7: memory by lookup, a tiny causal self-attention language model beside the recurrent ones.

:mod:`~seqlearn.attention.model` has :class:`CausalSelfAttention` (one head of scaled dot-product
attention under the causal mask, :math:`a_{ts} = \mathrm{softmax}_{s \le t}(q_t^\top k_s / \sqrt{d_k})`)
and the language model :class:`AttentionLM` (token and learned position embeddings, attention
layers with residual connections, a softmax output), which Chapter 3's training and evaluation
run like the Elman and gated networks; :mod:`~seqlearn.attention.experiment` the weights of a
trained model on one sentence (:func:`attention_map`) and the weight its heads put on the subject
(:func:`subject_weight`), and the race the chapter ships (:data:`LONG_RACE`: Elman, GRU, LSTM and
attention at 3,000 updates; :func:`run_race`, :func:`write_attention_models`,
:func:`read_attention_models`, ``python -m seqlearn.attention.experiment``). The race itself is
:func:`seqlearn.rnn.agreement_race`. The long-distance agreement text is :class:`seqlearn.data.agreement.LongAgreement`.
Everything here is torch and loads on first use: importing ``seqlearn.attention`` does not import torch.
"""

from .._lazy import lazy_exports, lazy_table

_LAZY = lazy_table(__path__, ["model", "experiment"])

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
