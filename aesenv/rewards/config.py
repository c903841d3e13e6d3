"""`PipelineConfig`: what a `RewardPipeline` runs, as data (a training config's `reward_kwargs`,
a benchmark's identity)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from aesenv.kinds import KINDS, default_channels
from aesenv.render.renderer import RenderConfig
from aesenv.rewards.aggregate import AGGREGATORS


class PipelineConfig(BaseModel):
    # Default: what the registered kinds score with when a config names no channel (their entries'
    # `channels`, in registration order).
    channels: list[str] = Field(default_factory=default_channels)
    judge: str = "offline"
    judge_options: dict[str, Any] = Field(default_factory=dict)  # e.g. {"samples": 3} for openai:<model>
    reward: str = "paper"
    channel_timeout_s: float = 60.0
    render: RenderConfig = Field(default_factory=RenderConfig)
    sandbox: str = "local"  # where scripts run: "local" or "docker"
    # The page kinds' interactive agent (read by the channel that acts on pages,
    # `Channel.config_options`): None follows the judge (`offline` → the deterministic explorer,
    # `openai:<model>` → the VLM web agent), or name one; N = scored interactions per page.
    interactor: str | None = None
    interactor_options: dict[str, Any] = Field(default_factory=dict)  # ClientConfig fields for a VLM agent
    interaction_budget: int = Field(default=3, ge=1)
    # AesCoder's execution gate: the other channels assess an answer only when it passes the
    # `execution` channel; one that fails scores on execution alone (−0.1 under `paper`). The
    # paper trains this way and evaluates OpenDesign without it.
    gate_on_execution: bool = False
    # Per-channel switches, by channel name (e.g. {"vgr": {"show_reference": true}}): each channel
    # that takes options names them in its `Options` model; defaults are the published method.
    channel_options: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def options_for(self, channel: str) -> dict[str, Any]:
        """The options the channel named `channel` is given by name (`channel_options`); a channel
        adds what it reads elsewhere in this config (`Channel.config_options`)."""
        return dict(self.channel_options.get(channel, {}))

    def channels_for(self, kind: str) -> list[str]:
        """The channels `kind`'s answers are scored with: a kind with fixed channels (the project
        verifier) runs its own, any other kind the configured ones it has."""
        spec = KINDS[kind]
        return list(spec.channels) if spec.scoring.fixed_channels else [n for n in self.channels if n in spec.channels]

    def model_post_init(self, _: object) -> None:
        # Channel names are the kinds' and are checked when a pipeline is built (loading every
        # kind); aggregators are the pipeline's own and are known here.
        if self.reward not in AGGREGATORS:
            raise ValueError(f"unknown reward {self.reward!r}; available: {list(AGGREGATORS)}")
