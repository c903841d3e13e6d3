"""PandasPlotBench runner: `aesenv bench pandasplotbench --data FILE_OR_DIR --policy SPEC --out DIR`.

The policy writes a plotting script per row; the script runs in the sandbox next to the row's
`data.csv`; the plot judge scores its figures (offline metrics by default, a VLM with
`--judge openai:<model>`, which also sees the ground-truth plot). Resumable and refused on a
changed config exactly like `aesenv bench opendesign` (same runner).

Data: the JSONL export of the dataset (`id`, `data_csv`, `task__plot_description`, optional
`task__plot_style`, `code_data`, `plots_gt`), one file or a directory of `*.jsonl` files.

`DIR/summary.json` adds PandasPlotBench's three numbers to the runner's summary:
  error_rate (share of scored rows whose script failed or drew no figure with an allowed library),
  judge_score_mean (0–100), good_rate (share with judge score > 75, strictly, as the benchmark
  defines it); infra failures (sandbox or judge on our side) are counted and left out.
`DIR/report.html` shows each row's figure beside its ground-truth plot.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import json
import statistics
from pathlib import Path
from typing import Any

from aesenv.rewards import PipelineConfig, RewardRecord
from aesenv.runner import run_and_report
from aesenv.tasks import Task
from aesenv.tasks.loaders import load_pandasplotbench
from benchmarks.runs import add_judge_args, add_run_arguments, judge_options, opened_policy, parse_checked

GOOD_ABOVE = 75.0


def load_rows(data: str) -> list[Task]:
    """Tasks from one JSONL file or every `*.jsonl` in a directory (sorted, ids must not repeat)."""
    path = Path(data)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no *.jsonl files in {data}")
    tasks = [t for f in files for t in load_pandasplotbench(str(f))]
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{data}: duplicate row ids across files")
    return tasks


def reference_url(reference: str) -> str | None:
    """The ground truth as a data URL for the report; None when it is not base64 image data."""
    if reference.startswith("data:"):
        return reference
    try:
        head = base64.b64decode(reference[:24], validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = "image/png" if head.startswith(b"\x89PNG") else "image/jpeg" if head.startswith(b"\xff\xd8") else None
    return f"data:{mime};base64,{reference}" if mime else None


def plot_metrics(records: list[RewardRecord]) -> dict[str, Any]:
    """Error rate and mean judge score under PandasPlotBench's names (good rate: `is_good`)."""
    ok = [r for r in records if r.status == "ok"]
    ran = [r.channels["execution"] for r in ok if "execution" in r.channels and r.channels["execution"].counts]
    judged = [float(r.channels["static"].raw) for r in ok if "static" in r.channels and r.channels["static"].counts]
    return {"benchmark": "pandasplotbench",
            "error_rate": round(sum(e.raw != 1 for e in ran) / len(ran), 4) if ran else None,
            "judge_score_mean": round(statistics.fmean(judged), 4) if judged else None}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aesenv bench pandasplotbench", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="PandasPlotBench JSONL file or a directory of them")
    p.add_argument("--policy", default="plot-template", help="plot-template | openai:<model> | hf:<path> | replay:<answers>")
    add_judge_args(p)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--sandbox", default="local", choices=["local", "docker"])
    add_run_arguments(p)
    return p


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tasks = load_rows(args.data)[: args.limit or None]
    config = PipelineConfig(judge=args.judge, judge_options=judge_options(args), sandbox=args.sandbox)
    identity = {"benchmark": "pandasplotbench", "policy": args.policy, "pipeline": config.model_dump(mode="json")}
    references = {t.id: url for t in tasks if t.reference_image and (url := reference_url(t.reference_image))}
    async with opened_policy(args.policy) as policy:
        return await run_and_report(
            tasks, policy, args.out, config=config, concurrency=args.concurrency, progress=not args.no_progress,
            title=f"PandasPlotBench: {args.policy}, judge {args.judge}", identity=identity,
            is_good=lambda score: score > GOOD_ABOVE, extend=plot_metrics, references=references,
            ray=args.ray, ray_actors=args.ray_actors)


def main(argv: list[str] | None = None) -> int:
    args = parse_checked(build_parser(), argv)
    summary = asyncio.run(run(args))
    print(json.dumps({k: summary.get(k) for k in ("n", "n_infra_error", "error_rate", "judge_score_mean",
                                                   "good_rate", "wall_s")}))
    print(f"wrote {args.out}/summary.json and {args.out}/report.html")
    return 0 if summary["n"] else 3
