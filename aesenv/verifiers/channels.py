"""The AesCode verifier channels: text, boundary, chart, table (and, in reference.py, layout and
whitespace). Each is masked (`not_applicable`) when the task carries nothing for it to check,
scores in [0, 1], fails when its requirement is not met in full, and says why in its payload."""

from __future__ import annotations

from typing import Any, ClassVar

from aesenv.render.live import PageFault, PageStalled
from aesenv.render.models import RenderStatus
from aesenv.rewards.channel import ChannelResult, ChannelStatus, Evidence, register_channel
from aesenv.tasks.model import ChartData, TableData, Task, TextExact
from aesenv.verifiers.checks import Check, check_boundary, check_charts, check_tables, check_text
from aesenv.verifiers.probes import read_charts, read_tables


def result_of(check: Check) -> ChannelResult:
    return ChannelResult(status=ChannelStatus.OK if check.passed else ChannelStatus.FAILED,
                         score=check.score, raw=check.score, payload=check.payload)


def _zero(reason: str) -> ChannelResult:
    return ChannelResult(status=ChannelStatus.FAILED, score=0.0, raw=0.0, payload={"reason": reason})


class VerifierChannel:
    """Shared preconditions: applicability, something rendered, our side did not fail, and
    (for channels that read the open page) a page to read."""

    name: ClassVar[str]
    needs_live_page: ClassVar[bool] = False

    def __init__(self, **_: object) -> None:
        pass

    def subject(self, task: Task) -> Any:
        """What this channel checks on `task`; falsy when there is nothing (the channel is masked)."""
        raise NotImplementedError

    async def measure(self, evidence: Evidence, subject: Any) -> Check | ChannelResult:
        raise NotImplementedError

    async def score(self, evidence: Evidence) -> ChannelResult:
        subject = self.subject(evidence.task)
        if not subject:
            return ChannelResult.not_applicable(f"task {evidence.task.id} has no {self.name} requirement")
        if not evidence.artifact.renderable:
            return _zero(f"nothing to render: {evidence.artifact.reason or evidence.artifact.kind.value}")
        rendering = evidence.rendering
        if rendering is None or rendering.status is RenderStatus.INFRA_ERROR:
            return ChannelResult.infra_error(f"render failed: {rendering.error if rendering else 'not rendered'}")
        if self.needs_live_page and evidence.live is None:
            if rendering.status in (RenderStatus.CRASHED, RenderStatus.TIMEOUT):
                return _zero(f"the page did not stay up to be read ({rendering.status.value}: {rendering.error})")
            return ChannelResult.infra_error("the live page was not kept open")
        try:
            measured = await self.measure(evidence, subject)
        except PageStalled as exc:
            return _zero(f"the page stalled while being read: {exc}")
        except PageFault as exc:
            return _zero(f"{exc.stop} while being read: {exc}")
        return measured if isinstance(measured, ChannelResult) else result_of(measured)


def requirements_of(task: Task, kind: type) -> list:
    return [r for r in task.requirements if isinstance(r, kind)]


@register_channel("text")
class TextChannel(VerifierChannel):
    """Required strings (`text_exact`) present verbatim in the rendered, visible text."""

    name = "text"

    def subject(self, task: Task) -> list[TextExact]:
        return requirements_of(task, TextExact)

    async def measure(self, evidence: Evidence, subject: list[TextExact]) -> Check:
        return check_text(subject, evidence.rendering)


@register_channel("boundary")
class BoundaryChannel(VerifierChannel):
    """Artboard tasks: every element inside the canvas, page aspect ratio = canvas aspect ratio."""

    name = "boundary"

    def subject(self, task: Task):
        return task.canvas

    async def measure(self, evidence: Evidence, subject) -> Check:
        return check_boundary(subject, evidence.rendering)


@register_channel("table")
class TableChannel(VerifierChannel):
    """Required tables (`table_data`) against the HTML tables the page shows, cell by cell."""

    name = "table"
    needs_live_page = True

    def subject(self, task: Task) -> list[TableData]:
        return requirements_of(task, TableData)

    async def measure(self, evidence: Evidence, subject: list[TableData]) -> Check:
        return check_tables(subject, await read_tables(evidence.live))


@register_channel("chart")
class ChartChannel(VerifierChannel):
    """Required charts (`chart_data`) against live ECharts instances read from the open page."""

    name = "chart"
    needs_live_page = True

    def subject(self, task: Task) -> list[ChartData]:
        return requirements_of(task, ChartData)

    async def measure(self, evidence: Evidence, subject: list[ChartData]) -> Check:
        found = await read_charts(evidence.live)
        check = check_charts(subject, found["charts"])
        check.payload["echarts_loaded"] = found["library"]
        return check
