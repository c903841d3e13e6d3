"""The channel contract: `Channel.score` checks what a channel declares it needs, in a fixed order,
and calls `measure` only on evidence that has it."""

from __future__ import annotations

import pytest

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.channels import Channel, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.kinds.plot.channels import PlotEvidence
from aesenv.kinds.page import PageEvidence
from aesenv.render.models import Rendering, RenderStatus
from aesenv.sandbox.base import PlotRun, RunStatus
from aesenv.tasks import Task

TASK = Task(id="t", prompt="A page.")
PAGE = Artifact(kind=ArtifactKind.HTML, code="<p>hi</p>")
SCRIPT = Artifact(kind=ArtifactKind.PYTHON, code="import matplotlib")


class Probe(Channel):
    """Records whether `measure` ran; a perfect score when it does."""

    name = "probe"
    failure_raw = -1.0

    def __init__(self, needs: frozenset[Need], reads: ArtifactKind = ArtifactKind.HTML, masked: str | None = None):
        self.needs, self.reads, self.masked, self.measured = needs, reads, masked, False

    def masked_for(self, task: Task) -> str | None:
        return self.masked

    async def measure(self, evidence: Evidence) -> ChannelResult:
        self.measured = True
        return ChannelResult(status=ChannelStatus.OK, score=1.0, raw=1.0)


def rendering(status: RenderStatus) -> Rendering:
    return Rendering(status=status, error=f"{status.value} here")


ALL_PAGE = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})


@pytest.mark.parametrize("channel, evidence, status, reason", [
    (Probe(ALL_PAGE, masked="nothing to check"), PageEvidence(TASK, SCRIPT), ChannelStatus.NOT_APPLICABLE,
     "nothing to check"),
    (Probe(ALL_PAGE), PageEvidence(TASK, SCRIPT), ChannelStatus.FAILED, "no HTML page: python"),
    (Probe(frozenset({Need.ARTIFACT, Need.SANDBOX_RUN}), reads=ArtifactKind.PYTHON), PageEvidence(TASK, PAGE),
     ChannelStatus.FAILED, "no Python script: html"),
    (Probe(ALL_PAGE), PageEvidence(TASK, PAGE), ChannelStatus.INFRA_ERROR, "render failed: not rendered"),
    (Probe(ALL_PAGE), PageEvidence(TASK, PAGE, rendering(RenderStatus.INFRA_ERROR)), ChannelStatus.INFRA_ERROR,
     "render failed: infra_error here"),
    (Probe(ALL_PAGE), PageEvidence(TASK, PAGE, rendering(RenderStatus.CRASHED)), ChannelStatus.FAILED,
     "the page crashed before it could be used"),
    (Probe(ALL_PAGE), PageEvidence(TASK, PAGE, rendering(RenderStatus.TIMEOUT)), ChannelStatus.FAILED,
     "the page hung before it could be used"),
    (Probe(ALL_PAGE), PageEvidence(TASK, PAGE, rendering(RenderStatus.OK)), ChannelStatus.INFRA_ERROR,
     "the rendered page was not kept open"),
    (Probe(frozenset({Need.ARTIFACT, Need.SANDBOX_RUN}), reads=ArtifactKind.PYTHON), PlotEvidence(TASK, SCRIPT),
     ChannelStatus.INFRA_ERROR, "the script was not run"),
    # evidence of another kind than the channel reads is ours to answer for, never the answer's 0
    (Probe(frozenset({Need.ARTIFACT, Need.SANDBOX_RUN}), reads=ArtifactKind.PYTHON), PageEvidence(TASK, SCRIPT),
     ChannelStatus.INFRA_ERROR, "holds no sandbox_run"),
    (Probe(ALL_PAGE), Evidence(TASK, PAGE), ChannelStatus.INFRA_ERROR, "holds no rendering"),
    (Probe(frozenset({Need.ARTIFACT, Need.SANDBOX_RUN}), reads=ArtifactKind.PYTHON),
     PlotEvidence(TASK, SCRIPT, run=PlotRun(status=RunStatus.INFRA_ERROR, reason="no worker")),
     ChannelStatus.INFRA_ERROR, "sandbox failed: no worker"),
])
async def test_an_unmet_need_is_answered_before_measure(channel, evidence, status, reason):
    result = await channel.score(evidence)
    assert result.status is status and reason in result.payload["reason"]
    assert not channel.measured
    if status is ChannelStatus.FAILED:
        assert result.raw == channel.failure_raw and result.score == 0.0  # in the channel's published unit


async def test_measure_runs_when_every_need_is_met():
    channel = Probe(frozenset({Need.ARTIFACT, Need.RENDERING}))
    result = await channel.score(PageEvidence(TASK, PAGE, rendering(RenderStatus.OK)))
    assert channel.measured and result.status is ChannelStatus.OK
    needs_nothing = Probe(frozenset())
    assert (await needs_nothing.score(PageEvidence(TASK, SCRIPT))).status is ChannelStatus.OK  # reads no artifact


@pytest.mark.parametrize("status, png, expected, score", [
    (RenderStatus.OK, b"\x89PNG", ChannelStatus.OK, 1.0),
    (RenderStatus.OK, None, ChannelStatus.FAILED, 0.0),  # "rendered" with nothing captured is not rendered
    (RenderStatus.CRASHED, None, ChannelStatus.FAILED, 0.0),
    (RenderStatus.TIMEOUT, None, ChannelStatus.FAILED, 0.0),
    (RenderStatus.INFRA_ERROR, None, ChannelStatus.INFRA_ERROR, None),  # ours: masked, never a 0
])
async def test_renderable_is_s_exec_by_the_contract(status, png, expected, score):
    """AesCode's s_exec (`renderable`) on the contract: the page's own crash or hang fails it, our
    failure masks it, and only a captured rendering passes; the markup's lint plays no part."""
    from aesenv.kinds.web.verifiers.channels import RenderableChannel

    shot = Rendering(status=status, error="" if status is RenderStatus.OK else "here", full_page_png=png)
    lint_failing = Artifact(kind=ArtifactKind.HTML, code="<div><p>unclosed <b>tags")
    result = await RenderableChannel().score(PageEvidence(TASK, lint_failing, shot))
    assert result.status is expected and result.score == score
