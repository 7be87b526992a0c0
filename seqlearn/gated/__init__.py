r"""Chapter 4: gated recurrent networks, the LSTM and the GRU, written for reading.

:mod:`~seqlearn.gated.cells` has the from-scratch :class:`LSTMCell` and :class:`GRUCell`, with
exactly the conventions of ``torch.nn`` (gate orders i, f, g, o and r, z, n; two biases; the
GRU's reset gate applied to :math:`W_{hn} h + b_{hn}`), their gate values on request and the
forget-bias initialisation (Jozefowicz et al. 2015); :mod:`~seqlearn.gated.layers` the
multi-layer :class:`LSTM` and :class:`GRU` over them, which run the fused torch kernel (cuDNN
on a GPU) when the cells are standard. Everything here is torch and loads on first use:
importing ``seqlearn.gated`` does not import torch.
"""

from .._lazy import lazy_exports

_LAZY = {
    "cells": ["LSTMGates", "GRUGates", "LSTMCell", "GRUCell", "init_forget_bias"],
    "layers": ["LSTM", "GRU"],
}

__all__ = [*_LAZY["cells"], *_LAZY["layers"]]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
