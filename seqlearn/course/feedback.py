"""Feedback pages whose maths render offline: each page carries MathJax inside itself.

``nbgrader generate_feedback`` writes one HTML page per notebook, ``feedback/<student>/NN_slug/
NN_slug.html``, and ``release_feedback`` / ``fetch_feedback`` pass on that file alone (nothing
beside it travels through the exchange). Stock nbgrader's feedback template loads MathJax from a
CDN, and calls nbconvert's ``mathjax()`` macro without a URL, so ``HTMLExporter.mathjax_url``
cannot point it elsewhere: offline, or where the CDN is blocked, a student reads raw LaTeX.

A page that works wherever the student opens it (from the exchange, JupyterHub's file browser,
a download on a laptop, offline) cannot reference MathJax beside it, since no file beside it
arrives; so :class:`FeedbackExporter`, which ``nbgrader_config.py`` makes ``GenerateFeedback``'s
exporter, puts MathJax into the page (:func:`mathjax_script`): MathJax 2.7 from
jupyter-server-mathjax, the copy the book serves, with its TeX input and every extension and
operator table it may load on demand. The page asks for no file, on the network or on disk.

Maths are drawn by the browser's MathML (MathJax's NativeMML output): the HTML-CSS output the
book uses would need its web fonts and their glyph tables inside each page too (about 2 MB more
per page, for every student and notebook), while MathML needs no font files. Two things
MathML Core browsers (Chromium) leave out are made up for: letters in ``\\mathbb``, ``\\mathbf``,
``\\mathcal`` and the like become Unicode's mathematical letters (``ℝ``, ``𝐱``), and the columns
of ``aligned`` and ``cases`` get their alignment. The page's scripts must be allowed to run:
JupyterLab's HTML viewer runs them once the page is trusted ("Trust HTML"), a browser tab always.
"""

from __future__ import annotations

import functools
import json

from jinja2 import DictLoader
from nbconvert.exporters import HTMLExporter
from traitlets import default

from .notebooks import _mathjax_source

__all__ = ["CARRIED_DIRECTORIES", "FeedbackExporter", "mathjax_script"]

CARRIED_DIRECTORIES = ("config", "extensions/TeX", "jax/element/mml/optable")
"""The folders of jupyter-server-mathjax's MathJax whose scripts a page carries (with ``MathJax.js``,
``extensions/Safe.js`` and the output choice below): the combined configuration, the TeX macros
loaded on demand (``\\boldsymbol``, ``\\color``, ``\\cancel`` ...) and the operator tables."""

_OUTPUT_CHOICE = "config/native-mathml.js"
_NATIVE_MATHML = r"""
(function () {
  // The combined configuration picks HTML-CSS in most browsers; its fonts are not in the page.
  MathJax.Hub.Register.StartupHook("End Config", function () {
    var hub = MathJax.Hub;
    hub.config.jax = hub.config.jax.filter(function (jax) {
      return jax.indexOf("output/") !== 0 || jax === "output/NativeMML";
    });
    hub.outputJax["jax/mml"] = [];
    MathJax.OutputJax.NativeMML.Register("jax/mml");
  });

  // Unicode's mathematical letters (A, a, 0 of each style; 0 where it has no digits), and the
  // letters it encodes elsewhere: what \mathbb and the like look like without mathvariant.
  var STYLES = {
    "bold": [0x1D400, 0x1D41A, 0x1D7CE], "italic": [0x1D434, 0x1D44E, 0],
    "bold-italic": [0x1D468, 0x1D482, 0], "script": [0x1D49C, 0x1D4B6, 0],
    "bold-script": [0x1D4D0, 0x1D4EA, 0], "fraktur": [0x1D504, 0x1D51E, 0],
    "double-struck": [0x1D538, 0x1D552, 0x1D7D8], "bold-fraktur": [0x1D56C, 0x1D586, 0],
    "sans-serif": [0x1D5A0, 0x1D5BA, 0x1D7E2], "bold-sans-serif": [0x1D5D4, 0x1D5EE, 0x1D7EC],
    "sans-serif-italic": [0x1D608, 0x1D622, 0], "sans-serif-bold-italic": [0x1D63C, 0x1D656, 0],
    "monospace": [0x1D670, 0x1D68A, 0x1D7F6]
  };
  var ELSEWHERE = {
    "italic": {h: 0x210E},
    "script": {B: 0x212C, E: 0x2130, F: 0x2131, H: 0x210B, I: 0x2110, L: 0x2112, M: 0x2133,
               R: 0x211B, e: 0x212F, g: 0x210A, o: 0x2134},
    "fraktur": {C: 0x212D, H: 0x210C, I: 0x2111, R: 0x211C, Z: 0x2128},
    "double-struck": {C: 0x2102, H: 0x210D, N: 0x2115, P: 0x2119, Q: 0x211A, R: 0x211D, Z: 0x2124}
  };
  var TEX_STYLES = {"-tex-caligraphic": "script", "-tex-caligraphic-bold": "bold-script", "-tex-mathit": "italic"};

  function styled(text, style) {
    var first = STYLES[style], elsewhere = ELSEWHERE[style] || {};
    return text.replace(/[A-Za-z0-9]/g, function (c) {
      var code = c.charCodeAt(0);
      if (elsewhere[c]) { return String.fromCharCode(elsewhere[c]); }
      if (code >= 97) { return String.fromCodePoint(first[1] + code - 97); }
      if (code >= 65) { return String.fromCodePoint(first[0] + code - 65); }
      return first[2] ? String.fromCodePoint(first[2] + code - 48) : c;
    });
  }

  function letters(node) {
    if (!node || !node.data) { return; }
    if (!node.isToken) {
      for (var i = 0; i < node.data.length; i++) { letters(node.data[i]); }
      return;
    }
    var style = TEX_STYLES[node.mathvariant] || node.mathvariant;
    if (!STYLES.hasOwnProperty(style)) { return; }
    var changed = false;
    for (var j = 0; j < node.data.length; j++) {
      var chars = node.data[j];
      if (chars && chars.type === "chars") {
        var text = chars.data.join(""), made = styled(text, style);
        changed = changed || made !== text;
        chars.data = [made];
      }
    }
    if (changed) { node.mathvariant = "normal"; }
  }
  MathJax.Hub.Register.StartupHook("TeX Jax Ready", function () {
    MathJax.InputJax.TeX.postfilterHooks.Add(function (data) { letters(data.math.root); });  // an element jax
  });

  // MathML Core centres every table cell: give aligned, cases and matrices their columns.
  MathJax.Hub.Register.MessageHook("End Math", function () {
    var tables = document.querySelectorAll("mtable[columnalign]");
    for (var t = 0; t < tables.length; t++) {
      var aligns = tables[t].getAttribute("columnalign").split(/\s+/), rows = tables[t].children;
      for (var r = 0; r < rows.length; r++) {
        var cells = rows[r].children, skip = rows[r].localName === "mlabeledtr" ? 1 : 0;
        for (var k = skip; k < cells.length; k++) {
          cells[k].style.textAlign = aligns[Math.min(k - skip, aligns.length - 1)];
        }
      }
    }
  });
})();
MathJax.Ajax.loadComplete("[MathJax]/config/native-mathml.js");
"""
"""The page's own configuration file: MathML output, with what MathML Core leaves out made up for."""

