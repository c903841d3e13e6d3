"""`aesenv bench serve`: what serving costs. The same scripted episodes run in this process (the
async core over one pipeline, as the runner does) and through `aesenv serve` (a server on this
machine, or `--url` one elsewhere, e.g. the serving image), at 1, 2 and 8 concurrent sessions, in
one run: episodes (sessions) per second and the latency of each step, median and p90.

    aesenv bench serve --out runs/serve [--env AesWebRefine-v0] [--levels 1,2,8] [--episodes 8] [--url URL]

An episode of a refine env is reset, write_file, render, submit (the final score); of a
single-turn env, reset and the answer. The page is the same in every episode, so the two paths do
the same work; each path first plays one episode that is not counted (browser and workers warm).
Figures depend on the machine: run it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from aesenv.envs import make_core
from aesenv.kinds import mode_of
from aesenv.rewards import PipelineConfig, RewardPipeline

PAGE = ("<!doctype html><html><head><title>Bakery</title><style>body{font-family:sans-serif;margin:40px}"
        "h1{color:#7a4b2a}</style></head><body><h1>Crumb &amp; Co.</h1><p>Fresh bread every morning.</p>"
        "<ul><li>Sourdough 6</li><li>Croissant 3</li></ul><button>Order</button></body></html>")


def actions(env_id: str) -> list[Any]:
    if mode_of(env_id)[1] == "single":
        return [f"```html\n{PAGE}\n```"]
    call = lambda name, args: {"role": "assistant", "content": None, "tool_calls": [  # noqa: E731
        {"id": name, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
    return [call("write_file", {"path": "index.html", "content": PAGE}), call("render", {}), call("submit", {})]


async def episode(env: Any, env_id: str, task: str | None) -> list[float]:
    """One episode; the wall time of its reset and each step, in ms."""
    times = []
    t = time.perf_counter()
    if mode_of(env_id)[1] == "single":
        local = hasattr(env, "pick")  # the in-process core takes a Task; a remote one, its id
        await env.reset(env.pick(np.random.default_rng(0), {"task": task} if task else None) if local else task)
    else:
        await env.reset(task=task, seed=0)
    times.append((time.perf_counter() - t) * 1000)
    for action in actions(env_id):
        t = time.perf_counter()
        _, reward, terminated, truncated, info = await env.step(action)
        times.append((time.perf_counter() - t) * 1000)
    if not (terminated or truncated) or not info.get("reward_valid", False):
        raise RuntimeError(f"the episode did not end with a valid reward: {info.get('error') or info.get('status')}")
    return times


async def level(make_env, env_id: str, task: str | None, sessions: int, episodes: int) -> dict[str, Any]:
    """`episodes` episodes, `sessions` at a time."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(episodes):
        queue.put_nowait(i)
    resets, steps = [], []

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            env = make_env()
            try:
                times = await episode(env, env_id, task)
            finally:
                await env.close()
            resets.append(times[0])
            steps.extend(times[1:])

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(sessions)))
    wall = time.perf_counter() - start
    return {"sessions": sessions, "episodes": episodes, "wall_s": round(wall, 2),
            "sessions_per_s": round(episodes / wall, 3), "reset_ms_median": round(statistics.median(resets), 1),
            "step_ms_median": round(statistics.median(steps), 1),
            "step_ms_p90": round(statistics.quantiles(steps, n=10)[-1], 1) if len(steps) > 1 else steps[0]}


@contextlib.contextmanager
def local_server(env_id: str, max_sessions: int):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "aesenv.cli", "serve", "--env", env_id, "--port", str(port),
                                "--max-sessions", str(max_sessions)], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(f"{url}/envs", timeout=5)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from aesenv.envs.remote import AsyncRemoteEnv

    levels = [int(n) for n in args.levels.split(",")]
    results: dict[str, Any] = {"env": args.env, "task": args.task, "episodes_per_level": args.episodes,
                               "in_process": [], "served": [], "cores": os.cpu_count()}
    async with RewardPipeline(PipelineConfig()) as pipeline:
        await level(lambda: make_core(args.env, pipeline=pipeline), args.env, args.task, 1, 1)  # warm-up, not counted
        for n in levels:
            results["in_process"].append(await level(lambda: make_core(args.env, pipeline=pipeline), args.env,
                                                     args.task, n, args.episodes))
            print("in-process", results["in_process"][-1], flush=True)
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(local_server(args.env, max(levels)))
        results["url"] = args.url or "local aesenv serve"
        await level(lambda: AsyncRemoteEnv(url, args.env), args.env, args.task, 1, 1)  # warm-up, not counted
        for n in levels:
            results["served"].append(await level(lambda: AsyncRemoteEnv(url, args.env), args.env, args.task, n,
                                                 args.episodes))
            print("served", results["served"][-1], flush=True)
    results["ratio"] = [{"sessions": a["sessions"], "sessions_per_s": round(b["sessions_per_s"] / a["sessions_per_s"], 3),
                         "step_ms_median": round(b["step_ms_median"] / a["step_ms_median"], 3)}
                        for a, b in zip(results["in_process"], results["served"])]
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aesenv bench serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="AesWebRefine-v0")
    p.add_argument("--task", default="web-website-01")
    p.add_argument("--levels", default="1,2,8", help="concurrent sessions, comma-separated")
    p.add_argument("--episodes", type=int, default=8, help="episodes per level")
    p.add_argument("--url", help="a running server (e.g. the serving image's); default: start one here")
    p.add_argument("--out", default="runs/serve")
    args = p.parse_args(argv)
    results = asyncio.run(run(args))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "serve.json").write_text(json.dumps(results, indent=2))
    for a, b in zip(results["in_process"], results["served"]):
        print(f"{a['sessions']:>2} sessions: in-process {a['sessions_per_s']} ep/s, step {a['step_ms_median']} ms | "
              f"served {b['sessions_per_s']} ep/s, step {b['step_ms_median']} ms")
    print(f"wrote {Path(args.out) / 'serve.json'}")
    return 0
