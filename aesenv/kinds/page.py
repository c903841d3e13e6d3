"""Every kind whose answer is shown as a page (web pages, built projects, a drawing wrapped in
one): its evidence (`PageEvidence`: the rendering, and the live page while a channel needs it
open), how that evidence is read (`PageReader`: failure, Φ, description, pictures) and
`PageKind`, the `Kind` whose hooks a page provides (reference, evidence)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.channels.base import Evidence, Need, Shortfall
from aesenv.kinds.base import Asking, Backends, EvidenceReader, Kind
from aesenv.render.describe import describe_rendering, structural_score
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering, RenderStatus
from aesenv.render.references import ReferenceRenderings, decode_reference
from aesenv.tasks import Task


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


# A page is shown its reference design: the policy must see what it is compared with.
PAGE_ASKING = Asking(shows_reference=True,
                     reference_caption="The attached image is the reference design: match its layout and look.")


class PageReader(EvidenceReader):
    """How a rendered page is read: its rendering's failure, structural Φ, description and
    screenshots. A page kind whose answer is not HTML says which artifact it expects (`answer_kind`)."""

    answer_kind: ClassVar[ArtifactKind] = ArtifactKind.HTML

    def kept(self, evidence: PageEvidence) -> dict[str, Any]:
        """What a `Scored` keeps of the evidence beside its record, by `Scored` field: a page's
        rendering (images stay in memory, not in the record's JSON)."""
        return {"rendering": evidence.rendering}

    def rendering_summary(self, evidence: Evidence) -> dict[str, Any] | None:
        """The record's `rendering` field: the page's rendering summary (None when nothing rendered)."""
        rendering = getattr(evidence, "rendering", None)
        return rendering.summary() if rendering is not None else None

    def looked(self, evidence: PageEvidence) -> bool:
        """Whether the answer got as far as the evidence step (its time is then recorded)."""
        return evidence.rendering is not None

    def failure(self, evidence: PageEvidence, infra: bool) -> str:
        """Why the answer failed as a whole, for the record ('' when it did not, or when we did)."""
        artifact, rendering = evidence.artifact, evidence.rendering
        if artifact.kind is not self.answer_kind:
            return f"{artifact.kind.value}: {artifact.reason}"
        if rendering is not None and rendering.error and not infra:
            return rendering.error
        return ""

    async def potential(self, evidence: PageEvidence) -> float:
        """The cheap Φ of a result: a page's structural score (`aesenv.render.describe`)."""
        return structural_score(evidence.rendering)

    def look_problem(self, evidence: PageEvidence) -> str:
        """Our side's failure to produce the evidence of a `render` ('' when there is none)."""
        rendering = evidence.rendering
        if rendering.status is RenderStatus.INFRA_ERROR:
            return f"the renderer failed on our side ({rendering.error}); try again"
        return ""

    def describe(self, evidence: PageEvidence, budget_chars: int) -> str:
        """The text an agent reads about a result, within about `budget_chars`."""
        return describe_rendering(evidence.rendering)

    def images(self, evidence: PageEvidence) -> list[bytes]:
        """The pictures an agent is shown of a result (a page's first screen); the first is what
        `render()` shows."""
        png = evidence.rendering.viewport_png if evidence.rendering else None
        return [png] if png else []

    def sight(self, evidence: PageEvidence) -> str:
        """A hash of every pixel the result was captured with (a page's full capture, a plot's
        figures): results with one sight look the same, whatever their code says."""
        digest = hashlib.sha256()
        pixels = evidence.rendering.pixels if getattr(evidence, "rendering", None) is not None else None
        if pixels is not None:
            digest.update(repr(pixels.shape).encode())
            digest.update(pixels.tobytes())
        else:
            for image in self.images(evidence):
                digest.update(hashlib.sha256(image).digest())
        return digest.hexdigest()

    def picture(self, evidence: PageEvidence) -> bytes | None:
        """The one picture a report shows of an answer: a page's full-page screenshot, else the
        first picture an agent is shown."""
        if evidence.rendering is not None:
            return evidence.rendering.full_page_png
        shown = self.images(evidence)
        return shown[0] if shown else None


class PageKind(Kind):
    """A kind whose answer is one HTML document rendered as a page (or shown in one, `as_page`):
    it provides every hook `Kind` asks for from the rendering. Subclass it, set the identity and
    scoring slots, and override what differs."""

    artifact: ClassVar[ArtifactKind] = ArtifactKind.HTML
    entry: ClassVar[str] = "index.html"
    page: ClassVar[str] = "index.html"  # the name the answer's page is served under when rendered
    asking: ClassVar[Asking] = PAGE_ASKING
    reader: ClassVar[EvidenceReader] = PageReader()
    # A reference page as its whole page (the long screenshot, up to the renderer's cap) rather
    # than its first screen: what a kind that scores whole pages compares with and shows.
    whole_page_reference: ClassVar[bool] = False

    async def reference(self, backends: Backends, task: Task) -> tuple[bytes | None, str]:
        """The task's reference picture and its visible text: `reference_image` as given, else the
        first screen of `reference_html` at the task's canvas (its whole page when the kind sets
        `whole_page_reference`). The page is rendered once per renderer, in the cache the reference
        channels score against, so the policy sees the very pixels it is compared with. (None, "")
        without a reference or when it did not render."""
        if task.reference_image:
            return decode_reference(task.reference_image), ""
        if not task.reference_html:
            return None, ""
        references = ReferenceRenderings.of(backends.renderer)
        await references.prepare(task, backends.renderer)
        rendering = references.get(task)
        if rendering is None or rendering.status is not RenderStatus.OK or not rendering.viewport_png:
            return None, ""
        png = rendering.full_page_png if self.whole_page_reference else rendering.viewport_png
        return png, rendering.metrics.visible_text

    def as_page(self, code: str) -> str:
        """The HTML document that shows an artifact (a page is its own)."""
        return code

    @contextlib.asynccontextmanager
    async def evidence(self, backends: Backends, task: Task, artifact: Artifact, files: dict[str, bytes], *,
                       live: bool, pictures: bool) -> AsyncIterator[PageEvidence]:
        """The answer rendered as a page (at the task's canvas size when it has one); with `live`,
        the page stays open until the block ends. `pictures` is for kinds whose evidence is not
        always drawn (plotly figures)."""
        if artifact.kind is not self.artifact:
            yield PageEvidence(task, artifact)
            return
        viewport = (task.canvas.width, task.canvas.height) if task.canvas else None
        html = self.as_page(artifact.code)
        if live:
            async with backends.renderer.session(html, files=files, entry=self.page, viewport=viewport) as (rendering, page):
                yield PageEvidence(task, artifact, rendering, page)
        else:
            yield PageEvidence(task, artifact, await backends.renderer.render(html, files=files, entry=self.page,
                                                                       viewport=viewport))
