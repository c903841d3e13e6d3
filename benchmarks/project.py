"""Project-env costs and the scripted repair, on the built-in project suite, per sandbox backend.

Why: a WebCoder episode pays `reset` once, `webshot` on every look and the verifier once, so
those bound how many turns and episodes training can afford. Per task and backend it times
`reset`, the first `webshot` (a full build of the starting project), an incremental `webshot`
after a one-line edit, and the verifier (`RewardPipeline.score`: rebuild, serve, census, judge) on
the starting project. For each task with an injected defect it then runs the scripted
`project-repair` agent for a whole episode and reports the verifier's reward before and after.
Targets on 2 cores: reset ≤ 1 s, median webshot ≤ 3 s, verifier ≤ 10 s per project.

    aesenv bench project --out runs/bench-project [--backends local,docker] [--tasks ID,...]

Writes DIR/project_bench.json and prints one line per backend.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from aesenv.envs import make_core
from aesenv.rewards import PipelineConfig
from aesenv.tasks import load_tasks
from aesenv.trajectory import run_episode
from policies.base import tool_call_message
from policies.project_repair import ProjectRepairPolicy

TARGETS_S = {"reset": 1.0, "webshot_median": 3.0, "verifier_max": 10.0}
EDIT_MARK = "\n/* bench edit */\n"


def _call(name: str, **arguments: str) -> dict:
    return tool_call_message(f"bench-{name}", name, **arguments)


async def _timed(call):
    start = time.perf_counter()
    value = await call
    return value, round(time.perf_counter() - start, 3)


async def bench_backend(backend: str, tasks: list) -> dict:
    env = make_core("AesWebProject-v0", tasks, config=PipelineConfig(sandbox=backend))
    rows, repairs = [], []
    try:
        for task in tasks:
            _, reset_s = await _timed(env.reset(task=task.id))
            (_, _, _, _, info), first_s = await _timed(env.step(_call("webshot")))
            css = env.workspace.read("src/index.css")
            await env.step(_call("write_file", path="src/index.css", content=css + EDIT_MARK))
            (_, _, _, _, again), edit_s = await _timed(env.step(_call("webshot")))
            initial = env.kind.initial_files(task)
            scored, verify_s = await _timed(env.pipeline.score(
                task, initial["index.html"], files={p: b for p, b in initial.items() if p != "index.html"}))
            rows.append({"task": task.id, "start": task.project.start, "reset_s": reset_s,
                         "webshot_first_s": first_s, "webshot_edit_s": edit_s, "verifier_s": verify_s,
                         "webshot_ok": all(r["ok"] for r in info["tool_results"] + again["tool_results"]),
                         "initial_reward": scored.record.reward, "initial_gate": scored.record.channels[
                             "project_gate"].status.value, "initial_failure": scored.record.failure})
            if task.project.defect:
                trajectory = await run_episode(env, ProjectRepairPolicy(), task=task)
                repairs.append({"task": task.id, "defect": task.project.defect, "before": scored.record.reward,
                                "after": trajectory.reward, "turns": len(trajectory.steps),
                                "tools": [s.tool_results[0]["name"] if s.tool_results else None
                                          for s in trajectory.steps]})
    finally:
        await env.close()
    webshots = [r["webshot_first_s"] for r in rows] + [r["webshot_edit_s"] for r in rows]
    summary = {"reset_max_s": max(r["reset_s"] for r in rows),
               "webshot_median_s": round(statistics.median(webshots), 3),
               "webshot_edit_median_s": round(statistics.median(r["webshot_edit_s"] for r in rows), 3),
               "verifier_median_s": round(statistics.median(r["verifier_s"] for r in rows), 3),
               "verifier_max_s": max(r["verifier_s"] for r in rows)}
    summary["meets_targets"] = (summary["reset_max_s"] <= TARGETS_S["reset"]
                                and summary["webshot_median_s"] <= TARGETS_S["webshot_median"]
                                and summary["verifier_max_s"] <= TARGETS_S["verifier_max"])
    summary["repairs_improved"] = all((r["after"] or 0) > (r["before"] or 0) for r in repairs)
    return {"summary": summary, "tasks": rows, "repairs": repairs}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aesenv bench project", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/bench-project")
    ap.add_argument("--backends", default="local,docker", help="comma-separated sandbox backends")
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: the whole builtin:project suite)")
    args = ap.parse_args(argv)
    tasks = load_tasks("builtin:project")
    if args.tasks:
        wanted = args.tasks.split(",")
        tasks = [t for t in tasks if t.id in wanted]
    result = {"targets_s": TARGETS_S, "cpus": os.cpu_count(), "load_before": os.getloadavg()[0], "backends": {}}
    for backend in [b for b in args.backends.split(",") if b]:
        result["backends"][backend] = asyncio.run(bench_backend(backend, tasks))
        s = result["backends"][backend]["summary"]
        print(f"{backend}: reset max {s['reset_max_s']} s, webshot median {s['webshot_median_s']} s "
              f"(after an edit {s['webshot_edit_median_s']} s), verifier median {s['verifier_median_s']} s "
              f"max {s['verifier_max_s']} s; targets met: {s['meets_targets']}; "
              f"defect repairs all improved: {s['repairs_improved']}")
    result["load_after"] = os.getloadavg()[0]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "project_bench.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
