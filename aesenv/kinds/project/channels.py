"""The project verifier as reward channels: `project_gate` (G), `project_det` (f_det) and
`project_vlm` (f_vlm); the `webcoder` aggregator (`aesenv.kinds.project.aggregate`) makes
R = G·(0.6·f_det + 0.4·f_vlm). The kind builds, serves and measures once (`ProjectEvidence`:
the build, the census, the reference); the channels read that."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.project.build import Build
from aesenv.kinds.project.census import Census, f_det_generation, pixel_similarity
from aesenv.kinds.project.judge import Sight, setting
from aesenv.llm.client import ModelError
from aesenv.render import RenderStatus

BLANK_TEXT_CHARS = 20  # fewer visible characters, with no image or canvas, is a blank page


def blank(rendering) -> bool:
    m = rendering.metrics
    return m.text_chars < BLANK_TEXT_CHARS and not m.images_total and not m.canvases


@dataclass
class ProjectEvidence(PageEvidence):
    """A project's evidence, measured once for all its channels: the sources it was given, the
    build (None only before the build ran), the census taken on the served page, and in the
    reproduction setting the reference picture and its text."""

    files: dict[str, bytes] = field(default_factory=dict)
    build: Build | None = None
    census: Census | None = None
    reference_png: bytes | None = None
    reference_text: str = ""


def gate_verdict(evidence: ProjectEvidence) -> tuple[ChannelStatus, str]:
    """G's verdict on the evidence, and why when it is not OK: INFRA_ERROR when our side failed
    (no build, a sandbox or renderer failure), FAILED when the project did (it does not build,
    leaves no entry page, does not render, renders blank). The gate and the record's `failure`
    both read it."""
    build = evidence.build
    if build is None:
        return ChannelStatus.INFRA_ERROR, "the project was not built"
    if build.infra:
        return ChannelStatus.INFRA_ERROR, build.problem
    if not build.ok:
        return ChannelStatus.FAILED, build.problem
    rendering = evidence.rendering
    if rendering is None or rendering.status is RenderStatus.INFRA_ERROR:
        return ChannelStatus.INFRA_ERROR, f"render failed: {rendering.error if rendering else 'not rendered'}"
    if rendering.status is not RenderStatus.OK:
        return ChannelStatus.FAILED, f"the built app did not render ({rendering.status.value}: {rendering.error})"
    if blank(rendering):
        errors = rendering.page_errors[:3]
        return ChannelStatus.FAILED, "the app renders a blank page" + (
            f" (page errors: {'; '.join(e[:200] for e in errors)})" if errors else "")
    return ChannelStatus.OK, ""


class ProjectGateChannel(Channel):
    """G = the build succeeds × the entry page exists × the render is not blank and not failed."""

    name = "project_gate"
    needs = frozenset()
    failure_raw = 0.0

    async def measure(self, evidence: ProjectEvidence) -> ChannelResult:
        status, why = gate_verdict(evidence)
        build = evidence.build
        if status is ChannelStatus.INFRA_ERROR:
            return ChannelResult.infra_error(why, **({"backend": build.run.backend} if build is not None else {}))
        log = {"build_log": build.log_tail(600), "build_ms": round(build.run.duration_ms, 1),
               **({"ignored": dict(list(build.ignored.items())[:20])} if build.ignored else {})}
        if status is ChannelStatus.FAILED:
            page_errors = evidence.rendering.page_errors[:3] if evidence.rendering is not None else []
            return self.failed(why, **({"page_errors": page_errors} if page_errors else {}), **log)
        return ChannelResult(status=ChannelStatus.OK, score=1.0, raw=1.0, payload=log)


class ProjectDetChannel(Channel):
    """f_det: the DOM census against the weighted requirements (generation, existing projects), or
    the pixel comparison of the whole page with the reference's long screenshot (reproduction)."""

    name = "project_det"
    needs = frozenset()

    async def measure(self, evidence: ProjectEvidence) -> ChannelResult:
        task, census = evidence.task, evidence.census
        if census is None or evidence.rendering is None:
            return ChannelResult.infra_error("no census of the served app")
        if setting(task) == "reproduction":
            reference = evidence.reference_png
            if not reference or not evidence.rendering.full_page_png:
                return ChannelResult.infra_error("no reference or no screenshot to compare")
            pixels = pixel_similarity(evidence.rendering.full_page_png, reference)  # whole pages
            return ChannelResult(status=ChannelStatus.OK, score=pixels["score"], raw=pixels["score"],
                                 payload={"method": "pixels", **pixels})
        if task.project is None or not task.project.requirements:
            return ChannelResult.not_applicable("the task has no requirements to check")
        value, detail = f_det_generation(task.project, census)
        return ChannelResult(status=ChannelStatus.OK, score=value, raw=value,
                             payload={"method": "census", "requirements": detail})


class ProjectVlmChannel(Channel):
    """f_vlm: the project judge's per-dimension levels, weighted."""

    name = "project_vlm"
    needs = frozenset()

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.deadline_s = getattr(judge, "deadline_s", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "ProjectVlmChannel":
        cls.options_of(context)
        return cls(context.judge)

    async def measure(self, evidence: ProjectEvidence) -> ChannelResult:
        census = evidence.census
        if census is None or evidence.rendering is None:
            return ChannelResult.infra_error("no census of the served app")
        sight = Sight(evidence.task, evidence.rendering, census, evidence.reference_png,
                      evidence.reference_text)
        try:
            grade = await self.judge.grade(sight)
        except ModelError as exc:
            return ChannelResult.infra_error(f"judge failed: {exc}")
        return ChannelResult(status=ChannelStatus.OK, score=grade.score, raw=grade.score,
                             payload=grade.model_dump())
