# Everything the project needs is installed from these files into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test lint soak bench fuzz clean pg-binaries goldens terminal-tools reference browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## Start the recorder on its default store (XDG paths).
serve: $(STAMP)
	$(BIN)/agentwatch serve

## PostgreSQL server binaries for the fleet tests (they start a server of their own in a temp
## dir): installed with apt-get only when none are found, without creating or starting a cluster.
pg-binaries:
	@if command -v initdb >/dev/null 2>&1 || [ -x /usr/local/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing postgresql (the fleet tests start a real server)"; \
		mkdir -p /etc/postgresql-common && echo "create_main_cluster = false" >> /etc/postgresql-common/createcluster.conf; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >/dev/null; \
	else \
		echo "note: no PostgreSQL server binaries: the fleet tests skip (or fail under CI); install postgresql"; \
	fi

## Run the linter, the type checker and the default test suite (soaks and benchmarks excluded), in
## two phases: the files not marked `serial` on two workers (pytest-xdist, one file per worker),
## then the timing-sensitive ones (`pytestmark = pytest.mark.serial`) alone. Both phases always
## run; either one failing fails the target.
test: lint pg-binaries terminal-tools browser
	@status=0; \
	echo "$(BIN)/python -m pytest -m \"not soak and not bench and not serial\" -q -n 2 --dist loadfile"; \
	$(BIN)/python -m pytest -m "not soak and not bench and not serial" -q -n 2 --dist loadfile || status=1; \
	echo "$(BIN)/python -m pytest -m \"serial and not soak and not bench\" -q"; \
	$(BIN)/python -m pytest -m "serial and not soak and not bench" -q || status=1; \
	exit $$status

## ruff (pyflakes, bugbear, import order) and mypy on the package; docs/cli.md and docs/json.md
## must match the code (`make reference` rewrites them).
lint: $(STAMP)
	$(BIN)/ruff check agentwatch tests soak conftest.py
	$(BIN)/mypy
	$(BIN)/python tests/support/reference_docs.py --check

## Rewrite docs/cli.md (every command's help) and docs/json.md (every --json document's fields).
reference: $(STAMP)
	$(BIN)/python tests/support/reference_docs.py

## tmux, for the tests that look at what a person sees in a terminal (installed with apt-get
## when missing and running as root; otherwise those tests skip, or fail under CI, and say why).
terminal-tools:
	@if command -v tmux >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing tmux (the terminal tests draw in it)"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null; \
	else \
		echo "note: no tmux: the terminal tests skip (or fail under CI); install tmux"; \
	fi

## Debian's headless chromium, for the tests that load the review page (`agentwatch ui`) in a real
## browser: installed with apt-get only when missing (as root, as CI runs).
browser:
	@if command -v chromium >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium (the review page's tests load it in a real browser)"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; \
	else \
		echo "note: no chromium: the review page's browser tests skip (or fail under CI); install chromium"; \
	fi

## Rewrite the golden screens of tests/goldens/ from the current output (review the diff before committing).
goldens: $(STAMP) terminal-tools
	AGENTWATCH_UPDATE_GOLDENS=1 $(BIN)/python -m pytest -q tests/test_views_tmux.py tests/test_cli_sql_output.py tests/test_cli_next_step.py tests/test_cli_tail_view.py

## Long soaks (minutes): soak/, and the soak profiles of properties in tests/.
soak: $(STAMP) pg-binaries
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
bench: $(STAMP) pg-binaries
	$(BIN)/python -m pytest -m bench -q -s --benchmark-enable tests/ soak/

clean:
	rm -rf $(VENV) dist build .pytest_cache .benchmarks
