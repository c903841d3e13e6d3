"""Refine-step latency: how long one `edit_file`+`render` turn of `AesWebRefine-v0` takes.

Why: a multi-turn episode pays this on every repair, so it bounds how many turns training can
afford. Each sample is one env step carrying both tool calls (as a model's native tool-call
message would), on the template baseline's page for a builtin task; the edit flips one word,
so every render is of a changed page. For scale, the same run times a bare `Renderer.render` of
the page, interleaved with the steps, so the ratio shows what the env adds (edit, observation,
potential) on the machine at hand.

    python -m benchmarks.refine_latency --out runs/refine-latency [--steps 30] [--quick]

Writes DIR/refine_latency.json and prints the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from aesenv.envs import make_core
from aesenv.artifact import extract_artifact
from aesenv.envs.refine import RefineBudget
from aesenv.tasks import load_tasks
from policies.template import TemplatePolicy

MARKERS = ("<!-- refine-bench:a -->", "<!-- refine-bench:b -->")


def _calls(*calls: tuple[str, dict]) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"bench-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)]}


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered), 1), "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
            "min_ms": round(ordered[0], 1), "max_ms": round(ordered[-1], 1), "n": len(ordered)}


async def run_bench(steps: int, warmup: int = 2) -> dict:
    task = load_tasks("builtin:web")[0]
    page = extract_artifact(await TemplatePolicy().generate(task)).code.replace("</body>", f"{MARKERS[0]}</body>", 1)
    env = make_core("AesWebRefine-v0", [task], budget=RefineBudget(max_turns=warmup + steps + 2))
    step_ms, render_ms = [], []
    try:
        await env.reset(task=task.id)
        await env.step(_calls(("write_file", {"path": "index.html", "content": page})))
        for i in range(warmup + steps):
            old, new = MARKERS[i % 2], MARKERS[(i + 1) % 2]
            t = time.perf_counter()
            *_, info = await env.step(_calls(("edit_file", {"path": "index.html", "old": old, "new": new}),
                                                  ("render", {})))
            elapsed = (time.perf_counter() - t) * 1000
            if not all(r["ok"] for r in info["tool_results"]):
                raise RuntimeError(f"step {i} failed: {info['tool_results']}")
            t = time.perf_counter()
            await env.pipeline.renderer.render(env.workspace.read("index.html"))
            bare = (time.perf_counter() - t) * 1000
            if i >= warmup:
                step_ms.append(elapsed)
                render_ms.append(bare)
    finally:
        await env.close()
    step, render = _stats(step_ms), _stats(render_ms)
    return {"task": task.id, "page_bytes": len(page.encode()), "edit_render_step": step, "bare_render": render,
            "step_over_bare_render": round(step["median_ms"] / render["median_ms"], 3)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.refine_latency", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/refine-latency")
    ap.add_argument("--steps", type=int, default=None, help="timed steps (default 30; quick 8)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    steps = args.steps if args.steps is not None else (8 if args.quick else 30)
    result = asyncio.run(run_bench(steps))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "refine_latency.json").write_text(json.dumps(result, indent=2))
    s, r = result["edit_render_step"], result["bare_render"]
    print(f"edit_file+render step: median {s['median_ms']} ms (p90 {s['p90_ms']} ms, n={s['n']}); "
          f"bare render median {r['median_ms']} ms; ratio {result['step_over_bare_render']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
