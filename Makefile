# Operator contract: install, run, test (docs/operations.md). Tests run on SQLite and PostgreSQL.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.runtime
UV_PIP := $(BIN)/uv pip install --quiet --python $(BIN)/python
REHABREF_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/postgres
export REHABREF_TEST_POSTGRES_URL

.PHONY: install run test test-sqlite test-postgres lint bench docs clients clean

install: $(STAMP)

# `make run` needs the service's own dependencies only; the test and lint tools come with
# `make install` (make test, make lint). uv (pinned, installed into the venv by pip) installs
# the pinned dependencies in a third of pip's time (docs/operations.md).
$(RUNTIME_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check uv==0.13.9
	$(UV_PIP) -e .
	touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	$(UV_PIP) -e '.[dev]'
	touch $(STAMP)

run: $(RUNTIME_STAMP)
	$(BIN)/rehabref migrate
	$(BIN)/rehabref partners demo
	$(BIN)/rehabref serve

lint: install
	$(BIN)/ruff check src tests bench migrations examples
	$(BIN)/ruff format --check src tests bench migrations examples
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: install lint test-sqlite test-postgres

test-sqlite: install
	REHABREF_TEST_DATABASE=sqlite $(BIN)/pytest -q -n 2 --dist loadfile

test-postgres: install
	REHABREF_TEST_DATABASE=postgres $(BIN)/pytest -q -n 2 --dist loadfile

bench: install
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.deliveries
	$(BIN)/python -m bench.fairness
	$(BIN)/python -m bench.messages
	$(BIN)/python -m bench.scale
	$(BIN)/python -m bench.matching

docs: install clients
	$(BIN)/python -m rehabref.openapi.markdown > docs/api.md

# The client libraries in clients/ (docs/clients.md); a test fails when they drift.
clients: install
	$(BIN)/python -m rehabref.openapi.clients clients

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
