"""The reward function veRL's reward loop calls (`reward.custom_reward_function.path=pkg://train.reward`).

One `RewardPipeline` (browser pool, judge, sandbox) per worker process and event loop, started
on first use. Every call returns the same keys: `score` (the configured aggregate, NaN when our
infrastructure failed: `train.estimators` leaves NaN out of the advantage) and, per channel,
`aes_<name>` (score in [0, 1], NaN when masked), `aes_<name>_applicable` and `aes_<name>_infra`
(0/1), plus `aes_reward_valid` and `aes_deadline_exceeded` (0/1) so infra failures show up as
batch metrics. It never raises for a bad sample and each sample has a deadline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from typing import Any

from aesenv.render import RenderConfig
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.tasks import Task

log = logging.getLogger(__name__)

_PIPELINES: dict[tuple[int, str], RewardPipeline] = {}
_STARTING: dict[tuple[int, str], asyncio.Lock] = {}
# One slot per page the renderer holds open at once: a sample's deadline starts when it gets a
# slot, so a long queue (veRL sends a worker many samples at once) is not mistaken for a stuck page.
_SLOTS: dict[tuple[int, str], asyncio.Semaphore] = {}


def pipeline_config(*, judge: str = "offline", reward: str = "paper", sandbox: str = "local",
                    channels: list[str] | None = None, concurrency: int | None = None, **_: Any) -> PipelineConfig:
    """The pipeline the reward options describe (shared by the reward function and the agent loop)."""
    optional: dict[str, Any] = {}
    if channels:
        optional["channels"] = list(channels)
    if concurrency is not None:
        optional["render"] = RenderConfig(concurrency=int(concurrency))
    return PipelineConfig(judge=judge, reward=reward, sandbox=sandbox, **optional)


def task_of(extra_info: dict[str, Any] | None) -> Task:
    """The task a dataset row carries (`extra_info["task"]`, JSON written by `train.data`)."""
    raw = (extra_info or {}).get("task")
    if raw is None:
        raise ValueError("extra_info has no 'task' (build the parquet with `python -m train.data`)")
    return Task(**(json.loads(raw) if isinstance(raw, str) else raw))


def _key(config: PipelineConfig) -> tuple[int, str]:
    return id(asyncio.get_running_loop()), config.model_dump_json()


async def shared_pipeline(config: PipelineConfig) -> RewardPipeline:
    """This process's started pipeline for `config` on the running loop (created once)."""
    key = _key(config)
    if key not in _PIPELINES:
        async with _STARTING.setdefault(key, asyncio.Lock()):
            if key not in _PIPELINES:
                pipeline = RewardPipeline(config)
                await pipeline.start()
                _PIPELINES[key] = pipeline
    return _PIPELINES[key]


async def close_pipelines() -> None:
    _SLOTS.clear()
    while _PIPELINES:
        _, pipeline = _PIPELINES.popitem()
        await pipeline.close()


def reward_fields(record: RewardRecord | None, channels: list[str]) -> dict[str, float]:
    """The flat, fixed-key dict veRL carries per sample. `record=None`: nothing was scored."""
    value = record.selected_reward if record is not None else None
    fields: dict[str, float] = {"score": math.nan if value is None else float(value),
                                "aes_reward_valid": float(value is not None)}
    for name in channels:
        result = record.channels.get(name) if record is not None else None
        counts = result is not None and result.counts
        fields[f"aes_{name}"] = float(result.score) if counts else math.nan
        fields[f"aes_{name}_applicable"] = float(result.applicable) if result is not None else 1.0
        fields[f"aes_{name}_infra"] = float(result is None or result.status.value == "infra_error")
    return fields


async def score_sample(solution_str: str, extra_info: dict[str, Any] | None, config: PipelineConfig,
                       deadline_s: float) -> dict[str, float]:
    """Score one answer under a deadline (counted from when it gets a render slot); any failure
    on our side is a masked, fixed-key result."""
    record, timed_out = None, False
    try:
        task = task_of(extra_info)
        pipeline = await shared_pipeline(config)
        async with _SLOTS.setdefault(_key(config), asyncio.Semaphore(config.render.concurrency)):
            record = (await asyncio.wait_for(pipeline.score(task, solution_str), deadline_s)).record
    except asyncio.TimeoutError:
        timed_out = True
        log.warning("aesenv reward: sample exceeded its %.0fs deadline", deadline_s)
    except Exception:  # noqa: BLE001 - one bad sample must not fail the batch
        log.exception("aesenv reward: sample could not be scored")
    return {**reward_fields(record, config.channels), "aes_deadline_exceeded": float(timed_out)}


async def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                        *, judge: str = "offline", reward: str = "paper", channels: list[str] | None = None,
                        deadline_s: float = 180.0, sandbox: str = "local", concurrency: int | None = None,
                        **_: Any) -> dict[str, float]:
    """veRL's custom reward function. Options come from `reward.custom_reward_function.reward_kwargs`;
    `concurrency` = pages rendered at once per worker (default: the renderer's)."""
    config = pipeline_config(judge=judge, reward=reward, sandbox=sandbox, channels=channels, concurrency=concurrency)
    return await score_sample(solution_str, extra_info, config, deadline_s)
