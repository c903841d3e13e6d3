"""Plot-execution benchmark: what isolation costs. A fixed set of small matplotlib scripts runs four
ways in one process, interleaved script by script so machine load hits every way alike:

- cold: a fresh `python` subprocess per script (imports the plotting stack every time),
- in-process: `exec` in this process with the stack already imported (no isolation: the floor),
- local: the local sandbox's warm fork-server,
- docker: the docker sandbox's warm container pool (skipped, with the reason, without an engine).

Every way draws and saves each figure as SVG with the worker's own `save_svg`, as a plot episode's
sandbox does (the host's drawing and description of it are the same for every way, so not timed). Targets (issue 5): warm within 1.2x of in-process and at least 3x faster than cold.
Wall-clock ratios on a shared, loaded machine are noisy; `cpu_median_ms` (the job process's CPU
time; for in-process, this process's) gives a load-independent view of the same cost, and
`channel_median_ms` (host wall time minus the worker's own) isolates what each backend's transport
adds. `stages` says where a warm run's time goes, as medians per stage: for in-process, the script
and the saving of its figures; for each sandbox, the worker's own stages (prepare the workspace,
start the job's process, run, of which the job's set-up, its script and saving as the job reports
them, collect the result, clean up) and `transport`, the rest of the host's wall time (encoding, the pipe or socket, the record). The docker image has the same library versions as this environment (see
aesenv.sandbox.image) but Debian's python3 build, which may draw at a different speed.

Two views of the local sandbox alone follow, because a worker's cost depends on when its next job
comes (it forks and may warm the next job's process between jobs): `arrivals`, one worker's
latency when each job comes a fixed time after the last answer (0: back to back), and `batch`,
plots per second with a worker per core and every job submitted at once (an RL batch).

    python -m benchmarks.plots --out runs/bench-plots [--rounds 5] [--batch 60]

Writes DIR/plots.json (medians, ratios, docker overhead over local, arrivals, batch, raw samples).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

DATA_CSV = b"month,sales,costs\n" + b"".join(f"{m},{100 + 7 * m % 23},{60 + 5 * m % 17}\n".encode() for m in range(1, 13))

SCRIPTS = {
    "line": "import matplotlib.pyplot as plt\nimport numpy as np\nx = np.linspace(0, 10, 200)\n"
            "plt.plot(x, np.sin(x), label='sin')\nplt.plot(x, np.cos(x), label='cos')\n"
            "plt.title('Waves'); plt.xlabel('t'); plt.ylabel('value'); plt.legend()\n",
    "bar_csv": "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('data.csv')\n"
               "fig, ax = plt.subplots(figsize=(7, 4))\nax.bar(df['month'], df['sales'], color='tab:blue')\n"
               "ax.set_title('Monthly sales'); ax.set_xlabel('month'); ax.set_ylabel('sales')\n",
    "scatter": "import matplotlib.pyplot as plt\nimport numpy as np\nrng = np.random.default_rng(0)\n"
               "x, y = rng.normal(size=(2, 300))\nplt.scatter(x, y, c=x * y, cmap='viridis', s=12)\n"
               "plt.colorbar(); plt.title('Scatter')\n",
    "hist": "import matplotlib.pyplot as plt\nimport numpy as np\nrng = np.random.default_rng(1)\n"
            "plt.hist(rng.normal(size=2000), bins=40, alpha=0.7)\nplt.title('Histogram'); plt.xlabel('x')\n",
    "subplots": "import matplotlib.pyplot as plt\nimport numpy as np\nfig, axes = plt.subplots(2, 2, figsize=(8, 6))\n"
                "for i, ax in enumerate(axes.flat):\n    ax.plot(np.arange(20) ** (1 + i / 4))\n    ax.set_title(f'panel {i}')\n"
                "fig.suptitle('Grid'); fig.tight_layout()\n",
    "pie": "import matplotlib.pyplot as plt\nplt.pie([30, 25, 20, 15, 10], labels=list('ABCDE'), autopct='%1.0f%%')\n"
           "plt.title('Share')\n",
}

# Appended to each script for the cold way, which has no worker to collect its figures.
COLLECT = """
import importlib.util as _u, matplotlib.pyplot as _plt
_spec = _u.spec_from_file_location('worker', {worker!r}); _w = _u.module_from_spec(_spec); _spec.loader.exec_module(_w)
for _n in _plt.get_fignums():
    _w.save_svg(_plt.figure(_n))
