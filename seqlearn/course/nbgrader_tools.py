"""nbgrader tooling for instructors: regenerate ``exercises/``, check the grading round trip, hide hidden tests.

* :func:`generate_exercises` runs ``nbgrader generate_assignment`` on ``solutions/NN_slug``
  in a temporary course directory and copies the release into ``exercises/NN_slug``, so
  no ``gradebook.db`` or log is left in the repository (``make exercises``,
  ``seqlearn exercises``).
* :func:`check_grading` grades three submissions of an assignment for real (generate,
  autograde, feedback) in a temporary course: the solution must earn every autograded
  point, the blank release none, and an answer that delegates every function to seqlearn's
  reference none, with the guard's explanation in its output. It also checks that
  ``exercises/`` matches a fresh release and that no feedback shows hidden tests
  (``seqlearn check-grading``).
* :class:`HideHiddenTests` is the feedback preprocessor that ``nbgrader_config.py`` adds to
  ``GenerateFeedback``. Stock nbgrader puts the hidden tests back into autograded
  notebooks and shows them in the feedback; this preprocessor replaces each
  ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` region by a placeholder line and,
  in those cells, keeps only the error output, reduced to its last line (the grader's
  message, which never quotes hidden inputs), dropping everything the cell printed or
  displayed (a student's function could print its hidden input). :class:`WrapLongLines`
  makes the feedback page wrap long output lines.

nbgrader runs in a subprocess (``python -m nbgrader`` of the running interpreter), with the
course's own ``nbgrader_config.py``, which a temporary course copies. Which references an
assignment is graded against comes from :data:`seqlearn.grading.ASSIGNMENTS`; the
delegating submission is built from it.
"""

from __future__ import annotations

import ast
import contextlib
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbgrader import utils as nbgrader_utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, GetGrades, OverwriteCells
from traitlets import Bool, Unicode
from traitlets.config.loader import PyFileConfigLoader

from ..grading import ASSIGNMENTS
from ..guard import REFUSAL

__all__ = [
    "HideHiddenTests",
    "MarkPendingGrades",
    "RestoreHiddenTests",
    "GradingReport",
    "NbgraderResult",
    "nbgrader_command",
    "run_nbgrader",
    "course_directories",
    "make_course",
    "generate_exercises",
    "release_differences",
    "delegating_notebook",
    "student_submission",
    "hidden_test_lines",
    "html_text",
    "check_grading",
]

CONFIG_FILE = "nbgrader_config.py"
STANDARD_SUBMISSIONS = ("solution", "blank", "delegating")
_VOLATILE_METADATA = ("kernelspec", "language_info", "widgets")


# ----------------------------------------------------------------------------- feedback


class MarkPendingGrades(GetGrades):
    """Feedback preprocessor: nbgrader's ``GetGrades``, which also says under a manually graded answer
    that nobody has graded yet that its score is pending (it reads 0 until the instructor grades it)."""

    pending = Unicode(
        "Not graded yet: your instructor grades this answer by hand; until then its score reads 0.",
        help="The comment shown under a manually graded answer that has no manual score yet.",
    ).tag(config=True)

    def _get_score(self, cell, resources) -> None:
        super()._get_score(cell, resources)
        if not nbgrader_utils.is_solution(cell) or cell.metadata.nbgrader.get("comment"):
            return
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id
        )
        if grade.needs_manual_grade and grade.manual_score is None:
            cell.metadata.nbgrader["comment"] = self.pending


