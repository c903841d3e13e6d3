"""What isolation costs: a plot run and a page render with it on and off, in one run.

Plot scripts run on the local sandbox with bubblewrap (the default) and without isolation (plain
warm workers: the floor), and on the docker sandbox when an engine is there; pages render with
the browser in its own network namespace as an unprivileged uid (the default) and as root on the
host network. Runs are interleaved round by round, so machine load hits every way alike; the
report gives median milliseconds per way and the ratios.

    aesenv bench isolation --out runs/isolation [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from benchmarks.plots import DATA_CSV, SCRIPTS

PAGES = ("landing_saas", "dashboard_chartjs", "article_long", "three_scene", "tailwind_cdn", "form_signup",
         "game_canvas_raf", "pricing_table")
PAGE_DIR = Path(__file__).with_name("perf_pages")


async def _plots(rounds: int) -> dict[str, list[float]]:
    from aesenv.sandbox import make_sandbox
    from aesenv.sandbox.docker import engine_problem

    ways = {"local-bwrap": make_sandbox("local", workers=1),
            "local-unisolated": make_sandbox("local", workers=1, isolate=False)}
    if not engine_problem():
        ways["docker"] = make_sandbox("docker", workers=1)
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for sb in ways.values():
            await sb.start()
            await sb.run_plot(next(iter(SCRIPTS.values())), {"data.csv": DATA_CSV})  # warm
        for _ in range(rounds):
            for code in SCRIPTS.values():
                for name, sb in ways.items():
                    started = time.perf_counter()
                    run = await sb.run_plot(code, {"data.csv": DATA_CSV})
                    if not run.ok:
                        raise RuntimeError(f"{name}: {run.status.value} {run.reason}")
                    times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for sb in ways.values():
            await sb.close()
    return times


async def _pages(rounds: int) -> dict[str, list[float]]:
    from aesenv.render import RenderConfig, Renderer, RenderStatus

    pages = [(PAGE_DIR / f"{name}.html").read_text() for name in PAGES]
    ways = {"browser-isolated": Renderer(RenderConfig(concurrency=1)),
            "browser-unisolated": Renderer(RenderConfig(concurrency=1, isolate_browser=False))}
    times: dict[str, list[float]] = {name: [] for name in ways}
    failed: dict[str, list[str]] = {name: [] for name in ways}
    try:
        for r in ways.values():
            await r.start()
            await r.render(pages[0])
        for _ in range(rounds):
            for html in pages:
                for name, r in ways.items():
                    started = time.perf_counter()
                    rendering = await r.render(html)
                    if rendering.status is RenderStatus.OK:  # a page that hit a deadline is not timed
                        times[name].append((time.perf_counter() - started) * 1000)
                    else:
                        failed[name].append(f"{rendering.status.value}: {rendering.error}"[:120])
        isolation = {name: r.provenance["browser_isolation"] for name, r in ways.items()}
    finally:
        for r in ways.values():
            await r.close()
    return times, isolation, failed


def _summary(times: dict[str, list[float]], base: str) -> dict:
    medians = {name: round(statistics.median(t), 1) for name, t in times.items()}
    return {"median_ms": medians, "n": {name: len(t) for name, t in times.items()},
            "ratio_to_" + base: {name: round(m / medians[base], 3) for name, m in medians.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aesenv bench isolation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/isolation")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    plots = asyncio.run(_plots(args.rounds))
    pages, isolation, failed = asyncio.run(_pages(args.rounds))
    report = {"rounds": args.rounds, "load_average": os.getloadavg(),
              "plots": _summary(plots, "local-unisolated"), "pages": _summary(pages, "browser-unisolated"),
              "browser_isolation": isolation, "renders_not_ok": failed}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "isolation.json").write_text(json.dumps(report, indent=2))
    for kind in ("plots", "pages"):
        for name, ms in report[kind]["median_ms"].items():
            ratio = next(v for k, v in report[kind].items() if k.startswith("ratio_to_"))[name]
            print(f"{kind:6s} {name:20s} median {ms:8.1f} ms  ×{ratio}")
    for name, problems in failed.items():
        if problems:
            print(f"pages  {name:20s} {len(problems)} renders not ok (left out): {problems[0]}")
    print(f"load average {report['load_average']}; wrote {Path(args.out) / 'isolation.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
