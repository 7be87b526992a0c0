"""Sealed grading: a class graded in parallel, where student code cannot reach the grader.

``seqlearn grade NN_slug`` (after ``nbgrader collect``, instead of ``nbgrader autograde``)
grades every ``submitted/<student>/NN_slug/<notebook>.ipynb`` of an nbgrader course:

1. **The program.** From each submission it builds the student's program: the release
   notebook's code cells that are neither answers nor tests (taken from the release, so a
   student cannot change them), the student's answer cells (nbgrader ``solution`` cells,
   matched by ``grade_id``) and any code cells the student added, in notebook order. Test
   cells are never part of it: each one becomes a *capture* of the functions it tests at its
   place in the notebook, and is graded there, before the cells below it run (as in
   nbgrader's kernel). Invalid JSON or a notebook that cannot be read scores 0, with the
   reason recorded; nothing else is affected.
2. **The worker.** The program runs in a separate process (:mod:`seqlearn.grading.worker`,
   run as a script) in a fresh scratch directory, with a clean environment, its own session
   and process group, resource limits, a wall-clock timeout per cell and per test, its output
   sent to ``/dev/null``, and a ``sys.path`` holding only the standard library, the installed
   libraries and :data:`WORKER_MODULES` of seqlearn. How much more it is shut off from depends
   on the isolation level, detected by :func:`detect_level` (see :data:`LEVELS`).
3. **The checks.** The grading process never runs student code. For each test cell it runs the
   same :class:`~seqlearn.grading.checks.FunctionCheck` as the notebook's test cell, visible and
   hidden, on a proxy function that sends each case's arguments to the worker and decodes
   the answer (a tagged JSON codec, :func:`seqlearn.grading.worker.decode`: no pickle). The
   references run here, in the grader, and the comparison and hints are the checks' own. An
   exception raised by student code comes back as its type (builtin types only; others are
   ``Exception``); its message is never shown.
4. **The gradebook.** Scores go into nbgrader's gradebook through :class:`nbgrader.api.Gradebook`:
   autograded test cells get their ``auto_score`` (full points if every check of the cell
   passed, else 0, as nbgrader scores a test cell); written answers get nbgrader's "no
   response" zero when unchanged, and manual scores are never touched. An autograded notebook
   is written to ``autograded/<student>/NN_slug/``: the submission with the source notebook's
   test cells, whose outputs are the grader's messages (what failed and the hint, or why the
   cell could not be graded). ``nbgrader generate_feedback`` then works as after autograde,
   and its ``HideHiddenTests`` keeps the hidden tests out of the feedback.

Submissions are graded in parallel (``jobs`` grading processes, one worker per submission,
restarted after a crash or timeout with the offending cell skipped, so a crash costs only the
part it happened in).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import errno
import functools
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from . import ASSIGNMENTS
from .checks import CheckFailure, FunctionCheck
from .worker import CodecError, decode, encode, input_arrays

__all__ = [
    "LEVELS",
    "WORKER_MODULES",
    "Limits",
    "PartResult",
    "SubmissionResult",
    "detect_level",
    "free_uid_block",
    "strongest_level",
    "grade_assignment",
    "grade_submission",
    "holds_source_code",
    "load_assignment",
    "read_submitted",
]

WORKER_MODULES = ("seqlearn", "seqlearn._lazy", "seqlearn.validation", "seqlearn.device")
"""The seqlearn modules an answer may import under sealed grading (no reference, no grader)."""

LEVELS = {
    "bwrap": (
        "bubblewrap sandbox: new PID, network, IPC and UTS namespaces and a private filesystem "
        "view (only the system libraries, Python, its installed packages, the allowed seqlearn "
        "modules and a scratch directory exist; no course directory, solutions, gradebook or "
        "other submissions; a read-only /dev), an unprivileged uid of its own, no network, and everything of the "
        "rlimits level"
    ),
    "user": (
        "an unprivileged uid of its own (process limit binds, cannot write the gradebook or signal "
        "the grader, every process it left is killed), a mount namespace where an installed seqlearn holds only "
        "the allowed modules and the course directory is empty, and everything of the rlimits level; other files "
        "readable by everyone stay readable"
    ),
    "rlimits": (
        "a separate process with its own session and process group (killed at the end), a clean "
        "environment, a scratch directory as working directory, a sys.path without the references, "
        "rlimits on CPU time, memory, file size, open files and processes and a wall-clock timeout; "
        "it runs as the grading user, so it could read or write what that user can"
    ),
}
"""Isolation levels, strongest first, and what each protects against."""

SLOT_UID_BASE = 1_990_000
"""As root, worker slot ``k`` of a grading run runs as uid/gid ``SLOT_UID_BASE + 256 * block + k``, where
``block`` is the first from ``pid % 4096`` (``pid``: the grading process) whose uids have no account and
no process (:func:`free_uid_block`): its processes can be limited, and killed, as a whole, without
touching another account's, and two grading runs on one machine do not share uids."""

_WORKER_SOURCE = Path(__file__).with_name("worker.py")
_SEQLEARN_DIR = Path(__file__).resolve().parents[1]
_SANDBOX_LIB = "/sealed"
_SANDBOX_SCRATCH = "/scratch"
_MAX_ANSWER = 16 * 2**20  # one answer line of the worker: its JSON parses into a few times that
_MAX_NOTEBOOK = 32 * 2**20
_SCRATCH_BYTES = 256 * 2**20
_CHECK_PREFIX = "check_"


@dataclass(frozen=True)
class Limits:
    """Resource limits of a worker.

    ``timeout`` is the wall-clock limit of one program cell and of one test cell (all its
    visible and hidden cases), as nbgrader's per-cell timeout.
    """

    timeout: float = 60.0
    cpu_seconds: int = 600
    memory_bytes: int = 4 * 2**30
    file_bytes: int = 64 * 2**20
    open_files: int = 256
    processes: int = 64
    notebook_seconds: float = 900.0  # wall clock of a whole notebook: its cells, tests and restarts


# ----------------------------------------------------------------------------- the assignment


@dataclass(frozen=True)
class TestCell:
    """An autograded test cell: its grade id, points and the checks it calls, in order."""

    grade_id: str
    points: float
    calls: tuple[tuple[str, str, bool], ...]  # (exercise name, the student's function name, hidden)
    source: str


