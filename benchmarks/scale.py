"""Reward throughput on Ray: the same batch scored by the local pipeline and by a Ray pool of 1
and 2 actors on a local cluster on this machine, one run, and what that projects for a GRPO step
and a full OpenDesign run on N nodes.

    aesenv bench scale --out runs/scale [--pages 32] [--tasks builtin:web] [--nodes 1 2 4 8] [--pin]

With `--pin` each actor (and the browser it launches) runs on one core of its own: a one-core node
simulated on this machine, so `scaling_efficiency` (the rate of n actors over n times the rate of
one) is the scaling across nodes; the driver and Ray's own processes stay unpinned.

Each path is warmed by one page per actor first (browser pools started), then times the batch.
The projection assumes what the JSON's `assumptions` say: nodes like this one (the best measured
rate per node), scaling linearly across nodes (every node's actors score independently and the
driver only hands out items), the same page mix and the offline judges.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from aesenv.procfs import CpuUse
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.rewards.service import RayScorer
from aesenv.tasks import load_tasks
from policies.template import TemplatePolicy

GRPO_STEP_PAGES = 64 * 8  # prompts × rollouts of one GRPO-AR step
OPENDESIGN_PROMPTS = 840


async def _timed(scorer: RewardPipeline | RayScorer, batch: list[tuple[Any, str]], warm: int) -> dict[str, Any]:
    await asyncio.gather(*(scorer.score(task, answer) for task, answer in batch[:warm]))
    start = time.perf_counter()
    results = await asyncio.gather(*(scorer.score(task, answer) for task, answer in batch))
    wall = time.perf_counter() - start
    return {"pages": len(batch), "wall_s": round(wall, 2), "pages_per_s": round(len(batch) / wall, 3),
            "ok": sum(r.record.status == "ok" for r in results),
            "reward_sum": round(sum(r.record.reward or 0.0 for r in results), 4)}


async def measure(tasks_spec: str, pages: int, actor_counts: list[int], pin: bool = False) -> dict[str, Any]:
    import ray

    tasks = load_tasks(tasks_spec)
    policy = TemplatePolicy()
    batch = [(tasks[i % len(tasks)], await policy.generate(tasks[i % len(tasks)])) for i in range(pages)]
    config = PipelineConfig()
    out: dict[str, Any] = {}
    async with RewardPipeline(config) as local:
        out["local"] = await _timed(local, batch, warm=1)
    ray.init(num_cpus=os.cpu_count(), namespace="aesenv", include_dashboard=False, log_to_driver=False)
    try:
        for n in actor_counts:
            started = time.perf_counter()
            async with RayScorer(config, actors=n) as scorer:
                cores = os.cpu_count() or 1
                pinned = await asyncio.gather(*(actor.pin.remote([i % cores]) for i, actor in
                                                enumerate(scorer.actors))) if pin else None
                out[f"ray_{n}"] = {**await _timed(scorer, batch, warm=n), "actors": n,
                                   "start_and_warm_s": round(time.perf_counter() - started, 2),
                                   **({"cores_of_actors": pinned} if pinned else {})}
    finally:
        ray.shutdown()
    return out


def scaling(results: dict[str, Any]) -> dict[str, float]:
    """Per actor count n > 1: the rate of n actors over n times the rate of one (1.0 is linear)."""
    one = results.get("ray_1", {}).get("pages_per_s")
    return {k: round(v["pages_per_s"] / (v["actors"] * one), 3) for k, v in results.items()
            if one and k.startswith("ray_") and v["actors"] > 1}


def projections(results: dict[str, Any], nodes: list[int]) -> dict[str, Any]:
    per_node = max(v["pages_per_s"] for k, v in results.items() if k.startswith("ray_"))
    return {"pages_per_s_per_node": per_node,
            "grpo_step_512_pages_min": {n: round(GRPO_STEP_PAGES / (per_node * n) / 60, 2) for n in nodes},
            "opendesign_840_prompts_min": {n: round(OPENDESIGN_PROMPTS / (per_node * n) / 60, 2) for n in nodes}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aesenv bench scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", default="builtin:web")
    parser.add_argument("--pages", type=int, default=32)
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--pin", action="store_true",
                        help="pin actor i (and its browser) to core i: each actor a one-core node, so the "
                             "rate of 2 actors over 2x the rate of 1 is the scaling across nodes")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with CpuUse() as cpu:
        results = asyncio.run(measure(args.tasks, args.pages, args.actors, args.pin))
    report = {"machine": {"cpus": os.cpu_count(), "load_1min_before": round(load_before, 2),
                          "load_1min_after": round(os.getloadavg()[0], 2)},
              "tasks": args.tasks, "pinned": args.pin, "results": results, "scaling_efficiency": scaling(results),
              # Ray's workers are not this process's to reap, so only the cores' own view is kept.
              "cores_busy_pct": cpu.report()["cores_busy_pct"], "projection": projections(results, args.nodes),
              "assumptions": [
                  "a node is this machine: its best measured Ray rate (actors sized to its cores)",
                  "linear across nodes: each node's actors score independently; the driver only hands out items",
                  f"a GRPO-AR step is {GRPO_STEP_PAGES} pages (64 prompts x 8 rollouts); OpenDesign is "
                  f"{OPENDESIGN_PROMPTS} prompts, one page each",
                  "the page mix of --tasks with template answers, offline judges (a VLM judge's server adds its own limit)"]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
