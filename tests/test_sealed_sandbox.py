"""Sealed grading (``seqlearn grade``) as it is deployed: one submission never sinks another,
only regular files are graded, the level is never weaker than asked, and the sandbox holds no
reference however seqlearn is installed.

Each test grades a few submissions of 01_ngram in a scratch course and says what a hostile
one tried; the honest submission graded beside it keeps its full marks.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from test_sealed_grading import detached_writer, graded_points

from seqlearn.course.nbgrader_tools import make_course, run_nbgrader, student_submission
from seqlearn.course.sealed import Limits, PartResult, grade_assignment
from seqlearn.course.sealed import gradebook as sealed_gradebook
from seqlearn.course.sealed import sandbox as sealed_sandbox
from seqlearn.course.sealed import session as sealed_session
from seqlearn.course.sealed.plan import TestCell

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_ngram"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
LIMITS = Limits(timeout=10)
HAS_BWRAP = shutil.which("bwrap") is not None


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _notebook(kind: str):
    """``"blank"``: the release; ``"solution"``: the release answered with the solutions, as a student saves it."""
    blank = nbformat.read(ROOT / "exercises" / ASSIGNMENT / NOTEBOOK, as_version=4)
    if kind == "blank":
        return blank
    return student_submission(nbformat.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, as_version=4), blank)


def _with_answer(notebook, grade_id: str, source: str):
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if _meta(c).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _submit(course: Path, student: str, notebook) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / NOTEBOOK)
    return folder / NOTEBOOK


def _lost(result) -> dict[str, str]:
    return {g: p.reason for nb in result.parts.values() for g, p in nb.items() if p.failed}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course holding 01_ngram (recorded in its gradebook) and an honest submission."""
    course = make_course(ROOT, tmp_path_factory.mktemp("sandbox") / "course", [ASSIGNMENT])
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    _submit(course, "honest", _notebook("solution"))
    return course


# ----------------------------------------------------------------------------- one submission, one student

HUGE = "def add_k_prob(*args, **kwargs):\n    return 10**400\n"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_result_the_comparison_cannot_take_fails_only_that_students_part(course, jobs):
    """``10**400`` for a probability: float() of it overflows in the comparison."""
    _submit(course, "huge_number", _with_answer(_notebook("solution"), "add_k_prob", HUGE))
    _, results = grade_assignment(
        course, ASSIGNMENT, jobs=jobs, students=["honest", "huge_number"], limits=LIMITS, write=False
    )
    scores = {r.student: r for r in results}
    assert scores["honest"].score == scores["honest"].max_score == 14
    assert list(_lost(scores["huge_number"])) == ["add_k_prob_tests"], _lost(scores["huge_number"])
    assert scores["huge_number"].score == 12


class _Session:
    """A session whose worker is never asked: the checks raise before they call the function."""

    def __init__(self):
        self.steps = [("capture", "t", ["f"])]
        self.found = {"t": {"f": "callable"}}
        self.broken, self.worker = None, None

    def advance(self, upto: int) -> bool:
        return True

    def deadline(self) -> float:
        return 0.0


class _Raising:
    def check(self, student, hidden: bool = False, entropy=None, reveal: bool = False) -> None:
        raise ZeroDivisionError("grader-side arithmetic on the student's result")


def test_any_error_of_the_checks_is_a_failed_part_not_a_stopped_run():
    test = TestCell("t", 2.0, (("ex", "f", True),), "check_ex(f, hidden=True)")
    part = sealed_session._run_test(_Session(), test, {"ex": _Raising()})  # type: ignore[arg-type]
    assert isinstance(part, PartResult) and part.failed and part.score == 0
    assert "ZeroDivisionError" in part.output and "grader-side" not in part.output


def _gradebook(course: Path) -> dict[str, dict[str, float | None]]:
    """Student -> autograded cell -> auto_score, as the gradebook holds them now."""
    from nbgrader.api import Gradebook

    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "seqlearn") as gradebook:
        for submission in gradebook.find_assignment(ASSIGNMENT).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell.cell_type == "code":
                        scores.setdefault(submission.student.id, {})[grade.name] = grade.auto_score
    return scores


