"""A student repository: the course without its solutions (``seqlearn release DEST``).

This repository holds the instructor's ``solutions/`` (every answer and the hidden tests) and,
in ``tests/``, independent correct answers to every exercise. Students get a copy made of the
parts they need: the chapters, the released exercises, the package and what installs it.
Self-learners who clone this repository find the solutions in ``solutions/`` on purpose.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["STUDENT_PATHS", "SolutionLeak", "holds_solutions", "write_student_repository"]

STUDENT_PATHS = (
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "pyproject.toml",
    "Makefile",
    "binder",
    "chapters",
    "exercises",
    "seqlearn",
)
"""What a student repository holds (paths of the course root; those missing are skipped)."""

_IGNORED = ("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
_SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS")


def holds_solutions(notebook) -> bool:
    """Whether the notebook file at ``notebook`` holds nbgrader solution or hidden-test code."""
    text = Path(notebook).read_text("utf-8")
    return any(marker in text for marker in _SOLUTION_MARKERS)


class SolutionLeak(ValueError):
    """A notebook meant for students holds solution or hidden-test code."""


def write_student_repository(root, dest) -> list[Path]:
    """Copy the student-facing parts of the course at ``root`` into the new directory ``dest``.

    Parameters
    ----------
    root : path
        The course root (this repository).
    dest : path
        Where to write; must not exist yet, or be an empty directory.

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    FileExistsError
        If ``dest`` exists and is not empty.
    SolutionLeak
        If a copied notebook holds ``### BEGIN SOLUTION`` or ``### BEGIN HIDDEN TESTS`` (``dest``
        is removed again).
    """
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if not (root / "exercises").is_dir() or not (root / "chapters").is_dir():
        raise FileNotFoundError(f"{root} is not the course root (no exercises/ and chapters/)")
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty: choose a new directory")
    if dest == root or root in dest.parents:
        raise ValueError(f"write the student repository outside the course ({dest} is inside {root})")
    dest.mkdir(parents=True, exist_ok=True)
    for name in STUDENT_PATHS:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns(*_IGNORED))
        elif source.is_file():
            shutil.copy2(source, dest / name)
    written = sorted(p for p in dest.rglob("*") if p.is_file())
    leaks = [p for p in written if p.suffix == ".ipynb" and holds_solutions(p)]
    if leaks:
        shutil.rmtree(dest)
        raise SolutionLeak(f"these notebooks hold solutions or hidden tests: {[str(p) for p in leaks]}")
    return written
