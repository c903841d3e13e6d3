"""`RewardPipeline`: the one path from model text to a `RewardRecord`, for every artifact kind.

text → the task's kind extracts the artifact → the kind makes the evidence (a rendering, a
sandbox run) → the kind's channels measure it (concurrently, each under a deadline) →
aggregates. The env, the CLI, the benchmarks and veRL all call `score`; a refine env's `render`
calls `inspect`, which makes the same evidence and describes it for the agent.
"""

from __future__ import annotations

import asyncio
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from typing import Any

from aesenv.version import __version__
from aesenv.artifact import Artifact
from aesenv.channels import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.kinds import KINDS, kind_of
from aesenv.kinds.base import Kind, Look, Backends
from aesenv.render import Renderer, Rendering
from aesenv.rewards.aggregate import AGGREGATORS
from aesenv.rewards.config import PipelineConfig
from aesenv.rewards.record import ArtifactInfo, RewardRecord
from aesenv.sandbox import CommandRun, PlotRun, Sandbox, SandboxLimits, make_sandbox
from aesenv.stages import collecting
from aesenv.tasks import Task

@dataclass
class Scored:
    """A record plus the rendering or plot run it came from (images stay in memory, not in JSON)."""

    record: RewardRecord
    rendering: Rendering | None
    artifact: Artifact
    plot: PlotRun | None = None
    picture: bytes | None = None  # the PNG a report shows (a page's full-page screenshot, a plot's first figure)
    # Makes the PNG `render()` shows (a page's first screen, a plot's first figure) when first asked
    # for: cutting a screen out of a full-page capture costs more than most channels, and a
    # training reward never looks at it.
    make_screen: Callable[[], bytes | None] | None = field(default=None, repr=False)

    @cached_property
    def screen(self) -> bytes | None:
        return self.make_screen() if self.make_screen is not None else None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (sent from a Ray actor) with the screen made: the maker holds the evidence."""
        state = {**self.__dict__, "screen": self.screen}
        state["make_screen"] = None
        return state


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


@dataclass
class _KindParts:
    """One kind's judge and channels in this pipeline, and the reward it hands the learner."""

    judge: Any
    channels: list[Channel]
    live: bool  # some channel needs the page kept open
    reward_problem: str | None = None  # why the configured reward cannot be this kind's (None: it can)


