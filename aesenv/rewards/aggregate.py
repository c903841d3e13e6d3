"""Aggregators, for the pipeline: the registry (`aesenv.aggregators`) with the built-in formulas
registered (`aesenv.kinds` registers them by entry point, beside the kinds they score)."""

from __future__ import annotations

import aesenv.kinds  # noqa: F401 - registers the built-in aggregators by entry point
from aesenv.aggregators import AGGREGATORS, BREAKDOWNS, Aggregator, register_aggregator

__all__ = ["AGGREGATORS", "BREAKDOWNS", "Aggregator", "register_aggregator"]
