"""The web kind's static judges, built from a spec string: `offline` or `openai:<model>` (a VLM).

Which one a run uses is a choice with consequences. The offline judge is deterministic, free and
needs no server, which is what tests, smoke runs and laptops want; measured against designers'
preferences it is a weak proxy (`OFFLINE_FIDELITY`), so training and benchmark configs default to
a VLM (`default_judge()`), and choosing the offline judge there takes an explicit switch and
logs `offline_judge_warning()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aesenv.registry import Registry
from aesenv.specs import build_from_spec, parse_spec
from aesenv.judging.base import RUBRIC_MAX, StaticJudge, StaticJudgement

JudgeFactory = Callable[..., StaticJudge]  # (spec argument, **options)
JUDGES: Registry[JudgeFactory] = Registry("judge")
register_judge = JUDGES.register


@register_judge("offline")
def _offline(_: str, **options: Any) -> StaticJudge:
    from aesenv.kinds.web.judges.offline import OfflineDesignJudge

    if options:
        raise ValueError(f"the offline judge takes no options (got {sorted(options)})")
    return OfflineDesignJudge()


@register_judge("openai")
def _openai(model: str, **options: Any) -> StaticJudge:
    from aesenv.kinds.web.judges.vlm import openai_judge

    return openai_judge(model, **options)


JUDGE_ENV = "AESENV_JUDGE"
# An open VLM a user can serve with vLLM (`vllm serve Qwen/Qwen2.5-VL-7B-Instruct`) and reach
# through OPENAI_BASE_URL; any `openai:<model>` spec replaces it.
DEFAULT_VLM_JUDGE = "openai:Qwen/Qwen2.5-VL-7B-Instruct"


def default_judge() -> str:
    """The judge of training and benchmark configs: `$AESENV_JUDGE`, else `DEFAULT_VLM_JUDGE`."""
    return os.environ.get(JUDGE_ENV) or DEFAULT_VLM_JUDGE


def offline_judge_warning() -> str:
    """What a run that trains or benchmarks on the offline judge is told, with its measured fidelity."""
    from aesenv.kinds.web.judges.offline import OFFLINE_FIDELITY

    return ("the offline judge is a deterministic proxy for tests, smoke runs and laptops, not a "
            f"training reward for real models: {OFFLINE_FIDELITY}. Use a VLM judge "
            f"(--judge {DEFAULT_VLM_JUDGE} with OPENAI_BASE_URL at a vLLM server) for real runs.")


def judge_setup_problem(spec: str, options: dict[str, Any] | None = None) -> str | None:
    """Why `spec` cannot work on this machine as configured (None when it can): a VLM judge with
    no endpoint and no key would send every page to api.openai.com and mask them all."""
    name, model = parse_spec(spec)
    if name not in JUDGES:
        return f"unknown judge {spec!r}; available: {list(JUDGES)}"
    if name != "openai":
        return None
    if not model:
        return "a VLM judge needs a model: openai:<model>"
    if (options or {}).get("base_url") or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"):
        return None
    return (f"judge {spec} has no endpoint: set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for "
            f"`vllm serve {model}`) or OPENAI_API_KEY, pass --judge-base-url, or choose another judge "
            f"with --judge / ${JUDGE_ENV} (`offline` only for tests and smoke runs)")


def make_judge(spec: str, **options: Any) -> StaticJudge:
    """`offline`, or `openai:<model>` with options such as base_url=..., samples=3."""
    return build_from_spec(JUDGES, spec, **options)


__all__ = ["DEFAULT_VLM_JUDGE", "JUDGES", "RUBRIC_MAX", "StaticJudge", "StaticJudgement", "default_judge",
           "judge_setup_problem", "make_judge", "offline_judge_warning", "register_judge"]
