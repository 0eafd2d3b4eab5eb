# Two commands for a newcomer: `make install` and `make test` (then `make demo`).
# On a Raspberry Pi `make install` does the Pi install (`make install-pi`; see README,
# "Raspberry Pi"): it is detected from $(PI_MODEL_FILE).
PYTHON ?= python3
VENV ?= .venv
VENV_FLAGS ?=
#: pip constraints for the install, e.g. .ci/constraints-floor.txt (the oldest supported versions)
CONSTRAINTS ?=
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
PI_MODEL_FILE ?= /proc/device-tree/model
PI_CONSTRAINTS ?= deploy/pi-constraints.txt
IS_PI := $(shell grep -qas 'Raspberry Pi' $(PI_MODEL_FILE) && echo yes)
PIP_INSTALL = $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: install install-pi test demo bench lint clean

# Raspberry Pi OS: picamera2 comes from apt (python3-picamera2) and is seen through the system
# site packages; pip keeps numpy and OpenCV on the versions apt's simplejpeg was built for.
INSTALL_PI = PYTHON='$(PYTHON)' VENV='$(VENV)' CONSTRAINTS='$(PI_CONSTRAINTS)' \
	PI_MODEL_FILE='$(PI_MODEL_FILE)' sh deploy/install-pi.sh

install: $(STAMP)

ifeq ($(IS_PI),yes)
$(STAMP): pyproject.toml
	$(INSTALL_PI)
	touch $(STAMP)
else
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	$(PIP_INSTALL) $(if $(CONSTRAINTS),-c $(CONSTRAINTS)) -e '.[test]'
	touch $(STAMP)
endif

install-pi:
	$(INSTALL_PI)
	touch $(STAMP)

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
