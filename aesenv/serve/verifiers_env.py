"""A `verifiers` environment (Prime Intellect's `verifiers`, v1 API) for aesenv's single-turn
kinds: a taskset whose tasks are aesenv tasks (the chat prompt as the prompt) and whose rubric is
aesenv's channels, one `@vf.reward` per channel (its weight the paper's: execution 0.1, static 0.8,
interactive 0.1, others 0.1), each the channel's [0, 1] score from one `RewardPipeline.score` of
the rollout's last reply. A channel that does not apply to the answer records no reward; when our
side fails (the record is `infra_error`, or a channel is) the scoring raises, so verifiers marks
the rollout as errored instead of reading a 0.

    import aesenv_vf
    env = aesenv_vf.load_environment(kind="web", tasks="builtin:web", judge="offline")

or by id, as verifiers loads any taskset: `--env.taskset.id aesenv_vf` (`aesenv_vf` is the
installable module verifiers imports; this module holds the logic). With `env_url` set (e.g.
`--env.taskset.task.env-url http://127.0.0.1:8000`) the answers are scored by a server's
single-turn env (`aesenv serve`, its stateless `POST /<env id>/score`) instead of a pipeline in
this process: the server's judge, sandbox and browser, the same record.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import field_validator
from verifiers.v1.harnesses.null import NullHarness

from aesenv.channels.base import ChannelStatus
from aesenv.kinds import KINDS, kinds_with
from aesenv.judging.aescoder import PAPER_WEIGHTS
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord
from aesenv.tasks import Task, load_tasks

OTHER_WEIGHT = 0.1
_PIPELINES: dict[tuple[int, str], RewardPipeline] = {}


class AesTaskData(vf.TaskData):
    aesenv_task: dict[str, Any]  # the aesenv `Task`, as JSON


class AesTaskConfig(vf.TaskConfig):
    judge: str = "offline"
    reward: str = "paper"
    channels: list[str] | None = None  # None: the kind's default channels
    sandbox: Literal["local", "docker"] = "local"
    env_url: str | None = None  # an `aesenv serve` URL: score there (POST /<env id>/score), not here

    def pipeline_config(self) -> PipelineConfig:
        extra = {"channels": self.channels} if self.channels else {}
        return PipelineConfig(judge=self.judge, reward=self.reward, sandbox=self.sandbox, **extra)


class AesTasksetConfig(vf.TasksetConfig):
    kind: str = "web"  # any registered kind with a single-turn env (`kinds_with("single")`)
    tasks: str | None = None  # a task source (`builtin:web`, `jsonl:F`, ...); default: the kind's suite
    task: AesTaskConfig = AesTaskConfig()

    @field_validator("kind")
    @classmethod
    def _asked_once(cls, kind: str) -> str:
        """The kinds come from the registry; the verifiers env asks once and scores, so a kind
        without a single-turn env (a project) is refused."""
        offered = kinds_with("single")
        if kind not in offered:
            raise ValueError(f"kind {kind!r} has no single-turn env; these do: {offered}")
        return kind


async def shared_pipeline(config: PipelineConfig) -> RewardPipeline:
    """One started pipeline per event loop and config (a rollout worker scores many answers)."""
    key = (id(asyncio.get_running_loop()), config.model_dump_json())
    pipeline = _PIPELINES.get(key)
    if pipeline is None:
        pipeline = _PIPELINES[key] = RewardPipeline(config).validate()
    await pipeline.start()
    return pipeline


async def close_pipelines() -> None:
    """Close the pipelines this event loop started (a worker's last act; tests)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _PIPELINES if k[0] == loop]:
        await _PIPELINES.pop(key).close()


class AesTask(vf.Task[AesTaskData, vf.State, AesTaskConfig]):
    """One aesenv task; its rewards are added per channel by `channel_rewards`."""

    def __init__(self, data: AesTaskData, config: AesTaskConfig | None = None) -> None:
        super().__init__(data, config)
        self._scored: dict[str, asyncio.Future] = {}

    def aesenv_task(self) -> Task:
        return Task.model_validate(self.data.aesenv_task)

    async def channel_scores(self, trace: Any) -> dict[str, float | None]:
        """Every channel's score for this rollout (None where it does not apply), scored once."""
        if trace.id not in self._scored:
            self._scored[trace.id] = asyncio.ensure_future(self._score(trace.last_reply))
        return await asyncio.shield(self._scored[trace.id])

    async def _score(self, reply: str) -> dict[str, float | None]:
        if self.config.env_url:
            record = await served_record(self.config.env_url, self.aesenv_task(), reply)
        else:
            pipeline = await shared_pipeline(self.config.pipeline_config())
            record = (await pipeline.score(self.aesenv_task(), reply)).record
        failed = [n for n, c in record.channels.items() if c.status is ChannelStatus.INFRA_ERROR]
        if record.status == "infra_error" or failed:
            raise RuntimeError(f"aesenv failed on its side scoring {record.task_id} ({', '.join(failed) or 'record'}): "
                               "not a score")
        return {name: (c.score if c.counts else None) for name, c in record.channels.items()}


async def served_record(url: str, task: Task, reply: str) -> RewardRecord:
    """The record a server's single-turn env gives `reply` (`POST /<env id>/score`, the token from
    `AESENV_SERVE_TOKEN`); the server's refusal or failure raises (an errored rollout, never a 0)."""
    import os

    import httpx

    from aesenv.kinds import kind_of

    token = os.environ.get("AESENV_SERVE_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"task": json.loads(task.model_dump_json()), "answer": reply}
    async with httpx.AsyncClient(timeout=httpx.Timeout(1900.0, connect=30.0)) as client:
        response = await client.post(f"{url.rstrip('/')}/{kind_of(task).env_id('single')}/score", json=body,
                                     headers=headers)
    answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    if response.status_code != 200 or not answer.get("record"):
        raise RuntimeError(f"the server did not score {task.id} (HTTP {response.status_code}): "
                           f"{answer.get('error') or answer.get('detail') or response.text[:300]}")
    return RewardRecord.model_validate(answer["record"])


def channel_reward(name: str, weight: float):
    """The `@vf.reward` method for channel `name` (its score, or no reward when it does not apply)."""

    async def reward(self: AesTask, trace: Any) -> dict[str, float]:
        score = (await self.channel_scores(trace)).get(name)
        return {} if score is None else {name: float(score)}

    reward.__name__ = name
    return vf.reward(reward, weight=weight)


def task_class(channels: list[str]) -> type[AesTask]:
    """An `AesTask` subclass with one reward per channel."""
    methods = {name: channel_reward(name, PAPER_WEIGHTS.get(name, OTHER_WEIGHT)) for name in channels}
    return type("AesChannelsTask", (AesTask,), methods)


class AesTaskset(vf.Taskset[AesTask, AesTasksetConfig]):
    """aesenv's single-turn tasks of one kind, prompted as a chat policy is prompted."""

    def load(self):
        kind = KINDS[self.config.kind]
        source = self.config.tasks or kind.default_tasks
        tasks = load_tasks(source) if isinstance(source, str) else list(source)
        cls = task_class(self.config.task.channels or _channels_of(self.config.task.pipeline_config(), kind.name))
        for task in tasks:
            if task.kind != kind.name:
                continue
            messages = kind.chat_prompt(task)
            system = next((m["content"] for m in messages if m["role"] == "system"), None)
            user = [m for m in messages if m["role"] != "system"]
            yield cls(AesTaskData(id=task.id, name=task.id, prompt=user, system_prompt=system,
                                  aesenv_task=json.loads(task.model_dump_json())), self.config.task)


def _channels_of(config: PipelineConfig, kind: str) -> list[str]:
    """The channels `config` scores a `kind` answer with (what the pipeline will put in the record)."""
    return [channel.name for channel in RewardPipeline(config).channels(kind)]


def load_environment(**kwargs: Any) -> vf.Env:
    """The verifiers env: `kind`, `tasks`, and the task config's `judge`, `reward`, `channels`,
    `sandbox` (as keywords, or `task={...}`)."""
    task_keys = set(AesTaskConfig.model_fields) - set(vf.TaskConfig.model_fields)
    task = {**kwargs.pop("task", {}), **{k: kwargs.pop(k) for k in list(kwargs) if k in task_keys}}
    config = vf.SingleAgentEnvConfig(taskset=AesTasksetConfig(id="aesenv_vf", task=AesTaskConfig(**task), **kwargs))
    return vf.load_environment(config)


class AesChatHarness(NullHarness):
    """The taskset's own harness: a plain chat turn (no tools, no code run on the agent's side);
    the answer is scored by aesenv, which runs it in its sandbox and browser."""
