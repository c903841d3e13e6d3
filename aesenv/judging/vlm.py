"""What every VLM judge shares (pages, plots, projects): the rubric answer it must give, the
check that its total is the sum of its parts, and the client an `openai:<model>` judge talks through."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from aesenv.judging.base import RUBRIC_MAX
from aesenv.llm.client import ChatClient, ClientConfig


class RubricAnswer(BaseModel):
    """The judge's reply; ranges are checked here, so an out-of-range answer is retried."""

    alignment: float = Field(ge=0, le=RUBRIC_MAX["alignment"])
    aesthetics: float = Field(ge=0, le=RUBRIC_MAX["aesthetics"])
    structure: float = Field(ge=0, le=RUBRIC_MAX["structure"])
    total: float = Field(ge=0, le=100)
    rationale: str = ""

    @property
    def subtotal(self) -> float:
        return self.alignment + self.aesthetics + self.structure


TOTAL_TOLERANCE = 2.0


def check_total(answer: RubricAnswer) -> None:
    """A total far from the sum means the model used another scale (e.g. sub-scores out of 10)."""
    if abs(answer.total - answer.subtotal) > TOTAL_TOLERANCE:
        raise ValueError(f"total {answer.total:g} is not the sum of the sub-scores ({answer.subtotal:g})")


def judge_client(model: str, *, base_url: str | None = None, samples: int = 1, temperature: float | None = None,
                 **client_settings: Any) -> ChatClient:
    """The client every `openai:<model>` judge uses (pages and plots alike)."""
    if not model:
        raise ValueError("the openai judge needs a model name: --judge openai:<model>")
    settings: dict[str, Any] = {"model": model, **client_settings}
    if base_url:
        settings["base_url"] = base_url
    settings["temperature"] = temperature if temperature is not None else (0.0 if samples == 1 else 0.7)
    return ChatClient(ClientConfig(**settings))
