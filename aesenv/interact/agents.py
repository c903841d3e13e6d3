"""Interaction agents by name: `offline` (the deterministic explorer) or `openai:<model>`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from aesenv.interact.models import InteractionReport
from aesenv.models import INTERACTOR
from aesenv.specs import parse_spec
from aesenv.render.live import LivePage
from aesenv.tasks import Task


class Interactor(Protocol):
    """Acts on a live page for its task and reports each interaction with its verdict."""

    name: str
    budget: int

    async def explore(self, live: LivePage, task: Task) -> InteractionReport: ...


InteractorFactory = Callable[..., Interactor]  # (spec argument, budget, **options)
INTERACTORS = INTERACTOR.backends  # the `interactor` role of `aesenv.models`


def offline_interactor(_: str, budget: int, **options: Any) -> Interactor:
    from aesenv.interact.explorer import OfflineExplorer

    if options:
        raise ValueError(f"the offline explorer takes no options (got {sorted(options)})")
    return OfflineExplorer(budget=budget)


def openai_interactor(model: str, budget: int, **options: Any) -> Interactor:
    from aesenv.interact.vlm_agent import VlmAgent
    from aesenv.llm.client import ChatClient, ClientConfig

    if not model:
        raise ValueError("name the model: openai:<model>")
    return VlmAgent(ChatClient(ClientConfig(model=model, **options)), budget=budget)


def make_interactor(spec: str, budget: int = 3, **options: Any) -> Interactor:
    return INTERACTOR.build(spec, budget, **options)


def interactor_for(judge_spec: str, interactor: str | None) -> str:
    """The agent a pipeline uses: the one named, else the judge's own kind when it can act
    (a VLM judge brings the VLM agent), else the offline explorer."""
    if interactor:
        return interactor
    return judge_spec if parse_spec(judge_spec)[0] in INTERACTORS else "offline"