@dataclass(frozen=True)
class NotebookPlan:
    """What grading one notebook needs: the release (locked cells) and source (tests) versions."""

    name: str
    release: nbformat.NotebookNode
    tests: tuple[TestCell, ...]

    @property
    def test_ids(self) -> set[str]:
        return {t.grade_id for t in self.tests}


def _nbgrader(cell) -> dict:
    """A cell's nbgrader metadata, or ``{}`` if it has none or it is not a mapping (corrupted)."""
    metadata = cell.get("metadata") if isinstance(cell, Mapping) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, Mapping) else None
    return dict(meta) if isinstance(meta, Mapping) else {}


def _test_calls(source: str, checks: Mapping[str, FunctionCheck], grade_id: str) -> tuple[tuple[str, str, bool], ...]:
    """The ``check_<name>(<function>[, hidden=True])`` calls of a test cell; anything else is refused."""
    calls = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        call = node.value if isinstance(node, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id.startswith(_CHECK_PREFIX)
            and call.func.id[len(_CHECK_PREFIX) :] in checks
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Name)
            and all(k.arg == "hidden" and isinstance(k.value, ast.Constant) for k in call.keywords)
        ):
            raise ValueError(
                f"test cell {grade_id!r} has code the sealed grader cannot run: {ast.unparse(node)!r} "
                "(test cells may only import and call check_<name>(<name>[, hidden=True]))"
            )
        hidden = any(bool(k.value.value) for k in call.keywords)  # type: ignore[attr-defined]
        calls.append((call.func.id[len(_CHECK_PREFIX) :], call.args[0].id, hidden))
    return tuple(calls)


def load_assignment(course, assignment: str) -> list[NotebookPlan]:
    """The notebooks of ``assignment`` in ``course`` with their test cells (from the source notebooks)."""
    from .nbgrader_tools import course_directories

    course = Path(course)
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"no graded exercises for assignment {assignment!r}; known: {sorted(ASSIGNMENTS)}")
    checks = ASSIGNMENTS[assignment].CHECKS
    source_dir, release_dir = course_directories(course)
    plans = []
    for path in sorted((course / source_dir / assignment).glob("*.ipynb")):
        source = nbformat.read(path, as_version=4)
        release = nbformat.read(course / release_dir / assignment / path.name, as_version=4)
        tests = tuple(
            TestCell(
                meta["grade_id"], float(meta["points"]), _test_calls(cell.source, checks, meta["grade_id"]), cell.source
            )
            for cell in source.cells
            if cell.cell_type == "code" and (meta := _nbgrader(cell)).get("grade") and not meta.get("solution")
            for source_ in [cell.source]
        )
        plans.append(NotebookPlan(path.name, release, tests))
    if not plans:
        raise ValueError(f"assignment {assignment!r} has no notebooks in {course / source_dir / assignment}")
    return plans


SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
"""nbgrader's delimiters of solution and hidden-test code: a release, hence a submission, holds none."""


def holds_source_code(student: Mapping) -> bool:
    """Whether a submitted notebook holds solution or hidden-test code: nbgrader's delimiters in any cell.

    A release has none (nbgrader removed them with the code between them), so neither has a
    notebook a student saved: one that holds them is a copy of the source notebook in ``solutions/``.
    """
    cells = student.get("cells") if isinstance(student, Mapping) else None
    sources = [_code_text(c.get("source", "")) for c in cells or () if isinstance(c, Mapping)]
    return any(marker in text for text in sources for marker in SOLUTION_MARKERS)


# ----------------------------------------------------------------------------- the program


def _code_text(source) -> str:
    """A cell's source as one string (a list keeps only its strings; anything else is empty)."""
    if isinstance(source, list):
        return "".join(line for line in source if isinstance(line, str))
    return source if isinstance(source, str) else ""


def _code(source) -> str:
    text = _code_text(source)
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(text)  # %magics and !shell become (failing) calls
    except Exception:
        return text


def build_program(plan: NotebookPlan, student: Mapping, notes: list[str] | None = None) -> list[tuple[str, str, Any]]:
    """The steps of a student's program: ``("exec", label, source)`` and ``("capture", test id, names)``.

    Locked code cells come from the release, answers from the student (by grade id), cells the
    student added (code cells with no nbgrader id of the release) follow the cell they were
    added after. An answer cell split in two or copied (both keep its grade id) is all its cells
    in order, and one whose type changed (a code answer made Markdown) is of its release type, as
    nbgrader reverts it; each such repair is said in ``notes``. ``ValueError`` if the submission
    is not a notebook.
    """
    cells = student.get("cells") if isinstance(student, Mapping) else None
    if not isinstance(cells, list):
        raise ValueError("the submission is not a notebook (it has no list of cells)")
    release_ids = {_nbgrader(c).get("grade_id") for c in plan.release.cells} - {None}
    answers: dict[str, list[Mapping]] = {}
    extra: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for cell in cells:
        if not isinstance(cell, Mapping):
            raise ValueError("the submission has a cell that is not a JSON object")
        grade_id = _nbgrader(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id in release_ids:
            anchor = grade_id
            answers.setdefault(grade_id, []).append(cell)
        elif cell.get("cell_type") == "code":
            extra.setdefault(anchor, []).append(_code(cell.get("source", "")))
    tests = {t.grade_id: t for t in plan.tests}
    steps: list[tuple[str, str, Any]] = [
        ("exec", f"<added cell {i + 1}>", s) for i, s in enumerate(extra.get(None, []))
    ]
    for cell in plan.release.cells:
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        if cell.cell_type == "code":
            if grade_id in tests:
                names = sorted({name for _, name, _ in tests[grade_id].calls})
                steps.append(("capture", grade_id, names))
            elif meta.get("solution"):
                mine = answers.get(str(grade_id), [])
                steps.append(("exec", f"<answer {grade_id}>", "\n".join(_code(c.get("source", "")) for c in mine)))
                _note_repairs(str(grade_id), mine, notes)
            else:
                steps.append(("exec", f"<cell {grade_id or cell.get('id')}>", cell.source))
        steps += [("exec", f"<added cell after {grade_id}>", s) for s in extra.get(grade_id, [])]
    return steps


def _note_repairs(grade_id: str, cells: list[Mapping], notes: list[str] | None) -> None:
    """Say in ``notes`` how a code answer's cells were taken: several of them, or of another type."""
    if notes is None:
        return
    if len(cells) > 1:
        notes.append(f"answer {grade_id} is in {len(cells)} cells (split or copied): graded as one, in order")
    kinds = sorted({str(c.get("cell_type"))[:20] for c in cells} - {"code"})
    if kinds:
        notes.append(f"answer {grade_id} was made a {' and '.join(kinds)} cell: graded as the code cell it is")


# ----------------------------------------------------------------------------- isolation


class WorkerLost(Exception):
    """The worker died, timed out or answered something unreadable; the reason is the message."""


@dataclass
class Runtime:
    """What workers see of the grader's files: a copy of worker.py and the allowed seqlearn modules."""

    root: Path
    level: str
    slot: int = 0
    run: int = 0  # the run's block of worker uids (free_uid_block)
    hide: tuple[str, ...] = ()  # directories the user level covers with an empty one (the course)

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    @property
    def uid(self) -> int | None:
        if self.level not in ("bwrap", "user") or os.geteuid() != 0:
            return None
        return SLOT_UID_BASE + 256 * (self.run % 4096) + self.slot % 256


def free_uid_block(start: int, slots: int) -> int:
    """The first block of worker uids from ``start % 4096`` on whose first ``slots`` uids no account has and
    no process runs as (see :data:`SLOT_UID_BASE`); ``RuntimeError`` if every block is taken."""
    import pwd

    running = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit():
                running.add(entry.stat().st_uid)

    def free(uid: int) -> bool:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid not in running
        return False

    for step in range(4096):
        block = (start + step) % 4096
        if all(free(SLOT_UID_BASE + 256 * block + k) for k in range(slots)):
            return block
    raise RuntimeError(f"every uid from {SLOT_UID_BASE} on is taken: no worker uids for sealed grading")


def _make_runtime(root: Path, level: str, slot: int = 0, run: int | None = None, hide: Sequence[str] = ()) -> Runtime:
    if run is None and level in ("bwrap", "user") and os.geteuid() == 0:
        run = free_uid_block(os.getpid(), slot + 1)
    runtime = Runtime(root, level, slot, os.getpid() if run is None else run, tuple(hide))
    lib = runtime.lib
    if not (lib / "worker.py").exists():
        lib.mkdir(parents=True, exist_ok=True)
        shutil.copy2(_WORKER_SOURCE, lib / "worker.py")
        for module in WORKER_MODULES:
            parts = module.split(".")[1:]
            rel = Path("seqlearn", *parts[:-1], parts[-1] + ".py") if parts else Path("seqlearn", "__init__.py")
            (lib / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(_SEQLEARN_DIR.parent / rel, lib / rel)
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        root.chmod(0o711)
    return runtime


def _library_paths() -> list[str]:
    """The installed packages' directories: this environment's, then any other on ``sys.path`` (a base
    environment's, or one a ``.pth`` file adds) whose name says it holds installed packages."""
    paths = sysconfig.get_paths()
    own = [paths[k] for k in ("purelib", "platlib") if k in paths]
    others = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    return list(dict.fromkeys([*own, *others]))


def _installed_seqlearn(trees: Sequence[str]) -> list[str]:
    """Every ``seqlearn`` package directory under ``trees`` that a worker could import from (by adding its
    parent to ``sys.path``): the one running here, those on ``sys.path``, those of any Python's packages."""
    found = [_SEQLEARN_DIR, *(Path(p) / "seqlearn" for p in sys.path if p)]
    for tree in trees:
        for pattern in ("lib/python3*/*-packages/seqlearn", "local/lib/python3*/*-packages/seqlearn"):
            found += Path(tree).glob(pattern)
    inside = [p for p in found if any(p.is_relative_to(t) for t in trees)]
    return sorted({str(p) for p in inside if p.is_dir() and not p.is_symlink()})


def _stdlib_paths() -> list[str]:
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(paths[k] for k in ("stdlib", "platstdlib") if k in paths))


def _environment(home: str) -> dict[str, str]:
    threads = "1"
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "OPENBLAS_NUM_THREADS": threads,
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


@functools.cache
def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _user_mounts(runtime: Runtime) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """For the user level: (binds of the allowed seqlearn over every installed one, directories to cover)."""
    package = os.fsencode(runtime.lib / "seqlearn")
    binds = [(package, os.fsencode(p)) for p in _installed_seqlearn(["/"])]
    covers = [p for p in runtime.hide if Path(p).is_dir() and not runtime.root.resolve().is_relative_to(p)]
    return binds, [os.fsencode(p) for p in covers]


def _private_mounts(binds: list[tuple[bytes, bytes]], covers: list[bytes]) -> None:
    """In a worker about to start (as root): a mount namespace of its own where each installed seqlearn is
    the allowed copy and each directory of ``covers`` an empty one. ``OSError`` if seqlearn cannot be covered."""
    import ctypes

    libc = _libc()

    def check(result: int, what: str) -> None:
        if result != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"{what}: {os.strerror(number)}")

    if libc.unshare(_CLONE_NEWNS) != 0:
        if binds:
            check(-1, "a mount namespace of its own, to hide the installed seqlearn")
        return
    check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "private mounts")
    for source, target in binds:
        check(libc.mount(source, target, None, _MS_BIND, None), "covering an installed seqlearn")
        check(libc.mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None), "a read-only seqlearn")
    for target in covers:  # best effort: the course directory
        libc.mount(b"tmpfs", target, b"tmpfs", _MS_RDONLY, b"size=4k,mode=0555")


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (a worker slot's own uid: nothing else runs as it)."""
    for _ in range(3):
        found = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
                    found = True
            except (OSError, ValueError):
                continue
        if not found:
            return
        time.sleep(0.05)


def _bwrap_command(runtime: Runtime, scratch: Path) -> list[str]:
    binds = ["/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/alternatives"]
    command = ["bwrap", "--die-with-parent", "--new-session"]
    command += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        command.append("--unshare-user")
    sized = _bwrap_sizes()  # scratch space in memory, of bounded size: no filling the grader's disk
    # /tmp first: a later mount would hide an interpreter or venv that lives under /tmp
    command += ["--perms", "1777", "--size", str(_SCRATCH_BYTES // 4)] if sized else []
    command += ["--tmpfs", "/tmp"]
    prefixes = list(dict.fromkeys([sys.base_prefix, sys.prefix, *(_library_paths())]))
    # bwrap makes the parents of mount points mode 0700: readable ones are needed once the worker drops root
    parents = {str(p) for path in prefixes for p in Path(path).parents if str(p) not in ("/", "/tmp")}
    for parent in sorted(parents, key=lambda p: p.count("/")):
        command += ["--perms", "0755", "--dir", parent]
    for path in binds:
        command += ["--ro-bind-try", path, path]
    for prefix in prefixes:
        command += ["--ro-bind", prefix, prefix]
    for package in _installed_seqlearn([*binds, *prefixes]):  # an installed seqlearn holds only what answers may use
        command += ["--ro-bind", str(runtime.lib / "seqlearn"), package]
    command += ["--ro-bind", str(runtime.lib), _SANDBOX_LIB, "--proc", "/proc", "--dev", "/dev"]
    command += ["--remount-ro", "/dev"]  # its device nodes work; no file can be written there (an unsized tmpfs)
    if sized:
        command += ["--perms", "0777", "--size", str(_SCRATCH_BYTES), "--tmpfs", _SANDBOX_SCRATCH]
    else:
        command += ["--bind", str(scratch), _SANDBOX_SCRATCH]
    return [*command, "--chdir", _SANDBOX_SCRATCH, "--"]


@functools.cache
def _bwrap_sizes() -> bool:
    """Whether this bwrap knows ``--size`` and ``--perms`` (bubblewrap >= 0.8)."""
    try:
        help_text = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in help_text.stdout + help_text.stderr


class Worker:
    """One isolated worker process, spoken to line by line (see :mod:`seqlearn.grading.worker`)."""

    def __init__(self, runtime: Runtime, limits: Limits):
        self.runtime, self.limits = runtime, limits
        self.scratch = Path(tempfile.mkdtemp(prefix=f"scratch-{runtime.slot}-", dir=runtime.root))
        self.errors = self.scratch.with_name(self.scratch.name + ".stderr")
        self.proc: subprocess.Popen | None = None
        self._buffer = bytearray()

    def start(self) -> None:
        uid = self.runtime.uid
        if uid is not None:
            _kill_uid(uid)
            os.chown(self.scratch, uid, uid)
        self.scratch.chmod(0o700)
        sandboxed = self.runtime.level == "bwrap"
        lib = _SANDBOX_LIB if sandboxed else str(self.runtime.lib)
        cwd = _SANDBOX_SCRATCH if sandboxed else str(self.scratch)
        config = {
            "path": [lib, *_library_paths()],
            "stdlib": _stdlib_paths(),
            "allowed": list(WORKER_MODULES),
            "cwd": cwd,
            "uid": uid if sandboxed else None,
            "gid": uid if sandboxed else None,
            # in the sandbox's own user namespace the process limit counts only its processes
            "processes": self.limits.processes if sandboxed else None,
        }
        command = [sys.executable, "-I", "-S", f"{lib}/worker.py", json.dumps(config)]
        if sandboxed:
            command = _bwrap_command(self.runtime, self.scratch) + command
        limits, drop = self.limits, uid if self.runtime.level == "user" else None
        mounts = _user_mounts(self.runtime) if drop is not None else None
        if mounts is not None:
            _libc()  # loaded here, not in the child
        rlimits = [
            (resource.RLIMIT_CPU, limits.cpu_seconds),
            (resource.RLIMIT_AS, limits.memory_bytes),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CORE, 0),
        ]
        if not sandboxed:  # bwrap's: set by the worker inside, not counted against the grading user's processes
            rlimits.append((resource.RLIMIT_NPROC, limits.processes))

        def prepare() -> None:  # in the child, before exec
            os.setsid()
            if mounts is not None:
                _private_mounts(*mounts)
            for kind, value in rlimits:
                resource.setrlimit(kind, (value, value))
            if drop is not None:
                os.setgroups([])
                os.setgid(drop)
                os.setuid(drop)

        with open(self.errors, "wb") as errors:  # bwrap's and Python's own complaints (the worker silences fd 2)
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                cwd=str(self.scratch),
                env=_environment(cwd),
                preexec_fn=prepare,
                close_fds=True,
            )
        self._buffer = bytearray()
        try:
            hello = self._read(time.monotonic() + max(self.limits.timeout, 30.0))
        except WorkerLost as exc:
            raise WorkerLost(f"{exc}{self._startup_error()}") from None
        if not hello.get("ready"):
            raise WorkerLost("the worker did not start")

    def _startup_error(self) -> str:
        """``": <the last line the worker's start wrote to stderr>"`` (printable, short), or ``""``."""
        try:
            with open(self.errors, "rb") as errors:
                errors.seek(max(0, os.fstat(errors.fileno()).st_size - 2000))
                lines = errors.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        text = "".join(c for c in last if c.isprintable())[:300]
        return f": {text}" if text else ""

    def request(self, message: dict, deadline: float) -> dict:
        """Send one request and wait for its answer until ``deadline`` (``time.monotonic()``)."""
        if self.proc is None or self.proc.stdin is None:
            raise WorkerLost("the worker is not running")
        try:
            self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerLost(self._death()) from None
        return self._read(deadline)

    def _read(self, deadline: float) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise WorkerLost(f"timed out (more than {self.limits.timeout:g} s)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerLost(self._death())
            self._buffer += chunk
            if len(self._buffer) > _MAX_ANSWER:
                self.close()
                raise WorkerLost("answered with more data than the grader accepts")
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError):
            self.close()
            raise WorkerLost("answered something that is not the grader's protocol") from None
        if not isinstance(answer, dict):
            self.close()
            raise WorkerLost("answered something that is not the grader's protocol")
        return answer

    def _death(self) -> str:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.close()
            return "the worker stopped answering"
        self.close()
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            return f"the worker was killed by {name} (a resource limit, or a crash)"
        return f"the worker exited (status {code})"

    def close(self) -> None:
        """Kill the worker's process group (and, with a uid of its own, every process of that uid)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
            for stream in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(Exception):
                    stream.close()  # type: ignore[union-attr]
            self.proc = None
        if self.runtime.uid is not None:
            _kill_uid(self.runtime.uid)

    def cleanup(self) -> None:
        self.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.errors.unlink()


def strongest_level() -> str:
    """The strongest isolation level this machine offers: ``bwrap`` where bubblewrap is installed, else
    ``user`` as root, else ``rlimits`` (never as root: there the process limit does not bind)."""
    if shutil.which("bwrap") is not None:
        return "bwrap"
    return "user" if os.geteuid() == 0 else "rlimits"


def detect_level(preferred: str | None = None, limits: Limits | None = None) -> str:
    """The isolation level to grade at: ``preferred``, else :func:`strongest_level`, checked by starting a worker.

    A level that does not work is an error that says why; the grader never falls back to a weaker
    level by itself (a weaker one is chosen explicitly, as ``preferred``).
    """
    if preferred is not None and preferred not in LEVELS:
        raise ValueError(f"unknown isolation level {preferred!r}; levels: {list(LEVELS)}")
    level = preferred or strongest_level()
    problem = _level_problem(level, limits or Limits(timeout=30))
    if problem is None:
        return level
    weaker = list(LEVELS)[list(LEVELS).index(level) + 1 :]
    advice = f"; to grade at a weaker level, ask for it: --level {' or --level '.join(weaker)}" if weaker else ""
    raise RuntimeError(f"the {level} isolation level does not work here: {problem}{advice}")


def _level_problem(level: str, limits: Limits) -> str | None:
    """Why a worker at ``level`` does not start or cannot import numpy here, or None if it works."""
    if level == "bwrap" and shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if level == "user" and os.geteuid() != 0:
        return "it needs root, to run the worker as a uid of its own"
    with tempfile.TemporaryDirectory(prefix="seqlearn-sealed-probe-") as tmp:
        Path(tmp).chmod(0o711)  # a worker uid of its own must reach its copy of worker.py
        worker = Worker(_make_runtime(Path(tmp) / level, level), limits)
        try:
            worker.start()
            answer = worker.request({"op": "exec", "name": "<probe>", "source": "import numpy"}, time.monotonic() + 30)
            return None if answer.get("ok") else "the worker cannot import numpy"
        except (WorkerLost, OSError) as exc:
            return str(exc)
        finally:
            worker.cleanup()


# ----------------------------------------------------------------------------- checks through the worker

_BUILTIN_EXCEPTIONS = {
    name: cls for name, cls in vars(builtins).items() if isinstance(cls, type) and issubclass(cls, Exception)
}
_WITHHELD = "(the sealed grader does not show messages produced by your code)"
_NO_MODULE = re.compile(r"No module named '(seqlearn(?:\.[A-Za-z_][A-Za-z0-9_]*)*)'")


def _anonymous(wire: Any, depth: int = 0) -> Any:
    """A wire value with every ``opaque`` type name replaced by ``object`` (a name can spell a hidden input)."""
    if not isinstance(wire, list) or depth > 64:
        return wire
    if len(wire) == 2 and wire[0] == "opaque":
        return ["opaque", "object"]
    return [_anonymous(item, depth + 1) for item in wire]


def _student_exception(error: Any, located: bool = True) -> Exception:
    """A builtin exception of the type the worker named, with a message of the grader's own.

    ``located``: it names the line and function of the student's code that raised (not for hidden cases:
    a function's name, like a line number, can be made to spell the input).
    """
    name = error.get("type") if isinstance(error, dict) else None
    cls = _BUILTIN_EXCEPTIONS.get(name, Exception) if isinstance(name, str) else Exception
    message = _WITHHELD
    if name == "CodecError":
        return TypeError("the result could not be sent to the grader: it is too large or of an unsupported type")
    raw = error.get("message") if isinstance(error, dict) else None
    match = _NO_MODULE.match(raw) if isinstance(raw, str) and cls is ModuleNotFoundError else None
    if match:
        from ..guard import REFUSAL

        message = (
            f"No module named {match.group(1)!r}: under sealed grading the references and the rest of "
            f"seqlearn are not available to answers; {REFUSAL}. Write the computation yourself."
        )
    try:
        exc = cls(message)
    except Exception:
        exc = Exception(message)
    line, function = (error.get("line"), error.get("function")) if isinstance(error, dict) else (None, None)
    valid = type(line) is int and 0 < line < 10**6 and isinstance(function, str) and _FUNCTION.fullmatch(function)
    if located and valid:
        exc.seqlearn_location = f"line {line} of {function}"  # type: ignore[attr-defined]
    return exc


_FUNCTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}|<module>|<lambda>")


class _Proxy:
    """The student's function as the checks see it: each call goes to the worker."""

    def __init__(self, worker: Worker, key: str, name: str, deadline: float, hidden: bool = False):
        self.worker, self.key, self.name, self.deadline = worker, key, name, deadline
        self.hidden = hidden  # then no name the student's code made (a type's, a function's) reaches a message
        self.lost: str | None = None

    def __call__(self, *args, **kwargs):
        request = {"op": "call", "key": self.key, "name": self.name, "args": encode(list(args))}
        request["kwargs"] = encode(kwargs)
        try:
            answer = self.worker.request(request, self.deadline)
        except WorkerLost as exc:
            self.lost = str(exc)
            raise KeyboardInterrupt from None  # the checks let an interrupt through: grading stops here
        if answer.get("ok") is True and "result" in answer:
            try:
                after = decode(answer.get("after", ["list", []]))
                if isinstance(after, list) and len(after) == 2:
                    _apply_changes(list(args), after[0])  # what the call did to its arguments, as if here
                    _apply_changes(kwargs, after[1])
                result = _anonymous(answer["result"]) if self.hidden else answer["result"]
                return decode(result, aliases=input_arrays([list(args), kwargs]))
            except (CodecError, RecursionError, ValueError, TypeError):
                raise TypeError(
                    "the result could not be read by the grader (an unsupported or malformed value)"
                ) from None
        raise _student_exception(answer.get("error"), located=not self.hidden)


def _apply_changes(before: Any, after: Any, depth: int = 0) -> Any:
    """Make ``before`` (an argument sent to the worker) what the student's call left it as; returns it."""
    if depth > 64:
        return before
    if isinstance(before, np.ndarray):
        if isinstance(after, np.ndarray) and after.shape == before.shape:
            with contextlib.suppress(Exception):
                before[...] = after
        return before
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after):
            before[:] = [_apply_changes(b, a, depth + 1) for b, a in zip(before, after)]
        else:
            before[:] = after
    elif isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after):
        for b, a in zip(before, after):
            _apply_changes(b, a, depth + 1)
    elif isinstance(before, dict) and isinstance(after, dict):
        if list(before) == list(after):
            for key in before:
                before[key] = _apply_changes(before[key], after[key], depth + 1)
        else:
            before.clear()
            before.update(after)
    return before


