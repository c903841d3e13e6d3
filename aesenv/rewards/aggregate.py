"""Aggregators: how channel results become one reward. Found by name in `AGGREGATORS`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from aesenv.registry import Registry
from aesenv.channels import ChannelResult

Aggregator = Callable[[Mapping[str, ChannelResult]], float | None]
AGGREGATORS: Registry[Aggregator] = Registry("aggregator")
register_aggregator = AGGREGATORS.register

# AesCoder Eq. 1: r = 0.1·exec(±1) + 0.8·static(0–100) + 0.1·interactive(count).
PAPER_WEIGHTS = {"execution": 0.1, "static": 0.8, "interactive": 0.1}
# Channels whose infra failure voids the sample (the static judge carries 0.8 of the reward).
REQUIRED = ("execution", "static")


def _void(channels: Mapping[str, ChannelResult]) -> bool:
    return any(name in channels and channels[name].status.value == "infra_error" for name in REQUIRED)


@register_aggregator("paper")
def paper(channels: Mapping[str, ChannelResult]) -> float | None:
    """Eq. 1 on raw units. A masked channel adds nothing; a void sample has no reward (None)."""
    if _void(channels):
        return None
    total = 0.0
    for name, weight in PAPER_WEIGHTS.items():
        result = channels.get(name)
        if result is not None and result.counts:
            total += weight * float(result.raw)
    return round(total, 6)


@register_aggregator("normalized")
def normalized(channels: Mapping[str, ChannelResult]) -> float | None:
    """Weighted mean of [0, 1] scores over the channels that count, with the paper's weights."""
    if _void(channels):
        return None
    num = den = 0.0
    for name, result in channels.items():
        if not result.counts:
            continue
        weight = PAPER_WEIGHTS.get(name, 0.1)
        num += weight * float(result.score)
        den += weight
    return round(num / den, 6) if den else None


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


@register_aggregator("aescode")
def aescode(channels: Mapping[str, ChannelResult]) -> float | None:
    """AesCode's reported Overall (§3.4): the mean of Rule and Visual (whichever exist)."""
    scores = aescode_scores(channels)
    return scores["overall"] if scores else None


@register_aggregator("aescode_channels")
def aescode_channels(channels: Mapping[str, ChannelResult]) -> float | None:
    """Ours: Overall over the training channels (every deterministic one under Rule, VGR as Visual)."""
    scores = aescode_scores(channels, report="channels")
    return scores["overall"] if scores else None


# WebCoder's verifier: R = G·(0.6·f_det + 0.4·f_vlm), G the project gate (build × entry × a render
# that is not blank and did not fail). A part that does not count leaves its weight to the other.
WEBCODER_WEIGHTS = {"project_det": 0.6, "project_vlm": 0.4}


@register_aggregator("webcoder")
def webcoder(channels: Mapping[str, ChannelResult]) -> float | None:
    gate = channels.get("project_gate")
    if gate is None or gate.status.value == "infra_error":
        return None
    if not gate.counts or not gate.score:
        return 0.0
    parts = {n: channels[n] for n in WEBCODER_WEIGHTS if n in channels}
    if any(r.status.value == "infra_error" for r in parts.values()):
        return None
    counted = {n: r for n, r in parts.items() if r.counts}
    weight = sum(WEBCODER_WEIGHTS[n] for n in counted)
    if not weight:
        return None
    return round(sum(WEBCODER_WEIGHTS[n] * float(r.score) for n, r in counted.items()) / weight, 6)
