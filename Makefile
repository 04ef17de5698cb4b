# Two commands on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-slow lint typecheck browser bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo's next steps in the README are the web page (`versapub serve`) and differentially
# private releases (`publish --mechanism`, OpenDP): their extras come along.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[web,dp]'
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test,dask,web,dp]'
	# pycanon (a test oracle) pins exact numpy/scipy/pandas versions; its anonymity module needs
	# only numpy and pandas, so it is installed without its pins.
	$(BIN)/python -m pip install --quiet --no-deps 'pycanon>=1.3'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/versapub demo --out demo-release

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

# The HTML report is tested in headless Chromium (Debian's package; Playwright drives it).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
	  || echo "WARNING: could not install chromium; the browser test of the HTML report will be skipped"; }

test: lint typecheck browser
	$(BIN)/python -m pytest -n 2 -q -m "not slow"

# The long sweeps (marked slow), outside make test; then every property test again with random
# exploration (make test runs them derandomized: the same examples every time).
test-slow: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n 2 -q -m slow
	VERSAPUB_HYPOTHESIS=explore $(BIN)/python -m pytest -n 2 -q -m "not slow"

# Whole commands against their targets (issue 31), then issue 12's suite and issue 13's
# generalization benchmark (about 20 minutes in all; not part of make test).
bench: $(VENV)/.installed-test
	# the peers of the Mondrian benchmarks (pure Python, about 1-4 minutes on Adult) and of SUDA
	$(BIN)/python -m pip install --quiet 'anonypy>=0.2' 'suda>=0.2'
	$(BIN)/python benchmarks/whole.py
	$(BIN)/python benchmarks/risk.py
	$(BIN)/python benchmarks/suite.py
	$(BIN)/python benchmarks/generalization.py

clean:
	rm -rf $(VENV) demo-release .pytest_cache .mypy_cache .ruff_cache
