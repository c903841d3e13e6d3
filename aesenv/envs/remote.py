"""aesenv's envs over the wire: a client of `aesenv serve` (or of the serving image) that gives
the same APIs as the local envs, so runners, `aesenv run`, benchmarks and veRL's agent loop drive
a remote env unchanged.

- `AesEnvClient`: OpenEnv's `EnvClient` typed with aesenv's wire models (and the token header).
- `AsyncRemoteEnv`: the async core's interface (`await reset(task=..., seed=...)`, `await
  step(action)` → the 5-tuple, `tools`, `env_id`, `last`), what `make_core(env_id, remote=URL)`
  returns.
- `RemoteEnv`: the Gymnasium facade, what `gym.make("AesWeb-v0", remote="http://host:port")` makes.
- `RemoteScorer`: `score(task, answer)` like `RewardPipeline.score`, through a served
  single-turn env (`aesenv bench opendesign --env-url URL`).

The URL is the server's (`http://host:port`; the env id is appended) or an env's own
(`http://host:port/AesWeb-v0`). The token comes from `token=` or `AESENV_SERVE_TOKEN`. Our
server's failures stay failures: a reward the server could not compute is NaN with
`info["reward_valid"]` False, as locally; a typed error the episode cannot go on from raises
`RemoteError` (its `code` and `infra`).
"""

from __future__ import annotations

import base64
import math
import os
from typing import Any

import gymnasium as gym
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.asyncio.client import connect as ws_connect

from aesenv.wire import AesAction, AesObservation, AesState, ErrorInfo

TOKEN_ENV = "AESENV_SERVE_TOKEN"
DEFAULT_STEP_TIMEOUT_S = 1900.0  # above the server's own step deadline: the server says when a step is late


class RemoteError(RuntimeError):
    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code, self.infra = error.code, error.infra


class AesEnvClient(EnvClient[AesAction, AesObservation, AesState]):
    """OpenEnv's WebSocket client with aesenv's typed models; sends the token as a bearer header."""

    def __init__(self, base_url: str, *, token: str | None = None, message_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
                 max_message_size_mb: float = 64.0, **kwargs: Any) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, max_message_size_mb=max_message_size_mb,
                         **kwargs)
        self._token = token if token is not None else os.environ.get(TOKEN_ENV) or None

    async def connect(self) -> AesEnvClient:
        if self._ws is not None:
            return self
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        try:
            self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                                        additional_headers=headers, proxy=None)
        except Exception as exc:
            raise ConnectionError(f"cannot open a session at {self._ws_url}: {exc}") from exc
        return self

    def _step_payload(self, action: AesAction) -> dict[str, Any]:
        return action.model_dump(mode="json", exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[AesObservation]:
        observation = AesObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                     done=payload.get("done", False))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> AesState:
        return AesState(**payload)


def env_url(url: str, env_id: str | None) -> str:
    """The env's own base URL: `url` as given when it already names `env_id` (or no id is given)."""
    base = url.rstrip("/")
    if env_id is None or base.endswith("/" + env_id):
        return base
    return f"{base}/{env_id}"


def as_action(action: str | bytes | dict | AesAction) -> AesAction:
    """Whatever a local core's `step` takes, as the wire action."""
    if isinstance(action, AesAction):
        return action
    if isinstance(action, bytes):
        action = action.decode("utf-8", "replace")
    if isinstance(action, str):
        return AesAction(text=action)
    if isinstance(action, dict):
        return AesAction(message=dict(action))
    raise TypeError(f"an action is a text or an assistant message, not {type(action).__name__}")


def data_url_image(messages: list[dict]) -> bytes | None:
    """The first image of `messages` (a data: URL image part), decoded."""
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
            if url.startswith("data:") and "," in url:
                return base64.b64decode(url.split(",", 1)[1])
    return None


