r"""The teacher of Chapter 6's task C: a fixed effective erf network whose output the students learn.

Its seven visible overlaps :data:`TEACHER_VISIBLE` are the paper's; of its invisible ones, which no
output depends on, :func:`teacher_overlaps` takes :math:`\sigma_{zv} = 0` and unit norms
:math:`\sigma_{vv} = \sigma_{zz} = 1`. The task's trials are :func:`seqlearn.lowrank.tasks.teacher`.
NumPy only.
"""

from __future__ import annotations

import numpy as np

from .overlaps import OVERLAPS

__all__ = ["TEACHER_VISIBLE", "teacher_overlaps"]

TEACHER_VISIBLE = {"zm": 0.5, "zu": 2.3, "vm": 2.0, "vu": 1.5, "mu": 1.6, "mm": 1.8, "uu": 2.2}
"""The teacher's seven visible overlaps (the paper's task C); its invisible ones do not matter."""

_TEACHER_INVISIBLE = {"zv": 0.0, "vv": 1.0, "zz": 1.0}


def teacher_overlaps() -> np.ndarray:
    """The teacher's overlaps, shape (10,) in ``OVERLAPS`` order: :data:`TEACHER_VISIBLE`, zv = 0, vv = zz = 1."""
    sigma = TEACHER_VISIBLE | _TEACHER_INVISIBLE
    return np.array([sigma[name] for name in OVERLAPS])