@pytest.mark.integration
@pytest.mark.slow
def test_a_submission_that_cannot_be_written_costs_only_its_own_record(course, monkeypatch):
    _submit(course, "unwritable", _notebook("solution"))
    written = sealed_gradebook._autograded_notebook

    def failing(plan, tests, submitted, parts):
        if "unwritable" in submitted.parts:
            raise RecursionError("a notebook too deep for nbformat")
        return written(plan, tests, submitted, parts)

    monkeypatch.setattr(sealed_gradebook, "_autograded_notebook", failing)
    _, results = grade_assignment(course, ASSIGNMENT, jobs=1, students=["unwritable", "honest"], limits=LIMITS)
    problems = {r.student: r.problems for r in results}
    assert problems == {"unwritable": ["not written to the gradebook: RecursionError"], "honest": []}
    stored = _gradebook(course)
    assert sum(v or 0 for v in stored["honest"].values()) == 14
    assert not any(stored.get("unwritable", {}).values())


# ----------------------------------------------------------------------------- only regular files, no solutions


def _link(course: Path, student: str, target: Path, name: str = NOTEBOOK) -> None:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).symlink_to(target)


@pytest.mark.integration
@pytest.mark.slow
def test_symlinks_and_copies_of_the_solutions_are_refused(course, tmp_path):
    solutions = course / "solutions" / ASSIGNMENT
    _link(course, "linked_notebook", solutions / NOTEBOOK)  # placed in submitted/ (or collected as a link)
    (course / "submitted" / "linked_folder").mkdir()
    (course / "submitted" / "linked_folder" / ASSIGNMENT).symlink_to(solutions)
    (course / "submitted" / "linked_student").symlink_to(course / "submitted" / "honest")
    shutil.copytree(solutions, course / "submitted" / "copied" / ASSIGNMENT)  # what `nbgrader collect` made of a link
    pasted = _notebook("solution")  # the source's hidden tests pasted into a cell of the student's
    pasted.cells.append(nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\npass\n### END HIDDEN TESTS"))
    _submit(course, "pasted", pasted)
    secret = tmp_path / "instructor-secret.txt"
    secret.write_text("INSTRUCTOR-ONLY " * 10)
    _link(course, "linked_timestamp", secret, "timestamp.txt")
    (course / "submitted" / "linked_timestamp" / ASSIGNMENT / NOTEBOOK).write_text(nbformat.writes(_notebook("blank")))
    students = [
        "honest",
        "linked_notebook",
        "linked_folder",
        "linked_student",
        "copied",
        "pasted",
        "linked_timestamp",
    ]
    _, results = grade_assignment(course, ASSIGNMENT, jobs=2, students=students, limits=LIMITS)
    scores = {r.student: r.score for r in results}
    assert scores == dict.fromkeys(students, 0.0) | {"honest": 14.0}, scores
    problems = {r.student: " ".join(r.problems) for r in results}
    assert all("symbolic link" in problems[s] for s in ("linked_notebook", "linked_folder", "linked_student"))
    assert "solution or hidden-test code" in problems["copied"] and "hidden-test" in problems["pasted"]
    stored = _gradebook(course)
    assert all(not any(stored[s].values()) for s in students if s != "honest"), stored
    for student in students:
        for path in (course / "autograded" / student / ASSIGNMENT).glob("*"):
            text = path.read_text()
            assert "INSTRUCTOR-ONLY" not in text and "BEGIN SOLUTION" not in text, path
    assert not (course / "autograded" / "linked_timestamp" / ASSIGNMENT / "timestamp.txt").exists()


# ----------------------------------------------------------------------------- the level: never weaker than asked


def _without_bwrap(monkeypatch) -> None:
    which = shutil.which
    monkeypatch.setattr(
        sealed_sandbox.shutil, "which", lambda name, *a, **k: None if name == "bwrap" else which(name, *a, **k)
    )


needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the user level runs workers as a uid of their own: root only"
)


def _blocked_prefixes() -> tuple[Path | None, list[Path]]:
    """The first directory above the interpreter that other uids cannot enter, and the prefixes below it."""
    prefixes = list(dict.fromkeys(Path(p).resolve() for p in (sys.base_prefix, sys.prefix)))
    for prefix in prefixes:
        for parent in reversed(prefix.parents):
            if not parent.stat().st_mode & stat.S_IXOTH:
                return parent, [p for p in prefixes if parent in p.parents]
    return None, []


