"""A rendered page kept open for interaction: what the interactive agents act on.

`Renderer.session(html)` yields a `Session`: the `Rendering` (exactly what `Renderer.render`
returns) and the `LivePage` it came from, whose context is closed when the block ends. The page
keeps everything the render set up: hermetic routing, seeded randomness, dismissed dialogs,
blocked popups, and the paused clock, so after an action the agent must `advance` virtual time
for timers and animation frames to run. Every call on the page goes through `bounded`, which
stops the page's JavaScript when it overruns, so a hostile page cannot hang an agent.

Our scripts that read the page (`evaluate`, `ask`) run in our own isolated world
(`aesenv.render.inpage.World`): the page's DOM, none of its globals. Fault is told by where code
ran, never by the names it carries: a call that overran its deadline, or the time its agent's
calls may take in all, or whose renderer crashed, is the page's (`PageFault`); a throw out of the
page's own world (`evaluate_in_page`, the clock's timers) is the page's (`PageThrew`, or an
uncaught error recorded as a browser would, see `run_clock`); a throw out of our world is ours
(`WorldScriptError`), and so is the browser going away. An action may make the page load a new
document (a form without a handler submits and reloads it): an agent wraps its actions in
`settles_navigation`, and a call that loses its document to a navigation (a timer that reloads
the page) waits for the new one and runs again there; a page that loses that one too keeps
reloading (`PageReloading`, its failure).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import contextvars
import dataclasses
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from playwright.async_api import Error as PlaywrightError, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from aesenv.render.counterfactual import Ink, element_ink
from aesenv.render.inpage import World, WorldScriptError, ask_page, control, in_page
from aesenv.render.models import Rendering
from aesenv.stages import stage

T = TypeVar("T")
MAX_PAGE_ERRORS = 100
FRAME_MS = 16  # the clock's animation frame interval

# Blocks until the GPU has drawn what the page's WebGL contexts were given; the frames run so far.
DRAWN = control("(N) => { N.finishDrawing(); return N.state.frames; }")
# Holds the page's animation frames for `ms` of its time (see `_BROWSER_TIMERS` in the renderer):
# its timers run meanwhile, and the frames it asks for run at the first frame after.
HOLD_FRAMES = control("(N, ms) => { if (N.state.holdFrames) N.state.holdFrames(ms); return true; }")
# Starts the page's random draws again from `luck` (the prelude's `state.reseed`).
_RESEED = control("(N, luck) => { if (N.state.reseed) N.state.reseed(luck); return true; }")


async def stop_scripts(cdp: Any) -> None:
    """Stop whatever JavaScript the page is running (a loop that holds up a call on it)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(cdp.send("Runtime.terminateExecution"), 2)


# The elements selectors match that pass the first filter and have no verdict yet (or one measured on
# another state of them), registered for
# the counterfactual: [[item, [x, y, w, h]], ...] (an invalid selector matches nothing).
_MATCHES = in_page("""(N, [selectors, limit]) => {
  const seen = N.seen({}), out = [], taken = new N.Set();
  for (const selector of selectors) {
    let matches = [];
    try { matches = seen.deepAll(selector); } catch (e) { continue; }
    let n = 0;
    for (const el of matches) {
      if (n >= limit || taken.has(el) || N.store.elementVerdict(el) !== undefined) continue;
      const shown = seen.element(el);
      if (!shown.shown) continue;
      const b = shown.seen;
      out.push([N.cf.elementItem(el), [b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0]]);
      taken.add(el);
      n += 1;
    }
  }
  return out;
}""")


class PageFault(RuntimeError):
    """A call on the live page failed because of what the page does: the answer's failure (a
    score of 0 for the interaction), never ours. `stop` says how, for the record."""

    stop = "the page failed"


class PageStalled(PageFault):
    """A call on the live page overran its deadline; the page's JavaScript was stopped."""

    stop = "the page hung"


class PageCrashed(PageFault):
    """The page's renderer crashed (or was killed above its memory cap)."""

    stop = "the page crashed"


class PageReloading(PageFault):
    """The page keeps loading new documents (a reload on a timer): there is none to act on."""

    stop = "the page kept reloading"


class PageThrew(PageFault):
    """The page's own code threw into a call of ours (it replaced a built-in our script uses)."""

    stop = "the page's own script broke the call"


# Where a failed call ran says whose fault it is, never what its error is named: a call in the
# page's own world (a control script, the clock) that throws is the page's doing, whatever names
# its stack carries; a script of ours in our own world that throws is ours (`WorldScriptError`).
# Without a JavaScript error, these messages say that the page or the browser went away.
_API_PREFIX = re.compile(r"^[A-Z][A-Za-z]*\.[a-z_]+: ")
_GONE = re.compile(r"Target crashed|Target closed|has been closed|Protocol error|(Browser|Connection|Session) closed")


