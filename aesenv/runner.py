"""Run a policy over tasks through the pipeline: records, screenshots, summary, report.

Resumable: records are appended to `records.jsonl` as they finish, and a rerun skips the
task ids already there. The run's identity (policy, mode, pipeline config, each task's prompt
hash) is kept in `run.json`; a rerun with a different identity is refused rather than mixed
into the same records. Bounded concurrency, a progress bar, one pipeline for the run.

`mode="single"`: the policy answers each prompt once (`Policy.generate`). `mode="refine"`: the
policy is an agent driving a refine episode (write, render, look, edit, submit) and the final
workspace is scored; each episode's trajectory and timeline go to `episodes/<task id>/`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from tqdm import tqdm

from aesenv.envs import make_core
from aesenv.jsonl import dumps
from aesenv.kinds import KINDS, kind_of
from aesenv.llm.client import Usage, image_part
from aesenv.render.references import decode_reference
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.rewards.pipeline import Scored
from aesenv.rewards.service import RayScorer, scorer
from aesenv.tasks import Task
from aesenv.trajectory import run_episode, write_trajectory
from aesenv.policy import Agent, Policy
from aesenv.report import write_report
from aesenv.text import safe_name

GOOD_THRESHOLD = 75.0  # OpenDesign's "good rate": share of pages with static total >= 75
RunMode = Literal["single", "refine"]


class RunMismatch(ValueError):
    """The output directory holds a run made with a different policy, config or prompts."""


def load_records(path: Path, model: type[BaseModel] = RewardRecord) -> dict[str, Any]:
    """The records of a run's `records.jsonl` (`model`s with a `task_id`) by task id, the latest
    line of a task winning (a rerun appends); none when the file is missing."""
    done: dict[str, Any] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = model.model_validate_json(line)
                done[record.task_id] = record
    return done


def _prompt_hash(task: Task) -> str:
    content = task.model_dump_json(include={"kind", "category", "prompt", "data_files", "requirements", "canvas"})
    return hashlib.sha256(content.encode()).hexdigest()[:16]


def claim_run(out: Path, identity: dict[str, Any], tasks: list[Any],
              fingerprint: Callable[[Any], str] = _prompt_hash) -> None:
    """Write `run.json`, or check a rerun against it: same identity, and no task id whose
    prompt (`fingerprint`) changed. New task ids (a larger --limit) extend the run."""
    path = out / "run.json"
    hashes = {t.id: fingerprint(t) for t in tasks}
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("identity") != identity:
            differing = sorted(k for k in {*identity, *stored.get("identity", {})}
                               if identity.get(k) != stored.get("identity", {}).get(k))
            raise RunMismatch(f"{out} holds a run with a different {', '.join(differing)}; use another --out "
                              f"(or delete {out}) instead of mixing results")
        old = stored.get("tasks", {})
        changed = sorted(i for i, h in hashes.items() if i in old and old[i] != h)
        if changed:
            raise RunMismatch(f"{out}: tasks {changed[:5]} have different prompts than in the stored run; "
                              "use another --out")
        hashes = {**old, **hashes}
    path.write_text(json.dumps({"identity": identity, "tasks": hashes}, indent=1), encoding="utf-8")


async def _answer_once(task: Task, policy: Policy, pipeline: RewardPipeline | RayScorer, _: Path) -> Scored:
    return await pipeline.score(task, await answer_with_reference(task, policy, pipeline))


async def answer_with_reference(task: Task, policy: Policy, pipeline: RewardPipeline | RayScorer) -> str:
    """The policy's single-turn answer. A task whose kind shows its reference (AesCode's
    artboards) is asked with the reference picture beside the request, through the policy's
    chat turn (`act`), as a VL policy is trained; a policy without one answers the text."""
    kind = kind_of(task)
    act = getattr(policy, "act", None)
    if act is None or not kind.asking.shows_reference_for(task):
        return await policy.generate(task)
    png = await reference_picture(task, pipeline)
    if png is None:
        return await policy.generate(task)
    caption = f"\n\n{kind.asking.reference_caption}" if kind.asking.reference_caption else ""
    reply = await act([{"role": "user", "content": [{"type": "text", "text": kind.request(task) + caption},
                                                    image_part(png)]}])
    return reply.get("content") or ""


async def reference_picture(task: Task, pipeline: Any) -> bytes | None:
    """The reference picture beside a single-turn request: the kind's, rendered by our own backends;
    with envs served elsewhere (`RemoteScorer`), the one the served env attaches to its first
    prompt (the server renders it); a given `reference_image` as is when neither is at hand."""
    backends = getattr(pipeline, "backends", None)
    if backends is not None:
        return (await kind_of(task).reference(backends, task))[0]
    remote = getattr(pipeline, "remote_env", None)
    if remote is not None:
        env = remote(task)
        try:
            _, info = await env.reset(task)
        finally:
            await env.close()
        return _first_image(info.get("messages") or [])
    return decode_reference(task.reference_image) if task.reference_image else None


def _first_image(messages: list[dict[str, Any]]) -> bytes | None:
    """The first inline image of the last user message (an OpenAI `image_url` data: URL part)."""
    user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    content = user.get("content") if user else None
    for part in content if isinstance(content, list) else []:
        url = (part.get("image_url") or {}).get("url", "") if part.get("type") == "image_url" else ""
        if url.startswith("data:") and ";base64," in url:
            return base64.b64decode(url.split(",", 1)[1])
    return None


async def _refine_episode(task: Task, policy: Policy, pipeline: RewardPipeline, episodes: Path) -> Scored:
    remote = getattr(pipeline, "remote_env", None)  # `aesenv.envs.remote.RemoteScorer`: the env is served elsewhere
    # The kind's own refine env (a project task gets the project's tools and ledger), as `gym.make` builds it.
    env = (remote(task, "refine") if remote
           else make_core(KINDS[task.kind].env_id("refine"), [task], pipeline=pipeline))
    try:
        trajectory = await run_episode(env, policy, task=task)
    finally:
        await env.close()
    write_trajectory(trajectory, episodes / safe_name(task.id))
    if trajectory.error or env.last is None:
        raise RuntimeError(trajectory.error or "the episode ended without a scored workspace")
    return env.last


EPISODES: dict[str, Callable[..., Any]] = {"single": _answer_once, "refine": _refine_episode}


async def run_episodes(tasks: list[Task], policy: Policy, out_dir: str | Path, *,
                       config: PipelineConfig | None = None, concurrency: int = 2,
                       progress: bool = True, mode: RunMode = "single",
                       identity: dict[str, Any] | None = None, ray: str | None = None,
                       ray_actors: int = 2, env_url: str | None = None) -> list[RewardRecord]:
    """`identity`: what makes two runs comparable (default: policy name, mode, pipeline config);
    a rerun into the same directory must match it. `ray` ("local" or a cluster address) scores
    on a pool of `ray_actors` Ray actors (`aesenv.rewards.service`): the records are the same, so
    a run may resume on the other path. `env_url`: every episode runs in envs served there
    (`aesenv serve`), scored by that server's pipeline (`aesenv.envs.remote.RemoteScorer`)."""
    if env_url is not None and ray is not None:
        raise ValueError("--env-url and --ray both say where episodes run: give one")
    if mode not in EPISODES:
        raise ValueError(f"unknown mode {mode!r}; available: {list(EPISODES)}")
    if mode == "refine":
        if not isinstance(policy, Agent):
            raise ValueError(f"policy {policy.name!r} answers single turns only; refine mode needs an agent "
                             "(openai:<model>, hf:<model>, repair)")
        if ray is not None:
            raise ValueError("--ray scores single answers; a refine episode drives its own pipeline and runs locally")
    config = config or PipelineConfig()
    out = Path(out_dir)
    shots = out / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    claim_run(out, identity or {"policy": policy.name, "mode": mode, "pipeline": config.model_dump(mode="json")}, tasks)
    records_path = out / "records.jsonl"
    done = load_records(records_path)
    todo = [t for t in tasks if t.id not in done]
    slots = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc="episodes", unit="page",
               disable=not progress)
    write_lock = asyncio.Lock()
    episode = EPISODES[mode]

    if env_url is not None:
        from aesenv.envs.remote import RemoteScorer

        opened: Any = RemoteScorer(env_url)
    else:
        opened = scorer(config, ray, ray_actors)
    async with opened as pipeline:
        async def one(task: Task) -> RewardRecord:
            async with slots:
                try:
                    scored = await episode(task, policy, pipeline, out / "episodes")
                except Exception as exc:  # noqa: BLE001 - one bad policy call must not end the run
                    policy_error = f"policy {policy.name} failed: {type(exc).__name__}: {exc}"
                    scored = await pipeline.score(task, "")
                else:
                    policy_error = ""
                record = scored.record
                if policy_error:  # no answer is not a bad answer: keep it out of the means
                    record = record.model_copy(update={"status": "infra_error", "reward": None,
                                                       "normalized": None, "failure": policy_error})
                png = scored.picture
                if png and not policy_error:
                    name = f"{safe_name(task.id)}.png"
                    (shots / name).write_bytes(png)
                    record.screenshot = f"screenshots/{name}"
                async with write_lock:
                    with records_path.open("a", encoding="utf-8") as fh:
                        fh.write(dumps(record) + "\n")
                bar.update(1)
                bar.set_postfix_str(f"{task.id} reward={record.reward}")
                return record

        await asyncio.gather(*(one(t) for t in todo))
    bar.close()
    final = load_records(records_path)
    return [final[t.id] for t in tasks if t.id in final]


