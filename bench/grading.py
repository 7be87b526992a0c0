"""Grading a class: ``seqlearn grade --jobs 2`` (sealed) against ``nbgrader autograde``.

A simulated class of N students (default 40) hands in an assignment (default 01_ngram): half
the solution notebook, half a partial one (every other answer left blank). Both graders grade
the same submissions in a scratch course; the script prints seconds per student for each, the
ratio, and what a class of 300 would take (scaled linearly from the measured run).

    python bench/grading.py [--students 40] [--assignment 01_ngram] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from seqlearn.course.nbgrader_tools import make_course, run_nbgrader

ROOT = Path(__file__).resolve().parents[1]
CLASS_SIZE = 300


def _partial(solution, blank):
    released = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in blank.cells}
    result = nbformat.from_dict(solution)
    meta = [c.metadata.get("nbgrader", {}) if c.cell_type == "code" else {} for c in result.cells]
    answers = [i for i, m in enumerate(meta) if m.get("solution")]
    for i in answers[::2]:
        result.cells[i] = released[result.cells[i].metadata["nbgrader"]["grade_id"]]
    return result


def _class(course: Path, assignment: str, students: int) -> None:
    (path,) = sorted((course / "solutions" / assignment).glob("*.ipynb"))
    solution = nbformat.read(path, as_version=4)
    blank = nbformat.read(course / "exercises" / assignment / path.name, as_version=4)
    kinds = [solution, _partial(solution, blank)]
    for k in range(students):
        folder = course / "submitted" / f"student{k:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(kinds[k % 2], folder / path.name)


def _timed(command: list[str], cwd: Path) -> float:
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--assignment", default="01_ngram")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seqlearn-bench-grading-") as tmp:
        course = make_course(ROOT, Path(tmp) / "course", [args.assignment])
        run_nbgrader(course, "generate_assignment", args.assignment, "--force")
        _class(course, args.assignment, args.students)
        seqlearn = str(Path(sys.executable).with_name("seqlearn"))
        sealed = _timed([seqlearn, "grade", args.assignment, "--jobs", str(args.jobs)], course)
        nbgrader = _timed([sys.executable, "-m", "nbgrader", "autograde", args.assignment, "--force"], course)
    n = args.students
    print(f"grading {n} submissions of {args.assignment} (half complete, half partial) on {os.cpu_count()} CPUs")
    print(f"  seqlearn grade --jobs {args.jobs}: {sealed:7.1f} s  ({sealed / n:.3f} s per student)")
    print(f"  nbgrader autograde:       {nbgrader:7.1f} s  ({nbgrader / n:.3f} s per student)")
    print(f"  ratio nbgrader / sealed:  {nbgrader / sealed:7.1f}x")
    scale = CLASS_SIZE / n
    print(
        f"  a class of {CLASS_SIZE} (scaled): sealed {sealed * scale / 60:.1f} min, "
        f"nbgrader {nbgrader * scale / 60:.1f} min"
    )


if __name__ == "__main__":
    main()
