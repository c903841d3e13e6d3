"""Reward throughput of `train.reward.compute_score` as one veRL reward-loop worker runs it: a
batch of N answers scored concurrently on one event loop in one process (one browser pool).

    python -m train.bench_reward --pages 64            # builtin:web, template answers, offline judge

Prints JSON: pages/s over the warm batch (the pipeline is started and warmed by one page first),
the cold start, how many samples came back valid, masked or past their deadline, and the
machine's 1-minute load before and after (two cores are easily shared: read rates with it), and
`cpu_during_batch`: each core's busy share over the batch and the share of all cores this process
and its children (browser, driver) used, so an idle core during a batch shows.

With `--profile`, the same answers are scored once more through the same shared pipeline, one at
a time, and `profile` says where a score's time goes: the median of each of the records'
`timings_ms` stages (extract, render, each `channel.<name>`, total), with each channel's time by
kind of work where it names it (`channel.interactive.screenshot`, `.label`, `.clock`, `.script`,
`.input`, `.navigation`, `.diff`, `.thumbnail`: see `aesenv.stages`). One at a time, so a stage's
time is its own, not its wait for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import time

from aesenv.procfs import CpuUse
from aesenv.tasks import Task, load_tasks
from policies.template import TemplatePolicy
from train.reward import close_pipelines, compute_score, default_concurrency, pipeline_config, shared_pipeline


async def stage_profile(tasks: list[Task], answers: list[str], options: dict) -> dict:
    """Each answer scored alone through the reward function's own shared pipeline: per stage of
    the records' `timings_ms`, the median and its share of the median total."""
    pipeline = await shared_pipeline(pipeline_config(**{k: v for k, v in options.items() if k != "deadline_s"}))
    records = [(await pipeline.score(task, answer)).record for task, answer in zip(tasks, answers)]
    stages = sorted({name for r in records for name in r.timings_ms})
    medians = {name: statistics.median(r.timings_ms.get(name, 0.0) for r in records) for name in stages}
    total = medians.get("total") or 0.0
    return {"scored_alone": len(records), "statuses": sorted({r.status for r in records}),
            "stages_ms": {name: round(ms, 1) for name, ms in medians.items()},
            "share_of_total": {name: round(ms / total, 3) for name, ms in medians.items() if total and name != "total"}}


async def bench(tasks_spec: str, pages: int, judge: str, deadline_s: float, concurrency: int | None,
                profile: bool = False) -> dict:
    tasks = load_tasks(tasks_spec)
    batch = [tasks[i % len(tasks)] for i in range(pages)]
    policy = TemplatePolicy()
    answers = [await policy.generate(t) for t in batch]
    infos = [{"task": t.model_dump_json()} for t in batch]
    # Throughput, not a training reward: the offline judge is allowed here without a server.
    options = {"judge": judge, "allow_offline_judge": True, "deadline_s": deadline_s, "concurrency": concurrency}
    load_before = os.getloadavg()[0]
    try:
        start = time.perf_counter()
        await compute_score("aesenv/web", answers[0], "", infos[0], **options)
        cold_s = time.perf_counter() - start
        start = time.perf_counter()
        with CpuUse() as cpu:
            results = await asyncio.gather(*(compute_score("aesenv/web", a, "", i, **options)
                                             for a, i in zip(answers, infos)))
        wall_s = time.perf_counter() - start
        load_after = os.getloadavg()[0]
        profiled = await stage_profile(batch, answers, options) if profile else None
    finally:
        await close_pipelines()
    return {"tasks": tasks_spec, "pages": pages, "judge": judge, "concurrency": concurrency or default_concurrency(), "wall_s": round(wall_s, 2),
            "pages_per_s": round(pages / wall_s, 2), "cold_start_s": round(cold_s, 2),
            "valid": sum(r["aes_reward_valid"] == 1.0 for r in results),
            "deadline_exceeded": sum(r["aes_deadline_exceeded"] == 1.0 for r in results),
            "mean_score": round(sum(r["score"] for r in results if math.isfinite(r["score"]))
                                / max(1, sum(math.isfinite(r["score"]) for r in results)), 3),
            "load_1min_before": round(load_before, 2), "load_1min_after": round(load_after, 2),
            "cpu_during_batch": cpu.report(),
            **({"profile": profiled} if profiled is not None else {})}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.bench_reward", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="builtin:web")
    parser.add_argument("--pages", type=int, default=64)
    parser.add_argument("--judge", default="offline")
    parser.add_argument("--deadline-s", type=float, default=180.0)
    parser.add_argument("--concurrency", type=int, default=None, help="pages scored at once (default: train.reward.default_concurrency, the cores + 2)")
    parser.add_argument("--profile", action="store_true", help="then score each answer alone: where the time goes")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(bench(args.tasks, args.pages, args.judge, args.deadline_s, args.concurrency,
                                       args.profile))))


if __name__ == "__main__":
    main()
