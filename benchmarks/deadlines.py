"""How close to its deadline each deadline-bound stage stops, and what a bad answer costs, as ratios
within one run (the timings the test suite no longer asserts on: a shared 2-core box is too noisy
for a test to compare a duration with a target, but one run's ratios compare like with like).

- `sandbox`: a script that never ends, on each backend (docker when an engine is there), stopped by
  its `timeout_s`: elapsed / timeout_s (1.0 = stopped right at the deadline; below 1 = too early).
- `render`: hostile pages (a script that never returns, a heap bomb, a settle that never ends)
  against the renderer's `total_timeout_s`: elapsed / total_timeout_s, and the status each got.
- `webgl_frame`: a WebGL page whose third frame never returns, against `webgl_frame_timeout_s`.
- `bad_answers`: scoring an empty, prose, binary, oversized or JSX answer (never rendered) against
  scoring a clean page: each one's median / the clean page's median.

    aesenv bench deadlines --out runs/deadlines [--rounds 3]

Writes DIR/deadlines.json and prints the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

SCRIPT_FOREVER = "while True:\n    pass\n"
SANDBOX_TIMEOUTS_S = (1.0, 2.0)
HOSTILE_PAGES = {
    "script_never_returns": "<html><body><h1>loop</h1><script>for (;;) {}</script></body></html>",
    "heap_bomb": "<html><body><h1>heap</h1><script>const a = []; while (true) a.push(new Array(1e6).fill(1));"
                 "</script></body></html>",
    "settle_never_ends": "<html><body><h1 id='t'>0</h1><script>let n = 0; (function f() { "
                         "document.getElementById('t').textContent = ++n; requestAnimationFrame(f); })();"
                         "</script></body></html>",
}
WEBGL_HANG = ("<html><body><canvas id='c' width='300' height='200'></canvas><h1 id='t'>Scene</h1><script>"
              "const gl = document.getElementById('c').getContext('webgl'); let n = 0;"
              "function frame() { requestAnimationFrame(frame); gl.clearColor(0.1, 0.4, 0.8, 1);"
              " gl.clear(gl.COLOR_BUFFER_BIT); if (++n === 3) for (;;) {} } requestAnimationFrame(frame);"
              "</script></body></html>")
CLEAN_PAGE = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\" /><title>Crumb Bakery</title></head>"
              "<body><main><h1>Crumb Bakery</h1><h2>Menu</h2><ul><li>Sourdough loaf</li><li>Croissant</li></ul>"
              "<h2>Opening hours</h2><p>Tuesday to Sunday, 7am to 3pm.</p></main></body></html>")
BAD_ANSWERS = {
    "empty": "",
    "prose": "I would build a lovely bakery site with warm colors.",
    "binary": bytes(range(256)) * 40,
    "oversized": "<html><body>" + "<p>filler</p>" * 400_000 + "</body></html>",
    "jsx": "```jsx\nimport React from 'react';\nexport default () => <div className={s}>x</div>;\n```",
}


def ratio_summary(elapsed_s: list[float], deadline_s: float) -> dict[str, Any]:
    """Elapsed times against one deadline: median, min and max of elapsed / deadline."""
    ratios = [e / deadline_s for e in elapsed_s]
    return {"deadline_s": deadline_s, "n": len(ratios),
            "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
            "min_ratio": round(min(ratios), 3) if ratios else None,
            "max_ratio": round(max(ratios), 3) if ratios else None}


def cost_ratios(ms: dict[str, list[float]], reference: str) -> dict[str, float | None]:
    """Each way's median over `reference`'s median (None where a side has no samples)."""
    base = statistics.median(ms[reference]) if ms.get(reference) else None
    return {name: round(statistics.median(v) / base, 3) if v and base else None for name, v in ms.items()}


async def _timed(coro) -> tuple[Any, float]:
    started = time.perf_counter()
    result = await coro
    return result, time.perf_counter() - started


async def _sandbox(rounds: int) -> dict[str, Any]:
    from aesenv.sandbox import SandboxLimits, make_sandbox
    from aesenv.sandbox.docker import engine_problem

    backends = ["local"] + ([] if engine_problem() else ["docker"])
    out: dict[str, Any] = {}
    for backend in backends:
        async with make_sandbox(backend, workers=1) as sb:
            for timeout_s in SANDBOX_TIMEOUTS_S:
                elapsed, statuses = [], []
                for _ in range(rounds):
                    run, took = await _timed(sb.run_plot(SCRIPT_FOREVER, {}, SandboxLimits(timeout_s=timeout_s)))
                    elapsed.append(took)
                    statuses.append(run.status.value)
                out[f"{backend}@{timeout_s}s"] = {**ratio_summary(elapsed, timeout_s), "statuses": sorted(set(statuses))}
    return out


async def _render(rounds: int) -> dict[str, Any]:
    from aesenv.render import RenderConfig, Renderer

    config = RenderConfig(navigation_timeout_s=4, settle_timeout_s=2, snapshot_timeout_s=3, capture_timeout_s=5,
                          total_timeout_s=15)
    out: dict[str, Any] = {}
    async with Renderer(config) as renderer:
        for name, html in HOSTILE_PAGES.items():
            elapsed, statuses = [], []
            for _ in range(rounds):
                rendering, took = await _timed(renderer.render(html))
                elapsed.append(took)
                statuses.append(rendering.status.value)
            out[name] = {**ratio_summary(elapsed, config.total_timeout_s), "statuses": sorted(set(statuses))}
    frame = RenderConfig(webgl_frame_timeout_s=3)
    async with Renderer(frame) as renderer:
        elapsed, statuses = [], []
        for _ in range(rounds):
            rendering, took = await _timed(renderer.render(WEBGL_HANG))
            elapsed.append(took)
            statuses.append(rendering.status.value)
    out["webgl_frame"] = {**ratio_summary(elapsed, frame.webgl_frame_timeout_s), "statuses": sorted(set(statuses))}
    return out


async def _bad_answers(rounds: int) -> dict[str, Any]:
    from aesenv.rewards import PipelineConfig, RewardPipeline
    from aesenv.tasks import Task

    task = Task(id="bakery", category="Website", prompt="A landing page for a neighborhood bakery with a menu.")
    ms: dict[str, list[float]] = {"clean": [], **{name: [] for name in BAD_ANSWERS}}
    async with RewardPipeline(PipelineConfig()) as pipeline:
        await pipeline.score(task, CLEAN_PAGE)  # warm: browser, linter
        for _ in range(rounds):
            for name, answer in {"clean": CLEAN_PAGE, **BAD_ANSWERS}.items():
                _, took = await _timed(pipeline.score(task, answer))
                ms[name].append(took * 1000)
    return {"median_ms": {k: round(statistics.median(v), 1) for k, v in ms.items()},
            "ratio_to_clean": cost_ratios(ms, "clean")}


async def run(rounds: int) -> dict[str, Any]:
    render = await _render(rounds)
    return {"rounds": rounds, "sandbox": await _sandbox(rounds), "webgl_frame": render.pop("webgl_frame"),
            "render": render, "bad_answers": await _bad_answers(rounds)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aesenv bench deadlines", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/deadlines")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    report = {**asyncio.run(run(args.rounds)), "load_average": os.getloadavg()}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "deadlines.json").write_text(json.dumps(report, indent=2))
    for section in ("sandbox", "render"):
        for name, row in report[section].items():
            print(f"{section:8s} {name:22s} elapsed/deadline median {row['median_ratio']} "
                  f"(max {row['max_ratio']}) of {row['deadline_s']} s  {row['statuses']}")
    row = report["webgl_frame"]
    print(f"webgl    frame hang             elapsed/frame deadline median {row['median_ratio']}  {row['statuses']}")
    for name, ratio in report["bad_answers"]["ratio_to_clean"].items():
        print(f"answers  {name:22s} ×{ratio} of a clean page's scoring")
    print(f"load average {report['load_average']}; wrote {Path(args.out) / 'deadlines.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
