"""The evidence of every kind whose answer is shown as a page (web pages, built projects): the
rendering, and the live page while a channel needs it open."""

from __future__ import annotations

from dataclasses import dataclass

from aesenv.channels.base import Evidence, Need, Shortfall
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering, RenderStatus


@dataclass
class PageEvidence(Evidence):
    """`rendering` is None when nothing rendered; `live` is the still-open page, present only
    when a channel needs it."""

    rendering: Rendering | None = None
    live: LivePage | None = None

    def shortfall(self, need: Need) -> Shortfall | None:
        rendering = self.rendering
        if need is Need.RENDERING and (rendering is None or rendering.status is RenderStatus.INFRA_ERROR):
            return Shortfall("ours", f"render failed: {rendering.error if rendering else 'not rendered'}")
        if need is Need.LIVE_PAGE and self.live is None:
            if rendering is not None and rendering.status is RenderStatus.CRASHED:
                return Shortfall("answer", f"the page crashed before it could be used: {rendering.error}")
            if rendering is not None and rendering.status is RenderStatus.TIMEOUT:
                return Shortfall("answer", f"the page hung before it could be used: {rendering.error}")
            return Shortfall("ours", "the rendered page was not kept open")
        if need in (Need.RENDERING, Need.LIVE_PAGE):
            return None
        return super().shortfall(need)
