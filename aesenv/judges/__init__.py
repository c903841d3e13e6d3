"""Static judges, built from a spec string: `offline` (default) or, later, `openai:<model>`."""

from __future__ import annotations

from collections.abc import Callable

from aesenv.registry import Registry
from aesenv.judges.base import RUBRIC_MAX, StaticJudge, StaticJudgement

JudgeFactory = Callable[[str], StaticJudge]
JUDGES: Registry[JudgeFactory] = Registry("judge")
register_judge = JUDGES.register


@register_judge("offline")
def _offline(_: str) -> StaticJudge:
    from aesenv.judges.offline import OfflineDesignJudge

    return OfflineDesignJudge()


def make_judge(spec: str) -> StaticJudge:
    name, _, arg = spec.partition(":")
    if name not in JUDGES:
        raise ValueError(f"unknown judge {spec!r}; available: {list(JUDGES)}")
    return JUDGES[name](arg)


__all__ = ["JUDGES", "RUBRIC_MAX", "StaticJudge", "StaticJudgement", "make_judge", "register_judge"]
