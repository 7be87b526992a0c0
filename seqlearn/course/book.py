"""The course as a website: the executed chapters, the exercises and a bibliography, built offline.

``seqlearn book`` (``make book``) stages a Sphinx project next to ``book/conf.py`` and renders it
with MyST-NB and the Sphinx Book Theme::

    <out>/_source/            what Sphinx reads
        conf.py, book.json    the configuration, and the repository Binder launches from
        index.md              book/index.md, then the tables of contents
        chapters/NN_slug.ipynb            each chapter, executed here (timed, quotes checked)
        exercises/NN_slug/NN_slug.ipynb   the release notebooks, generated from solutions/, not executed
        bibliography.md       every entry of the chapters' "References" sections, with backlinks
        _static/mathjax/      MathJax 2.7 from jupyter-server-mathjax (no CDN)
    <out>/html/               the site: open html/index.html

The exercise pages show the release that ``seqlearn exercises`` generates from ``solutions/``, made
afresh in a temporary directory for each build: the ``exercises/`` of the working tree, where an
instructor or a student may have saved answers and outputs, never reaches the site.

Nothing is downloaded: the toolchain comes from the ``book`` extra, MathJax from the ``course`` extra.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .notebooks import RunReport, chapter_paths, course_root, execute_notebook, install_mathjax
from .release import SolutionLeak, holds_solutions

__all__ = [
    "DEFAULT_REPOSITORY",
    "Reference",
    "BookReport",
    "BookError",
    "chapter_title",
    "gather_references",
    "build_book",
]

DEFAULT_REPOSITORY = "https://github.com/seqlearn/seqlearn"
"""Where the course is published; a fork or an institution's copy passes its own (``--repository``)."""
BOOK_MODULES = ("sphinx", "myst_nb", "sphinx_book_theme")
"""What the ``book`` extra brings."""
SOURCE_DIRECTORY, RELEASE_DIRECTORY = "solutions", "exercises"
"""Where ``nbgrader_config.py`` puts the source notebooks and the release ``seqlearn exercises`` makes."""
_REFERENCES_HEADING = re.compile(r"(?m)^##\s+References\s*$")
_INITIALS = re.compile(r"^(?:[A-Z]\.\s*(?:-?[A-Z]\.\s*)*)+")


@dataclass
class Reference:
    """One work of the bibliography: its text as the chapters write it, and the chapters citing it."""

    text: str
    chapters: list[str] = field(default_factory=list)

    @property
    def sort_key(self) -> tuple[str, str]:
        """The first author's surname (initials skipped), then the whole text."""
        surname = re.split(r",| and |\.", _INITIALS.sub("", self.text))[0].strip()
        return (surname.casefold(), self.text.casefold())


@dataclass
class BookReport:
    """What :func:`build_book` made: the site's entry page and each chapter's run."""

    index: Path
    runs: list[RunReport]

    @property
    def misquoted(self) -> dict[str, list[str]]:
        """Chapter name -> the quotes its prose gets wrong (empty when every number is right)."""
        return {run.name: run.misquoted for run in self.runs if run.misquoted}


def _markdown_sources(notebook: Path) -> list[str]:
    """The source text of every markdown cell of ``notebook``."""
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def chapter_title(notebook) -> str:
    """The text of the notebook's first ``# `` heading (its title in the book's navigation)."""
    for text in _markdown_sources(Path(notebook)):
        match = re.search(r"(?m)^#\s+(.+?)\s*$", text)
        if match:
            return match.group(1)
    raise ValueError(f"{notebook} has no '# ' title heading")


def _reference_items(text: str) -> list[str]:
    """The ``- `` items of the "## References" section in ``text`` (continuation lines joined)."""
    match = _REFERENCES_HEADING.search(text)
    if match is None:
        return []
    section = re.split(r"(?m)^#", text[match.end() :])[0]
    items = re.split(r"(?m)^- ", section)[1:]
    return [" ".join(item.split()) for item in items if item.strip()]


def gather_references(chapters: list[Path]) -> list[Reference]:
    """Every work the chapters' "## References" sections list, once, sorted by first author.

    Entries are the same work when their texts are equal up to whitespace; a chapter without
    such a section contributes nothing.
    """
    works: dict[str, Reference] = {}
    for chapter in chapters:
        for text in (item for cell in _markdown_sources(chapter) for item in _reference_items(cell)):
            reference = works.setdefault(text, Reference(text))
            if chapter.stem not in reference.chapters:
                reference.chapters.append(chapter.stem)
    return sorted(works.values(), key=lambda r: r.sort_key)


