"""Wrappers of an env's async core, Gymnasium's way: each overrides one hook and passes the rest
through, so a variant is the plain env plus what it changes (`WallBudgetPenalty(core)`), not a
subclass. A wrapped core is used wherever a core is (the Gymnasium facade, the runner, veRL's
agent loop, the Webdev session)."""

from __future__ import annotations

import math
from typing import Any

from aesenv.envs.refine import ending


class AsyncCoreWrapper:
    """Passes every attribute, read or written, through to the wrapped core (`core`), except the
    wrapper's own; `reset` and `step` are the hooks a wrapper overrides."""

    _own = frozenset({"core"})

    def __init__(self, core: Any) -> None:
        object.__setattr__(self, "core", core)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.core, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._own or name in type(self).__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.core, name, value)

    @property
    def unwrapped(self) -> Any:
        core = self.core
        return core.unwrapped if isinstance(core, AsyncCoreWrapper) else core

    async def reset(self, **kwargs: Any) -> tuple[list[dict], dict]:
        return await self.core.reset(**kwargs)

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        return await self.core.step(action)


class WallBudgetPenalty(AsyncCoreWrapper):
    """WebCoder's time limit: an episode that ran out of wall time (`end` is `max_wall_s`) loses
    `penalty` from its final reward (`info["end_penalty"]`); the closing line of the observation
    states the reward the learner gets. A NaN reward (not scored, or our failure) stays NaN."""

    _own = frozenset({"core", "penalty"})

    def __init__(self, core: Any, penalty: float = 0.1) -> None:
        super().__init__(core)
        object.__setattr__(self, "penalty", penalty)

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        messages, reward, terminated, truncated, info = await self.core.step(action)
        if info.get("end") != "max_wall_s" or not self.penalty or math.isnan(reward):
            return messages, reward, terminated, truncated, info
        penalized = round(reward - self.penalty, 6)
        info = {**info, "end_penalty": self.penalty}
        return _restated(messages, ending("max_wall_s", reward), ending("max_wall_s", penalized)), penalized, \
            terminated, truncated, info


def _restated(messages: list[dict], old: str, new: str) -> list[dict]:
    """`messages` with the closing line `old` (in the last message) replaced by `new`."""
    if not messages:
        return messages
    last = dict(messages[-1])
    content = last.get("content")
    if isinstance(content, str):
        last["content"] = content.replace(old, new)
    elif isinstance(content, list):
        last["content"] = [{**part, "text": part["text"].replace(old, new)} if part.get("type") == "text" else part
                           for part in content]
    return [*messages[:-1], last]


__all__ = ["AsyncCoreWrapper", "WallBudgetPenalty"]
