"""Wrappers of an env's async core, Gymnasium's way: each overrides one hook and passes the rest
through, so a variant is the plain env plus what it changes (`WallBudgetPenalty(core)`), not a
subclass. A wrapped core is used wherever a core is (the Gymnasium facade, the runner, veRL's
agent loop, the Webdev session)."""

from __future__ import annotations

import math
from typing import Any

from aesenv.envs.refine import ending


def _forwarded(name: str) -> property:
    """`name` of the wrapped core, read and written through the wrapper."""
    return property(lambda self: getattr(self.core, name), lambda self, value: setattr(self.core, name, value),
                    doc=f"The wrapped core's `{name}`.")


# The async cores' interface (`AsyncKindEnv`, `AsyncRefineEnv`): what a wrapper passes through.
# Anything else on a wrapper is its own (an unknown name is an AttributeError, not the core's).
FORWARDED = ("budget", "close", "edit_file", "end_rule", "entry", "env_id", "first_turn", "kind", "last",
             "last_image", "look", "measure_at_end", "mode", "opening", "pick", "pipeline", "potential", "run",
             "score_at_end", "screen", "task", "tasks", "tools", "toolset", "view_file", "with_reference",
             "workspace", "write_file")


class AsyncCoreWrapper:
    """Wraps an async core (`core`): the names in `FORWARDED` are read and written on the core,
    explicitly (Gymnasium's wrappers stopped forwarding every attribute in 1.0); `reset` and
    `step` are the hooks a wrapper overrides; anything else is the wrapper's own."""

    def __init__(self, core: Any) -> None:
        self.core = core

    @property
    def unwrapped(self) -> Any:
        core = self.core
        return core.unwrapped if isinstance(core, AsyncCoreWrapper) else core

    async def reset(self, **kwargs: Any) -> tuple[list[dict], dict]:
        return await self.core.reset(**kwargs)

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        return await self.core.step(action)


for _name in FORWARDED:
    setattr(AsyncCoreWrapper, _name, _forwarded(_name))


class WallBudgetPenalty(AsyncCoreWrapper):
    """WebCoder's time limit: an episode that ran out of wall time (`end` is `max_wall_s`) loses
    `penalty` from its final reward (`info["end_penalty"]`); the closing line of the observation
    states the reward the learner gets. A NaN reward (not scored, or our failure) stays NaN."""

    def __init__(self, core: Any, penalty: float = 0.1) -> None:
        super().__init__(core)
        self.penalty = penalty

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


__all__ = ["FORWARDED", "AsyncCoreWrapper", "WallBudgetPenalty"]
