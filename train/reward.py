"""The reward function veRL's reward loop calls (`reward.custom_reward_function.path=pkg://train.reward`).

One `RewardPipeline` (browser pool, judge, sandbox) per worker process and event loop, started
on first use. Every call returns the same keys: `score` (the configured aggregate, NaN when our
infrastructure failed: `train.estimators` leaves NaN out of the advantage) and, per channel of
any kind (`logged_channels`: the task's own kind fills its channels, another kind's are not
applicable to it), `aes_<name>` (score in [0, 1], NaN when masked), `aes_<name>_applicable` and
`aes_<name>_infra` (0/1), plus `aes_reward_valid` and `aes_deadline_exceeded` (0/1) so infra failures show up as
batch metrics. It never raises for a bad sample and each sample has a deadline.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aesenv.kinds.web.judges import offline_judge_warning
from aesenv.models import JudgeSpec, default_judge
from aesenv.kinds import KINDS
from aesenv.render import RenderConfig
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.rewards.service import RayScorer, ray_address
from aesenv.tasks import Task

log = logging.getLogger(__name__)

_PIPELINES: dict[tuple[int, str, str | None], "RewardPipeline | RayScorer"] = {}
_STARTING: dict[tuple[int, str, str | None], asyncio.Lock] = {}
# One slot per page the renderer holds open at once: a sample's deadline starts when it gets a
# slot, so a long queue (veRL sends a worker many samples at once) is not mistaken for a stuck page.
_SLOTS: dict[tuple[int, str, str | None], asyncio.Semaphore] = {}


_WARNED_OFFLINE = False


_PIPELINE_DEFAULTS = PipelineConfig.model_fields


class RewardOptions(BaseModel):
    """`reward.custom_reward_function.reward_kwargs`: what the reward function and the refine agent
    loop score with. An option not named here is an error before anything is scored."""

    model_config = ConfigDict(extra="forbid")

    judge: str | None = None  # default: `aesenv.models.default_judge()`, a VLM
    allow_offline_judge: bool = False  # the offline judge is a proxy: training on it takes this switch
    judge_samples: int | None = Field(default=None, ge=1)  # VLM judge: median of k answers
    judge_base_url: str | None = None  # VLM judge endpoint (else OPENAI_BASE_URL)
    judge_options: dict[str, Any] = Field(default_factory=dict)  # any other ClientConfig field of a VLM judge
    reward: str = "paper"
    sandbox: str = "local"
    channels: list[str] | None = None
    concurrency: int | None = Field(default=None, ge=1)  # pages scored at once per worker (default_concurrency)
    interactor: str | None = None  # the interactive agent (default: follows the judge)
    interactor_options: dict[str, Any] = Field(default_factory=dict)
    # These three default to the pipeline's own (PipelineConfig holds them once).
    interaction_budget: int = Field(default=_PIPELINE_DEFAULTS["interaction_budget"].default, ge=1)
    gate_on_execution: bool = _PIPELINE_DEFAULTS["gate_on_execution"].default  # on in the GRPO-AR configs
    channel_timeout_s: float = Field(default=_PIPELINE_DEFAULTS["channel_timeout_s"].default, gt=0)
    channel_options: dict[str, dict[str, Any]] = Field(default_factory=dict)  # per-channel switches (PipelineConfig)
    deadline_s: float = Field(default=180.0, gt=0)  # per sample, counted from its render slot
    # Score on the reward service's Ray actors ("local", "auto" or an address) instead of a pipeline in
    # each reward worker; the workers of one run share one pool of `ray_actors` (aesenv.rewards.service).
    ray: str | None = None
    ray_actors: int = Field(default=2, ge=1)


def pipeline_config(**options: Any) -> PipelineConfig:
    """The pipeline the reward options describe (shared by the reward function and the agent loop).

    The judge defaults to a VLM (`aesenv.models.default_judge`). Training on the offline judge
    needs `allow_offline_judge: true` and logs its measured fidelity once: a policy trained on a
    proxy learns the proxy. A judge that cannot work here, or an option this function does not
    know, is a configuration error, raised before any sample is scored rather than ignored or
    masked sample by sample."""
    return _pipeline_config(reward_options(options))


def reward_options(options: dict[str, Any]) -> RewardOptions:
    try:
        return RewardOptions(**options)
    except ValidationError as exc:
        raise ValueError(f"reward_kwargs: {exc}; known options: {sorted(RewardOptions.model_fields)}") from None


def _pipeline_config(given: RewardOptions) -> PipelineConfig:
    global _WARNED_OFFLINE
    judge = given.judge or default_judge()
    # The sampling and endpoint options are a VLM judge's; the offline judge is one deterministic
    # answer from no server, so the config's `judge_samples: 1` next to `judge: offline` is moot.
    spec = JudgeSpec(spec=judge, samples=given.judge_samples, base_url=given.judge_base_url,
                     settings=given.judge_options)
    offline = spec.offline
    options = {} if offline else spec.options()
    if offline and not given.allow_offline_judge:
        raise ValueError("training with the offline judge needs reward_kwargs.allow_offline_judge=true; "
                         + offline_judge_warning())
    if problem := spec.problem():
        raise ValueError(problem)
    if offline and not _WARNED_OFFLINE:
        _WARNED_OFFLINE = True
        log.warning("aesenv reward: %s", offline_judge_warning())
    optional: dict[str, Any] = {}
    if given.channels:
        optional["channels"] = list(given.channels)
    optional["render"] = RenderConfig(concurrency=given.concurrency or default_concurrency())
    return PipelineConfig(judge=judge, judge_options=options, reward=given.reward, sandbox=given.sandbox,
                          interactor=given.interactor, interactor_options=given.interactor_options,
                          interaction_budget=given.interaction_budget, gate_on_execution=given.gate_on_execution,
                          channel_timeout_s=given.channel_timeout_s,
                          channel_options={k: dict(v) for k, v in given.channel_options.items()}, **optional)


def default_concurrency() -> int:
    """Pages a reward worker scores at once when its config names no number: the cores it may run
    on, plus two, at most 8 (each page holds a browser context). A page being scored waits between
    its stages (its clock, round trips, the explorer's idle windows), so as many pages as cores
    leave cores idle: on this project's 2-core machine, 2 at once kept the cores 81-87% busy at
    1.42 pages/s, 4 kept them 95% busy at 1.62 (`python -m train.bench_reward`)."""
    return min(8, len(os.sched_getaffinity(0)) + 2)


def task_of(extra_info: dict[str, Any] | None) -> Task:
    """The task a dataset row carries (`extra_info["task"]`, JSON written by `train.data`)."""
    raw = (extra_info or {}).get("task")
    if raw is None:
        raise ValueError("extra_info has no 'task' (build the parquet with `python -m train.data`)")
    return Task(**(json.loads(raw) if isinstance(raw, str) else raw))


def _key(config: PipelineConfig, ray: str | None = None) -> tuple[int, str, str | None]:
    return id(asyncio.get_running_loop()), config.model_dump_json(), ray


async def shared_pipeline(config: PipelineConfig, ray: str | None = None,
                          ray_actors: int = 2) -> RewardPipeline | RayScorer:
    """This process's started pipeline for `config` on the running loop (created once); with
    `ray`, its handle on the run's shared pool of Ray actors for `config`."""
    key = _key(config, ray)
    if key not in _PIPELINES:
        async with _STARTING.setdefault(key, asyncio.Lock()):
            if key not in _PIPELINES:
                if ray is None:
                    pipeline: RewardPipeline | RayScorer = RewardPipeline(config).validate()
                else:
                    pool = "aesenv-reward-" + hashlib.sha256(key[1].encode()).hexdigest()[:12]
                    pipeline = RayScorer(config, actors=ray_actors, address=ray_address(ray), pool=pool)
                await pipeline.start()
                _PIPELINES[key] = pipeline
    return _PIPELINES[key]


async def close_pipelines() -> None:
    _SLOTS.clear()
    while _PIPELINES:
        _, pipeline = _PIPELINES.popitem()
        await pipeline.close()


def logged_channels(config: PipelineConfig) -> list[str]:
    """Every channel a sample of any kind may report under `config`, in a fixed order: veRL takes
    one key set per batch (from its first sample), and a batch may mix kinds."""
    names: list[str] = []
    for kind in KINDS:
        names += [n for n in config.channels_for(kind) if n not in names]
    return names


def reward_fields(record: RewardRecord | None, config: PipelineConfig, kind: str | None) -> dict[str, float]:
    """The flat, fixed-key dict veRL carries per sample (`logged_channels`). The channels of the
    task's `kind` carry its record (`record=None`: nothing was scored, so they count as our
    failure); another kind's channels are not applicable to it (NaN, applicable 0, infra 0).
    `kind=None`: the row had no readable task, every channel is our failure."""
    value = record.selected_reward if record is not None else None
    fields: dict[str, float] = {"score": math.nan if value is None else float(value),
                                "aes_reward_valid": float(value is not None)}
    own = set(config.channels_for(kind)) if kind is not None else None
    for name in logged_channels(config):
        if own is not None and name not in own:
            fields[f"aes_{name}"] = math.nan
            fields[f"aes_{name}_applicable"] = 0.0
            fields[f"aes_{name}_infra"] = 0.0
            continue
        result = record.channels.get(name) if record is not None else None
        counts = result is not None and result.counts
        fields[f"aes_{name}"] = float(result.score) if counts else math.nan
        fields[f"aes_{name}_applicable"] = float(result.applicable) if result is not None else 1.0
        fields[f"aes_{name}_infra"] = float(result is None or result.status.value == "infra_error")
    return fields


async def score_sample(solution_str: str, extra_info: dict[str, Any] | None, config: PipelineConfig,
                       deadline_s: float, ray: str | None = None, ray_actors: int = 2) -> dict[str, float]:
    """Score one answer under a deadline (counted from when it gets a render slot); any failure
    on our side is a masked, fixed-key result."""
    record, timed_out, kind = None, False, None
    slots = config.render.concurrency * (ray_actors if ray else 1)
    try:
        task = task_of(extra_info)
        kind = task.kind
        pipeline = await shared_pipeline(config, ray, ray_actors)
        async with _SLOTS.setdefault(_key(config, ray), asyncio.Semaphore(slots)):
            record = (await asyncio.wait_for(pipeline.score(task, solution_str), deadline_s)).record
    except asyncio.TimeoutError:
        timed_out = True
        log.warning("aesenv reward: sample exceeded its %.0fs deadline", deadline_s)
    except Exception:  # noqa: BLE001 - one bad sample must not fail the batch
        log.exception("aesenv reward: sample could not be scored")
    return {**reward_fields(record, config, kind), "aes_deadline_exceeded": float(timed_out)}


async def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                        **options: Any) -> dict[str, float]:
    """veRL's custom reward function. Options come from `reward.custom_reward_function.reward_kwargs`
    and are `RewardOptions`."""
    given = reward_options(options)
    return await score_sample(solution_str, extra_info, _pipeline_config(given), given.deadline_s, given.ray,
                              given.ray_actors)
