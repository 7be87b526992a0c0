"""Sealed grading (``seqlearn grade``): the cheat suite, equality with nbgrader, the wire format.

The cheat suite grades, in one run on a scratch copy of the course, an honest submission of
01_ngram and one submission per attack: each attack replaces the blank ``count_ngrams`` answer
of the release (the other answers stay blank), and must score 0, with the honest submission
still at full marks and the gradebook holding only the grader's scores afterwards. Attacks that
only a sandbox or a uid of the worker's own stops (reading files by absolute path, writing the
gradebook, signalling the grader, a fork bomb as root) run only at the
levels that stop them (:data:`NEEDS`): with bubblewrap installed, every attack runs.

For every assignment, honest (the solution), blank and partial submissions get the same
per-cell scores from sealed grading as from ``nbgrader autograde``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import nbformat
import numpy as np
import pytest

from seqlearn.course.nbgrader_tools import check_grading, make_course, run_nbgrader, student_submission
from seqlearn.course.sealed import LEVELS, Limits, detect_level, grade_assignment, load_assignment
from seqlearn.course.sealed.plan import build_program
from seqlearn.grading.worker import CodecError, decode, encode

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir() and not p.name.startswith("."))
ATTACKED = "01_ngram"


def graded_points(assignment: str = ATTACKED) -> dict[str, float]:
    """Points of each graded cell of ``assignment``'s source notebook, by cell id (nbgrader's metadata)."""
    nb = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    meta = ((c.id, c.metadata.get("nbgrader", {})) for c in nb.cells)
    return {cell_id: float(m["points"]) for cell_id, m in meta if m.get("grade")}


def feedback_score(scored: float, assignment: str = ATTACKED) -> str:
    """The line a feedback page shows for ``scored`` points of every graded cell's total."""
    return f"Score: {scored:.1f} / {sum(graded_points(assignment).values()):.1f}"


LIMITS = Limits(timeout=10)
HAS_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap (bwrap) is not installed")

DELEGATE = """
import importlib
def count_ngrams(sentences, n):
    return importlib.import_module("seqlearn.ngram.basics").count_ngrams(sentences, n)
"""


def detached_writer(seconds: int) -> str:
    """An answer whose grandchild, detached from the worker (a session of its own), sets every score of the
    gradebook at ``<DB>`` to 100 twice a second for ``seconds``, long after its worker is gone."""
    return f"""
import os, sqlite3, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range({2 * seconds}):
            try:
                con = sqlite3.connect(<DB>, timeout=0.1)
                con.execute("UPDATE grade SET auto_score = 100")
                con.commit()
                con.close()
            except Exception:
                pass
            time.sleep(0.5)
    os._exit(0)
def count_ngrams(sentences, n):
    raise NotImplementedError()
"""


