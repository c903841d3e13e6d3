"""WebCoder's verifier as an aggregator (`webcoder`), over the project kind's channels. Registered
by entry point in `aesenv.kinds`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aesenv.channels import ChannelResult


# WebCoder's verifier: R = G·(0.6·f_det + 0.4·f_vlm), G the project gate (build × entry × a render
# that is not blank and did not fail). A part that does not count leaves its weight to the other.
WEBCODER_WEIGHTS = {"project_det": 0.6, "project_vlm": 0.4}


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
