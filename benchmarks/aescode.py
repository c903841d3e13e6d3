"""AesCode evaluation runner: `aesenv bench aescode --tasks builtin:aescode --policy SPEC --out DIR`.

Scores as AesCode reports them (§3.4): each prompt is answered `--rollouts` times (three in the
paper) and its scores are the mean over those rollouts. Rule is the mean of the Text, Boundary
and Table/Chart verifiers; Visual is the mean of the VLM checklist's Content, Layout and Style;
Overall is the mean of the two. VGR is a training channel and is not run here; Execution (the
page renders, AesCode's s_exec) is reported beside them as a diagnostic and enters no score.
A rollout whose page did not render stays in the denominator with 0 for Rule, Visual and
Overall; a rollout our side failed to score (`infra_error`) is left out and counted.

The checklist needs a VLM judge (the default; `--judge offline` masks it, so Visual is None).
A task whose kind shows its reference picture is asked with it beside the request, as trained.
Rollout k of task T is recorded as `T#k` (a replay answers file names its answers that way).

`DIR/summary.json` adds `aescode`: {rollouts, prompts, rule, visual, overall, execution (share
of scored rollouts that rendered), render_failures, infra_excluded, per_prompt {id: {rule,
visual, overall, rollouts}}} to the runner's summary; `DIR/records.jsonl` has one record per rollout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from typing import Any

from aesenv.rewards import PipelineConfig, RewardRecord
from aesenv.kinds.web.aescode import PUBLISHED_RULE, aescode_scores
from aesenv.runner import rounded_mean, run_and_report
from aesenv.tasks import Task, load_tasks
from benchmarks.runs import add_judge_args, add_run_arguments, judge_options, opened_policy, parse_checked

ROLLOUTS = 3  # AesCode averages three rollouts per prompt
EXECUTION = "renderable"  # s_exec: a diagnostic, in no score
CHANNELS = [EXECUTION, *PUBLISHED_RULE, "checklist"]
ROLLOUT_MARK = "#"
SCORES = ("rule", "visual", "overall")


def rollout_tasks(tasks: list[Task], rollouts: int) -> list[Task]:
    """Each task `rollouts` times, as `T#1` … `T#k` (the runner keys records by task id)."""
    return [t.model_copy(update={"id": f"{t.id}{ROLLOUT_MARK}{k}"}) for t in tasks for k in range(1, rollouts + 1)]


def prompt_of(record: RewardRecord) -> str:
    return record.task_id.rsplit(ROLLOUT_MARK, 1)[0]


def rendered(record: RewardRecord) -> bool:
    execution = record.channels.get(EXECUTION)
    return execution is not None and execution.counts and execution.score == 1.0


def rollout_scores(record: RewardRecord) -> dict[str, float | None]:
    """One scored rollout's Rule / Visual / Overall; a page that did not render scores 0 on each."""
    if not rendered(record):
        return dict.fromkeys(SCORES, 0.0)
    return aescode_scores(record.channels) or dict.fromkeys(SCORES)


def aescode_metrics(records: list[RewardRecord]) -> dict[str, Any]:
    """Per prompt the mean over its scored rollouts, then the mean over prompts."""
    scored = [r for r in records if r.status == "ok"]
    by_prompt: dict[str, list[dict[str, float | None]]] = defaultdict(list)
    for record in scored:
        by_prompt[prompt_of(record)].append(rollout_scores(record))
    per_prompt = {prompt: {**{s: rounded_mean([r[s] for r in rows if r[s] is not None]) for s in SCORES},
                           "rollouts": len(rows)} for prompt, rows in sorted(by_prompt.items())}
    return {
        "rollouts": max((len(rows) for rows in by_prompt.values()), default=0),
        "prompts": len(per_prompt),
        **{s: rounded_mean([p[s] for p in per_prompt.values() if p[s] is not None]) for s in SCORES},
        "execution": rounded_mean([float(rendered(r)) for r in scored]),
        "render_failures": sum(not rendered(r) for r in scored),
        "infra_excluded": len(records) - len(scored),
        "per_prompt": per_prompt,
    }


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aesenv bench aescode", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default="builtin:aescode", help="AesCode-style tasks (requirements and checklists)")
    p.add_argument("--policy", default="template", help="template | openai:<model> | hf:<path> | replay:<answers.jsonl>")
    add_judge_args(p)
    p.add_argument("--rollouts", type=int, default=ROLLOUTS, help=f"answers per prompt, averaged (paper: {ROLLOUTS})")
    p.add_argument("--limit", type=int, default=0, help="first N prompts")
    add_run_arguments(p)
    return p


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.rollouts < 1:
        raise ValueError("--rollouts must be at least 1")
    tasks = load_tasks(args.tasks)[: args.limit or None]
    if not tasks:
        raise ValueError(f"no tasks in {args.tasks}")
    config = PipelineConfig(judge=args.judge, judge_options=judge_options(args), channels=CHANNELS, reward="aescode")
    identity = {"benchmark": "aescode", "policy": args.policy, "rollouts": args.rollouts,
                "pipeline": config.model_dump(mode="json")}
    async with opened_policy(args.policy) as policy:
        return await run_and_report(
            rollout_tasks(tasks, args.rollouts), policy, args.out, config=config, concurrency=args.concurrency,
            progress=not args.no_progress, title=f"AesCode: {args.policy}, judge {args.judge}", identity=identity,
            extend=lambda records: {"benchmark": "aescode", "tasks": args.tasks, "judge": args.judge,
                                    "aescode": aescode_metrics(records)},
            ray=args.ray, ray_actors=args.ray_actors)


def main(argv: list[str] | None = None) -> int:
    args = parse_checked(build_parser(), argv)
    summary = asyncio.run(run(args))
    report = summary["aescode"]
    print(json.dumps({k: report[k] for k in ("prompts", "rollouts", "rule", "visual", "overall", "execution",
                                            "render_failures", "infra_excluded")}))
    print(f"wrote {args.out}/summary.json and {args.out}/report.html")
    return 0 if report["prompts"] else 3