def rounded_mean(values: list[float]) -> float | None:
    """The mean as summaries report it (4 decimals), None for no values."""
    return round(statistics.fmean(values), 4) if values else None


def record_usage(record: RewardRecord) -> list[dict[str, Any]]:
    """The model-call accounting a record carries: the VLM judge's and the VLM web agent's."""
    found = []
    for channel in record.channels.values():
        for usage in (channel.payload.get("usage"), (channel.payload.get("evidence") or {}).get("usage")):
            if isinstance(usage, dict):
                found.append(usage)
    return found


def total_usage(records: list[RewardRecord]) -> dict[str, Any]:
    """Judge requests, tokens, cache hits and dollars (when priced) over all records."""
    total = Usage()
    for record in records:
        for usage in record_usage(record):
            total.add(Usage.model_validate(usage))
    return total.model_dump()


def _at_least_good(total: float) -> bool:
    return total >= GOOD_THRESHOLD


def good_rate(totals: list[float], is_good: Callable[[float], bool] = _at_least_good) -> float | None:
    """The share of static totals in the "good" band (OpenDesign's >= 75 unless `is_good` says otherwise)."""
    return round(sum(map(is_good, totals)) / len(totals), 4) if totals else None


def _rule_shares(execution: list) -> dict[str, float]:
    """Share of linted pages that break each HTMLHint rule, most broken first: AesCoder's rule
    set fails most real model output (`tag-self-close` alone on about three pages in four), and
    a reader needs to see which rules a pass rate is made of."""
    pages = Counter(rule for e in execution for rule in e.payload.get("violations_by_rule", {}))
    return {rule: round(n / len(execution), 4) for rule, n in pages.most_common()} if execution else {}


