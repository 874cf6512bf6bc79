# Cardfit: `make run` starts the bot (or the terminal chat), `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install install-test postgres run lint typecheck test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# After installing, for the cold start of `cardfit ask` (within 150 ms of `python -c pass`): the bytecode of
# Cardfit's own modules (an editable install has none, and with PYTHONDONTWRITEBYTECODE set none is ever written:
# compiling them is ~250 ms of every start) and the prepared copies of the bundled data (bot/cli/prepare.py).
PREPARE = $(BIN)/python -m compileall -q bot catalog engine && $(BIN)/python -m bot.cli.prepare

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@$(PREPARE)

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	@$(PREPARE)

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

# Lint, types, then the whole suite, in that order (.ci/run calls this). The suite runs in PYTEST_WORKERS processes
# (pytest-xdist), each test file whole in one of them (--dist loadfile: a file's tests keep their order and module
# fixtures); each worker starts its own PostgreSQL server. `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= 2

test: install-test postgres
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# Every benchmarks/bench_*.py, then one table of their figures (benchmarks/run_all.py).
bench: install-test
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis catalog/_compiled
