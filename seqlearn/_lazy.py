"""Lazy exports: a package names what its heavy submodules define and loads them on first use.

A package that keeps ``import`` cheap (no torch, no scipy until they are needed) calls
:func:`lazy_exports` with a table ``{submodule: [names]}`` and binds the two functions it
returns to its module-level ``__getattr__`` and ``__dir__`` (PEP 562)::

    __getattr__, __dir__ = lazy_exports(__name__, {"model": ["BengioNLM"]}, globals())

``package.BengioNLM`` then imports ``package.model`` the first time it is asked for, and
``package.model`` itself is importable by attribute as well.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


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
