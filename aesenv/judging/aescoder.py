"""AesCoder's reward (Eq. 1) and its [0, 1] form: the `paper` and `normalized` aggregators of the
kinds scored like AesCoder's pages (web pages, plot scripts), by the channel names they share."""

from __future__ import annotations

from collections.abc import Mapping

from aesenv.channels import ChannelResult

# AesCoder Eq. 1: r = 0.1·exec(±1) + 0.8·static(0–100) + 0.1·interactive(count).
PAPER_WEIGHTS = {"execution": 0.1, "static": 0.8, "interactive": 0.1}
# Channels whose infra failure voids the sample (the static judge carries 0.8 of the reward).
REQUIRED = ("execution", "static")
OTHER_WEIGHT = 0.1  # a channel outside Eq. 1, in the weighted mean


def _void(channels: Mapping[str, ChannelResult]) -> bool:
    return any(name in channels and channels[name].status.value == "infra_error" for name in REQUIRED)


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


def normalized(channels: Mapping[str, ChannelResult]) -> float | None:
    """Weighted mean of [0, 1] scores over the channels that count, with the paper's weights."""
    if _void(channels):
        return None
    num = den = 0.0
    for name, result in channels.items():
        if not result.counts:
            continue
        weight = PAPER_WEIGHTS.get(name, OTHER_WEIGHT)
        num += weight * float(result.score)
        den += weight
    return round(num / den, 6) if den else None
