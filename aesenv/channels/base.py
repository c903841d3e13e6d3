"""The reward-channel contract: one measurement of an answer, with its applicability and evidence.

A channel declares what it needs (`Channel.needs`) and `Channel.score` checks that once, before
the channel's own `measure`: an answer with no artifact of the kind the channel reads has
failed (a real, low score); a rendering or sandbox run that is missing or failed on our side is
an `infra_error` (masked); a live page that is gone is the page's fault when it crashed or hung
on the way, ours otherwise. A channel is built from the pipeline's parts it names in
`from_context` (typed: `ChannelContext`), so tests build one directly with just those parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.judges.base import StaticJudge
from aesenv.lint.htmlhint import HtmlHint
from aesenv.plots import PlotJudge
from aesenv.render import Renderer
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering, RenderStatus
from aesenv.sandbox.base import PlotRun, RunStatus
from aesenv.tasks import Task

if TYPE_CHECKING:
    from aesenv.rewards.config import PipelineConfig


class ChannelStatus(str, Enum):
    OK = "ok"                          # measured; the score stands
    FAILED = "failed"                  # the artifact failed this check (a real, low score)
    INFRA_ERROR = "infra_error"        # our side failed: masked out, never a score
    NOT_APPLICABLE = "not_applicable"  # nothing to measure for this task/config: masked out


class ChannelResult(BaseModel):
    """`score` is in [0, 1]; `raw` is in the published unit (exec ±1, static 0–100, count)."""

    status: ChannelStatus
    applicable: bool = True
    score: float | None = Field(default=None, ge=0, le=1)
    raw: float | None = None
    payload: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _masked_channels_have_no_score(self) -> "ChannelResult":
        masked = self.status in (ChannelStatus.INFRA_ERROR, ChannelStatus.NOT_APPLICABLE)
        if masked and (self.score is not None or self.raw is not None):
            raise ValueError(f"a {self.status.value} channel carries no score")
        if not masked and (self.score is None or self.raw is None):
            raise ValueError(f"a {self.status.value} channel needs a score and a raw value")
        self.applicable = self.status is not ChannelStatus.NOT_APPLICABLE
        return self

    @property
    def counts(self) -> bool:
        """Whether this channel enters an aggregate."""
        return self.status in (ChannelStatus.OK, ChannelStatus.FAILED)

    @classmethod
    def infra_error(cls, reason: str, **payload: Any) -> "ChannelResult":
        return cls(status=ChannelStatus.INFRA_ERROR, payload={"reason": reason, **payload})

    @classmethod
    def not_applicable(cls, reason: str) -> "ChannelResult":
        return cls(status=ChannelStatus.NOT_APPLICABLE, applicable=False, payload={"reason": reason})


class Need(str, Enum):
    """What a channel reads besides the task; `Channel.score` checks each before `measure`."""

    ARTIFACT = "artifact"        # code of the kind the channel reads (`Channel.reads`)
    RENDERING = "rendering"      # the answer rendered in the browser
    LIVE_PAGE = "live_page"      # that page still open (it keeps a render slot while channels run)
    SANDBOX_RUN = "sandbox_run"  # the answer's script ran in the sandbox


ANSWER_NAMES = {ArtifactKind.HTML: "HTML page", ArtifactKind.PYTHON: "Python script"}


@dataclass
class Evidence:
    """What channels get to look at for one answer, made by the task's kind. `rendering` is None
    when nothing rendered; `live` is the still-open page, present only when a channel needs it;
    `plot` is the sandbox run of a plot script (None when nothing ran); `extra` what else a
    kind measured once for all its channels (a project's build, census and reference)."""

    task: Task
    artifact: Artifact
    rendering: Rendering | None = None
    live: LivePage | None = None
    plot: PlotRun | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChannelContext:
    """The parts of one pipeline a channel may be built from (`Channel.from_context`)."""

    config: "PipelineConfig"
    judge: StaticJudge | PlotJudge  # the judge of the task kind the channel serves
    linter: HtmlHint
    renderer: Renderer


class Channel:
    """One reward channel. A subclass names itself, says what it `needs` and which artifact it
    `reads`, and implements `measure`; `score` does the shared checks. `deadline_s`: how long its
    calls may take with every retry (a remote model), when longer than the pipeline's default."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[Need]] = frozenset({Need.ARTIFACT})
    reads: ClassVar[ArtifactKind] = ArtifactKind.HTML
    failure_raw: ClassVar[float] = 0.0  # `raw` of a failed answer, in the channel's published unit
    deadline_s: float | None = None

    @classmethod
    def from_context(cls, context: ChannelContext) -> "Channel":
        return cls()

    def masked_for(self, task: Task) -> str | None:
        """Why this channel has nothing to measure on `task` (it is then `not_applicable`)."""
        return None

    async def prepare(self, task: Task) -> None:
        """Task-level set-up (a reference rendering), done before the answer holds a render slot."""

    async def close(self) -> None:
        """Release what the channel holds (a VLM agent's HTTP client)."""

    async def measure(self, evidence: Evidence) -> ChannelResult:
        raise NotImplementedError

    def failed(self, reason: str, **payload: Any) -> ChannelResult:
        return ChannelResult(status=ChannelStatus.FAILED, score=0.0, raw=self.failure_raw,
                             payload={"reason": reason, **payload})

    async def score(self, evidence: Evidence) -> ChannelResult:
        masked = self.masked_for(evidence.task)
        if masked:
            return ChannelResult.not_applicable(masked)
        return self._unmet(evidence) or await self.measure(evidence)

    def _unmet(self, evidence: Evidence) -> ChannelResult | None:
        """The verdict when the evidence lacks something this channel needs, else None."""
        artifact, rendering, run = evidence.artifact, evidence.rendering, evidence.plot
        if Need.ARTIFACT in self.needs and artifact.kind is not self.reads:
            return self.failed(f"no {ANSWER_NAMES.get(self.reads, self.reads.value)}: "
                               f"{artifact.reason or artifact.kind.value}")
        if Need.RENDERING in self.needs and (rendering is None or rendering.status is RenderStatus.INFRA_ERROR):
            return ChannelResult.infra_error(f"render failed: {rendering.error if rendering else 'not rendered'}")
        if Need.LIVE_PAGE in self.needs and evidence.live is None:
            if rendering is not None and rendering.status is RenderStatus.CRASHED:
                return self.failed(f"the page crashed before it could be used: {rendering.error}")
            if rendering is not None and rendering.status is RenderStatus.TIMEOUT:
                return self.failed(f"the page hung before it could be used: {rendering.error}")
            return ChannelResult.infra_error("the rendered page was not kept open")
        if Need.SANDBOX_RUN in self.needs:
            if run is None:
                return ChannelResult.infra_error("the script was not run")
            if run.status is RunStatus.INFRA_ERROR:
                return ChannelResult.infra_error(f"sandbox failed: {run.reason}", backend=run.backend)
        return None
