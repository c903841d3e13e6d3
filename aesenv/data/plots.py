"""`aesenv data plot`: AesCoder's plot split, plotting code regenerated for given data and
instructions and kept only when it works.

For each plot task (data files and an instruction, e.g. `pandasplotbench:F`), the model writes a
script (the plot kind's prompt); the script runs in the sandbox through the pipeline, and is kept
when the run finished, drew a usable figure, imported an allowed plotting library
(matplotlib, seaborn or plotly) and no other one. Writes `answers.jsonl`, `kept.jsonl`
(`{id, answer}`: what `train.data --sft` reads), `tasks.jsonl` (what `load_tasks` reads) and
`summary.json`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from aesenv.data.common import Stage, make_client, usage_summary
from aesenv.kinds.plot.kind import PLOT
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.tasks import Task, load_tasks

PLOTTING = frozenset({"matplotlib", "seaborn", "plotly"})
# Plotting libraries a kept script must not use: the split teaches the three above.
OTHER_PLOTTING = frozenset({"bokeh", "altair", "plotnine", "pygal", "holoviews", "hvplot", "pyecharts", "vega"})


@dataclass
class PlotDataConfig:
    out: Path
    tasks: str  # a task spec of plot tasks, e.g. pandasplotbench:ppb.jsonl
    model: str
    base_url: str | None = None
    sandbox: str = "local"
    concurrency: int = 2
    progress: bool = True


def keep_reason(record: RewardRecord) -> str:
    """'' when the script is kept, else why not."""
    execution = record.channels.get("execution")
    if record.status != "ok" or execution is None:
        return "not scored (our side failed)"
    if execution.raw != 1:
        return execution.payload.get("reason", "failed execution")
    imported = set(execution.payload.get("imported", []))
    if imported & OTHER_PLOTTING:
        return f"uses {sorted(imported & OTHER_PLOTTING)}"
    if not imported & PLOTTING:
        return "no matplotlib, seaborn or plotly"
    return ""


async def build_plot_data(config: PlotDataConfig) -> dict[str, Any]:
    tasks = [t for t in load_tasks(config.tasks) if t.kind == "plot"]
    if not tasks:
        raise ValueError(f"{config.tasks}: no plot tasks")
    config.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    writer = make_client(config.model, config.base_url, temperature=0.0, max_tokens=4096)
    answers, kept, verdicts = (Stage(config.out / f"{n}.jsonl") for n in ("answers", "kept", "verdicts"))
    asked = {r["id"] for r in answers.rows}
    judged = {r["id"] for r in verdicts.rows}
    slots = asyncio.Semaphore(config.concurrency)
    bar = tqdm(total=len(tasks), initial=len(judged), desc="plots", unit="task", disable=not config.progress)
    try:
        async with RewardPipeline(PipelineConfig(channels=["execution"], sandbox=config.sandbox)) as pipeline:
            async def one(task: Task) -> None:
                async with slots:
                    if task.id not in asked:
                        try:
                            reply, _ = await writer.complete_chat(PLOT.chat_prompt(task))
                            answers.add([{"id": task.id, "answer": reply.get("content") or "", "error": ""}])
                        except Exception as exc:  # noqa: BLE001 - one item's failure is recorded
                            answers.add([{"id": task.id, "answer": "", "error": f"{type(exc).__name__}: {exc}"[:300]}])
                    answer = next(r for r in reversed(answers.rows) if r["id"] == task.id)["answer"]
                    record = (await pipeline.score(task, answer)).record if answer else None
                why = keep_reason(record) if record is not None else "no answer"
                verdicts.add([{"id": task.id, "kept": not why, "why": why}])
                if not why:
                    kept.add([{"id": task.id, "answer": answer}])
                bar.update(1)

            await asyncio.gather(*(one(t) for t in tasks if t.id not in judged))
    finally:
        bar.close()
        await writer.close()
    kept_ids = {r["id"] for r in kept.rows}
    (config.out / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks if t.id in kept_ids),
                                            encoding="utf-8")
    summary = {"counts": {"tasks": len(tasks), "answers": len(answers.rows), "kept": len(kept.rows)},
               "dropped": {r["id"]: r["why"] for r in verdicts.rows if not r["kept"]},
               **usage_summary([writer]), "wall_s": round(time.perf_counter() - start, 2)}
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary
