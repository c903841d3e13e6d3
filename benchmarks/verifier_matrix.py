"""The AesCode verifier matrix: on the built-in requirement suite, the correct page passes every
verifier, and each broken variant fails the channels it breaks and only those.

Every page of benchmarks/aescode_pages/ goes through the reward pipeline with the verifier
channels; a cell counts the pages of that variant on which the channel failed (status `failed`),
over the pages where it applied. A page is right when exactly its expected channels (none for
the correct page) failed and nothing was masked for our own failure. The summary also says what
share of the VGR predicates the parsed graph decides offline, and the design graph's size and
parse time per page.

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
from aesenv.kinds.web.verifiers import AESCODE_CHANNELS, AESCODE_EXTENDED_CHANNELS
from benchmarks.aescode_suite import PAGES_DIR, VARIANTS

# The deterministic channels: AesCode's seven and ours beside them (lint as execution, chart and
# table apart); the checklist needs a VLM and is masked offline, the design graph is evidence.
CHANNELS = ["renderable", "execution", "text", "boundary", "table_chart", "chart", "table", "layout", "whitespace",
            "vgr"]
assert set(AESCODE_CHANNELS) <= set(CHANNELS) and set(AESCODE_EXTENDED_CHANNELS) - set(CHANNELS) == {
    "checklist", "design_graph"}


def pages_for(task: Task) -> dict[str, str]:
    folder = PAGES_DIR / task.id
    return {p.stem: p.read_text() for p in sorted(folder.glob("*.html"))}


async def score_pages(pipeline: RewardPipeline, tasks: list[Task], variants: set[str] | None = None) -> list[dict[str, Any]]:
    """One row per (task, page): each channel's status and score, and whether the page is right."""

    async def one(task: Task, variant: str, text: str) -> dict[str, Any]:
        record = (await pipeline.score(task, text)).record
        expected = sorted(VARIANTS.get(variant, ()))
        statuses = {name: r.status.value for name, r in record.channels.items()}
        failed = sorted(n for n, s in statuses.items() if s == "failed")
        infra = sorted(n for n, s in statuses.items() if s == "infra_error")
        vgr, graph = record.channels.get("vgr"), record.channels.get("design_graph")
        return {"task": task.id, "variant": variant, "expected_failures": expected, "failed": failed,
                "infra": infra, "right": failed == expected and not infra,
                "vgr": {k: vgr.payload.get(k) for k in ("decided", "masked", "offline_share")} if vgr else None,
                "graph": graph.payload.get("summary") if graph and graph.counts else None,
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


def graph_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The VGR predicates the graph decides offline, and the graph's size and parse time per page."""
    vgr = [r["vgr"] for r in rows if r["vgr"] and r["vgr"].get("decided") is not None]
    graphs = [r["graph"] for r in rows if r["graph"]]
    decided, masked = sum(v["decided"] for v in vgr), sum(v["masked"] for v in vgr)

    def spread(key: str) -> dict[str, float]:
        values = sorted(g[key] for g in graphs)
        return {"mean": round(sum(values) / len(values), 2), "max": values[-1]} if values else {}

    return {"vgr_predicates_per_page": round((decided + masked) / len(vgr), 2) if vgr else None,
            "vgr_offline_share": round(decided / (decided + masked), 4) if vgr else None,
            "graph_nodes": spread("nodes"), "graph_edges": spread("edges"), "graph_parse_ms": spread("parse_ms")}


def render_table(table: dict[str, dict[str, str]], rows: list[dict[str, Any]]) -> str:
    head = f"{'page':<14}" + "".join(f"{c:>12}" for c in CHANNELS) + f"{'right':>10}"
    lines = [head]
    for variant, cells in table.items():
        mine = [r for r in rows if r["variant"] == variant]
        right = f"{sum(r['right'] for r in mine)}/{len(mine)}"
        lines.append(f"{variant:<14}" + "".join(f"{cells[c]:>12}" for c in CHANNELS) + f"{right:>10}")
    return "\n".join(lines)


async def run(tasks: list[Task]) -> list[dict[str, Any]]:
    # Layout as AesCode reads it (OCR of both images), the paper's default.
    config = PipelineConfig(channels=[*CHANNELS, "design_graph"], reward="aescode")
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
               "elapsed_s": round(time.perf_counter() - start, 1), **graph_stats(rows)}
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
