"""Served sessions: one `AesServedEnv` (an OpenEnv `Environment`) per WebSocket session, each
with its own aesenv core (episode state, workspace, budget) over the server's one shared
`RewardPipeline` (browser pool, sandbox workers, judges), as the runner shares one between
concurrent episodes: every episode still gets its own browser context and fresh sandbox
workspaces, and nothing of one session is reachable from another.

Bounds: at most `max_sessions` sessions at once (the app's guard refuses more), each step within
`step_timeout_s` (then the episode is over, as our failure), each session within
`session_max_s` of wall time and closed after `session_idle_s` without a message (OpenEnv's
reaper), every message within `max_message_bytes`; a session's workspace and observations are
bounded by the env's own budget (`RefineBudget`). Closing a session (client gone, reaper,
server shutdown) cancels its step in flight: a sandbox job is killed with its worker, which is
replaced; a page is closed with its context; a Webdev-Bench session's run is cancelled.

Untrusted input never raises out of a step: a malformed tool call is the refine env's error
observation; an action in a form the env cannot use (`aesenv.serve.forms`), a bad task or bad
options, a step without an episode or past its end is a typed `ErrorInfo`; our own failure is
`ErrorInfo(infra=True)` with `reward` None. Only an error that ends the episode says `done`.

A session's options (`SessionOptions`, at reset) shape what comes back (`aesenv.serve.shaping`):
the reward's scale, images, the record's frames.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import BaseModel, Field, ValidationError

from aesenv.version import __version__
from aesenv.envs import make_core
from aesenv.envs.base import utf8_clean
from aesenv.envs.refine import as_text
from aesenv.kinds import env_ids
from aesenv.llm.client import image_part
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.serve.forms import FORMS, BadAction, served_mode
from aesenv.wire import (ENDS_EPISODE, AesAction, AesObservation, AesState, ErrorInfo, ResetParams,
                                 SessionOptions)
from aesenv.serve.shaping import FrameStore, chosen_reward, frames_by_reference, shape_images
from aesenv.serve.webdev import WEBDEV_ENV_ID, WebdevCore
from aesenv.text import shown

log = logging.getLogger(__name__)


class Connection:
    """The client side of one WebSocket session, as the app's guard sees it."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()


CONNECTION: contextvars.ContextVar[Connection | None] = contextvars.ContextVar("aesenv_serve_connection",
                                                                             default=None)


class ServeSettings(BaseModel):
    """What a server serves and its bounds (`aesenv serve` flags)."""

    env_ids: list[str] = Field(default_factory=list)  # empty: every registered env, Webdev-Bench when its suite is known
    max_sessions: int = Field(8, ge=1, le=1024)
    session_idle_s: float = Field(600.0, gt=0)
    session_max_s: float = Field(4 * 3600.0, gt=0)
    step_timeout_s: float = Field(1800.0, gt=0)
    max_message_bytes: int = Field(8 << 20, ge=1 << 16)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    tasks: dict[str, str] = Field(default_factory=dict)  # env id -> task source (default: the kind's suite)
    webdev_suite: str | None = None  # Webdev-Bench's suite folder; AesWebdevBench-v0 is served when set
    webdev_user: str = "offline"

    def served(self) -> list[str]:
        known = [*env_ids(), *([WEBDEV_ENV_ID] if self.webdev_suite else [])]
        chosen = self.env_ids or known
        unknown = [e for e in chosen if e not in known]
        if unknown:
            raise ValueError(f"not a servable env: {unknown}; servable here: {known}")
        return chosen


