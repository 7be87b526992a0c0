"""The course in a real browser: a chapter run from JupyterLab's menus with a live explorer,
and a student fetching a released assignment from nbgrader's Assignments panel.

Each test serves a temporary copy of what it needs with this environment's JupyterLab and
drives Debian's chromium through Playwright (see ``browser_support``). Screenshots and the
server's log are left in ``build/test-artifacts/<test name>/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import ROOT, artifacts_dir, jupyter_lab, lab_environment, launch_chromium, require_browser
from hub_course import fresh_course

from seqlearn.course.nbgrader_tools import course_directories

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHAPTER = "chapters/01_ngram.ipynb"  # the fastest chapter with an explorer (about 20 s headless)
SLIDER = "order n"  # one of its explorer's sliders: each step refits the models and redraws
RUN_TIMEOUT_MS = 300_000  # about 20 s alone; a test run executes the chapters beside it (tests/test_chapters.py)
REDRAW_TIMEOUT_MS = 60_000
PANEL_TIMEOUT_MS = 60_000
VIEWPORT = {"width": 1400, "height": 1000}
ASSIGNMENT = "01_ngram"  # released to the student, who fetches it
COURSE_ID = "seqlearn"
TRACEBACK = "Traceback (most recent call last)"
# True in the page once no cell is running or queued and every one has run, or one has raised.
ALL_RAN_OR_RAISED = r"""([panel, traceback]) => {
    const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
    const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent);
    return prompts.length > 0 && !prompts.some(p => p.includes('*'))
        && (prompts.every(p => /\[\d+\]/.test(p)) || outputs.some(o => o.includes(traceback)));
}"""
# True in the page once some code cell is running, queued or done (its prompt is no longer ``[ ]:``).
SCHEDULED = r"""(panel) => [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .some(p => /\[(\*|\d+)\]/.test(p.textContent))"""
RUN_ALL_TRIES = 3
SCHEDULE_TIMEOUT_MS = 30_000
# True in the page once the figure in an explorer's output differs from the one it showed before.
REDRAWN = """([output, before]) => {
    const image = output.querySelector('img');
    return image !== null && image.getAttribute('src') !== before;
}"""


@pytest.fixture
def browser():
    """Chromium for one test (skipped, with the reason, where it or Playwright is not installed)."""
    require_browser()
    with launch_chromium() as browser:
        yield browser


@pytest.fixture
def artifacts(request) -> Path:
    """``build/test-artifacts/<test name>/``, emptied for this run."""
    return artifacts_dir(request.node.name)


# --- a chapter in JupyterLab -------------------------------------------------------------


def open_notebook(page, lab, path: str):
    """Open a notebook through Lab's URL and wait until its kernel is idle; return the notebook panel."""
    page.goto(lab.url(f"lab/tree/{path}"))
    panel = page.locator(".jp-NotebookPanel").filter(has=page.locator(".jp-Notebook"))
    panel.wait_for(timeout=60_000)
    kernel_idle(panel).wait_for(timeout=60_000)
    return panel


def kernel_idle(panel):
    """The notebook's kernel status indicator while the kernel is idle."""
    return panel.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first


def run_all_cells(page, panel) -> None:
    """Run > Run All Cells, from Lab's menu bar, until the notebook shows that its cells were scheduled.

    On a loaded machine Lab can take the click before the notebook is wired to its menus and run
    nothing; a reader would click again, and so does this (at most ``RUN_ALL_TRIES`` times).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for _ in range(RUN_ALL_TRIES):
        panel.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
        page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
        page.locator(".lm-Menu").get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(SCHEDULED, arg=panel.element_handle(), timeout=SCHEDULE_TIMEOUT_MS)
            return
        except PlaywrightTimeoutError:
            continue
    pytest.fail(f"Run All Cells scheduled no cell in {RUN_ALL_TRIES} tries; prompts: {prompts(panel)}")


def prompts(panel) -> list[str]:
    """The input prompt of every code cell, e.g. ``[3]:``, ``[*]:`` (running or queued), ``[ ]:``."""
    return [text.strip() for text in panel.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()]


def wait_until_every_cell_ran(page, panel) -> None:
    """Wait until every code cell has run and the kernel is idle; fail on a cell that raised."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    try:
        page.wait_for_function(ALL_RAN_OR_RAISED, arg=[panel.element_handle(), TRACEBACK], timeout=RUN_TIMEOUT_MS)
        kernel_idle(panel).wait_for(timeout=RUN_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pytest.fail(f"the notebook had not run within {RUN_TIMEOUT_MS / 1000:.0f} s; prompts: {prompts(panel)}")
    errors = panel.locator(".jp-OutputArea-output").filter(has_text=TRACEBACK)
    if errors.count():
        pytest.fail(f"a cell raised an error:\n{errors.first.inner_text()[-3000:]}")
    unrun = [p for p in prompts(panel) if not p[1:-2].isdigit()]
    assert not unrun, f"{len(unrun)} cells did not run: {prompts(panel)}"


def the_explorer(panel, slider: str):
    """The explorer (an ``ipywidgets.interactive``) that has the slider labelled ``slider``."""
    labelled = panel.page.locator(".widget-slider", has_text=slider)
    return panel.locator(".widget-interact").filter(has=labelled)


def figure_src(explorer) -> str:
    """The ``src`` of the explorer's figure (a ``data:image/png`` URL), once it is drawn."""
    image = explorer.locator(".widget-output img")
    image.wait_for(timeout=REDRAW_TIMEOUT_MS)
    return image.get_attribute("src")


def wait_for_redraw(page, explorer, before: str) -> None:
    """Wait until the explorer's figure is no longer the one whose ``src`` was ``before``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    output = explorer.locator(".widget-output")
    try:
        page.wait_for_function(REDRAWN, arg=[output.element_handle(), before], timeout=REDRAW_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        seconds = REDRAW_TIMEOUT_MS / 1000
        pytest.fail(f"the figure was not redrawn within {seconds:.0f} s; the explorer's output:\n{output.inner_text()}")


def test_a_chapter_runs_in_jupyterlab_and_its_explorer_redraws(tmp_path, browser, artifacts):
    """Chapter 1, opened in JupyterLab and run with Run > Run All Cells, runs every cell without an
    error; moving its explorer's "order n" slider one step with the keyboard redraws the figure.

    Screenshots in build/test-artifacts/<this test>/: ``ran.png`` (the notebook after the run),
    ``explorer-before.png`` and ``explorer-after.png``; ``lab.log`` is the server's output.
    """
    shutil.copytree(ROOT / "chapters", tmp_path / "course" / "chapters")
    env = lab_environment(tmp_path, SEQLEARN_DEVICE="cpu", OMP_NUM_THREADS="1")
    with jupyter_lab(tmp_path / "course", env, artifacts / "lab.log") as lab:
        page = browser.new_page(viewport=VIEWPORT)
        panel = open_notebook(page, lab, CHAPTER)
        run_all_cells(page, panel)
        wait_until_every_cell_ran(page, panel)
        page.screenshot(path=artifacts / "ran.png")

        explorer = the_explorer(panel, SLIDER)
        explorer.scroll_into_view_if_needed()
        before = figure_src(explorer)
        explorer.screenshot(path=artifacts / "explorer-before.png")
        slider = explorer.locator(".widget-slider").filter(has_text=SLIDER)
        readout = slider.locator(".widget-readout").inner_text()
        slider.locator(".noUi-handle").press("ArrowRight")

        wait_for_redraw(page, explorer, before)
        explorer.screenshot(path=artifacts / "explorer-after.png")
        assert slider.locator(".widget-readout").inner_text() == str(int(readout) + 1)
        after = figure_src(explorer)
        assert after.startswith("data:image/png;base64,") and after != before


# --- the assignment list, as a student -----------------------------------------------------


def nbgrader_config(directory: Path, exchange: Path, *lines: str) -> Path:
    """A user-level ``nbgrader_config.py`` in ``directory`` naming the exchange; ``lines`` are added."""
    directory.mkdir(parents=True, exist_ok=True)
    settings = ["c = get_config()", f"c.Exchange.root = {str(exchange)!r}", *lines]
    (directory / "nbgrader_config.py").write_text("\n".join(settings) + "\n")
    return directory


def nbgrader(*args: str, cwd: Path, env: dict) -> None:
    """Run this environment's ``nbgrader`` with ``args`` in ``cwd``; fail with its output if it fails.

    The environment's ``bin`` comes first on ``PATH``, as after ``source .venv/bin/activate``
    (nbgrader runs ``alembic`` from there).
    """
    bin_dir = Path(sys.executable).parent
    env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}
    proc = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"`nbgrader {' '.join(args)}` failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"


def release(tmp: Path, exchange: Path) -> Path:
    """Generate and release the assignment from a fresh copy of the course; return the copy."""
    course = fresh_course(tmp / "course", [ASSIGNMENT])
    config = nbgrader_config(tmp / "instructor-jupyter", exchange)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config)}
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course, env=env)
    nbgrader("release_assignment", ASSIGNMENT, cwd=course, env=env)
    return course


def open_assignment_list(page, lab):
    """Open Lab, then Nbgrader > Assignment List; return the Assignments panel."""
    page.goto(lab.url())
    page.locator("#jp-MainMenu").get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.locator(".lm-Menu").get_by_role("menuitem", name="Assignment List", exact=True).click()
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for(timeout=PANEL_TIMEOUT_MS)
    return panel


def listed(panel, section: str):
    """The assignment's row in one section of the panel: "released" or "fetched" (downloaded)."""
    return panel.locator(f"#{section}_assignments_list > .list_item").filter(has_text=ASSIGNMENT)


def wait_in_panel(panel, locator, what: str, state: str = "visible") -> None:
    """Wait for ``locator`` to reach ``state``; fail saying ``what`` was expected, with the panel's text."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    try:
        locator.wait_for(state=state, timeout=PANEL_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pytest.fail(f"{what} (within {PANEL_TIMEOUT_MS / 1000:.0f} s); the panel reads:\n{panel.inner_text()}")


def in_file_browser(page, name: str):
    """The entry ``name`` of Lab's file browser, after pressing its refresh button."""
    browser = page.locator(".jp-FileBrowser")
    browser.get_by_title("Refresh the file browser").click()
    return browser.locator(".jp-DirListing-item").filter(has_text=name)


def test_a_student_fetches_a_released_assignment_from_the_assignment_list(tmp_path, browser, artifacts):
    """A released assignment is listed under "Released assignments" in nbgrader's Assignments panel
    of a student's JupyterLab; its Fetch button moves it to the downloaded assignments and puts
    the release's notebook in the student's directory (and so in Lab's file browser).

    Screenshots in build/test-artifacts/<this test>/: ``released.png`` (before Fetch) and
    ``fetched.png``; ``lab.log`` is the server's output.
    """
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    course = release(tmp_path, exchange)
    home = tmp_path / "home"
    config = nbgrader_config(home / ".jupyter", exchange, f"c.CourseDirectory.course_id = {COURSE_ID!r}")
    env = lab_environment(tmp_path, HOME=str(home), JUPYTER_CONFIG_DIR=str(config))
    with jupyter_lab(home, env, artifacts / "lab.log") as lab:
        page = browser.new_page(viewport=VIEWPORT)
        panel = open_assignment_list(page, lab)
        released = listed(panel, "released")
        wait_in_panel(panel, released, f"{ASSIGNMENT} is not listed under Released assignments")
        assert released.locator(".item_course").inner_text().strip() == COURSE_ID
        assert listed(panel, "fetched").count() == 0 and not (home / ASSIGNMENT).exists()
        page.screenshot(path=artifacts / "released.png")

        released.get_by_role("button", name="Fetch").click()
        wait_in_panel(panel, listed(panel, "fetched"), f"{ASSIGNMENT} did not move to Downloaded assignments")
        wait_in_panel(panel, released, f"{ASSIGNMENT} is still listed as released", state="detached")
        in_file_browser(page, ASSIGNMENT).wait_for(timeout=PANEL_TIMEOUT_MS)
        page.screenshot(path=artifacts / "fetched.png")

    name = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    fetched = home / name
    assert fetched.is_file(), f"Fetch put no {name} in the student's directory: {sorted(home.rglob('*.ipynb'))}"
    _, release_directory = course_directories(course)
    assert fetched.read_bytes() == (course / release_directory / name).read_bytes()