class HideHiddenTests(ClearHiddenTests):
    """Feedback preprocessor: hide hidden-test regions and everything those cells printed.

    Uses the same delimiters as nbgrader's ``ClearHiddenTests`` (configurable there). A
    region without its end delimiter hides the rest of the cell.
    """

    placeholder = Unicode(
        "# (hidden tests: not shown)",
        help="The line that replaces a hidden-test region.",
    ).tag(config=True)
    trusted_error = Unicode(
        "CheckFailure",
        help="The error whose message is kept (the grader's: it never quotes hidden inputs).",
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code":
            return cell, resources
        source, hidden = self._hide_regions(cell.source)
        if hidden:
            cell.source = source
            cell.outputs = [self._scrubbed(out) for out in cell.outputs if out.output_type == "error"]
        return cell, resources

    def _hide_regions(self, source: str) -> tuple[str, bool]:
        """``source`` with each hidden region replaced by the placeholder; whether any was found."""
        kept, inside, found = [], False, False
        for line in source.split("\n"):
            if self.begin_test_delimeter in line and not inside:
                indent = line[: len(line) - len(line.lstrip())]
                kept.append(indent + self.placeholder)
                inside = found = True
            elif self.end_test_delimeter in line and inside:
                inside = False
            elif not inside:
                kept.append(line)
        return "\n".join(kept), found

    def _scrubbed(self, output: NotebookNode) -> NotebookNode:
        """An error output reduced to ``ename: evalue`` (``ename`` alone unless it is the grader's)."""
        text = f"{output.ename}: {output.evalue}" if output.ename == self.trusted_error else output.ename
        return nbformat.v4.new_output("error", ename=output.ename, evalue="", traceback=[text])


class RestoreHiddenTests(OverwriteCells):
    """nbgrader's ``OverwriteCells`` for ``Autograde``, without a false "checksum changed" per test cell.

    The gradebook keeps each locked cell as in the source notebook, hidden tests included, and
    stock ``OverwriteCells`` compares the submitted cell with it: every test cell with hidden
    tests of every honest submission "has changed" (the release lacks its hidden tests) and is
    reported, which drowns real tampering. Here a submitted cell that is exactly the released
    version of its source cell (the source with its hidden-test regions removed, as
    ``generate_assignment`` makes it) gets its hidden tests back first; any other change is
    reported and overwritten as before.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") if isinstance(cell.metadata, dict) else None
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source = None
            if source is not None and source.locked and cell.source == _released_source(source.source):
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)


def _released_source(source: str) -> str:
    """``source`` as ``generate_assignment`` releases it: hidden-test regions removed."""
    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class WrapLongLines(Preprocessor):
    """Feedback pages wrap long output lines (a hint, a long array) at the page's edge.

    nbgrader's feedback template shows outputs in ``<pre>`` blocks that keep each line whole,
    so a long line runs off the page. ``nbgrader_config.py`` adds this preprocessor to
    ``GenerateFeedback`` after ``CSSHTMLHeaderPreprocessor``, whose CSS list it extends.
    """

    css = "pre { white-space: pre-wrap; overflow-wrap: anywhere; }"
    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled.").tag(config=True)

    def preprocess(self, nb, resources):
        resources.setdefault("inlining", {}).setdefault("css", []).append(self.css)
        return nb, resources


def html_text(page: str) -> str:
    """The text of an HTML page: tags removed, entities decoded (what a reader can see)."""
    without_code = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", without_code))


def hidden_test_lines(
    notebook: NotebookNode, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS"
) -> list[str]:
    """The non-blank lines inside the hidden-test regions of ``notebook`` (delimiters included)."""
    lines, inside = [], False
    for cell in notebook.cells:
        for line in cell.source.split("\n") if cell.cell_type == "code" else ():
            inside = inside or begin in line
            if inside and line.strip():
                lines.append(line.strip())
            inside = inside and end not in line
    return lines


# ----------------------------------------------------------------------------- running nbgrader


def nbgrader_command(*args: str) -> list[str]:
    """The command line running nbgrader of this interpreter with ``args``."""
    return [sys.executable, "-m", "nbgrader", *args]


def _nbgrader_env() -> dict[str, str]:
    """The environment with this interpreter's scripts first on PATH (nbgrader runs ``alembic`` from there)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_nbgrader(course_dir, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader *args`` in ``course_dir``; ``RuntimeError`` with its log tail if it fails."""
    proc = subprocess.run(nbgrader_command(*args), cwd=course_dir, capture_output=True, text=True, env=_nbgrader_env())
    if proc.returncode != 0:
        log = (proc.stdout + proc.stderr).strip().splitlines()
        raise RuntimeError(f"`nbgrader {' '.join(args)}` failed (exit {proc.returncode}):\n" + "\n".join(log[-30:]))
    return proc


def course_directories(root) -> tuple[str, str]:
    """``(source_directory, release_directory)`` from the course's ``nbgrader_config.py``."""
    root = Path(root)
    if not (root / CONFIG_FILE).is_file():
        raise FileNotFoundError(f"no {CONFIG_FILE} in {root}: pass the course root (the repository root)")
    config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    return config.CourseDirectory.source_directory, config.CourseDirectory.release_directory


def _assignments(root: Path, source: str, assignments) -> list[str]:
    available = sorted(p.name for p in (root / source).iterdir() if p.is_dir() and not p.name.startswith("."))
    if assignments is None:
        return available
    if isinstance(assignments, str):
        raise TypeError("assignments must be a list of names, not a str")
    missing = [a for a in assignments if a not in available]
    if missing:
        raise ValueError(f"no assignment(s) {missing} in {root / source} (available: {available})")
    return list(assignments)


def make_course(root, workdir, assignments) -> Path:
    """Copy the course config and the sources of ``assignments`` from ``root`` into ``workdir``."""
    root, workdir = Path(root), Path(workdir)
    source, _ = course_directories(root)
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / CONFIG_FILE, workdir / CONFIG_FILE)
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc")
    for assignment in _assignments(root, source, assignments):
        shutil.copytree(root / source / assignment, workdir / source / assignment, ignore=ignore, dirs_exist_ok=True)
    return workdir


