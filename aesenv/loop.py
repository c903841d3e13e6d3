"""A private event loop on a daemon thread: how the sync facades call the async core.

Sync callers (a Gymnasium training loop, a notebook already running asyncio) never run
Playwright on their own loop: coroutines are submitted here and waited on with a deadline.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "aesenv-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        if not self._thread.is_alive():
            coro.close()
            raise RuntimeError("the aesenv event loop has been stopped")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
