r"""The linear rank-1 network: its filter task, its exact 2-D latent model and how it learns.

Vectors :math:`\theta = (m, u, v, z)` with connectivity :math:`J = u v^\top / N` learn to turn an
impulse into a decaying exponential; the loss depends on the four visible overlaps only, and
gradient descent moves the overlaps by an exact map whose first-order part is the paper's ODE.
Each part is a module of its own:

- :mod:`~seqlearn.lowrank.linear_task`: the filter task, its loss and its solution set;
- :mod:`~seqlearn.lowrank.linear_network`: the network on vectors (output, BPTT gradient, torch),
  and functionally equivalent networks;
- :mod:`~seqlearn.lowrank.linear_latent`: the exact 2-D latent model on the overlaps, and the chain
  rule back to the vectors;
- :mod:`~seqlearn.lowrank.linear_steps`: one learning step in overlap space (exact map, plain
  descent on the visible overlaps);
- :mod:`~seqlearn.lowrank.linear_training`: training runs over phases (gradient descent on overlaps
  or vectors, Adam) and their record;
- :mod:`~seqlearn.lowrank.linear_protocols`: the paper's A-B-A experiments.

This module re-exports all of their names, so that ``from seqlearn.lowrank.linear import ...``
keeps working.
"""

# Re-exports: tests/test_lowrank_linear.py, tests/test_lowrank_reference.py and bench/lowrank.py
# import these names from seqlearn.lowrank.linear.
from .linear_latent import chain_rule, latent_gradient, latent_loss, latent_output, latent_output_torch
from .linear_network import (
    equivalent_overlaps,
    equivalent_vectors,
    network_gradient,
    network_output,
    network_output_torch,
    random_vectors,
)
from .linear_protocols import protocol_adam, protocol_gd, protocol_label_noise
from .linear_steps import exact_step, visible_step
from .linear_task import FilterTask, filter_loss, filter_task, solution_set
from .linear_training import OverlapTrajectory, Phase, adam_vectors, gd_overlaps, gd_vectors, task_phases

__all__ = [
    "FilterTask",
    "filter_task",
    "filter_loss",
    "solution_set",
    "random_vectors",
    "network_output",
    "network_gradient",
    "network_output_torch",
    "latent_output",
    "latent_loss",
    "latent_gradient",
    "latent_output_torch",
    "chain_rule",
    "exact_step",
    "visible_step",
    "equivalent_overlaps",
    "equivalent_vectors",
    "Phase",
    "task_phases",
    "OverlapTrajectory",
    "gd_overlaps",
    "gd_vectors",
    "adam_vectors",
    "protocol_gd",
    "protocol_label_noise",
    "protocol_adam",
]