@dataclass
class PartResult:
    """One test cell of one submission: score, the grader's message, and why it failed (if it did)."""

    grade_id: str
    score: float
    points: float
    output: str
    failed: bool
    reason: str = ""


@dataclass
class SubmissionResult:
    """How one submission was graded (its notebooks' test cells, or the reason it could not be)."""

    student: str
    parts: dict[str, dict[str, PartResult]] = field(default_factory=dict)  # notebook -> grade id -> part
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(p.score for nb in self.parts.values() for p in nb.values())

    @property
    def max_score(self) -> float:
        return sum(p.points for nb in self.parts.values() for p in nb.values())


def _failure(test: TestCell, reason: str, output: str | None = None) -> PartResult:
    return PartResult(test.grade_id, 0.0, test.points, output or reason, True, reason)


class _Session:
    """A submission's notebook running in a worker, step by step, restarted (skipping the culprit cell) when it dies."""

    MAX_STARTS = 4
    START_PAUSES = (0.5, 2.0, 5.0)  # seconds before each new try of a worker that failed to start

    def __init__(self, runtime: Runtime, limits: Limits, steps: list[tuple[str, str, Any]]):
        self.worker = Worker(runtime, limits)
        self.limits, self.steps = limits, steps
        self.skip: set[int] = set()
        self.found: dict[str, dict[str, str]] = {}
        self.starts = 0
        self.position = 0  # the next step the live worker has not run
        self.broken: str | None = None
        self.end = time.monotonic() + limits.notebook_seconds

    def deadline(self) -> float:
        """The per-cell timeout from now, within the notebook's total time."""
        return min(time.monotonic() + self.limits.timeout, self.end)

    def advance(self, upto: int) -> bool:
        """Run the program's steps up to index ``upto`` in a live worker, as the notebook would reach it.

        A worker that died is restarted and the steps replayed from the start, skipping a step that
        killed one or ran past the timeout. False (and ``broken`` says why) when that keeps failing.
        """
        while self.broken is None:
            if self.worker.proc is None and not self._restart():
                break
            while self.position <= upto:
                index, (op, label, payload) = self.position, self.steps[self.position]
                self.position += 1
                if index in self.skip:
                    continue
                try:
                    if op == "exec":
                        self.worker.request({"op": "exec", "name": label, "source": payload}, self.deadline())
                    else:
                        request = {"op": "capture", "key": label, "names": payload}
                        found = self.worker.request(request, self.deadline()).get("found")
                        self.found[label] = found if isinstance(found, dict) else {}
                except WorkerLost:
                    self.skip.add(index)
                    self.worker.close()
                    break
            else:
                return True
        return False

    def _restart(self) -> bool:
        if time.monotonic() >= self.end:
            self.broken = f"the notebook ran past its total time limit ({self.limits.notebook_seconds:g} s)"
        elif self.starts >= self.MAX_STARTS:
            self.broken = "the worker kept dying while running the notebook's cells"
        else:
            self.starts += 1
            self.position = 0
            problem = self._start()
            if problem:
                self.broken = f"the worker could not start ({problem})"
        return self.broken is None

    def _start(self) -> str | None:
        """Start the worker, retrying after a pause if it fails (a busy machine); why it failed, or None."""
        problem = None
        for pause in (*self.START_PAUSES, None):
            try:
                self.worker.start()
                return None
            except (WorkerLost, OSError) as exc:
                self.worker.close()
                problem = str(exc)
            if pause is None or time.monotonic() + pause >= self.end:
                break
            time.sleep(pause)
        return problem

    def close(self) -> None:
        self.worker.cleanup()


