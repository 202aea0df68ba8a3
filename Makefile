# The README's two commands. Everything else is a detail of these.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the package's build inputs: a change to one reinstalls it (and recompiles its C walk)
BUILD := pyproject.toml setup.py src/toolrun/tools/web/_lexbor_walk.c

.PHONY: run test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BUILD) | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(BUILD) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

## run: install and start the service on SQLite + local files (http://127.0.0.1:8080)
run: $(VENV)/.installed
	$(BIN)/toolrun serve

## test: install with the dev extra, start PostgreSQL if stopped, run every check and the suite
test: $(VENV)/.installed-dev
	scripts/ensure-postgres
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -n 2 -p no:cacheprovider
