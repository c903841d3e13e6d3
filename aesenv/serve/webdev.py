"""Webdev-Bench sessions over the wire (`AesWebdevBench-v0`): one composite task, round by round,
driven by a remote agent.

`aesenv.webdev.session.run_task` drives an `Agent` (it asks for one assistant message per turn).
Served, the agent is on the other side of a socket, so the session runs unchanged with a relay
agent: each time the session asks it to act, the relay hands the conversation out as the
observation and waits for the remote client's next action. The gate, the simulated user, the
budgets and terminal acceptance are the session's own; when it ends, the observation is done and
carries the `WebdevRecord` (rounds, grades, RS/FS/IS/VS/DSR) in `info["webdev_record"]`, with the
weighted four-grade score as the reward (None when the task was not graded: our failure).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from aesenv.rewards import RewardPipeline
from aesenv.webdev.gate import make_user
from aesenv.webdev.graders import CheckGrader
from aesenv.webdev.session import SECONDS_PER_REQUIREMENT, TaskRun, _Session  # the session run_task runs
from aesenv.webdev.tasks import CompositeTask, load_suite

WEBDEV_ENV_ID = "AesWebdevBench-v0"


class _Relay:
    """The `Agent` the session drives: `act` hands the conversation out and waits for the reply."""

    name = "remote"

    def __init__(self) -> None:
        self.asks: asyncio.Queue[tuple[list[dict], list[dict] | None]] = asyncio.Queue(maxsize=1)
        self.replies: asyncio.Queue[dict] = asyncio.Queue(maxsize=1)

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        await self.asks.put((list(messages), tools))
        return await self.replies.get()


class WebdevCore:
    """The async core of a served Webdev-Bench session (`reset(task=...)`, `step(action)`)."""

    env_id = WEBDEV_ENV_ID

    def __init__(self, suite: str | Path, pipeline: RewardPipeline, *, user: str = "offline",
                 seconds_per_requirement: float = SECONDS_PER_REQUIREMENT) -> None:
        self.suite = Path(suite)
        self.pipeline, self.user = pipeline, user
        self.seconds_per_requirement = seconds_per_requirement
        self.tools: list[dict] = []
        self.task: CompositeTask | None = None
        self._relay: _Relay | None = None
        self._run: asyncio.Task[TaskRun] | None = None
        self._session: _Session | None = None
        self._seen = 0  # messages of the conversation already handed out

    def tasks(self) -> list[CompositeTask]:
        return load_suite(self.suite)

    async def reset(self, *, task: str | None = None, seed: int | None = None) -> tuple[list[dict], dict]:
        await self.close()
        suite = {t.id: t for t in self.tasks()}
        if task is None:
            task = sorted(suite)[(seed or 0) % len(suite)]
        if not isinstance(task, str) or task not in suite:
            raise KeyError(f"no Webdev-Bench task {task!r}; tasks: {sorted(suite)}")
        self.task, self._relay, self._seen = suite[task], _Relay(), 0
        # `run_task`'s session, held here so each step's info (turn, Φ, tool results) can go out
        self._session = _Session(self.task, self._relay, self.pipeline, make_user(self.user), CheckGrader(),
                                 self.seconds_per_requirement)
        self._run = asyncio.create_task(self._session.run())
        messages, _, _, _, info = await self._next()
        return messages, {**info, "task_id": task, "requirements": len(self.task.requirements)}

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        if self._run is None or self._run.done():
            raise RuntimeError("no episode is running: call reset()")
        message = {"role": "assistant", "content": action} if isinstance(action, str) else action
        self._seen += 1  # the action itself is the conversation's next message
        await self._relay.replies.put(message)
        return await self._next()

    def _step_info(self) -> dict[str, Any]:
        """The env's info of the latest step, as the session recorded it (empty before the first)."""
        steps = self._session.trajectory.steps if self._session is not None else []
        if not steps:
            return {}
        last = steps[-1]
        return {"turn": last.turn, "potential": last.potential, "delta_potential": last.delta_potential,
                "tool_results": last.tool_results}

    async def _next(self) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        """Until the session asks for the next action (the new messages) or ends (its record)."""
        ask = asyncio.ensure_future(self._relay.asks.get())
        try:
            await asyncio.wait({ask, self._run}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not ask.done():
                ask.cancel()
        if ask.done() and not ask.cancelled():
            conversation, tools = ask.result()
            self.tools = list(tools or [])
            new, self._seen = conversation[self._seen:], len(conversation)
            return new, 0.0, False, False, {**self._step_info(), "tools": [t["function"]["name"] for t in self.tools]}
        result = self._run.result()
        record = result.record
        last = result.trajectory.steps[-1].observation if result.trajectory.steps else []
        reward = record.metrics.get("weighted") if record.status == "ok" else None
        end = {"done": "submit", "time_budget": "max_wall_s", "turn_budget": "max_turns"}.get(record.end, record.end)
        info = {**self._step_info(), "webdev_record": record.model_dump(mode="json"), "status": record.status,
                "end": end, "reward_valid": reward is not None}
        terminated = record.end == "done"
        return list(last), (math.nan if reward is None else float(reward)), terminated, not terminated, info

    async def close(self) -> None:
        if self._run is not None and not self._run.done():
            self._run.cancel()
            try:
                await self._run
            except BaseException:  # noqa: BLE001 - cancelled on purpose; its own failure is in no record
                pass
        self._run = None
