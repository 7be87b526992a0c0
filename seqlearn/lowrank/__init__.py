r"""Chapter 6: learning in low-rank RNNs, seen in overlap space (Ger & Barak, arXiv 2605.04115).

A rank-1 network's function depends on its four vectors only through their normalised dot
products, the overlaps :math:`\sigma_{ab} = a^\top b / N`; gradient descent moves them by a closed
ODE whose metric is made of the overlaps the loss cannot see.

- :mod:`~seqlearn.lowrank.overlaps`: the overlap coordinates, their blocks, the metric and the
  invariants;
- the linear network, mapped by :mod:`~seqlearn.lowrank.linear` (which re-exports their names): its
  filter task :mod:`~seqlearn.lowrank.linear_task`, the network :mod:`~seqlearn.lowrank.linear_network`,
  the exact 2-D latent model :mod:`~seqlearn.lowrank.linear_latent`, the learning maps
  :mod:`~seqlearn.lowrank.linear_steps`, the training runs :mod:`~seqlearn.lowrank.linear_training` and
  the A-B-A protocols :mod:`~seqlearn.lowrank.linear_protocols`;
- :mod:`~seqlearn.lowrank.erf`: the erf network, its Gaussian closure (the effective 2-D model) and
  learning on vectors or overlaps;
- :mod:`~seqlearn.lowrank.tasks`: the flip-flop, decision-making and teacher trials and their masked
  loss (:func:`seqlearn.losses.masked_mse`); :mod:`~seqlearn.lowrank.teacher_network`: the teacher of
  task C;
- :mod:`~seqlearn.lowrank.memory`: the twin experiment (does learning leave a decodable memory in the
  invisible overlaps?); :mod:`~seqlearn.lowrank.memory_results`: its shipped results and their summaries
  over seeds.

Names load on first use (importing the package loads neither torch nor scipy); the function
:func:`seqlearn.lowrank.overlaps.overlaps` is reached through its module, whose name it shares.
"""

from .._lazy import lazy_exports, lazy_table

# The function overlaps.overlaps would hide its module; the shipped file's writers serve the
# module's command.
_WITHHELD = {"overlaps": ["overlaps"], "memory_results": ["compact", "save_results", "main"]}
_LINEAR = ["linear_task", "linear_network", "linear_latent", "linear_steps", "linear_training", "linear_protocols"]
_LAZY = lazy_table(
    __path__, ["overlaps", *_LINEAR, "erf", "tasks", "teacher_network", "memory", "memory_results"], _WITHHELD
)

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
