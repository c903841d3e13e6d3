"""The svgart channels, its artifact type and its reward formula."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.etree import ElementTree

from aesenv.aggregators import register_aggregator
from aesenv.artifact import register_artifact_kind
from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence, Need

SVG = register_artifact_kind("svg", "SVG document")
SHAPES = {"rect", "circle", "ellipse", "line", "polyline", "polygon", "path", "text"}
WEIGHTS = {"svg_shape": 0.4, "svg_look": 0.6}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class SvgShapeChannel(Channel):
    """Whether the answer is a standalone SVG a viewer can scale and name: well-formed XML with an
    <svg> root, a viewBox, a <title>, and at least three drawn shapes."""

    name = "svg_shape"
    reads = SVG

    async def measure(self, evidence: Evidence) -> ChannelResult:
        try:
            root = ElementTree.fromstring(evidence.artifact.code)
        except ElementTree.ParseError as exc:
            return self.failed(f"not well-formed XML: {exc}")
        if _local(root.tag) != "svg":
            return self.failed(f"the root element is <{_local(root.tag)}>, not <svg>")
        shapes = sum(_local(e.tag) in SHAPES for e in root.iter())
        checks = {"viewbox": "viewBox" in root.attrib, "title": any(_local(e.tag) == "title" for e in root.iter()),
                  "shapes": shapes >= 3}
        return ChannelResult(status=ChannelStatus.OK, score=round(sum(checks.values()) / len(checks), 4),
                             raw=float(sum(checks.values())), payload={"checks": checks, "shape_count": shapes})


class SvgLookChannel(Channel):
    """The kind's judge on the drawing as shown: the image the page renderer captured."""

    name = "svg_look"
    reads = SVG
    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    def __init__(self, judge: Any) -> None:
        self.judge = judge

    @classmethod
    def from_context(cls, context: ChannelContext) -> "SvgLookChannel":
        cls.options_of(context)
        return cls(context.judge)

    async def measure(self, evidence: Evidence) -> ChannelResult:
        verdict = self.judge.judge(evidence.rendering.pixels)
        return ChannelResult(status=ChannelStatus.OK, score=round(verdict["score"] / 10, 4), raw=verdict["score"],
                             payload=verdict)


def svgart_normalized(channels: Mapping[str, ChannelResult]) -> float | None:
    """The weighted mean of the two channels' scores (None when either is our failure)."""
    results = [channels.get(name) for name in WEIGHTS]
    if any(r is None or r.status is ChannelStatus.INFRA_ERROR for r in results):
        return None
    return round(sum(WEIGHTS[name] * (r.score or 0.0) for name, r in zip(WEIGHTS, results)), 4)


def svgart_paper(channels: Mapping[str, ChannelResult]) -> float | None:
    """The normalized reward on a 0-100 scale."""
    normalized = svgart_normalized(channels)
    return None if normalized is None else round(100 * normalized, 2)


register_aggregator("svgart")(svgart_paper)
register_aggregator("svgart_normalized")(svgart_normalized)
