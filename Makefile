# Two commands set everything up: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
APT_PACKAGES := chromium-headless-shell nodejs npm fonts-liberation2 fonts-dejavu-core fonts-noto-color-emoji

.PHONY: setup system-deps python-deps node-tools demo test test-fast doctor clean

setup: system-deps python-deps node-tools

# Debian's headless Chromium (Playwright's own browser download is not needed) and Node.js.
system-deps:
	@if command -v chromium-headless-shell >/dev/null && command -v node >/dev/null && command -v npm >/dev/null \
	    && fc-list | grep -qi liberation; then \
	  echo "system packages present"; \
	elif command -v apt-get >/dev/null; then \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	else \
	  echo "install Chromium (or run 'playwright install chromium') and Node.js with npm, then rerun"; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

python-deps: $(STAMP)

node-tools: $(STAMP)
	$(BIN)/aesenv setup --quiet

doctor: setup
	$(BIN)/aesenv doctor

demo: setup
	$(BIN)/aesenv demo --out runs/demo

test: setup
	$(BIN)/python -m pytest -q -rs

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) runs .pytest_cache
