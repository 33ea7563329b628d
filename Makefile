# Two commands on a fresh machine: `make demo` and `make test` (plus `make bench`).
# Each creates .venv if needed, installs ldpnum with its extras (building the Cython kernels), then runs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ldpnum-installed
BUILD_INPUTS := pyproject.toml setup.py $(wildcard ldpnum/_kernels/*.pyx ldpnum/_kernels/*.pxd)

.PHONY: demo test bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) $(BUILD_INPUTS)
	$(PY) -m pip install --quiet -e ".[test,bench,plot]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ldpnum demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	bash bench/peers/setup_venv.sh
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info ldpnum/_kernels/*.c ldpnum/_kernels/*.so
