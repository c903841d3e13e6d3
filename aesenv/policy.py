"""What produces model text for aesenv, as the library sees it: a `Policy` answers a task once, an
`Agent` writes one assistant message per turn of a refine episode. Implementations are
applications (`policies/`: templates, replay, chat models); the library finds them by name in
`POLICIES`, which fills itself from the `aesenv.policies` entry points (`pyproject.toml`), so
`aesenv` never imports them. A third-party package registers its own the same way."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Protocol, runtime_checkable

from aesenv.registry import Registry
from aesenv.specs import build_from_spec, parse_spec
from aesenv.tasks import Task

ENTRY_POINT_GROUP = "aesenv.policies"


@runtime_checkable
class Policy(Protocol):
    """Anything that turns a task into model text (what an LLM would answer)."""

    name: str

    async def generate(self, task: Task) -> str: ...


@runtime_checkable
class Agent(Protocol):
    """A policy that acts in multi-turn episodes: the conversation in, one assistant message out."""

    name: str

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict: ...


PolicyFactory = Callable[[str], Policy]
POLICIES: Registry[PolicyFactory] = Registry("policy")
register_policy = POLICIES.register


def _load_entry_point(name: str) -> None:
    """Import the module an `aesenv.policies` entry point names; it registers its policies."""
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name == name:
            entry_point.load()


def available_policies() -> list[str]:
    return sorted({*POLICIES, *(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))})


def make_policy(spec: str) -> Policy:
    """Build a policy from `name` or `name:argument` (e.g. `template`, `replay:answers.jsonl`)."""
    name, _ = parse_spec(spec)
    if name not in POLICIES:
        _load_entry_point(name)
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; available: {available_policies()}")
    return build_from_spec(POLICIES, spec)
