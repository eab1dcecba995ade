# Everything the project needs is installed from these files into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test lint soak bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## Start the recorder on its default store (XDG paths).
serve: $(STAMP)
	$(BIN)/agentwatch serve

## Run the linter, the type checker and the default test suite (soaks and benchmarks excluded).
test: lint
	$(BIN)/python -m pytest -m "not soak and not bench" -q

## ruff (pyflakes, bugbear, import order) and mypy on the package.
lint: $(STAMP)
	$(BIN)/ruff check agentwatch tests soak conftest.py
	$(BIN)/mypy

## Long soaks (minutes): soak/, and the soak profiles of properties in tests/.
soak: $(STAMP)
	$(BIN)/python -m pytest -m soak -q -s soak/ tests/

## Benchmarks with figures (pytest-benchmark).
bench: $(STAMP)
	$(BIN)/python -m pytest -m bench -q -s --benchmark-enable tests/ soak/

clean:
	rm -rf $(VENV) dist build .pytest_cache .benchmarks
