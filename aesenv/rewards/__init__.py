"""Reward pipeline, aggregators and records. The channel contract is `aesenv.channels`; which
channels and judges a task kind offers is the kind's (`aesenv.kinds`)."""

from aesenv.channels import Channel, ChannelResult, ChannelStatus, Evidence
from aesenv.rewards.aggregate import AGGREGATORS, register_aggregator
from aesenv.rewards.config import PipelineConfig
from aesenv.rewards.pipeline import RewardPipeline, Scored
from aesenv.rewards.record import ArtifactInfo, RewardRecord

__all__ = ["AGGREGATORS", "ArtifactInfo", "Channel", "ChannelResult", "ChannelStatus", "Evidence",
           "PipelineConfig", "RewardPipeline", "RewardRecord", "Scored", "register_aggregator"]
