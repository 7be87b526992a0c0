r"""Chapter 4: gated recurrent networks, the LSTM and the GRU, written for reading.

:mod:`~seqlearn.gated.cells` has the from-scratch :class:`LSTMCell` and :class:`GRUCell`, with
exactly the conventions of ``torch.nn`` (gate orders i, f, g, o and r, z, n; two biases; the
GRU's reset gate applied to :math:`W_{hn} h + b_{hn}`), their gate values on request and the
forget-bias initialisation (Jozefowicz et al. 2015); :mod:`~seqlearn.gated.layers` the
multi-layer :class:`LSTM` and :class:`GRU` over them, which run the fused torch kernel (cuDNN
on a GPU) when the cells are standard; :mod:`~seqlearn.gated.models` the language model
:class:`GatedLM` and the task model :class:`SequenceGated` (Chapter 3's training and
experiments run them); :mod:`~seqlearn.gated.diagnostics` per-neuron gate
statistics, the time scales :math:`\tau = -1/\log f`, the cell-state Jacobians
:math:`\partial c_T / \partial c_{T-l}` (the constant error carousel) and the output's
gradient with respect to each input step of any trained model. Everything here is
torch and loads on first use: importing ``seqlearn.gated`` does not import torch.
"""

from .._lazy import lazy_exports, lazy_table

# The cells' argument checks serve the layers and Chapter 5's models; the reservoir references are
# graded entry points of seqlearn.reservoir, whose names they share.
_WITHHELD = {
    "cells": ["check_input", "check_state"],
    "reference": ["reservoir_update", "ridge_readout", "memory_capacity"],
}
_LAZY = lazy_table(__path__, ["cells", "layers", "models", "diagnostics", "reference"], _WITHHELD)

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
