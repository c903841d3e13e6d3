"""Interactive-aesthetics agent slot. Until an interaction agent is configured it is masked."""

from __future__ import annotations

from aesenv.rewards.channel import ChannelResult, Evidence, register_channel


@register_channel("interactive")
class InteractiveChannel:
    name = "interactive"

    def __init__(self, **_: object) -> None:
        pass

    async def score(self, evidence: Evidence) -> ChannelResult:
        return ChannelResult.not_applicable("no interaction agent is configured in this version of aesenv")
