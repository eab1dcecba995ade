# Everything the project needs is installed from these files into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test lint soak bench clean goldens terminal-tools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## Start the recorder on its default store (XDG paths).
serve: $(STAMP)
	$(BIN)/agentwatch serve

## Run the linter, the type checker and the default test suite (soaks and benchmarks excluded).
test: lint terminal-tools
	$(BIN)/python -m pytest -m "not soak and not bench" -q

## ruff (pyflakes, bugbear, import order) and mypy on the package.
lint: $(STAMP)
	$(BIN)/ruff check agentwatch tests soak conftest.py
	$(BIN)/mypy

## tmux, for the tests that look at what a person sees in a terminal (installed when missing).
terminal-tools:
	@command -v tmux >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq tmux; }

## Rewrite the golden screens of tests/goldens/ from the current output (review the diff before committing).
goldens: $(STAMP) terminal-tools
	AGENTWATCH_UPDATE_GOLDENS=1 $(BIN)/python -m pytest -q tests/test_views_tmux.py

## Long soaks (minutes): soak/, and the soak profiles of properties in tests/.
soak: $(STAMP)
	$(BIN)/python -m pytest -m soak -q -s soak/ tests/

## Benchmarks with figures (pytest-benchmark).
bench: $(STAMP)
	$(BIN)/python -m pytest -m bench -q -s --benchmark-enable tests/ soak/

clean:
	rm -rf $(VENV) dist build .pytest_cache .benchmarks
