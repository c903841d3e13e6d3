"""Browser lifecycle: recovery after a crash, retry of the affected page, no leftover processes.

The browser is killed at defined points, never after a sleep: between two renders (and the test
waits until it is gone), and from inside a render, by an asset resolver the page asks for a script
while it loads (deterministic fault injection)."""

import asyncio
import os
import signal
from pathlib import Path

from aesenv.render import Renderer, RenderConfig, RenderStatus
from aesenv.render.watchdog import descendants

PAGE = "<html><body><h1 id='ok'>hello</h1></body></html>"
HANG_GUARD_S = 60.0  # the waits below end within a second here; only a hang reaches this


def browser_pids(before: set[int]) -> list[int]:
    pids = []
    for pid in set(descendants(os.getpid())) - before:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"chrom" in cmd and b"--type=" not in cmd:
            pids.append(pid)
    return pids


def gone(pid: int) -> bool:
    """Dead: no such process, or a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


async def until(condition, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_GUARD_S
    while not condition():
        assert loop.time() < deadline, f"{what}: not within {HANG_GUARD_S}s"
        await asyncio.sleep(0.02)


async def test_killed_browser_is_relaunched_and_page_retried():
    before = set(descendants(os.getpid()))
    async with Renderer(RenderConfig(navigation_timeout_s=5)) as r:
        assert (await r.render(PAGE)).status is RenderStatus.OK
        victims = browser_pids(before)
        assert victims
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        await until(lambda: all(gone(pid) for pid in victims), "the killed browser dying")
        again = await r.render(PAGE)
        assert again.status is RenderStatus.OK and any(e.id == "ok" for e in again.elements)
        assert r.launches == 2


class KillingResolver:
    """Kills the browser the first time the page asks for `KILL_URL`, from inside the render that
    loads it (then leaves the request blocked, as for any unknown URL)."""

    KILL_URL = "https://cdn.example.org/kill-the-browser.js"

    def __init__(self, before: set[int]) -> None:
        self.before, self.killed = before, []

    def resolve(self, url: str):
        if url == self.KILL_URL and not self.killed:
            self.killed = browser_pids(self.before)
            for pid in self.killed:
                os.kill(pid, signal.SIGKILL)
        return None


async def test_browser_killed_during_a_render_retries_that_render():
    before = set(descendants(os.getpid()))
    resolver = KillingResolver(before)
    page = f"<html><body><h1 id='ok'>loaded</h1><script src='{KillingResolver.KILL_URL}'></script></body></html>"
    async with Renderer(RenderConfig(navigation_timeout_s=5), resolvers=[resolver]) as r:
        result = await r.render(page)
        assert resolver.killed, "the page never asked for the script"
        assert result.status is RenderStatus.OK, result.error
        assert result.attempts == 2 and r.launches == 2
        assert any(e.id == "ok" for e in result.elements)


async def test_no_processes_left_after_close():
    before = set(descendants(os.getpid()))
    async with Renderer() as r:
        await asyncio.gather(*(r.render(PAGE) for _ in range(4)))
        assert len(set(descendants(os.getpid())) - before) > 0
    await until(lambda: not set(descendants(os.getpid())) - before, "the browser's processes ending after close")
