"""OpenDesign benchmark runner: `aesenv bench opendesign --prompts all_prompt.jsonl --policy SPEC --out DIR`.

One command does what the official scripts do in five steps (generate, render, static judge,
web-agent interaction, tally): the policy answers each prompt (or drives a refine episode with
`--mode refine`), the one `RewardPipeline` renders and scores it, concurrently with a bound, with
a progress bar. A rerun into the same DIR skips finished prompts; a rerun with another policy,
judge or mode is refused (see `aesenv.runner.claim_run`). VLM answers are cached by content hash
(the judge client's cache), so a rescore costs nothing for pages already judged.

Prompts: OpenDesign's `all_prompt.jsonl` (`{"id", "prompt", "category"}` per line).
Policies: `template`, `openai:<model>` (OPENAI_BASE_URL for vLLM or a gateway, OPENAI_API_KEY),
`hf:<path>`, `replay:<answers.jsonl>`. Replay reads the official `model_answer` layout
(`{"question_id", "answer_id", "model_id", "choices": [{"index", "turns": [{"content", "token_len"}]}]}`):
`question_id` (or `id`) and `choices[0].turns[-1].content`; the other fields are ignored.

`DIR/summary.json` (all means over items whose scoring succeeded; infra failures are counted in
`n_infra_error`/`failures` and left out, never averaged in as 0):
  n, n_total, n_infra_error; static_total_mean, alignment_mean (/40), aesthetics_mean (/30),
  structure_mean (/30); good_rate (share with static total >= 75); interactive_mean (scored
  interactions per page, 0..budget, over pages where interaction applies); execution_pass_rate;
  reward_mean (paper Eq. 1), normalized_mean; per_category {category: the same block};
  failures {kind: count}; channel_infra_errors {channel: count}; judge_usage {requests,
  prompt_tokens, completion_tokens, cache_hits, retries, cost_usd}; judge_variance (with
  --judge-samples k > 1: per_item and overall mean with a 95% bootstrap interval, and the mean
  within-item standard deviation); wall_s, policy, judge, mode, provenance.
`means` reports the headline numbers two ways, each labelled: `all_cases` puts every prompt in
the denominator (a masked interactive channel and an item still failing on our side after one
retry count 0; those items are listed), and `official` follows the official `show_result.py`
(judge failures and pages whose static total is 0 are left out of the static mean and the good
rate; the interactive mean sums each page's scored interactions over all pages, failures 0), so
numbers compare with published tables.
`DIR/report.html`: sortable table, per-category table, screenshot gallery with per-item evidence.
`DIR/records.jsonl`: one `RewardRecord` per prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path
from typing import Any

from aesenv.render import RenderConfig
from aesenv.rewards import PipelineConfig, RewardRecord
from aesenv.jsonl import dumps
from aesenv.rewards.service import add_ray_arguments
from aesenv.runner import good_rate, load_records, rounded_mean, run_and_report
from aesenv.tasks import Category, Task
from aesenv.tasks.loaders import load_opendesign
from benchmarks.stats import mean_ci
from benchmarks.runs import add_judge_args, judge_options, opened_policy, parse_checked

DEFAULT_PROMPTS = "benchmarks/data/opendesign_slice.jsonl"


def judge_samples(record: RewardRecord) -> list[float]:
    """The k sample totals the VLM judge gave one page (empty for one sample or the offline judge)."""
    static = record.channels.get("static")
    samples = ((static.payload.get("evidence") or {}).get("samples") or []) if static else []
    return [float(s["alignment"]) + float(s["aesthetics"]) + float(s["structure"]) for s in samples]


def judge_variance(records: list[RewardRecord]) -> dict[str, Any]:
    """Per item: mean of the k sample totals with a bootstrap interval; overall: the mean of the
    item means with an interval over items (what a reader should quote as "± judge noise")."""
    per_item = {r.task_id: s for r in records if r.status == "ok" and len(s := judge_samples(r)) > 1}
    if not per_item:
        return {}
    return {
        "samples": max(len(s) for s in per_item.values()),
        "per_item": {task_id: mean_ci(s).model_dump() for task_id, s in per_item.items()},
        "overall": mean_ci([statistics.fmean(s) for s in per_item.values()]).model_dump(),
        "mean_within_item_sd": round(statistics.fmean(statistics.stdev(s) for s in per_item.values()), 4),
    }


def _raw(record: RewardRecord, channel: str) -> float | None:
    result = record.channels.get(channel)
    return float(result.raw) if result is not None and result.counts else None


def opendesign_means(records: list[RewardRecord]) -> dict[str, Any]:
    """The static and interactive means over all cases and with the official scripts' exclusions."""
    static = [_raw(r, "static") for r in records]
    interactive = [_raw(r, "interactive") or 0.0 for r in records]
    every = [t or 0.0 for t in static]
    official = [t for t in static if t]  # None (judge failed) and 0 are out of show_result.py's denominator
    return {
        "all_cases": {"n": len(records), "static_total_mean": rounded_mean(every), "good_rate": good_rate(every),
                      "interactive_mean": rounded_mean(interactive),
                      "counted_as_zero": sorted(r.task_id for r in records if r.status == "infra_error"),
                      "semantics": "every prompt counts; masked interactive and items failing on our side "
                                   "(after one retry) count 0"},
        "official": {"n_static": len(official), "static_total_mean": rounded_mean(official),
                     "good_rate": good_rate(official), "interactive_mean": rounded_mean(interactive),
                     "semantics": "show_result.py: judge failures and static total 0 left out of the static "
                                  "mean and good rate; interactive sums per page over all pages, failures 0"},
    }


