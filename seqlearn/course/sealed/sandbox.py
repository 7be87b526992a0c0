"""Sealed grading, the sandbox: the worker process that runs a student's program, shut off from the grader.

A :class:`Worker` is :mod:`seqlearn.grading.worker` run as a script in a fresh scratch directory,
with a clean environment (:func:`_environment`), its own session and process group, resource
limits (:class:`Limits`), a wall-clock deadline per request, and a ``sys.path`` holding only the
standard library, the installed libraries and a copy of :data:`WORKER_MODULES` of seqlearn (the
:class:`Runtime` of a worker slot). How much more it is shut off from depends on the isolation
level (:data:`LEVELS`): a bubblewrap sandbox (:func:`_bwrap_command`), a uid of its own with a
private mount namespace (:func:`free_uid_block`, :func:`_private_mounts`), or rlimits alone.
:func:`detect_level` picks the strongest level that works, or checks the one asked for, by
starting a worker; a worker that dies, times out or answers something unreadable raises
:class:`WorkerLost`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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

_SEQLEARN_DIR = Path(__file__).resolve().parents[2]
_WORKER_SOURCE = _SEQLEARN_DIR / "grading" / "worker.py"
_SANDBOX_LIB = "/sealed"
_SANDBOX_SCRATCH = "/scratch"
_MAX_ANSWER = 16 * 2**20  # one answer line of the worker: its JSON parses into a few times that
_SCRATCH_BYTES = 256 * 2**20


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
