r"""The paper's A-B-A experiments on the linear rank-1 network.

:func:`protocol_gd` (gradient descent in overlap space), :func:`protocol_label_noise` (task A, then
task A with label noise at twice the rate) and :func:`protocol_adam` (Adam on the vectors), each a
:class:`~seqlearn.lowrank.linear_training.OverlapTrajectory` whose ``ends`` mark the phases.
"""

from __future__ import annotations

from collections.abc import Sequence

from .linear_task import filter_task
from .linear_training import OverlapTrajectory, Phase, adam_vectors, gd_overlaps, task_phases

__all__ = ["protocol_gd", "protocol_label_noise", "protocol_adam"]


def protocol_gd(
    sigma0,
    *,
    c_stars: Sequence[float] = (0.2, 0.4, 0.2),
    epochs: Sequence[int] = (3000, 2000, 2000),
    eta: float = 5e-3,
    method: str = "map",
    dt: float = 0.05,
    T: int = 400,
    progress: bool = False,
) -> OverlapTrajectory:
    """A-B-A(-B-A...) by gradient descent in overlap space (:func:`gd_overlaps`); ``ends`` marks the phases."""
    return gd_overlaps(sigma0, task_phases(c_stars, epochs, dt=dt, T=T), eta=eta, method=method, progress=progress)


def protocol_label_noise(
    sigma0,
    *,
    c_star: float = 0.2,
    epochs: tuple[int, int] = (3000, 4000),
    noise: float = 0.1,
    eta: float = 5e-3,
    dt: float = 0.05,
    T: int = 400,
    rng=None,
    progress: bool = False,
) -> OverlapTrajectory:
    r"""Task A for ``epochs[0]``, then ``epochs[1]`` with label noise ``noise`` at learning rate :math:`2N\eta`.

    Exact map (:func:`exact_step`) with the noisy target's gradient; ``loss`` is the clean loss.
    """
    task = filter_task(c_star, dt=dt, T=T)
    phases = [Phase(task, epochs[0]), Phase(task, epochs[1], noise=noise, lr_scale=2.0)]
    return gd_overlaps(sigma0, phases, eta=eta, method="map", rng=rng, progress=progress)


def protocol_adam(
    theta0,
    *,
    c_stars: Sequence[float] = (0.2, 0.4, 0.2, 0.4, 0.2),
    epochs: Sequence[int] = (2000, 1000, 1000, 1000, 1000),
    lr: float = 1e-3,
    dt: float = 0.1,
    T: int = 200,
    gradient: str = "overlaps",
    device=None,
    progress: bool = False,
) -> OverlapTrajectory:
    """A-B-A-B-A by Adam on the vectors ``theta0`` (..., 4, N) (:func:`adam_vectors`); ``ends`` marks the phases."""
    phases = task_phases(c_stars, epochs, dt=dt, T=T)
    return adam_vectors(theta0, phases, lr=lr, gradient=gradient, device=device, progress=progress)