def _run_test(session: _Session, test: TestCell, checks: Mapping[str, FunctionCheck]) -> PartResult:
    """Grade one test cell where it stands in the notebook: after the cells above it, before those below."""
    (position,) = [i for i, (op, label, _) in enumerate(session.steps) if op == "capture" and label == test.grade_id]
    if not session.advance(position):
        return _failure(test, session.broken or "the worker is not available")
    found = session.found.get(test.grade_id, {})
    deadline = session.deadline()
    printed = io.StringIO()
    for exercise, name, hidden in test.calls:
        kind = found.get(name, "missing")
        if kind == "missing":
            return _failure(test, f"NameError: name {name!r} is not defined")
        if kind != "callable":
            return _failure(test, f"CheckFailure: {name} should be a function, but it is not")
        proxy = _Proxy(session.worker, test.grade_id, name, deadline, hidden)
        try:
            with contextlib.redirect_stdout(printed):
                checks[exercise].check(proxy, hidden=hidden)
        except CheckFailure as failure:
            return _failure(test, f"{name} failed", f"CheckFailure: {failure}")
        except KeyboardInterrupt:
            reason = proxy.lost or "interrupted"
            session.worker.close()
            return _failure(test, f"{name}: {reason}", f"CheckFailure: {name} could not be graded: {reason}")
        except Exception as exc:  # the checks could not judge what came back: this part fails, nothing more
            return _uncomparable(test, name, exc)
    return PartResult(test.grade_id, test.points, test.points, printed.getvalue(), False)


