"""Execute the course's notebooks headless and measure them against Binder's budget.

Used by ``seqlearn run``, ``make book`` and the chapter tests. A chapter must run top to
bottom in at most :data:`BINDER_SECONDS` seconds and :data:`BINDER_PEAK_MB` MB of peak
resident memory (the kernel's ``VmHWM``, read from ``/proc`` on Linux).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..device import kernel_env

__all__ = [
    "BINDER_SECONDS",
    "BINDER_PEAK_MB",
    "NotebookError",
    "RunReport",
    "course_root",
    "chapter_paths",
    "execute_notebook",
    "install_mathjax",
    "Quote",
    "quotes",
]

BINDER_SECONDS = 180.0
BINDER_PEAK_MB = 1536.0
MATHJAX_DIR = "mathjax"
"""Where :func:`execute_notebook` puts MathJax, next to the HTML pages that use it."""

_MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
_OFFLINE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}
{{ super() }}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null}});
</script>
{%- endblock html_head_js_mathjax -%}
"""
"""nbconvert's lab template without the scripts it would load from CDNs, and with MathJax set to
the only web font jupyter-server-mathjax ships (STIX-Web)."""


_QUOTE = re.compile(
    r"(?P<shown>-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)[%$*\s]*<!--\s*q:(?P<expr>[^|]+?)\|(?P<spec>[^|]*?)\s*-->"
)
_QUOTES_MARK = "SEQLEARN-QUOTES:"


@dataclass(frozen=True)
class Quote:
    r"""A number quoted in a markdown cell, with the expression that computes it.

    Chapters write ``test perplexity 87.75<!--q: ppl["mkn"] | .2f -->``: the HTML comment,
    invisible when rendered, names a Python expression over the chapter's variables and the
    format spec that turns its value into the text shown. A headless run evaluates every
    quote after the last cell and reports those whose text differs (:attr:`RunReport.misquoted`).

    A number that depends on the floating-point path (anything trained) states how far it may
    move: ``about 0.07<!--q: loss | .2f ~ 0.01 -->`` (absolute) or ``~ 5%`` (relative to the
    computed value), and the text stands for any value within it, on every kernel path: the pins
    of :data:`seqlearn.device.CPU_KERNEL_PINS` make two machines of one vendor agree, not every
    x86 CPU. A quote without a tolerance must match digit for digit everywhere. A bound is quoted
    through ``min``/``max``: ``a median of 0.6<!--q: min(0.6, median) | .1f --> or more`` shows 0.6
    exactly when the claim holds.
    """

    cell_id: str
    shown: str
    expr: str
    spec: str
    tolerance: str = ""

    def accepts(self, computed: str) -> bool:
        """Whether the text shown stands for ``computed`` (the formatted value): equal, or within the tolerance."""
        if self.shown == computed:
            return True
        if not self.tolerance:
            return False
        try:
            shown, value = (float(text.replace(",", "")) for text in (self.shown, computed))
        except ValueError:
            return False
        relative = self.tolerance.endswith("%")
        bound = float(self.tolerance.rstrip("%")) * (abs(value) / 100 if relative else 1.0)
        return abs(shown - value) <= bound + 1e-12 * abs(value)


def _spec_and_tolerance(text: str, cell_id: str) -> tuple[str, str]:
    """``".3f ~ 0.01"`` -> ``(".3f", "0.01")``; a tolerance must be a number >= 0, optionally with ``%``."""
    spec, _, tolerance = (part.strip() for part in text.partition("~"))
    if tolerance and not re.fullmatch(r"\d+(?:\.\d*)?(?:e[-+]?\d+)?%?", tolerance):
        raise ValueError(f"cell {cell_id}: a quote's tolerance must be a number or a percentage, got {tolerance!r}")
    return spec, tolerance


def quotes(nb) -> list[Quote]:
    """Every :class:`Quote` in the markdown cells of ``nb``, in order.

    Raises
    ------
    ValueError
        If a quote's tolerance (after ``~``) is not a number or a percentage.
    """
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in _QUOTE.finditer(cell.source):
            cell_id = cell.get("id", "?")
            spec, tolerance = _spec_and_tolerance(m["spec"], cell_id)
            found.append(Quote(cell_id, m["shown"], m["expr"].strip(), spec, tolerance))
    return found


