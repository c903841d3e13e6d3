"""`aesenv data prompts`: RL prompts the way AesCoder made them, terse page descriptions
(WebSight-style captions) rewritten into 40–60-word user instructions that name a category and
describe purpose, content, features and interactions without prescribing the layout.

Input: JSONL rows `{id, description}` (or `text` / `prompt`). Output: `tasks.jsonl` (Task rows
with the category the model chose; what `load_tasks` and `train.data` read), `rejected.jsonl`
(rows whose rewrite never met the bounds, with why) and `summary.json`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from tqdm import tqdm

from aesenv.data.common import Stage, make_client, usage_summary
from aesenv.jsonl import read_jsonl
from aesenv.llm.client import ModelError
from aesenv.tasks import Category, Task

MIN_WORDS, MAX_WORDS = 40, 60
TEXT_KEYS = ("description", "text", "prompt")


class Rewrite(BaseModel):
    category: str
    instruction: str


def check_rewrite(rewrite: Rewrite) -> None:
    """The bounds a rewrite must meet (the client retries an answer that misses them)."""
    Category.parse(rewrite.category)
    words = len(rewrite.instruction.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        raise ValueError(f"the instruction has {words} words, not {MIN_WORDS}-{MAX_WORDS}")


def rewrite_messages(description: str) -> list[dict]:
    categories = ", ".join(c.value for c in Category)
    return [{"role": "system", "content": "You turn short descriptions of web pages into requests a user "
                                          "would send to a front-end developer."},
            {"role": "user", "content": (
                f"Description: {description}\n\nRewrite it as one request of {MIN_WORDS} to {MAX_WORDS} words in "
                "a user's voice. Say what the page is for, what it shows, which features it has and how it "
                "responds to the visitor; do not prescribe the layout (no columns, grids or positions). Pick "
                f"its category from: {categories}. Answer with JSON: "
                "{\"category\": \"...\", \"instruction\": \"...\"}.")}]


@dataclass
class PromptDataConfig:
    out: Path
    source: str  # JSONL of terse descriptions
    model: str
    base_url: str | None = None
    concurrency: int = 4
    progress: bool = True


def _description(row: dict[str, Any], where: str) -> str:
    for key in TEXT_KEYS:
        if isinstance(row.get(key), str) and row[key].strip():
            return row[key].strip()
    raise ValueError(f"{where}: no description (expected one of {list(TEXT_KEYS)})")


async def build_prompt_data(config: PromptDataConfig) -> dict[str, Any]:
    rows = [(str(row.get("id", i)), _description(row, where)) for i, (where, row) in enumerate(read_jsonl(config.source))]
    config.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    writer = make_client(config.model, config.base_url, temperature=0.7, max_tokens=512)
    tasks, rejected = Stage(config.out / "tasks.jsonl"), Stage(config.out / "rejected.jsonl")
    done = {r["id"] for r in tasks.rows} | {r["id"] for r in rejected.rows}
    slots = asyncio.Semaphore(config.concurrency)
    bar = tqdm(total=len(rows), initial=len(done), desc="prompts", unit="row", disable=not config.progress)
    try:
        async def one(row_id: str, description: str) -> None:
            async with slots:
                try:
                    reply = await writer.complete_json(rewrite_messages(description), Rewrite,
                                                       validate=check_rewrite, cache=False)
                except ModelError as exc:
                    rejected.add([{"id": row_id, "description": description, "why": str(exc)[:300]}])
                else:
                    task = Task(id=row_id, prompt=reply.value.instruction.strip(), category=reply.value.category,
                                source="aesenv-data")
                    tasks.add([task.model_dump(mode="json")])
            bar.update(1)

        await asyncio.gather(*(one(i, d) for i, d in rows if i not in done))
    finally:
        bar.close()
        await writer.close()
    summary = {"counts": {"descriptions": len(rows), "tasks": len(tasks.rows), "rejected": len(rejected.rows)},
               **usage_summary([writer]), "wall_s": round(time.perf_counter() - start, 2)}
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary
