"""Browser lifecycle: recovery after a crash, retry of the affected page, no leftover processes."""

import asyncio
import os
import signal
from pathlib import Path

from aesenv.render import Renderer, RenderConfig, RenderStatus
from aesenv.render.watchdog import descendants

PAGE = "<html><body><h1 id='ok'>hello</h1></body></html>"


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


async def test_killed_browser_is_relaunched_and_page_retried():
    before = set(descendants(os.getpid()))
    async with Renderer(RenderConfig(navigation_timeout_s=5)) as r:
        assert (await r.render(PAGE)).status is RenderStatus.OK
        for pid in browser_pids(before):
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        again = await r.render(PAGE)
        assert again.status is RenderStatus.OK and any(e.id == "ok" for e in again.elements)
        assert r.launches == 2


async def test_browser_killed_during_a_render_retries_that_render():
    before = set(descendants(os.getpid()))
    slow = "<html><body><h1 id='ok'>slow</h1><script>setTimeout(() => {}, 400)</script></body></html>"
    async with Renderer(RenderConfig(navigation_timeout_s=5)) as r:
        await r.start()
        pending = asyncio.ensure_future(r.render(slow))
        await asyncio.sleep(0.15)
        for pid in browser_pids(before):
            os.kill(pid, signal.SIGKILL)
        result = await pending
        assert result.status is RenderStatus.OK, result.error
        assert result.attempts == 2


async def test_no_processes_left_after_close():
    before = set(descendants(os.getpid()))
    async with Renderer() as r:
        await asyncio.gather(*(r.render(PAGE) for _ in range(4)))
        assert len(set(descendants(os.getpid())) - before) > 0
    for _ in range(20):
        left = set(descendants(os.getpid())) - before
        if not left:
            break
        await asyncio.sleep(0.25)
    assert not left, left
