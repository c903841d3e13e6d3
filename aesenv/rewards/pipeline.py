"""`RewardPipeline`: the one path from model text to a `RewardRecord`.

text → artifact → rendering → channels (concurrently, each under a deadline) → aggregates.
Plot tasks take the same path with a sandbox run in place of the rendering, and the plot
channels registered under the same names (`CHANNELS_BY_KIND`): one record, one aggregation.
The env, the CLI, the benchmarks and veRL all call `score`; there is no second copy.
"""

from __future__ import annotations

import asyncio
import platform
import time
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from pydantic import BaseModel, Field

import aesenv
from aesenv.artifact import Artifact, ArtifactKind, extract_artifact
from aesenv.judges import StaticJudge, make_judge
from aesenv.lint.htmlhint import HtmlHint
from aesenv.plots import PlotJudge, make_plot_judge
from aesenv.plots.plotly_png import with_plotly_pngs
from aesenv.render import Renderer, RenderConfig, Rendering
from aesenv.rewards.aggregate import AGGREGATORS
from aesenv.rewards.channel import CHANNELS_BY_KIND, ChannelResult, Evidence, RewardChannel
from aesenv.rewards.plot import plot_failure
from aesenv.rewards.record import ArtifactInfo, RewardRecord
from aesenv.sandbox.base import PlotRun, Sandbox, make_sandbox
from aesenv.tasks import Task


class PipelineConfig(BaseModel):
    channels: list[str] = Field(default_factory=lambda: ["execution", "static", "interactive"])
    judge: str = "offline"
    judge_options: dict[str, Any] = Field(default_factory=dict)  # e.g. {"samples": 3} for openai:<model>
    reward: str = "paper"
    channel_timeout_s: float = 60.0
    render: RenderConfig = Field(default_factory=RenderConfig)
    sandbox: str = "local"  # where plot scripts run: "local" or "docker"
    # The interactive agent: None follows the judge (`offline` → the deterministic explorer,
    # `openai:<model>` → the VLM web agent), or name one; N = scored interactions per page.
    interactor: str | None = None
    interactor_options: dict[str, Any] = Field(default_factory=dict)  # ClientConfig fields for a VLM agent
    interaction_budget: int = Field(default=3, ge=1)

    def model_post_init(self, _: object) -> None:
        known = sorted({name for registry in CHANNELS_BY_KIND.values() for name in registry})
        unknown = [c for c in self.channels if c not in known]
        if unknown:
            raise ValueError(f"unknown channels {unknown}; available: {known}")
        if self.reward not in AGGREGATORS:
            raise ValueError(f"unknown reward {self.reward!r}; available: {list(AGGREGATORS)}")


@dataclass
class Scored:
    """A record plus the rendering or plot run it came from (images stay in memory, not in JSON)."""

    record: RewardRecord
    rendering: Rendering | None
    artifact: Artifact
    plot: PlotRun | None = None

    @property
    def picture(self) -> bytes | None:
        """The PNG a report shows: the full-page screenshot, or the first figure that has one."""
        if self.rendering is not None:
            return self.rendering.full_page_png
        return next((f.png for f in self.plot.figures if f.png), None) if self.plot else None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


