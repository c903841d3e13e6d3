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

# The veRL extra (train/ and its tests) comes with torch: install torch first, on its own, so pip
# takes the build TORCH names (the CPU wheel where one is on the find-links path) instead of
# letting veRL's dependencies pull a CUDA build. EXTRAS=dev skips veRL.
TORCH  ?= torch==2.13.0
EXTRAS ?= dev,verl

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	case ',$(EXTRAS),' in *,verl,*) $(BIN)/pip install -q '$(TORCH)';; esac
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
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
