"""An async memo table for work many samples ask for at once (a reference page's render, a starting
workspace's look): concurrent requests for one key wait for one computation, and the most recent
`size` results are kept. A result `keep` refuses (our side failed) is handed back but computed again
by the next request, so a transient failure is not remembered as the answer. `PerOwner` gives each
owner (a renderer, a pipeline) a table of its own that goes when the owner goes."""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class AsyncMemo(Generic[V]):
    def __init__(self, size: int, keep: Callable[[V], bool] = lambda value: True) -> None:
        self.size = size
        self._keep = keep
        self._values: OrderedDict[str, V] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self.computed = 0  # computations run (misses), for tests and reports

    def _fresh(self, key: str) -> bool:
        return key in self._values and self._keep(self._values[key])

    def peek(self, key: str) -> V | None:
        """The last result for `key` (kept or not), without computing."""
        return self._values.get(key)

    async def get(self, key: str, compute: Callable[[], Awaitable[V]]) -> V:
        if self._fresh(key):
            self._values.move_to_end(key)
            return self._values[key]
        async with self._locks.setdefault(key, asyncio.Lock()):
            if self._fresh(key):
                value = self._values[key]
            else:
                self.computed += 1
                value = await compute()
                self._values[key] = value
                self._values.move_to_end(key)
                while len(self._values) > self.size:
                    self._values.popitem(last=False)
        self._locks.pop(key, None)  # a late waiter holds its own lock; at worst it computes twice
        return value


class PerOwner:
    """`Cls.of(owner)`: the one instance of `Cls` for `owner`, kept only as long as the owner lives."""

    _owners: "weakref.WeakKeyDictionary[Any, Any]"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._owners = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, owner: Any):
        if owner not in cls._owners:
            cls._owners[owner] = cls()
        return cls._owners[owner]
