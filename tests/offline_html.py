"""Test helper: what an HTML page written by ``seqlearn.course.notebooks`` loads, and what its code cells show."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

RESOURCE_ATTRIBUTES = {"script": "src", "link": "href", "img": "src", "iframe": "src"}
"""The tag attributes whose URL a browser loads on its own (an ``<a href>`` is only followed)."""

CSS_URL = re.compile(r"""@import\s+['"]([^'"]+)['"]|url\(\s*['"]?([^'")\s]+)""")
JS_URL = re.compile(r"""https?://[^\s'"`]+""")
JS_TYPES = {"", "text/javascript", "module"}
EXTERNAL = re.compile(r"(?i)^(https?:)?//")


@dataclass
class CodeCell:
    """A code cell of the page: its source text and how many images its outputs show."""

    source: str = ""
    images: int = 0


@dataclass
class Page:
    """Every resource URL of a page (attributes, inline CSS, URLs in inline scripts) and its code cells."""

    resources: list[str] = field(default_factory=list)
    code_cells: list[CodeCell] = field(default_factory=list)

    def external_resources(self) -> list[str]:
        """The resource URLs that need a network: ``http(s)://`` and protocol-relative ones."""
        return [url for url in self.resources if EXTERNAL.match(url)]

    def cells_calling(self, name: str) -> list[CodeCell]:
        """The code cells with a line that starts with a call of ``name``."""
        return [cell for cell in self.code_cells if re.search(rf"(?m)^{name}\(", cell.source)]


class _PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.page = Page()
        self._div_classes: list[list[str]] = []
        self._raw = None  # "css" or "js" inside a <style> or an inline <script>

    def _inside(self, *css_classes: str) -> bool:
        return all(any(c in classes for classes in self._div_classes) for c in css_classes)

    def _css(self, text: str) -> None:
        self.page.resources += [a or b for a, b in CSS_URL.findall(text)]

    def _raw_kind(self, tag: str, attrs: dict) -> str | None:
        if tag == "style":
            return "css"
        if tag == "script" and not attrs.get("src") and (attrs.get("type") or "") in JS_TYPES:
            return "js"
        return None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get(RESOURCE_ATTRIBUTES.get(tag, "")):
            self.page.resources.append(attrs[RESOURCE_ATTRIBUTES[tag]])
        self._css(attrs.get("style") or "")
        self._raw = self._raw_kind(tag, attrs)
        if tag == "div":
            classes = (attrs.get("class") or "").split()
            if "jp-CodeCell" in classes:
                self.page.code_cells.append(CodeCell())
            self._div_classes.append(classes)
        elif tag == "img" and self._inside("jp-CodeCell", "jp-OutputArea"):
            self.page.code_cells[-1].images += 1

    def handle_endtag(self, tag):
        if tag == "div":
            self._div_classes.pop()
        self._raw = None

    def handle_data(self, data):
        if self._raw == "css":
            self._css(data)
        elif self._raw == "js":
            self.page.resources += JS_URL.findall(data)
        elif self._inside("jp-CodeCell", "jp-InputArea"):
            self.page.code_cells[-1].source += data


def read_page(path: Path) -> Page:
    """Parse the HTML page at ``path``."""
    parser = _PageParser()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    parser.close()
    return parser.page
