"""Static-aesthetics agent: a judge scores the full-page screenshot on the 40/30/30 rubric."""

from __future__ import annotations

import logging

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.judges.base import StaticJudge

log = logging.getLogger(__name__)


class StaticChannel(Channel):
    name = "static"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    def __init__(self, judge: StaticJudge) -> None:
        self.judge = judge
        self.deadline_s = getattr(judge, "deadline_s", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "StaticChannel":
        return cls(context.judge)

    async def measure(self, evidence: Evidence) -> ChannelResult:
        rendering = evidence.rendering
        if not rendering.has_screenshot:
            return self.failed(f"the page produced no screenshot ({rendering.error})")
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
