"""AesCode's decoupled reward channels: deterministic verifiers and the VLM checklist.

The channels `renderable`, `text`, `boundary`, `table_chart` (or `chart` and `table` apart),
`layout`, `whitespace`, `vgr`, `checklist` and `design_graph` (evidence) are the web kind's (`aesenv.kinds.web.kind`); select them with `PipelineConfig.channels`, e.g. `AESCODE_CHANNELS`.
`requirement_potential` is the same checks as one number, for shaping and refine episodes.
"""

from __future__ import annotations

from aesenv.render.live import LivePage, PageFault
from aesenv.render.models import Rendering, RenderStatus
from aesenv.tasks.model import ChartData, TableData, Task, TextExact
from aesenv.kinds.web.verifiers.channels import (BoundaryChannel, ChartChannel, RenderableChannel, TableChannel, TableChartChannel,
                                      TextChannel)
from aesenv.kinds.web.verifiers.checklist import ChecklistChannel
from aesenv.kinds.web.verifiers.checks import check_boundary, check_charts, check_tables, check_text
from aesenv.kinds.web.verifiers.probes import read_charts, read_tables
from aesenv.kinds.web.verifiers.reference import LayoutChannel, WhitespaceChannel
from aesenv.kinds.web.verifiers.vgr import DesignGraphChannel, VgrChannel

VERIFIER_CHANNELS = (RenderableChannel, TextChannel, BoundaryChannel, TableChartChannel, ChartChannel, TableChannel,
                     LayoutChannel, WhitespaceChannel, ChecklistChannel, VgrChannel, DesignGraphChannel)
# AesCode's seven reward channels as published: s_exec is renderability, one table/chart channel.
AESCODE_CHANNELS = ["renderable", "text", "boundary", "table_chart", "layout", "whitespace", "vgr"]
# Ours beside them: AesCoder's lint as execution, table and chart apart, the VLM checklist, and the
# parsed design graph as evidence (AesCode reports the checklist as Visual: `aescode`).
AESCODE_EXTENDED_CHANNELS = ["execution", "text", "boundary", "chart", "table", "layout", "whitespace", "vgr",
                             "checklist", "design_graph"]


async def requirement_potential(task: Task, rendering: Rendering, live: LivePage | None) -> float | None:
    """Fraction of the task's checkable requirements (each text_exact, chart_data and table_data
    requirement, and the canvas) that this rendering satisfies in full; None when the task has
    none. Deterministic, no VLM. Charts and tables are read from `live`; without an open page
    they count as unsatisfied. A rendering our side failed to make has no potential (None)."""
    texts = [r for r in task.requirements if isinstance(r, TextExact)]
    tables = [r for r in task.requirements if isinstance(r, TableData)]
    charts = [r for r in task.requirements if isinstance(r, ChartData)]
    total = len(texts) + len(tables) + len(charts) + (task.canvas is not None)
    if total == 0 or rendering.status is RenderStatus.INFRA_ERROR:
        return None
    met = len(check_text(texts, rendering).payload["found"]) if texts else 0
    if task.canvas is not None:
        met += check_boundary(task.canvas, rendering).passed
    if live is not None and (tables or charts):
        try:
            if tables:
                rendered = await read_tables(live)
                met += sum(check_tables([t], rendered).passed for t in tables)
            if charts:
                found = (await read_charts(live))["charts"]
                met += sum(check_charts([c], found).passed for c in charts)
        except PageFault:
            pass
    return round(met / total, 6)


__all__ = ["AESCODE_CHANNELS", "AESCODE_EXTENDED_CHANNELS", "VERIFIER_CHANNELS", "requirement_potential"]
