"""The ``seqlearn`` command.

::

    seqlearn info                      versions, device, data directory
    seqlearn run [CHAPTER ...]         execute chapters headless; time and peak memory each
    seqlearn book [--out DIR]          the website: executed chapters, exercises, bibliography (offline)
    seqlearn exercises [ASSIGNMENT ...] regenerate exercises/ from solutions/ (nbgrader)
    seqlearn check-grading [ASSIGNMENT ...]
                                       solutions -> full marks, blank -> 0, delegating -> 0
    seqlearn grade ASSIGNMENT [--jobs N] [--course DIR]
                                       sealed grading of the collected submissions into the gradebook
    seqlearn replay ASSIGNMENT STUDENT [CELL] [--course DIR]
                                       a graded test cell run again from its recorded hidden draws
    seqlearn release DEST              a student repository: the course without its solutions
    seqlearn ngram estimate|perplexity n-gram language models in ARPA format
"""

from __future__ import annotations

import argparse
import functools
import platform
import sys

__all__ = ["main", "build_parser"]


def _info(args) -> int:
    import numpy
    import torch

    import seqlearn
    from seqlearn.data.download import data_dir
    from seqlearn.device import default_device

    rows = {
        "seqlearn": seqlearn.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "torch": torch.__version__,
        "device": str(default_device()),
        "cuda": torch.version.cuda or "none",
        "data directory": str(data_dir()),
    }
    for key, value in rows.items():
        print(f"{key:>15}: {value}")
    return 0


def _env(args) -> int:
    import shlex

    from seqlearn.device import KERNEL_PATHS, KERNEL_THREADS, kernel_env, kernel_path

    path = kernel_path()
    if path == "native":
        print("# SEQLEARN_PIN_KERNELS=0: the CPU kernels take this machine's own code paths")
    env = kernel_env()
    for name in (*KERNEL_PATHS[path], *KERNEL_THREADS):
        print(f"export {name}={shlex.quote(env[name])}")
    return 0


COURSE_MODULES = (
    "nbformat",
    "nbclient",
    "nbconvert",
    "nbgrader",
    "ipykernel",
    "jupyter_client",
    "jupyter_server_mathjax",
)
"""What the ``course`` extra brings that ``run``, ``exercises`` and ``check-grading`` import."""


class MissingExtraError(RuntimeError):
    """A subcommand needs packages of the ``course`` extra that are not installed."""


def _needs_course_extra(command):
    """Turn a missing course package into an error that says how to install it."""

    @functools.wraps(command)
    def run(args) -> int:
        try:
            return command(args)
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] not in COURSE_MODULES:
                raise
            raise MissingExtraError(
                f"`seqlearn {args.command}` needs the course's notebook tools ({e.name} is missing): "
                "pip install 'seqlearn[course]' (or, in the repository, `make lab`)"
            ) from None

    return run


