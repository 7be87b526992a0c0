"""Results shipped beside a chapter: the numbers of an experiment too heavy for Binder, with how they were made.

A heavy experiment runs once, from its module's command line, and its numbers are kept in
``chapters/results/<name>.json``, one JSON document::

    {"name": ..., "provenance": {"command": ..., "machine": {...}, "seconds": ..., "date": ...},
     "config": {...}, "results": {...}}

``config`` is what the experiment was run with (a reader checks it against the code's current
default, so a file cannot silently drift from the code that regenerates it), ``results`` its
numbers, ``provenance`` the exact command, the machine, the wall time and the date.
:func:`write_results` writes it whole or not at all; :func:`read_results` refuses a file that
is missing, not JSON, of another experiment or made with another configuration, naming which.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._files import replacing

__all__ = ["RESULTS_DIR", "ShippedResults", "machine", "write_results", "read_results"]

RESULTS_DIR = Path("chapters") / "results"
"""Where the shipped results live, relative to the course's root."""

_KEYS = ("name", "provenance", "config", "results")


@dataclass(frozen=True)
class ShippedResults:
    """One shipped document: its ``name``, ``config``, ``results`` and ``provenance``."""

    name: str
    config: dict[str, Any]
    results: dict[str, Any]
    provenance: dict[str, Any]


def machine() -> dict[str, Any]:
    """The machine an experiment runs on: OS, processor, CPU count and the versions that set its floating point."""
    import numpy as np

    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    if "torch" in sys.modules:
        info["torch"] = sys.modules["torch"].__version__
    return info


def write_results(
    path, name: str, config: Mapping, results: Mapping, *, command: str, seconds: float, host: Mapping | None = None
) -> Path:
    """Write the document of experiment ``name`` to ``path`` (JSON, whole or not at all); return the path.

    ``config`` and ``results`` must be JSON-serialisable as they are (lists, not arrays), so that
    what is read back equals what was written. ``host`` is the provenance's machine, by default
    :func:`machine`'s (an experiment that records more of it, its threads or its compiled kernel,
    passes its own).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"the results need a name, got {name!r}")
    document = {
        "name": name,
        "provenance": {
            "command": str(command),
            "machine": machine() if host is None else dict(host),
            "seconds": round(float(seconds), 1),
            "date": datetime.date.today().isoformat(),
        },
        "config": dict(config),
        "results": dict(results),
    }
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    with replacing(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def read_results(path, name: str, config: Mapping | None = None) -> ShippedResults:
    """Read the document at ``path``; it must be experiment ``name``'s and, if ``config`` is given, made with it.

    Raises
    ------
    FileNotFoundError
        No file at ``path`` (the message names the command that writes one, if known).
    ValueError
        Not JSON, keys missing, another experiment's document, or another configuration (the
        differing keys are named).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no shipped results at {path}: regenerate them with the experiment's module")
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not a JSON document ({error})") from None
    if not isinstance(document, dict) or not all(key in document for key in _KEYS):
        raise ValueError(f"{path} is not a shipped-results document: it needs the keys {', '.join(_KEYS)}")
    if document["name"] != name:
        raise ValueError(f"{path} holds the results of {document['name']!r}, not of {name!r}")
    if config is not None:
        _check_config(path, document["config"], dict(config))
    return ShippedResults(document["name"], document["config"], document["results"], document["provenance"])


def _check_config(path: Path, shipped: dict, expected: dict) -> None:
    """Raise if ``shipped`` (read from ``path``) differs from ``expected``, naming the keys that differ."""
    expected = json.loads(json.dumps(expected))  # tuples become lists, as in the file
    differ = sorted(key for key in shipped.keys() | expected.keys() if shipped.get(key) != expected.get(key))
    if differ:
        raise ValueError(
            f"{path} was made with another configuration than the code's ({', '.join(differ)} differ): "
            f"regenerate it with the command in its provenance"
        )
