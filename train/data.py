"""Build veRL parquet datasets from aesenv task sources.

    python -m train.data --tasks builtin:web --out data/web
    python -m train.data --tasks opendesign:all_prompt.jsonl --out data/od --val-fraction 0.05
    python -m train.data --tasks pandasplotbench:ppb.jsonl --out data/ppb --multi-turn
    python -m train.data --tasks opendesign:all_prompt.jsonl --sft answers.jsonl --out data/sft

Each row: `prompt` (chat messages), `data_source` (`aesenv/<kind>`), `reward_model.ground_truth`
(empty: the reward comes from rendering, not from a reference answer), `extra_info` with the
task id, the env id and the whole task as JSON (so a reward worker needs no task files), and
`agent_name` (`single_turn_agent`, or `aesenv_refine` with `--multi-turn`). A single-turn task with
a reference its kind shows the policy (AesCode's artboards) also carries the picture, in veRL's
multimodal row format (`images`, and `<image>` in the user turn), for a VL policy.

With `--sft ANSWERS` the rows are for Stage-I SFT (`train/config/sft_stage1.yaml`): `messages`
(the kind's system prompt, the instruction, and the answer for that task id from ANSWERS, in the
layouts the replay policy reads) plus the same `extra_info`; tasks with no answer are left out
and counted.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from aesenv.kinds import kind_of
from aesenv.tasks import Task, load_tasks

SINGLE_TURN_AGENT = "single_turn_agent"
IMAGE_PLACEHOLDER = "<image>"  # where veRL's RLHFDataset puts a row's image
REFINE_AGENT = "aesenv_refine"


def chat_prompt(task: Task) -> list[dict[str, str]]:
    """The single-turn chat prompt: the kind's system prompt and its single-turn request."""
    return kind_of(task).chat_prompt(task)


def to_row(task: Task, index: int, *, multi_turn: bool, reference_png: bytes | None = None) -> dict[str, Any]:
    """One RL row. With `reference_png` (a single-turn task whose kind shows its reference), the
    user turn carries it in veRL's multimodal format: an `<image>` placeholder in the text and
    the picture in `images` (`RLHFDataset` puts it in place for a VL policy's processor)."""
    kind = kind_of(task)
    prompt = chat_prompt(task)
    row: dict[str, Any] = {
        "data_source": f"aesenv/{task.kind}",
        "prompt": prompt,
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": ""},
        "extra_info": {"index": index, "task_id": task.id, "env_id": kind.env_id("refine" if multi_turn else "single"),
                       "category": task.category.value, "task": task.model_dump_json()},
        "agent_name": REFINE_AGENT if multi_turn else SINGLE_TURN_AGENT,
    }
    if reference_png is not None:
        caption = f"\n\n{kind.asking.reference_caption}" if kind.asking.reference_caption else ""
        prompt[-1] = {**prompt[-1], "content": f"{prompt[-1]['content']}{caption}\n{IMAGE_PLACEHOLDER}"}
        row["images"] = [{"bytes": reference_png}]
    return row


def wants_reference(task: Task, multi_turn: bool) -> bool:
    """A single-turn row carries the task's reference when its kind shows it to the policy (the
    refine envs attach it to their first turn themselves)."""
    return not multi_turn and kind_of(task).asking.shows_reference_for(task)


async def reference_pictures(tasks: list[Task]) -> dict[str, bytes]:
    """Each task's reference as the policy sees it (`Kind.reference`: the picture as given, or the
    reference page's first screen at the canvas, rendered by the hermetic renderer)."""
    from aesenv.rewards import RewardPipeline

    pictures: dict[str, bytes] = {}
    async with RewardPipeline() as pipeline:
        for task in tasks:
            png, _ = await kind_of(task).reference(pipeline.backends, task)
            if png is None:
                raise RuntimeError(f"task {task.id}: its reference could not be rendered")
            pictures[task.id] = png
    return pictures


def sft_row(task: Task, answer: str, index: int) -> dict[str, Any]:
    """One supervised example: the single-turn chat prompt and the answer as the assistant turn."""
    return {"messages": [*chat_prompt(task), {"role": "assistant", "content": answer}],
            "extra_info": {"index": index, "task_id": task.id, "category": task.category.value}}


def split(tasks: list[Task], val_fraction: float, seed: int) -> tuple[list[Task], list[Task]]:
    """A seeded shuffle, then the first `val_fraction` (at least one task) as validation."""
    if not 0 <= val_fraction < 1:
        raise ValueError("val_fraction must be in [0, 1)")
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    n_val = max(1, round(len(shuffled) * val_fraction)) if val_fraction > 0 and len(shuffled) > 1 else 0
    return shuffled[n_val:], shuffled[:n_val]


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)


def build(spec: str, out: Path, *, multi_turn: bool = False, val_fraction: float = 0.1, seed: int = 0,
          sft_answers: str | None = None) -> dict[str, int]:
    """Write `out/train.parquet` and `out/test.parquet`; returns the row counts (with `sft_answers`,
    also how many tasks had no answer)."""
    tasks = load_tasks(spec)
    counts: dict[str, int] = {}
    answers: dict[str, str] = {}
    if sft_answers is not None:
        from policies.replay import load_answers

        answers = load_answers(sft_answers)
        counts["no_answer"] = sum(t.id not in answers for t in tasks)
        tasks = [t for t in tasks if t.id in answers]
        if not tasks:
            raise ValueError(f"{sft_answers}: no answer matches a task id of {spec}")
    train, val = split(tasks, val_fraction, seed)
    pictures: dict[str, bytes] = {}
    if sft_answers is None and any(wants_reference(t, multi_turn) for t in tasks):
        import asyncio

        pictures = asyncio.run(reference_pictures([t for t in tasks if wants_reference(t, multi_turn)]))
        counts["with_image"] = len(pictures)
    for name, part in (("train", train), ("test", val or train)):
        rows = [sft_row(t, answers[t.id], i) if sft_answers is not None
                else to_row(t, i, multi_turn=multi_turn, reference_png=pictures.get(t.id))
                for i, t in enumerate(part)]
        write_parquet(rows, out / f"{name}.parquet")
        counts[name] = len(part)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", required=True, help="builtin:web, builtin:plot, opendesign:PATH, "
                        "pandasplotbench:PATH, jsonl:PATH or a path")
    parser.add_argument("--out", required=True, type=Path, help="folder for train.parquet and test.parquet")
    parser.add_argument("--multi-turn", action="store_true", help="rows for the aesenv_refine agent loop")
    parser.add_argument("--sft", metavar="ANSWERS", help="Stage-I SFT rows: chat messages with each task's answer "
                        "from this file (OpenDesign model_answer or {id, answer} JSONL)")
    parser.add_argument("--val-fraction", type=float, default=0.1,
                        help="share held out as test.parquet (0: test.parquet repeats train)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.sft and args.multi_turn:
        parser.error("--sft rows are single-turn; drop --multi-turn")
    counts = build(args.tasks, args.out, multi_turn=args.multi_turn, val_fraction=args.val_fraction, seed=args.seed,
                   sft_answers=args.sft)
    print(json.dumps({"out": str(args.out), **counts}))


if __name__ == "__main__":
    main()