ATTACKS = {
    "stack_frame": """
import sys
def count_ngrams(sentences, n):
    frame = sys._getframe(1)
    while frame is not None:
        if "expected" in frame.f_locals:
            return frame.f_locals["expected"]
        frame = frame.f_back
    raise RuntimeError("no grader frame here")
""",
    "guard_switch": """
import contextvars, threading
def count_ngrams(sentences, n):
    import seqlearn.guard as guard
    guard._student_running.set(False)
    from seqlearn.ngram.basics import count_ngrams as reference
    out = []
    thread = threading.Thread(target=lambda: out.append(reference(sentences, n)))
    thread.start(); thread.join()
    return out[0] if out else contextvars.Context().run(reference, sentences, n)
""",
    "closure_and_exec": """
def count_ngrams(sentences, n):
    import inspect
    from seqlearn.ngram import basics
    try:
        return basics.count_ngrams.__closure__[0].cell_contents(sentences, n)
    except Exception:
        namespace = {}
        exec(inspect.getsource(basics).replace("@reference", ""), namespace)
        return namespace["count_ngrams"](sentences, n)
""",
    "patch_checker": """
import sys, types
try:
    import seqlearn.grading.checks as checks
    checks.FunctionCheck.check = lambda *a, **k: None
    checks.FunctionCheck._first_problem = lambda *a, **k: None
    checks.student_code = __import__("contextlib").nullcontext
except Exception:
    pass
fake = types.ModuleType("seqlearn.grading.ngram")
for _name in ("count_ngrams", "add_k_prob", "perplexity", "continuation_counts", "kn_bigram_prob", "mkn_discounts"):
    setattr(fake, "check_" + _name, lambda *a, **k: None)
sys.modules["seqlearn.grading"] = types.ModuleType("seqlearn.grading")
sys.modules["seqlearn.grading.ngram"] = fake
def count_ngrams(sentences, n):
    return None
""",
    "unguarded_helpers": """
def count_ngrams(sentences, n):
    from seqlearn.ngram.basics import _context_total
    from seqlearn.ngram import counts
    return counts.NGramCounts
""",
    "delegating": DELEGATE,
    "gradebook_sqlite": """
import glob, sqlite3
def _cheat():
    for path in [<DB>, *glob.glob("../../../*.db"), *glob.glob("../*.db")]:
        try:
            con = sqlite3.connect(path)
            con.execute("UPDATE grade SET auto_score = 100")
            con.commit()
        except Exception:
            pass
_cheat()
def count_ngrams(sentences, n):
    _cheat()
    raise NotImplementedError()
""",
    "gradebook_detached": detached_writer(20),
    "corrupted_metadata": None,  # built below: the blank release with broken nbgrader metadata
    "invalid_json": None,  # not a notebook at all
    "oversized_notebook": None,  # 40 MB of metadata
    "os_exit": """
import os
def count_ngrams(sentences, n):
    os._exit(0)
""",
    "os_exit_at_import": """
def count_ngrams(sentences, n):
    raise NotImplementedError()
import os
os._exit(3)
""",
    "fork_bomb": """
import os
def count_ngrams(sentences, n):
    while True:
        try:
            os.fork()
        except OSError:
            pass
""",
    "uninterruptible_loop": """
def count_ngrams(sentences, n):
    while True:
        try:
            while True:
                pass
        except KeyboardInterrupt:
            pass
""",
    "allocate_10gb": """
import numpy as np
def count_ngrams(sentences, n):
    big = bytearray(10 * 2**30)
    return np.ones(10 * 2**30 // 8) if big else None
""",
    "print_50mb": """
def count_ngrams(sentences, n):
    print("x" * 50_000_000)
    raise NotImplementedError()
""",
    "exfiltrate_hidden_input": """
def count_ngrams(sentences, n):
    raise ValueError("LEAK-" + "MARKER " + repr(sentences))
""",
    "huge_result": """
def count_ngrams(sentences, n):
    return list(range(5_000_000))
""",
    "fill_the_disk": """
def count_ngrams(sentences, n):
    for i in range(10_000):
        try:
            with open(f"fill{i}", "wb") as f:
                f.write(b"x" * 2**26)
        except OSError:
            break
    raise NotImplementedError()
""",
    "read_solutions": """
import json
for _path in [<SOLUTIONS>, "../../../solutions/01_ngram/01_ngram.ipynb"]:
    try:
        _nb = json.load(open(_path))
    except Exception:
        continue
    for _cell in _nb["cells"]:
        if _cell["cell_type"] == "code" and _cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(_cell["source"]))
    break
""",
    "read_other_submission": """
import json
_nb = json.load(open(<HONEST>))
for _cell in _nb["cells"]:
    if _cell["cell_type"] == "code" and _cell["metadata"].get("nbgrader", {}).get("solution"):
        exec("".join(_cell["source"]))
""",
    "kill_the_grader": """
import os, signal
def count_ngrams(sentences, n):
    for pid in (os.getppid(), 1):
        try:
            os.kill(pid, signal.SIGKILL)
        except Exception:
            pass
    raise NotImplementedError()
""",
}


NEEDS = {
    "fill_the_disk": ("bwrap",),  # elsewhere only the file size and CPU time are limited
    "read_solutions": ("bwrap",),
    "read_other_submission": ("bwrap",),
    "kill_the_grader": ("bwrap", "user"),
    "gradebook_sqlite": ("bwrap", "user"),
    "gradebook_detached": ("bwrap", "user"),
    "fork_bomb": ("bwrap", "user"),  # as root, only a uid of its own makes the process limit bind
}
"""Attacks that only some isolation levels stop (see seqlearn.course.sealed.LEVELS); the rest, all of them."""


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _answer_ids(notebook) -> list[str]:
    return [_meta(c)["grade_id"] for c in notebook.cells if c.cell_type == "code" and _meta(c).get("solution")]


def _with_answer(notebook, grade_id: str, source: str):
    result = nbformat.from_dict(notebook)
    (cell,) = [c for c in result.cells if _meta(c).get("grade_id") == grade_id]
    cell.source = source.strip("\n")
    return result


def _fill(source: str, paths: dict[str, str]) -> str:
    for key, path in paths.items():
        source = source.replace(f"<{key.upper()}>", repr(path))
    return source


def _corrupted(blank):
    result = nbformat.from_dict(blank)
    for i, cell in enumerate(result.cells):
        cell.metadata["nbgrader"] = {} if i % 2 else "garbage"
    return result


def _write(course: Path, student: str, assignment: str, notebook) -> None:
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (name,) = [p.name for p in (course / "solutions" / assignment).glob("*.ipynb")]
    if isinstance(notebook, str):
        (folder / name).write_text(notebook)
    else:
        nbformat.write(notebook, folder / name)


