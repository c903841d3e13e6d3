"""`AesWeb-v0`: single-turn webpage generation. One step: the answer is rendered and scored.

`AsyncAesWebEnv` is the core for callers that run an event loop (veRL agent loops, benchmark
runners); `AesWebEnv` is the Gymnasium facade, which runs the core on a private loop thread.
"""

from __future__ import annotations

import io
import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from aesenv.artifact import MAX_ARTIFACT_BYTES
from aesenv.envs.spaces import UnicodeText
from aesenv.loop import LoopThread
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord, Scored
from aesenv.tasks import Task, load_tasks

TaskSource = str | list[Task]


def _resolve_tasks(tasks: TaskSource) -> list[Task]:
    resolved = load_tasks(tasks) if isinstance(tasks, str) else list(tasks)
    if not resolved:
        raise ValueError("AesWeb-v0 needs at least one task")
    return resolved


def deterministic_view(record: RewardRecord) -> dict[str, Any]:
    """The record without wall-clock timings, so `info` is a function of (task, action) as
    Gymnasium requires; the full record stays on `env.last.record`."""
    exclude: dict[str, Any] = {"timings_ms": True}
    if record.rendering is not None:
        exclude["rendering"] = {"timings_ms"}
    return record.model_dump(mode="json", exclude=exclude)


def observation_of(task: Task) -> dict[str, str]:
    return {"prompt": task.prompt, "category": task.category.value}


class AsyncAesWebEnv:
    """The async core: `await env.reset(task=...)`, then `await env.step(text)`."""

    def __init__(self, tasks: TaskSource = "builtin:web", *, pipeline: RewardPipeline | None = None,
                 config: PipelineConfig | None = None) -> None:
        self.tasks = _resolve_tasks(tasks)
        self._by_id = {t.id: t for t in self.tasks}
        self._owns_pipeline = pipeline is None
        self.pipeline = pipeline or RewardPipeline(config)
        self.task: Task | None = None
        self.last: Scored | None = None

    def pick(self, rng: np.random.Generator, options: dict[str, Any] | None) -> Task:
        chosen = (options or {}).get("task")
        if chosen is None:
            return self.tasks[int(rng.integers(len(self.tasks)))]
        if isinstance(chosen, Task):
            return chosen
        if isinstance(chosen, dict):
            return Task(**chosen)
        if chosen in self._by_id:
            return self._by_id[chosen]
        raise KeyError(f"no task with id {chosen!r} in this env's {len(self.tasks)} tasks")

    async def reset(self, task: Task) -> tuple[dict[str, str], dict[str, Any]]:
        self.task, self.last = task, None
        return observation_of(task), {"task_id": task.id, "task": task.model_dump(mode="json")}

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
        return observation_of(self.task), (math.nan if value is None else float(value)), True, False, info

    async def close(self) -> None:
        if self._owns_pipeline:
            await self.pipeline.close()


class AesWebEnv(gym.Env):
    """Gymnasium facade. Reward is the configured aggregate; NaN (with `info["reward_valid"]`
    False) when our own infrastructure failed, so it is never mistaken for a real 0."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, tasks: TaskSource = "builtin:web", *, config: PipelineConfig | dict | None = None,
                 render_mode: str | None = None, step_timeout_s: float = 180.0) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.step_timeout_s = step_timeout_s
        if isinstance(config, dict):
            config = PipelineConfig(**config)
        self._core = AsyncAesWebEnv(tasks, config=config)
        self._loop: LoopThread | None = None
        self.observation_space = spaces.Dict({"prompt": UnicodeText(max_length=100_000),
                                              "category": UnicodeText(max_length=64)})
        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)

    @property
    def tasks(self) -> list[Task]:
        return self._core.tasks

    @property
    def last(self) -> Scored | None:
        """The last step's full result: record with timings, rendering with screenshots."""
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

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        last = self._core.last
        png = last.rendering.viewport_png if last and last.rendering else None
        if png is None:
            cfg = self._core.pipeline.config.render
            return np.full((cfg.viewport_height, cfg.viewport_width, 3), 255, dtype=np.uint8)
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        if self._loop is not None:
            self._loop.run(self._core.close(), timeout=60)
            self._loop.stop()
            self._loop = None
        super().close()
