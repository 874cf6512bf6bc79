# Cardfit: `make run` starts the bot (or the terminal chat), `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install install-test postgres run lint typecheck test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

run: install
	@mkdir -p var
	@if [ -n "$$CARDFIT_BOT_TOKEN" ]; then exec $(BIN)/cardfit bot; else exec $(BIN)/cardfit chat; fi

# The store's tests run against a real PostgreSQL too: its server binaries, installed when missing (apt, as root).
postgres:
	scripts/ensure-postgres.sh

lint: install-test
	$(BIN)/ruff check .

typecheck: install-test
	$(BIN)/mypy

# Lint, types, then the whole suite, in that order (.ci/run calls this).
test: install-test postgres
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: install-test
	$(BIN)/python -m benchmarks.bench_ask

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
