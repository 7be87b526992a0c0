"""Execute the course's notebooks headless and measure them against Binder's budget.

Used by ``seqlearn run``, ``make book`` and the chapter tests. A chapter must run top to
bottom in at most :data:`BINDER_SECONDS` seconds and :data:`BINDER_PEAK_MB` MB of peak
resident memory (the kernel's ``VmHWM``, read from ``/proc`` on Linux).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BINDER_SECONDS", "BINDER_PEAK_MB", "RunReport", "course_root", "chapter_paths", "execute_notebook"]

BINDER_SECONDS = 180.0
BINDER_PEAK_MB = 1536.0


@dataclass
class RunReport:
    """Outcome of one headless run: wall-clock seconds and the kernel's peak memory."""

    name: str
    seconds: float
    peak_mb: float | None
    html: Path | None = None

    def within_binder_budget(self) -> bool:
        """True if the run took at most 3 minutes and (where measured) at most 1.5 GB."""
        return self.seconds <= BINDER_SECONDS and (self.peak_mb is None or self.peak_mb <= BINDER_PEAK_MB)

    def __str__(self) -> str:
        peak = "n/a" if self.peak_mb is None else f"{self.peak_mb:.0f} MB"
        return f"{self.name}: {self.seconds:.1f} s, peak memory {peak}"


def course_root(start: str | os.PathLike | None = None) -> Path:
    """The course directory: the first of ``start`` (default: cwd) and its parents with ``chapters/``."""
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "chapters").is_dir() and (candidate / "pyproject.toml").is_file():
            return candidate
    raise FileNotFoundError(f"no course directory (with chapters/ and pyproject.toml) at or above {here}")


def chapter_paths(root: Path, names=None) -> list[Path]:
    """Chapter notebooks under ``root/chapters``, all of them or those matching ``names``.

    A name matches by slug (``01_ngram``), number (``1`` or ``01``) or file name.
    """
    paths = sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return paths
    chosen = []
    for name in names:
        key = str(name).removesuffix(".ipynb")
        hits = [p for p in paths if p.stem == key or p.stem.split("_")[0] == key.zfill(2)]
        if not hits:
            raise ValueError(f"no chapter called {name!r}; chapters are: {', '.join(p.stem for p in paths)}")
        chosen += hits
    return chosen


def _peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def execute_notebook(path, timeout: float = 600, html_dir=None, kernel_name: str = "python3") -> RunReport:
    """Run the notebook at ``path`` top to bottom in its own directory, in a fresh kernel.

    Raises ``nbclient.exceptions.CellExecutionError`` (with the failing cell) if a cell
    fails. With ``html_dir`` the executed notebook is written there as ``<name>.html``.
    """
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    peak = {"mb": None}
    client = NotebookClient(
        nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(path.parent)}}
    )

    def record_peak(**_):
        process = getattr(client.km.provisioner, "process", None)
        if process is not None:
            peak["mb"] = _peak_rss_mb(process.pid) or peak["mb"]

    client.on_cell_executed = record_peak
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    html = _write_html(nb, path.stem, html_dir) if html_dir is not None else None
    return RunReport(path.stem, seconds, peak["mb"], html)


def _write_html(nb, stem: str, html_dir) -> Path:
    from nbconvert import HTMLExporter

    out = Path(html_dir) / f"{stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    body, _ = HTMLExporter().from_notebook_node(nb)
    out.write_text(body, encoding="utf-8")
    return out
