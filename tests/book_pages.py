"""Test helper: what the pages of a book built by ``seqlearn book`` show, read as a reader would.

A page's output images, its text outside code, its links and code lines (:func:`parse`), maths
left unparsed, the site served on loopback and checked in chromium (:func:`check_in_browser`).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from browser_support import launch_chromium
from offline_html import read_page


class _BookPage(HTMLParser):
    """The parts of a MyST-NB page the tests look at: output images, text outside code, links."""

    SKIPPED = frozenset({"script", "style", "pre", "code"})

    def __init__(self):
        super().__init__()
        self.output_images = 0
        self.text: list[str] = []
        self.code: list[str] = []
        self.links: list[str] = []
        self.article_links: list[str] = []  # those in the page's own content, not its navigation
        self._in_article = 0
        self._divs: list[bool] = []  # for each open <div>: is it a cell's output area?
        self._skipping = 0
        self._in_pre = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            self._divs.append("cell_output" in (attrs.get("class") or "").split())
        elif tag == "img" and any(self._divs):
            self.output_images += 1
        elif tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
            if self._in_article:
                self.article_links.append(attrs["href"])
        if tag in self.SKIPPED:
            self._skipping += 1
        self._in_pre += tag == "pre"
        self._in_article += tag == "article"

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            self._divs.pop()
        if tag in self.SKIPPED:
            self._skipping -= 1
        self._in_pre -= tag == "pre"
        self._in_article -= tag == "article"

    def handle_data(self, data):
        if not self._skipping:
            self.text.append(data)
        elif self._in_pre:
            self.code.append(data)

    def plain_text(self) -> str:
        """The page's text outside code, whitespace collapsed."""
        return " ".join("".join(self.text).split())

    def code_lines(self) -> set[str]:
        """Every line of the page's code blocks, stripped (syntax highlighting undone)."""
        return {line.strip() for line in "".join(self.code).splitlines()}


def parse(page: Path) -> _BookPage:
    parser = _BookPage()
    parser.feed(page.read_text("utf-8"))
    return parser


def raw_tex(page: _BookPage) -> list[str]:
    """Dollar-delimited maths left in the page's text: what MyST failed to parse as maths."""
    return re.findall(r"\$\$.*?\$\$|\$[^$\s][^$]*?\$", " ".join(page.text), flags=re.S)


def image_outputs(notebook: Path) -> int:
    """How many image outputs the executed notebook holds (what its page must show)."""
    nb = nbformat.read(notebook, as_version=4)
    return sum(
        any(key.startswith("image/") for key in output.get("data", {}))
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def assert_offline(page_path: Path) -> None:
    page = read_page(page_path)
    assert page.external_resources() == [], f"{page_path.name} loads from the network"
    for url in page.resources:
        local = (page_path.parent / url.split("?")[0].split("#")[0]).resolve()
        assert url.startswith("data:") or local.is_file(), f"{page_path.name}: {url} is missing"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 as a static web server would; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


TYPESET = """() => window.MathJax && MathJax.isReady && MathJax.Hub.queue.pending === 0
    && [...document.querySelectorAll('article .math.notranslate')]
        .every(e => e.querySelector('.MathJax, .MathJax_Display'))"""
"""True once MathJax has run and typeset every maths element of the page's content."""

RENDERED = """() => ({
    maths: document.querySelectorAll('article .math.notranslate').length,
    errors: document.querySelectorAll('.MathJax_Error, merror, .merror').length,
    images: [...document.querySelectorAll('article .cell_output img')].map(img => img.complete && img.naturalWidth > 0),
})"""
"""How many maths elements the content has, how many MathJax errors, and whether each output image loaded."""


def check_in_browser(html: Path, pages: list[str], shots: Path) -> dict[str, dict]:
    """Open each page of the site at ``html`` in chromium; return what :data:`RENDERED` reads there.

    Waits until MathJax has typeset every maths element (a page where it cannot times out), and
    leaves a full-page screenshot of each page in ``shots``.
    """
    seen = {}
    with serve(html) as base, launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for name in pages:
            page.goto(f"{base}/{name}")
            page.wait_for_function(TYPESET, timeout=60_000)
            seen[name] = page.evaluate(RENDERED)
            page.screenshot(path=shots / (name.replace("/", "_") + ".png"), full_page=True)
    return seen


def straight_quotes(text: str) -> str:
    """``text`` with the typographic quotes Sphinx's smartquotes puts in made straight again."""
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def code_lines(notebook: Path, *, between_markers: bool) -> set[str]:
    """The stripped code lines of ``notebook``: inside nbgrader's solution and hidden-test markers, or outside."""
    lines, inside = set(), False
    for cell in nbformat.read(notebook, as_version=4).cells:
        for line in cell.source.splitlines() if cell.cell_type == "code" else []:
            if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
                inside = True
            elif re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
                inside = False
            elif inside == between_markers and len(line.strip()) > 12:
                lines.add(line.strip())
    return lines