def _scores(course: Path, assignment: str) -> dict[str, dict[str, float | None]]:
    """Student -> autograded cell -> auto_score, as the gradebook holds them now."""
    from nbgrader.api import Gradebook

    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "seqlearn") as gradebook:
        for submission in gradebook.find_assignment(assignment).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell.cell_type == "code":
                        scores.setdefault(submission.student.id, {})[grade.name] = grade.auto_score
    return scores


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Grade the honest submission and every attack of 01_ngram in one sealed run."""
    course = make_course(ROOT, tmp_path_factory.mktemp("sealed") / "course", [ATTACKED])
    run_nbgrader(course, "generate_assignment", ATTACKED, "--force")
    (name,) = [p.name for p in (course / "solutions" / ATTACKED).glob("*.ipynb")]
    blank = nbformat.read(course / "exercises" / ATTACKED / name, as_version=4)
    solution = student_submission(nbformat.read(course / "solutions" / ATTACKED / name, as_version=4), blank)
    first = _answer_ids(blank)[0]
    paths = {
        "db": str(course / "gradebook.db"),
        "solutions": str(course / "solutions" / ATTACKED / name),
        "honest": str(course / "submitted" / "honest" / ATTACKED / name),
    }
    level = detect_level()
    attacks = {name: source for name, source in ATTACKS.items() if level in NEEDS.get(name, (level,))}
    _write(course, "honest", ATTACKED, solution)
    for attack, source in attacks.items():
        if attack == "corrupted_metadata":
            _write(course, attack, ATTACKED, _corrupted(blank))
        elif attack == "invalid_json":
            _write(course, attack, ATTACKED, '{"cells": [ not json')
        elif attack == "oversized_notebook":
            _write(course, attack, ATTACKED, '{"cells": [], "metadata": {"x": "' + "a" * 40_000_000 + '"}}')
        else:
            _write(course, attack, ATTACKED, _with_answer(blank, first, _fill(source, paths)))
    start = time.perf_counter()
    level, results = grade_assignment(course, ATTACKED, jobs=2, limits=LIMITS)
    seconds = time.perf_counter() - start
    time.sleep(3)  # give a detached process the time to (try to) write the gradebook
    return {
        "course": course,
        "level": level,
        "attacks": sorted(attacks),
        "results": {r.student: r for r in results},
        "scores": _scores(course, ATTACKED),
        "seconds": seconds,
    }


@pytest.mark.slow
def test_the_strongest_level_is_used(attacked):
    assert attacked["level"] == ("bwrap" if HAS_BWRAP else attacked["level"])
    assert attacked["level"] in LEVELS


@pytest.mark.slow
def test_the_honest_submission_keeps_full_marks(attacked):
    honest = attacked["results"]["honest"]
    assert honest.score == honest.max_score > 0, honest.parts
    assert all(score is not None and score > 0 for score in attacked["scores"]["honest"].values() if score is not None)


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_scores_zero(attacked, attack):
    if attack not in attacked["attacks"]:
        pytest.skip(f"{attack} is stopped only at the levels {NEEDS[attack]} (this run: {attacked['level']})")
    result = attacked["results"][attack]
    assert result.score == 0, {g: p.reason for nb in result.parts.values() for g, p in nb.items()}
    stored = attacked["scores"][attack]
    assert all(not score for score in stored.values()), stored  # the gradebook agrees, also after the attack


@pytest.mark.slow
def test_the_gradebook_holds_only_the_graders_scores(attacked):
    for student, cells in attacked["scores"].items():
        assert all(score is None or score <= 3 for score in cells.values()), (student, cells)


@pytest.mark.slow
def test_failures_are_recorded_with_a_reason(attacked):
    results = attacked["results"]
    assert "could not be read" in results["invalid_json"].problems[0]
    assert "larger than 32 MiB" in results["oversized_notebook"].problems[0]
    reasons = {g: p.reason for nb in results["uninterruptible_loop"].parts.values() for g, p in nb.items()}
    assert "timed out" in reasons["count_ngrams_tests"]
    crashed = next(p.reason for nb in results["os_exit"].parts.values() for p in nb.values())
    assert "exited" in crashed or "killed" in crashed
    raised = next(iter(results["stack_frame"].parts.values()))["count_ngrams_tests"].output
    assert re.search(r"raised RuntimeError: \(the sealed grader does not show .*\) \(line 8 of count_ngrams\)", raised)


@pytest.mark.slow
def test_no_student_text_reaches_the_outputs(attacked):
    course = attacked["course"]
    for student in attacked["attacks"]:
        folder = course / "autograded" / student / ATTACKED
        for path in folder.glob("*.ipynb"):
            text = path.read_text()
            assert "LEAK-MARKER" not in text
            assert len(text) < 2_000_000, f"{path} is {len(text)} characters"
    delegated = attacked["results"]["delegating"]
    output = delegated.parts[next(iter(delegated.parts))]["count_ngrams_tests"].output
    assert "references refuse to run during grading" in output


@pytest.mark.slow
def test_the_attack_suite_stays_quick(attacked):
    assert attacked["seconds"] < 240


@pytest.mark.slow
def test_feedback_is_generated_from_the_sealed_results(attacked):
    course = attacked["course"]
    run_nbgrader(course, "generate_feedback", ATTACKED, "--force", "--student", "honest")
    page = (course / "feedback" / "honest" / ATTACKED / f"{ATTACKED}.ipynb").with_suffix(".html").read_text()
    assert feedback_score(14) in page


# ----------------------------------------------------------------------------- equality with nbgrader


def _partial(solution, blank):
    result = nbformat.from_dict(solution)
    released = {_meta(c).get("grade_id"): c for c in blank.cells}
    ids = _answer_ids(solution)
    for i, cell in enumerate(result.cells):
        grade_id = _meta(cell).get("grade_id")
        if grade_id in ids[::2]:
            result.cells[i] = released[grade_id]
        elif grade_id == ids[1]:
            name = cell.source.split("def ", 1)[1].split("(", 1)[0]
            cell.source = f"def {name}(*args, **kwargs):\n    return None"
    return result


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_honest_blank_and_partial_scores_equal_nbgraders(assignment, tmp_path):
    (path,) = sorted((ROOT / "solutions" / assignment).glob("*.ipynb"))
    blank = nbformat.read(ROOT / "exercises" / assignment / path.name, as_version=4)
    solution = student_submission(nbformat.read(path, as_version=4), blank)
    extra = {"partial": {path.name: _partial(solution, blank)}}
    report = check_grading(ROOT, assignment, timeout=20, extra_submissions=extra, workdir=tmp_path / "course")
    # nbgrader graded the source notebook itself; the sealed grader refuses one (it holds hidden tests)
    nbformat.write(solution, tmp_path / "course" / "submitted" / "solution" / assignment / path.name)
    _, results = grade_assignment(tmp_path / "course", assignment, jobs=2, write=False, limits=LIMITS)
    sealed = {r.student: {g: p.score for g, p in r.parts[path.name].items()} for r in results}
    for student in ("solution", "blank", "delegating", "partial"):
        nbgrader = {cell: score for cell, (score, _) in report.results[student].cell_scores.items()}
        assert sealed[student] == nbgrader, student
    partial = sum(sealed["partial"].values())
    assert 0 < partial < sum(sealed["solution"].values())


# ----------------------------------------------------------------------------- the program and the wire format


def test_the_program_takes_locked_cells_from_the_release_and_never_tests():
    (plan, *_) = load_assignment(ROOT, ATTACKED)
    student = json.loads(json.dumps(plan.release))
    for cell in student["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and not meta.get("solution"):
            cell["source"] = "raise SystemExit('tampered')"
    student["cells"].append({"cell_type": "code", "metadata": {}, "source": "added = 1", "outputs": []})
    steps = build_program(plan, student)
    sources = [payload for op, _, payload in steps if op == "exec"]
    assert all("tampered" not in s for s in sources)
    assert not any("check_" in s for s in sources)
    assert sources[-1].strip() == "added = 1"
    captures = [payload for op, _, payload in steps if op == "capture"]
    assert ["count_ngrams"] in captures and len(captures) == len(plan.tests)


def test_cell_sources_as_lists_keep_only_their_strings():
    (plan, *_) = load_assignment(ROOT, ATTACKED)
    student = json.loads(json.dumps(plan.release))
    student["cells"].append({"cell_type": "code", "metadata": {}, "source": ["a = 1\n", 7, None, "b = 2"]})
    exec_sources = [payload for op, _, payload in build_program(plan, student) if op == "exec"]
    assert exec_sources[-1].strip() == "a = 1\nb = 2"


@pytest.mark.parametrize("bad", [[], {"cells": 3}, {"cells": [1]}, "text"])
def test_a_submission_that_is_not_a_notebook_is_refused(bad):
    (plan, *_) = load_assignment(ROOT, ATTACKED)
    with pytest.raises(ValueError, match=r"notebook|cell"):
        build_program(plan, bad)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2**80,
        0.1,
        float("inf"),
        "naïve",
        [1, (2, "a")],
        {"a": [1.5]},
        Counter({("the", "cat"): 2}),
        {1: 2, (3, 4): None},
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.array([0.5, np.nan]),
        np.float32(1.25),
        Fraction(-7, 3),
    ],
)
def test_the_codec_round_trips(value):
    back = decode(json.loads(json.dumps(encode(value))))
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value, equal_nan=True)
    elif isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value


def test_the_codec_round_trips_tensors():
    torch = pytest.importorskip("torch")
    value = torch.arange(4, dtype=torch.float32)
    back = decode(json.loads(json.dumps(encode(value))))
    assert isinstance(back, torch.Tensor) and back.dtype == torch.float32 and torch.equal(back, value)


@pytest.mark.parametrize(
    "wire",
    [
        ["pickle", "gASVAAAAAAAAAAB9lC4="],
        ["ndarray", "not base64!"],
        ["int", "12x"],
        ["dict", [[["list", []], ["int", "1"]]]],  # an unhashable key
        ["tensor", "object", ""],
        {"a": 1},
        "bare string",
        ["float", "1e400000000000000000000000000000000000000000"],
    ],
)
def test_the_codec_rejects_malformed_or_unsafe_wire_values(wire):
    with pytest.raises(CodecError):
        decode(wire)


def test_the_codec_refuses_object_arrays_and_too_deep_values():
    with pytest.raises(CodecError):
        decode(["ndarray", _object_npy()])
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(CodecError):
        encode(deep)


def _object_npy() -> str:
    import base64
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return base64.b64encode(buffer.getvalue()).decode()


def test_unsupported_results_arrive_as_opaque_type_names():
    class Sneaky:
        def __eq__(self, other):
            return True

    back = decode(encode(Sneaky()))
    assert type(back).__name__ == "Sneaky" and back != 1 and "Sneaky" in repr(back)


@pytest.mark.slow
def test_the_weakest_level_grades_the_same(attacked):
    students = ["honest", "delegating", "corrupted_metadata"]
    level, results = grade_assignment(
        attacked["course"], ATTACKED, jobs=1, students=students, level="rlimits", limits=LIMITS, write=False
    )
    assert level == "rlimits"
    assert {r.student: r.score for r in results} == {s: attacked["results"][s].score for s in students}


# ----------------------------------------------------------------------------- the README's sealed workflow


def _block(marker: str) -> list[str]:
    readme = (ROOT / "README.md").read_text()
    assert marker in readme, f"README.md lost the {marker} block"
    return re.search(r"```bash\n(.*?)```", readme[readme.index(marker) :], re.S).group(1).splitlines()


def _command(line: str) -> str:
    return line if line.startswith("# students:") else line.partition("#")[0].strip()


def test_the_sealed_workflow_is_the_instructor_workflow_with_seqlearn_grade():
    sealed = [_command(line) for line in _block("<!-- sealed-workflow -->")]
    plain = [_command(line) for line in _block("<!-- instructor-workflow -->")]
    assert sealed == [("seqlearn grade 01_ngram" if c == "nbgrader autograde 01_ngram" else c) for c in plain]


@pytest.mark.slow
def test_seqlearn_grade_then_generate_feedback(tmp_path):
    course = make_course(ROOT, tmp_path / "course", [ATTACKED])
    run_nbgrader(course, "generate_assignment", ATTACKED, "--force")
    (name,) = [p.name for p in (course / "solutions" / ATTACKED).glob("*.ipynb")]
    blank = nbformat.read(course / "exercises" / ATTACKED / name, as_version=4)
    _write(
        course,
        "honest",
        ATTACKED,
        student_submission(nbformat.read(course / "solutions" / ATTACKED / name, as_version=4), blank),
    )
    _write(course, "blank", ATTACKED, blank)
    seqlearn = Path(sys.executable).with_name("seqlearn")
    proc = subprocess.run(
        [str(seqlearn), "grade", ATTACKED, "--jobs", "2"], cwd=course, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "isolation level: " in proc.stdout and re.search(r"honest\s+14/14", proc.stdout), proc.stdout
    assert re.search(r"blank\s+0/14", proc.stdout)
    run_nbgrader(course, "generate_feedback", ATTACKED, "--force")
    pages = {
        s: (course / "feedback" / s / ATTACKED / name).with_suffix(".html").read_text() for s in ("honest", "blank")
    }
    assert feedback_score(14) in pages["honest"] and feedback_score(0) in pages["blank"]
    assert "(hidden tests: not shown)" in pages["blank"]


# ----------------------------------------------------------------------------- what the messages name, sealed too

QUALITY = {
    "clip_grad_norm": {
        "aliasing": """
