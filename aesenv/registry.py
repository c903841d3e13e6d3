"""A named registry: how channels, aggregators, judges, loaders and policies are found by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Register an item under `name` (as veRL's registries do): registering the same object
        again is a no-op (say, a test fixture that registers per test), but a *different* object under a
        taken name raises `ValueError`, so a plugin cannot silently replace a built-in (or another
        plugin) and change what a config selects by name. Pick a new name instead."""

        def wrap(item: T) -> T:
            current = self._items.get(name, item)
            if current is not item:
                raise ValueError(f"{self.kind} {name!r} is already registered to {_qualname(current)}; "
                                 f"refusing to replace it with {_qualname(item)} (register it under another name)")
            self._items[name] = item
            return item

        return wrap

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; available: {sorted(self._items)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)


def _qualname(item: object) -> str:
    module = getattr(item, "__module__", None) or type(item).__module__
    name = getattr(item, "__qualname__", None) or f"<{type(item).__qualname__} instance>"
    return f"{module}.{name}"
