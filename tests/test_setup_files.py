"""The set-up files agree with each other: pyproject's pins, binder/, nbgrader_config, Makefile, README."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pyproject_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    specs = project["dependencies"] + extras["course"] + extras["fast"]  # Binder runs the chapters as the tests do
    return dict(spec.split("==") for spec in specs)


def test_every_runtime_and_course_dependency_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"] + project["optional-dependencies"]["course"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.+]*", spec), spec
    assert "torch==2.13.0" in project["dependencies"]


def test_binder_requirements_match_pyproject_pins():
    lines = [ln.strip() for ln in (ROOT / "binder/requirements.txt").read_text().splitlines()]
    binder = dict(ln.split("==") for ln in lines if ln and not ln.startswith(("#", "-")))
    binder["torch"] = binder["torch"].removesuffix("+cpu")
    assert binder == pyproject_pins()
    assert any("whl/cpu" in ln for ln in lines), "binder must install the CPU-only torch build"


def test_binder_python_matches_requires_python():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = (ROOT / "binder/runtime.txt").read_text().strip()
    assert project["requires-python"] == ">=3.11" and runtime == "python-3.11"


def test_readme_names_the_two_commands_that_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci/run").read_text()


def test_nbgrader_config_points_at_solutions_and_exercises():
    config = (ROOT / "nbgrader_config.py").read_text()
    assert re.search(r'source_directory\s*=\s*"solutions"', config)
    assert re.search(r'release_directory\s*=\s*"exercises"', config)
    assert "Execute.timeout" in config and "ExecutePreprocessor.timeout" in config


def test_every_flag_the_readme_names_is_set_in_a_chapters_first_code_cell():
    import nbformat

    flags = set(re.findall(r"`(RUN_[A-Z0-9_]+) = True`", (ROOT / "README.md").read_text()))
    assert flags, "the README names no optional-data flag"
    first_cells = []
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        first_cells.append(cells[0].source)
    for flag in flags:
        assert any(re.search(rf"^{flag} = False$", source, re.M) for source in first_cells), flag


def test_the_loaders_the_readme_names_exist():
    import seqlearn.data

    for name in re.findall(r"`seqlearn\.data\.(load_\w+)`|`(load_\w+)`", (ROOT / "README.md").read_text()):
        assert callable(getattr(seqlearn.data, name[0] or name[1]))


@pytest.mark.integration
def test_make_lab_keeps_allow_root_when_lab_args_are_given():
    import os
    import subprocess

    dry_run = subprocess.run(
        ["make", "-n", "lab", "LAB_ARGS=--no-browser --port 8890"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    (lab,) = [line for line in dry_run.stdout.splitlines() if re.search(r"/jupyter lab\s", line)]
    assert "--no-browser --port 8890" in lab
    assert ("--allow-root" in lab) == (os.getuid() == 0)


@pytest.mark.slow
def test_make_lab_starts_headless(tmp_path):
    """The command that `make lab LAB_ARGS=...` runs serves JupyterLab without a browser (as root too)."""
    import os
    import socket
    import subprocess
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = f"--no-browser --ip 127.0.0.1 --port {port} --ServerApp.token=t0k3n"
    dry_run = subprocess.run(["make", "-n", "lab", f"LAB_ARGS={args}"], cwd=ROOT, capture_output=True, text=True)
    (lab,) = [line for line in dry_run.stdout.splitlines() if re.search(r"/jupyter lab\s", line)]
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    assert "exec " in lab, "the recipe must exec JupyterLab, so that stopping the shell stops the server"
    server = subprocess.Popen(["bash", "-c", lab], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline, status = time.monotonic() + 60, None
        while status is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=t0k3n", timeout=2) as r:
                    status = r.status
            except OSError:
                time.sleep(0.5)
        assert status == 200, f"JupyterLab did not answer (exit code {server.poll()})"
    finally:
        server.terminate()
        server.wait(timeout=30)
