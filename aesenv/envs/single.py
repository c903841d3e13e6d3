"""Single-turn envs (`AesWeb-v0`, `AesPlot-v0`, one per kind): one step, the answer is scored.

`AsyncSingleTurnEnv` is the core for callers that run an event loop (veRL agent loops, benchmark
runners); `SingleTurnEnv` is the Gymnasium facade. The observation is the kind's (`Kind.observe`:
the prompt and category, and for plots the data files and their first rows), texts a text-only
policy answers from. `info["messages"]` of `reset` is the chat prompt a chat policy sends
(`Kind.chat_prompt`), with the task's reference attached as an image (`with_reference`).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from aesenv.artifact import MAX_ARTIFACT_BYTES
from aesenv.envs.base import AsyncKindEnv, EnvMaker, KindEnv, TaskSource, deterministic_view
from aesenv.envs.spaces import UnicodeText
from aesenv.tasks import Task

__all__ = ["AsyncSingleTurnEnv", "SingleTurnEnv", "single_turn_env"]


class AsyncSingleTurnEnv(AsyncKindEnv):
    """`await env.reset(task)`, then one `await env.step(text)`."""

    mode = "single"

    async def reset(self, task: Task) -> tuple[dict[str, str], dict[str, Any]]:
        self.task, self.last = task, None
        messages = self.kind.chat_prompt(task)
        messages[-1] = await self.with_reference(messages[-1], task)
        return self.kind.observe(task), {"task_id": task.id, "task": task.model_dump(mode="json"),
                                         "messages": messages}

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
        return self.kind.observe(self.task), (math.nan if value is None else float(value)), True, False, info


class SingleTurnEnv(KindEnv):
    """Gymnasium facade: the observation is a dict of texts (the chat prompt, images included, is
    `info["messages"]`), the action the model's answer."""

    mode = "single"
    core_class = AsyncSingleTurnEnv

    def __init__(self, tasks: TaskSource | None = None, *, kind: str, **options: Any) -> None:
        super().__init__(tasks, kind=kind, **options)
        self.observation_space = spaces.Dict({key: UnicodeText(max_length=n)
                                              for key, n in self._core.kind.asking.observation_lengths.items()})
        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        task = self._core.pick(self.np_random, options)
        return self._run(self._core.reset(task))

    def step(self, action: str | bytes):
        return self._run(self._core.step(action))


single_turn_env = EnvMaker(SingleTurnEnv)  # the `single` ids' entry point
