"""Chapter 3: the Elman RNN, backpropagation through time, Jacobian products and clipping.

:mod:`~seqlearn.rnn.elman` has the network and its gradients in plain NumPy (full BPTT as
a double sum and as a backward recursion, truncated BPTT); :mod:`~seqlearn.rnn.jacobians`
the per-step and lagged Jacobians, their norms versus the lag, the singular-value
conditions for vanishing and exploding gradients and the initialisations the chapter
compares; :mod:`~seqlearn.rnn.clipping` gradient-norm clipping. None of them imports torch.
The torch models (Elman layer, RNN language model, task RNNs and their training) are in
:mod:`seqlearn.rnn.models`, imported explicitly: ``from seqlearn.rnn.models import RNNLM``.
"""

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
    orthogonal_matrix,
    product_norms_vs_lag,
    product_singular_values_vs_lag,
    random_recurrent_matrix,
    sigma_max,
    spectral_radius,
    step_jacobians,
    vanishing_guaranteed,
)

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
    # clipping
    "global_grad_norm",
    "clip_grad_norm",
]