def _replace_tree(src: Path, dst: Path) -> list[Path]:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return sorted(p for p in dst.rglob("*") if p.is_file())


def generate_exercises(root, assignments=None) -> list[Path]:
    """Regenerate ``exercises/<assignment>`` from ``solutions/<assignment>`` with nbgrader.

    Parameters
    ----------
    root : path
        The course root (holding ``nbgrader_config.py``).
    assignments : list of str, optional
        Assignment names (default: every directory of ``solutions/``).

    Returns
    -------
    list of Path
        The files written.
    """
    root = Path(root)
    source, release = course_directories(root)
    names = _assignments(root, source, assignments)
    written = []
    with tempfile.TemporaryDirectory(prefix="seqlearn-course-") as tmp:
        course = make_course(root, tmp, names)
        for assignment in names:
            run_nbgrader(course, "generate_assignment", assignment, "--force")
            written += _replace_tree(course / release / assignment, root / release / assignment)
    return written


def _normalized(notebook: NotebookNode) -> NotebookNode:
    data = nbformat.from_dict(notebook)
    for key in _VOLATILE_METADATA:
        data.metadata.pop(key, None)
    return data


def release_differences(expected_dir, actual_dir) -> list[str]:
    """How two release directories differ, ignoring volatile notebook metadata (kernel, language versions).

    Returns an empty list when they agree: same files, equal non-notebook files, and
    notebooks equal cell by cell (source, outputs, metadata including nbgrader's) with
    ``kernelspec``, ``language_info`` and ``widgets`` notebook metadata ignored.
    """
    expected_dir, actual_dir = Path(expected_dir), Path(actual_dir)
    files = {p.relative_to(d) for d in (expected_dir, actual_dir) if d.exists() for p in d.rglob("*") if p.is_file()}
    problems = []
    for rel in sorted(files):
        a, b = expected_dir / rel, actual_dir / rel
        if not (a.exists() and b.exists()):
            problems.append(f"{rel}: only in {expected_dir if a.exists() else actual_dir}")
        elif rel.suffix == ".ipynb":
            problems += _notebook_differences(rel, nbformat.read(a, as_version=4), nbformat.read(b, as_version=4))
        elif a.read_bytes() != b.read_bytes():
            problems.append(f"{rel}: contents differ")
    return problems