class RewardPipeline:
    """Owns the renderer, the linter, the judges and the plot sandbox (started on first use).
    `async with RewardPipeline() as p: ...`."""

    def __init__(self, config: PipelineConfig | None = None, *, renderer: Renderer | None = None,
                 judge: StaticJudge | None = None, linter: HtmlHint | None = None,
                 sandbox: Sandbox | None = None, plot_judge: PlotJudge | None = None) -> None:
        self.config = config or PipelineConfig()
        self.renderer = renderer or Renderer(self.config.render)
        self.judge = judge or make_judge(self.config.judge, **self.config.judge_options)
        self.plot_judge = plot_judge or make_plot_judge(self.config.judge, **self.config.judge_options)
        self.linter = linter or HtmlHint()
        self.sandbox = sandbox or make_sandbox(self.config.sandbox)
        deps = {"linter": self.linter, "judge": self.judge, "renderer": self.renderer, "plot_judge": self.plot_judge,
                "config": self.config}
        self.channels_by_kind: dict[str, list[RewardChannel]] = {
            kind: [registry[name](**deps) for name in self.config.channels if name in registry]
            for kind, registry in CHANNELS_BY_KIND.items()
        }
        self.channels = self.channels_by_kind["web"]

    async def __aenter__(self) -> "RewardPipeline":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        await self.renderer.start()

    async def close(self) -> None:
        await self.linter.close()
        await self.renderer.close()
        await self.sandbox.close()
        owners = [self.judge, self.plot_judge, *(c for cs in self.channels_by_kind.values() for c in cs)]
        for owner in owners:
            close = getattr(owner, "close", None)  # VLM judges and agents hold an HTTP client
            if close is not None:
                await close()

    def provenance(self) -> dict[str, str]:
        return {
            "aesenv": aesenv.__version__,
            "python": platform.python_version(),
            "playwright": _version("playwright"),
            **self.renderer.provenance,
            "judge": self.judge.name,
            "judge_version": self.judge.version,
            "reward": self.config.reward,
            "sandbox": self.config.sandbox,
        }

    async def score(self, task: Task, text: str | bytes, *, files: dict[str, bytes] | None = None) -> Scored:
        """Score one answer. Never raises for a bad answer; our own failures are masked.
        `files`: the answer's other files (a multi-file page's assets served next to it, or
        files a plot script reads besides the task's data), e.g. a refine episode's workspace."""
        scorers = {"web": self._score_web, "plot": self._score_plot}
        if task.kind not in scorers:
            raise ValueError(f"task {task.id}: {task.kind!r} tasks are not scored yet (scored: {sorted(scorers)})")
        return await scorers[task.kind](task, text, files or {})

    async def _score_plot(self, task: Task, text: str | bytes, extra_files: dict[str, bytes]) -> Scored:
        """The script runs in the sandbox next to the task's data files; plotly figures are drawn
        by the renderer when the plot judge looks at images (plotly.js costs seconds to load);
        the plot channels judge the run."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        artifact = extract_artifact(text)
        timings["extract"] = round((time.perf_counter() - start) * 1000, 1)
        run = None
        if artifact.kind is ArtifactKind.PYTHON:
            t = time.perf_counter()
            files = {**extra_files, **{name: data.encode("utf-8") for name, data in task.data_files.items()}}
            run = await self.sandbox.run_plot(artifact.code, files)
            if self.plot_judge.needs_images:
                run = await with_plotly_pngs(run, self.renderer)
            timings["run"] = round((time.perf_counter() - t) * 1000, 1)
        plot_channels = self.channels_by_kind["plot"]
        results = await self._judge(Evidence(task, artifact, None, plot=run), timings, plot_channels)
        timings["total"] = round((time.perf_counter() - start) * 1000, 1)
        channels = {c.name: r for c, r in zip(plot_channels, results)}
        record = self._record(task, artifact, None, channels, timings, failure=plot_failure(artifact, run))
        return Scored(record=record, rendering=None, artifact=artifact, plot=run)

    async def _score_web(self, task: Task, text: str | bytes, files: dict[str, bytes]) -> Scored:
        timings: dict[str, float] = {}
        start = time.perf_counter()
        artifact = extract_artifact(text)
        timings["extract"] = round((time.perf_counter() - start) * 1000, 1)
        # An artboard task renders at its canvas size; channels with task-level setup (a
        # reference rendering) do it first, before this page holds a render slot.
        viewport = (task.canvas.width, task.canvas.height) if task.canvas else None
        await asyncio.gather(*(c.prepare(task) for c in self.channels if hasattr(c, "prepare")))
        if not artifact.renderable:
            results, rendering = await self._judge(Evidence(task, artifact, None), timings), None
        elif any(getattr(c, "needs_live_page", False) for c in self.channels):
            t = time.perf_counter()
            async with self.renderer.session(artifact.code, files=files, viewport=viewport) as (rendering, live):
                timings["render"] = round((time.perf_counter() - t) * 1000, 1)
                results = await self._judge(Evidence(task, artifact, rendering, live), timings)
        else:
            t = time.perf_counter()
            rendering = await self.renderer.render(artifact.code, files=files, viewport=viewport)
            timings["render"] = round((time.perf_counter() - t) * 1000, 1)
            results = await self._judge(Evidence(task, artifact, rendering), timings)
        timings["total"] = round((time.perf_counter() - start) * 1000, 1)
        channels = {c.name: r for c, r in zip(self.channels, results)}
        record = self._record(task, artifact, rendering, channels, timings)
        return Scored(record=record, rendering=rendering, artifact=artifact)

    async def _judge(self, evidence: Evidence, timings: dict[str, float],
                     channels: list[RewardChannel] | None = None) -> list[ChannelResult]:
        """Every channel (the web ones unless given) on the same evidence, concurrently."""
        t = time.perf_counter()
        results = await asyncio.gather(*(self._run_channel(c, evidence) for c in channels or self.channels))
        timings["channels"] = round((time.perf_counter() - t) * 1000, 1)
        return list(results)

    async def _run_channel(self, channel: RewardChannel, evidence: Evidence) -> ChannelResult:
        # A channel that calls a remote model may need longer than the default: it says how long
        # its calls can take with every retry, so the pipeline never cuts a retry short.
        deadline = max(self.config.channel_timeout_s, getattr(channel, "deadline_s", None) or 0.0)
        try:
            return await asyncio.wait_for(channel.score(evidence), deadline)
        except asyncio.TimeoutError:
            return ChannelResult.infra_error(f"{channel.name} exceeded its {deadline:.0f}s deadline")
        except Exception as exc:  # noqa: BLE001 - a channel bug must not crash the batch
            return ChannelResult.infra_error(f"{channel.name} raised {type(exc).__name__}: {exc}")

    def _record(self, task: Task, artifact: Artifact, rendering: Rendering | None,
                channels: dict[str, ChannelResult], timings: dict[str, float],
                failure: str | None = None) -> RewardRecord:
        reward = AGGREGATORS["paper"](channels)
        normalized = AGGREGATORS["normalized"](channels)
        infra = reward is None or normalized is None
        if failure is None:
            failure = ""
            if not artifact.renderable:
                failure = f"{artifact.kind.value}: {artifact.reason}"
            elif rendering is not None and rendering.error and not infra:
                failure = rendering.error
        provenance = self.provenance()
        exec_payload = channels.get("execution")
        if exec_payload is not None and exec_payload.payload.get("htmlhint_version"):
            provenance["htmlhint"] = exec_payload.payload["htmlhint_version"]
        return RewardRecord(
            task_id=task.id, category=task.category.value, status="infra_error" if infra else "ok",
            failure=failure, reward=reward, normalized=normalized, reward_name=self.config.reward,
            channels=channels,
            artifact=ArtifactInfo(kind=artifact.kind.value, sha256=artifact.sha256, bytes=artifact.source_bytes,
                                  truncated=artifact.truncated, reason=artifact.reason),
            rendering=rendering.summary() if rendering is not None else None,
            timings_ms=timings, provenance=provenance)
