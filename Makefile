# The course in two commands:  `make lab` (set up + open JupyterLab)  and  `make test`.
# Every target sets up the virtual environment first (once; again when pyproject.toml changes).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.seqlearn-installed
# Extra arguments for `jupyter lab`, e.g. LAB_ARGS="--no-browser --port 8890".
LAB_ARGS ?=
# What the URL JupyterLab prints (and opens in a browser) shows first: Chapter 1, not the Launcher.
LAB_START ?= chapters/01_ngram.ipynb
# Root (as in containers) needs --allow-root; added whatever LAB_ARGS says.
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
# `make test` runs tests/test_chapters.py first and alone: every chapter executed once, one at a time, on the
# quiet cores that Binder's budget (3 min on 2 cores) is measured on. Then every other test, on TEST_JOBS
# pytest-xdist workers, each test module on one worker (tests/conftest.py); TEST_JOBS=1 runs them in one process.
TEST_JOBS ?= 2
PARALLEL := $(if $(filter 1,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder)

.PHONY: help install lab test test-fast lint typecheck book exercises check-grading bench clean

help:
	@echo "make lab            set up and open the course in JupyterLab"
	@echo "make test           set up and run every test"
	@echo "make test-fast      the unit tests only (no notebooks, nbgrader, servers or subprocesses)"
	@echo "make lint           ruff: lint and format check (seqlearn, tests, bench)"
	@echo "make typecheck      mypy on the package"
	@echo "make book           the website: every chapter executed, exercises, bibliography (build/book/html)"
	@echo "make exercises      regenerate exercises/ from solutions/ (nbgrader)"
	@echo "make check-grading  grading round trip of every assignment"
	@echo "make bench          run the benchmarks in bench/"

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed (nbgrader 0.9)"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	for ext in formgrader assignment_list course_list validate_assignment; do \
	  $(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.$$ext >/dev/null 2>&1 || exit 1; done
	$(BIN)/jupyter server extension list 2>&1 | grep -q "nbgrader.*enabled"
	$(BIN)/jupyter labextension list 2>&1 | grep -q "@jupyter-widgets/jupyterlab-manager"
	# JupyterHub's proxy, for the hub test and a local hub (skipped where Node.js is absent).
	if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-audit --no-fund --prefix $(VENV)/node configurable-http-proxy@5.3.0 >/dev/null || exit 1; \
	  ln -sf ../node/node_modules/.bin/configurable-http-proxy $(BIN)/configurable-http-proxy; fi
	touch $@

install: $(STAMP)

lab: $(STAMP)
	eval "$$($(BIN)/seqlearn env)" && exec $(BIN)/jupyter lab --notebook-dir=. $(ROOT_ARGS) --LabApp.default_url=/lab/tree/$(LAB_START) $(LAB_ARGS) $(LAB_START)

test: $(STAMP)
	status=0; $(BIN)/python -m pytest tests/test_chapters.py || status=$$?; \
	$(BIN)/python -m pytest $(PARALLEL) --ignore=tests/test_chapters.py || status=$$?; exit $$status

test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PARALLEL) -m "not slow and not integration"

lint: $(STAMP)
	$(BIN)/ruff check seqlearn tests bench
	$(BIN)/ruff format --check seqlearn tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

book: $(STAMP)
	$(BIN)/seqlearn book --out build/book

exercises: $(STAMP)
	$(BIN)/seqlearn exercises

check-grading: $(STAMP)
	$(BIN)/seqlearn check-grading

bench: $(STAMP)
	for script in bench/[!_]*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build .pytest_cache
