"""AesCode's reported scores (its `aescode` and `aescode_channels` aggregators and the record's
`aescode` breakdown), over the web kind's verifier channels. Registered by entry point in
`aesenv.kinds`: loading this module loads nothing of the page machinery."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aesenv.channels import ChannelResult


# AesCode's reported scores (§3.4): Rule is the mean of the Text, Boundary and Table/Chart
# verifiers; Visual is the mean of the checklist's Content, Layout and Style; Overall is their mean.
# VGR is used only for training and Execution (s_exec) is a diagnostic: neither is reported.
# Channels that do not count (not applicable, infra_error) are left out, never scored 0.
PUBLISHED_RULE = ("text", "boundary", "table_chart")
PUBLISHED_VISUAL = ("content", "layout", "style")  # the checklist's dimensions
# Ours (`aescode_channels`, the scalar the GDPO training config logs, where no checklist runs):
# Rule over every deterministic channel a record has, Visual the VGR score.
RULE_CHANNELS = ("renderable", "execution", "text", "boundary", "table_chart", "table", "chart", "layout",
                 "whitespace")
AESCODE_MARKERS = ("renderable", "text", "boundary", "table_chart", "table", "chart", "vgr", "checklist")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _counted(channels: Mapping[str, ChannelResult], names: tuple[str, ...]) -> list[float]:
    return [float(channels[n].score) for n in names if n in channels and channels[n].counts]


def _checklist_visual(channels: Mapping[str, ChannelResult]) -> list[float]:
    checklist = channels.get("checklist")
    dimensions = checklist.payload.get("dimensions", {}) if checklist is not None and checklist.counts else {}
    return [float(dimensions[d]) for d in PUBLISHED_VISUAL if d in dimensions]


@dataclass(frozen=True)
class AescodeReport:
    """Which channels make Rule, and what makes Visual."""

    rule: tuple[str, ...]
    visual: Callable[[Mapping[str, ChannelResult]], list[float]]


AESCODE_REPORTS: dict[str, AescodeReport] = {
    "published": AescodeReport(rule=PUBLISHED_RULE, visual=_checklist_visual),
    "channels": AescodeReport(rule=RULE_CHANNELS, visual=lambda channels: _counted(channels, ("vgr",))),
}


def aescode_scores(channels: Mapping[str, ChannelResult], report: str = "published"
                   ) -> dict[str, float | None] | None:
    """`{"rule", "visual", "overall"}` under `report` (each None when nothing behind it counts);
    None when the record has none of the AesCode channels."""
    if not any(name in channels for name in AESCODE_MARKERS):
        return None
    view = AESCODE_REPORTS[report]
    rule = _mean(_counted(channels, view.rule))
    visual = _mean(view.visual(channels))
    overall = _mean([v for v in (rule, visual) if v is not None])
    return {"rule": rule, "visual": visual, "overall": overall}


def aescode(channels: Mapping[str, ChannelResult]) -> float | None:
    """AesCode's reported Overall (§3.4): the mean of Rule and Visual (whichever exist)."""
    scores = aescode_scores(channels)
    return scores["overall"] if scores else None


def aescode_channels(channels: Mapping[str, ChannelResult]) -> float | None:
    """Ours: Overall over the training channels (every deterministic one under Rule, VGR as Visual)."""
    scores = aescode_scores(channels, report="channels")
    return scores["overall"] if scores else None