def summarize(records: list[RewardRecord], *, wall_s: float | None = None, extra: dict[str, Any] | None = None,
              is_good: Callable[[float], bool] = _at_least_good) -> dict[str, Any]:
    """Aggregate records. Infra failures are counted and excluded, never averaged in as 0.
    `is_good` decides the good rate on a static total (OpenDesign: >= 75; PandasPlotBench: > 75)."""
    scored = [r for r in records if r.status == "ok"]

    def block(rs: list[RewardRecord]) -> dict[str, Any]:
        static = [r.channels["static"] for r in rs if "static" in r.channels and r.channels["static"].counts]
        totals = [float(s.raw) for s in static]
        execution = [r.channels["execution"] for r in rs if "execution" in r.channels and r.channels["execution"].counts]
        interactive = [r.channels["interactive"] for r in rs
                       if "interactive" in r.channels and r.channels["interactive"].counts]
        return {
            "n": len(rs),
            "reward_mean": rounded_mean([r.reward for r in rs if r.reward is not None]),
            "normalized_mean": rounded_mean([r.normalized for r in rs if r.normalized is not None]),
            "static_total_mean": rounded_mean(totals),
            **{f"{part}_mean": rounded_mean([float(s.payload[part]) for s in static if part in s.payload])
               for part in ("alignment", "aesthetics", "structure")},
            "good_rate": good_rate(totals, is_good),
            "execution_pass_rate": rounded_mean([1.0 if e.raw == 1 else 0.0 for e in execution]),
            "execution_failed_rules": _rule_shares(execution),
            "interactive_mean": rounded_mean([float(i.raw) for i in interactive]),
            "interactive_n": len(interactive),
        }

    per_category: dict[str, list[RewardRecord]] = defaultdict(list)
    for r in scored:
        per_category[r.category].append(r)
    failures = Counter()
    channel_infra = Counter()
    for r in records:
        if r.status == "infra_error":
            failures["infra_error"] += 1
        elif r.failure:
            failures[r.failure.split(":")[0]] += 1
        channel_infra.update(name for name, c in r.channels.items() if c.status.value == "infra_error")
    summary = {
        **block(scored),
        "n_total": len(records),
        "n_infra_error": sum(r.status == "infra_error" for r in records),
        "per_category": {cat: block(rs) for cat, rs in sorted(per_category.items())},
        "failures": dict(failures),
        "channel_infra_errors": dict(channel_infra),
        "judge_usage": total_usage(records),
        "median_score_ms": round(statistics.median(r.timings_ms.get("total", 0) for r in records), 1) if records else None,
        "provenance": records[0].provenance if records else {},
    }
    if wall_s is not None:
        summary["wall_s"] = round(wall_s, 2)
    summary.update(extra or {})
    return summary


