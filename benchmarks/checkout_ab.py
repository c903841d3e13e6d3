"""Render and scoring cost of two checkouts of aesenv, measured in one run.

Why: a change to the measurement path (where in-page scripts run, what counts as shown) has a cost
that only a before/after comparison shows, and two separate runs on a shared 2-core machine differ
by more than the change. Here each checkout gets its own worker process (its code on `sys.path`,
one warm `Renderer` and one warm offline `RewardPipeline`), and the runner hands both workers the
same page in turn, alternating which goes first (A B, then B A), so load hits both alike.

    python -m benchmarks.checkout_ab --before ../old-checkout --after . --out runs/checkout_ab [--rounds 3]
        [--after-variant floor|off]

Each page of `benchmarks/perf_pages` is rendered (`Renderer.render`, snapshot included) and scored
(`RewardPipeline.score` with the offline judge: render, lint, interaction probes, judges). Writes
DIR/checkout_ab.json with per-page and overall medians, the after/before ratios, raw samples and
the load average at start and end. `--after-variant` replaces the after checkout's counterfactual
measure by its least prescribed work (`floor`) or by nothing (`off`): what a cost target can reach
at all (`benchmarks/counterfactual_floor.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.counterfactual_floor import VARIANTS
from benchmarks.perf import PAGES_DIR, load_pages, percentile

WAYS = ("render", "score")

# The worker runs inside one checkout: only its public API (Renderer, RewardPipeline, Task), which
# both sides of a comparison must have. One JSON request per line in, one JSON answer per line out.
WORKER = r"""
import asyncio, json, os, sys, time
from aesenv.render import Renderer, RenderConfig
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.tasks import Task

TASK = Task(id="perf-page", prompt="Build the page this file shows, complete and polished.", category="Website")
if os.environ.get("AESENV_AB_VARIANT"):
    from benchmarks.counterfactual_floor import install
    install(os.environ["AESENV_AB_VARIANT"])

async def main():
    async with Renderer(RenderConfig()) as renderer, RewardPipeline(PipelineConfig()) as pipeline:
        print(json.dumps({"ready": True}), flush=True)
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            request = json.loads(line)
            html = open(request["path"], encoding="utf-8").read()
            start = time.perf_counter()
            if request["way"] == "render":
                rendering = await renderer.render(html)
                status = rendering.status.value
            else:
                scored = await pipeline.score(TASK, html)
                status = scored.record.status
            ms = (time.perf_counter() - start) * 1000
            print(json.dumps({"ms": round(ms, 1), "status": status}), flush=True)

