"""What every aesenv environment shares, whatever its kind and mode: task picking over one
kind's tasks, the task's reference as an image in the first prompt (`with_reference`), the record
in `info`, NaN for our own failures, and the Gymnasium facade that runs an async core on a
private loop thread.

The two modes are `single` (`aesenv.envs.single`: one scored step) and `refine`
(`aesenv.envs.refine`: a multi-turn workspace). Each takes the kind by name, which is what a
Gymnasium `EnvSpec` carries (`kwargs={"kind": "web"}`); scoring is always `RewardPipeline.score`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from aesenv.kinds import KINDS
from aesenv.kinds.base import Kind
from aesenv.llm.client import image_part
from aesenv.loop import LoopThread
from aesenv.rewards import PipelineConfig, RewardPipeline, RewardRecord, Scored
from aesenv.tasks import Task, load_tasks

TaskSource = str | list[Task]
REFERENCE_NOT_RENDERED = "\n(The reference screenshot could not be rendered on our side; reset to try again.)"


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


class AsyncKindEnv:
    """The async core over one kind's tasks: `await env.reset(...)`, then `await env.step(...)`."""

    mode: ClassVar[str]

    def __init__(self, tasks: TaskSource | None = None, *, kind: str | Kind, pipeline: RewardPipeline | None = None,
                 config: PipelineConfig | None = None) -> None:
        self.kind = KINDS[kind] if isinstance(kind, str) else kind
        self.env_id = self.kind.env_id(self.mode)
        source = self.kind.default_tasks if tasks is None else tasks
        self.tasks = load_tasks(source) if isinstance(source, str) else list(source)
        if not self.tasks:
            raise ValueError(f"{self.env_id} needs at least one task")
        wrong = [t.id for t in self.tasks if t.kind != self.kind.name]
        if wrong:
            raise ValueError(f"{self.env_id} takes {self.kind.name} tasks; not {wrong[:5]}")
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
            return Task(**{"kind": self.kind.name, **chosen})
        if chosen in self._by_id:
            return self._by_id[chosen]
        raise KeyError(f"no task with id {chosen!r} in this env's {len(self.tasks)} tasks")

    def screen(self) -> bytes | None:
        """The PNG `render()` shows: the latest result's first picture."""
        return self.last.screen if self.last else None

    async def with_reference(self, message: dict[str, Any], task: Task) -> dict[str, Any]:
        """The task's user turn with its reference attached as an image (`Kind.reference`), so a
        vision-language policy sees what it is compared with from the first observation; as it
        was when the kind shows no reference or the task has none. When our renderer fails the
        text says so, rather than let a caption promise an image that is not there."""
        if not self.kind.asking.shows_reference_for(task):
            return message
        png, _ = await self.kind.reference(self.pipeline.backends, task)
        if png is None:
            return {**message, "content": message["content"] + REFERENCE_NOT_RENDERED}
        caption = f"\n\n{self.kind.asking.reference_caption}" if self.kind.asking.reference_caption else ""
        return {**message, "content": [{"type": "text", "text": message["content"] + caption}, image_part(png)]}

    async def close(self) -> None:
        if self._owns_pipeline:
            await self.pipeline.close()


class KindEnv(gym.Env):
    """Gymnasium facade over an async core. Reward is the configured aggregate; NaN (with
    `info["reward_valid"]` False) when our own infrastructure failed, so it is never mistaken for
    a real 0. `sandbox="local"|"docker"` picks where untrusted code runs (recorded in every record)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}
    mode: ClassVar[str]  # the env id's mode (`single`, `refine`)
    core_class: ClassVar[Callable[..., AsyncKindEnv]]  # the async core's class or factory
    default_step_timeout_s: ClassVar[float] = 180.0

    def __init__(self, tasks: TaskSource | None = None, *, kind: str, config: PipelineConfig | dict | None = None,
                 sandbox: str | None = None, render_mode: str | None = None, step_timeout_s: float | None = None,
                 **core_options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.step_timeout_s = step_timeout_s or self.default_step_timeout_s
        if isinstance(config, dict):
            config = PipelineConfig(**config)
        if sandbox is not None:
            config = (config or PipelineConfig()).model_copy(update={"sandbox": sandbox})
        self._core = self.core_class(tasks, kind=kind, config=config, **core_options)
        self._loop: LoopThread | None = None

    @property
    def core(self) -> AsyncKindEnv:
        return self._core

    @property
    def tasks(self) -> list[Task]:
        return self._core.tasks

    @property
    def last(self) -> Scored | None:
        """The last scored result: record with timings, rendering or plot run with images."""
        return self._core.last

    def _run(self, coro):
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop.run(coro, timeout=self.step_timeout_s)

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        png = self._core.screen()
        if png is None:
            cfg = self._core.pipeline.config.render
            blank = self._core.kind.reader.blank_frame or (cfg.viewport_height, cfg.viewport_width)
            return np.full((*blank, 3), 255, dtype=np.uint8)
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        if self._loop is not None:
            self._loop.run(self._core.close(), timeout=60)
            self._loop.stop()
            self._loop = None
        super().close()


class EnvMaker:
    """What Gymnasium calls to make one of our envs (a registered id's `entry_point`): the local
    env class, or with `remote="http://host:port"` the same env served elsewhere (`aesenv serve`)
    through `aesenv.envs.remote.RemoteEnv`. The choice is made here, so an env class's constructor
    always makes an instance of that class. `metadata` is the class's (Gymnasium reads its render
    modes before making)."""

    def __init__(self, env_class: type[KindEnv]) -> None:
        self.env_class = env_class
        self.metadata = env_class.metadata

    def __call__(self, *args: Any, remote: str | None = None, **kwargs: Any) -> gym.Env:
        if remote is None:
            return self.env_class(*args, **kwargs)
        from aesenv.envs.remote import RemoteEnv

        kind = KINDS[kwargs["kind"]]
        options = {k: kwargs[k] for k in ("token", "render_mode", "step_timeout_s") if kwargs.get(k) is not None}
        return RemoteEnv(remote, kind.env_id(self.env_class.mode), **options)
