# dpteach: `make test` and `make book` (or `make lab`) do the whole set-up on first use.
# System packages (Debian; .ci/run installs them): make, python3-venv, npm (the website's
# JavaScript), chromium (browser tests, `make pdf`), poppler-utils (the PDF test's pdftotext).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST := $(BIN)/python -m pytest

.PHONY: test lint book lab notebooks benchmarks chapter-benchmarks pdf student sizes clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What each target installs; a stamp per target is remade whenever pyproject.toml changes.
# The tests need the book and browser extras too: they build the website and drive Chromium.
EXTRAS_test := test,book,browser
EXTRAS_book := book
EXTRAS_lab  := lab
EXTRAS_pdf  := book,browser

$(VENV)/.%-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS_$*)]"
	touch $@

NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
# One worker per core; a notebook's cells (and a test module's fixtures) stay on one worker;
# the longest modules first (tests/conftest.py).
XDIST  := -n auto --dist loadscope --no-loadscope-reorder

## test: every test (unit, statistical, audits, notebooks with nbval), then the notebooks again
## under another BLAS kernel (scripts/other_blas_kernel.py)
test: $(VENV)/.test-installed
	$(PYTEST) $(XDIST) $(NBVAL) tests notebooks
	@kernel=$$($(BIN)/python scripts/other_blas_kernel.py); \
	if [ -z "$$kernel" ]; then \
		echo "test: no other BLAS kernel to try on this machine; second notebook pass skipped"; \
	else \
		echo "test: the notebooks again, under OPENBLAS_CORETYPE=$$kernel"; \
		OPENBLAS_CORETYPE=$$kernel $(PYTEST) $(XDIST) $(NBVAL) notebooks; \
	fi

## lint: ruff, as the style test does
lint: $(VENV)/.test-installed
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

## book: the website, into _build/html (works offline; JS assets come from the npm registry)
book: $(VENV)/.book-installed
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/build_book.sh

## pdf: the whole book as one PDF, _build/dpteach.pdf (offline: Chromium prints each page, pikepdf joins)
pdf: book $(VENV)/.pdf-installed
	$(BIN)/python scripts/print_pdf.py

## student: the student edition, notebooks without solutions, into _build/student/notebooks
student:
	$(PYTHON) scripts/student_edition.py

## sizes: each website page's size with its images and precomputed frames (budget: 5 MB)
sizes: $(VENV)/.book-installed
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python scripts/page_sizes.py

## lab: JupyterLab on the notebooks
lab: $(VENV)/.lab-installed
	$(BIN)/jupyter lab notebooks

## notebooks: re-execute every notebook and save it with outputs
notebooks: $(VENV)/.test-installed
	$(BIN)/python scripts/execute_notebooks.py

## benchmarks: issue 15's targets (benchmarks/bench_*.py): one table, benchmarks/results.json, BENCHMARKS.md
benchmarks: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run_all.py

## chapter-benchmarks: the chapters' own speed and accuracy tables (the other benchmarks/*.py)
chapter-benchmarks: $(VENV)/.test-installed
	for b in $(filter-out benchmarks/bench_% benchmarks/run_all.py,$(wildcard benchmarks/*.py)); do \
		$(BIN)/python $$b || exit 1; done

clean:
	rm -rf _build web_assets .pytest_cache