def _quotes_cell(found: list[Quote]):
    """A code cell printing the formatted value of each quote's expression (or the error it raises)."""
    import nbformat

    pairs = [(q.expr, q.spec) for q in found]
    source = f"""import json as _json
_shown = []
for _expr, _spec in {pairs!r}:
    try:
        _shown.append(format(eval(_expr), _spec))
    except Exception as _error:
        _shown.append(f"{{type(_error).__name__}}: {{_error}}")
print({_QUOTES_MARK!r} + _json.dumps(_shown))"""
    return nbformat.v4.new_code_cell(source)


def _misquoted(found: list[Quote], cell) -> list[str]:
    """``cell_id: text says X, the chapter computes Y (expr)`` for each quote that does not stand for its value
    (:meth:`Quote.accepts`)."""
    text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
    computed = json.loads(text.split(_QUOTES_MARK, 1)[1])
    return [
        f"{q.cell_id}: the text says {q.shown}, the chapter computes {value} "
        f"({q.expr} | {q.spec}{' ~ ' + q.tolerance if q.tolerance else ''})"
        for q, value in zip(found, computed)
        if not q.accepts(value)
    ]


@dataclass
class RunReport:
    """Outcome of one headless run: wall-clock seconds, the kernel's peak memory, the quotes that
    do not match what the notebook computed (see :class:`Quote`), and the files written: the
    offline HTML page and the executed notebook (where :func:`execute_notebook` was asked for them)."""

    name: str
    seconds: float
    peak_mb: float | None
    html: Path | None = None
    misquoted: list[str] = field(default_factory=list)
    notebook: Path | None = None

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


class NotebookError(RuntimeError):
    """A cell of a notebook failed, timed out or lost its kernel; the message is one line naming the cell."""

    def __init__(self, name: str, cell_index: int | None, cell, cause: Exception, timeout: float):
        self.name, self.cell_index, self.cause = name, cell_index, cause
        where = "before its first cell" if cell_index is None else f"cell {cell_index + 1}"
        first_line = next((ln.strip() for ln in (cell.source if cell else "").splitlines() if ln.strip()), "")
        if first_line:
            where += f" ({first_line[:60]}{'...' if len(first_line) > 60 else ''})"
        super().__init__(f"{name}: {where}: {_what_happened(cause, timeout)}")


