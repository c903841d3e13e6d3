"""The web kind's static judges (the `page_judge` role of `aesenv.models`): `offline` or
`openai:<model>` (a VLM).

Which one a run uses is a choice with consequences. The offline judge is deterministic, free and
needs no server, which is what tests, smoke runs and laptops want; measured against designers'
preferences it is a weak proxy (`OFFLINE_FIDELITY`), so training and benchmark configs default to
a VLM (`aesenv.models.default_judge()`), and choosing the offline judge there takes an explicit
switch and logs `offline_judge_warning()`.
"""

from __future__ import annotations

from typing import Any

from aesenv.judging.base import RUBRIC_MAX, StaticJudge, StaticJudgement
from aesenv.models import DEFAULT_VLM_JUDGE, PAGE_JUDGE, JudgeSpec, default_judge

JUDGES = PAGE_JUDGE.backends
register_judge = JUDGES.register


def offline_page_judge(_: str, **options: Any) -> StaticJudge:
    from aesenv.judging.design import OfflineDesignJudge

    if options:
        raise ValueError(f"the offline judge takes no options (got {sorted(options)})")
    return OfflineDesignJudge()


def offline_judge_warning() -> str:
    """What a run that trains or benchmarks on the offline judge is told, with its measured fidelity."""
    from aesenv.judging.design import OFFLINE_FIDELITY

    return ("the offline judge is a deterministic proxy for tests, smoke runs and laptops, not a "
            f"training reward for real models: {OFFLINE_FIDELITY}. Use a VLM judge "
            f"(--judge {DEFAULT_VLM_JUDGE} with OPENAI_BASE_URL at a vLLM server) for real runs.")


def judge_setup_problem(spec: str, options: dict[str, Any] | None = None) -> str | None:
    """`JudgeSpec.problem` for a spec and its options as a pipeline config holds them."""
    options = dict(options or {})
    return JudgeSpec(spec=spec, samples=options.pop("samples", None), base_url=options.pop("base_url", None),
                     settings=options).problem()


def make_judge(spec: str, **options: Any) -> StaticJudge:
    """`offline`, or `openai:<model>` with options such as base_url=..., samples=3."""
    return PAGE_JUDGE.build(spec, **options)


__all__ = ["DEFAULT_VLM_JUDGE", "JUDGES", "RUBRIC_MAX", "StaticJudge", "StaticJudgement", "default_judge",
           "judge_setup_problem", "make_judge", "offline_judge_warning", "register_judge"]
