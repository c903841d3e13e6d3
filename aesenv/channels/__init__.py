"""The reward-channel contract (`Channel`, `Need`, `ChannelResult`, `Evidence`, `ChannelContext`).
The channels themselves live with the kind they measure (`aesenv.kinds.<kind>`)."""

from aesenv.channels.base import (ANSWER_NAMES, Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence, Need,
                                  NoOptions, Shortfall)

__all__ = ["ANSWER_NAMES", "Channel", "ChannelContext", "ChannelResult", "ChannelStatus", "Evidence", "Need",
           "NoOptions", "Shortfall"]