def _went_away(exc: PlaywrightError, page: Page | None = None) -> bool:
    """The page, its context or the browser closed or crashed, or the protocol failed (or a
    Playwright timeout): nothing the page's scripts threw. With the page at hand its state
    decides, not the message (a page can throw any message it likes)."""
    if isinstance(exc, PlaywrightTimeoutError) or "TargetClosedError" in (type(exc).__name__, exc.name):
        return True
    if page is not None:
        try:
            return page.is_closed() or not page.context.browser.is_connected()
        except Exception:  # noqa: BLE001 - a page whose context is gone went away
            return True
    return _GONE.search(exc.message.split("\n", 1)[0]) is not None and "    at " not in exc.message


def thrown_text(exc: PlaywrightError) -> str:
    """A JavaScript error out of the page's world, as its first line says it."""
    first = exc.message.splitlines()[0] if exc.message else ""
    return _API_PREFIX.sub("", first)[:2000] or "Uncaught (no message)"


async def in_page_world(page: Page, call: Awaitable[T]) -> T:
    """Await a call that runs in the page's own world (`page.evaluate`, a control script): a
    JavaScript error out of it is the page's (`PageThrew`); the page or browser going away and a
    lost document are raised as they came."""
    try:
        return await call
    except PlaywrightError as exc:
        if _went_away(exc, page) or lost_its_document(exc):
            raise
        raise PageThrew(thrown_text(exc)) from exc


def note_page_error(errors: list[str], text: str) -> None:
    """Record an uncaught error of the page (the first `MAX_PAGE_ERRORS` are kept)."""
    if len(errors) < MAX_PAGE_ERRORS:
        errors.append(text[:2000])


async def run_clock(page: Page, ms: int, errors: list[str]) -> None:
    """Run the page's paused clock for `ms`: every timer and animation frame due runs, in every
    frame of the page. Playwright's clock runs them all, advances time, and then rethrows the
    first exception one of them threw; in a browser that is an uncaught error of the page, so
    it is recorded in `errors` as one and the call has done its work. Every other
    JavaScript error out of it is the page's doing too, whatever its innermost frame: the page
    called the clock's API wrongly from a timer (`requestAnimationFrame(undefined)`, which the
    clock's own code rejects), or a frame of the page's has no clock to run (the page removed it,
    or a frame flood was stopped while the frame was being set up; the clock ran in every other
    frame); nothing of ours runs in there but the clock. Only the page or browser going away
    (and a lost document) is raised."""
    try:
        await page.clock.run_for(ms)
    except PlaywrightError as exc:
        if _went_away(exc, page) or lost_its_document(exc):
            raise
        note_page_error(errors, thrown_text(exc))


_LEAVING = control("""async (N) => {
  for (let turn = 0; turn < 2; turn++) await N.nextTask();
  const leaving = N.state.leaving === true;
  N.state.leaving = false;  // a navigation held back leaves the document in place
  return leaving;
}""")


async def is_leaving(page: Page) -> bool:
    """Whether the page has started leaving its document for another (a reload, a form
    submit). Its task queue is run twice first: a form submission only starts its navigation
    in a task of its own. A document already gone counts as left."""
    try:
        return await in_page_world(page, ask_page(page, _LEAVING)) is True
    except PageThrew:  # the page broke the look: it is taken as staying
        return False
    except PlaywrightError as exc:
        if not lost_its_document(exc):
            raise
        return True


async def await_new_document(trace: Any, before: int, timeout_s: float) -> None:
    """Once the page is leaving its document: wait for its navigation to be requested (one
    requested since `before` navigations, or one still loading, is it), then for the new
    document's load, `timeout_s` in all. A document that never finishes loading is used as it
    stands; a navigation held back (it left the origin) leaves the old one in place."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while trace.navigations == before and trace.document_loaded.is_set() and loop.time() < deadline:
        await asyncio.sleep(0.01)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(trace.document_loaded.wait(), max(0.0, deadline - loop.time()))
    trace.document_loaded.set()


@dataclasses.dataclass
class _PageTime:
    """What is left of the time an agent's calls on the page may take (see `LivePage.page_time`)."""

    total_s: float
    left_s: float

    def limit(self, timeout_s: float) -> float:
        return min(timeout_s, max(0.0, self.left_s))


_PAGE_TIME: contextvars.ContextVar[_PageTime | None] = contextvars.ContextVar("aesenv_page_time", default=None)


@contextlib.contextmanager
def _charged(timeout_s: float) -> Iterator[float]:
    """Yield the deadline a wait on the page gets (its own, within the page time left), and
    charge the time it took to the page time."""
    budget = _PAGE_TIME.get()
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        yield timeout_s if budget is None else budget.limit(timeout_s)
    finally:
        if budget is not None:
            budget.left_s -= loop.time() - start


