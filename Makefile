# dpteach: `make test` and `make book` (or `make lab`) do the whole set-up on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST := $(BIN)/python -m pytest

.PHONY: test lint book lab notebooks benchmarks clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One stamp per extra, remade whenever pyproject.toml changes.
$(VENV)/.%-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$*]"
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