import numpy as np
def clip_grad_norm(grads, threshold):
    items = list(grads.values()) if isinstance(grads, dict) else list(grads)
    norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in items)))
    if norm <= threshold:
        return grads, norm
    if isinstance(grads, dict):
        return {k: g * (threshold / norm) for k, g in grads.items()}, norm
    return [g * (threshold / norm) for g in grads], norm
""",
        "mutating": """
import numpy as np
def clip_grad_norm(grads, threshold):
    items = list(grads.values()) if isinstance(grads, dict) else list(grads)
    norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in items)))
    for g in items:
        g *= min(1.0, threshold / norm)
    if isinstance(grads, dict):
        return {k: g.copy() for k, g in grads.items()}, norm
    return [g.copy() for g in items], norm
""",
    },
}
EXPECTED_PROBLEM = {
    "aliasing": "returned an array of its argument 'grads' itself",
    "mutating": "changed its argument 'grads' in place",
    "float32": "whose lower precision makes the values differ",
}


@pytest.mark.slow
def test_sealed_messages_name_dtype_mutation_and_aliasing(tmp_path):
    assignment = "03_rnn_bptt"
    course = make_course(ROOT, tmp_path / "course", [assignment])
    run_nbgrader(course, "generate_assignment", assignment, "--force")
    (name,) = [p.name for p in (course / "solutions" / assignment).glob("*.ipynb")]
    source_notebook = nbformat.read(course / "solutions" / assignment / name, as_version=4)
    solution = student_submission(
        source_notebook, nbformat.read(course / "exercises" / assignment / name, as_version=4)
    )
    for kind, source in QUALITY["clip_grad_norm"].items():
        _write(course, kind, assignment, _with_answer(solution, "clip_grad_norm", source))
    (forward,) = [c.source for c in solution.cells if _meta(c).get("grade_id") == "elman_forward"]
    float32 = forward.replace("def elman_forward(", "def _elman_forward(") + (
        "\n\ndef elman_forward(*args, **kwargs):\n"
        "    args = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]\n"
        "    return tuple(r.astype(np.float32) for r in _elman_forward(*args, **kwargs))\n"
    )
    _write(course, "float32", assignment, _with_answer(solution, "elman_forward", float32))
    _, results = grade_assignment(course, assignment, jobs=2, write=False, limits=LIMITS)
    for result in results:
        parts = result.parts[name]
        failed = {g: p.output for g, p in parts.items() if p.failed}
        part = "elman_forward_tests" if result.student == "float32" else "clip_grad_norm_tests"
        assert list(failed) == [part], (result.student, failed)
        assert EXPECTED_PROBLEM[result.student] in failed[part], failed[part]


# ----------------------------------------------------------------------------- nbgrader's "checksum changed"


@pytest.mark.slow
def test_autograde_warns_about_changed_cells_only_when_a_student_changed_one(tmp_path):
    course = make_course(ROOT, tmp_path / "course", [ATTACKED])
    run_nbgrader(course, "generate_assignment", ATTACKED, "--force")
    (name,) = [p.name for p in (course / "solutions" / ATTACKED).glob("*.ipynb")]
    blank = nbformat.read(course / "exercises" / ATTACKED / name, as_version=4)
    _write(course, "honest", ATTACKED, blank)
    tampered = nbformat.from_dict(blank)
    (test_cell,) = [c for c in tampered.cells if _meta(c).get("grade_id") == "perplexity_tests"]
    test_cell.source = "pass  # no test here"
    _write(course, "tamperer", ATTACKED, tampered)
    logs = {}
    for student in ("honest", "tamperer"):
        proc = run_nbgrader(course, "autograde", ATTACKED, "--force", "--student", student)
        logs[student] = proc.stdout + proc.stderr
    assert "has changed" not in logs["honest"], logs["honest"][-3000:]
    changed = re.findall(r"Attribute 'checksum' for cell (\w+) has changed", logs["tamperer"])
    assert changed == ["perplexity_tests"], logs["tamperer"][-3000:]
    autograded = nbformat.read(course / "autograded" / "honest" / ATTACKED / name, as_version=4)
    hidden = [c for c in autograded.cells if "BEGIN HIDDEN TESTS" in c.source]
    tests = [
        c
        for c in nbformat.read(ROOT / "solutions" / ATTACKED / name, as_version=4).cells
        if "BEGIN HIDDEN TESTS" in c.source
    ]
    assert len(hidden) == len(tests) > 0  # every test cell got its hidden tests back


@pytest.mark.slow
def test_a_notebook_has_a_total_time_limit(attacked):
    course = attacked["course"]
    (path,) = sorted((course / "exercises" / ATTACKED).glob("*.ipynb"))
    slow = nbformat.read(path, as_version=4)
    slow.cells[0:0] = [nbformat.v4.new_code_cell("import time\ntime.sleep(1.5)") for _ in range(4)]
    _write(course, "slow_cells", ATTACKED, slow)
    start = time.perf_counter()
    _, (result,) = grade_assignment(
        course, ATTACKED, jobs=1, students=["slow_cells"], limits=Limits(timeout=2, notebook_seconds=3), write=False
    )
    assert time.perf_counter() - start < 30
    reasons = {p.reason for nb in result.parts.values() for p in nb.values()}
    assert reasons == {"the notebook ran past its total time limit (3 s)"}, reasons


@pytest.mark.slow
def test_a_test_cell_sees_only_the_cells_above_it(attacked):
    """As in nbgrader's kernel: a helper defined further down does not exist yet when the test runs."""
    course = attacked["course"]
    (path,) = sorted((course / "solutions" / ATTACKED).glob("*.ipynb"))
    solution = student_submission(
        nbformat.read(path, as_version=4), nbformat.read(course / "exercises" / ATTACKED / path.name, as_version=4)
    )
    (answer,) = [c.source for c in solution.cells if _meta(c).get("grade_id") == "count_ngrams"]
    late = _with_answer(solution, "count_ngrams", "def count_ngrams(sentences, n):\n    return _helper(sentences, n)")
    late.cells.append(nbformat.v4.new_code_cell(answer.replace("def count_ngrams(", "def _helper(")))
    _write(course, "late_helper", ATTACKED, late)
    _, (result,) = grade_assignment(course, ATTACKED, jobs=1, students=["late_helper"], limits=LIMITS, write=False)
    parts = result.parts[path.name]
    assert [g for g, p in parts.items() if p.failed] == ["count_ngrams_tests"]
    assert "raised NameError" in parts["count_ngrams_tests"].output


def test_settings_come_from_jupyters_config_directories_then_the_course(tmp_path, monkeypatch):
    """As nbgrader loads them: a hub's settings for every course (here the user's directory), the
    course's own overriding them; Execute.timeout over the ExecutePreprocessor.timeout it inherits."""
    from seqlearn.course.sealed.gradebook import _course_timeout, _db

    user, course = tmp_path / "user", tmp_path / "course"
    user.mkdir()
    course.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    assert _course_timeout(course) == Limits.timeout
    assert _db(course) == (f"sqlite:///{course / 'gradebook.db'}", "default_course")
    (user / "nbgrader_config.py").write_text(
        "c = get_config()\nc.Execute.timeout = 7\nc.CourseDirectory.db_url = 'sqlite:////srv/gradebook.db'\n"
    )
    assert _course_timeout(course) == 7.0
    assert _db(course) == ("sqlite:////srv/gradebook.db", "default_course")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.ExecutePreprocessor.timeout = 9\nc.CourseDirectory.course_id = 'ml101'\n"
    )
    assert _course_timeout(course) == 7.0
    assert _db(course) == ("sqlite:////srv/gradebook.db", "ml101")
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = 11\n")
    assert _course_timeout(course) == 11.0
