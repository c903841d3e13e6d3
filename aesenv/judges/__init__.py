"""Static judges, built from a spec string: `offline` (default) or `openai:<model>` (a VLM)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aesenv.registry import Registry
from aesenv.judges.base import RUBRIC_MAX, StaticJudge, StaticJudgement

JudgeFactory = Callable[..., StaticJudge]  # (spec argument, **options)
JUDGES: Registry[JudgeFactory] = Registry("judge")
register_judge = JUDGES.register


@register_judge("offline")
def _offline(_: str, **options: Any) -> StaticJudge:
    from aesenv.judges.offline import OfflineDesignJudge

    if options:
        raise ValueError(f"the offline judge takes no options (got {sorted(options)})")
    return OfflineDesignJudge()


@register_judge("openai")
def _openai(model: str, **options: Any) -> StaticJudge:
    from aesenv.judges.vlm import openai_judge

    return openai_judge(model, **options)


def make_judge(spec: str, **options: Any) -> StaticJudge:
    """`offline`, or `openai:<model>` with options such as base_url=..., samples=3."""
    name, _, arg = spec.partition(":")
    if name not in JUDGES:
        raise ValueError(f"unknown judge {spec!r}; available: {list(JUDGES)}")
    return JUDGES[name](arg, **options)


__all__ = ["JUDGES", "RUBRIC_MAX", "StaticJudge", "StaticJudgement", "make_judge", "register_judge"]
