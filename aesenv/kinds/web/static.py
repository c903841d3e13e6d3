"""Static-aesthetics agent: a judge scores the full-page screenshot on the 40/30/30 rubric."""

from __future__ import annotations

from typing import Any

from aesenv.channels.base import Need
from aesenv.judging.base import StaticJudgement
from aesenv.judging.channel import JudgedChannel
from aesenv.kinds.page import PageEvidence
from aesenv.render.models import Rendering


class StaticChannel(JudgedChannel):
    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    def subject(self, evidence: PageEvidence) -> Rendering:
        return evidence.rendering

    def unshown(self, evidence: PageEvidence) -> str | None:
        rendering = evidence.rendering
        return None if rendering.has_screenshot else f"the page produced no screenshot ({rendering.error})"

    def notes(self, evidence: PageEvidence) -> dict[str, Any]:
        return {"render_status": evidence.rendering.status.value}

    def empty(self, evidence: PageEvidence, judgement: StaticJudgement) -> str | None:
        rendering = evidence.rendering
        blank = rendering.metrics.text_chars == 0 and not rendering.metrics.canvases and not any(
            e.tag in ("svg", "img", "video") for e in rendering.elements)
        return "the page rendered blank" if blank else None
