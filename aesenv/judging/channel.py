"""`JudgedChannel`: a channel whose score is a judge's rubric total (0–100), the one shape of
every kind's `static` channel. A kind's subclass says what the judge looks at (`subject`), what
must be there before it looks (`unshown`) and when the answer showed nothing (`empty`): a failed
score, not a masked one. A judge that fails is ours: masked, never a 0."""

from __future__ import annotations

import logging
from typing import Any

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence
from aesenv.judging.base import StaticJudgement

log = logging.getLogger(__name__)


class JudgedChannel(Channel):
    name = "static"

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.deadline_s = getattr(judge, "deadline_s", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "JudgedChannel":
        cls.options_of(context)
        return cls(context.judge)

    def subject(self, evidence: Evidence) -> Any:
        """What the judge is handed besides the task (a rendering, the figures)."""
        raise NotImplementedError

    def unshown(self, evidence: Evidence) -> str | None:
        """Why there is nothing for the judge to look at (the answer's failure), else None."""
        return None

    def notes(self, evidence: Evidence) -> dict[str, Any]:
        """What the record shows next to the judgement."""
        return {}

    def empty(self, evidence: Evidence, judgement: StaticJudgement) -> str | None:
        """Why the answer showed nothing to judge (a failed score, with the judge's total), else None."""
        return None

    async def measure(self, evidence: Evidence) -> ChannelResult:
        missing = self.unshown(evidence)
        if missing:
            return self.failed(missing)
        try:
            judgement = await self.judge.judge(evidence.task, self.subject(evidence))
        except Exception as exc:  # noqa: BLE001 - a judge failure must be masked, not scored
            log.warning("%s judge %s failed: %s: %s", self.name, self.judge.name, type(exc).__name__, exc)
            return ChannelResult.infra_error(f"judge {self.judge.name} failed: {type(exc).__name__}: {exc}")
        payload = {**judgement.payload(self.judge.name, self.judge.version), **self.notes(evidence)}
        empty = self.empty(evidence, judgement)
        if empty:
            payload["reason"] = empty
        return ChannelResult(status=ChannelStatus.FAILED if empty else ChannelStatus.OK,
                             score=round(judgement.total / 100.0, 6), raw=judgement.total, payload=payload)
