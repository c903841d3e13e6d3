"""The `plot` kind: a Python plot script (PandasPlotBench), run in the sandbox next to the task's
data files; the figures it leaves open are the answer. They come back as SVG (matplotlib) or JSON
(plotly) and the host draws and describes them (`aesenv.kinds.plot.figures`).

Φ: the mean of three checks: the script ran; it drew a usable figure; no traceback and
nothing on stderr.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.kinds.plot.channels import PlotEvidence, PlotExecutionChannel, PlotStaticChannel, plot_failure
from aesenv.kinds.base import Asking, Backends, EvidenceReader, Kind, Scoring
from aesenv.models import PLOT_JUDGE
from aesenv.kinds.plot.figures import draw_figures
from aesenv.kinds.plot.prompt import data_preview, plot_request
from aesenv.sandbox.base import PlotRun, RunStatus
from aesenv.tasks import Task
from aesenv.quoting import block, inline
from aesenv.text import MAX_LISTED, clip, listing

BLANK_FIGURE = (480, 640)  # matplotlib's default figure at 100 dpi


def plot_structural_score(run: PlotRun) -> float:
    """The cheap Φ of a plot run (see the module docstring)."""
    drew = any(not f.meta.get("unusable") for f in run.figures)
    checks = [float(run.ok), float(drew), float(not run.traceback and not run.stderr.strip())]
    return round(sum(checks) / len(checks), 4)


class PlotReader(EvidenceReader):
    """How a plot run is read: its figures are what is shown, the run's checks its Φ."""

    stage = "run"
    blank_frame = BLANK_FIGURE

    def kept(self, evidence: PlotEvidence) -> dict[str, Any]:
        """A script's run (its figures stay in memory); a plot renders no page."""
        return {"rendering": None, "plot": evidence.run}

    def looked(self, evidence: PlotEvidence) -> bool:
        return evidence.run is not None

    def picture(self, evidence: PlotEvidence) -> bytes | None:
        shown = self.images(evidence)
        return shown[0] if shown else None

    def failure(self, evidence: PlotEvidence, infra: bool) -> str:
        return plot_failure(evidence.artifact, evidence.run)

    async def potential(self, evidence: PlotEvidence) -> float:
        return plot_structural_score(evidence.run)

    def look_problem(self, evidence: PlotEvidence) -> str:
        run = evidence.run
        return f"the sandbox failed on our side ({run.reason}); try again" if run.status is RunStatus.INFRA_ERROR else ""

    def describe(self, evidence: PlotEvidence, budget_chars: int) -> str:
        run = evidence.run
        share = budget_chars // 4
        # The script wrote its figures' names, its output and (through its exceptions) the traceback
        # and the figure problems: all quoted data (`aesenv.quoting`).
        problems = [f"  {inline(f.name, 80)}: {inline(f.meta.get('error') or f.meta.get('png_error'), 300)}"
                    for f in run.figures if f.meta.get("error") or f.meta.get("png_error")][:MAX_LISTED]
        names = listing([inline(f.name, 80) for f in run.figures])
        lines = [f"status: {run.status.value}" + (f" ({inline(run.reason, 300)})" if run.reason else ""),
                 f"figures: {len(run.figures)} ({names or 'none'})",
                 *([f"figure problems ({len(problems)}):", *problems] if problems else []),
                 f"traceback:\n{_quoted(run.traceback, share)}" if run.traceback else "no traceback",
                 f"stdout:\n{_quoted(run.stdout, share)}" if run.stdout else "",
                 f"stderr:\n{_quoted(run.stderr, share)}" if run.stderr else ""]
        return "\n".join(line for line in lines if line)

    def images(self, evidence: PlotEvidence) -> list[bytes]:
        return [f.png for f in (evidence.run.figures if evidence.run else []) if f.png]


class PlotKind(Kind):
    name = "plot"
    title = "Plot"
    artifact = ArtifactKind.PYTHON
    entry = "main.py"
    default_tasks = "builtin:plot"
    asking = Asking(
        system_prompt=("You are an expert data-visualization engineer. Answer with one complete Python script in "
                       "a single ```python code block that draws the requested figure with matplotlib, seaborn or "
                       "plotly. The data files named in the task are in the working directory; do not download "
                       "anything and do not call plt.show()."),
        workspace_brief=("a Python plot script: main.py runs in the workspace next to the data files; the figures "
                         "it leaves open are the result"),
        # A plot's reference image is the ground truth the VLM judge compares with (PandasPlotBench's
        # `plots_gt`); the benchmark asks from the description, so the policy never sees it.
        shows_reference=False,
        observation_lengths={"prompt": 100_000, "category": 64, "data_files": 10_000, "data_preview": 100_000})
    scoring = Scoring(
        judges=PLOT_JUDGE,
        channel_classes=(PlotExecutionChannel, PlotStaticChannel),
        execution_channel=PlotExecutionChannel.name,
        default_channels=(PlotExecutionChannel.name, PlotStaticChannel.name))
    reader = PlotReader()

    def request(self, task: Task) -> str:
        return plot_request(task)

    def observe(self, task: Task) -> dict[str, str]:
        preview = data_preview(task)
        return {"prompt": task.prompt, "category": task.category.value, "data_files": "\n".join(preview),
                "data_preview": "\n\n".join(f"{name}:\n{head}" for name, head in preview.items())}

    def initial_files(self, task: Task) -> dict[str, bytes]:
        return {name: data.encode("utf-8") for name, data in task.data_files.items()}

    def answer_files(self, task: Task, files: dict[str, bytes]) -> dict[str, bytes]:
        """The task's data files always, over any of the same name the answer brings."""
        return {**files, **self.initial_files(task)}

    @contextlib.asynccontextmanager
    async def evidence(self, backends: Backends, task: Task, artifact: Artifact, files: dict[str, bytes], *,
                       live: bool, pictures: bool) -> AsyncIterator[PlotEvidence]:
        if artifact.kind is not ArtifactKind.PYTHON:
            yield PlotEvidence(task, artifact)
            return
        run = await backends.sandbox.run_plot(artifact.code, files)
        # Every figure is drawn and described on the host, whoever looks: the description the
        # offline judge reads and the picture a VLM sees are one drawing, out of the script's reach.
        run = await draw_figures(run, backends.renderer)
        yield PlotEvidence(task, artifact, run=run)


def _quoted(text: str, share: int) -> str:
    """A stream or traceback, its start and end kept within `share` characters, as a quoted block."""
    return block(clip(text, share), limit=share + 200, max_lines=share + 1)  # clip bounds it; keep its end


PLOT = PlotKind()
