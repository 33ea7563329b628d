# Two commands on a fresh machine: `make demo` and `make test` (plus `make bench`).
# Each creates .venv if needed, installs ldpnum with what it needs (building the Cython kernels), then runs:
# `make demo` only the plot extra, `make test` and `make bench` the test, bench and plot extras, `make docs` the
# docs extra (Sphinx and the front ends the reference documents). Then `ldpnum compile` fills Numba's cache with
# every client kernel, so no first call waits for the compiler.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ldpnum-installed
DEMO_STAMP := $(VENV)/.ldpnum-demo-installed
DOCS_STAMP := $(VENV)/.ldpnum-docs-installed
BUILD_INPUTS := pyproject.toml setup.py $(wildcard ldpnum/_kernels/*.pyx ldpnum/_kernels/*.pxd)

.PHONY: demo test bench docs install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) $(BUILD_INPUTS)
	$(PY) -m pip install --quiet -e ".[test,bench,plot]"
	$(PY) -m ldpnum compile
	touch $(STAMP) $(DEMO_STAMP)

# The full install above includes everything the demo needs, so it satisfies this stamp too.
$(DEMO_STAMP): $(PY) $(BUILD_INPUTS)
	@echo "make demo installs ldpnum with its dependencies (numpy, numba, scipy, pandas, cryptography, tbb) and the [plot] extra (matplotlib), nothing else"
	$(PY) -m pip install --quiet -e ".[plot]"
	$(PY) -m ldpnum compile
	touch $(DEMO_STAMP)

# On top of the demo's install (ldpnum built, with matplotlib): the [docs] extra's packages only; ldpnum itself is
# already installed, so pip adds what ldpnum[docs] needs without rebuilding the kernels.
$(DOCS_STAMP): $(DEMO_STAMP)
	$(PY) -m pip install --quiet "ldpnum[docs]"
	touch $(DOCS_STAMP)

install: $(STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m ldpnum demo
	@echo
	$(PY) -m ldpnum demo heavy-hitters
	@echo
	$(PY) -m ldpnum demo vectors
	@echo
	$(PY) -m ldpnum demo telemetry

# Two worker processes (pytest-xdist), each test file on one worker (--dist loadfile: a file's module fixtures and
# kernel compilations are paid once); `-p no:xdist` or plain `pytest` runs the suite in one process.
# Bytecode is cached (in the __pycache__ folders git ignores) even where PYTHONDONTWRITEBYTECODE is set: without the
# cache every worker, and every interpreter a test starts, compiles ldpnum and rewrites and compiles each test
# module from source again (collecting the whole suite in one process: 49 CPU-s uncached, 14 cached).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n 2 --dist loadfile

bench: $(STAMP)
	bash bench/peers/setup_venv.sh
	$(PY) bench/run.py

# The documentation site into docs/_build/html: API reference, guides, the gallery's examples executed. Warnings
# are errors (-W; --keep-going lists them all first) and docs/conf.py sets nitpicky, so a malformed docstring, a broken
# link or a cross-reference to a name that does not exist fails the build.
docs: $(DOCS_STAMP)
	$(PY) -m sphinx -b html -W --keep-going -q docs docs/_build/html
	@echo "docs/_build/html/index.html"

clean:
	rm -rf $(VENV) build *.egg-info docs/_build docs/api/generated docs/auto_examples docs/sg_execution_times.rst ldpnum/_kernels/*.c ldpnum/_kernels/*.so