def _what_happened(cause: Exception, timeout: float) -> str:
    """One line: the error a cell raised, its time-out, or the kernel's death."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    if isinstance(cause, CellExecutionError):
        evalue = (cause.evalue or "").strip().splitlines()
        return f"raised {cause.ename}" + (f": {evalue[0]}" if evalue else "")
    if isinstance(cause, CellTimeoutError):
        return f"timed out after {timeout:g} s"
    if isinstance(cause, DeadKernelError):
        return "the kernel died (out of memory?)"
    return f"{type(cause).__name__}: {cause}"


def execute_notebook(
    path, timeout: float = 600, html_dir=None, kernel_name: str = "python3", executed_dir=None
) -> RunReport:
    """Run the notebook at ``path`` top to bottom in its own directory, in a fresh kernel.

    Raises :class:`NotebookError`, whose message is one line naming the cell, if a cell
    fails, times out or kills the kernel. With ``html_dir`` the executed notebook is written
    there as ``<name>.html``, a page that reads offline (see :func:`_write_html`); with
    ``executed_dir``, as ``<name>.ipynb`` with its outputs (what ``seqlearn book`` renders). A
    ``ValueError`` is raised before the notebook runs if such a directory cannot be created or written.
    """
    for out_dir in (html_dir, executed_dir):
        if out_dir is not None:
            _check_writable_dir(out_dir)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellControlSignal, DeadKernelError

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    peak: dict[str, float | None] = {"mb": None}
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(path.parent)}},
        log=logging.Logger("nbclient", level=logging.CRITICAL + 1),  # a failure is reported once, below
    )

    def record_peak(**_):
        process = getattr(getattr(client.km, "provisioner", None), "process", None)
        if process is not None:
            peak["mb"] = _peak_rss_mb(process.pid) or peak["mb"]

    running: dict = {"index": None, "cell": None}

    def record_cell(cell, cell_index, **_):
        running.update(index=cell_index, cell=cell)

    client.on_cell_start = record_cell
    client.on_cell_executed = record_peak
    found = quotes(nb)
    nb.cells.append(_quotes_cell(found))
    start = time.perf_counter()
    try:
        # The kernel's own log is dropped (failures are reported below); its figures go inline, as in JupyterLab,
        # whatever backend this process was told to use (MPLBACKEND=Agg would make every plt.show() show nothing);
        # its CPU kernels are pinned to the code paths the quoted numbers were computed with, one thread each.
        client.execute(stderr=subprocess.DEVNULL, env={**kernel_env(), "MPLBACKEND": _INLINE_BACKEND})
    except (CellControlSignal, DeadKernelError) as e:
        raise NotebookError(path.stem, running["index"], running["cell"], e, timeout) from e
    seconds = time.perf_counter() - start
    misquoted = _misquoted(found, nb.cells.pop())
    html = _write_html(nb, path.stem, html_dir) if html_dir is not None else None
    executed = Path(executed_dir) / path.name if executed_dir is not None else None
    if executed is not None:
        nbformat.write(nb, executed)
    return RunReport(path.stem, seconds, peak["mb"], html, misquoted, executed)


def _check_writable_dir(out_dir) -> None:
    """Create ``out_dir`` if needed and make sure files can be written there.

    Raises
    ------
    ValueError
        If the directory cannot be created or is not writable.
    """
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except FileExistsError:
        raise ValueError(f"cannot write to {out_dir}: it is a file, not a directory") from None
    except OSError as err:
        raise ValueError(f"cannot write to {out_dir}: {err.strerror or err}") from None


def _write_html(nb, stem: str, html_dir) -> Path:
    """Write ``nb`` as ``html_dir/<stem>.html``, a page that needs no network to read.

    MathJax is served from ``html_dir/mathjax/`` (see :func:`install_mathjax`), the scripts
    the lab template would load from CDNs (require.js, mermaid.js, the widget manager) are
    left out, and widget outputs show their static ``image/png`` (explorers made with
    :func:`seqlearn.viz.explorer` carry one) instead of the live widget view.
    """
    out = Path(html_dir) / f"{stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    install_mathjax(out.parent)
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    body, _ = _offline_exporter().from_notebook_node(nb, resources={"metadata": {"name": stem}})
    out.write_text(body, encoding="utf-8")
    return out


def _offline_exporter():
    """An ``HTMLExporter`` for offline pages: local MathJax, no CDN scripts, no widget views."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    priority = HTMLExporter().default_config.NbConvertBase.display_data_priority
    config = Config({"NbConvertBase": {"display_data_priority": [m for m in priority if m != _WIDGET_VIEW]}})
    return HTMLExporter(
        config=config,
        extra_loaders=[DictLoader({"seqlearn-offline.html.j2": _OFFLINE_TEMPLATE})],
        template_file="seqlearn-offline.html.j2",
        mathjax_url=_MATHJAX_URL,
    )


def _mathjax_source() -> Path:
    """MathJax 2.7 as shipped by ``jupyter-server-mathjax`` (in the ``course`` extra)."""
    try:
        import jupyter_server_mathjax
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            "writing HTML needs MathJax from jupyter-server-mathjax: pip install 'seqlearn[course]'",
            name=err.name,
        ) from None
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def _tree(root: Path) -> dict[str, int]:
    """Relative path -> size of every file under ``root`` (empty if ``root`` is no directory)."""
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def install_mathjax(html_dir: Path) -> Path:
    """Copy MathJax into ``html_dir/mathjax/`` unless a complete copy is already there.

    The copy is made in a temporary directory next to it and renamed into place, so an
    interrupted copy leaves no half-copied MathJax behind.
    """
    source, target = _mathjax_source(), html_dir / MATHJAX_DIR
    wanted = _tree(source)
    if _tree(target) == wanted:
        return target
    staging = Path(tempfile.mkdtemp(prefix=".mathjax-", dir=html_dir))
    try:
        shutil.copytree(source, staging / MATHJAX_DIR)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging / MATHJAX_DIR, target)
    except OSError:
        if _tree(target) != wanted:
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
