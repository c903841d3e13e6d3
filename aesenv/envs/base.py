"""What every single-turn aesenv environment shares: task picking, one scored step, the record in
`info`, NaN for our own failures, and the Gymnasium facade over an async core.

A concrete env names its task kind and default suite, says what the policy observes, and which
image `render()` shows; scoring is always `RewardPipeline.score`.
"""

from __future__ import annotations

import io
import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from aesenv.artifact import MAX_ARTIFACT_BYTES
from aesenv.envs.spaces import UnicodeText
from aesenv.loop import LoopThread
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord, Scored
from aesenv.tasks import Task, load_tasks

TaskSource = str | list[Task]


def deterministic_view(record: RewardRecord) -> dict[str, Any]:
    """The record without wall-clock timings, so `info` is a function of (task, action) as
    Gymnasium requires; the full record stays on `env.last.record`."""
    exclude: dict[str, Any] = {"timings_ms": True}
    if record.rendering is not None:
        exclude["rendering"] = {"timings_ms"}
    return utf8_clean(record.model_dump(mode="json", exclude=exclude))


def utf8_clean(value: Any) -> Any:
    """`value` (JSON-ready) with every string valid UTF-8: a page's JavaScript can put lone
    surrogates into what the record quotes (console messages, its title), which no UTF-8 JSON
    writer takes; they become '?'."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {utf8_clean(k): utf8_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_clean(v) for v in value]
    return value


class AsyncAesEnv:
    """The async core: `await env.reset(task=...)`, then `await env.step(text)`."""

    env_id: ClassVar[str]
    kind: ClassVar[str]
    default_tasks: ClassVar[str]

    def __init__(self, tasks: TaskSource | None = None, *, pipeline: RewardPipeline | None = None,
                 config: PipelineConfig | None = None) -> None:
        source = self.default_tasks if tasks is None else tasks
        self.tasks = load_tasks(source) if isinstance(source, str) else list(source)
        if not self.tasks:
            raise ValueError(f"{self.env_id} needs at least one task")
        wrong = [t.id for t in self.tasks if t.kind != self.kind]
        if wrong:
            raise ValueError(f"{self.env_id} takes {self.kind} tasks; not {wrong[:5]}")
        self._by_id = {t.id: t for t in self.tasks}
        self._owns_pipeline = pipeline is None
        self.pipeline = pipeline or RewardPipeline(config)
        self.task: Task | None = None
        self.last: Scored | None = None

    def observe(self, task: Task) -> dict[str, str]:
        raise NotImplementedError

    def pick(self, rng: np.random.Generator, options: dict[str, Any] | None) -> Task:
        chosen = (options or {}).get("task")
        if chosen is None:
            return self.tasks[int(rng.integers(len(self.tasks)))]
        if isinstance(chosen, Task):
            return chosen
        if isinstance(chosen, dict):
            return Task(**{"kind": self.kind, **chosen})
        if chosen in self._by_id:
            return self._by_id[chosen]
        raise KeyError(f"no task with id {chosen!r} in this env's {len(self.tasks)} tasks")

    async def reset(self, task: Task) -> tuple[dict[str, str], dict[str, Any]]:
        self.task, self.last = task, None
        return self.observe(task), {"task_id": task.id, "task": task.model_dump(mode="json")}

    async def step(self, action: str | bytes) -> tuple[dict[str, str], float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        scored = await self.pipeline.score(self.task, action)
        self.last = scored
        record = scored.record
        value = record.selected_reward
        info = {
            "record": deterministic_view(record),
            "status": record.status,
            "reward_valid": value is not None,
            "failure": record.failure,
        }
        return self.observe(self.task), (math.nan if value is None else float(value)), True, False, info

    async def close(self) -> None:
        if self._owns_pipeline:
            await self.pipeline.close()


class AesEnv(gym.Env):
    """Gymnasium facade. Reward is the configured aggregate; NaN (with `info["reward_valid"]`
    False) when our own infrastructure failed, so it is never mistaken for a real 0.
    `sandbox="local"|"docker"` picks where untrusted code runs (recorded in every record)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}
    core_class: ClassVar[type[AsyncAesEnv]]
    observation_lengths: ClassVar[dict[str, int]]  # observation key -> max length

    def __init__(self, tasks: TaskSource | None = None, *, config: PipelineConfig | dict | None = None,
                 sandbox: str | None = None, render_mode: str | None = None, step_timeout_s: float = 180.0) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.step_timeout_s = step_timeout_s
        if isinstance(config, dict):
            config = PipelineConfig(**config)
        if sandbox is not None:
            config = (config or PipelineConfig()).model_copy(update={"sandbox": sandbox})
        self._core = self.core_class(tasks, config=config)
        self._loop: LoopThread | None = None
        self.observation_space = spaces.Dict({key: UnicodeText(max_length=n)
                                              for key, n in self.observation_lengths.items()})
        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)

    @property
    def tasks(self) -> list[Task]:
        return self._core.tasks

    @property
    def last(self) -> Scored | None:
        """The last step's full result: record with timings, rendering or plot run with images."""
        return self._core.last

    def _run(self, coro):
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop.run(coro, timeout=self.step_timeout_s)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        task = self._core.pick(self.np_random, options)
        return self._run(self._core.reset(task))

    def step(self, action: str | bytes):
        return self._run(self._core.step(action))

    def frame(self, last: Scored | None) -> tuple[bytes | None, tuple[int, int]]:
        """The PNG `render()` shows for the last step, and the (height, width) of a blank frame."""
        raise NotImplementedError

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        png, blank = self.frame(self._core.last)
        if png is None:
            return np.full((*blank, 3), 255, dtype=np.uint8)
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        if self._loop is not None:
            self._loop.run(self._core.close(), timeout=60)
            self._loop.stop()
            self._loop = None
        super().close()