"""


def worker_path() -> Path:
    from aesenv.sandbox.pool import WORKER_SCRIPT

    return WORKER_SCRIPT


def run_cold(code: str, workdir: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-c", code + COLLECT.format(worker=str(worker_path()))],
                   cwd=workdir, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MPLBACKEND": "Agg"},
                   check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def run_in_process(code: str, workdir: Path, save, cpu: list[float], stages: dict[str, list[float]]) -> float:
    import matplotlib.pyplot as plt

    started, cpu_started = time.perf_counter(), time.process_time()
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        exec(compile(code, "main.py", "exec"), {"__name__": "__main__"})
        ran = time.perf_counter()
        for number in plt.get_fignums():
            save(plt.figure(number))
        saved = time.perf_counter()
    finally:
        plt.close("all")
        os.chdir(cwd)
    cpu.append((time.process_time() - cpu_started) * 1000)
    stages.setdefault("script", []).append((ran - started) * 1000)
    stages.setdefault("save", []).append((saved - ran) * 1000)
    return (time.perf_counter() - started) * 1000


async def run_sandbox(sandbox, code: str, channel: list[float], cpu: list[float],
                      stages: dict[str, list[float]]) -> float:
    """Host-side wall time of one run; appends what the channel added over the worker's own time,
    the job's CPU time, and the run's stages (`transport`: the host's wall time beyond the
    worker's stages)."""
    started = time.perf_counter()
    run = await sandbox.run_plot(code, {"data.csv": DATA_CSV})
    elapsed = (time.perf_counter() - started) * 1000
    if not run.ok or not run.figures:
        raise RuntimeError(f"{sandbox.name} run failed: {run.status.value} {run.reason}")
    channel.append(elapsed - run.duration_ms)
    cpu.append(run.cpu_ms)
    for stage, ms in {**run.timings_ms, "transport": elapsed - worker_ms(run.timings_ms)}.items():
        stages.setdefault(stage, []).append(ms)
    return elapsed


def worker_ms(timings: dict[str, float]) -> float:
    """The worker's own time: its top-level stages (`run.script` and `run.save` are part of `run`)."""
    return sum(ms for stage, ms in timings.items() if "." not in stage)


def _load_save():
    import importlib.util

    import matplotlib

    matplotlib.use("Agg")
    spec = importlib.util.spec_from_file_location("worker", worker_path())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.save_svg


async def measure(rounds: int, progress: bool, seed: int) -> dict:
    from tqdm import tqdm

    from aesenv.sandbox import make_sandbox
    from aesenv.sandbox.docker import engine_problem

    save = _load_save()
    sandboxes = {"local": make_sandbox("local", workers=1)}
    docker_problem = await asyncio.to_thread(engine_problem)
    if not docker_problem:
        sandboxes["docker"] = make_sandbox("docker", workers=1)
    for sandbox in sandboxes.values():
        await sandbox.start()
    samples: dict[str, list[float]] = {way: [] for way in ["cold", "in_process", *sandboxes]}
    channel: dict[str, list[float]] = {name: [] for name in sandboxes}
    cpu: dict[str, list[float]] = {way: [] for way in ["in_process", *sandboxes]}
    stages: dict[str, dict[str, list[float]]] = {way: {} for way in ["in_process", *sandboxes]}
    rng = random.Random(seed)
    try:
        with tempfile.TemporaryDirectory(prefix="aesenv-bench-plots-") as tmp:
            workdir = Path(tmp)
            (workdir / "data.csv").write_bytes(DATA_CSV)

            async def once(way: str, code: str) -> float:
                if way == "cold":
                    return await asyncio.to_thread(run_cold, code, workdir)
                if way == "in_process":
                    return run_in_process(code, workdir, save, cpu[way], stages[way])
                return await run_sandbox(sandboxes[way], code, channel[way], cpu[way], stages[way])

            for way in samples:  # warm-up, untimed: first-use costs are not per-episode costs
                await once(way, SCRIPTS["line"])
            for values in [*cpu.values(), *channel.values()]:
                values.clear()
            for way_stages in stages.values():
                way_stages.clear()
            total = rounds * len(SCRIPTS) * len(samples)
            with tqdm(total=total, desc="plots bench", unit="run", disable=not progress) as bar:
                for _ in range(rounds):
                    for code in SCRIPTS.values():
                        ways = list(samples)
                        rng.shuffle(ways)
                        for way in ways:
                            samples[way].append(await once(way, code))
                            bar.update()
    finally:
        for sandbox in sandboxes.values():
            await sandbox.close()
    return {"samples_ms": samples, "channel_ms": channel, "cpu_ms": cpu, "stages_ms": stages,
            "docker_unavailable": docker_problem or None,
            "isolation": {name: sb.isolation.model_dump() for name, sb in sandboxes.items()}}


def summarize(measured: dict) -> dict:
    median = {way: round(statistics.median(values), 1) for way, values in measured["samples_ms"].items()}
    cpu = {way: round(statistics.median(values), 1) for way, values in measured["cpu_ms"].items()}
    cold, floor = median["cold"], median["in_process"]

    def backend(way: str) -> dict | None:
        if way not in median:
            return None
        warm = median[way]
        return {"warm_median_ms": warm, "warm_speedup": round(cold / warm, 2),
                "channel_median_ms": round(statistics.median(measured["channel_ms"][way]), 1),
                "cpu_median_ms": cpu[way], "cpu_overhead_vs_inprocess": round(cpu[way] / cpu["in_process"], 3),
                "overhead_vs_inprocess": round(warm / floor, 3),
                "meets_targets": warm / floor <= 1.2 and cold / warm >= 3}

    local, docker = backend("local"), backend("docker")
    stages = {way: {stage: round(statistics.median(values), 1) for stage, values in way_stages.items()}
              for way, way_stages in measured["stages_ms"].items()}
    if docker:
        docker["overhead_over_local_ms"] = round(median["docker"] - median["local"], 1)
        docker["overhead_over_local_ratio"] = round(median["docker"] / median["local"], 3)
    return {"cold_median_ms": cold, "in_process_median_ms": floor, "in_process_cpu_median_ms": cpu["in_process"],
            "local_warm_median_ms": median["local"],
            "docker_warm_median_ms": median.get("docker"),
            "warm_speedup": local["warm_speedup"], "overhead_vs_inprocess": local["overhead_vs_inprocess"],
            "local": local, "docker": docker, "stages": stages, "docker_unavailable": measured["docker_unavailable"]}


ARRIVAL_GAPS_S = (0.0, 0.01, 0.15)


async def arrivals(rounds: int) -> dict[str, float]:
    """Median latency of one local worker's runs, by the time between an answer and the next job."""
    from aesenv.sandbox import make_sandbox

    latency: dict[float, list[float]] = {gap: [] for gap in ARRIVAL_GAPS_S}
    async with make_sandbox("local", workers=1) as sandbox:
        await sandbox.run_plot(SCRIPTS["line"], {"data.csv": DATA_CSV})
        for _ in range(rounds):
            for gap in ARRIVAL_GAPS_S:
                for code in SCRIPTS.values():
                    await asyncio.sleep(gap)
                    started = time.perf_counter()
                    run = await sandbox.run_plot(code, {"data.csv": DATA_CSV})
                    if not run.ok:
                        raise RuntimeError(f"local run failed: {run.status.value} {run.reason}")
                    latency[gap].append((time.perf_counter() - started) * 1000)
    return {f"{round(gap * 1000)}ms": round(statistics.median(values), 1) for gap, values in latency.items()}


async def batch(jobs: int) -> dict[str, float | int]:
    """Plots per second with a local worker per core and `jobs` runs submitted at once."""
    from aesenv.sandbox import make_sandbox

    workers = len(os.sched_getaffinity(0))
    codes = [list(SCRIPTS.values())[i % len(SCRIPTS)] for i in range(jobs)]
    async with make_sandbox("local", workers=workers) as sandbox:
        await asyncio.gather(*(sandbox.run_plot(code, {"data.csv": DATA_CSV}) for code in codes[:2 * workers]))
        started = time.perf_counter()
        runs = await asyncio.gather(*(sandbox.run_plot(code, {"data.csv": DATA_CSV}) for code in codes))
        elapsed = time.perf_counter() - started
    if not all(run.ok for run in runs):
        raise RuntimeError("a batch run failed")
    return {"workers": workers, "jobs": jobs, "plots_per_s": round(jobs / elapsed, 2)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.plots", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/bench-plots", help="output folder for plots.json")
    ap.add_argument("--rounds", type=int, default=5, help="rounds over the script set")
    ap.add_argument("--seed", type=int, default=0, help="seed for the order of ways within a script")
    ap.add_argument("--batch", type=int, default=60, help="runs submitted at once for the batch view (0: skip it)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    measured = asyncio.run(measure(args.rounds, not args.no_progress, args.seed))
    headline = summarize(measured)
    headline["arrivals_median_ms"] = asyncio.run(arrivals(max(1, args.rounds // 2)))
    if args.batch:
        headline["batch"] = asyncio.run(batch(args.batch))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {**headline, "rounds": args.rounds, "scripts": sorted(SCRIPTS),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
              "isolation": measured["isolation"], "samples_ms": measured["samples_ms"]}
    (out / "plots.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({"plots_json": str(out / "plots.json"), **headline}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