def _as_another_uid_could(command: list[str]) -> list[str]:
    """``command`` in a private mount namespace where every uid reaches the interpreter.

    Where Python lives in a directory only root may enter (``/root/.pyenv``), that directory is
    replaced, in the namespace only, by an empty one that holds just the interpreter's prefixes.
    """
    blocked, inner = _blocked_prefixes()
    if blocked is None:
        return command
    script = ["set -e"]
    for i, prefix in enumerate(inner):
        script.append(f'mkdir -p "$T/{i}" && mount --bind {shlex.quote(str(prefix))} "$T/{i}"')
    script.append(f"mount -t tmpfs -o mode=0755,size=1m tmpfs {shlex.quote(str(blocked))}")
    for i, prefix in enumerate(inner):
        script.append(f'mkdir -p {shlex.quote(str(prefix))} && mount --move "$T/{i}" {shlex.quote(str(prefix))}')
    script.append('exec "$@"')
    body = "T=$(mktemp -d) && sh -c " + shlex.quote("\n".join(script)) + ' sh "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", body, "sh", *command]


def _unused_uid() -> int:
    """A uid with no process and no account (the grading runs' own uids start at 1990000)."""
    taken = {
        Path(f"/proc/{p}").stat().st_uid for p in os.listdir("/proc") if p.isdigit() and Path(f"/proc/{p}").exists()
    }
    uid = 2_100_000 + os.getpid() % 100_000
    while uid in taken:
        uid += 1
    return uid


_CAN_SWITCH = os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "setpriv", "mount"))
needs_uid_switch = pytest.mark.skipif(
    not _CAN_SWITCH, reason="acting as a second user needs root and util-linux's unshare, setpriv and mount"
)


def _grade_command(course: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "seqlearn.course.cli", "grade", ASSIGNMENT, "--course", str(course), *options]


@needs_uid_switch
@pytest.mark.integration
@pytest.mark.slow
def test_root_without_bubblewrap_grades_at_the_user_level(course, tmp_path):
    """The detached writer of a submission graded as root (rlimits) set every cell to 100 after grading."""
    attack = detached_writer(10).replace("<DB>", repr(str(course / "gradebook.db")))
    _submit(course, "detached", _with_answer(_notebook("blank"), "count_ngrams", attack))
    (tmp_path / "no-bwrap").mkdir()  # a PATH without bubblewrap
    grade = ["env", f"PATH={tmp_path / 'no-bwrap'}", *_grade_command(course, "--jobs", "1", "--timeout", "10")]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    command = _as_another_uid_could(grade)
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    time.sleep(3)  # the time a detached process would have to write the gradebook
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "isolation level: user" in proc.stdout, proc.stdout
    stored = _gradebook(course)
    assert sum(v or 0 for v in stored["honest"].values()) == 14
    assert not any(stored["detached"].values()), stored["detached"]


@needs_root
@pytest.mark.integration
def test_as_root_rlimits_is_used_only_when_asked_for(monkeypatch):
    _without_bwrap(monkeypatch)
    monkeypatch.setattr(sealed_sandbox, "_library_paths", list)  # a worker that starts but cannot import numpy
    with pytest.raises(
        RuntimeError, match=r"the user isolation level does not work here: .+ ask for it: --level rlimits$"
    ):
        sealed_sandbox.detect_level()
    monkeypatch.undo()
    assert sealed_sandbox.detect_level("rlimits") == "rlimits"


@pytest.mark.integration
def test_a_level_that_fails_is_an_error_that_says_why(monkeypatch):
    """bwrap failing to start (too many processes of the grading user) fell back to a weaker level silently."""
    which = shutil.which
    monkeypatch.setattr(
        sealed_sandbox.shutil, "which", lambda name, *a, **k: "/bin/true" if name == "bwrap" else which(name)
    )
    failing = "echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2; exit 1"
    monkeypatch.setattr(sealed_sandbox, "_bwrap_command", lambda runtime, scratch: ["sh", "-c", failing, "--"])
    assert sealed_sandbox.strongest_level() == "bwrap"
    with pytest.raises(
        RuntimeError, match=r"bwrap isolation level does not work here: .*Creating new namespace failed"
    ):
        sealed_sandbox.detect_level()
    with pytest.raises(RuntimeError, match=r"--level (user or --level )?rlimits"):
        sealed_sandbox.detect_level()


