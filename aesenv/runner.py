"""Run a policy over tasks through the pipeline: records, screenshots, summary, report.

Resumable: records are appended to `records.jsonl` as they finish, and a rerun skips the
task ids already there. Bounded concurrency, a progress bar, one pipeline for the run.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.tasks import Task
from policies.base import Policy

GOOD_THRESHOLD = 75.0  # OpenDesign's "good rate": share of pages with static total >= 75


def _load_done(path: Path) -> dict[str, RewardRecord]:
    done: dict[str, RewardRecord] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = RewardRecord.model_validate_json(line)
                done[record.task_id] = record
    return done


async def run_episodes(tasks: list[Task], policy: Policy, out_dir: str | Path, *,
                       config: PipelineConfig | None = None, concurrency: int = 2,
                       progress: bool = True) -> list[RewardRecord]:
    out = Path(out_dir)
    shots = out / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    records_path = out / "records.jsonl"
    done = _load_done(records_path)
    todo = [t for t in tasks if t.id not in done]
    slots = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc="episodes", unit="page",
               disable=not progress)
    write_lock = asyncio.Lock()

    async with RewardPipeline(config) as pipeline:
        async def one(task: Task) -> RewardRecord:
            async with slots:
                try:
                    text = await policy.generate(task)
                except Exception as exc:  # noqa: BLE001 - one bad policy call must not end the run
                    text = ""
                    policy_error = f"policy {policy.name} failed: {type(exc).__name__}: {exc}"
                else:
                    policy_error = ""
                scored = await pipeline.score(task, text)
                record = scored.record
                if policy_error:  # no answer is not a bad answer: keep it out of the means
                    record = record.model_copy(update={"status": "infra_error", "reward": None,
                                                       "normalized": None, "failure": policy_error})
                png = scored.picture
                if png:
                    name = f"{_safe(task.id)}.png"
                    (shots / name).write_bytes(png)
                    record.screenshot = f"screenshots/{name}"
                async with write_lock:
                    with records_path.open("a", encoding="utf-8") as fh:
                        fh.write(record.model_dump_json() + "\n")
                bar.update(1)
                bar.set_postfix_str(f"{task.id} reward={record.reward}")
                return record

        await asyncio.gather(*(one(t) for t in todo))
    bar.close()
    final = _load_done(records_path)
    return [final[t.id] for t in tasks if t.id in final]


def _safe(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)[:120]


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def summarize(records: list[RewardRecord], *, wall_s: float | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Aggregate records. Infra failures are counted and excluded, never averaged in as 0."""
    scored = [r for r in records if r.status == "ok"]

    def block(rs: list[RewardRecord]) -> dict[str, Any]:
        static = [r.channels["static"] for r in rs if "static" in r.channels and r.channels["static"].counts]
        totals = [float(s.raw) for s in static]
        execution = [r.channels["execution"] for r in rs if "execution" in r.channels and r.channels["execution"].counts]
        return {
            "n": len(rs),
            "reward_mean": _mean([r.reward for r in rs if r.reward is not None]),
            "normalized_mean": _mean([r.normalized for r in rs if r.normalized is not None]),
            "static_total_mean": _mean(totals),
            **{f"{part}_mean": _mean([float(s.payload[part]) for s in static if part in s.payload])
               for part in ("alignment", "aesthetics", "structure")},
            "good_rate": round(sum(t >= GOOD_THRESHOLD for t in totals) / len(totals), 4) if totals else None,
            "execution_pass_rate": _mean([1.0 if e.raw == 1 else 0.0 for e in execution]),
        }

    per_category: dict[str, list[RewardRecord]] = defaultdict(list)
    for r in scored:
        per_category[r.category].append(r)
    failures = Counter()
    for r in records:
        if r.status == "infra_error":
            failures["infra_error"] += 1
        elif r.failure:
            failures[r.failure.split(":")[0]] += 1
    summary = {
        **block(scored),
        "n_total": len(records),
        "n_infra_error": sum(r.status == "infra_error" for r in records),
        "per_category": {cat: block(rs) for cat, rs in sorted(per_category.items())},
        "failures": dict(failures),
        "median_score_ms": round(statistics.median(r.timings_ms.get("total", 0) for r in records), 1) if records else None,
        "provenance": records[0].provenance if records else {},
    }
    if wall_s is not None:
        summary["wall_s"] = round(wall_s, 2)
    summary.update(extra or {})
    return summary


async def run_and_report(tasks: list[Task], policy: Policy, out_dir: str | Path, *,
                         config: PipelineConfig | None = None, concurrency: int = 2,
                         progress: bool = True, title: str = "aesenv run") -> dict[str, Any]:
    from aesenv.report import write_report

    start = time.perf_counter()
    records = await run_episodes(tasks, policy, out_dir, config=config, concurrency=concurrency, progress=progress)
    summary = summarize(records, wall_s=time.perf_counter() - start,
                        extra={"policy": policy.name, "tasks": len(tasks)})
    out = Path(out_dir)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    write_report(out, records, summary, title=title)
    return summary