asyncio.run(main())
"""


class Worker:
    """One checkout's warm renderer and pipeline in a process of its own."""

    def __init__(self, label: str, checkout: Path, variant: str | None = None) -> None:
        self.label = label
        self.checkout = checkout
        env = {k: v for k, v in os.environ.items() if k != "AESENV_AB_VARIANT"}
        env["PYTHONPATH"] = str(checkout)
        if variant:
            env["AESENV_AB_VARIANT"] = variant
        self.process = subprocess.Popen([sys.executable, "-c", WORKER], cwd=checkout, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ready = self.process.stdout.readline()
        if not ready or not json.loads(ready).get("ready"):
            raise RuntimeError(f"the {label} worker ({checkout}) did not start; its stderr says why")

    def run(self, way: str, page_path: Path) -> dict[str, Any]:
        self.process.stdin.write(json.dumps({"way": way, "path": str(page_path)}) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {self.label} worker died (exit {self.process.poll()})")
        return json.loads(answer)

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _median(values: list[float]) -> float | None:
    return None if not values else round(statistics.median(values), 1)


def summarise(samples: list[dict[str, Any]], pages: list[str]) -> dict[str, Any]:
    """Per way: each page's median per checkout and the after/before ratio, plus the ratio of the
    summed medians (a page set's cost) and the median of the per-page ratios."""
    out: dict[str, Any] = {}
    for way in WAYS:
        per_page = {}
        for page in pages:
            row = {}
            for side in ("before", "after"):
                row[side] = _median([s["ms"] for s in samples if s["way"] == way and s["page"] == page and s["side"] == side])
            row["ratio"] = round(row["after"] / row["before"], 3) if row["before"] and row["after"] else None
            per_page[page] = row
        totals = {side: round(sum(r[side] or 0 for r in per_page.values()), 1) for side in ("before", "after")}
        ratios = [r["ratio"] for r in per_page.values() if r["ratio"]]
        out[way] = {"per_page": per_page, "sum_of_medians_ms": totals,
                    "total_ratio": round(totals["after"] / totals["before"], 3) if totals["before"] else None,
                    "median_page_ratio": round(statistics.median(ratios), 3) if ratios else None,
                    "p90_page_ratio": round(percentile(ratios, 90), 3) if ratios else None}
    return out


def run(before: Path, after: Path, out_dir: Path, rounds: int, pages: list[str] | None, progress: bool,
        after_variant: str | None = None) -> dict:
    page_set = load_pages(pages)
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"benchmark": "aesenv.checkout_ab", "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                              "load": {"start": _loadavg()}, "cpus": os.cpu_count(),
                              "checkouts": {"before": str(before.resolve()), "after": str(after.resolve())},
                              "commits": {}, "rounds": rounds, "pages": [p.name for p in page_set],
                              "after_variant": after_variant}
    for side, checkout in (("before", before), ("after", after)):
        head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
        result["commits"][side] = head.stdout.strip() or None
    workers = {"before": Worker("before", before), "after": Worker("after", after, after_variant)}
    samples: list[dict[str, Any]] = []
    total = rounds * len(page_set) * len(WAYS) * 2
    try:
        for side, worker in workers.items():  # one uncounted warm-up each
            for way in WAYS:
                worker.run(way, page_set[0].path)
        step = 0
        for round_index in range(rounds):
            for page_index, page in enumerate(page_set):
                order = ("before", "after") if (round_index + page_index) % 2 == 0 else ("after", "before")
                for way in WAYS:
                    for side in order:
                        answer = workers[side].run(way, page.path)
                        samples.append({"round": round_index, "page": page.name, "way": way, "side": side, **answer})
                        step += 1
                        if progress:
                            print(f"\r[{step}/{total}] {page.name:<24} {way:<6} {side:<6} {answer['ms']:>8.0f} ms",
                                  end="", file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.close()
        if progress:
            print(file=sys.stderr)
    result["load"]["end"] = _loadavg()
    result["summary"] = summarise(samples, [p.name for p in page_set])
    result["samples"] = samples
    (out_dir / "checkout_ab.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.checkout_ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, type=Path, help="checkout measured first in the ratio's denominator")
    ap.add_argument("--after", default=Path("."), type=Path, help="checkout in the numerator (default: this one)")
    ap.add_argument("--out", default=Path("runs/checkout_ab"), type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pages", default=None, help=f"comma-separated names from {PAGES_DIR.name} (default: all)")
    ap.add_argument("--after-variant", choices=VARIANTS, default=None,
                    help="replace the after checkout's counterfactual measure (benchmarks/counterfactual_floor.py): "
                         "'floor' prices the one capture issue 47 prescribes, 'off' the render without the measure")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    result = run(args.before, args.after, args.out, args.rounds,
                 args.pages.split(",") if args.pages else None, not args.no_progress, args.after_variant)
    print(f"load {result['load']['start']} -> {result['load']['end']} on {result['cpus']} cores"
          + (f"; after = its counterfactual variant {args.after_variant!r}" if args.after_variant else ""))
    for way, summary in result["summary"].items():
        totals = summary["sum_of_medians_ms"]
        print(f"{way:<6} sum of page medians: before {totals['before']:.0f} ms, after {totals['after']:.0f} ms, "
              f"ratio {summary['total_ratio']}; per-page ratio median {summary['median_page_ratio']}, "
              f"p90 {summary['p90_page_ratio']}")
        for page, row in summary["per_page"].items():
            print(f"  {page:<24} {row['before']!s:>9} {row['after']!s:>9}  x{row['ratio']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
