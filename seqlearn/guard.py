"""The reference guard: graded references refuse to run while a student's answer runs.

Functions that exercises are graded against are decorated with :func:`reference`. The
grader runs the student's function inside :func:`student_code`; a call to any reference
from there raises :class:`ReferenceCallError`, so an answer that merely delegates to the
reference fails its tests and is told why. The flag lives in a ``ContextVar``: no global
state, and the grader's own calls to the reference (outside the block) are unaffected.

This module imports nothing from seqlearn, so the model modules that define references
use it without loading the grader (:mod:`seqlearn.grading` re-exports its names).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

__all__ = ["ReferenceCallError", "REFUSAL", "reference", "student_code", "is_grading"]

REFUSAL = "references refuse to run during grading"
"""The phrase every :class:`ReferenceCallError` message contains (graders look for it)."""

_student_running: contextvars.ContextVar[bool] = contextvars.ContextVar("seqlearn_student_running", default=False)


class ReferenceCallError(RuntimeError):
    """Raised when a graded reference is called from a student's answer under grading."""


def is_grading() -> bool:
    """True while a student's function runs under :func:`student_code`."""
    return _student_running.get()


@contextlib.contextmanager
def student_code():
    """Context in which graded references refuse to run (the grader wraps student calls in it)."""
    token = _student_running.set(True)
    try:
        yield
    finally:
        _student_running.reset(token)


def reference(func):
    """Mark ``func`` as a graded reference: it raises :class:`ReferenceCallError` under grading."""

    @functools.wraps(func)
    def guarded(*args, **kwargs):
        if _student_running.get():
            raise ReferenceCallError(
                f"your answer called seqlearn's {func.__module__}.{func.__qualname__}, the reference it is "
                f"graded against; {REFUSAL}. Write the computation yourself."
            )
        return func(*args, **kwargs)

    del guarded.__wrapped__  # no shortcut around the guard
    guarded.__seqlearn_reference__ = True  # type: ignore[attr-defined]
    return guarded