class Hub:
    """What every session of one server shares: the event loop, the pipeline, the live sessions."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.pipeline = RewardPipeline(settings.pipeline).validate()  # a bad config fails at start-up, not in a session
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sessions: set[AesServedEnv] = set()
        self.frames = FrameStore(max_age_s=settings.session_idle_s + settings.step_timeout_s)
        self._background: set[asyncio.Task] = set()
        self._described: dict[str, Any] = {}

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.pipeline.start()

    async def close(self) -> None:
        for env in list(self.sessions):
            await env.aclose()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await self.pipeline.close()

    def spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def core(self, env_id: str) -> Any:
        if env_id == WEBDEV_ENV_ID:
            return WebdevCore(self.settings.webdev_suite, self.pipeline, user=self.settings.webdev_user)
        return make_core(env_id, self.settings.tasks.get(env_id), pipeline=self.pipeline)

    def described(self, env_id: str) -> Any:
        """A core of `env_id` that never plays, built once: what the env's tasks, tools and budget
        are, for `/schema`, `/metadata`, `/tasks` and `/mcp` (it shares the pipeline, holds nothing)."""
        if env_id not in self._described:
            self._described[env_id] = self.core(env_id)
        return self._described[env_id]

    def catalog(self, env_id: str) -> list[Any]:
        """The env's tasks (`Task`s; Webdev-Bench's `CompositeTask`s)."""
        core = self.described(env_id)
        return core.tasks() if env_id == WEBDEV_ENV_ID else list(core.tasks)

    def tools(self, env_id: str) -> list[dict]:
        """The tools (OpenAI schemas) the env's episodes offer; none for Webdev-Bench, whose tools
        come with its rounds, and none for single-turn envs (their `answer` tool: `forms`)."""
        if served_mode(env_id) != "refine":
            return []
        return list(self.described(env_id).tools)

    def budget(self, env_id: str) -> Any:
        """The refine envs' `RefineBudget` (None: a single step, or Webdev-Bench's own rounds)."""
        if served_mode(env_id) != "refine":
            return None
        return self.described(env_id).budget


def _finite(value: Any) -> Any:
    """JSON-ready: NaN and infinities become None (JSON has no NaN), strings valid UTF-8."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return utf8_clean(value)


