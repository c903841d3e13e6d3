"""Aggregators: how channel results become one reward. Found by name in `AGGREGATORS`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

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


# AesCode reporting over its seven channels: Rule is the mean of the deterministic ones (s_exec,
# text, boundary, table/chart, layout, whitespace), Visual is the VGR score, Overall their mean.
# Channels that do not count (not applicable, infra_error) are left out, never scored 0. A record
# scored with our extended channels (lint as execution, table and chart apart) has them in Rule;
# `aescode_checklist` (ours) also puts the checklist's dimensions under Visual.
RULE_CHANNELS = ("renderable", "execution", "text", "boundary", "table_chart", "table", "chart", "layout",
                 "whitespace")
AESCODE_MARKERS = ("renderable", "text", "boundary", "table_chart", "table", "chart", "vgr", "checklist")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def aescode_scores(channels: Mapping[str, ChannelResult], checklist_in_visual: bool = False
                   ) -> dict[str, float | None] | None:
    """`{"rule", "visual", "overall"}` (each None when nothing behind it counts); None when the
    record has none of the AesCode channels."""
    if not any(name in channels for name in AESCODE_MARKERS):
        return None
    rule = _mean([float(channels[n].score) for n in RULE_CHANNELS if n in channels and channels[n].counts])
    checklist, vgr = channels.get("checklist"), channels.get("vgr")
    dimensions = (checklist.payload.get("dimensions", {}) if checklist_in_visual and checklist is not None
                  and checklist.counts else {})
    visual = _mean([float(v) for v in dimensions.values()] + ([float(vgr.score)] if vgr is not None and vgr.counts else []))
    overall = _mean([v for v in (rule, visual) if v is not None])
    return {"rule": rule, "visual": visual, "overall": overall}


@register_aggregator("aescode")
def aescode(channels: Mapping[str, ChannelResult]) -> float | None:
    """AesCode's Overall: the mean of Rule and Visual (whichever exist)."""
    scores = aescode_scores(channels)
    return scores["overall"] if scores else None


@register_aggregator("aescode_checklist")
def aescode_checklist(channels: Mapping[str, ChannelResult]) -> float | None:
    """Ours: Overall with the checklist's dimensions beside VGR under Visual."""
    scores = aescode_scores(channels, checklist_in_visual=True)
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