def _bibliography_page(references: list[Reference], titles: dict[str, str]) -> str:
    """MyST markdown of the bibliography: each work, then links to the chapters that list it."""
    lines = ["# Bibliography", "", "Every work the chapters list under *References*, and where.", ""]
    for reference in references:
        cited = ", ".join(f"[{titles[name]}](chapters/{name}.ipynb)" for name in reference.chapters)
        lines.append(f"- {reference.text} — {cited}")
    return "\n".join(lines) + "\n"


def _toctree(caption: str, documents: list[str]) -> str:
    """A MyST ``toctree`` directive listing ``documents`` (paths without suffix)."""
    return "\n".join(["```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *documents, "```", ""])


def _index_page(root: Path, chapters: list[str], exercises: list[str]) -> str:
    """``book/index.md`` followed by the tables of contents of the chapters, exercises and back matter."""
    prose = (root / "book" / "index.md").read_text("utf-8").rstrip()
    trees = [
        _toctree("Chapters", [f"chapters/{name}" for name in chapters]),
        _toctree("Exercises", [f"exercises/{name}/{name}" for name in exercises]),
        _toctree("Back matter", ["bibliography"]),
    ]
    return "\n\n".join([prose, *trees])


class BookError(RuntimeError):
    """The book could not be built: Sphinx failed (its warnings count as errors), or the release could
    not be generated. The message names the cause: the lines of the tool's output that report it."""


_PROBLEM_LINE = re.compile(r"ERROR|WARNING|CRITICAL|SEVERE|Exception|Traceback|traceback|^\s*[\w.]*(Error|Exit)\b")
_PROBLEM_LINES, _PROBLEM_WIDTH = 12, 300
"""At most this many lines of a tool's output, each cut to this many characters, go into a message."""


def _tail(output: str) -> str:
    """The lines of a tool's ``output`` that say what went wrong, bounded in number and length.

    Those naming a warning, an error or an exception are kept (the last :data:`_PROBLEM_LINES` of
    them); where none does, the last lines of the output are.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    problems = [line for line in lines if _PROBLEM_LINE.search(line)] or lines
    kept = problems[-_PROBLEM_LINES:]
    cut = [line if len(line) <= _PROBLEM_WIDTH else line[: _PROBLEM_WIDTH - 3] + "..." for line in kept]
    if len(problems) > len(kept):
        cut.insert(0, f"({len(problems) - len(kept)} earlier lines left out)")
    return "\n".join(cut) or "(no output)"


def _generate_release(root: Path, workdir: Path) -> Path:
    """The release of every assignment, as ``seqlearn exercises`` generates it, written under ``workdir``.

    The command runs on a course made in ``workdir`` of ``root``'s ``nbgrader_config.py`` and
    ``solutions/`` (and the ``pyproject.toml`` and ``chapters/`` that mark a course directory), so
    ``root`` is left as it is. It runs in a process of its own, as the grader's tools do.
    """
    config, sources = root / "nbgrader_config.py", root / SOURCE_DIRECTORY
    if not config.is_file() or not sources.is_dir():
        raise FileNotFoundError(
            f"the exercise pages are generated from {SOURCE_DIRECTORY}/ with nbgrader_config.py: {root} lacks "
            + " and ".join(str(p.name) for p in (config, sources) if not p.exists())
        )
    course = workdir / "course"
    shutil.copytree(sources, course / SOURCE_DIRECTORY, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy2(config, course / config.name)
    (course / "pyproject.toml").touch()
    (course / "chapters").mkdir()
    command = [sys.executable, "-m", "seqlearn.course.cli", "exercises", "--root", str(course)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BookError(f"`seqlearn exercises` failed (exit {done.returncode}): {_tail(done.stderr or done.stdout)}")
    return course / RELEASE_DIRECTORY


def _stage_exercises(root: Path, source: Path) -> list[str]:
    """Stage the release notebook ``NN_slug/NN_slug.ipynb`` of every assignment, generated afresh from
    ``solutions/`` in a temporary directory; refuse one holding solutions."""
    names = []
    with tempfile.TemporaryDirectory(prefix="seqlearn-book-release-") as tmp:
        release = _generate_release(root, Path(tmp))
        for notebook in sorted(release.glob("*/*.ipynb")):
            if notebook.stem != notebook.parent.name:
                continue
            if holds_solutions(notebook):
                raise SolutionLeak(
                    f"the release of {notebook.stem} holds solutions or hidden tests: check the nbgrader "
                    f"metadata and delimiters of {SOURCE_DIRECTORY}/{notebook.parent.name}/{notebook.name}"
                )
            target = source / RELEASE_DIRECTORY / notebook.parent.name
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target / notebook.name)
            names.append(notebook.stem)
    return names


def _without_widget_state(notebook: Path) -> None:
    """Drop the saved widget state of an executed notebook: the page shows each explorer's PNG instead."""
    nb = json.loads(notebook.read_text("utf-8"))
    nb["metadata"].pop("widgets", None)
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", "utf-8")


def _sphinx(source: Path, html: Path, *, partial: bool) -> None:
    """Render ``source`` to ``html`` with warnings as errors: a broken link or reference fails the build.

    A ``partial`` book (some chapters left out) lets links to the missing chapters dangle.
    """
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-W", "--keep-going"]
    if partial:
        command += ["-D", "suppress_warnings=myst.xref_missing"]
    done = subprocess.run([*command, str(source), str(html)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = done.stderr + "\n" + done.stdout
        raise BookError(f"sphinx-build failed (exit {done.returncode}):\n{_tail(output)}")


def build_book(
    out,
    *,
    root=None,
    names=None,
    repository: str = DEFAULT_REPOSITORY,
    branch: str = "main",
    timeout: float = 600,
    on_run: Callable[[RunReport], None] | None = None,
    runs: Sequence[RunReport] = (),
) -> BookReport:
    """Execute the chapters and build the website under ``out`` (``out/html/index.html``).

    Parameters
    ----------
    out : path
        The build directory; its ``_source/`` and ``html/`` are replaced.
    root : path, optional
        The course root (default: found from the current directory).
    names : list of str, optional
        Chapters to include (numbers or stems, as for ``seqlearn run``); default all.
    repository : str
        The repository's URL on GitHub (``https://github.com/<owner>/<name>``): each page's
        Binder button launches that repository's ``branch`` in JupyterLab on mybinder.org.
    timeout : float
        Seconds per cell when executing a chapter.
    on_run : callable, optional
        Called with each chapter's :class:`RunReport` as soon as it has run.
    runs : sequence of RunReport, optional
        Chapters already executed by :func:`~seqlearn.course.notebooks.execute_notebook` with an
        ``executed_dir``: their executed notebooks are rendered as they are, not run again
        (``on_run`` is not called for them). The other chapters are executed.

    Raises
    ------
    seqlearn.course.notebooks.NotebookError
        If a chapter fails to run (nothing is rendered).
    FileNotFoundError
        If the course has no ``solutions/`` or ``nbgrader_config.py`` (the exercise pages come from them).
    seqlearn.course.release.SolutionLeak
        If the release generated from ``solutions/`` holds solutions.
    BookError
        If the release cannot be generated, or Sphinx fails (a warning counts as a failure); the
        message quotes the lines of their output that say why.
    """
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository):
        raise ValueError(f"repository must be https://github.com/<owner>/<name>, got {repository!r}")
    root = course_root(root)
    out = Path(out).resolve()
    source, html = out / "_source", out / "html"
    shutil.rmtree(source, ignore_errors=True)
    (source / "_static").mkdir(parents=True)
    (source / "chapters").mkdir()
    chapters = chapter_paths(root, names)
    done = _executed_runs(runs)
    exercises = _stage_exercises(root, source)
    reports = []
    for chapter in chapters:
        if chapter.stem in done:
            run, executed = done[chapter.stem]
            shutil.copyfile(executed, _staged(source, chapter))
        else:
            run = execute_notebook(chapter, timeout=timeout, executed_dir=source / "chapters")
            if on_run is not None:
                on_run(run)
        reports.append(run)
        _without_widget_state(_staged(source, chapter))
    titles = {chapter.stem: chapter_title(chapter) for chapter in chapters}
    shutil.copy2(root / "book" / "conf.py", source / "conf.py")
    (source / "book.json").write_text(json.dumps({"repository": repository, "branch": branch}), "utf-8")
    (source / "index.md").write_text(_index_page(root, list(titles), exercises), "utf-8")
    (source / "bibliography.md").write_text(_bibliography_page(gather_references(chapters), titles), "utf-8")
    install_mathjax(source / "_static")
    shutil.rmtree(html, ignore_errors=True)
    _sphinx(source, html, partial=len(chapters) < len(chapter_paths(root)))
    return BookReport(html / "index.html", reports)


def _staged(source: Path, chapter: Path) -> Path:
    """Where the executed ``chapter`` is staged for Sphinx."""
    return source / "chapters" / chapter.name


def _executed_runs(runs: Sequence[RunReport]) -> dict[str, tuple[RunReport, Path]]:
    """Chapter name -> its run and executed notebook; a run that wrote no notebook is refused."""
    done = {run.name: (run, run.notebook) for run in runs if run.notebook is not None and run.notebook.is_file()}
    missing = [run.name for run in runs if run.name not in done]
    if missing:
        raise ValueError(f"runs must have written their executed notebook (executed_dir=...): {', '.join(missing)}")
    return done
