"""`aesenv serve`: every env id over OpenEnv's protocol, played by OpenEnv's own `EnvClient` and
by `aesenv.envs.remote`; sessions isolated under concurrency; a gone client leaves no process; the
token off loopback; bad input answered with typed errors."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("openenv", reason="the serve extra is not installed (make setup installs it)")
import websockets

import aesenv  # noqa: F401 - registers the env ids
from aesenv.envs.remote import AsyncRemoteEnv, RemoteScorer
from aesenv.serve.app import check_bind
from aesenv.tasks import Task
from support.serve_server import (PAGE, ROOT, call, client_gone_mid_step, eight_sessions_without_crosstalk,
                                  first_action, play_gym, play_openenv, running_server, shipped_env_ids)

pytestmark = pytest.mark.timeout(1800)
ALL_ENVS = shipped_env_ids()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server("--max-sessions", "10", log=tmp_path_factory.mktemp("serve") / "server.log") as (url, _):
        yield url


def test_every_env_is_served(server):
    listed = json.loads(urllib.request.urlopen(f"{server}/envs", timeout=10).read())
    assert sorted(listed["envs"]) == sorted(ALL_ENVS)
    schema = json.loads(urllib.request.urlopen(f"{server}/AesWeb-v0/schema", timeout=10).read())
    assert {"text", "tool_calls", "message"} <= set(schema["action"]["properties"])


@pytest.mark.parametrize("env_id", ALL_ENVS)
async def test_openenv_client_plays_every_env(server, env_id):
    """OpenEnv's own client (no aesenv types) completes an episode of each env id."""
    await play_openenv(server, env_id)


@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_our_client_plays_every_env(server, env_id):
    """`gym.make(id, remote=URL)` (Webdev-Bench: `AsyncRemoteEnv`): the local API, the episode on the server."""
    play_gym(server, env_id)


async def test_eight_concurrent_refine_sessions_do_not_cross(server):
    """8 AesWebRefine-v0 sessions at once, each with its own page: each sees its own workspace and
    its record is of its own page."""
    await eight_sessions_without_crosstalk(server)


async def test_client_gone_mid_step_leaves_no_process(server):
    """A client that disconnects while its `run` is going: the job and every process of it end, and
    the session is gone."""
    await client_gone_mid_step(server)


async def test_bad_input_gets_typed_errors(server):
    url = f"{server.replace('http', 'ws')}/AesWebRefine-v0/ws"
    async with websockets.connect(url, max_size=2**26) as ws:
        await ws.send("{not json")
        assert json.loads(await ws.recv())["data"]["code"] == "INVALID_JSON"
        await ws.send(json.dumps({"type": "step", "data": {"text": "x"}}))
        assert json.loads(await ws.recv())["data"]["observation"]["error"]["code"] == "no_episode"
        await ws.send(json.dumps({"type": "reset", "data": {"task": "no-such-task"}}))
        assert json.loads(await ws.recv())["data"]["observation"]["error"]["code"] == "bad_task"
        await ws.send(json.dumps({"type": "reset", "data": {"task": {"prompt": 5, "category": "nope"}}}))
        assert json.loads(await ws.recv())["data"]["observation"]["error"]["code"] == "bad_task"
        await ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(await ws.recv())["type"] == "observation"
        for bad in ({"bogus": 1}, {"text": "a", "tool_calls": []}, {"tool_calls": [{"function": {}}]}):
            await ws.send(json.dumps({"type": "step", "data": bad}))
            assert json.loads(await ws.recv())["data"]["code"] == "VALIDATION_ERROR"
        await ws.send(json.dumps({"type": "step", "data": {"text": "<tool_call>{broken"}}))
        answer = json.loads(await ws.recv())["data"]
        assert answer["observation"]["error"] is None and "Invalid action" in json.dumps(answer["observation"])
        await ws.send(json.dumps({"type": "bogus"}))
        assert json.loads(await ws.recv())["data"]["code"] == "UNKNOWN_TYPE"
        await ws.send("x" * (9 << 20))  # over the 8 MiB bound
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:  # a body over the bound is refused unread
        raw.sendall(f"POST /AesWeb-v0/reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {9 << 20}\r\n\r\n{{".encode())
        assert raw.recv(100).split(b"\r\n")[0].startswith(b"HTTP/1.1 413 ")
    request = urllib.request.Request(f"{server}/AesWeb-v0/step", data=json.dumps({"action": {"text": "x"}}).encode(),
                                     headers={"content-type": "application/json"})
    stateless = json.loads(urllib.request.urlopen(request, timeout=60).read())
    assert stateless["observation"]["error"]["code"] == "no_episode"
    assert urllib.request.urlopen(f"{server}/health", timeout=10).status == 200


