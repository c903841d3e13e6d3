"""A named registry: how channels, aggregators, judges, loaders and policies are found by name.

An entry may be given as a string, `"package.module:attribute"` (`register_lazy`), as Gymnasium's
`EnvSpec.entry_point` is: the module is imported on first lookup, so listing names costs nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}  # name -> "module:attribute", not imported yet

    def register(self, name: str) -> Callable[[T], T]:
        """Register an item under `name` (as veRL's registries do): registering the same object
        again is a no-op (say, a test fixture that registers per test), but a *different* object under a
        taken name raises `ValueError`, so a plugin cannot silently replace a built-in (or another
        plugin) and change what a config selects by name. Pick a new name instead."""

        def wrap(item: T) -> T:
            if name in self._lazy and self._load(name) is item:
                return item
            current = self._items.get(name, item)
            if current is not item:
                raise ValueError(f"{self.kind} {name!r} is already registered to {_qualname(current)}; "
                                 f"refusing to replace it with {_qualname(item)} (register it under another name)")
            self._items[name] = item
            return item

        return wrap

    def register_lazy(self, name: str, target: str) -> None:
        """Register `"module:attribute"` under `name`, imported on first lookup. The same target
        again is a no-op; another target (or an object) under a taken name raises `ValueError`."""
        if ":" not in target:
            raise ValueError(f"{self.kind} {name!r}: entry point {target!r} is not 'module:attribute'")
        taken = self._lazy.get(name) or (_qualname(self._items[name]) if name in self._items else None)
        if taken is not None and taken != target:
            raise ValueError(f"{self.kind} {name!r} is already registered to {taken}; refusing to replace it with {target}")
        if name not in self._items:
            self._lazy[name] = target

    def unregister(self, name: str) -> None:
        """Take `name` away (a test that registered a plugin for itself leaves the registry as it
        found it); an unknown name is a `KeyError`."""
        if name not in self:
            raise KeyError(f"unknown {self.kind} {name!r}")
        self._items.pop(name, None)
        self._lazy.pop(name, None)

    def _load(self, name: str) -> T:
        target = self._lazy[name]
        module, _, attribute = target.partition(":")
        item = getattr(importlib.import_module(module), attribute)
        self._lazy.pop(name, None)
        self._items.setdefault(name, item)
        return self._items[name]

    def __getitem__(self, name: str) -> T:
        if name in self._items:
            return self._items[name]
        if name in self._lazy:
            return self._load(name)
        raise KeyError(f"unknown {self.kind} {name!r}; available: {list(self)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._items, *self._lazy}))

    def __len__(self) -> int:
        return len({*self._items, *self._lazy})


def _qualname(item: object) -> str:
    module = getattr(item, "__module__", None) or type(item).__module__
    name = getattr(item, "__qualname__", None) or f"<{type(item).__qualname__} instance>"
    return f"{module}.{name}"
