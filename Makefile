# `make run` and `make test` each set up everything they need on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck pytest clean test-rig

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(STAMP)
	$(BIN)/referee run $(ARGS)

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check referee tests bench
	$(BIN)/ruff format --check referee tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The GPIO path on a real kernel (gpio-sim in a QEMU guest): tests/gpio_rig/run.sh.
test-rig:
	tests/gpio_rig/run.sh
