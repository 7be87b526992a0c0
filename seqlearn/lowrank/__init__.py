r"""Chapter 6: learning in low-rank RNNs, seen in overlap space (Ger & Barak, arXiv 2605.04115).

A rank-1 network's function depends on its four vectors only through their normalised dot
products, the overlaps :math:`\sigma_{ab} = a^\top b / N`; gradient descent moves them by a closed
ODE whose metric is made of the overlaps the loss cannot see. :mod:`~seqlearn.lowrank.overlaps`
has the overlap coordinates, their blocks, the metric and the invariants;
:mod:`~seqlearn.lowrank.linear` the linear network, its filter task, the exact 2-D latent model
and the learning protocols; :mod:`~seqlearn.lowrank.erf` the erf network, its Gaussian closure
(the effective 2-D model) and learning on vectors or overlaps; :mod:`~seqlearn.lowrank.tasks` the
flip-flop, decision-making and teacher trials; :mod:`~seqlearn.lowrank.memory` the twin experiment
(does learning leave a decodable memory in the invisible overlaps?). Names load on first use (importing the package
loads neither torch nor scipy); the function :func:`seqlearn.lowrank.overlaps.overlaps` is reached
through its module, whose name it shares.
"""

from .._lazy import lazy_exports

_LAZY = {
    "overlaps": [
        "OVERLAPS",
        "VISIBLE",
        "INVISIBLE",
        "index",
        "blocks",
        "from_blocks",
        "gram",
        "vectors_with_overlaps",
        "metric",
        "ode_step",
        "sequential_step",
        "UPDATES",
        "update_step",
        "invariants",
    ],
    "linear": [
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
        "Trajectory",
        "gd_overlaps",
        "gd_vectors",
        "adam_vectors",
        "protocol_gd",
        "protocol_label_noise",
        "protocol_adam",
    ],
    "erf": [
        "ALPHA",
        "phi",
        "gain",
        "full_output",
        "effective_output",
        "READS",
        "Training",
        "overlap_gradient",
        "train_full",
        "train_overlaps",
        "train_both",
        "qq_correlation",
        "recommended_overlaps",
        "recommended_init",
        "balanced_init",
        "teacher_overlaps",
    ],
    "tasks": ["flip_flop", "decision_making", "teacher", "masked_mse", "TEACHER_VISIBLE"],
    "memory": [
        "TIMES",
        "SPLITS",
        "MemoryProtocol",
        "MemoryExperiment",
        "twin_start",
        "logistic_fit",
        "decode",
        "decode_times",
        "memory_experiment",
        "paper_results",
        "load_results",
    ],
}

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
