"""The set-up files agree with each other: pyproject's pins, binder/, nbgrader_config, Makefile, README."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pyproject_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + project["optional-dependencies"]["course"]
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
