"""Sphinx configuration of the course's website, built by ``seqlearn book`` (``make book``).

``seqlearn book`` stages the executed chapters, the exercises (release versions, without solutions),
the bibliography it gathers from the chapters and MathJax next to this file, writes ``book.json``
(the repository and branch that Binder launches from), and runs ``sphinx-build`` offline.
"""

import json
from pathlib import Path

_settings = json.loads((Path(__file__).parent / "book.json").read_text(encoding="utf-8"))

project = "seqlearn: how sequence models remember"
author = "the seqlearn authors"
copyright = "the seqlearn authors, MIT licence"
root_doc = "index"
extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The chapters arrive executed by seqlearn (timed, quotes checked); the exercises are shown unexecuted.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
# An explorer's live widget needs a kernel: the page shows the PNG of its default settings instead.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_ipywidgets_js: dict = {}  # no widget manager from a CDN

# MathJax 2.7 from jupyter-server-mathjax, served from _static/ (no CDN); STIX-Web is its only web font.
html_static_path = ["_static"]
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
mathjax2_config = {
    # The page's body is marked "ignore"; MyST's maths elements carry the class "math".
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": True,
        "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
}

html_theme = "sphinx_book_theme"
html_title = "How sequence models remember"
html_theme_options = {
    "repository_url": _settings["repository"],
    "repository_branch": _settings["branch"],
    "path_to_docs": "",
    "use_repository_button": True,
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    "show_toc_level": 2,
}
