# `make run` and `make test` each set up everything they need on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck pytest screens wiring test-rig bench-rig test-system clean install uninstall bench model onset-model test-slow

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,camera]'
	touch $@

run: $(STAMP)
	$(BIN)/referee run --web $(ARGS)

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Bytecode is written even where the environment sets PYTHONDONTWRITEBYTECODE (empty,
# Python takes it as unset): pytest keeps the test modules and its plugins' (hypothesis's
# hundred) rewritten for its asserts in __pycache__, and without it rewrites them all again
# in each of its processes at every run, some 8 s of CPU a process.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q

# The tests marked slow (tests/conftest.py: the page in Chromium, the install's venv built
# by pip, the daemon with its camera's process, the rendered tables' properties) take some
# 65 s on two cores: `make test-slow` runs
# them, and CI runs both (.ci/run). The rest take a worker more than the cores: some 30 s of them wait on
# real time (the box's timers and timeouts), through which a core would idle.
pytest: $(STAMP)
	$(PYTEST) -n $$(( $$(nproc) + 1 )) -m 'not slow'

# One worker a core: the install's pip chain starts first on one (the `first` marker),
# the browser tests take the others.
test-slow: $(STAMP)
	$(PYTEST) -n auto -m slow

# On the Pi: `sudo make install`. `make install DESTDIR=dir` only writes the files into dir.
install:
	DESTDIR='$(DESTDIR)' sh systemd/install.sh

uninstall:
	DESTDIR='$(DESTDIR)' sh systemd/uninstall.sh

# Every screen drawn headless to docs/screens/, for docs/screens.md and for review.
screens: $(STAMP)
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(BIN)/python -m tools.gallery docs/screens
	REFEREE_SCREENS=docs/screens $(BIN)/pytest -q tests/test_web.py tests/test_web_history.py \
		tests/test_web_settings.py tests/test_web_clips.py tests/test_web_tv.py \
		-k 'browser and not (plays or deletes or csv or press or countdown)'

# wiring.md's pin table and hardware/wiring.svg, from hardware/pinmap.toml; the enclosure's
# drilling templates, hardware/enclosure/.
wiring: $(STAMP)
	$(BIN)/python -m tools.wiring

# The card classifier, referee/vision/cards.onnx, trained again on a CPU (some 40 minutes):
# the real photos first prepared by tools/vision/set_photos.py into build/set-photos.
model: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[train]'
	$(BIN)/python -m tools.vision.train

# The learned voice onset detector's weights (tools/onsets/onsets.npz: measured beside the
# bands by bench/onsets.py, not run by the box), trained again on a CPU in some 30 minutes
# (tools/onsets/train.py) from Debian's klettres-data recordings, fetched by apt.
onset-model: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[train]'
	test -d build/klettres/usr/share/klettres || ( mkdir -p build/klettres && cd build/klettres \
		&& apt-get download klettres-data && dpkg-deb -x klettres-data_*.deb . )
	$(BIN)/python -m tools.onsets.train

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The benchmarks behind docs/performance.md: each prints its tables (about 90 minutes).
bench: $(STAMP)
	$(BIN)/python bench/fairness.py
	$(BIN)/python bench/latency.py
	$(BIN)/python bench/memory.py

# The GPIO path on a real kernel (gpio-sim in the project's QEMU guest, tests/vm/).
test-rig:
	tests/gpio_rig/run.sh

# The daemon at rest on the rig's kernel GPIO (bench/idle_gpio.py), beside the last tree
# whose buttons came through gpiozero's lgpio callbacks.
OLD_TREE ?= 0e6f262
bench-rig:
	rm -rf build/old-tree && mkdir -p build/old-tree
	git archive $(OLD_TREE) | tar -x -C build/old-tree
	tests/gpio_rig/run.sh bench

# The box installed, booted, played and its power cut, in the QEMU guest (about 40 minutes).
test-system: $(STAMP)
	tests/system/run.sh
