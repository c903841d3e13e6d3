"""The AesCode verifier matrix: on the built-in requirement suite, the correct page passes every
verifier, and each broken variant fails the channel it breaks and only that one.

Every page of benchmarks/aescode_pages/ goes through the reward pipeline with the verifier
channels; a cell counts the pages of that variant on which the channel failed (status `failed`),
over the pages where it applied. A page is right when its expected channel (none for the correct
page) is the only one that failed and nothing was masked for our own failure.

    aesenv bench verifiers --out runs/verifiers [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.tasks import Task, load_tasks
from aesenv.verifiers import AESCODE_CHANNELS
from benchmarks.aescode_suite import PAGES_DIR, VARIANTS

# The deterministic channels (the checklist needs a VLM and is masked offline).
CHANNELS = [c for c in AESCODE_CHANNELS if c != "checklist"]


def pages_for(task: Task) -> dict[str, str]:
    folder = PAGES_DIR / task.id
    return {p.stem: p.read_text() for p in sorted(folder.glob("*.html"))}


async def score_pages(pipeline: RewardPipeline, tasks: list[Task], variants: set[str] | None = None) -> list[dict[str, Any]]:
    """One row per (task, page): each channel's status and score, and whether the page is right."""

    async def one(task: Task, variant: str, text: str) -> dict[str, Any]:
        record = (await pipeline.score(task, text)).record
        expected = VARIANTS.get(variant)
        statuses = {name: r.status.value for name, r in record.channels.items()}
        failed = sorted(n for n, s in statuses.items() if s == "failed")
        infra = sorted(n for n, s in statuses.items() if s == "infra_error")
        return {"task": task.id, "variant": variant, "expected_failure": expected, "failed": failed,
                "infra": infra, "right": failed == ([expected] if expected else []) and not infra,
                "statuses": statuses, "scores": {n: r.score for n, r in record.channels.items()},
                "aescode": record.aescode,
                "payloads": {n: record.channels[n].payload for n in failed + infra}}

    jobs = [one(task, variant, text) for task in tasks for variant, text in pages_for(task).items()
            if variants is None or variant in variants]
    return list(await asyncio.gather(*jobs))


def matrix(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """variant -> channel -> "failed/applied" ("-" where the channel never applied)."""
    out: dict[str, dict[str, str]] = {}
    for variant in ["correct", *VARIANTS]:
        mine = [r for r in rows if r["variant"] == variant]
        if not mine:
            continue
        out[variant] = {}
        for channel in CHANNELS:
            applied = [r for r in mine if r["statuses"].get(channel) in ("ok", "failed")]
            failed = sum(r["statuses"][channel] == "failed" for r in applied)
            out[variant][channel] = f"{failed}/{len(applied)}" if applied else "-"
    return out


def render_table(table: dict[str, dict[str, str]], rows: list[dict[str, Any]]) -> str:
    head = f"{'page':<14}" + "".join(f"{c:>12}" for c in CHANNELS) + f"{'right':>10}"
    lines = [head]
    for variant, cells in table.items():
        mine = [r for r in rows if r["variant"] == variant]
        right = f"{sum(r['right'] for r in mine)}/{len(mine)}"
        lines.append(f"{variant:<14}" + "".join(f"{cells[c]:>12}" for c in CHANNELS) + f"{right:>10}")
    return "\n".join(lines)


async def run(tasks: list[Task]) -> list[dict[str, Any]]:
    config = PipelineConfig(channels=CHANNELS, reward="aescode")
    async with RewardPipeline(config) as pipeline:
        return await score_pages(pipeline, tasks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aesenv bench verifiers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    args = parser.parse_args(argv)
    tasks = load_tasks("builtin:aescode")[: args.limit]
    start = time.perf_counter()
    rows = asyncio.run(run(tasks))
    table = matrix(rows)
    summary = {"tasks": len(tasks), "pages": len(rows), "right": sum(r["right"] for r in rows),
               "wrong": [f"{r['task']}/{r['variant']}: failed {r['failed']} infra {r['infra']}"
                         for r in rows if not r["right"]],
               "elapsed_s": round(time.perf_counter() - start, 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "verifier_matrix.json").write_text(json.dumps(
        {"summary": summary, "matrix": table, "pages": rows}, indent=1))
    text = render_table(table, rows)
    (args.out / "verifier_matrix.txt").write_text(text + "\n")
    print(text)
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.out / 'verifier_matrix.json'}")
    return 0 if summary["right"] == summary["pages"] else 1


if __name__ == "__main__":
    sys.exit(main())