def drop_infra_records(out: Path) -> list[str]:
    """Remove the records our side failed from DIR/records.jsonl, so a rerun scores them again."""
    path = out / "records.jsonl"
    records = load_records(path)
    dropped = [task_id for task_id, r in records.items() if r.status == "infra_error"]
    if dropped:
        path.write_text("".join(dumps(r) + "\n" for r in records.values() if r.status != "infra_error"),
                        encoding="utf-8")
    return dropped


def select(tasks: list[Task], categories: list[str] | None, limit: int) -> list[Task]:
    if categories:
        wanted = {Category.parse(c) for c in categories}
        tasks = [t for t in tasks if t.category in wanted]
    return tasks[:limit] if limit else tasks


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aesenv bench opendesign", description=__doc__.split("\n\n")[0])
    p.add_argument("--prompts", default=DEFAULT_PROMPTS, help="OpenDesign all_prompt.jsonl")
    p.add_argument("--policy", default="template",
                   help="template | openai:<model> | hf:<path> | replay:<model_answer.jsonl> | repair (refine)")
    add_judge_args(p)
    p.add_argument("--interactor", help="interactive agent: offline or openai:<model> (default: follows --judge)")
    p.add_argument("--interaction-budget", type=int, default=3,
                   help="interactions scored per page (N in AesCoder's interactive count; default 3)")
    p.add_argument("--limit", type=int, default=0, help="first N prompts (after --categories)")
    p.add_argument("--categories", nargs="+", help='e.g. "Game Dev" Website')
    p.add_argument("--mode", choices=["single", "refine"], default="single")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--online", action="store_true", help="let unknown hosts through to the real network")
    add_ray_arguments(p)
    p.add_argument("--env-url", help="run every episode in envs served there (`aesenv serve`, the serving image): "
                                     "the server's pipeline scores them (its judge, not --judge)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", required=True)
    return p


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    # No execution gate: OpenDesign is evaluated with every case scored, as AesCoder evaluates it.
    return PipelineConfig(judge=args.judge, judge_options=judge_options(args), interactor=args.interactor,
                          interaction_budget=args.interaction_budget, render=RenderConfig(online=args.online))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tasks = select(load_opendesign(args.prompts), args.categories, args.limit)
    if not tasks:
        raise ValueError(f"no prompts selected from {args.prompts}")
    config = config_from_args(args)
    identity = {"benchmark": "opendesign", "policy": args.policy, "mode": args.mode,
                "pipeline": config.model_dump(mode="json")}
    if args.env_url:
        identity["env_url"] = args.env_url
    retried: list[str] = []

    def extend(records: list[RewardRecord]) -> dict[str, Any]:
        return {"benchmark": "opendesign", "prompts": args.prompts, "judge": args.judge, "retried": retried,
                "judge_variance": judge_variance(records), "means": opendesign_means(records)}

    async with opened_policy(args.policy) as policy:
        async def once() -> dict[str, Any]:
            return await run_and_report(
                tasks, policy, args.out, config=config, concurrency=args.concurrency, progress=not args.no_progress,
                title=f"OpenDesign: {args.policy} ({args.mode}), judge {args.judge}", mode=args.mode,
                identity=identity, extend=extend, ray=args.ray, ray_actors=args.ray_actors,
                env_url=args.env_url)

        summary = await once()
        retried.extend(drop_infra_records(Path(args.out)))  # our failures get one more try
        return await once() if retried else summary


def main(argv: list[str] | None = None) -> int:
    args = parse_checked(build_parser(), argv)
    summary = asyncio.run(run(args))
    print(json.dumps({k: summary.get(k) for k in ("n", "n_infra_error", "static_total_mean", "good_rate",
                                                   "interactive_mean", "wall_s")}))
    for label, block in summary["means"].items():
        print(f"  {label:<10} static={block['static_total_mean']} good={block['good_rate']} "
              f"interactive={block['interactive_mean']}  ({block['semantics']})")
    for category, block in summary["per_category"].items():
        print(f"  {category:<20} n={block['n']:<3} static={block['static_total_mean']} good={block['good_rate']} "
              f"interactive={block['interactive_mean']}")
    if summary.get("judge_variance"):
        overall = summary["judge_variance"]["overall"]
        print(f"  judge samples: mean {overall['mean']} [{overall['low']}, {overall['high']}]")
    print(f"wrote {args.out}/summary.json and {args.out}/report.html")
    return 0 if summary["n"] else 3
