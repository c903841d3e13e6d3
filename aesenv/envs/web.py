"""`AesWeb-v0`: single-turn webpage generation. One step: the answer is rendered and scored.

`AsyncAesWebEnv` is the core for callers that run an event loop (veRL agent loops, benchmark
runners); `AesWebEnv` is the Gymnasium facade, which runs the core on a private loop thread.
"""

from __future__ import annotations

from aesenv.envs.base import AesEnv, AsyncAesEnv, deterministic_view
from aesenv.rewards import Scored
from aesenv.tasks import Task

__all__ = ["AesWebEnv", "AsyncAesWebEnv", "deterministic_view", "observation_of"]


def observation_of(task: Task) -> dict[str, str]:
    return {"prompt": task.prompt, "category": task.category.value}


class AsyncAesWebEnv(AsyncAesEnv):
    env_id = "AesWeb-v0"
    kind = "web"
    default_tasks = "builtin:web"

    def observe(self, task: Task) -> dict[str, str]:
        return observation_of(task)


class AesWebEnv(AesEnv):
    core_class = AsyncAesWebEnv
    observation_lengths = {"prompt": 100_000, "category": 64}

    def frame(self, last: Scored | None) -> tuple[bytes | None, tuple[int, int]]:
        cfg = self._core.pipeline.config.render
        png = last.rendering.viewport_png if last and last.rendering else None
        return png, (cfg.viewport_height, cfg.viewport_width)
