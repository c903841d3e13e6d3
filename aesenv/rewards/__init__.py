"""Reward channels, aggregators and the pipeline that runs them."""

from aesenv.rewards import execution, interactive, plot, static  # noqa: F401 - registers the channels
from aesenv.rewards.aggregate import AGGREGATORS, PAPER_WEIGHTS, register_aggregator
from aesenv.rewards.channel import CHANNELS, ChannelResult, ChannelStatus, Evidence, RewardChannel, register_channel
from aesenv.rewards.pipeline import PipelineConfig, RewardPipeline, Scored
from aesenv.rewards.record import ArtifactInfo, RewardRecord

__all__ = ["AGGREGATORS", "CHANNELS", "PAPER_WEIGHTS", "ArtifactInfo", "ChannelResult", "ChannelStatus",
           "Evidence", "PipelineConfig", "RewardChannel", "RewardPipeline", "RewardRecord", "Scored",
           "register_aggregator", "register_channel"]

import aesenv.verifiers  # noqa: E402,F401 - registers the AesCode verifier and checklist channels
