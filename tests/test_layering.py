"""Layering: the model modules stand on :mod:`seqlearn.guard`, never on the grader; the instructor's
tools stand on everything, and nothing stands on them.

Only :mod:`seqlearn.grading` itself and :mod:`seqlearn.course` (the ``seqlearn`` command, the sealed
grader, nbgrader's helpers) may import :mod:`seqlearn.grading`; importing a model module must not
load it. Nothing outside :mod:`seqlearn.course` imports :mod:`seqlearn.course`.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import seqlearn

PACKAGE = Path(seqlearn.__file__).parent
COURSE = PACKAGE / "course"

IMPORT_EACH = """
import importlib, json, sys
loaded = {}
for name in sys.argv[2:]:
    importlib.import_module(name)
    loaded[name] = sorted(m for m in sys.modules if m == sys.argv[1] or m.startswith(sys.argv[1] + "."))
print(json.dumps(loaded))
"""
"""Imports ``argv[2:]`` in turn; for each, the modules of the package ``argv[1]`` loaded so far."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _outside(*packages: str) -> list[Path]:
    """The modules of seqlearn that are in none of its subpackages ``packages``."""
    return sorted(p for p in PACKAGE.rglob("*.py") if not set(packages) & set(p.relative_to(PACKAGE).parts[:-1]))


def _imports_a_package(path: Path, target: str) -> bool:
    """Whether the file at ``path`` imports ``target`` or one of its modules (relative imports resolved)."""
    module = _module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            names = [f"{base}.{node.module or ''}".strip(".")] + [f"{base}.{a.name}".strip(".") for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        if any(n == target or n.startswith(target + ".") for n in names):
            return True
    return False


@pytest.mark.integration
def test_importing_the_model_modules_loads_no_grader():
    names = ["seqlearn.losses", "seqlearn.ngram", "seqlearn.rnn", *map(_module_name, _outside("grading", "course"))]
    assert _loaded("seqlearn.grading", names) == {}


def _loaded(package: str, names: list[str]) -> dict[str, list[str]]:
    """Each of ``names`` whose import (in one fresh interpreter, in turn) loaded modules of ``package`` -> those."""
    command = [sys.executable, "-c", IMPORT_EACH, package, *names]
    loaded = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    return {name: modules for name, modules in loaded.items() if modules}


@pytest.mark.integration
def test_importing_the_package_and_the_grader_loads_no_course():
    names = [*map(_module_name, _outside("course")), "seqlearn.grading.ngram"]
    assert _loaded("seqlearn.course", names) == {}
    assert _loaded("seqlearn.course", ["seqlearn.course.cli"]) == {
        "seqlearn.course.cli": ["seqlearn.course", "seqlearn.course.cli"]
    }


def test_only_the_grader_and_the_course_import_the_grader():
    importers = [p for p in _outside("grading", "course") if _imports_a_package(p, "seqlearn.grading")]
    assert importers == []
    assert _imports_a_package(COURSE / "nbgrader_tools.py", "seqlearn.grading"), "the scan sees the import"
    assert _imports_a_package(COURSE / "sealed" / "plan.py", "seqlearn.grading"), "the scan resolves ..."


def test_nothing_outside_the_course_imports_the_course():
    importers = [p for p in _outside("course") if _imports_a_package(p, "seqlearn.course")]
    assert importers == []
    assert _imports_a_package(COURSE / "book.py", "seqlearn.course"), "the scan sees relative imports"
    assert all(p.is_relative_to(COURSE) for p in PACKAGE.rglob("*.py") if p not in _outside("course"))


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _import_graph() -> dict[str, set[str]]:
    """Each module of seqlearn -> the modules of seqlearn it imports (anywhere in it, relative imports resolved).

    ``from X import y`` imports the module ``X.y`` where there is one, else ``X`` (whose namespace
    holds ``y``); a package being imported is never waited for by ``from . import submodule``.
    """
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level else ""
                origin = ".".join(part for part in (base, node.module) if part)
                imported |= {f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        graph[module] = imported & modules.keys()
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A path ``[a, b, ..., a]`` of imports that comes back to where it started, or ``[]``."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for imported in sorted(graph[module]):
            found = visit(imported, [*path, module])
            if found:
                return found
        done.add(module)
        return []

    return next((found for module in sorted(graph) if (found := visit(module, []))), [])


def test_no_module_imports_itself_through_a_cycle():
    graph = _import_graph()
    assert {"seqlearn.losses", "seqlearn.lowrank.teacher_network"} <= graph["seqlearn.lowrank.tasks"], (
        "the scan sees imports"
    )
    cycle = _cycle(graph)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_the_cycle_search_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


SEALED_PARTS = ("draws", "plan", "sandbox", "session", "gradebook", "pool", "replay")
"""The parts of :mod:`seqlearn.course.sealed`, in the order they may import each other."""


def _imports(path: Path) -> set[str]:
    """The modules a file imports: absolute names, and relative ones as ``.name`` or ``..name``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_parts_of_the_sealed_grader_import_only_the_parts_above_them():
    """Each part can be imported, and tested, without the ones below it: the plan starts no process,
    the sandbox knows no test cell, the session writes no gradebook."""
    folder = COURSE / "sealed"
    assert sorted(p.stem for p in folder.glob("*.py")) == sorted([*SEALED_PARTS, "__init__"])
    for index, part in enumerate(SEALED_PARTS):
        below = _imports(folder / f"{part}.py") & {f".{name}" for name in SEALED_PARTS[index:]}
        assert not below, f"sealed.{part} imports {sorted(below)}"
    assert not _imports(folder / "plan.py") & {"subprocess", "...grading.worker"}, "the plan starts no process"
