"""Reward channels of plot tasks: the script's sandbox run, then its figures.

`execution` (AesCoder's execution agent for plots, ±1): the script ran without error, produced at
least one usable figure (not one the host refused as evidence: a PNG bomb, a description its
pixels contradict, a plotly figure 1e400 px wide) and
imported an allowed plotting library. `static` (0–100): a plot judge scores
the figures (offline metrics by default, a VLM with `openai:<model>`). A sandbox failure on our
side is `infra_error` in both, never a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.channels.base import Channel, ChannelResult, ChannelStatus, Evidence, Need, Shortfall
from aesenv.judging.base import StaticJudgement
from aesenv.judging.channel import JudgedChannel
from aesenv.kinds.plot.evidence import unusable_notes
from aesenv.sandbox.base import Figure, PlotRun, RunStatus

# Top-level modules that count as plotting with an allowed library (pandas plots via matplotlib).
ALLOWED_LIBRARIES = frozenset({"matplotlib", "seaborn", "plotly", "pandas"})
TAIL_CHARS = 2000


def run_summary(run: PlotRun) -> dict[str, Any]:
    """The run as it goes into a record: no image bytes, output tails only, and no wall-clock
    time (that is `timings_ms.run`), so the payload is a function of the script."""
    return {
        "run_status": run.status.value,
        "backend": run.backend,
        "figures": [{"name": f.name, "kind": f.kind, "png_bytes": len(f.png or b""),
                     **({"meta_error": f.meta["error"]} if "error" in f.meta else {})} for f in run.figures],
        "imported": run.imported,
        "stdout_tail": run.stdout[-TAIL_CHARS:],
        "stderr_tail": run.stderr[-TAIL_CHARS:],
        "traceback": run.traceback[-TAIL_CHARS:],
        "isolation": run.isolation.model_dump(),
    }


@dataclass
class PlotEvidence(Evidence):
    """A plot script's evidence: its sandbox run, with the figures drawn on the host (None when
    the script was not run)."""

    run: PlotRun | None = None

    def shortfall(self, need: Need) -> Shortfall | None:
        if need is not Need.SANDBOX_RUN:
            return super().shortfall(need)
        if self.run is None:
            return Shortfall("ours", "the script was not run")
        if self.run.status is RunStatus.INFRA_ERROR:
            return Shortfall("ours", f"sandbox failed: {self.run.reason}", {"backend": self.run.backend})
        return None


class PlotChannel(Channel):
    """A channel over a plot script's sandbox run: both plot channels first agree on a run that
    did not finish or left no usable figure (the answer's failure), then measure their own."""

    needs = frozenset({Need.ARTIFACT, Need.SANDBOX_RUN})
    reads = ArtifactKind.PYTHON

    def _unmet(self, evidence: PlotEvidence) -> ChannelResult | None:
        verdict = super()._unmet(evidence)
        if verdict is not None:
            return verdict
        run = evidence.run
        if run.status is not RunStatus.OK:
            return self.failed(f"the script did not finish ({run.status.value}): {run.reason}", **run_summary(run))
        if not run.figures:
            return self.failed("the script ran but produced no figure", **run_summary(run))
        if not usable_figures(run):
            return self.failed(f"no usable figure: {_unusable_reason(run)}", **run_summary(run))
        return None


def usable_figures(run: PlotRun) -> list:
    """The figures left once those the host refused as evidence (`plots.evidence.screen`) are set aside."""
    return [f for f in run.figures if not f.meta.get("unusable")]


def _unusable_reason(run: PlotRun) -> str:
    return "; ".join(f"{f.name}: {f.meta.get('error', 'unusable')}" for f in run.figures[:3])[:500]


class PlotExecutionChannel(PlotChannel):
    name = "execution"
    failure_raw = -1.0

    async def measure(self, evidence: PlotEvidence) -> ChannelResult:
        run = evidence.run
        used = sorted(ALLOWED_LIBRARIES.intersection(run.imported))
        payload = {**run_summary(run), "allowed_libraries": sorted(ALLOWED_LIBRARIES), "used": used,
                   "passed": bool(used)}
        if not used:
            return self.failed(f"no allowed plotting library imported (imported: {run.imported[:10]})", **payload)
        return ChannelResult(status=ChannelStatus.OK, score=1.0, raw=1.0, payload=payload)


class PlotStaticChannel(PlotChannel, JudgedChannel):
    """The plot judge on the drawn figures; figures that show no data fail with its score."""

    def subject(self, evidence: PlotEvidence) -> list[Figure]:
        return evidence.run.figures

    def notes(self, evidence: PlotEvidence) -> dict[str, Any]:
        refused = unusable_notes(evidence.run.figures)
        return {"unusable_figures": refused} if refused else {}

    def empty(self, evidence: PlotEvidence, judgement: StaticJudgement) -> str | None:
        if judgement.evidence.get("presence", 1) != 0:
            return None
        return "; ".join(unusable_notes(evidence.run.figures)) or "the figures show no data"


def plot_failure(artifact: Artifact, run: PlotRun | None) -> str:
    """Why the answer failed as a plot, for the record ("" when it did not, or when we did)."""
    if artifact.kind is not ArtifactKind.PYTHON:
        return f"{artifact.kind.value}: {artifact.reason or 'no Python script'}"
    if run is None or run.status is RunStatus.INFRA_ERROR:
        return ""
    if run.status is not RunStatus.OK:
        return f"{run.status.value}: {run.reason}"
    if not run.figures:
        return "no figure: the script ran but drew nothing"
    return "" if usable_figures(run) else f"no usable figure: {_unusable_reason(run)}"