class RewardPipeline:
    """Owns the renderer, the sandbox, and per kind a judge and the configured channels (a page's
    linter is its execution channel's), built on the kind's first task (so `gym.make("AesWeb-v0")` loads no other kind).
    `validate()` builds every registered kind's parts at once, for a caller that wants a bad
    option to fail at start-up. `judges` replaces the judge of a kind (by kind name); `linter`,
a linter shared between pipelines (closed with this one), is handed to the channels that lint.
    `async with RewardPipeline() as p: ...`."""

    def __init__(self, config: PipelineConfig | None = None, *, renderer: Renderer | None = None,
                 linter: Any = None, sandbox: Sandbox | None = None,
                 judges: dict[str, Any] | None = None) -> None:
        self.config = config or PipelineConfig()
        self.renderer = renderer or Renderer(self.config.render)
        self.linter = linter
        self.sandbox = sandbox or make_sandbox(self.config.sandbox)
        self.backends = Backends(self.renderer, self.sandbox)
        self._given_judges = dict(judges or {})
        self._parts: dict[str, _KindParts] = {}
        self._names_checked = False

    def validate(self) -> "RewardPipeline":
        """Check the config's names and build every registered kind's judge and channels now
        (loading every kind): what a pipeline did on construction before its parts were lazy. An
        unknown channel, reward or option raises `ValueError` here rather than on a first task."""
        self._check_names(every_kind=True)
        for name in KINDS:
            self._parts_of(KINDS[name])
        return self

    def _check_names(self, first: Kind | None = None, *, every_kind: bool = False) -> None:
        """Channel names and the reward are the kinds': each name must be offered by some
        registered kind. Checked once, against `first` (the kind being built) and, only when it
        does not offer everything the config names, against every kind: each check passes for a
        few kinds only if it passes for all, so loading the rest is needed only to name an error."""
        if self._names_checked:
            return
        problem = None if every_kind or first is None else self._names_problem([first])
        if every_kind or first is None or problem is not None:
            problem = self._names_problem([KINDS[name] for name in KINDS])
        if problem is not None:
            raise ValueError(problem)
        self._names_checked = True

    def _names_problem(self, kinds: list[Kind]) -> str | None:
        """What in the config no kind in `kinds` offers (None: they offer all of it)."""
        offered = {name for kind in kinds for name in kind.channels}
        unknown = [c for c in [*self.config.channels, *self.config.channel_options] if c not in offered]
        if unknown:
            return f"unknown channels {unknown}; available: {sorted(offered)}"
        declared = {name for kind in kinds for name in kind.scoring.rewards}
        if self.config.reward not in declared:
            return f"reward {self.config.reward!r} is not declared by any kind; declared: {sorted(declared)}"
        for channel, given in self.config.channel_options.items():
            taken = {option for kind in kinds if channel in kind.channels
                     for option in kind.channels[channel].Options.model_fields}
            if set(given) - taken:
                return f"channel {channel!r} takes no option {sorted(set(given) - taken)}; its options: {sorted(taken)}"
        return None

    def _parts_of(self, kind: Kind) -> _KindParts:
        if kind.name not in self._parts:
            self._check_names(kind)
            for name in ("paper", "normalized"):
                if name not in kind.scoring.rewards:
                    raise ValueError(f"kind {kind.name!r} declares no {name!r} reward (it declares {sorted(kind.scoring.rewards)})")
            unknown = sorted(set(kind.scoring.rewards.values()) - set(AGGREGATORS))
            if unknown:
                raise ValueError(f"kind {kind.name!r} names unknown aggregators {unknown}")
            judge = self._given_judges.get(kind.name) or kind.scoring.make_judge(self.config.judge, **self.config.judge_options)
            names = self.config.channels_for(kind.name)
            channels = [kind.channels[name].from_context(self._context(kind, name, judge)) for name in names]
            problem = None if self.config.reward in kind.scoring.rewards else (
                f"reward {self.config.reward!r} is not one {kind.name!r} records declare ({sorted(kind.scoring.rewards)})")
            self._parts[kind.name] = _KindParts(judge, channels, any(Need.LIVE_PAGE in c.needs for c in channels),
                                                problem)
        return self._parts[kind.name]

    def _context(self, kind: Kind, channel: str, judge: Any) -> ChannelContext:
        """What `kind`'s channel `channel` is built from. Kinds share channel names (`execution`: a
        page's lint, a script's import check), so each gets the options its own `Options` takes;
        an option no kind's channel takes is refused in `_check_names`."""
        channel_class = kind.channels[channel]
        takes = channel_class.Options.model_fields
        given = {**channel_class.config_options(self.config), **self.config.options_for(channel)}
        options = {k: v for k, v in given.items() if k in takes}
        return ChannelContext(options=options, judge=judge, linter=self.linter,
                              renderer=self.renderer, timeout_s=self.config.channel_timeout_s)

    def judge(self, kind: str) -> Any:
        """The judge this pipeline uses for `kind`'s answers."""
        return self._parts_of(KINDS[kind]).judge

    def channels(self, kind: str) -> list[Channel]:
        """The configured channels `kind`'s answers are scored with."""
        return self._parts_of(KINDS[kind]).channels

    async def __aenter__(self) -> "RewardPipeline":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        await self.renderer.start()

    async def close(self) -> None:
        await self.close_parts()
        await self.renderer.close()
        await self.sandbox.close()

    async def close_parts(self) -> None:
        """Close what the kinds' parts hold (judges' HTTP clients, a page's linter) and a given
        linter, leaving the renderer and the sandbox (which a test may share) open."""
        if self.linter is not None:
            await self.linter.close()
        for parts in self._parts.values():
            close = getattr(parts.judge, "close", None)  # VLM judges hold an HTTP client
            if close is not None:
                await close()
            for channel in parts.channels:
                await channel.close()

    def provenance(self, kind: str) -> dict[str, str]:
        judge = self.judge(kind)
        return {
            "aesenv": __version__,
            "python": platform.python_version(),
            "playwright": _version("playwright"),
            **self.renderer.provenance,
            "judge": judge.name,
            "judge_version": judge.version,
            "reward": self.config.reward,
            "sandbox": self.config.sandbox,
        }

    async def score(self, task: Task, text: str | bytes, *, files: dict[str, bytes] | None = None) -> Scored:
        """Score one answer. Never raises for a bad answer; our own failures are masked.
        `files`: the answer's other files (a multi-file page's assets served next to it, or
        files a plot script reads besides the task's data), e.g. a refine episode's workspace."""
        kind = kind_of(task)
        parts = self._parts_of(kind)
        if parts.reward_problem:  # the config's, not the answer's: no record could carry its reward
            raise ValueError(f"task {task.id}: {parts.reward_problem}")
        timings: dict[str, float] = {}
        start = time.perf_counter()
        artifact = kind.extract(text)
        timings["extract"] = _ms(start)
        # Task-level set-up (a reference rendering) first, before this answer holds a render slot.
        await asyncio.gather(*(c.prepare(task) for c in parts.channels))
        t = time.perf_counter()
        async with kind.evidence(self.backends, task, artifact, kind.answer_files(task, files or {}), live=parts.live,
                                 pictures=getattr(parts.judge, "needs_images", True)) as evidence:
            if kind.reader.looked(evidence):
                timings[kind.reader.stage] = _ms(t)
            t = time.perf_counter()
            channels, gate = await self._run_channels(parts.channels, evidence, self._gate_of(kind), timings)
            timings["channels"] = _ms(t)
        timings["total"] = _ms(start)
        record = self._record(kind, evidence, channels, timings, gate)
        return Scored(record=record, artifact=artifact, **kind.reader.kept(evidence),
                      picture=kind.reader.picture(evidence), make_screen=lambda: next(iter(kind.reader.images(evidence)), None))

    async def inspect(self, task: Task, code: str, files: dict[str, bytes], *, budget_chars: int = 12_000) -> Look:
        """What an agent is shown of a workspace (`code`: its entry file, `files`: the rest): the
        same evidence `score` makes, described within about `budget_chars`, with the kind's Φ."""
        kind = kind_of(task)
        artifact = kind.workspace_artifact(code)
        async with kind.evidence(self.backends, task, artifact, files, live=kind.reader.live_for_potential(task),
                                 pictures=True) as evidence:
            problem = kind.reader.look_problem(evidence)
            if problem:
                return Look("", [], 0.0, problem=problem)
            potential = await kind.reader.potential(evidence)
            reader = kind.reader
            return Look(reader.describe(evidence, budget_chars), reader.images(evidence), potential,
                        measures=reader.measures(evidence), sight=reader.sight(evidence))

    async def execute(self, argv: list[str], files: dict[str, bytes], limits: SandboxLimits | None = None, *,
                      links: dict[str, str] | None = None) -> CommandRun:
        """A command in this pipeline's sandbox (a refine env's `run` tool)."""
        return await self.sandbox.run(argv, files, limits, links=links)

    def _gate_of(self, kind: Kind) -> str | None:
        """The channel the others wait behind: the kind's own gate, else its execution channel when
        `gate_on_execution` is on."""
        scoring = kind.scoring
        return scoring.gate_channel or (scoring.execution_channel if self.config.gate_on_execution else None)

    async def _run_channels(self, channels: list[Channel], evidence: Evidence, gate_name: str | None,
                            timings: dict[str, float]) -> tuple[dict[str, ChannelResult], str]:
        """Every channel on the same evidence, concurrently; behind the gate (`_gate_of`) the
        others only once the answer passed it. Returns the results and the gate's state; each
        channel's own time goes into `timings` as `channel.<name>` (where a score's time goes),
        and the stages it named (`aesenv.stages`) as `channel.<name>.<stage>`."""
        gate = next((c for c in channels if c.name == gate_name), None)
        if gate is None:
            results = await asyncio.gather(*(self._run_channel(c, evidence, timings) for c in channels))
            return {c.name: r for c, r in zip(channels, results)}, "off"
        verdict = await self._run_channel(gate, evidence, timings)
        rest = [c for c in channels if c is not gate]
        if verdict.status is ChannelStatus.FAILED:
            closed = ChannelResult.not_applicable(f"{gate.name} gate: not assessed, the answer failed {gate.name}")
            return {gate.name: verdict, **{c.name: closed for c in rest}}, "closed"
        results = await asyncio.gather(*(self._run_channel(c, evidence, timings) for c in rest))
        return {gate.name: verdict, **{c.name: r for c, r in zip(rest, results)}}, "passed"

    async def _run_channel(self, channel: Channel, evidence: Evidence, timings: dict[str, float]) -> ChannelResult:
        start = time.perf_counter()
        with collecting() as stages:
            try:
                return await self._within_deadline(channel, evidence)
            finally:
                timings[f"channel.{channel.name}"] = _ms(start)
                timings.update({f"channel.{channel.name}.{name}": round(ms, 1) for name, ms in stages.items()})

    async def _within_deadline(self, channel: Channel, evidence: Evidence) -> ChannelResult:
        # A channel that calls a remote model may need longer than the default: it says how long
        # its calls can take with every retry, so the pipeline never cuts a retry short.
        deadline = max(self.config.channel_timeout_s, channel.deadline_s or 0.0)
        try:
            return await asyncio.wait_for(channel.score(evidence), deadline)
        except asyncio.TimeoutError:
            return ChannelResult.infra_error(f"{channel.name} exceeded its {deadline:.0f}s deadline")
        except Exception as exc:  # noqa: BLE001 - a channel bug must not crash the batch
            return ChannelResult.infra_error(f"{channel.name} raised {type(exc).__name__}: {exc}")

    def _record(self, kind: Kind, evidence: Evidence, channels: dict[str, ChannelResult],
                timings: dict[str, float], gate: str) -> RewardRecord:
        task, artifact = evidence.task, evidence.artifact
        rewards = {name: AGGREGATORS[aggregator](channels) for name, aggregator in kind.scoring.rewards.items()}
        reward, normalized = rewards["paper"], rewards["normalized"]
        infra = reward is None or normalized is None
        provenance = {**self.provenance(kind.name), **kind.scoring.provenance(channels)}
        return RewardRecord(
            task_id=task.id, category=task.category.value, status="infra_error" if infra else "ok",
            failure=kind.reader.failure(evidence, infra), reward=reward, normalized=normalized, rewards=rewards,
            reward_name=self.config.reward, channels=channels, gate=gate,
            artifact=ArtifactInfo(kind=artifact.kind.value, sha256=artifact.sha256, bytes=artifact.source_bytes,
                                  truncated=artifact.truncated, reason=artifact.reason),
            rendering=kind.reader.rendering_summary(evidence),
            timings_ms=timings, provenance=provenance)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
