"""What a static judge returns, whichever judge it is (offline metrics or a VLM)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field, model_validator

from aesenv.render.models import Rendering
from aesenv.tasks import Task

# The published rubric: instruction alignment 40, aesthetics & readability 30, structure 30.
RUBRIC_MAX = {"alignment": 40.0, "aesthetics": 30.0, "structure": 30.0}


def clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo if x < lo else hi if x > hi else x


def ramp(x: float, zero: float, full: float) -> float:
    """0 at `zero`, 1 at `full`, linear between (either direction): how the judges turn a
    measurement into a share of a sub-score's points."""
    if full == zero:
        return 1.0 if x >= full else 0.0
    return clamp((x - zero) / (full - zero))

class StaticJudgement(BaseModel):
    alignment: float = Field(ge=0, le=RUBRIC_MAX["alignment"])
    aesthetics: float = Field(ge=0, le=RUBRIC_MAX["aesthetics"])
    structure: float = Field(ge=0, le=RUBRIC_MAX["structure"])
    total: float = Field(ge=0, le=100)
    rationale: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _total_is_sum(self) -> "StaticJudgement":
        expected = self.alignment + self.aesthetics + self.structure
        if abs(expected - self.total) > 0.51:
            raise ValueError(f"total {self.total} != sum of sub-scores {expected:.2f}")
        return self

    def payload(self, judge_name: str, judge_version: str) -> dict[str, Any]:
        """What a static channel records: who judged, the sub-scores, and the evidence."""
        return {"judge": judge_name, "judge_version": judge_version, **self.model_dump()}


class StaticJudge(Protocol):
    """Scores a rendered page against its task on the 40/30/30 rubric."""

    name: str
    version: str

    async def judge(self, task: Task, rendering: Rendering) -> StaticJudgement: ...
