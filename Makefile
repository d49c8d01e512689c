# The two commands of the README: `make demo` (the whole workflow on a simulated class) and `make test`;
# `make docs` builds the documentation site (MkDocs) into site/, warnings as errors.
VENV ?= .venv
PY := $(VENV)/bin/python
# A wheel index to take torch from first; empty (the default): the public index, which on Linux brings the CUDA
# build (about 5 GB). `make install TORCH_INDEX=https://download.pytorch.org/whl/cpu` installs the CPU-only build.
TORCH_INDEX ?=
TORCH_PIN := $(shell sed -n 's/^ *"\(torch==[^"]*\)",*$$/\1/p' pyproject.toml)
# setuptools' editable install warns that a folder named like the package may shadow it; a newcomer cannot act on
# that (here the only such folder is the package itself), so the notice is filtered out of `make install`
EDITABLE_QUIET := PYTHONWARNINGS='ignore:Editable installation'
export PATH := $(abspath $(VENV))/bin:$(PATH)

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(PY) -m pip install --quiet --index-url $(TORCH_INDEX) $(TORCH_PIN))
	$(EDITABLE_QUIET) $(PY) -m pip install --quiet -e '.[instructor,test,dev]'
	touch $@

# what test-fast leaves out, by marker (pyproject.toml describes each): nbgrader runs, browsers, timing, root
FAST_MARKS ?= not e2e and not browser and not timing and not root

.PHONY: install demo test test-fast postgres chromium validate build docs screenshots
install: $(VENV)/.installed

# PostgreSQL's binaries for the gradebook tests: installed when root (Debian), else named
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	  else echo "the tests need PostgreSQL's initdb: install Debian's 'postgresql' package" >&2; exit 1; fi; }

# Debian's Chromium for the browser tests (Playwright drives it; it downloads no browser)
chromium:
	@test -x /usr/bin/chromium || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "the browser tests need Debian's 'chromium' package at /usr/bin/chromium" >&2; exit 1; fi; }

demo: $(VENV)/.installed
	$(VENV)/bin/vecgrade demo --dir demo-course

test: $(VENV)/.installed postgres chromium
	$(PY) -m pytest -n 2 --dist loadfile -q

test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -m "$(FAST_MARKS)" tests/

validate: $(VENV)/.installed
	$(VENV)/bin/vecgrade validate

build: $(VENV)/.installed
	$(VENV)/bin/vecgrade build

docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict

# the README's two pictures, docs/images/feedback.png and report.png: taken by the browser tests that check those pages
screenshots: $(VENV)/.installed chromium
	VECGRADE_SCREENSHOTS=$(abspath docs/images) $(PY) -m pytest -q tests/browser/test_flows.py \
	  -k "test_feedback_page or test_report_page"
