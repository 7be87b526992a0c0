"""Lazy exports: a package names what its heavy submodules define and loads them on first use.

A package that keeps ``import`` cheap (no torch, no scipy until they are needed) builds a table
``{submodule: [names]}`` with :func:`lazy_table`, which reads each submodule's ``__all__`` from
its source without importing it, and binds the two functions :func:`lazy_exports` returns to its
module-level ``__getattr__`` and ``__dir__`` (PEP 562)::

    _WITHHELD = {"cells": ["check_input"]}  # in cells.__all__, not in the package's
    _LAZY = lazy_table(__path__, ["cells", "layers"], _WITHHELD)
    __all__ = [name for names in _LAZY.values() for name in names]
    __getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

``package.LSTMCell`` then imports ``package.cells`` the first time it is asked for, and
``package.cells`` itself is importable by attribute as well.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["public_names", "lazy_table", "lazy_exports"]

_ALL = re.compile(r"\n__all__\b")  # a line that starts with __all__ (a literal prefix: the search is fast)


def public_names(path: str | Path) -> list[str]:
    """The names of the module at ``path``'s ``__all__``, read from its source, which is not run.

    Only the one statement is parsed: ``__all__`` must be bound once at the top level, to a literal
    list or tuple of strings (``__all__ = [...]``); anything else is a ``ValueError``.
    """
    source = Path(path).read_text(encoding="utf-8")
    bindings = [m.start() for m in _ALL.finditer("\n" + source)]  # offsets in source of those lines
    if len(bindings) != 1:
        raise ValueError(f"{path}: __all__ must be bound once at the top level, found {len(bindings)} bindings")
    try:
        node = _first_statement(source[bindings[0] :])
        names = ast.literal_eval(node.value) if isinstance(node, ast.Assign) else None
    except (SyntaxError, ValueError):  # not a statement as ruff formats it, or not a literal
        names = None
    if not isinstance(names, list | tuple) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"{path}: __all__ must be a literal list of strings (__all__ = [...])")
    return list(names)


def _first_statement(source: str) -> ast.stmt:
    """The statement ``source`` starts with, written as ruff formats it: on its first line, or down to
    the next line that starts at column 0 (where the bracket it opens closes). No tokenizer: it is slow
    to start."""
    lines = source.split("\n")
    try:
        return ast.parse(lines[0]).body[0]
    except SyntaxError:  # the statement goes on
        rows = next((row for row, line in enumerate(lines[1:], 2) if line[:1].strip()), len(lines))
        return ast.parse("\n".join(lines[:rows])).body[0]


def lazy_table(
    path: Iterable[str], modules: Sequence[str], withheld: Mapping[str, Sequence[str]] | None = None
) -> dict[str, list[str]]:
    """``{module: names}``: each submodule's ``__all__`` (:func:`public_names`), less the names withheld.

    ``path`` is the package's ``__path__``. A package exports the whole ``__all__`` of each of
    ``modules`` except the names ``withheld[module]``, which must be in it (``ValueError`` for a
    name or module that is not there, so the list cannot outlive what it withholds).
    """
    (folder,) = path
    withheld = withheld or {}
    unknown = sorted(set(withheld) - set(modules))
    if unknown:
        raise ValueError(f"withheld names of {unknown}, which are not lazy submodules")
    table = {}
    for module in modules:
        names = public_names(Path(folder) / f"{module}.py")
        stale = sorted(set(withheld.get(module, ())) - set(names))
        if stale:
            raise ValueError(f"{module}: withheld names {stale} are not in its __all__")
        table[module] = [name for name in names if name not in withheld.get(module, ())]
    return table


def lazy_exports(
    package: str, table: Mapping[str, Sequence[str]], namespace: dict
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` that load the names of ``table`` on first use.

    A name may not also be a submodule's: once the submodule is imported, Python binds the
    module to the package's attribute of that name, and ``from package import name`` would
    return the module (``ValueError``).
    """
    import pkgutil

    module_of = {name: module for module, names in table.items() for name in names}
    submodules = {m.name for m in pkgutil.iter_modules(namespace.get("__path__", []))}
    clashes = sorted(set(module_of) & submodules)
    if clashes:
        raise ValueError(f"{package}: exported names {clashes} are also submodules; rename one of each pair")

    def __getattr__(name: str):  # noqa: N807 (PEP 562)
        if name in module_of:
            return getattr(importlib.import_module(f".{module_of[name]}", package), name)
        if name in table:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:  # noqa: N807 (PEP 562)
        return sorted(set(namespace) | set(module_of) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