def _notebook_differences(rel, expected_notebook: NotebookNode, actual_notebook: NotebookNode) -> list[str]:
    expected, actual = _normalized(expected_notebook), _normalized(actual_notebook)
    if len(expected.cells) != len(actual.cells):
        return [f"{rel}: {len(expected.cells)} cells vs {len(actual.cells)}"]
    pairs = enumerate(zip(expected.cells, actual.cells))
    problems = [f"{rel}: cell {i} ({e.get('id', '?')}) differs" for i, (e, a) in pairs if e != a]
    if expected.metadata != actual.metadata:
        problems.append(f"{rel}: notebook metadata differs")
    return problems


# ----------------------------------------------------------------------------- submissions


def _is_solution_code(cell: NotebookNode) -> bool:
    return cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution", False)


def _defined_functions(source: str) -> list[str]:
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]


SOLUTION_DELIMITERS = ("### BEGIN SOLUTION", "### END SOLUTION")
"""nbgrader's default delimiters of solution code (``ClearSolutions.begin_solution_delimeter`` and end)."""


def student_submission(source: NotebookNode, release: NotebookNode) -> NotebookNode:
    """The release notebook answered with the source's answers: what a student who wrote them submits.

    Each answer cell (nbgrader ``solution``) of ``release`` takes the source cell's text of the
    same grade id, without nbgrader's solution delimiters; every other cell stays as released
    (no hidden tests, no delimiters: a submission holding them is refused by the sealed grader).
    """
    answers = {
        meta["grade_id"]: cell.source
        for cell in source.cells
        if (meta := cell.metadata.get("nbgrader", {})).get("solution") and "grade_id" in meta
    }
    result = nbformat.from_dict(release)
    for cell in result.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            lines = answers[grade_id].split("\n")
            cell.source = "\n".join(line for line in lines if line.strip() not in SOLUTION_DELIMITERS)
    return result


def delegating_notebook(notebook: NotebookNode, assignment: str) -> NotebookNode:
    """A copy of ``notebook`` whose solution cells only call seqlearn's references.

    Every function defined in a solution cell that ``assignment`` grades (see
    :data:`seqlearn.grading.ASSIGNMENTS`) is replaced by a wrapper calling its reference.
    """
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"no graded exercises for assignment {assignment!r}; known: {sorted(ASSIGNMENTS)}")
    checks = ASSIGNMENTS[assignment].CHECKS
    result = nbformat.from_dict(notebook)
    for cell in result.cells:
        if _is_solution_code(cell):
            names = [n for n in _defined_functions(cell.source) if n in checks]
            cell.source = "\n".join(_wrapper(n, checks[n].reference) for n in names) or cell.source
    return result


def _wrapper(name: str, reference) -> str:
    return (
        f"def {name}(*args, **kwargs):\n"
        f"    import importlib\n"
        f"    return importlib.import_module({reference.__module__!r}).{reference.__name__}(*args, **kwargs)\n"
    )


def _standard_submissions(root: Path, course: Path, assignment: str) -> dict[str, dict[str, NotebookNode]]:
    source, release = course_directories(root)
    solution = {p.name: nbformat.read(p, as_version=4) for p in sorted((course / source / assignment).glob("*.ipynb"))}
    blank = {name: nbformat.read(course / release / assignment / name, as_version=4) for name in solution}
    delegating = {name: delegating_notebook(nb, assignment) for name, nb in blank.items()}
    return {"solution": solution, "blank": blank, "delegating": delegating}


