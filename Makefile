# Two commands for a newcomer: `make demo` and `make test`.
# On a Raspberry Pi: `make install VENV_FLAGS=--system-site-packages` (see README, "Raspberry Pi").
PYTHON ?= python3
VENV ?= .venv
VENV_FLAGS ?=
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install test demo bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)

demo: $(STAMP)
	$(VENV)/bin/referee demo

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
