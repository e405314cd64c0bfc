# The two user-facing commands. Each does its own set-up on a fresh clone:
#   make run   install and start the app (the bundled sample crash when no DUMP= is given)
#   make test  install with the test extra; ruff, mypy, and the whole pytest suite offscreen
# Desktop integration and packaging (same set-up):
#   make install-desktop / uninstall-desktop   menu entry, .dmp type and icon for this user
#   make dist                                  a one-folder bundle in dist/crash-inspector/
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DUMP   ?=

BUNDLE := dist/crash-inspector/crash-inspector
# Everything the bundle is built from: it is rebuilt only when one of these changed.
BUNDLE_INPUTS := pyproject.toml $(shell find inspector resources packaging -type f -not -name '*.pyc')

.PHONY: run test bench install-desktop uninstall-desktop dist

$(PY):
	$(PYTHON) -m venv $(VENV)

# Stamps live inside the venv, so deleting .venv re-runs the install.
$(VENV)/.stamp-run: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.stamp-run $(VENV)/.stamp-dist

# The test extra includes the dist extra (the bundle test builds the bundle).
$(VENV)/.stamp-dist: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dist]'
	touch $@ $(VENV)/.stamp-run

run: $(VENV)/.stamp-run
	$(PY) -m inspector $(DUMP)

test: $(VENV)/.stamp-test
	$(PY) -m ruff check inspector tests bench
	$(PY) -m ruff format --check inspector tests bench
	$(PY) -m mypy --strict inspector/core
	$(PY) -m mypy inspector
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

# Benchmarks (by hand, on a quiet machine; not part of `make test`). Needs ../shared beside the
# project: installs the reference stackwalker and regenerates the torch case's big .sym files once.
bench: $(VENV)/.stamp-test
	../shared/tools/install-peers bench/data/peers
	../shared/perf/torch-autograd/make-symbols bench/data/perf-symbols
	$(PY) bench/run_all.py $(BENCH_ARGS)

install-desktop: $(VENV)/.stamp-run
	$(VENV)/bin/crash-inspector --install-desktop

uninstall-desktop: $(VENV)/.stamp-run
	$(VENV)/bin/crash-inspector --uninstall-desktop

dist: $(BUNDLE)

$(BUNDLE): $(BUNDLE_INPUTS) | $(VENV)/.stamp-dist
	$(PY) -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
		packaging/pyinstaller/crash-inspector.spec
	touch $@
	@du -sh dist/crash-inspector
