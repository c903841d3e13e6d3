"""Static-aesthetics agent: a judge scores the full-page screenshot on the 40/30/30 rubric."""

from __future__ import annotations

import logging

from aesenv.judges.base import StaticJudge
from aesenv.render.models import RenderStatus
from aesenv.rewards.channel import ChannelResult, ChannelStatus, Evidence, register_channel

log = logging.getLogger(__name__)


@register_channel("static")
class StaticChannel:
    name = "static"

    def __init__(self, judge: StaticJudge, **_: object) -> None:
        self.judge = judge
        self.deadline_s: float | None = getattr(judge, "deadline_s", None)

    async def score(self, evidence: Evidence) -> ChannelResult:
        artifact, rendering = evidence.artifact, evidence.rendering
        if not artifact.renderable:
            return ChannelResult(status=ChannelStatus.FAILED, score=0.0, raw=0.0,
                                 payload={"reason": f"nothing to render: {artifact.reason or artifact.kind.value}"})
        if rendering is None or rendering.status is RenderStatus.INFRA_ERROR:
            return ChannelResult.infra_error(f"render failed: {rendering.error if rendering else 'not rendered'}")
        if not rendering.has_screenshot:
            return ChannelResult(status=ChannelStatus.FAILED, score=0.0, raw=0.0,
                                 payload={"reason": f"the page produced no screenshot ({rendering.error})"})
        try:
            judgement = await self.judge.judge(evidence.task, rendering)
        except Exception as exc:  # noqa: BLE001 - a judge failure must be masked, not scored
            log.warning("static judge %s failed: %s: %s", self.judge.name, type(exc).__name__, exc)
            return ChannelResult.infra_error(f"judge {self.judge.name} failed: {type(exc).__name__}: {exc}")
        blank = rendering.metrics.text_chars == 0 and not rendering.metrics.canvases and not any(
            e.tag in ("svg", "img", "video") for e in rendering.elements)
        payload = {**judgement.payload(self.judge.name, self.judge.version), "render_status": rendering.status.value}
        if blank:
            payload["reason"] = "the page rendered blank"
        return ChannelResult(status=ChannelStatus.FAILED if blank else ChannelStatus.OK,
                             score=round(judgement.total / 100.0, 6), raw=judgement.total, payload=payload)