@pytest.mark.integration
def test_a_worker_that_fails_to_start_is_started_again(monkeypatch, tmp_path):
    """A busy machine (fork fails once) cost every test cell of the notebook being graded."""
    runtime = sealed_sandbox._make_runtime(tmp_path / "runtime", "rlimits")
    start, calls = sealed_sandbox.Worker.start, []

    def flaky(worker):
        calls.append(1)
        if len(calls) == 1:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        start(worker)

    monkeypatch.setattr(sealed_sandbox.Worker, "start", flaky)
    session = sealed_session._Session(runtime, LIMITS, [("exec", "<cell 1>", "x = 1")])
    try:
        assert session.advance(0) and session.broken is None and len(calls) == 2
    finally:
        session.close()


HOLDER = """
import os, time
for _ in range(60):  # processes held while the other students are graded beside it
    try:
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
    except OSError:
        break
def count_ngrams(sentences, n):
    raise NotImplementedError()
"""


def _grade_as_another_user(submissions: dict, processes: int = 0, jobs: int = 1) -> str:
    """``seqlearn grade`` run by a user who is not root (a uid of no account), who already runs
    ``processes`` other processes, on a fresh course holding ``submissions``; its output."""
    uid = _unused_uid()
    course = Path(tempfile.mkdtemp(prefix="seqlearn-instructor-"))  # tmp_path's parents are root's only
    others: list[subprocess.Popen] = []
    as_uid = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
    try:
        make_course(ROOT, course, [ASSIGNMENT])
        run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
        for student, notebook in submissions.items():
            _submit(course, student, notebook)
        subprocess.run(["chown", "-R", f"{uid}:{uid}", str(course)], check=True)
        others = [subprocess.Popen([*as_uid, "sleep", "600"]) for _ in range(processes)]
        grade = [*as_uid, "env", f"HOME={course}", *_grade_command(course, "--jobs", str(jobs), "--timeout", "20")]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        proc = subprocess.run(
            _as_another_uid_could(grade), env=env, cwd=course, capture_output=True, text=True, timeout=600, check=False
        )
    finally:
        for other in others:
            other.kill()
            other.wait()
        sealed_sandbox._kill_uid(uid)
        shutil.rmtree(course, ignore_errors=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc.stdout


needs_non_root_bwrap = pytest.mark.skipif(
    not (_CAN_SWITCH and HAS_BWRAP), reason="a non-root grader with bwrap needs root to act as one, and bubblewrap"
)


@needs_non_root_bwrap
@pytest.mark.integration
@pytest.mark.slow
def test_a_non_root_grader_keeps_bwrap_with_many_processes_of_its_own():
    """An instructor with more than 64 processes (a Jupyter server, kernels) made bwrap fail to start and the
    grader fall back to rlimits; a submission holding 64 processes made the students beside it score 0."""
    honest = {f"honest{i}": _notebook("solution") for i in (1, 2, 3)}
    holder = _with_answer(_notebook("blank"), "count_ngrams", HOLDER)
    output = _grade_as_another_user({"holder": holder, **honest}, processes=70, jobs=2)
    assert "isolation level: bwrap" in output, output
    for student in honest:
        assert re.search(rf"{student}\s+14/14", output), output
    assert re.search(r"holder\s+0/14", output), output


@needs_non_root_bwrap
@pytest.mark.integration
@pytest.mark.slow
def test_a_non_root_graders_sandbox_dev_cannot_be_written():
    """/dev was a writable tmpfs of no size (the sandbox's own, as the grading user): one worker held 5 GB
    of the machine's memory there."""
    filler = _with_answer(_notebook("blank"), "count_ngrams", _answer("count_ngrams", DEV_WRITE))
    output = _grade_as_another_user({"dev_filler": filler})
    assert "isolation level: bwrap" in output, output
    points = graded_points()["count_ngrams_tests"]
    assert re.search(rf"dev_filler\s+{points:g}/14", output), output  # count_ngrams passes only if /dev refused


# ----------------------------------------------------------------------------- a wheel install

UNBLOCKED = """
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_ImportBlocker"]
sys.path[:] = [p for p in sys.path if not os.path.exists(os.path.join(p, "worker.py"))]  # the allowed copy's
for _name in [m for m in sys.modules if m == "seqlearn" or m.startswith("seqlearn.")]:
    del sys.modules[_name]
from seqlearn.ngram.basics import count_ngrams
"""


def _wheel_environment(where: Path) -> Path:
    """A virtual environment holding seqlearn installed from a wheel built from this repository (its
    dependencies come from the course's environment, through a path file); its Python."""
    source = where / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "seqlearn", source / "seqlearn", ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    wheels = where / "wheels"
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True)
    python = where / "venv" / "bin" / "python"
    (wheel,) = wheels.glob("seqlearn-*.whl")
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "course-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.fixture(scope="module")
def wheel_python():
    """The Python of an environment where seqlearn is installed from a wheel (in a directory every uid reaches)."""
    where = Path(tempfile.mkdtemp(prefix="seqlearn-wheel-"))  # tmp_path's parents are root's only
    where.chmod(0o755)
    try:
        python = _wheel_environment(where)
        found = subprocess.run(
            [str(python), "-c", "import seqlearn; print(seqlearn.__file__)"],
            cwd=where,  # not the repository, whose seqlearn/ a script's own directory would put first
            capture_output=True,
            text=True,
            check=True,
        )
        assert str(where / "venv") in found.stdout, found.stdout  # the wheel's seqlearn grades, not the repository's
        yield python
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _grade_unblocked(course: Path, python: Path, tmp_path: Path, level: str, wrap=lambda c: c) -> str:
    """``seqlearn grade`` of the wheel's environment on the honest and the unblocking submissions; its output."""
    _submit(course, "unblocked", _with_answer(_notebook("blank"), "count_ngrams", UNBLOCKED))
    (tmp_path / "bin").mkdir(exist_ok=True)  # no bubblewrap on the grader's PATH unless it is asked for
    path = "/usr/bin:/bin" if level == "bwrap" else str(tmp_path / "bin")
    command = [
        "env",
        f"PATH={path}",
        str(python),
        "-m",
        "seqlearn.course.cli",
        "grade",
        ASSIGNMENT,
        "--course",
        str(course),
    ]
    command += ["--jobs", "1", "--timeout", "20", "--level", level]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    proc = subprocess.run(
        wrap(command), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.integration
@pytest.mark.slow
def test_a_wheel_installed_seqlearn_holds_no_reference_in_the_sandbox(course, wheel_python, tmp_path):
    """Installed from a wheel (docs/deploy.md's TLJH step), site-packages is mounted in the sandbox:
    an answer that drops the import blocker imported the references."""
    output = _grade_unblocked(course, wheel_python, tmp_path, "bwrap")
    assert re.search(r"honest\s+14/14", output) and re.search(r"unblocked\s+0/14", output), output


@needs_uid_switch
@pytest.mark.integration
@pytest.mark.slow
def test_a_wheel_installed_seqlearn_holds_no_reference_at_the_user_level(course, wheel_python, tmp_path):
    """The user level sees the machine's files: there the installed seqlearn is covered by the allowed copy."""
    output = _grade_unblocked(course, wheel_python, tmp_path, "user", _as_another_uid_could)
    assert "isolation level: user" in output, output
    assert re.search(r"honest\s+14/14", output) and re.search(r"unblocked\s+0/14", output), output


# ----------------------------------------------------------------------------- smaller holes


class _Answering:
    """A worker that answers every call with the same wire value (or error)."""

    def __init__(self, answer: dict):
        self.answer = answer

    def request(self, message: dict, deadline: float) -> dict:
        return self.answer

    def close(self) -> None:
        pass


_UNCHANGED = ["list", [["list", []], ["dict", []]]]  # what the call left of its arguments: nothing changed


@pytest.mark.parametrize(
    ("exercise", "answer", "marker"),
    [
        ("count_ngrams", {"ok": True, "result": ["opaque", "LEAKthecatsat"], "after": _UNCHANGED}, "LEAK"),
        (
            "count_ngrams",
            {"ok": False, "error": {"type": "ValueError", "message": "", "line": 3, "function": "LEAKthecatsat"}},
            "LEAK",
        ),
        ("add_k_prob", {"ok": True, "result": ["float", "0.0123456789"], "after": _UNCHANGED}, "123456789"),
    ],
)
def test_hidden_cases_show_nothing_the_students_code_made(exercise, answer, marker):
    """A class, or a raising function, named after the hidden input carried it into the feedback, and so did
    the value a function returned (its input, or a value computed from it)."""
    from seqlearn.grading import ASSIGNMENTS

    checks = ASSIGNMENTS[ASSIGNMENT].CHECKS
    session = _Session()
    session.worker = _Answering(answer)
    visible = TestCell("t", 3.0, ((exercise, "f", False),), f"check_{exercise}(f)")
    hidden = TestCell("t", 3.0, ((exercise, "f", True),), f"check_{exercise}(f, hidden=True)")
    assert marker in sealed_session._run_test(session, visible, checks).output  # visible inputs may be named
    part = sealed_session._run_test(session, hidden, checks)
    assert part.failed and "hidden case" in part.output and marker not in part.output, part.output


def _answer(function: str, prelude: str) -> str:
    """The solution's answer cell of ``function``, which fails its cases when ``prelude`` sets ``_cheated``."""
    (source,) = [c.source for c in _notebook("solution").cells if _meta(c).get("grade_id") == function]
    wrapper = f"\n_{function} = {function}\ndef {function}(*args, **kwargs):\n"
    wrapper += f"    if _cheated:\n        raise RuntimeError()\n    return _{function}(*args, **kwargs)\n"
    return prelude + "\n" + source + wrapper


DEV_WRITE = """
try:
    with open("/dev/filler", "wb") as _f:
        _f.write(b"x" * 2**20)
    _cheated = True
except OSError:
    _cheated = False
"""


@pytest.mark.skipif(os.geteuid() != 0 or not HAS_BWRAP, reason="worker uids of their own need root (and bwrap)")
@pytest.mark.integration
@pytest.mark.slow
def test_the_worker_uids_leave_another_accounts_processes_alone(course):
    """The grader killed every process of the uid it picked, whoever ran it."""
    uid = sealed_sandbox.SLOT_UID_BASE + 256 * (os.getpid() % 4096)  # the first slot's uid of a run from this process
    other = subprocess.Popen(["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "sleep", "120"])
    try:
        time.sleep(0.5)
        _, (result,) = grade_assignment(
            course, ASSIGNMENT, jobs=1, students=["honest"], level="bwrap", limits=LIMITS, write=False
        )
        assert result.score == 14
        assert other.poll() is None, "the grader killed a process it did not start"
    finally:
        other.kill()
        other.wait()


PEAK_GROWTH = """
import resource, sys
from seqlearn.course.sealed import Limits, grade_assignment
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
limits = Limits(timeout=120)  # the time a slow grader takes to read it all
_, (result,) = grade_assignment(sys.argv[1], sys.argv[2], jobs=1, students=[sys.argv[3]], limits=limits, write=False)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024, result.score)
"""


@pytest.mark.integration
@pytest.mark.slow
def test_a_huge_answer_does_not_grow_the_grader(course, tmp_path):
    """An answer of 90 MB (within the worker's codec limits) made the grading process grow by 250 MB."""
    huge = "def count_ngrams(sentences, n):\n    return ['ab'[i % 2] * 1_000_000 for i in range(90)]\n"
    _submit(course, "huge_answer", _with_answer(_notebook("blank"), "count_ngrams", huge))
    command = [sys.executable, "-c", PEAK_GROWTH, str(course), ASSIGNMENT, "huge_answer"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    growth, score = proc.stdout.split()
    assert float(score) == 0
    assert int(growth) < 100 * 2**20, f"the grader grew by {int(growth) / 2**20:.0f} MiB"


# ----------------------------------------------------------------------------- honest work keeps its points

FRACTION = """
from fractions import Fraction
def add_k_prob(context, word, counts, k, vocab_size):
    context = tuple(context)
    history = sum(c for gram, c in counts.items() if gram[:-1] == context)
    return (counts.get((*context, word), 0) + Fraction(k)) / (history + Fraction(k) * vocab_size)
"""


def _quirky(kind: str):
    """The solution as a student might save it, with one quirk nbgrader grades through."""
    notebook = _notebook("solution")
    index = next(i for i, c in enumerate(notebook.cells) if _meta(c).get("grade_id") == "count_ngrams")
    cell = notebook.cells[index]
    if kind == "time_magic":
        cell.source = "%%time\n" + cell.source
    elif kind == "split":  # JupyterLab's split keeps the metadata in both halves (the ids are new)
        first = nbformat.from_dict(cell)
        first.id, first.source = "split-half", "from collections import Counter"
        notebook.cells.insert(index, first)
    elif kind == "copied":  # the answer worked on in a copy of the released cell, below it
        blank = next(c for c in _notebook("blank").cells if _meta(c).get("grade_id") == "count_ngrams")
        notebook.cells.insert(index, nbformat.from_dict({**blank, "id": "the-released-one"}))
    elif kind == "made_markdown":
        notebook.cells[index] = nbformat.from_dict({**cell, "cell_type": "markdown"})
        del notebook.cells[index]["outputs"], notebook.cells[index]["execution_count"]
    elif kind == "fraction":
        notebook = _with_answer(notebook, "add_k_prob", FRACTION)
    elif kind == "written_as_code":
        i = next(i for i, c in enumerate(notebook.cells) if _meta(c).get("grade_id") == "francisco_answer")
        text = "WRITTEN-ANSWER: the continuation count asks how many contexts a word follows."
        notebook.cells[i] = nbformat.v4.new_code_cell(text, metadata=notebook.cells[i].metadata)
    return notebook


QUIRKS = ("time_magic", "split", "copied", "made_markdown", "fraction", "written_as_code")


@pytest.mark.integration
@pytest.mark.slow
def test_quirks_of_honest_notebooks_keep_their_points(course):
    """Each lost points under sealed grading (nbgrader grades them, or refuses loudly); none may be silent."""
    for kind in QUIRKS:
        _submit(course, kind, _quirky(kind))
    _, results = grade_assignment(course, ASSIGNMENT, jobs=2, students=list(QUIRKS), limits=LIMITS)
    scores = {r.student: r.score for r in results}
    assert scores == dict.fromkeys(QUIRKS, 14.0), {r.student: _lost(r) for r in results}
    problems = {r.student: " ".join(r.problems) for r in results}
    assert "in 2 cells" in problems["split"] and "in 2 cells" in problems["copied"], problems
    assert "made a markdown cell" in problems["made_markdown"], problems
    autograded = course / "autograded" / "written_as_code" / ASSIGNMENT / NOTEBOOK
    assert "WRITTEN-ANSWER" in autograded.read_text()  # kept for the formgrader


@pytest.mark.parametrize("view", [lambda x: x[::-1], lambda x: x.T, lambda x: x])
def test_a_view_of_an_input_arrives_with_its_own_values(view):
    """A same-shape view of an argument returned as the answer decoded as the argument itself."""
    import json

    import numpy as np

    from seqlearn.grading.worker import decode, encode

    x = np.arange(9.0).reshape(3, 3)
    sent = encode(view(x), aliases=[x])
    back = decode(json.loads(json.dumps(sent)), aliases=[x])
    assert sent[0] == "alias" and np.array_equal(back, view(x))
    assert (back is x) == (view(x) is x)


@pytest.mark.integration
@pytest.mark.slow
def test_feedback_says_a_written_answer_is_not_graded_yet(course):
    """A full-marks student read "Score: 0.0 / 2.0" under real written answers, as if they had failed."""
    _, _ = grade_assignment(course, ASSIGNMENT, jobs=1, students=["honest"], limits=LIMITS)
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", "--student", "honest")
    page = (course / "feedback" / "honest" / ASSIGNMENT / NOTEBOOK).with_suffix(".html").read_text()
    written = [c for c in _notebook("blank").cells if _meta(c).get("solution") and c.cell_type == "markdown"]
    assert page.count("Not graded yet") == len(written) == 2
