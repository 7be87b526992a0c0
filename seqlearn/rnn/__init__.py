"""Chapter 3: the Elman RNN, backpropagation through time, Jacobian products and clipping.

:mod:`~seqlearn.rnn.elman` has the network and its gradients in plain NumPy (full BPTT as
a double sum and as a backward recursion, truncated BPTT); :mod:`~seqlearn.rnn.jacobians`
the per-step and lagged Jacobians, their norms versus the lag, the singular-value
conditions for vanishing and exploding gradients and the initialisations the chapter
compares; :mod:`~seqlearn.rnn.clipping` gradient-norm clipping. None of them imports torch.

The torch side loads on first use (``seqlearn.rnn.RNNLM`` imports torch then):
:mod:`~seqlearn.rnn.model` the Elman layer, the recurrent language models and the task
model; :mod:`~seqlearn.rnn.data` their mini-batches (sentences, truncated-BPTT chunks, task
tensors); :mod:`~seqlearn.rnn.train` their losses and training; :mod:`~seqlearn.rnn.experiments`
the chapter's experiments over seeds and lengths (the adding and copy cliffs, truncated BPTT and
agreement); :mod:`~seqlearn.rnn.race` several language models trained at one budget and scored on
long-distance agreement. The language models are evaluated by :mod:`seqlearn.lm`, like every
language model of the course. The torch
models accept the NumPy reference's nonlinearities and ``"relu"``
(:data:`~seqlearn.rnn.model.TORCH_NONLINEARITIES`).
"""

from .._lazy import lazy_exports, lazy_table
from .clipping import clip_grad_norm, global_grad_norm
from .elman import (
    LOSSES,
    NONLINEARITIES,
    activation,
    activation_derivative,
    bptt_gradients,
    bptt_gradients_unrolled,
    elman_forward,
    elman_loss,
    elman_preactivations,
    init_elman_params,
    output_error,
    truncated_bptt_gradients,
)
from .jacobians import (
    GAMMA,
    exploding_possible,
    gradient_norm_vs_lag,
    gradient_regime,
    identity_matrix,
    jacobian_product,
    jacobian_products_vs_lag,
    lag_gradient_norms,
    orthogonal_matrix,
    product_norms_vs_lag,
    product_singular_values_vs_lag,
    random_recurrent_matrix,
    sigma_max,
    spectral_radius,
    step_jacobians,
    vanishing_guaranteed,
)

# The torch side loads on first use: importing seqlearn.rnn does not import torch.
# The task losses are reached through TASK_LOSSES, by the task's name.
_WITHHELD = {"train": ["squared_error_loss", "cross_entropy_loss"]}
_LAZY = lazy_table(__path__, ["model", "data", "train", "experiments", "race"], _WITHHELD)

__all__ = [
    # the network and its gradients
    "NONLINEARITIES",
    "LOSSES",
    "activation",
    "activation_derivative",
    "init_elman_params",
    "elman_preactivations",
    "elman_forward",
    "elman_loss",
    "output_error",
    "bptt_gradients",
    "bptt_gradients_unrolled",
    "truncated_bptt_gradients",
    # Jacobians and the gradient regime
    "GAMMA",
    "step_jacobians",
    "jacobian_product",
    "jacobian_products_vs_lag",
    "product_norms_vs_lag",
    "product_singular_values_vs_lag",
    "spectral_radius",
    "sigma_max",
    "vanishing_guaranteed",
    "exploding_possible",
    "gradient_regime",
    "random_recurrent_matrix",
    "orthogonal_matrix",
    "identity_matrix",
    "gradient_norm_vs_lag",
    "lag_gradient_norms",
    # clipping
    "global_grad_norm",
    "clip_grad_norm",
    # torch models, their batches and their training (loaded on first use)
    *_LAZY["model"],
    *_LAZY["data"],
    *_LAZY["train"],
    *_LAZY["experiments"],
    *_LAZY["race"],
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
