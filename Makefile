# The two commands of the README: `make demo` (the whole workflow on a simulated class) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
export PATH := $(abspath $(VENV))/bin:$(PATH)

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[instructor,test,dev]'
	touch $@

.PHONY: install demo test validate build
install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/vecgrade demo --dir demo-course

test: $(VENV)/.installed
	test -x /usr/bin/chromium || apt-get install -y chromium || (apt-get update && apt-get install -y chromium)
	$(PY) -m pytest -n 2 --dist loadfile -q

validate: $(VENV)/.installed
	$(VENV)/bin/vecgrade validate

build: $(VENV)/.installed
	$(VENV)/bin/vecgrade build
