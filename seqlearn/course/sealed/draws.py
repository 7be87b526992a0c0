"""Sealed grading, the draws: the entropy each hidden check of a submission draws its cases from.

A hidden check's cases are :func:`~seqlearn.grading.checks.hidden_rngs` of an entropy. Under
sealed grading that entropy is

.. math::
    e = \\mathrm{HMAC\\text{-}SHA256}_K(\\text{student}, \\text{notebook}, \\text{test cell},
    \\text{call}, \\text{exercise}, H(\\text{program}))\\ \\text{truncated to 128 bits},

where :math:`K` is the course's secret (:func:`course_secret`) and :math:`H(\\text{program})` the
SHA-256 of the program built from the submission (:func:`program_digest`). So

* a regrade of the same submission (same program, same secret) draws the same cases and gets
  the same marks;
* without :math:`K` no one can compute, or choose, the draw of a program: changing the answer
  changes :math:`e` to an unpredictable value;
* the grader records :math:`e` in the autograded notebook (``metadata.seqlearn`` of the test
  cell, which feedback pages do not show), and ``seqlearn replay`` draws the same cases from it.

The secret is a file of the course directory, :data:`SECRET_FILE`, written at the first sealed
grading (mode 0600, under ``autograded/``, which ``git`` ignores and the student repository
omits). The worker never sees it: the ``bwrap`` level shows no course directory, the ``user``
level covers it and runs as another uid; at the ``rlimits`` level the worker runs as the grading
user and could read it (as it could read ``solutions/``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

SECRET_FILE = Path("autograded") / ".hidden-draws-secret"
"""Where a course directory keeps the key of its hidden draws (relative to the course directory)."""

_SECRET_BYTES = 32


def course_secret(course) -> bytes:
    """The course's key of hidden draws, read from :data:`SECRET_FILE`, written there (0600) if absent.

    ``ValueError`` if the file exists but does not hold a key (64 hexadecimal digits).
    """
    path = Path(course) / SECRET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        text = path.read_text(encoding="ascii", errors="replace").strip()
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) != _SECRET_BYTES:
            raise ValueError(f"{path} does not hold a key of hidden draws ({2 * _SECRET_BYTES} hex digits)") from None
        return key
    key = secrets.token_bytes(_SECRET_BYTES)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(key.hex() + "\n")
    return key


def program_digest(steps: list[tuple[str, str, Any]]) -> str:
    """SHA-256 (hex) of a student's program, the steps of :func:`~seqlearn.course.sealed.plan.build_program`."""
    return hashlib.sha256(json.dumps(steps, sort_keys=True).encode("utf-8")).hexdigest()


def hidden_entropy(
    secret: bytes, student: str, notebook: str, grade_id: str, call: int, exercise: str, program: str
) -> int:
    """The 128-bit entropy of one hidden check: the first 16 bytes of HMAC-SHA256 under ``secret``.

    ``call`` is the check's position in its test cell, ``program`` the :func:`program_digest`.
    """
    message = json.dumps([student, notebook, grade_id, call, exercise, program]).encode("utf-8")
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:16], "big")
