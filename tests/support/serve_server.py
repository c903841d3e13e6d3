"""`aesenv serve` in a subprocess for the serving tests, and scripted episodes of every env id
that any client (OpenEnv's, ours, a plain WebSocket) can play."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PAGE = ("<!doctype html><html><head><title>{marker}</title></head><body><h1>{marker}</h1>"
        "<p>Fresh bread every morning.</p><button onclick=\"this.textContent='Ordered'\">Order</button></body></html>")
PLOT = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3, 4], [3, 1, 4, 2], label='sales')\n"
        "ax.set_title('Sales by quarter')\nax.set_xlabel('quarter')\nax.set_ylabel('sales')\nax.legend()\n")


def shipped_env_ids() -> list[str]:
    """The env ids a fresh `aesenv serve` process serves: read in a fresh interpreter, because a test
    module may have registered a kind of its own (test_new_kind's `svg`) in this one."""
    listing = subprocess.run([sys.executable, "-c", "import json, aesenv; from aesenv.kinds import env_ids; "
                              "from aesenv.serve.webdev import WEBDEV_ENV_ID; print(json.dumps([*env_ids(), WEBDEV_ENV_ID]))"],
                             cwd=ROOT, capture_output=True, text=True, check=True, timeout=300)
    return json.loads(listing.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen | None = None, deadline_s: float = 240.0,
                 headers: dict[str, str] | None = None) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            request = urllib.request.Request(f"{url}/envs", headers=headers or {})
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"no server at {url} after {deadline_s} s")