def lost_its_document(exc: PlaywrightError) -> bool:
    """A call on the page failed because a navigation replaced the document it ran on."""
    return "context was destroyed" in exc.message or "Cannot find context" in exc.message


@dataclasses.dataclass
class LivePage:
    page: Page
    cdp: Any
    trace: Any
    freeze_time: bool = True
    drawing: bool = False  # it drew with WebGL when rendered (see `advance`)
    world: World | None = None  # our isolated world in it (made from `cdp` when not given)
    seed: int = 0  # what the page's randomness was seeded with (see `reseed`)

    def __post_init__(self) -> None:
        if self.world is None:
            self.world = World(self.cdp)

    @property
    def page_errors(self) -> list[str]:
        """Uncaught page errors so far, growing as the agent acts (the render's are first)."""
        return self.trace.page_errors

    @property
    def dialogs(self) -> int:
        return self.trace.dialogs

    @staticmethod
    @contextlib.contextmanager
    def page_time(seconds: float) -> Iterator[None]:
        """Inside the block (in this task), the calls on the page and the waits for its
        navigations may take `seconds` in all; past that, a call raises `PageStalled`. An agent's
        episode runs under it, so a page that makes every call slow fails its interactions
        instead of making the agent overrun its own deadline (ours to answer for)."""
        token = _PAGE_TIME.set(_PageTime(seconds, seconds))
        try:
            yield
        finally:
            _PAGE_TIME.reset(token)

    async def bounded(self, call: Awaitable[T], timeout_s: float = 5.0) -> T:
        """Run one call on the page under a deadline; on expiry stop the page's scripts and
        raise `PageStalled`. A call on a crashed page raises `PageCrashed`; a call in the page's
        own world says itself when the page threw (`in_page_world`); any other failure is
        raised as it came (ours)."""
        if self.trace.crashed:
            if inspect.iscoroutine(call):
                call.close()
            raise PageCrashed("its renderer is gone")
        with _charged(timeout_s) as limit:
            try:
                return await asyncio.wait_for(call, limit)
            except (asyncio.TimeoutError, PlaywrightTimeoutError) as exc:
                if self.trace.crashed:
                    raise PageCrashed("its renderer is gone") from exc
                await stop_scripts(self.cdp)
                if limit < timeout_s:
                    total = _PAGE_TIME.get().total_s  # type: ignore[union-attr]
                    raise PageStalled(f"the page used up the {total:.0f}s its interactions may take") from exc
                raise PageStalled(f"the page did not answer within {timeout_s}s") from exc
            except PlaywrightError as exc:
                if self.trace.crashed:
                    raise PageCrashed("its renderer is gone") from exc
                raise

    @contextlib.asynccontextmanager
    async def settles_navigation(self, timeout_s: float = 5.0) -> AsyncIterator[None]:
        """Wrap an action: if it made the page leave for a new document, the block ends once
        that document has loaded (or after `timeout_s`), so what follows measures the page the
        user would see."""
        before = self.trace.navigations
        yield
        with stage("navigation"):
            if await self.bounded(is_leaving(self.page), timeout_s):
                with _charged(timeout_s) as limit:
                    await await_new_document(self.trace, before, limit)

    async def _loaded(self, timeout_s: float) -> None:
        """Wait for the document being loaded, if any (a document that never finishes loading
        is acted on as it stands)."""
        with _charged(timeout_s) as limit, contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.trace.document_loaded.wait(), limit)
        self.trace.document_loaded.set()

    async def _on_current_document(self, call: Callable[[], Awaitable[T]], timeout_s: float) -> T:
        """`bounded(call())`, run once more on the new document if a navigation replaced the
        one it started on. A page that replaces that one too (it reloads itself on a timer) is
        one nobody can use: `PageReloading`, its failure."""
        try:
            return await self._in_turn(call, timeout_s)
        except PlaywrightError as exc:
            if not lost_its_document(exc):
                raise
        await self._loaded(timeout_s)
        try:
            return await self._in_turn(call, timeout_s)
        except PlaywrightError as exc:
            if not lost_its_document(exc):
                raise
            raise PageReloading("it replaced its document twice during one call") from exc

    async def _in_turn(self, call: Callable[[], Awaitable[T]], timeout_s: float) -> T:
        """`bounded(call())` once no other call of ours is on the page (`World.turn`); the wait
        for the turn is ours, not the page's, so it is not charged to the page's deadline."""
        async with self.world.turn:
            return await self.bounded(call(), timeout_s)

    async def advance(self, ms: int, timeout_s: float = 5.0) -> None:
        """Let `ms` of the page's time pass: virtual time when the clock is frozen. A page that
        draws with WebGL (`drawing`: in software here, a heavy scene costs seconds a frame) runs
        all its timers but draws one frame, at the end, as a browser on a slow GPU drops frames;
        the call returns once that frame is drawn."""
        with stage("clock"):
            if self.freeze_time:
                await self._on_current_document(lambda: self._run_clock(ms), timeout_s)
            else:
                await self.bounded(self.page.wait_for_timeout(ms), timeout_s + ms / 1000)

    async def _run_clock(self, ms: int) -> None:
        if not self.drawing:
            await run_clock(self.page, ms, self.page_errors)
            return
        if ms > FRAME_MS:
            await in_page_world(self.page, ask_page(self.page, HOLD_FRAMES, ms - FRAME_MS))
        await run_clock(self.page, ms, self.page_errors)
        await in_page_world(self.page, ask_page(self.page, DRAWN))

    async def reseed(self, window: int) -> None:
        """Start the page's random draws again, from a value fixed by the render's seed and
        `window`: two windows given the same number draw the same numbers, however many the page
        drew before (a page cannot pick its luck by drawing first)."""
        luck = (self.seed * 0x9E3779B1 + (window + 1) * 0x85EBCA77) & 0xFFFFFFFF
        await self.evaluate_in_page(_RESEED, luck)

    async def screenshot(self, fmt: str = "png", *, quality: int = 80, timeout_s: float = 10.0) -> bytes:
        """The current viewport (what a user sees), PNG or JPEG."""
        params: dict[str, Any] = {"format": fmt, "optimizeForSpeed": True}
        if fmt != "png":
            params["quality"] = quality
        with stage("screenshot"):
            shot = await self._in_turn(lambda: self.cdp.send("Page.captureScreenshot", params), timeout_s)
            return base64.b64decode(shot["data"])

    async def evaluate(self, script: str, arg: Any = None, timeout_s: float = 5.0) -> Any:
        """A measuring script `(arg) => ...` in our isolated world (`aesenv.render.inpage`):
        the page's DOM, none of its globals; `arg` and the answer cross by value."""
        world = self.world
        with stage("script"):
            return await self._on_current_document(lambda: world.evaluate(script, arg), timeout_s)

    async def ask(self, script: str, arg: Any = None, timeout_s: float = 5.0, *, more: list[dict] | None = None) -> Any:
        """Run one of our `in_page` scripts in our world and return its answer, read from JSON.
        `more`: further arguments, objects of the current document in our world; run again on a
        new document (see `_on_current_document`), the script gets none of them, which were
        the old document's."""
        world, first = self.world, [True]

        def call() -> Awaitable[Any]:
            extra, first[0] = (more or []) if first[0] else [], False
            return world.ask(script, arg, extra)

        with stage("script"):
            return await self._on_current_document(call, timeout_s)

    async def evaluate_in_page(self, script: str, arg: Any = None, timeout_s: float = 5.0) -> Any:
        """A script in the page's own world, for what only the page holds (a chart library's
        options): its answer is the page's claim, to be confirmed before it counts, and an
        exception out of it is the page's (`PageThrew`)."""
        page = self.page
        with stage("script"):
            return await self._on_current_document(lambda: in_page_world(page, page.evaluate(script, arg)), timeout_s)

    async def element_ink(self, found: list[tuple[int, tuple[float, float, float, float]]],
                          timeout_s: float = 10.0) -> dict[int, Ink]:
        """What each found element (registered by `N.cf.elementItem` in our world, with its box)
        paints on the page as it is now: the pixels that change when it is taken away
        (`aesenv.render.counterfactual`). An element that paints nothing is not shown."""
        with stage("counterfactual"):
            return await self._on_current_document(lambda: element_ink(self.cdp, self.world, found), timeout_s)

    async def confirm_shown(self, selectors: list[str], limit: int = 40, timeout_s: float = 15.0) -> int:
        """Take away, from the page as it is now, the elements `selectors` match that pass the first
        filter and have no verdict yet (at most `limit` per selector, through shadow roots), so that
        every later read of this document counts only those whose pixels changed (`N.seen` honours
        the verdicts). Returns how many were measured."""
        found = await self.ask(_MATCHES, [selectors[:100], limit])
        pairs = [(int(f[0]), tuple(float(v) for v in f[1])) for f in found or []
                 if isinstance(f, list) and len(f) == 2 and isinstance(f[1], list) and len(f[1]) == 4]
        if pairs:
            await self.element_ink(pairs, timeout_s)
        return len(pairs)

    async def alive(self) -> bool:
        """Whether the page still answers (not crashed, not closed)."""
        with contextlib.suppress(PlaywrightError, PageFault, WorldScriptError):
            return bool(await self.evaluate("() => true", timeout_s=2))
        return False


class Session(NamedTuple):
    rendering: Rendering
    live: LivePage | None