def _positive_seconds(text: str) -> float:
    """argparse type: a number of seconds > 0."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text}")
    return seconds


@_needs_course_extra
def _run(args) -> int:
    from seqlearn.course.notebooks import NotebookError, chapter_paths, course_root, execute_notebook

    root = course_root(args.root)
    over, broken = 0, 0
    for path in chapter_paths(root, args.chapters):
        try:
            report = execute_notebook(path, timeout=args.timeout, html_dir=args.html)
        except NotebookError as e:
            print(f"seqlearn run: error: {e}", file=sys.stderr, flush=True)
            broken += 1
            continue
        verdict = "within" if report.within_binder_budget() else "OVER"
        print(f"{report}  ({verdict} Binder's 3 min / 1.5 GB)", flush=True)
        for wrong in report.misquoted:
            print(f"seqlearn run: error: {report.name} misquotes {wrong}", file=sys.stderr, flush=True)
        over += not report.within_binder_budget()
        broken += bool(report.misquoted)
    return 1 if broken or (over and args.strict) else 0


@_needs_course_extra
def _book(args) -> int:
    import importlib.util

    from seqlearn.course.book import BOOK_MODULES, BookError, build_book
    from seqlearn.course.notebooks import NotebookError

    missing = [name for name in BOOK_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"`seqlearn book` needs the book toolchain ({', '.join(missing)} missing): pip install 'seqlearn[book]'"
        )

    def progress(report) -> None:
        print(report, flush=True)

    try:
        book = build_book(
            args.out,
            root=args.root,
            names=args.chapters,
            repository=args.repository,
            timeout=args.timeout,
            on_run=progress,
        )
    except (BookError, NotebookError) as err:
        print(f"seqlearn book: error: {err}", file=sys.stderr)
        return 1
    for name, wrong in book.misquoted.items():
        print(f"seqlearn book: error: {name} misquotes {len(wrong)} number(s): {wrong}", file=sys.stderr)
    print(f"wrote {book.index}")
    return 1 if book.misquoted else 0


@_needs_course_extra
def _exercises(args) -> int:
    from seqlearn.course.nbgrader_tools import generate_exercises
    from seqlearn.course.notebooks import course_root

    for path in generate_exercises(course_root(args.root), args.assignments or None):
        print(f"wrote {path}")
    return 0


@_needs_course_extra
def _check_grading(args) -> int:
    from seqlearn.course.nbgrader_tools import check_grading
    from seqlearn.course.notebooks import course_root

    root = course_root(args.root)
    ok = True
    for assignment in args.assignments or sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir()):
        report = check_grading(root, assignment)
        print(report)
        ok &= report.ok
    return 0 if ok else 1


def _positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


@_needs_course_extra
def _grade(args) -> int:
    import os
    from pathlib import Path

    from seqlearn.course.sealed import LEVELS, Limits, detect_level, grade_assignment

    course = Path(args.course or os.getcwd())
    limits = Limits(timeout=args.timeout) if args.timeout else None

    def progress(result) -> None:
        problems = f"  ({'; '.join(result.problems)})" if result.problems else ""
        failed = [p.grade_id for nb in result.parts.values() for p in nb.values() if p.failed]
        lost = f"  lost: {', '.join(failed)}" if failed else ""
        line = f"  {result.student:<20} {result.score:g}/{result.max_score:g}  {result.seconds:.1f} s{lost}{problems}"
        print(line, flush=True)

    try:
        level = detect_level(args.level)
    except RuntimeError as err:  # the level does not work here: say why, grade nothing
        print(f"seqlearn: error: {err}", file=sys.stderr)
        return 2
    print(f"isolation level: {level}: {LEVELS[level]}", flush=True)
    options = {"jobs": args.jobs, "level": level, "limits": limits, "progress": progress}
    _, results = grade_assignment(course, args.assignment, **options)
    print(f"graded {len(results)} submission(s) of {args.assignment}; scores are in the gradebook", flush=True)
    return 0


@_needs_course_extra
def _replay(args) -> int:
    import os
    from pathlib import Path

    from seqlearn.course.sealed.replay import replay_submission

    course = Path(args.course or os.getcwd())
    try:
        notes, parts = replay_submission(course, args.assignment, args.student, args.cell, level=args.level)
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"seqlearn: error: {err}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}")
    for notebook, cells in parts.items():
        for grade_id, part in cells.items():
            print(f"{notebook} {grade_id}: {part.score:g}/{part.points:g}")
            print("    " + part.output.strip().replace("\n", "\n    "))
    return 0


def _release(args) -> int:
    from seqlearn.course.notebooks import course_root
    from seqlearn.course.release import write_student_repository

    written = write_student_repository(course_root(args.root), args.dest)
    print(f"wrote a student repository of {len(written)} files to {args.dest} (no solutions, no tests)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``seqlearn`` command."""
    from seqlearn.ngram.cli import add_subparser as add_ngram

    parser = argparse.ArgumentParser(prog="seqlearn", description="The seqlearn course and package.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, device and data directory").set_defaults(func=_info)
    pins = 'print the CPU kernel pins and threads as shell exports, for eval "$(seqlearn env)" before starting a kernel'
    sub.add_parser("env", help=pins).set_defaults(func=_env)

    run = sub.add_parser("run", help="execute chapters headless; print time and peak memory")
    run.add_argument("chapters", nargs="*", help="slugs or numbers (default: all)")
    run.add_argument("--html", metavar="DIR", help="also write the executed chapters as HTML to DIR")
    run.add_argument("--timeout", type=_positive_seconds, default=600, help="seconds per cell (default 600)")
    run.add_argument("--strict", action="store_true", help="exit 1 if a chapter is over Binder's budget too")
    run.set_defaults(func=_run)

    from seqlearn.course.book import DEFAULT_REPOSITORY

    bk = sub.add_parser("book", help="build the website: executed chapters, exercises, bibliography (offline)")
    bk.add_argument("chapters", nargs="*", help="slugs or numbers (default: all)")
    bk.add_argument("--out", metavar="DIR", default="build/book", help="build directory (default build/book)")
    bk.add_argument("--repository", default=DEFAULT_REPOSITORY, help="GitHub URL that Binder launches from")
    bk.add_argument("--timeout", type=_positive_seconds, default=600, help="seconds per cell (default 600)")
    bk.set_defaults(func=_book)

    ex = sub.add_parser("exercises", help="regenerate exercises/ from solutions/")
    ex.add_argument("assignments", nargs="*")
    ex.set_defaults(func=_exercises)

    cg = sub.add_parser("check-grading", help="grading round trip for instructors changing an exercise")
    cg.add_argument("assignments", nargs="*")
    cg.set_defaults(func=_check_grading)

    gr = sub.add_parser("grade", help="sealed grading of collected submissions (instead of nbgrader autograde)")
    gr.add_argument("assignment", help="e.g. 01_ngram")
    gr.add_argument("--jobs", type=_positive_int, help="submissions graded at once (default: the CPUs it may use)")
    gr.add_argument("--course", metavar="DIR", help="the nbgrader course directory (default: the current one)")
    gr.add_argument("--timeout", type=_positive_seconds, help="seconds per cell (default: Execute.timeout)")
    gr.add_argument("--level", choices=["bwrap", "user", "rlimits"], help="isolation level (default: the strongest)")
    gr.set_defaults(func=_grade)

    rp = sub.add_parser("replay", help="run a graded test cell again from its recorded hidden draws, failures shown")
    rp.add_argument("assignment", help="e.g. 01_ngram")
    rp.add_argument("student", help="the student id (a folder of autograded/)")
    rp.add_argument("cell", nargs="?", help="the test cell's grade id (default: every one that lost its points)")
    rp.add_argument("--course", metavar="DIR", help="the nbgrader course directory (default: the current one)")
    rp.add_argument("--level", choices=["bwrap", "user", "rlimits"], help="isolation level (default: the strongest)")
    rp.set_defaults(func=_replay)

    rel = sub.add_parser("release", help="write a student repository: chapters, exercises, package; no solutions")
    rel.add_argument("dest", help="a new (or empty) directory")
    rel.set_defaults(func=_release)

    for p in (run, bk, ex, cg, rel):
        p.add_argument("--root", help="course directory (default: found from the current directory)")
    add_ngram(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``seqlearn`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, MissingExtraError) as err:
        print(f"seqlearn: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
