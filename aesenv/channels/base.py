"""The reward-channel contract: one measurement of an answer, with its applicability and evidence.

A channel declares what it needs (`Channel.needs`) and `Channel.score` checks that once, before
the channel's own `measure`: an answer with no artifact of the kind the channel reads has
failed (a real, low score); for everything else the kind's evidence says what it lacks and
whose fault that is (`Evidence.shortfall`): a rendering or sandbox run missing or failed on our
side is an `infra_error` (masked); a live page that is gone is the page's fault when it crashed
or hung on the way, ours otherwise. A channel is built from the pipeline's parts it names in
`from_context` (`ChannelContext`), with its own options as its own small model
(`Channel.Options`), so tests build one directly with just those parts.

This module is the contract: it imports nothing concrete (no renderer, judge, linter, sandbox).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aesenv.artifact import ANSWER_NAMES, Artifact, ArtifactKind  # ANSWER_NAMES: re-exported, channels name answers by it
from aesenv.tasks import Task


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


@dataclass(frozen=True)
class Shortfall:
    """What an answer's evidence lacks for a channel's need, and whose fault that is: the
    answer's (`"answer"`: a failed, real low score) or ours (`"ours"`: masked as infra_error)."""

    fault: Literal["answer", "ours"]
    reason: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class Evidence:
    """What channels get to look at for one answer, made by the task's kind. This base holds the
    task and the artifact; a kind's subclass adds what it measured (a page's rendering and live
    page: `aesenv.kinds.page.PageEvidence`; a script's sandbox run; a project's build).
    `shared`: what one channel computed for this answer that others reuse (a parsed design
    graph), so it is computed once."""

    task: Task
    artifact: Artifact
    shared: dict[str, Any] = field(default_factory=dict, kw_only=True)

    def shortfall(self, need: Need) -> Shortfall | None:
        """What this evidence lacks for `need` (None when it has it). The base evidence holds
        nothing but the artifact, which `Channel` checks itself."""
        if need is Need.ARTIFACT:
            return None
        return Shortfall("ours", f"this answer's evidence ({type(self).__name__}) holds no {need.value}")


@dataclass(frozen=True)
class ChannelContext:
    """The parts of one pipeline a channel may be built from (`Channel.from_context`), typed
    loosely on purpose: the contract names no concrete part. `options`: this channel's own
    settings, as data, validated by the channel's `Options`; `judge`: the judge of the kind the
    channel serves; `timeout_s`: the pipeline's default channel deadline."""

    options: dict[str, Any] = field(default_factory=dict)
    judge: Any = None
    linter: Any = None
    renderer: Any = None
    timeout_s: float = 60.0


class NoOptions(BaseModel):
    """The options of a channel that takes none: any option given is an error."""

    model_config = ConfigDict(extra="forbid")


class Channel:
    """One reward channel. A subclass names itself, says what it `needs` and which artifact it
    `reads`, and implements `measure`; `score` does the shared checks. `deadline_s`: how long its
    calls may take with every retry (a remote model), when longer than the pipeline's default."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[Need]] = frozenset({Need.ARTIFACT})
    reads: ClassVar[ArtifactKind] = ArtifactKind.HTML
    failure_raw: ClassVar[float] = 0.0  # `raw` of a failed answer, in the channel's published unit
    Options: ClassVar[type[BaseModel]] = NoOptions  # the channel's own settings (`ChannelContext.options`)
    deadline_s: float | None = None

    @classmethod
    def config_options(cls, config: Any) -> dict[str, Any]:
        """Options this channel reads from the pipeline's config (`PipelineConfig`) besides its
        `channel_options`, which override them: none by default."""
        return {}

    @classmethod
    def options_of(cls, context: ChannelContext) -> Any:
        """The channel's options from its context, validated (an unknown option is an error)."""
        return cls.Options(**context.options)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "Channel":
        cls.options_of(context)
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
        artifact = evidence.artifact
        if Need.ARTIFACT in self.needs and artifact.kind is not self.reads:
            return self.failed(f"no {ANSWER_NAMES.get(self.reads, self.reads.value)}: "
                               f"{artifact.reason or artifact.kind.value}")
        for need in sorted(self.needs - {Need.ARTIFACT}, key=list(Need).index):
            lack = evidence.shortfall(need)
            if lack is not None:
                if lack.fault == "answer":
                    return self.failed(lack.reason, **lack.payload)
                return ChannelResult.infra_error(lack.reason, **lack.payload)
        return None