_BOOT = r"""
(function (files) {
  function run(source) {
    var script = document.createElement("script");
    script.text = source;
    document.head.appendChild(script);
  }
  window.MathJax = {
    root: "mathjax",
    config: ["TeX-AMS-MML_HTMLorMML-full.js", "Safe.js", "native-mathml.js"],
    menuSettings: {renderer: "NativeMML"},
    MathMenu: {showRenderer: false, showFontMenu: false},
    messageStyle: "none",
    displayAlign: "center",
    tex2jax: {
      inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]],
      processEscapes: true, processEnvironments: true
    },
    TeX: {equationNumbers: {autoNumber: "AMS", useLabelIds: true}},
    // HTML-CSS and the fast preview start too (the combined configuration holds them): with no
    // fonts to look for and the preview off, they ask for no file.
    "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: null, imageFont: null},
    "fast-preview": {disabled: true},
    AuthorInit: function () {
      // MathJax's loader takes the files carried here instead of fetching them.
      var ajax = MathJax.Ajax, fetch = ajax.loader.JS;
      ajax.loader.JS = function (url, callback) {
        var name = this.fileName(url).replace(/^\[MathJax\]\//, "").replace(/\?.*$/, "");
        if (!files.hasOwnProperty(name)) { return fetch.call(this, url, callback); }
        this.loading[url] = {
          callback: callback, status: this.STATUS.OK, message: MathJax.Message.File(name),
          timeout: setTimeout(MathJax.Callback(["loadTimeout", this, url]), this.timeout)
        };
        setTimeout(function () { run(files[name]); }, 0);
      };
    }
  };
  run(files["MathJax.js"]);
})(__FILES__);
"""
"""Starts MathJax from ``__FILES__`` (path under MathJax's root -> source) without asking for any file."""


def _carried_files() -> dict[str, str]:
    """Path under MathJax's root -> source, of every script a page carries."""
    root = _mathjax_source()
    names = ["MathJax.js", "extensions/Safe.js"]
    names += [str(p.relative_to(root)) for d in CARRIED_DIRECTORIES for p in sorted((root / d).rglob("*.js"))]
    return {**{name: (root / name).read_text("utf-8") for name in names}, _OUTPUT_CHOICE: _NATIVE_MATHML}


@functools.cache
def mathjax_script() -> str:
    """A ``<script>`` element that typesets the page's TeX (``$...$``, ``$$...$$``, ``\\(...\\)``,
    ``\\[...\\]``) with the MathJax it carries: no file is loaded, from the network or from disk."""
    files = json.dumps(_carried_files(), sort_keys=True).replace("</", "<\\/")  # no "</script>" inside
    return "<script>" + _BOOT.replace("__FILES__", files) + "</script>"


_MATHJAX_MACRO = "{%- macro mathjax(url=None) -%}{{ carried_mathjax() }}{%- endmacro %}"
"""nbconvert's ``mathjax.html.j2``, replaced: the templates that import its macro get the carried MathJax."""


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter, whose pages carry MathJax inside them (:func:`mathjax_script`).

    Whatever template it renders (``GenerateFeedback`` gives it nbgrader's ``feedback``), the
    ``mathjax()`` macro those templates import from nbconvert writes the carried MathJax instead
    of a ``<script src>`` to a CDN.
    """

    @default("extra_loaders")
    def _carried_mathjax_loader(self):
        return [DictLoader({"mathjax.html.j2": _MATHJAX_MACRO})]

    def _create_environment(self):
        environment = super()._create_environment()
        environment.globals["carried_mathjax"] = mathjax_script
        return environment