class AesServedEnv(Environment[AesAction, AesObservation, AesState]):
    """One session of one env id. OpenEnv calls `reset_async`/`step_async` on the server's loop
    and `close` from a worker thread (or on the loop, for its stateless HTTP endpoints)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, hub: Hub, env_id: str) -> None:
        super().__init__()
        self.hub, self.env_id = hub, env_id
        self.mode = served_mode(env_id)
        self.core: Any = None
        self.created = time.monotonic()
        self.episode_id: str | None = None
        self.task_id: str | None = None
        self.turn = 0
        self.done = True
        self.started = False  # a reset has succeeded in this session
        self.closed = False
        self.options = SessionOptions()
        self._step: asyncio.Future | None = None
        self._turn_lock = asyncio.Lock()  # one reset or step at a time (HTTP /mcp sessions can overlap calls)
        hub.sessions.add(self)

    # ------------------------------------------------------------------ OpenEnv's interface
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> AesObservation:
        raise NotImplementedError("aesenv's served envs are async: OpenEnv calls reset_async")

    def step(self, action: AesAction, timeout_s: float | None = None, **kwargs: Any) -> AesObservation:
        raise NotImplementedError("aesenv's served envs are async: OpenEnv calls step_async")

    @property
    def state(self) -> AesState:
        budget = self.hub.budget(self.env_id)
        return AesState(episode_id=self.episode_id, step_count=self.turn, env_id=self.env_id, task_id=self.task_id,
                        turn=self.turn, max_turns=budget.max_turns if budget is not None else None, done=self.done,
                        options=self.options, active_sessions=len(self.hub.sessions))

    def get_metadata(self) -> EnvironmentMetadata:
        from aesenv.serve.describe import metadata

        return metadata(self.hub, self.env_id)

    @property
    def mcp_server(self) -> Any:
        """The session's tools as OpenEnv's `/mcp` serves them (`tools/list`, `tools/call`)."""
        from aesenv.serve.mcp import SessionTools

        return SessionTools(self) if self.mode != "webdev" else None

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, task: Any = None,
                          options: Any = None, **extra: Any) -> AesObservation:
        async with self._turn_lock:
            return await self._reset(seed=seed, episode_id=episode_id, task=task, options=options, **extra)

    async def _reset(self, **given: Any) -> AesObservation:
        if problem := self._unusable():
            return problem
        given = {k: v for k, v in given.items() if v is not None}
        try:
            params = ResetParams(**given)
        except ValidationError as exc:  # the task or seed is `bad_task`; anything else reset was given, `bad_options`
            unknown = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden"]
            options = unknown or any(e["loc"][:1] == ("options",) for e in exc.errors())
            why = f"reset takes task, seed, episode_id and options; not {unknown}" if unknown else _why(exc)
            return self._error("bad_options" if options else "bad_task", f"the reset could not be used: {why}")
        seed, task = params.seed, _with_id(params.task)
        try:
            if self.core is None:
                self.core = self.hub.core(self.env_id)
            if self.mode == "webdev":
                messages, info = await self._bounded(self.core.reset(task=task, seed=seed))
            else:
                chosen = self.core.pick(np.random.default_rng(seed), None if task is None else {"task": task})
                if self.mode == "single":
                    observation, info = await self._bounded(self.core.reset(chosen))
                    messages = info.pop("messages")
                else:
                    messages, info = await self._bounded(self.core.reset(task=chosen, seed=seed))
                    messages = _told_the_budget(messages, self.core.budget)
                    info["budget"] = self.core.budget.model_dump(mode="json")
        except (KeyError, ValueError, ValidationError, TypeError) as exc:
            if self.mode == "webdev":  # its reset ends the episode it had before looking at the task
                self.done = True
            return self._error("bad_task", f"the task could not be used: {_why(exc)}")
        except _StepTimeout:
            self.done = True
            return self._error("step_timeout", f"reset took over {self.hub.settings.step_timeout_s} s on our side",
                               infra=True)
        except _ClientGone:
            self.done = True
            return self._error("session_closed", "the client went away during reset")
        except Exception as exc:  # noqa: BLE001 - ours: a typed error, never a crashed session
            log.exception("serve: %s reset failed", self.env_id)
            self.done = True
            return self._error("infra", f"reset failed on our side: {_why(exc)}", infra=True)
        self.episode_id, self.turn, self.done, self.started = params.episode_id, 0, False, True
        self.options = params.options
        self.task_id = info.get("task_id")
        tools = getattr(self.core, "tools", None) if self.mode != "single" else None
        return AesObservation(
            env_id=self.env_id, task_id=self.task_id, messages=_finite(shape_images(messages, self.options.images)),
            done=False, reward=None, observation=_finite(observation) if self.mode == "single" else None,
            text=None if self.mode == "single" else as_text(messages), tools=_finite(tools) if tools else None,
            info=_finite(info))

    async def step_async(self, action: AesAction, timeout_s: float | None = None, **_: Any) -> AesObservation:
        async with self._turn_lock:
            return await self._take(action, timeout_s)

    async def _take(self, action: AesAction, timeout_s: float | None) -> AesObservation:
        if problem := self._unusable():
            return problem
        if self.core is None or not self.started:
            return self._error("no_episode", "no episode is running in this session: reset first (over the /ws "
                                             "session; HTTP POST /step runs on a fresh env, see /schema's `calls`)")
        if self.done:
            return self._error("episode_over", "the episode has ended: call reset for a new one")
        read = FORMS[self.mode].read(action)
        if isinstance(read, BadAction):
            return self._error("bad_action", f"{read.message} (the episode goes on; see /schema's `action_forms`)")
        self.turn += 1
        try:
            messages, reward, terminated, truncated, info = await self._bounded(self.core.step(read), timeout_s)
        except _StepTimeout:
            self.done = True
            return self._error("step_timeout", "the step did not finish in time on our side; the episode is over",
                               infra=True)
        except _ClientGone:
            self.done = True
            return self._error("session_closed", "the client went away during the step")
        except Exception as exc:  # noqa: BLE001 - the cores never raise for an action: this is ours
            log.exception("serve: %s step failed", self.env_id)
            self.done = True
            return self._error("infra", f"the step failed on our side: {_why(exc)}", infra=True)
        self.done = bool(terminated or truncated)
        valid = not (isinstance(reward, float) and math.isnan(reward))
        reward = float(reward) if valid else None
        if valid and info.get("record"):
            reward, info["reward_name"] = chosen_reward(reward, info["record"], self.options)
            valid = reward is not None
        if self.options.frames == "reference" and info.get("record"):
            info["record"] = frames_by_reference(info["record"], self.hub.frames)
        budget = getattr(self.core, "budget", None)
        if self.mode == "refine" and budget is not None:
            info["turns_left"] = max(0, budget.max_turns - self.turn)
        texts = None
        if self.mode == "single":  # the core's observation is the task's texts; the picture goes in a message
            texts, text = messages, f"[Episode ended. Reward: {reward if valid else 'none (our side failed)'}]"
            last = self.core.last
            picture = (last.picture or last.screen) if last is not None else None
            messages = [{"role": "user", "content": [{"type": "text", "text": text}, image_part(picture)]
                         if picture else text}]
        observation = AesObservation(
            env_id=self.env_id, task_id=self.task_id, messages=_finite(shape_images(messages, self.options.images)),
            done=self.done, observation=_finite(texts), reward=reward, truncated=bool(truncated),
            reward_valid=bool(info.get("reward_valid", True)) and valid,
            text=None if self.mode == "single" else as_text(messages), info=_finite(info))
        observation.metadata = observation.info
        return observation

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        loop = self.hub.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or loop.is_closed():
            self.hub.sessions.discard(self)
        elif running is loop:
            self.hub.spawn(self.aclose())
        else:  # OpenEnv's session executor thread: wait, so a destroyed session is a cleaned-up one
            try:
                asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(timeout=120)
            except Exception:  # noqa: BLE001 - best effort; the pipeline's own close kills the rest
                log.exception("serve: closing a %s session failed", self.env_id)

    async def aclose(self) -> None:
        self.closed = True
        self.hub.sessions.discard(self)
        if self._step is not None and not self._step.done():
            self._step.cancel()
            await asyncio.gather(self._step, return_exceptions=True)
        core, self.core = self.core, None
        if core is not None:
            await core.close()

    # ------------------------------------------------------------------ helpers
    async def _bounded(self, coro, timeout_s: float | None = None):
        """Run one reset or step as its own task within the deadline; it is cancelled when the
        session closes, the deadline passes or the client goes (the guard's `Connection`)."""
        limit = min(timeout_s or math.inf, self.hub.settings.step_timeout_s)
        self._step = step = asyncio.ensure_future(coro)
        connection = CONNECTION.get()
        gone = asyncio.ensure_future(connection.gone.wait()) if connection is not None else None
        try:
            await asyncio.wait({step, gone} - {None}, timeout=None if math.isinf(limit) else limit,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            if gone is not None:
                gone.cancel()
            if not step.done():
                step.cancel()
                await asyncio.gather(step, return_exceptions=True)
        if step.cancelled():
            if connection is not None and connection.gone.is_set():
                raise _ClientGone
            if self.closed:
                raise _ClientGone
            raise _StepTimeout
        return step.result()

    def _unusable(self) -> AesObservation | None:
        if self.closed:
            return self._error("session_closed", "this session was closed (idle too long, or the server is "
                                                 "stopping): open a new one")
        if time.monotonic() - self.created > self.hub.settings.session_max_s:
            self.done = True
            return self._error("session_expired", f"sessions last at most {self.hub.settings.session_max_s} s: "
                                                  "open a new one")
        return None

    def _error(self, code: str, message: str, *, infra: bool = False) -> AesObservation:
        """A typed error; `done` only when the code ends the episode (`ENDS_EPISODE`)."""
        return AesObservation(env_id=self.env_id, task_id=self.task_id, done=ENDS_EPISODE[code], reward=None,
                              reward_valid=not infra, error=ErrorInfo(code=code, message=shown(message, 1900),
                                                                      infra=infra))


class _StepTimeout(Exception):
    pass


class _ClientGone(Exception):
    pass


def _with_id(task: Any) -> Any:
    """A whole task given without an `id` gets one from its content (`inline-<hash>`), so the
    README's `{"prompt": ...}` form is a task."""
    if isinstance(task, dict) and not task.get("id"):
        digest = hashlib.sha256(json.dumps(task, sort_keys=True, default=str).encode()).hexdigest()[:12]
        return {**task, "id": f"inline-{digest}"}
    return task


def _told_the_budget(messages: list[dict], budget: Any) -> list[dict]:
    """The first turn with the episode's budget said in its system message: the agent plays
    against limits it can read, not ones it discovers by running out."""
    note = (f"\n\nBudget: at most {budget.max_turns} turns (every message you send is one, an invalid tool call "
            f"included) and {int(budget.max_wall_s)} s; at most {budget.max_calls_per_turn} tool calls run per "
            "message. When the budget runs out, the workspace is scored as it is.")
    for index, message in enumerate(messages):
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            return [*messages[:index], {**message, "content": message["content"] + note}, *messages[index + 1:]]
    return [{"role": "system", "content": note.strip()}, *messages]


def _why(exc: BaseException) -> str:
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    return f"{type(exc).__name__}: {shown(str(text), 600)}"


def suite_of_webdev() -> str | None:
    """Webdev-Bench's suite folder, found through the `webdev` benchmark's entry point (aesenv
    never imports the benchmarks package by name); None where it is not installed."""
    import sys
    from importlib import metadata

    for entry in metadata.entry_points(group="aesenv.benchmarks"):
        if entry.name == "webdev":
            try:
                main = entry.load()
            except Exception:  # noqa: BLE001 - not installed here: no Webdev-Bench env
                return None
            suite = getattr(sys.modules.get(main.__module__), "SUITE", None)
            return str(suite) if suite is not None and Path(suite).is_dir() else None
    return None


__all__ = ["CONNECTION", "AesServedEnv", "Connection", "Hub", "ServeSettings", "suite_of_webdev"]