async def run_and_report(tasks: list[Task], policy: Policy, out_dir: str | Path, *,
                         config: PipelineConfig | None = None, concurrency: int = 2,
                         progress: bool = True, title: str = "aesenv run", mode: RunMode = "single",
                         identity: dict[str, Any] | None = None,
                         is_good: Callable[[float], bool] = _at_least_good,
                         extend: Callable[[list[RewardRecord]], dict[str, Any]] | None = None,
                         references: dict[str, str] | None = None, ray: str | None = None,
                         ray_actors: int = 2, env_url: str | None = None) -> dict[str, Any]:
    """`extend(records)` adds benchmark-specific keys to the summary; `references` maps a task id
    to a ground-truth image (a data URL) the report shows beside the answer."""
    start = time.perf_counter()
    records = await run_episodes(tasks, policy, out_dir, config=config, concurrency=concurrency, progress=progress,
                                 mode=mode, identity=identity, ray=ray, ray_actors=ray_actors, env_url=env_url)
    wall_s = time.perf_counter() - start  # this invocation's: a resumed run only timed its new items
    usage = getattr(policy, "usage", None)
    extra: dict[str, Any] = {"policy": policy.name, "mode": mode, "tasks": len(tasks)}
    if isinstance(usage, BaseModel):
        extra["policy_usage_this_invocation"] = usage.model_dump()
    summary = summarize(records, wall_s=wall_s, extra={**extra, **(extend(records) if extend else {})},
                        is_good=is_good)
    out = Path(out_dir)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    write_report(out, records, summary, title=title, references=references)
    return summary