class Refused(ValueError):
    """A submitted file the grader will not grade: the reason is the message (the grader's words only)."""


def read_submitted(course, student: str, assignment: str, name: str, limit: int) -> bytes:
    """The bytes of ``submitted/<student>/<assignment>/<name>`` in ``course``, at most ``limit`` of them.

    Only a regular file is read, reached through no symbolic link (``O_NOFOLLOW`` at every step
    below ``submitted/``): a link to ``solutions/`` or to a file outside is refused, not followed.

    Raises
    ------
    Refused
        A part of the path is a symbolic link, the file is not a regular file, or it is larger than ``limit``.
    OSError
        It does not exist or cannot be read.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fds = [os.open(Path(course) / "submitted", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        for part, what in ((student, os.O_DIRECTORY), (assignment, os.O_DIRECTORY), (name, os.O_NONBLOCK)):
            try:
                fds.append(os.open(part, flags | what, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused(f"{part} is a symbolic link (only regular files are graded)") from None
                raise
        info = os.fstat(fds[-1])
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{name} is not a regular file")
        with os.fdopen(os.dup(fds[-1]), "rb") as file:
            data = file.read(limit + 1)
        if len(data) > limit or info.st_size > limit:
            raise Refused(f"larger than {limit // 2**20} MiB" if limit >= 2**20 else f"larger than {limit} bytes")
        return data
    finally:
        for fd in fds:
            os.close(fd)


def _uncomparable(test: TestCell, name: str, exc: Exception) -> PartResult:
    """A test cell whose checks raised on a student's result: failed, naming the error's type only."""
    kind = type(exc).__name__ if type(exc) in _BUILTIN_EXCEPTIONS.values() else "an error"
    reason = f"{name}: its result could not be compared with the expected one ({kind})"
    return _failure(test, reason, f"CheckFailure: {reason}")


def grade_submission(
    course, assignment: str, student: str, plans: Sequence[NotebookPlan], runtime: Runtime, limits: Limits
) -> SubmissionResult:
    """Grade one student's submission of ``assignment`` (every notebook), in its own worker per notebook."""
    start = time.perf_counter()
    result = SubmissionResult(student)
    checks = ASSIGNMENTS[assignment].CHECKS
    for plan in plans:
        try:
            notebook = json.loads(read_submitted(course, student, assignment, plan.name, _MAX_NOTEBOOK))
            if holds_source_code(notebook):
                raise Refused("it holds solution or hidden-test code of the source notebook, which no answer holds")
            steps = build_program(plan, notebook, result.problems)
        except (OSError, ValueError, RecursionError) as exc:
            why = f"was refused: {exc}" if isinstance(exc, Refused) else f"could not be read: {type(exc).__name__}"
            reason = f"{plan.name} {why}"
            result.problems.append(reason)
            result.parts[plan.name] = {t.grade_id: _failure(t, reason) for t in plan.tests}
            continue
        session = _Session(runtime, limits, steps)
        try:
            result.parts[plan.name] = {t.grade_id: _run_test(session, t, checks) for t in plan.tests}
        finally:
            session.close()
    result.seconds = time.perf_counter() - start
    return result


# ----------------------------------------------------------------------------- the class, in parallel

_POOL_STATE: dict[str, Any] = {}


def _init_pool(slots, root: str, level: str, limits: Limits, run: int, hide: tuple[str, ...]) -> None:
    slot = slots.get()
    _POOL_STATE["runtime"] = _make_runtime(Path(root) / f"slot-{slot}", level, slot, run, hide)
    _POOL_STATE["limits"] = limits


def _grade_in_pool(course: str, assignment: str, student: str, plans) -> SubmissionResult:
    return _grade_isolated(course, assignment, student, plans, _POOL_STATE["runtime"], _POOL_STATE["limits"])


def _grade_isolated(course, assignment: str, student: str, plans, runtime: Runtime, limits: Limits) -> SubmissionResult:
    """:func:`grade_submission`, where any error is recorded as this student's problem (the class goes on)."""
    try:
        return grade_submission(course, assignment, student, plans, runtime, limits)
    except Exception as exc:  # a grader bug must not stop the class: record it
        result = SubmissionResult(student)
        result.problems.append(f"grader error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
        for plan in plans:
            result.parts[plan.name] = {t.grade_id: _failure(t, "grader error") for t in plan.tests}
        return result


def _students(course: Path, assignment: str, students) -> list[str]:
    # links are listed, to be refused with the reason (read_submitted), not silently skipped
    found = sorted(
        p.parent.name for p in (course / "submitted").glob(f"*/{assignment}") if p.is_dir() or p.is_symlink()
    )
    if students is None:
        return found
    missing = sorted(set(students) - set(found))
    if missing:
        raise ValueError(f"no submission of {assignment} by {missing} in {course / 'submitted'}")
    return list(students)


def grade_assignment(
    course,
    assignment: str,
    *,
    jobs: int | None = None,
    students: Sequence[str] | None = None,
    level: str | None = None,
    limits: Limits | None = None,
    write: bool = True,
    progress=None,
) -> tuple[str, list[SubmissionResult]]:
    """Grade every submission of ``assignment`` in ``course``; write the gradebook and autograded notebooks.

    Parameters
    ----------
    course : path
        The nbgrader course directory (``nbgrader_config.py``, ``submitted/``, the gradebook).
    assignment : str
        E.g. ``"01_ngram"``; ``nbgrader generate_assignment`` must have recorded it in the gradebook.
    jobs : int, optional
        Submissions graded at once (default: the number of CPUs).
    students : list of str, optional
        Only these students (default: everyone under ``submitted/``).
    level : str, optional
        Isolation level (default: the strongest that works, :func:`detect_level`).
    limits : Limits, optional
        The workers' resource limits.
    write : bool
        Write scores to the gradebook and autograded notebooks (default); False only grades.
    progress : callable, optional
        Called with each :class:`SubmissionResult` as it is finished.

    Returns
    -------
    (level, results)
    """
    course = Path(course).resolve()
    limits = limits or Limits(timeout=_course_timeout(course))
    plans = load_assignment(course, assignment)
    names = _students(course, assignment, students)
    level = detect_level(level)
    jobs = max(1, min(jobs or len(os.sched_getaffinity(0)), max(len(names), 1)))  # the CPUs this process may use
    results: list[SubmissionResult] = []
    with tempfile.TemporaryDirectory(prefix="seqlearn-sealed-") as tmp:
        Path(tmp).chmod(0o711)
        block = free_uid_block(os.getpid(), jobs) if os.geteuid() == 0 else os.getpid()
        if jobs == 1:
            runtime = _make_runtime(Path(tmp) / "slot-0", level, 0, block, hide=(str(course),))
            for name in names:
                results.append(_grade_isolated(course, assignment, name, plans, runtime, limits))
                if progress:
                    progress(results[-1])
        else:
            import multiprocessing

            context = multiprocessing.get_context("fork")  # the grader's own processes: no re-import
            slots = context.Queue()
            for slot in range(jobs):
                slots.put(slot)
            setup: tuple = (slots, tmp, level, limits, block, (str(course),))
            with ProcessPoolExecutor(jobs, context, initializer=_init_pool, initargs=setup) as pool:
                futures = [pool.submit(_grade_in_pool, str(course), assignment, n, plans) for n in names]
                for future in futures:
                    results.append(future.result())
                    if progress:
                        progress(results[-1])
    if write:
        write_results(course, assignment, plans, results)
    return level, results


def _nbgrader_config(course: Path):
    """nbgrader's configuration as nbgrader loads it for this course: the ``nbgrader_config.py``
    of each Jupyter configuration directory (system, environment, user: a hub's settings for
    every course usually live in ``/etc/jupyter``), then the course's own, each overriding the
    ones before."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for directory in [*reversed(jupyter_config_path()), str(course)]:
        if (Path(directory) / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=directory).load_config())
    return config


def _course_timeout(course: Path) -> float:
    """nbgrader's per-cell timeout for the course (``Execute.timeout``, or the
    ``ExecutePreprocessor.timeout`` it inherits), else :attr:`Limits.timeout`."""
    with contextlib.suppress(Exception):  # a configuration nbgrader cannot load either: the default
        config = _nbgrader_config(course)
        for section in ("Execute", "ExecutePreprocessor"):
            value = config.get(section, {}).get("timeout")
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
    return Limits.timeout


# ----------------------------------------------------------------------------- the gradebook and feedback


def _db(course: Path) -> tuple[str, str]:
    config = _nbgrader_config(course).get("CourseDirectory", {})
    url, course_id = config.get("db_url", ""), config.get("course_id", "")
    return url or f"sqlite:///{course / 'gradebook.db'}", course_id or "default_course"


def _output(text: str, failed: bool) -> nbformat.NotebookNode:
    if not failed:
        return nbformat.v4.new_output("stream", name="stdout", text=text)
    ename, _, evalue = text.partition(": ")
    return nbformat.v4.new_output("error", ename=ename or "CheckFailure", evalue=evalue, traceback=[text])


def _autograded_notebook(plan: NotebookPlan, source_tests, submitted: Path, parts: Mapping[str, PartResult]):
    """The submission as nbgrader's autograde would leave it: source test cells, with the grader's outputs.

    ``submitted`` is ``<course>/submitted/<student>/<assignment>/<notebook>``, read as :func:`read_submitted` reads it.
    """
    try:
        course, (student, assignment, name) = submitted.parents[3], submitted.parts[-3:]
        data = read_submitted(course, student, assignment, name, _MAX_NOTEBOOK)
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
        if holds_source_code(notebook):
            raise Refused("holds source code")
        students: dict[Any, list[str]] = {}
        for mine in notebook.cells:  # an answer split in two, or of a changed type, keeps its text
            students.setdefault(_nbgrader(mine).get("grade_id"), []).append(_code_text(mine.get("source", "")))
    except Exception:
        students = {}
    result = nbformat.from_dict(plan.release)
    for index, cell in enumerate(result.cells):
        meta = _nbgrader(cell)
        grade_id = str(meta.get("grade_id"))
        if grade_id in parts:
            cell.source = source_tests[grade_id].source
            cell.outputs = [_output(parts[grade_id].output, parts[grade_id].failed)]
        elif meta.get("solution") and grade_id in students:
            cell.source = "\n".join(students[grade_id])
        result.cells[index] = cell
    return result


def write_results(course, assignment: str, plans: Sequence[NotebookPlan], results: Sequence[SubmissionResult]) -> None:
    """Record ``results`` in the course's gradebook and write the autograded notebooks feedback is made from."""
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course)
    url, course_id = _db(course)
    with warnings.catch_warnings(), Gradebook(url, course_id) as gradebook:
        warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's own, as in autograde
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise ValueError(
                f"no assignment {assignment!r} in the gradebook: run `nbgrader generate_assignment {assignment}` first"
            ) from None
        for result in results:
            try:
                _write_result(course, assignment, plans, result, gradebook)
            except Exception as exc:  # one submission's record must not cost the others theirs
                gradebook.db.rollback()
                result.problems.append(f"not written to the gradebook: {type(exc).__name__}")


def _write_result(course: Path, assignment: str, plans: Sequence[NotebookPlan], result: SubmissionResult, gradebook):
    """Record one submission's scores and write its autograded notebooks (committed together)."""
    submitted = course / "submitted" / result.student / assignment
    gradebook.update_or_create_student(result.student)
    timestamp = _timestamp(course, result.student, assignment)
    extra = {"timestamp": timestamp} if timestamp else {}
    gradebook.update_or_create_submission(assignment, result.student, **extra)
    out_dir = course / "autograded" / result.student / assignment
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in _NBGRADER_RECORDS:
        _copy_record(course, result.student, assignment, name, out_dir)
    for plan in plans:
        parts = result.parts.get(plan.name, {})
        notebook_id = Path(plan.name).stem
        for part in parts.values():
            grade = gradebook.find_grade(part.grade_id, notebook_id, assignment, result.student)
            grade.auto_score = part.score
            grade.needs_manual_grade = grade.manual_score is not None
        tests = {t.grade_id: t for t in plan.tests}
        autograded = _autograded_notebook(plan, tests, submitted / plan.name, parts)
        for cell in autograded.cells:
            meta = _nbgrader(cell)
            if meta.get("solution") or meta.get("task"):
                _record_answer(gradebook, cell, meta, notebook_id, assignment, result.student)
        nbformat.write(autograded, out_dir / plan.name)
    gradebook.db.commit()


def _record_answer(gradebook, cell, meta, notebook_id: str, assignment: str, student: str) -> None:
    """nbgrader's treatment of an answer cell: 0 and "No response." when unchanged, else left for the grader."""
    from nbgrader.utils import compute_checksum, determine_grade

    if meta.get("grade"):
        grade = gradebook.find_grade(meta["grade_id"], notebook_id, assignment, student)
        auto, _ = determine_grade(cell)
        grade.auto_score = auto
        grade.needs_manual_grade = grade.manual_score is not None or auto is None
    comment = gradebook.find_comment(meta["grade_id"], notebook_id, assignment, student)
    unchanged = meta.get("checksum") == compute_checksum(cell)
    comment.auto_comment = "No response." if unchanged else None


_NBGRADER_RECORDS = ("timestamp.txt", "submission_secret.txt")
"""What nbgrader keeps beside a submission: ``release_feedback`` finds the exchange's feedback folder by the secret."""


_MAX_RECORD = 4096


def _copy_record(course: Path, student: str, assignment: str, name: str, out_dir: Path) -> None:
    """Copy one of :data:`_NBGRADER_RECORDS` beside the autograded notebook, if it is a small regular file."""
    target = out_dir / name
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    try:
        data = read_submitted(course, student, assignment, name, _MAX_RECORD)
    except (OSError, ValueError):
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _timestamp(course: Path, student: str, assignment: str):
    from nbgrader.utils import parse_utc

    with contextlib.suppress(Exception):
        text = read_submitted(course, student, assignment, "timestamp.txt", _MAX_RECORD).decode("utf-8")
        return parse_utc(text.strip())
    return None
