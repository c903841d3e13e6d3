"""Memory watchdog for renderer processes, and the GPU processes' CPU time.

V8's heap flag stops JS-array bombs, but ArrayBuffer and DOM allocations are not capped by it
(one page passed 6 GiB here). The watchdog polls the RSS of Chromium renderer processes below
this Python process and kills any that exceed the cap; Playwright then reports the page as
crashed and the render is marked as the page's failure.

`gpu_cpu_seconds` is how the renderer tells a WebGL page that is slow to draw from one that
hangs: software GL draws in the browser's GPU process, which burns CPU while a frame is drawn;
a page stuck in its own JavaScript leaves it idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

# Reading /proc lives in aesenv.procfs; these names stay importable from here.
from aesenv.procfs import CLOCK_TICKS, PAGE_SIZE, cmdline_has, cpu_seconds, descendants, rss_bytes  # noqa: F401

log = logging.getLogger(__name__)


def is_renderer(pid: int) -> bool:
    return cmdline_has(pid, b"--type=renderer")


def gpu_cpu_seconds(parents: dict[int, int | None] | None = None) -> float:
    """CPU time used so far by the Chromium GPU processes below this process."""
    return sum(cpu_seconds(pid) for pid in descendants(os.getpid(), parents)
               if cmdline_has(pid, b"--type=gpu-process"))


class MemoryWatchdog:
    """Kills renderer processes above `limit_mb` while at least one render is running."""

    def __init__(self, limit_mb: int, interval_s: float = 0.25) -> None:
        self.limit = limit_mb * 1024 * 1024
        self.interval_s = interval_s
        self.kills = 0
        self._task: asyncio.Task | None = None
        self._active = 0
        self._parents: dict[int, int | None] = {}
        self._renderers: dict[int, bool] = {}

    def __enter__(self) -> "MemoryWatchdog":
        self._active += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc) -> None:
        self._active -= 1
        if self._active == 0 and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.to_thread(self.sweep)
                await asyncio.sleep(self.interval_s)

    def sweep(self) -> int:
        killed = 0
        pids = descendants(os.getpid(), self._parents)
        self._renderers = {pid: self._renderers[pid] if pid in self._renderers else is_renderer(pid)
                           for pid in pids}
        for pid in pids:
            if self._renderers[pid] and rss_bytes(pid) > self.limit:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                    log.warning("killed renderer %s above %d MiB", pid, self.limit // 2**20)
        self.kills += killed
        return killed
