"""`SvgArtKind`: an SVG drawing, shown as an image on a page (see the package docstring)."""

from __future__ import annotations

import base64
import re
from dataclasses import replace

from aesenv.artifact import Artifact, ArtifactKind
from aesenv.kinds.base import Scoring
from aesenv.kinds.page import PAGE_ASKING, PageKind, PageReader
from aesenv.tasks import Task
from support.svgart.channels import SVG, SvgLookChannel, SvgShapeChannel
from support.svgart.judge import SVG_JUDGE

SVG_DOCUMENT = re.compile(r"<svg\b.*?</svg>", re.S | re.I)
TASKS = [Task(id="svgart-sunset", kind="svgart", category="UI Component",
              prompt="Draw a flat sunset over the sea as a standalone SVG document."),
         Task(id="svgart-badge", kind="svgart", category="UI Component",
              prompt="Draw a round conference badge with the word 'Speaker' as a standalone SVG document.")]


class SvgArtReader(PageReader):
    """A drawing's page read as any page, its answer an SVG document."""

    answer_kind = SVG


class SvgArtKind(PageKind):
    name = "svgart"
    title = "SvgArt"
    artifact = SVG
    entry = "drawing.svg"
    default_tasks = TASKS
    asking = replace(PAGE_ASKING,
                     system_prompt="You are an illustrator. Answer with one standalone SVG document in a ```svg block.",
                     workspace_brief="an SVG drawing: the entry file is drawing.svg, shown as an image")
    scoring = Scoring(judges=SVG_JUDGE, channel_classes=(SvgShapeChannel, SvgLookChannel), fixed_channels=True,
                      gate_channel=SvgShapeChannel.name,
                      rewards={"paper": "svgart", "normalized": "svgart_normalized"})
    reader = SvgArtReader()

    def extract(self, text: str | bytes) -> Artifact:
        """The first <svg>...</svg> document in the answer."""
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        found = SVG_DOCUMENT.search(text)
        if found is None:
            kind = ArtifactKind.EMPTY if not text.strip() else ArtifactKind.UNSUPPORTED
            return Artifact(kind=kind, reason="no <svg> document", source_bytes=len(text.encode()))
        return Artifact(kind=SVG, code=found.group(0), source_bytes=len(text.encode()))

    def as_page(self, code: str) -> str:
        """The drawing as an image on a blank page: a viewer's view of it (no script in it runs)."""
        data = base64.b64encode(code.encode("utf-8")).decode("ascii")
        return ("<!doctype html><html><body style='margin:0;background:#fff'>"
                f"<img alt='drawing' src='data:image/svg+xml;base64,{data}'></body></html>")