class AsyncRemoteEnv:
    """A served env with the async core's interface (one WebSocket session; `close()` ends it)."""

    def __init__(self, url: str, env_id: str | None = None, *, token: str | None = None,
                 step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> None:
        self.env_id = env_id or url.rstrip("/").rsplit("/", 1)[-1]
        self.client = AesEnvClient(env_url(url, env_id), token=token, message_timeout_s=step_timeout_s)
        self.tools: list[dict] = []
        self.task: dict | None = None
        self.single: bool | None = None
        self.last_observation: AesObservation | None = None
        self.last_record: dict | None = None
        self.last_picture: bytes | None = None

    async def reset(self, task: Any = None, *, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        """`task`: a task id in the served env's suite, a `Task` (sent whole) or None (picked by `seed`)."""
        if hasattr(task, "model_dump"):
            task = task.model_dump(mode="json")
        kwargs = {k: v for k, v in {"task": task, "seed": seed}.items() if v is not None}
        observation = (await self.client.reset(**kwargs)).observation
        if observation.error is not None:
            raise RemoteError(observation.error)
        self.last_observation, self.last_record, self.last_picture = observation, None, None
        self.single = observation.observation is not None
        self.tools = list(observation.tools or [])
        self.task = observation.info.get("task")
        info = {**observation.info, "task_id": observation.task_id}
        if self.single:
            return observation.observation, {**info, "messages": observation.messages}
        return observation.messages, info

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation = (await self.client.step(as_action(action))).observation
        self.last_observation = observation
        if observation.error is not None:
            if not observation.error.infra:
                if observation.error.code == "episode_over":
                    raise gym.error.ResetNeeded(observation.error.message)
                raise RemoteError(observation.error)
            info = {"reward_valid": False, "record": None, "status": "infra_error", "end": "infra_error",
                    "error": observation.error.message, "potential": 0.0}
            return [], math.nan, False, True, info
        reward = math.nan if observation.reward is None else float(observation.reward)
        info = {**observation.info, "reward_valid": observation.reward_valid}
        if observation.done:
            self.last_record = info.get("record")
            self.last_picture = data_url_image(observation.messages)
        terminated = observation.done and not observation.truncated
        if self.single:
            return self.last_observation_texts(), reward, terminated, observation.truncated, info
        return observation.messages, reward, terminated, observation.truncated, info

    def last_observation_texts(self) -> dict[str, str]:
        return (self.last_observation.observation if self.last_observation else None) or {}

    @property
    def last(self):
        """The final result as a `Scored` (the record and the picture; no rendering crosses the wire)."""
        if self.last_record is None:
            return None
        from aesenv.artifact import Artifact, ArtifactKind
        from aesenv.rewards import RewardRecord
        from aesenv.rewards.pipeline import Scored

        record = RewardRecord.model_validate(self.last_record)
        return Scored(record=record, rendering=None, artifact=Artifact(kind=ArtifactKind.EMPTY, code=""),
                      picture=self.last_picture)

    async def state(self) -> AesState:
        return await self.client.state()

    async def close(self) -> None:
        await self.client.disconnect()


class RemoteEnv(gym.Env):
    """The Gymnasium facade over `AsyncRemoteEnv`, with the local facade's spaces and returns."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, url: str, env_id: str, *, token: str | None = None, render_mode: str | None = None,
                 step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> None:
        from aesenv.envs.spaces import UnicodeText
        from aesenv.kinds import mode_of
        from aesenv.loop import LoopThread

        kind, mode = mode_of(env_id)
        self.env_id, self.mode, self.render_mode = env_id, mode, render_mode
        self.step_timeout_s = step_timeout_s
        self._core = AsyncRemoteEnv(url, env_id, token=token, step_timeout_s=step_timeout_s)
        self._loop = LoopThread(name="aesenv-remote")
        if mode == "single":
            self.observation_space = gym.spaces.Dict({key: UnicodeText(max_length=n)
                                                      for key, n in kind.asking.observation_lengths.items()})
        else:
            self.observation_space = UnicodeText(max_length=300_000)
        from aesenv.artifact import MAX_ARTIFACT_BYTES

        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)
        self._picture: bytes | None = None

    @property
    def core(self) -> AsyncRemoteEnv:
        return self._core

    def _run(self, coro):
        return self._loop.run(coro, timeout=self.step_timeout_s + 60)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        observation, info = self._run(self._core.reset((options or {}).get("task"), seed=seed))
        if self.mode == "single":
            return observation, info
        return self._core.last_observation.text or "", {**info, "messages": observation}

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self._run(self._core.step(action))
        if self.mode == "single":
            return observation, reward, terminated, truncated, info
        return (self._core.last_observation.text or "", reward, terminated, truncated, {**info, "messages": observation})

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        png = self._core.last_picture or data_url_image(self._core.last_observation.messages
                                                        if self._core.last_observation else [])
        if png is None:
            return None
        import io

        import numpy as np
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        if self._loop is not None:
            try:
                self._loop.run(self._core.close(), timeout=30)
            finally:
                self._loop.stop()
                self._loop = None
        super().close()


class RemoteScorer:
    """`await score(task, answer)` through a served single-turn env (one session per answer):
    the record the server's pipeline made, and its picture."""

    def __init__(self, url: str, *, token: str | None = None, step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> None:
        self.url, self.token, self.step_timeout_s = url, token, step_timeout_s

    async def __aenter__(self) -> RemoteScorer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def remote_env(self, task: Any, mode: str = "single") -> AsyncRemoteEnv:
        """A session of `task`'s kind's env of `mode` (the refine runner drives one per episode)."""
        from aesenv.kinds import kind_of

        return AsyncRemoteEnv(self.url, kind_of(task).env_id(mode), token=self.token,
                              step_timeout_s=self.step_timeout_s)

    async def score(self, task: Any, text: str | bytes, *, files: dict[str, bytes] | None = None):
        if files:
            raise ValueError("a remote single-turn env scores one answer text; files travel in refine episodes")
        env = self.remote_env(task)
        try:
            await env.reset(task)
            _, _, _, _, info = await env.step(text)
        finally:
            await env.close()
        scored = env.last
        if scored is None:
            raise RemoteError(ErrorInfo(code="infra", infra=True,
                                        message=f"the server scored nothing: {info.get('error') or 'no record'}"))
        from aesenv.kinds import kind_of

        scored.artifact = kind_of(task).extract(text)
        return scored

