"""Memory watchdog for renderer processes.

V8's heap flag stops JS-array bombs, but ArrayBuffer and DOM allocations are not capped by it
(one page passed 6 GiB here). The watchdog polls the RSS of Chromium renderer processes below
this Python process and kills any that exceed the cap; Playwright then reports the page as
crashed and the render is marked as the page's failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path

log = logging.getLogger(__name__)
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    tree, out, stack = _children(), [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def is_renderer(pid: int) -> bool:
    try:
        return b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class MemoryWatchdog:
    """Kills renderer processes above `limit_mb` while at least one render is running."""

    def __init__(self, limit_mb: int, interval_s: float = 0.25) -> None:
        self.limit = limit_mb * 1024 * 1024
        self.interval_s = interval_s
        self.kills = 0
        self._task: asyncio.Task | None = None
        self._active = 0

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
        for pid in descendants(os.getpid()):
            if is_renderer(pid) and rss_bytes(pid) > self.limit:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                    log.warning("killed renderer %s above %d MiB", pid, self.limit // 2**20)
        self.kills += killed
        return killed
