"""Aggregators: how a record's channel results become one reward, found by name in `AGGREGATORS`
(`Kind.scoring.rewards` and `PipelineConfig.reward` name them), and `BREAKDOWNS`: an aggregate's parts a
record shows beside it (AesCode's Rule / Visual / Overall).

This module is the registry only; it names no kind and no channel. Each formula lives with what it
scores (AesCoder's Eq. 1 in `aesenv.judging.aescoder`, shared by pages and plots; AesCode's in the
web kind; WebCoder's in the project kind) and the built-in ones are registered by entry point in
`aesenv.kinds`, so a config's reward is checked without loading a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aesenv.registry import Registry

if TYPE_CHECKING:
    from aesenv.channels import ChannelResult

Aggregator = Callable[[Mapping[str, "ChannelResult"]], "float | None"]
AGGREGATORS: Registry[Aggregator] = Registry("aggregator")
register_aggregator = AGGREGATORS.register

Breakdown = Callable[[Mapping[str, "ChannelResult"]], "dict[str, Any] | None"]
BREAKDOWNS: Registry[Breakdown] = Registry("aggregate breakdown")
