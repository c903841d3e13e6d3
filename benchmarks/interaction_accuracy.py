"""Interaction-accuracy benchmark: does the offline explorer tell working interactions from broken ones?

The labeled set (benchmarks/interactions/labels.json) is handwritten pages with working and broken
interactions: dead buttons, a search box that never filters, games that ignore their keys, a modal
that cannot close, tabs that do not switch, forms that submit nothing, listener-only controls,
canvas games, and the working twin of each. Every page lists its targets (CSS paths, or `keys`
for the first arrow-key burst) with the verdict a correct agent gives. A target the explorer never
tried counts as wrong ("missed"). A page is right when all its targets are; a page with nothing to
interact with is right when the explorer scores nothing.

    aesenv bench interactions --out runs/interactions [--budget 3] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from aesenv.interact import InteractionReport, OfflineExplorer
from aesenv.render import Renderer
from aesenv.tasks import Task

SET_DIR = Path(__file__).resolve().parent / "interactions"


def load_set(directory: Path = SET_DIR) -> list[dict[str, Any]]:
    return json.loads((directory / "labels.json").read_text())["pages"]


def predicted(report: InteractionReport) -> dict[str, int]:
    """Verdict per target as the labels name them: the first scored step on each target."""
    verdicts: dict[str, int] = {}
    for step in report.scored:
        key = "keys" if step.target.startswith("keys:") else step.target
        verdicts.setdefault(key, int(step.verdict.score))
    return verdicts


def compare(expect: dict[str, int], got: dict[str, int], report: InteractionReport) -> dict[str, Any]:
    outcomes = {}
    for target, want in expect.items():
        if target not in got:
            outcomes[target] = "missed"
        else:
            outcomes[target] = {(1, 1): "tp", (0, 0): "tn", (0, 1): "fp", (1, 0): "fn"}[(want, got[target])]
    correct = all(o in ("tp", "tn") for o in outcomes.values()) if expect else not report.scored
    return {"outcomes": outcomes, "page_correct": correct}


async def run(pages: list[dict[str, Any]], budget: int, directory: Path = SET_DIR) -> list[dict[str, Any]]:
    explorer = OfflineExplorer(budget=budget)
    rows: list[dict[str, Any]] = []
    async with Renderer() as renderer:
        for n, entry in enumerate(pages, 1):
            html = (directory / entry["page"]).read_text()
            task = Task(id=Path(entry["page"]).stem, category=entry["category"], prompt=entry["prompt"])
            start = time.perf_counter()
            async with renderer.session(html) as (_, live):
                report = await explorer.explore(live, task) if live is not None else InteractionReport(
                    agent=explorer.name, budget=budget, stopped="no live page")
            got = predicted(report)
            row = {"page": entry["page"], "category": entry["category"], "expect": entry["expect"], "predicted": got,
                   "raw": report.raw, "working_twin": entry.get("working_twin"),
                   "steps": [{"action": s.action, "target": s.target, "score": s.verdict.score,
                              "reason": s.verdict.reason} for s in report.steps],
                   "seconds": round(time.perf_counter() - start, 2), **compare(entry["expect"], got, report)}
            rows.append(row)
            mark = "ok " if row["page_correct"] else "XX "
            print(f"[{n:>2}/{len(pages)}] {mark} {task.id:<28} expect {entry['expect']} got {got} "
                  f"({row['seconds']}s)", flush=True)
    return rows


def summarize(rows: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    counts = {k: 0 for k in ("tp", "tn", "fp", "fn", "missed")}
    for row in rows:
        for outcome in row["outcomes"].values():
            counts[outcome] += 1
    labeled = sum(counts.values())
    raw_by_page = {row["page"]: row["raw"] for row in rows}
    pairs = [(raw_by_page[row["working_twin"]], row["raw"]) for row in rows if row.get("working_twin")]
    return {
        "set_size": len(rows),
        "labeled_interactions": labeled,
        "budget": budget,
        "page_accuracy": round(sum(r["page_correct"] for r in rows) / max(len(rows), 1), 4),
        "interaction_accuracy": round((counts["tp"] + counts["tn"]) / max(labeled, 1), 4),
        "confusion": counts,
        "twin_pairs": len(pairs),
        "twin_pairs_ordered": round(sum(w > b for w, b in pairs) / max(len(pairs), 1), 4),
        "wrong_pages": [r["page"] for r in rows if not r["page_correct"]],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aesenv bench interactions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=3, help="scored interactions per page (N)")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    pages = load_set()[: args.limit]
    start = time.perf_counter()
    rows = asyncio.run(run(pages, args.budget))
    summary = {**summarize(rows, args.budget), "elapsed_s": round(time.perf_counter() - start, 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "interactions.json").write_text(json.dumps({"summary": summary, "pages": rows}, indent=1))
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.out / 'interactions.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