@contextlib.contextmanager
def running_server(*args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None,
                   log: Path | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """`aesenv serve ARGS` on a free port; stopped (its whole process group) at the end."""
    port = free_port()
    out = open(log, "w") if log else subprocess.DEVNULL
    process = subprocess.Popen([sys.executable, "-m", "aesenv.cli", "serve", "--host", host, "--port", str(port),
                                *args], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        headers = {"Authorization": f"Bearer {env['AESENV_SERVE_TOKEN']}"} if env and "AESENV_SERVE_TOKEN" in env else None
        wait_healthy(url, process, headers=headers)
        yield url, process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        if log:
            out.close()


def call(name: str, arguments: dict, call_id: str = "c") -> dict:
    """A native tool call, as the wire action's `tool_calls` carries it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def first_action(env_id: str, marker: str = "Bakery") -> dict:
    """The action that starts (single-turn: is) an episode of `env_id`."""
    if env_id == "AesWeb-v0":
        return {"text": f"```html\n{PAGE.format(marker=marker)}\n```"}
    if env_id == "AesPlot-v0":
        return {"text": f"```python\n{PLOT}```"}
    if env_id == "AesWebRefine-v0":
        return {"tool_calls": [call("write_file", {"path": "index.html", "content": PAGE.format(marker=marker)})]}
    if env_id == "AesPlotRefine-v0":
        return {"tool_calls": [call("write_file", {"path": "main.py", "content": PLOT})]}
    return {"tool_calls": [call("submit", {})]}  # the project as it starts; a Webdev-Bench delivery


SUBMIT = {"tool_calls": [call("submit", {}, "s")]}
MAX_TURNS = 60  # a hang guard for the scripted episodes (Webdev-Bench: at most 3 deliveries per requirement)


def check_end(env_id: str, observation: dict, reward) -> None:
    """A completed episode: no error, a valid reward, the record with every channel's status and score."""
    assert observation["error"] is None, observation["error"]
    if env_id == "AesWebdevBench-v0":
        assert observation["info"]["webdev_record"]["status"] == "ok"
        assert set(observation["info"]["webdev_record"]["metrics"]) >= {"RS", "DSR", "weighted"}
        return
    record = observation["info"]["record"]
    assert record["status"] == "ok" and observation["reward_valid"] and isinstance(reward, float)
    assert record["channels"] and all("status" in c and "score" in c for c in record["channels"].values())


async def play_openenv(url: str, env_id: str) -> None:
    """An episode of `env_id` with OpenEnv's own client (no aesenv types)."""
    from openenv.core.generic_client import GenericEnvClient

    async with GenericEnvClient(base_url=f"{url}/{env_id}", message_timeout_s=1500) as env:
        result = await env.reset(seed=0)
        assert result.observation["error"] is None and result.observation["messages"]
        action = first_action(env_id)
        for _ in range(MAX_TURNS):
            result = await env.step(action)
            assert result.observation["error"] is None, result.observation["error"]
            if result.done:
                break
            action = SUBMIT
        assert result.done
        check_end(env_id, result.observation, result.reward)
        state = await env.state()
        assert state["env_id"] == env_id and state["done"] is True


def play_gym(url: str, env_id: str) -> None:
    """An episode of `env_id` through `gym.make(env_id, remote=url)` (Webdev-Bench: `AsyncRemoteEnv`)."""
    import asyncio

    import gymnasium as gym

    if env_id == "AesWebdevBench-v0":
        from aesenv.envs.remote import AsyncRemoteEnv

        async def webdev() -> None:
            env = AsyncRemoteEnv(url, env_id)
            try:
                messages, _ = await env.reset(seed=0)
                assert messages[0]["role"] == "system" and env.tools
                for _ in range(MAX_TURNS):
                    _, _, terminated, truncated, info = await env.step(
                        {"role": "assistant", "content": None, "tool_calls": SUBMIT["tool_calls"]})
                    if terminated or truncated:
                        break
                assert terminated and info["webdev_record"]["status"] == "ok"
            finally:
                await env.close()

        asyncio.run(webdev())
        return
    env = gym.make(env_id, remote=url)
    try:
        observation, info = env.reset(seed=0)
        assert info["messages"] and info["task_id"]
        action = first_action(env_id)
        for _ in range(MAX_TURNS):
            wire = action.get("text") or {"role": "assistant", "content": None, "tool_calls": action["tool_calls"]}
            observation, reward, terminated, truncated, info = env.step(wire)
            if terminated or truncated:
                break
            action = SUBMIT
        assert terminated and info["reward_valid"] and info["record"]["status"] == "ok"
        assert reward == reward  # a number, not NaN
        if env_id in ("AesWeb-v0", "AesPlot-v0"):
            assert set(observation) >= {"prompt", "category"}
        else:
            assert isinstance(observation, str) and "Episode ended" in observation
    finally:
        env.close()


# --- session isolation and clean-up, against any server (here, or the serving image) ---------------

async def eight_sessions_without_crosstalk(server: str) -> None:
    """8 AesWebRefine-v0 sessions at once, each with its own page: each sees its own workspace and
    its record is of its own page."""
    from aesenv.artifact import extract_artifact
    from aesenv.envs.remote import AsyncRemoteEnv

    markers = [f"Marker{i}x{i * 7919}" for i in range(8)]

    async def one(marker: str) -> tuple[str, str, dict]:
        env = AsyncRemoteEnv(server, "AesWebRefine-v0")
        try:
            await env.reset("web-website-01")
            await env.step({"role": "assistant", "tool_calls": [
                call("write_file", {"path": "index.html", "content": PAGE.format(marker=marker)}, "w")]})
            await env.step({"role": "assistant", "tool_calls": [call("write_file", {"path": f"{marker}.txt",
                                                                                  "content": marker}, "x")]})
            seen, _, _, _, _ = await env.step({"role": "assistant", "tool_calls": [call("render", {}, "r")]})
            listed, _, _, _, _ = await env.step({"role": "assistant", "tool_calls": [
                call("run", {"command": "ls; cat index.html"}, "l")]})
            _, reward, terminated, _, info = await env.step({"role": "assistant", "tool_calls": SUBMIT["tool_calls"]})
            assert terminated and info["reward_valid"]
            shown = json.dumps(seen) + json.dumps(listed)
            return marker, shown, info["record"]
        finally:
            await env.close()

    results = await asyncio.gather(*(one(m) for m in markers))
    for marker, shown, record in results:
        others = [m for m in markers if m != marker]
        assert marker in shown and not any(m in shown for m in others), marker
        assert record["task_id"] == "web-website-01"
        assert record["artifact"]["sha256"] == extract_artifact(PAGE.format(marker=marker)).sha256


def _sessions(url: str) -> int:
    return json.loads(urllib.request.urlopen(f"{url}/envs", timeout=10).read())["active_sessions"]


def _running(pattern: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if pid.isdigit()]


async def client_gone_mid_step(server: str) -> None:
    """A client that disconnects while its `run` is going: the job and every process of it end, and
    the session is gone."""
    import websockets

    marker = f"sleep {4000 + int(time.time()) % 997}"
    ws = await websockets.connect(f"{server.replace('http', 'ws')}/AesWebRefine-v0/ws", max_size=2**26)
    await ws.send(json.dumps({"type": "reset", "data": {"task": "web-website-01"}}))
    assert json.loads(await ws.recv())["type"] == "observation"
    command = f"{marker} & {marker}; echo done"
    await ws.send(json.dumps({"type": "step", "data": {"tool_calls": [call("run", {"command": command})]}}))
    deadline = time.monotonic() + 120
    while not _running(marker):  # the job is running in the sandbox
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.2)
    assert _sessions(server) >= 1
    ws.transport.abort()  # gone, without a close handshake
    deadline = time.monotonic() + 120
    while _running(marker) or _sessions(server):
        listed = urllib.request.urlopen(f"{server}/envs", timeout=10).read().decode()
        assert time.monotonic() < deadline, f"left behind: {_running(marker)}, sessions {listed}"
        await asyncio.sleep(0.5)
    assert urllib.request.urlopen(f"{server}/health", timeout=10).status == 200

