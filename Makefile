# Everything the project needs is installed from these files into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test lint soak bench fuzz clean

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

## Property tests, exploring freely: fresh random seeds on each of FUZZ_RUNS runs, 2000 examples
## where a test does not set its own count; failures are kept in .hypothesis/ and printed with a
## reproduction blob (add each as an @example).
FUZZ_RUNS ?= 3
fuzz: $(STAMP)
	for run in $$(seq $(FUZZ_RUNS)); do \
		HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -m "hypothesis and not soak and not bench" -q \
			--hypothesis-show-statistics || exit 1; \
	done

## Benchmarks with figures (pytest-benchmark).
bench: $(STAMP)
	$(BIN)/python -m pytest -m bench -q -s --benchmark-enable tests/ soak/

clean:
	rm -rf $(VENV) dist build .pytest_cache .benchmarks