async def test_remote_scorer_matches_the_record(server):
    task = Task(id="remote-score", prompt="A landing page for a bakery", category="Website")
    async with RemoteScorer(server) as scorer:
        scored = await scorer.score(task, f"```html\n{PAGE.format(marker='Bakery')}\n```")
    assert scored.record.task_id == "remote-score" and scored.record.status == "ok"
    assert scored.picture and scored.picture[:8] == b"\x89PNG\r\n\x1a\n"


def test_off_loopback_needs_the_token(tmp_path):
    check_bind("127.0.0.1", None)
    with pytest.raises(ValueError, match="token"):
        check_bind("0.0.0.0", None)
    refused = subprocess.run([sys.executable, "-m", "aesenv.cli", "serve", "--host", "0.0.0.0", "--env", "AesWeb-v0"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert refused.returncode == 2 and "AESENV_SERVE_TOKEN" in refused.stderr
    refused = subprocess.run([sys.executable, "-m", "aesenv.cli", "serve", "--docker", "--host", "0.0.0.0"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert refused.returncode == 2 and "AESENV_SERVE_TOKEN" in refused.stderr  # before any image is built
    token = "t0k3n-" + "x" * 24
    with running_server("--env", "AesWeb-v0", "--max-sessions", "2", host="0.0.0.0",
                        env={"AESENV_SERVE_TOKEN": token}, log=tmp_path / "server.log") as (url, _):
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}):
            with pytest.raises(urllib.error.HTTPError) as denied:
                urllib.request.urlopen(urllib.request.Request(f"{url}/AesWeb-v0/schema", headers=headers), timeout=10)
            assert denied.value.code == 401
        ok = urllib.request.Request(f"{url}/AesWeb-v0/schema", headers={"Authorization": f"Bearer {token}"})
        assert urllib.request.urlopen(ok, timeout=10).status == 200
        assert urllib.request.urlopen(f"{url}/AesWeb-v0/schema?token={token}", timeout=10).status == 200

        async def sockets() -> None:
            ws_url = f"{url.replace('http', 'ws')}/AesWeb-v0/ws"
            with pytest.raises(websockets.InvalidStatus):
                await websockets.connect(ws_url)
            env = AsyncRemoteEnv(url, "AesWeb-v0", token=token)
            try:
                _, info = await env.reset(seed=0)
                assert info["task_id"]
            finally:
                await env.close()
            anonymous = AsyncRemoteEnv(url, "AesWeb-v0", token="")
            with pytest.raises(ConnectionError):
                await anonymous.reset(seed=0)
            # bounded in number: a third session at once gets OpenEnv's typed CAPACITY_REACHED
            held: list[AsyncRemoteEnv] = []

            async def opened_when_room() -> AsyncRemoteEnv:
                """A session once the server has let the one above go: it counts a session until
                its env is torn down, which ends a little after the client left."""
                for _ in range(60):
                    session = AsyncRemoteEnv(url, "AesWeb-v0", token=token)
                    try:
                        await session.reset(seed=0)
                        return session
                    except RuntimeError as exc:
                        await session.close()
                        if "CAPACITY_REACHED" not in str(exc):
                            raise
                    await asyncio.sleep(0.5)
                raise AssertionError("the server never let the earlier session go")

            try:
                for _ in range(2):
                    held.append(await opened_when_room())
                third = AsyncRemoteEnv(url, "AesWeb-v0", token=token)
                with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                    await third.reset(seed=0)
                await third.close()
            finally:
                for env in held:
                    await env.close()

        asyncio.run(sockets())


def test_plain_agent_example_completes_an_opendesign_episode(server):
    """examples/plain_agent.py: an agent with nothing but a WebSocket library."""
    row = json.loads((ROOT / "benchmarks/data/opendesign_slice.jsonl").read_text().splitlines()[0])
    task = {"id": str(row["id"]), "prompt": row["prompt"], "category": row["category"]}
    out = subprocess.run([sys.executable, str(ROOT / "examples/plain_agent.py"), server, json.dumps(task)],
                         capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["done"] and isinstance(result["reward"], float) and set(result["channels"]) >= {"static"}


def test_bench_opendesign_and_webdev_drive_a_served_env(server, tmp_path):
    from benchmarks import opendesign, webdev

    assert opendesign.main(["--prompts", str(ROOT / "benchmarks/data/opendesign_slice.jsonl"), "--limit", "2",
                            "--judge", "offline", "--env-url", server, "--no-progress",
                            "--out", str(tmp_path / "od")]) == 0
    summary = json.loads((tmp_path / "od/summary.json").read_text())
    assert summary["n"] == 2 and summary["n_infra_error"] == 0
    records = [json.loads(line) for line in (tmp_path / "od/records.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" and r["screenshot"] for r in records)
    first = sorted(p.name for p in (ROOT / "benchmarks/webdev_suite").iterdir() if p.is_dir())[0]
    assert webdev.main(["--policy", "do-nothing", "--tasks", first, "--env-url", server, "--no-progress",
                        "--out", str(tmp_path / "wd")]) == 0
    summary = json.loads((tmp_path / "wd/summary.json").read_text())
    assert summary["n"] == 1 and summary["tasks"][first]["status"] == "ok"


def test_bench_serve_runs_both_paths(server, tmp_path):
    from benchmarks import serve_bench

    assert serve_bench.main(["--levels", "1,2", "--episodes", "2", "--url", server, "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "serve.json").read_text())
    assert [r["sessions"] for r in result["in_process"]] == [1, 2] == [r["sessions"] for r in result["served"]]
    assert all(r["sessions_per_s"] > 0 and r["step_ms_median"] > 0 for r in result["in_process"] + result["served"])


def test_aesenv_run_drives_a_served_env(server, tmp_path):
    from aesenv.cli import main

    assert main(["run", "--env", "AesWebRefine-v0", "--policy", "repair", "--task", "web-website-01",
                 "--env-url", server, "--out", str(tmp_path)]) == 0
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    assert trajectory["end"] == "submit" and trajectory["record"]["status"] == "ok" and trajectory["steps"]


async def test_refine_runner_and_verl_loop_env_over_the_wire(server, tmp_path):
    """The refine runner (`--mode refine --env-url`) and veRL's agent loop (`env_url`) build their
    envs through `make_core(..., remote=)`: the same episode code drives a served env."""
    from aesenv.policy import make_policy
    from aesenv.runner import run_episodes
    from aesenv.tasks import load_tasks
    from aesenv.trajectory import run_episode

    tasks = load_tasks("builtin:web")[:1]
    records = await run_episodes(tasks, make_policy("repair"), tmp_path / "refine", mode="refine", env_url=server,
                                 progress=False)
    assert len(records) == 1 and records[0].status == "ok"
    assert (tmp_path / "refine/episodes" / tasks[0].id / "trajectory.json").is_file()
    agent_loop = pytest.importorskip("train.agent_loop", reason="the verl extra is not installed")
    loop = agent_loop.AesRefineAgentLoop.__new__(agent_loop.AesRefineAgentLoop)
    loop.env_url = server
    env = await loop.make_env("AesWebRefine-v0", tasks[0])
    try:
        trajectory = await run_episode(env, make_policy("repair"), task=tasks[0])
    finally:
        await env.close()
    assert isinstance(env, AsyncRemoteEnv) and trajectory.end == "submit" and trajectory.record["status"] == "ok"


async def test_our_failure_is_never_a_score(tmp_path):
    """A sandbox that cannot start (an unreachable Docker engine) is the server's failure: the
    reward is null on the wire (NaN through our client) and the record says infra_error."""
    with running_server("--env", "AesPlot-v0", "--sandbox", "docker", env={"DOCKER_HOST": "unix:///nonexistent.sock"},
                        log=tmp_path / "server.log") as (url, _):
        env = AsyncRemoteEnv(url, "AesPlot-v0")
        try:
            await env.reset(seed=0)
            _, reward, terminated, _, info = await env.step(first_action("AesPlot-v0")["text"])
        finally:
            await env.close()
        assert terminated and reward != reward and info["reward_valid"] is False  # NaN, never 0
        assert info["record"]["status"] == "infra_error"
        assert env.last_observation.reward is None and env.last_observation.reward_valid is False
