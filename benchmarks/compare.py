"""`aesenv bench compare DIR_A DIR_B [--out FILE]`: per-category deltas (B − A) between two runs of
`bench opendesign` or `bench pandasplotbench`, with seeded bootstrap confidence intervals.

Items are paired by task id when both runs scored the same prompts (resampling items keeps each
pair together, which removes prompt difficulty from the noise); runs over different prompts are
compared unpaired. Only items whose scoring succeeded count (infra failures are left out, as in
the summaries). Metrics: static total (0–100), good (1 if the total passes the benchmark's
threshold), interactive (scored interactions, pages where it applies), reward (paper Eq. 1).
The table is printed and the full result written as JSON (default `DIR_B/compare.json`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aesenv.rewards import RewardRecord
from aesenv.runner import GOOD_THRESHOLD
from benchmarks.stats import DEFAULT_RESAMPLES, Interval, diff_ci, mean_ci

Metric = Callable[[RewardRecord], float | None]
OVERALL = "overall"


def _channel_raw(name: str) -> Metric:
    def value(record: RewardRecord) -> float | None:
        channel = record.channels.get(name)
        return float(channel.raw) if channel is not None and channel.counts else None
    return value


def metrics_for(benchmark: str) -> dict[str, Metric]:
    static = _channel_raw("static")
    strict = benchmark == "pandasplotbench"  # "> 75" there, ">= 75" in OpenDesign

    def good(record: RewardRecord) -> float | None:
        total = static(record)
        return None if total is None else float(total > GOOD_THRESHOLD if strict else total >= GOOD_THRESHOLD)

    return {"static_total": static, "good": good, "interactive": _channel_raw("interactive"),
            "reward": lambda r: r.reward}


def load_run(directory: str | Path) -> tuple[dict[str, RewardRecord], dict[str, Any]]:
    """The run's scored records by task id (a rerun's later line wins) and its summary."""
    root = Path(directory)
    path = root / "records.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{root} is not a benchmark run (no records.jsonl)")
    records: dict[str, RewardRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = RewardRecord.model_validate_json(line)
            records[record.task_id] = record
    summary_path = root / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    return {k: r for k, r in records.items() if r.status == "ok"}, summary


def compare(dir_a: str | Path, dir_b: str | Path, *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> dict[str, Any]:
    a, summary_a = load_run(dir_a)
    b, summary_b = load_run(dir_b)
    benchmark_a, benchmark_b = summary_a.get("benchmark", "opendesign"), summary_b.get("benchmark", "opendesign")
    if benchmark_a != benchmark_b:
        raise ValueError(f"cannot compare a {benchmark_a} run with a {benchmark_b} run")
    shared = sorted(a.keys() & b.keys())
    paired = bool(shared)
    categories = sorted({r.category for r in (*a.values(), *b.values())})
    result: dict[str, Any] = {"a": str(dir_a), "b": str(dir_b), "policy_a": summary_a.get("policy"),
                              "policy_b": summary_b.get("policy"), "benchmark": benchmark_a, "paired": paired,
                              "n_a": len(a), "n_b": len(b), "n_shared": len(shared), "seed": seed, "resamples": resamples, "metrics": {}}
    for name, metric in metrics_for(benchmark_a).items():
        rows: dict[str, Any] = {}
        for category in [OVERALL, *categories]:
            def in_scope(record: RewardRecord) -> bool:
                return category == OVERALL or record.category == category

            if paired:
                pairs = [(metric(a[i]), metric(b[i])) for i in shared if in_scope(a[i])]
                pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
                xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
            else:
                xs = [v for r in a.values() if in_scope(r) and (v := metric(r)) is not None]
                ys = [v for r in b.values() if in_scope(r) and (v := metric(r)) is not None]
            if not xs and not ys:
                continue
            rows[category] = {"a": mean_ci(xs, seed=seed, resamples=resamples).model_dump(),
                              "b": mean_ci(ys, seed=seed, resamples=resamples).model_dump(),
                              "delta": diff_ci(xs, ys, paired=paired, seed=seed, resamples=resamples).model_dump()}
        result["metrics"][name] = rows
    return result


def format_table(result: dict[str, Any]) -> str:
    lines = [f"B − A: {result['policy_b']} ({result['b']}) vs {result['policy_a']} ({result['a']}); "
             f"{'paired over ' + str(result['n_shared']) + ' shared items' if result['paired'] else 'unpaired'}, "
             f"95% bootstrap CI (seed {result['seed']})",
             f"{'category':<20} {'metric':<13} {'A':>8} {'B':>8}  delta [CI]"]
    for name, rows in result["metrics"].items():
        for category, row in rows.items():
            mean_a, mean_b = row["a"]["mean"], row["b"]["mean"]
            lines.append(f"{category:<20} {name:<13} {'–' if mean_a is None else f'{mean_a:8.2f}':>8} "
                         f"{'–' if mean_b is None else f'{mean_b:8.2f}':>8}  {Interval(**row['delta'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aesenv bench compare", description=__doc__.split("\n\n")[0])
    p.add_argument("dir_a")
    p.add_argument("dir_b")
    p.add_argument("--out", help="JSON file (default DIR_B/compare.json)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    args = p.parse_args(argv)
    result = compare(args.dir_a, args.dir_b, seed=args.seed, resamples=args.resamples)
    out = Path(args.out) if args.out else Path(args.dir_b) / "compare.json"
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(format_table(result))
    print(f"wrote {out}")
    return 0
