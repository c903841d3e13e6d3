"""The policy contract and the registry that builds policies from a spec string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from aesenv.registry import Registry
from aesenv.tasks import Task


@runtime_checkable
class Policy(Protocol):
    """Anything that turns a task into model text (what an LLM would answer)."""

    name: str

    async def generate(self, task: Task) -> str: ...


PolicyFactory = Callable[[str], Policy]
POLICIES: Registry[PolicyFactory] = Registry("policy")
register_policy = POLICIES.register


def make_policy(spec: str) -> Policy:
    """Build a policy from `name` or `name:argument` (e.g. `template`, `replay:answers.jsonl`)."""
    name, _, arg = spec.partition(":")
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; available: {list(POLICIES)}")
    return POLICIES[name](arg)
