"""`RewardRecord`: the public, replayable result of scoring one answer.

Its JSON is a contract: top-level `reward` (the paper aggregate) and `normalized`, and
`channels.<name> = {status, applicable, score, raw, payload}`. `reward` is null, never 0,
when a required channel failed on our side (`status == "infra_error"`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from aesenv.rewards.aggregate import AGGREGATORS, BREAKDOWNS
from aesenv.channels import ChannelResult


class ArtifactInfo(BaseModel):
    kind: str
    sha256: str
    bytes: int
    truncated: bool = False
    reason: str = ""


class RewardRecord(BaseModel):
    schema_version: Literal[1] = 1
    task_id: str
    category: str
    status: Literal["ok", "infra_error"]
    failure: str = Field(default="", description="why the answer failed as a page, if it did")
    reward: float | None
    normalized: float | None
    reward_name: str = "paper"
    # Every aggregate the task's kind declares (`Kind.scoring.rewards`), by name; `reward_name` is the one
    # the learner is handed (`selected_reward`).
    rewards: dict[str, float | None] = Field(default_factory=dict)
    channels: dict[str, ChannelResult]
    # The execution gate (`PipelineConfig.gate_on_execution`): "off", "passed", or "closed" (the
    # answer failed execution and the other channels were not run: `not_applicable`, saying so).
    gate: Literal["off", "passed", "closed"] = "off"
    artifact: ArtifactInfo
    rendering: dict[str, Any] | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
    provenance: dict[str, str] = Field(default_factory=dict)
    screenshot: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def aescode(self) -> dict[str, float | None] | None:
        """AesCode's Rule / Visual / Overall, when the record has AesCode channels."""
        return BREAKDOWNS["aescode"](self.channels)

    @property
    def selected_reward(self) -> float | None:
        """The aggregate named by `reward_name` (what an env hands to the learner)."""
        if self.reward_name in self.rewards:
            return self.rewards[self.reward_name]
        if self.reward_name in ("paper", "normalized"):  # a record from before `rewards`
            return self.reward if self.reward_name == "paper" else self.normalized
        return AGGREGATORS[self.reward_name](self.channels)