def _write_submissions(course: Path, assignment: str, submissions: Mapping[str, Mapping[str, NotebookNode]]) -> None:
    for student, notebooks in submissions.items():
        if not re.fullmatch(r"[A-Za-z0-9_-]+", student):
            raise ValueError(f"student ids must be letters, digits, '_' or '-', got {student!r}")
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, notebook in notebooks.items():
            nbformat.write(notebook, folder / name)


# ----------------------------------------------------------------------------- results


@dataclass
class NbgraderResult:
    """How nbgrader graded one submission (``nbgrader autograde``, read from its gradebook and files;
    the sealed grader's result is :class:`seqlearn.course.sealed.SealedResult`).

    Attributes
    ----------
    student : str
    auto_score, auto_max : float
        Points earned and available in autograded test cells.
    manual_max : float
        Points of the manually graded answers (not included in ``auto_score``).
    cell_scores : dict
        Autograded cell id -> (score, max points).
    outputs : dict
        Autograded cell id -> the text its execution produced (errors and prints).
    autograded, feedback : dict
        Notebook name -> path of its autograded notebook / feedback HTML.
    """

    student: str
    auto_score: float
    auto_max: float
    manual_max: float
    cell_scores: dict[str, tuple[float, float]]
    outputs: dict[str, str]
    autograded: dict[str, Path]
    feedback: dict[str, Path]


def _output_text(output: NotebookNode) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join([f"{output.ename}: {output.evalue}", *output.traceback])
    return str(output.get("data", {}).get("text/plain", ""))


def _read_result(course: Path, assignment: str, student: str, sources: Mapping[str, NotebookNode]) -> NbgraderResult:
    from nbgrader.api import Gradebook

    result = NbgraderResult(student, 0.0, 0.0, 0.0, {}, {}, {}, {})
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name, source in sources.items():
            notebook_id = Path(name).stem
            autograded = course / "autograded" / student / assignment / name
            executed = nbformat.read(autograded, as_version=4)
            outputs = {c.metadata.get("nbgrader", {}).get("grade_id"): c.get("outputs", []) for c in executed.cells}
            result.autograded[name] = autograded
            result.feedback[name] = course / "feedback" / student / assignment / f"{notebook_id}.html"
            for cell in source.cells:
                meta = cell.metadata.get("nbgrader", {})
                if not meta.get("grade"):
                    continue
                if cell.cell_type != "code" or meta.get("solution"):
                    result.manual_max += meta["points"]
                    continue
                grade = gradebook.find_grade(meta["grade_id"], notebook_id, assignment, student)
                score = grade.auto_score or 0.0
                result.cell_scores[meta["grade_id"]] = (score, meta["points"])
                result.outputs[meta["grade_id"]] = "\n".join(_output_text(o) for o in outputs.get(meta["grade_id"], []))
                result.auto_score += score
                result.auto_max += meta["points"]
    return result


@dataclass
class GradingReport:
    """Outcome of :func:`check_grading`: per-submission results and the problems found.

    ``ok`` is true when ``problems`` is empty. ``course_dir`` is the course the round trip
    ran in when it was kept (``workdir`` given), else ``None``.
    """

    assignment: str
    results: dict[str, NbgraderResult]
    problems: list[str] = field(default_factory=list)
    course_dir: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        lines = [f"{self.assignment}: grading round trip {'OK' if self.ok else 'FAILED'}"]
        for student, r in self.results.items():
            points = f"{r.auto_score:g}/{r.auto_max:g} autograded points (+{r.manual_max:g} graded by hand)"
            lines.append(f"  {student:<12} {points}")
        lines += [f"  problem: {p}" for p in self.problems]
        return "\n".join(lines)


