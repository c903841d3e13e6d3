"""Reward channels: the contract (`Channel`, `Evidence`, `ChannelResult`) and the channels of
AesCoder's agents for pages and plots. Which channels a task kind offers is the kind's choice
(`aesenv.kinds`); the AesCode verifier channels live with their checks in `aesenv.verifiers`."""

from aesenv.channels.base import (ANSWER_NAMES, Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence,
                                  Need)

__all__ = ["ANSWER_NAMES", "Channel", "ChannelContext", "ChannelResult", "ChannelStatus", "Evidence", "Need"]
