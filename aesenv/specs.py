"""`name:argument` specs (`offline`, `openai:gpt-4o`, `replay:answers.jsonl`, `builtin:web`): the one
parser, and building an object from a registry of factories that take the argument."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aesenv.registry import Registry

T = TypeVar("T")


def parse_spec(spec: str) -> tuple[str, str]:
    """`"openai:gpt-4o"` → `("openai", "gpt-4o")`; a spec with no colon has an empty argument."""
    name, _, argument = spec.partition(":")
    return name, argument


def build_from_spec(registry: Registry[Callable[..., T]], spec: str, *args: Any, **options: Any) -> T:
    """`registry[name](argument, *args, **options)`; an unknown name is a `ValueError` listing the known ones."""
    name, argument = parse_spec(spec)
    if name not in registry:
        raise ValueError(f"unknown {registry.kind} {spec!r}; available: {list(registry)}")
    return registry[name](argument, *args, **options)