def _problems(report: GradingReport, root: Path, course: Path, sources: Mapping[str, NotebookNode]) -> list[str]:
    results, problems = report.results, []
    solution, blank, delegating = (results[s] for s in STANDARD_SUBMISSIONS)
    if solution.auto_max == 0:
        problems.append("the assignment has no autograded test cells")
    failing = [cell for cell, (score, points) in solution.cell_scores.items() if score < points]
    if failing:
        problems.append(f"the solution loses points in {failing}")
    if blank.auto_score != 0:
        problems.append(f"the blank release scores {blank.auto_score:g}, not 0")
    if delegating.auto_score != 0:
        problems.append(f"the delegating answer scores {delegating.auto_score:g}, not 0")
    untold = [cell for cell, text in delegating.outputs.items() if REFUSAL not in text]
    if untold:
        problems.append(f"the delegating answer is not told why it fails in {untold}")
    _, release = course_directories(root)
    stale = release_differences(course / release / report.assignment, root / release / report.assignment)
    if stale:
        problems.append(f"{release}/{report.assignment} is out of date (run `seqlearn exercises`): {stale[:3]}")
    problems += _feedback_leaks(results, sources)
    return problems


def _feedback_leaks(results: Mapping[str, NbgraderResult], sources: Mapping[str, NotebookNode]) -> list[str]:
    leaks = []
    for student, result in results.items():
        for name, path in result.feedback.items():
            text = html_text(path.read_text(encoding="utf-8"))
            shown = [line for line in hidden_test_lines(sources[name]) if line in text]
            if shown:
                leaks.append(f"the feedback of {student!r} shows hidden test code: {shown[:2]}")
    return leaks


@contextlib.contextmanager
def _course_dir(workdir) -> Iterator[Path]:
    if workdir is not None:
        yield Path(workdir)
        return
    with tempfile.TemporaryDirectory(prefix="seqlearn-grading-") as tmp:
        yield Path(tmp)


def check_grading(
    root, assignment: str, *, timeout: int | None = None, extra_submissions=None, workdir=None
) -> GradingReport:
    """Grade the standard submissions of ``assignment`` with nbgrader and report what is wrong.

    Parameters
    ----------
    root : path
        The course root (holding ``nbgrader_config.py``, ``solutions/``, ``exercises/``).
    assignment : str
        E.g. ``"01_ngram"``.
    timeout : int, optional
        Seconds per cell, overriding the course config (``Execute.timeout`` and
        ``ExecutePreprocessor.timeout``).
    extra_submissions : mapping, optional
        More submissions to grade in the same run: student id -> {notebook file name ->
        notebook}. Their results are reported but not judged.
    workdir : path, optional
        Run in this (new or empty) directory and keep it; default: a temporary directory.

    Returns
    -------
    GradingReport
        Results of ``solution`` (full autograded marks expected), ``blank`` (0 expected),
        ``delegating`` (0 expected, told why) and the extra submissions, and the problems found
        (including a stale ``exercises/`` and feedback that shows hidden tests).
    """
    root = Path(root)
    source, _ = course_directories(root)
    _assignments(root, source, [assignment])
    extra = dict(extra_submissions or {})
    clash = set(extra) & set(STANDARD_SUBMISSIONS)
    if clash:
        raise ValueError(f"extra submissions may not reuse the standard student ids {sorted(clash)}")
    with _course_dir(workdir) as course_dir:
        course = make_course(root, course_dir, [assignment])
        run_nbgrader(course, "generate_assignment", assignment, "--force")
        submissions = {**_standard_submissions(root, course, assignment), **extra}
        _write_submissions(course, assignment, submissions)
        limits = [f"--Execute.timeout={timeout}", f"--ExecutePreprocessor.timeout={timeout}"] if timeout else []
        run_nbgrader(course, "autograde", assignment, "--force", *limits)
        run_nbgrader(course, "generate_feedback", assignment, "--force")
        sources = submissions["solution"]
        results = {student: _read_result(course, assignment, student, sources) for student in submissions}
        report = GradingReport(assignment, results, course_dir=course if workdir is not None else None)
        report.problems = _problems(report, root, course, sources)
    return report
