"""Exports: every package re-exports its submodules' ``__all__`` (less the names it says it withholds),
and its torch and scipy parts load on first use.

The lazy tables are read from the submodules' sources (:func:`seqlearn._lazy.lazy_table`); these
tests hold them to the ``__all__`` the imported submodules really have.
"""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import seqlearn
from seqlearn._lazy import lazy_exports, lazy_table, public_names

PACKAGE = Path(seqlearn.__file__).parent
PACKAGES = sorted(".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py"))


def _exporting_submodules(package) -> list[str]:
    """The submodules whose names ``package`` re-exports: its lazy table's and those its ``__init__`` imports from."""
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    eager = [node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module]
    return [*getattr(package, "_LAZY", {}), *eager]


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_exports_each_name_of_its_submodules_all_or_withholds_it(name):
    package = importlib.import_module(name)
    withheld = getattr(package, "_WITHHELD", {})
    submodules = _exporting_submodules(package)
    assert set(withheld) <= set(submodules), f"{name} withholds names of modules it does not export from"
    for submodule in submodules:
        module = importlib.import_module(f"{name}.{submodule}")
        names = getattr(module, "__all__", [])
        assert set(withheld.get(submodule, ())) <= set(names), f"{name}._WITHHELD[{submodule!r}] names no export"
        if submodule in getattr(package, "_LAZY", {}):
            assert package._LAZY[submodule] == [n for n in names if n not in withheld.get(submodule, ())]
        for export in names:
            if export in withheld.get(submodule, ()):
                assert export not in package.__all__, f"{name} exports {export}, which it withholds"
                continue
            assert export in package.__all__, f"{name}.__all__ lacks {submodule}.{export}"
            assert export in dir(package), f"dir({name}) lacks {submodule}.{export}"
            assert getattr(package, export) is getattr(module, export), f"{name}.{export} is not {submodule}'s"


GROUPED = '''"""A module."""

import os

__all__ = (
    # grouped
    "a",  # ]) inside a comment
    "b]",
)


def f():
    return os.sep
'''


@pytest.mark.parametrize(
    "source, names",
    [
        ('__all__ = ["a", "b"]\n', ["a", "b"]),
        (GROUPED, ["a", "b]"]),
        ('__all__ = ["a"]; y = [1]\n', ["a"]),
    ],
)
def test_public_names_reads_a_literal_all_without_running_the_module(tmp_path, source, names):
    path = tmp_path / "module.py"
    path.write_text(source + "raise RuntimeError('run')\n")
    assert public_names(path) == names


@pytest.mark.parametrize(
    "source, message",
    [
        ("x = 1\n", "found 0 bindings"),
        ('__all__ = ["a"]\n__all__ += ["b"]\n', "found 2 bindings"),
        ('__all__ = [*NAMES, "a"]\n', "literal list of strings"),
        ("__all__ = [1, 2]\n", "literal list of strings"),
        ('__all__: list[str] = ["a"]\n', "literal list of strings"),
    ],
)
def test_public_names_refuses_an_all_it_cannot_read(tmp_path, source, message):
    path = tmp_path / "module.py"
    path.write_text(source)
    with pytest.raises(ValueError, match=message):
        public_names(path)


def test_lazy_table_withholds_names_only_of_the_modules_all(tmp_path):
    (tmp_path / "model.py").write_text('__all__ = ["Net", "check"]\n')
    assert lazy_table([str(tmp_path)], ["model"]) == {"model": ["Net", "check"]}
    assert lazy_table([str(tmp_path)], ["model"], {"model": ["check"]}) == {"model": ["Net"]}
    with pytest.raises(ValueError, match=r"withheld names \['gone'\] are not in its __all__"):
        lazy_table([str(tmp_path)], ["model"], {"model": ["gone"]})
    with pytest.raises(ValueError, match=r"\['train'\], which are not lazy submodules"):
        lazy_table([str(tmp_path)], ["model"], {"train": ["fit"]})


@pytest.mark.integration
def test_no_lazily_exported_name_is_also_a_submodule(tmp_path):
    """``from package import name`` must give the object, not a submodule of that name."""
    (tmp_path / "clash").mkdir()
    (tmp_path / "clash" / "fit.py").write_text("def fit(): pass\n")
    with pytest.raises(ValueError, match=r"\['fit'\] are also submodules"):
        lazy_exports("clash", {"fit": ["fit"]}, {"__path__": [str(tmp_path / "clash")]})
    code = "from seqlearn.learnability import spectrum_envelope, transport; print(callable(transport))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


LIGHT = [
    "seqlearn",
    "seqlearn.data",
    "seqlearn.data.vocab",
    "seqlearn.validation",
    "seqlearn.guard",
    "seqlearn.ngram",
    "seqlearn.nlm",
    "seqlearn.rnn",
    "seqlearn.lm",
    "seqlearn.gated",
    "seqlearn.reservoir",
    "seqlearn.learnability",
    "seqlearn.learnability.stable",
    "seqlearn.learnability.window",
    "seqlearn.lowrank",
    "seqlearn.attention",
]
HEAVY = ("scipy", "torch", "seqlearn.grading")


@pytest.mark.integration
@pytest.mark.parametrize("name", LIGHT)
def test_the_numpy_layers_import_neither_scipy_nor_torch_nor_the_grader(name):
    """Each of these, imported alone in a fresh interpreter, costs only NumPy (torch parts load on first use)."""
    code = "import importlib, sys; importlib.import_module(sys.argv[1]); print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, check=True).stdout
    heavy = [m for m in out.split() if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert heavy == [], f"import {name} loads {heavy[:5]}"


@pytest.mark.integration
def test_a_lazy_name_loads_its_submodule_on_first_use():
    """The check above can fail: asking for one torch name imports torch."""
    code = "import sys, seqlearn.rnn; seqlearn.rnn.RNNLM; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
