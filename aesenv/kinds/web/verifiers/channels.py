"""The AesCode verifier channels: renderable (s_exec), text, boundary, table_chart (with chart and
table, the two halves on their own), and, in reference.py, layout and whitespace. Each is masked (`not_applicable`) when the task carries nothing for it to check,
scores in [0, 1], fails when its requirement is not met in full, and says why in its payload."""

from __future__ import annotations

from typing import Any

from aesenv.render.live import PageFault, PageStalled
from aesenv.render.models import RenderStatus
from aesenv.channels.base import Channel, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.tasks.model import ChartData, TableData, Task, TextExact
from aesenv.kinds.web.verifiers.checks import Check, check_boundary, check_charts, check_tables, check_text
from aesenv.kinds.web.verifiers.probes import read_charts, read_tables


def result_of(check: Check) -> ChannelResult:
    return ChannelResult(status=ChannelStatus.OK if check.passed else ChannelStatus.FAILED,
                         score=check.score, raw=check.score, payload=check.payload)


class VerifierChannel(Channel):
    """Shared by the verifiers: masked when the task carries nothing to check (`subject`), and a
    page that stalls or faults while being read has failed."""

    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    def subject(self, task: Task) -> Any:
        """What this channel checks on `task`; falsy when there is nothing (the channel is masked)."""
        raise NotImplementedError

    async def check(self, evidence: Evidence, subject: Any) -> Check | ChannelResult:
        raise NotImplementedError

    def masked_for(self, task: Task) -> str | None:
        return None if self.subject(task) else f"task {task.id} has no {self.name} requirement"

    async def measure(self, evidence: Evidence) -> ChannelResult:
        try:
            measured = await self.check(evidence, self.subject(evidence.task))
        except PageStalled as exc:
            return self.failed(f"the page stalled while being read: {exc}")
        except PageFault as exc:
            return self.failed(f"{exc.stop} while being read: {exc}")
        return measured if isinstance(measured, ChannelResult) else result_of(measured)


def requirements_of(task: Task, kind: type) -> list:
    return [r for r in task.requirements if isinstance(r, kind)]


class TextChannel(VerifierChannel):
    """Required strings (`text_exact`) present verbatim in the rendered, visible text."""

    name = "text"

    def subject(self, task: Task) -> list[TextExact]:
        return requirements_of(task, TextExact)

    async def check(self, evidence: Evidence, subject: list[TextExact]) -> Check:
        return check_text(subject, evidence.rendering)


class BoundaryChannel(VerifierChannel):
    """Artboard tasks: every element inside the canvas, page aspect ratio = canvas aspect ratio."""

    name = "boundary"

    def subject(self, task: Task):
        return task.canvas

    async def check(self, evidence: Evidence, subject) -> Check:
        return check_boundary(subject, evidence.rendering)


class TableChannel(VerifierChannel):
    """Required tables (`table_data`) against the HTML tables the page shows, cell by cell."""

    name = "table"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    def subject(self, task: Task) -> list[TableData]:
        return requirements_of(task, TableData)

    async def check(self, evidence: Evidence, subject: list[TableData]) -> Check:
        return check_tables(subject, await read_tables(evidence.live))


class ChartChannel(VerifierChannel):
    """Required charts (`chart_data`) against live ECharts instances read from the open page."""

    name = "chart"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    def subject(self, task: Task) -> list[ChartData]:
        return requirements_of(task, ChartData)

    async def check(self, evidence: Evidence, subject: list[ChartData]) -> Check:
        found = await read_charts(evidence.live)
        check = check_charts(subject, found["charts"])
        check.payload["echarts_loaded"] = found["library"]
        if found["unconfirmed"]:
            check.payload["claimed_not_drawn"] = found["unconfirmed"][:10]
        return check


class RenderableChannel(Channel):
    """AesCode's s_exec: the page renders (loads and paints within its deadlines, nothing
    crashed). Whether its markup passes a linter is AesCoder's `execution`, not this."""

    name = "renderable"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    async def measure(self, evidence: Evidence) -> ChannelResult:
        rendering = evidence.rendering
        if rendering.status is not RenderStatus.OK or not rendering.has_screenshot:
            return self.failed(f"the page did not render: {rendering.status.value} {rendering.error or ''}".strip())
        return ChannelResult(status=ChannelStatus.OK, score=1.0, raw=1.0, payload={"status": rendering.status.value})


class TableChartChannel(VerifierChannel):
    """AesCode's one table/chart channel: every required table (cell by cell) and chart (type,
    labels, series) against what the page shows; the score is the mean over them all."""

    name = "table_chart"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    def subject(self, task: Task) -> list[TableData | ChartData]:
        return [r for r in task.requirements if isinstance(r, (TableData, ChartData))]

    async def check(self, evidence: Evidence, subject: list[TableData | ChartData]) -> Check:
        tables = [r for r in subject if isinstance(r, TableData)]
        charts = [r for r in subject if isinstance(r, ChartData)]
        parts: list[tuple[int, Check]] = []
        if tables:
            parts.append((len(tables), check_tables(tables, await read_tables(evidence.live))))
        if charts:
            found = await read_charts(evidence.live)
            parts.append((len(charts), check_charts(charts, found["charts"])))
        score = round(sum(n * c.score for n, c in parts) / sum(n for n, _ in parts), 6)
        payload = {"tables": parts[0][1].payload if tables else None,
                   "charts": parts[-1][1].payload if charts else None}
        return Check(score=score, passed=all(c.passed for _, c in parts), payload=payload)
