"""Shared test configuration.

- ``gpu`` tests are skipped where torch sees no CUDA device.
- ``make test`` runs ``test_chapters.py`` first, in one process and alone: every test that needs an
  executed chapter is there, where :func:`chapter_runs` executes each chapter once for all of them,
  one chapter at a time on otherwise idle cores, as Binder's budget assumes. Then the other tests, on
  two pytest-xdist workers with ``--dist loadfile``: each module on one worker, so its module-scoped
  fixtures are built once. ``test_chapters_native.py`` executes each chapter once more on another
  floating-point path (no budget asserted); it is collected last. A plain ``pytest`` runs
  ``test_chapters.py`` first too.
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):  # set before numpy or torch is imported
    # One thread per math library in each test worker: two workers on two cores, none oversubscribed.
    # A chapter's kernel gets the course's kernel threads (seqlearn.device.KERNEL_THREADS, ChapterRuns).
    for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

from pathlib import Path

import pytest

from seqlearn.course.notebooks import NotebookError, RunReport, execute_notebook
from seqlearn.device import CPU_KERNEL_PINS, KERNEL_THREADS

os.environ.setdefault("MPLBACKEND", "Agg")

CHAPTER_CELL_TIMEOUT = 300
"""Seconds per cell when a chapter is executed for the tests."""
FIRST_MODULE, LAST_MODULE = "test_chapters.py", "test_chapters_native.py"
"""The chapters' executions, the longest work of a test run: the budget runs first, the others last."""


def pytest_collection_modifyitems(config, items):
    import torch

    if not torch.cuda.is_available():
        skip = pytest.mark.skip(reason="needs a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
    rank = {FIRST_MODULE: 0, LAST_MODULE: 2}
    items.sort(key=lambda item: rank.get(item.path.name, 1))  # stable: the rest stays in collection order


class ChapterRuns:
    """Each chapter executed at most once per test process, with its offline page and executed notebook.

    Runs as the course's kernels do: on the CPU (``SEQLEARN_DEVICE=cpu``), one thread per math
    library (:data:`seqlearn.device.KERNEL_THREADS`), the kernel pins of
    :func:`seqlearn.course.notebooks.execute_notebook` (``kernels``: the ``SEQLEARN_PIN_KERNELS`` setting,
    see :func:`seqlearn.device.kernel_path`). A chapter that fails is not run again: each test
    asking for it gets the same
    :class:`~seqlearn.course.notebooks.NotebookError`.
    """

    def __init__(self, out: Path, kernels: str = "avx2"):
        self.out, self.kernels = out, kernels
        self._done: dict[Path, RunReport | NotebookError] = {}

    def __call__(self, path: Path) -> RunReport:
        if path not in self._done:
            self._done[path] = self._execute(path)
        done = self._done[path]
        if isinstance(done, NotebookError):
            raise done
        return done

    def _execute(self, path: Path) -> RunReport | NotebookError:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("SEQLEARN_DEVICE", "cpu")
            env.setenv("SEQLEARN_PIN_KERNELS", self.kernels)
            for name in (*CPU_KERNEL_PINS, *KERNEL_THREADS):  # the setting and the kernel's threads decide them all
                env.delenv(name, raising=False)
            try:
                return execute_notebook(
                    path, timeout=CHAPTER_CELL_TIMEOUT, html_dir=self.out / "html", executed_dir=self.out / "executed"
                )
            except NotebookError as error:
                return error


@pytest.fixture(scope="session")
def chapter_runs(tmp_path_factory) -> ChapterRuns:
    """``chapter_runs(path)``: the :class:`~seqlearn.course.notebooks.RunReport` of the chapter at ``path``."""
    return ChapterRuns(tmp_path_factory.mktemp("chapter-runs"))


@pytest.fixture(scope="session")
def baseline_chapter_runs(tmp_path_factory) -> ChapterRuns:
    """``baseline_chapter_runs(path)``: as :func:`chapter_runs`, on the oldest x86-64 code paths
    (``SEQLEARN_PIN_KERNELS=baseline``): another floating-point path than the pins' on every x86 CPU."""
    return ChapterRuns(tmp_path_factory.mktemp("baseline-chapter-runs"), kernels="baseline")


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one CPU thread for a module: small models train as fast, and other processes
    on the cores cannot stall its threads (use with ``pytest.mark.usefixtures``)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def replayable_hidden_draws(monkeypatch):
    """Hidden grading cases from one fixed draw, so a test of the hints on hidden cases cannot flake."""
    from seqlearn.grading import checks

    draw = checks.hidden_rngs
    monkeypatch.setattr(checks, "hidden_rngs", lambda n, entropy=None: draw(n, 20260101))
