# dpteach: `make test` and `make book` (or `make lab`) do the whole set-up on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST := $(BIN)/python -m pytest

.PHONY: test lint book lab notebooks benchmarks clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What each target installs; a stamp per target is remade whenever pyproject.toml changes.
# The tests need the book and browser extras too: they build the website and drive Chromium.
EXTRAS_test := test,book,browser
EXTRAS_book := book
EXTRAS_lab  := lab

$(VENV)/.%-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS_$*)]"
	touch $@

## test: every test (unit, statistical, audits, notebooks with nbval)
test: $(VENV)/.test-installed
	$(PYTEST) --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		tests notebooks --nbval

## lint: ruff, as the style test does
lint: $(VENV)/.test-installed
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

## book: the website, into _build/html (works offline; JS assets come from the npm registry)
book: $(VENV)/.book-installed
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/build_book.sh

## lab: JupyterLab on the notebooks
lab: $(VENV)/.lab-installed
	$(BIN)/jupyter lab notebooks

## notebooks: re-execute every notebook and save it with outputs
notebooks: $(VENV)/.test-installed
	$(BIN)/python scripts/execute_notebooks.py

## benchmarks: speed and accuracy tables
benchmarks: $(VENV)/.test-installed
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf _build web_assets .pytest_cache
