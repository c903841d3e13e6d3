"""The reward-channel contract: one measurement of a page, with its applicability and evidence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from pydantic import BaseModel, Field, model_validator

from aesenv.artifact import Artifact
from aesenv.registry import Registry
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering
from aesenv.sandbox.base import PlotRun
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


@dataclass
class Evidence:
    """What channels get to look at for one sample. `rendering` is None when nothing rendered;
    `live` is the still-open page, present only when a channel asked for it (see below);
    `plot` is the sandbox run of a plot task's script (None when nothing ran)."""

    task: Task
    artifact: Artifact
    rendering: Rendering | None
    live: LivePage | None = None
    plot: PlotRun | None = None


class RewardChannel(Protocol):
    """`needs_live_page = True` on a channel makes the pipeline keep the page open (and
    occupying a render slot) while channels run, and pass it as `Evidence.live`."""

    name: str

    async def score(self, evidence: Evidence) -> ChannelResult: ...


ChannelFactory = Callable[..., RewardChannel]
CHANNELS: Registry[ChannelFactory] = Registry("reward channel")
register_channel = CHANNELS.register
# Plot tasks have their own channels under the same names (and record keys): `execution` and
# `static` of a plot measure a sandbox run, not a page. The pipeline picks the set by `task.kind`.
PLOT_CHANNELS: Registry[ChannelFactory] = Registry("plot reward channel")
CHANNELS_BY_KIND: dict[str, Registry[ChannelFactory]] = {"web": CHANNELS, "plot": PLOT_CHANNELS}
