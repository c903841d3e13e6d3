"""Plots: figures drawn and described on the host (`figures`, `svg_scene`, `drawn`), and the plot judges.

The plot kind's judges are built from the same spec string as page judges (`PipelineConfig.judge`):
`offline` (default, `judge.OfflinePlotJudge`) or `openai:<model>` (`vlm.VlmPlotJudge`, which
compares against the task's ground-truth image when there is one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from aesenv.judging.base import StaticJudgement
from aesenv.models import PLOT_JUDGE
from aesenv.sandbox.base import Figure
from aesenv.tasks import Task


class PlotJudge(Protocol):
    """Scores a script's figures against its task on the 40/30/30 rubric. `needs_images`: the
    judge looks at pictures, so plotly figures (JSON from the sandbox) must be drawn first."""

    name: str
    version: str
    needs_images: bool

    async def judge(self, task: Task, figures: list[Figure]) -> StaticJudgement: ...


PlotJudgeFactory = Callable[..., PlotJudge]
PLOT_JUDGES = PLOT_JUDGE.backends  # the `plot_judge` role of `aesenv.models`


def offline_plot_judge(_: str, **options: Any) -> PlotJudge:
    from aesenv.kinds.plot.judge import OfflinePlotJudge

    if options:
        raise ValueError(f"the offline plot judge takes no options (got {sorted(options)})")
    return OfflinePlotJudge()


def make_plot_judge(spec: str, **options: Any) -> PlotJudge:
    return PLOT_JUDGE.build(spec, **options)


__all__ = ["PLOT_JUDGES", "PlotJudge", "make_plot_judge"]
