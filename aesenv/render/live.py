"""A rendered page kept open for interaction: what the interactive agents act on.

`Renderer.session(html)` yields a `Session`: the `Rendering` (exactly what `Renderer.render`
returns) and the `LivePage` it came from, whose context is closed when the block ends. The page keeps everything
the render set up: hermetic routing, seeded randomness, dismissed dialogs, blocked popups, and
the paused clock, so after an action the agent must `advance` virtual time for timers and
animation frames to run. Every call on the page goes through `bounded`, which stops the
page's JavaScript when it overruns, so a hostile page cannot hang an agent. An action may make
the page load a new document (a form without a handler submits and reloads it): an agent wraps
its actions in `settles_navigation`, and a call that loses its document to a navigation (a
timer that reloads the page) waits for the new one and runs again there.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple, TypeVar

from playwright.async_api import Error as PlaywrightError, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from aesenv.render.models import Rendering

T = TypeVar("T")


async def stop_scripts(cdp: Any) -> None:
    """Stop whatever JavaScript the page is running (a loop that holds up a call on it)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(cdp.send("Runtime.terminateExecution"), 2)


class PageStalled(RuntimeError):
    """A call on the live page overran its deadline; the page's JavaScript was stopped."""


_LEAVING = """async () => {
  for (let turn = 0; turn < 2; turn++) {
    await new Promise((resolve) => { const c = new MessageChannel(); c.port1.onmessage = resolve; c.port2.postMessage(null); });
  }
  const leaving = self[Symbol.for("aesenv.leaving")] === true;
  self[Symbol.for("aesenv.leaving")] = false;  // a navigation held back leaves the document in place
  return leaving;
}"""


def _lost_its_document(exc: PlaywrightError) -> bool:
    return "context was destroyed" in exc.message or "Cannot find context" in exc.message


@dataclasses.dataclass
class LivePage:
    page: Page
    cdp: Any
    trace: Any
    freeze_time: bool = True

    @property
    def page_errors(self) -> list[str]:
        """Uncaught page errors so far, growing as the agent acts (the render's are first)."""
        return self.trace.page_errors

    @property
    def dialogs(self) -> int:
        return self.trace.dialogs

    async def bounded(self, call: Awaitable[T], timeout_s: float = 5.0) -> T:
        """Run one call on the page under a deadline; on expiry stop the page's scripts."""
        try:
            return await asyncio.wait_for(call, timeout_s)
        except (asyncio.TimeoutError, PlaywrightTimeoutError) as exc:
            await stop_scripts(self.cdp)
            raise PageStalled(f"the page did not answer within {timeout_s}s") from exc

    @contextlib.asynccontextmanager
    async def settles_navigation(self, timeout_s: float = 5.0) -> AsyncIterator[None]:
        """Wrap an action: if it made the page leave for a new document, the block ends once
        that document has loaded (or after `timeout_s`), so what follows measures the page the
        user would see. The page's own task queue is run twice first: a form submission only
        starts its navigation in a task of its own."""
        before = self.trace.navigations
        yield
        try:
            leaving = await self.bounded(self.page.evaluate(_LEAVING), timeout_s)
        except PlaywrightError as exc:
            if not _lost_its_document(exc):
                raise
            leaving = True
        if not leaving:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.trace.navigations == before and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await self._loaded(max(0.0, deadline - loop.time()))

    async def _loaded(self, timeout_s: float) -> None:
        """Wait for the document being loaded, if any (a document that never finishes loading
        is acted on as it stands)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.trace.document_loaded.wait(), timeout_s)
        self.trace.document_loaded.set()

    async def _on_current_document(self, call: Callable[[], Awaitable[T]], timeout_s: float) -> T:
        """`bounded(call())`, run once more on the new document if a navigation replaced the
        one it started on."""
        try:
            return await self.bounded(call(), timeout_s)
        except PlaywrightError as exc:
            if not _lost_its_document(exc):
                raise
        await self._loaded(timeout_s)
        return await self.bounded(call(), timeout_s)

    async def advance(self, ms: int, timeout_s: float = 5.0) -> None:
        """Let `ms` of the page's time pass: virtual time when the clock is frozen."""
        if self.freeze_time:
            await self._on_current_document(lambda: self.page.clock.run_for(ms), timeout_s)
        else:
            await self.bounded(self.page.wait_for_timeout(ms), timeout_s + ms / 1000)

    async def screenshot(self, fmt: str = "png", *, quality: int = 80, timeout_s: float = 10.0) -> bytes:
        """The current viewport (what a user sees), PNG or JPEG."""
        params: dict[str, Any] = {"format": fmt, "optimizeForSpeed": True}
        if fmt != "png":
            params["quality"] = quality
        shot = await self.bounded(self.cdp.send("Page.captureScreenshot", params), timeout_s)
        return base64.b64decode(shot["data"])

    async def evaluate(self, script: str, arg: Any = None, timeout_s: float = 5.0) -> Any:
        return await self._on_current_document(lambda: self.page.evaluate(script, arg), timeout_s)

    async def alive(self) -> bool:
        """Whether the page still answers (not crashed, not closed)."""
        with contextlib.suppress(PlaywrightError, PageStalled):
            return bool(await self.evaluate("() => true", timeout_s=2))
        return False


class Session(NamedTuple):
    rendering: Rendering
    live: LivePage | None
