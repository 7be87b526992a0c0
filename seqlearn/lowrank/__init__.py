r"""Chapter 6: learning in low-rank RNNs, seen in overlap space (Ger & Barak, arXiv 2605.04115).

A rank-1 network's function depends on its four vectors only through their normalised dot
products, the overlaps :math:`\sigma_{ab} = a^\top b / N`; gradient descent moves them by a closed
ODE whose metric is made of the overlaps the loss cannot see. :mod:`~seqlearn.lowrank.overlaps`
has the overlap coordinates, their blocks, the metric and the invariants;
:mod:`~seqlearn.lowrank.linear` the linear network, its filter task, the exact 2-D latent model
and the learning protocols.
"""
