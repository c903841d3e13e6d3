"""The one way aesenv renders a page: async Playwright over one long-lived Chromium.

Every render gets a fresh browser context (no state leaks between episodes), prepared ahead of
demand. The page is served from a virtual origin (never `file://`); every other request goes
through the asset resolvers (the vendored CDN mirror) and is otherwise blocked and logged. The
page's clock is paused and advanced in virtual time, its randomness seeded, its animations
stopped before capture, so the same page gives the same pixels. Each stage has its own
deadline; a page that hangs a stage is cut off and captured as far as it got. A page that draws
with WebGL (in software here) settles with few frames, under deadlines counted in frames
(`aesenv.render.settle`). Our in-page scripts read the page only through built-ins captured
before its own scripts ran (`aesenv.render.inpage`), and a value of the page's that still fails
validation is reset or left out, with a note, never raised. A crashed or wedged browser is
relaunched and the render retried once before it is an infra failure.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import mimetypes
import time
from collections.abc import AsyncIterator
from datetime import datetime
from importlib import resources
from typing import Protocol

from playwright.async_api import Browser, BrowserContext, Error as PlaywrightError, Page, Playwright, Route
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright
from pydantic import BaseModel

from aesenv.render.browser import CHROMIUM_ARGS, BrowserBinary, BrowserLaunch, browser_launch, find_chromium
from aesenv.render.inpage import World, WorldScriptError, ask_page, control, in_page, install_natives
from aesenv.render.live import (LivePage, Session, await_new_document, is_leaving, lost_its_document, note_page_error,
                                stop_scripts)
from aesenv.render.models import (ConsoleEntry, DomMarkup, MobileProbe, PageMetrics, Rendering, RenderStatus,
                                  RequestEntry, RequestOutcome, decode_rgb, lenient, snapshot_elements)
from aesenv.render.counterfactual import Painting, Verdicts, measure
from aesenv.render.shown import Run, assemble, painted, parse_runs
from aesenv.render.settle import settle_drawing, settle_timers, within_a_frame
from aesenv.render.vendor import library_usage
from aesenv.render.watchdog import MemoryWatchdog

log = logging.getLogger(__name__)

ORIGIN = "https://artifact.aesenv.invalid"
_JS = {name: (resources.files("aesenv.render") / name).read_text()
       for name in ("snapshot.js", "mobile_probe.js", "freeze_animations.js", "markup.js")}
# After navigation: the document's load event, then its fonts; then what the page set up while it
# loaded (animation frames run, WebGL contexts made). A control script: the page's claim, which
# only decides how the page is settled.
_LOADED = control("""(N) => (N.readyState(N.document) === "complete" ? Promise.resolve() : new N.Promise(
  (done) => N.listen(N.window, "load", () => done(), { once: true })))
  .then(() => N.fontsReady()).then(() => ({ frames: N.state.frames, webgl: N.webglContexts() }))""")
# With the real clock, three animation frames stand for the settle slice.
_THREE_FRAMES = """async () => {
  for (let i = 0; i < 3; i++) await new Promise(r => requestAnimationFrame(() => r()));
}"""
# The capture's calls: in the page's world, close the prelude's gate on its `resize` listeners and
# collect what only that world knows (frames run, popups held back, the context each canvas was
# given: claims); then, in ours, stop motion and take the snapshot, which checks those claims.
_PAGE_FACTS = control("""(N, hold) => {
  N.state.holdResize = hold;
  return { frames: N.state.frames, popups: N.state.popups,
           contexts: N.all(N.document, "canvas").map((c) => { const k = N.contextOf(c); return k ? k.kind : ""; }) };
}""")
# Stop motion and say how tall the document is (the capture's height), in our world.
_FREEZE = in_page("(N) => ({freeze})(N) && N.seen({{}}).docHeight".format(freeze=_JS["freeze_animations.js"]))
_SNAPSHOT = in_page("(N, opts) => ({snapshot})(N, opts)".format(snapshot=_JS["snapshot.js"]))
_MARKUP = in_page(_JS["markup.js"])
_MOBILE_PROBE = in_page("(N) => ({probe})(N)".format(probe=_JS["mobile_probe.js"]))
# (width) => open the gate again and arm a wait for the window's next `resize` to `width`: the
# prelude's listener (first in the dispatch) wakes it, and so does one added here, in case the
# page erased the prelude's (`document.open` drops a window's listeners). `_RESIZED` then
# resolves once that resize was dispatched: by the time our next call runs, the page's own
# listeners for it have run too. Claims, bounded by `RESIZE_WAIT_S`.
_RELEASE_RESIZE = control("""(N, width) => {
  N.state.holdResize = false;
  N.state.resized = new N.Promise((done) => {
    const seen = () => { if (N.viewport().width === width) done(true); };
    N.state.onResize = seen;
    N.listen(N.window, "resize", seen);
  });
  return true;
}""")
_RESIZED = control("(N) => N.state.resized || true")
# How long the mobile probe waits for the page to see its resize before it measures anyway.
RESIZE_WAIT_S = 1.0


class RenderConfig(BaseModel):
    """Capture policy and deadlines. Defaults follow OpenDesign's 1280-wide judging view."""

    viewport_width: int = 1280
    viewport_height: int = 960
    device_scale_factor: float = 1.0
    max_full_page_height: int = 8000
    mobile_width: int = 390
    mobile_height: int = 844
    max_dom_nodes: int = 3000
    # The DOM the page's scripts left, serialised for the execution channel's lint (`markup.js`):
    # a DOM holding more markup than this is not serialised (the page's failure). The largest
    # answer (`aesenv.artifact.MAX_ARTIFACT_BYTES`); escaping may double what is serialised, and
    # HTMLHint lints 4.4 M characters in 3.5-4.3 s here (2 cores under load), inside its 10-s
    # deadline. The largest DOM among the 322 benchmark pages (100,000 cells) holds 1.8 M.
    max_markup_chars: int = 2_000_000
    # Determinism: the page's clock starts paused at `clock_epoch`; after load it is advanced by
    # `settle_ms` of virtual time (timers and animation frames fire in order), `Math.random` is
    # seeded, and CSS animations are stopped for capture. Never waits on `networkidle`.
    freeze_time: bool = True
    clock_epoch: str = "2025-01-01T12:00:00Z"
    settle_ms: int = 800
    settle_budget_s: float = 1.5
    seed: int = 0
    navigation_timeout_s: float = 10.0
    settle_timeout_s: float = 3.0
    capture_timeout_s: float = 10.0
    snapshot_timeout_s: float = 5.0
    total_timeout_s: float = 45.0
    # A page that draws with WebGL (in software here: a heavy scene costs seconds a frame) runs
    # the same settle slice with at most `webgl_settle_frames` frames in it, frame by frame while
    # they fit `webgl_settle_budget_s`. Its deadlines are counted in frames: each has
    # `webgl_frame_timeout_s` to be drawn, and up to `webgl_frame_max_s` while the GPU process is
    # seen drawing it; the render's total deadline grows by the time its frames took (see
    # `aesenv.render.settle`).
    webgl_settle_frames: int = 4
    webgl_settle_budget_s: float = 6.0
    webgl_frame_timeout_s: float = 10.0
    webgl_frame_max_s: float = 60.0
    concurrency: int = 2
    warm_pages: int = 2
    retries: int = 1
    max_renderer_memory_mb: int = 2048
    # Offline is the default: unknown hosts are blocked. `online` lets them through to the real
    # network (logged as `network`) for users who want pages exactly as a browser would see them.
    online: bool = False
    # The browser in its own network namespace as an unprivileged uid (see aesenv.render.browser);
    # `online` needs the host's network, so it runs the browser unisolated (and records say so).
    isolate_browser: bool = True


# Browser behaviour the fake clock lacks, wrapped around its timers (registered after the clock):
# a repeating timer never runs more often than every 4 ms, and a timeout that re-arms itself with
# 0 is clamped too (the fake clock would run either forever within one step); clearing an id of
# another kind of timer (`cancelAnimationFrame(timeoutId)`) does nothing, where the fake clock
# throws into the page's code and kills its animation loop. The animation frames the page runs
# are counted (one per frame time), and the settle phase can hold them for a stretch of virtual
# time (`state.holdFrames(ms)`, see `aesenv.render.settle`): the callbacks asked for meanwhile
# (under ids of their own, which `cancelAnimationFrame` takes) run at the first frame after it.
_BROWSER_TIMERS = """(() => {
  const apply = Reflect.apply, max = Math.max, toNumber = Number, create = Object.create;
  const state = self.__aesenv__ ? self.__aesenv__.state : { frames: 0 };
  const interval = self.setInterval, timeout = self.setTimeout, frame = self.requestAnimationFrame;
  self.setInterval = function setInterval(handler, delay, ...args) {
    return apply(interval, this, [handler, max(4, toNumber(delay) || 0), ...args]);
  };
  self.setTimeout = function setTimeout(handler, delay, ...args) {
    return apply(timeout, this, [handler, max(1, toNumber(delay) || 0), ...args]);
  };
  let lastFrame = -1, held = null, lastHeld = 0, released = create(null);
  const hold = (callback) => { lastHeld -= 1; held[lastHeld] = callback; return lastHeld; };
  const counted = (callback) => function (time) {
    if (held) { hold(callback); return undefined; }  // asked for before the hold began
    if (time !== lastFrame) { lastFrame = time; state.frames += 1; }
    return apply(callback, this, [time]);
  };
  self.requestAnimationFrame = function requestAnimationFrame(callback) {
    if (typeof callback !== "function") return apply(frame, this, [callback]);
    return held ? hold(callback) : apply(frame, this, [counted(callback)]);
  };
  state.holdFrames = (ms) => {
    if (held) return;
    held = create(null);
    released = create(null);
    apply(timeout, self, [() => {
      const waiting = held;
      held = null;
      for (const id in waiting) released[id] = apply(frame, self, [counted(waiting[id])]);
    }, ms]);
  };
  const cancelFrame = self.cancelAnimationFrame;
  self.cancelAnimationFrame = function cancelAnimationFrame(id) {
    if (held && id in held) { delete held[id]; return undefined; }
    return apply(cancelFrame, this, [id in released ? released[id] : id]);
  };
  for (const name of ["clearTimeout", "clearInterval", "cancelAnimationFrame", "cancelIdleCallback"]) {
    const clear = self[name];
    if (typeof clear !== "function") continue;
    self[name] = { [name](id) { try { return apply(clear, this, [id]); } catch (e) { return undefined; } } }[name];
  }
})()"""

# Runs before any page script, after the natives are kept (see `inpage`): seeded randomness, no
# real popups, and the context each canvas gets noted (the snapshot reports it; a WebGL page,
# which draws in software here, settles frame by frame).
_PAGE_PRELUDE = """(seed) => {
  const N = window.__aesenv__;
  const canvas = HTMLCanvasElement.prototype;
  canvas.getContext = function getContext(kind, ...options) {
    const context = N.getContext(this, kind, ...options);
    if (context) N.noteContext(this, kind, context);
    return context;
  };
  let state = seed >>> 0;
  Math.random = function random() {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const fill = function getRandomValues(array) {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    return array;
  };
  if (self.crypto) Object.defineProperty(self.crypto, "getRandomValues", { value: fill });
  // Our interaction agent starts the draws afresh before each window it compares (the page left
  // alone, then acted on: `aesenv.interact.acting`), so both see the same draws whatever the page
  // drew before. Fixed on the state, so the page cannot take it away.
  Object.defineProperty(N.state, "reseed", { value: (s) => { state = s >>> 0; } });
  // Popups never open (a page that spawns fifty windows should not cost fifty pages); the
  // attempts are counted for the record.
  self.open = function open() { N.state.popups += 1; return null; };
  // The page's resize listeners on window run through a gate the renderer closes while it takes
  // a full-page capture: that capture resizes the view, and a handler that resets a canvas
  // (`canvas.width = innerWidth`) would blank the frame it drew, with a frozen clock to never
  // draw it again. (A capture-phase listener cannot stop them: Chrome runs a target's own
  // listeners anyway.)
  const apply = Reflect.apply, gated = new WeakMap();
  // Our own first listener on the window's `resize` wakes whoever waits for one (the mobile
  // probe measures only after the page has handled its resize to phone width: the page's
  // listeners run after this one, in the same dispatch, so never in a race with it).
  apply(self.addEventListener, self, ["resize", () => {
    const wake = N.state.onResize;
    if (typeof wake === "function") wake();
  }]);
  const gate = (fn) => {
    if (typeof fn !== "function") return fn;
    if (!gated.has(fn)) gated.set(fn, function (event) { if (!N.state.holdResize) return apply(fn, this, [event]); });
    return gated.get(fn);
  };
  const add = self.addEventListener, remove = self.removeEventListener;
  self.addEventListener = function addEventListener(type, fn, options) {
    return apply(add, this, [type, type === "resize" && this === self ? gate(fn) : fn, options]);
  };
  self.removeEventListener = function removeEventListener(type, fn, options) {
    return apply(remove, this, [type, type === "resize" && this === self && gated.has(fn) ? gated.get(fn) : fn, options]);
  };
  let onresize = null;
  Object.defineProperty(self, "onresize", {
    configurable: true, get: () => onresize,
    set: (fn) => {
      if (onresize) apply(remove, self, ["resize", gate(onresize)]);
      onresize = typeof fn === "function" ? fn : null;
      if (onresize) apply(add, self, ["resize", gate(onresize)]);
    },
  });
  // The top document notes when it starts leaving for another (a form submit, a reload), so
  // the capture and an agent acting on the live page know to wait for the new one. Only the
  // browser's own events count: a page dispatching one itself is not leaving.
  if (self === self.top) {
    const leaving = (e) => { if (e.isTrusted) N.state.leaving = true; };
    addEventListener("beforeunload", leaving, true);
    if (self.navigation) navigation.addEventListener("navigate", (e) => { if (!e.destination.sameDocument) leaving(e); });
  }
}"""


class AssetResolver(Protocol):
    """Serves a request that is not for the artifact itself (e.g. a vendored CDN library)."""

    def resolve(self, url: str) -> tuple[bytes, str, str] | None:
        """Return (body, content type, label) or None to leave the request blocked."""


def _navigates_the_page(request, page: Page) -> bool:
    """A navigation of the artifact's own top-level frame (not an iframe, not a popup)."""
    if not request.is_navigation_request():
        return False
    try:
        return request.frame == page.main_frame
    except PlaywrightError:  # a popup's first request comes before its frame exists
        return False


@dataclasses.dataclass
class _Prepared:
    """A set-up page waiting for its render; `site` and `trace` are filled when it is taken."""

    ctx: BrowserContext
    page: Page
    cdp: object
    seed: int
    world: World | None = None
    site: dict[str, bytes | str] = dataclasses.field(default_factory=dict)
    trace: "_Trace" = dataclasses.field(default_factory=lambda: _Trace())


class _Trace:
    """Collects what happens in one render (requests, console, errors, timings)."""

    def __init__(self) -> None:
        self.requests: list[RequestEntry] = []
        self.console: list[ConsoleEntry] = []
        self.page_errors: list[str] = []
        self.dialogs = 0
        self.timings: dict[str, float] = {}
        self.timed_out: list[str] = []
        self.failed: dict[str, str] = {}
        self.crashed = False
        self.settled_ms = 0
        self.settle_frames = 0
        self.drawing = False  # the page draws with WebGL (see `aesenv.render.settle`)
        # Seconds the render's total deadline grows by: the time a WebGL page's frames took.
        self.extra_s = 0.0
        # Top-level navigations the page asked for, and whether the document it went to has
        # loaded (cleared while one of the artifact's own pages loads; set by its load event).
        self.navigations = 0
        self.document_loaded = asyncio.Event()

    @contextlib.asynccontextmanager
    async def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round((time.perf_counter() - start) * 1000, 1)


def _canvas_box(canvas: dict) -> tuple[float, float, float, float]:
    return tuple(_number(canvas.get(k)) for k in ("x", "y", "w", "h"))  # type: ignore[return-value]


def _number(value: object) -> float:
    """A number from a page's claim, or 0 (a claim is never trusted to be well formed)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if value == value and abs(value) < 1e12 else 0.0


def _status(trace: _Trace) -> RenderStatus:
    return RenderStatus.TIMEOUT if trace.timed_out else RenderStatus.OK


def _problems(trace: _Trace) -> str:
    """What went wrong in the page's stages, for `Rendering.error`."""
    problems = [f"page hung in: {', '.join(trace.timed_out)}"] if trace.timed_out else []
    problems += [f"{stage} failed: {why}" for stage, why in trace.failed.items()]
    return "; ".join(problems)


class Renderer:
    """Async renderer. Use `async with Renderer() as r: rendering = await r.render(html)`."""

    def __init__(self, config: RenderConfig | None = None, resolvers: list[AssetResolver] | None = None,
                 binary: BrowserBinary | None = None) -> None:
        self.config = config or RenderConfig()
        if resolvers is None:
            from aesenv.render.vendor import VendorMirror

            resolvers = [VendorMirror.default()]
        self.resolvers = list(resolvers)
        self._binary = binary
        self._launch: BrowserLaunch | None = None
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._launch_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(self.config.concurrency)
        self._watchdog = MemoryWatchdog(self.config.max_renderer_memory_mb)
        self._warm: list[_Prepared] = []
        self._warming = 0
        self._background: set[asyncio.Task] = set()
        self.launches = 0

    async def __aenter__(self) -> "Renderer":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @property
    def provenance(self) -> dict[str, str]:
        return {
            "browser": self._binary.path if self._binary else "",
            "browser_source": self._binary.source if self._binary else "",
            "browser_version": self._browser.version if self._browser else "",
            "browser_isolation": self._launch.isolation if self._launch else "",
            "viewport": f"{self.config.viewport_width}x{self.config.viewport_height}@{self.config.device_scale_factor}",
            "vendor_mirror": self._mirror_fingerprint,
        }

    @functools.cached_property
    def _mirror_fingerprint(self) -> str:
        """Short hash of the vendored library versions, so a record names the exact mirror."""
        versions = {type(r).__name__: getattr(r, "versions", {}) for r in self.resolvers}
        return hashlib.sha256(json.dumps(versions, sort_keys=True).encode()).hexdigest()[:12]

    async def start(self) -> None:
        async with self._launch_lock:
            if self._browser and self._browser.is_connected():
                return
            if self._pw is None:
                self._pw = await async_playwright().start()
            self._binary = self._binary or find_chromium()
            self._launch = self._launch or browser_launch(
                self._binary, self.config.isolate_browser and not self.config.online)
            self._browser = await self._pw.chromium.launch(
                executable_path=self._launch.executable, args=list(CHROMIUM_ARGS), env=self._launch.env,
                chromium_sandbox=self._launch.chromium_sandbox, timeout=30_000)
            self.launches += 1
            self._top_up()

    async def close(self) -> None:
        # Background work on a dead browser can wait forever; give it a bounded grace period.
        if self._background:
            _, pending = await asyncio.wait(set(self._background), timeout=10)
            for task in pending:
                task.cancel()
        self._warm.clear()
        with contextlib.suppress(Exception):
            if self._browser:
                await asyncio.wait_for(self._browser.close(), 10)
        with contextlib.suppress(Exception):
            if self._pw:
                await asyncio.wait_for(self._pw.stop(), 10)
        self._browser, self._pw = None, None

    async def render(self, html: str, *, files: dict[str, bytes | str] | None = None,
                     entry: str = "index.html", seed: int | None = None,
                     viewport: tuple[int, int] | None = None) -> Rendering:
        """Render one page. Never raises for a bad page. When the browser fails (crash,
        disconnect, wedge) it is relaunched and the page retried; then it is INFRA_ERROR.
        `viewport` (width, height) overrides the configured size for this page (a task's
        fixed canvas); the screenshot is that wide."""
        async with self._slots:
            rendering, _ = await self._render_with_retries({entry: html, **(files or {})}, entry, seed, False,
                                                           self._size(viewport))
            return rendering

    @contextlib.asynccontextmanager
    async def session(self, html: str, *, files: dict[str, bytes | str] | None = None,
                      entry: str = "index.html", seed: int | None = None,
                      viewport: tuple[int, int] | None = None) -> AsyncIterator[Session]:
        """Render one page and keep it open while the block runs (for interaction agents):
        `async with renderer.session(html) as (rendering, live): ...`. `live` is None when
        there is no page to act on (our side failed, or the page crashed). Holds a
        concurrency slot throughout."""
        async with self._slots:
            rendering, prepared = await self._render_with_retries(
                {entry: html, **(files or {})}, entry, seed, True, self._size(viewport))
            if prepared is None:
                yield Session(rendering, None)
                return
            try:
                with self._watchdog:
                    yield Session(rendering, LivePage(prepared.page, prepared.cdp, prepared.trace,
                                                      self.config.freeze_time, prepared.trace.drawing, prepared.world,
                                                      prepared.seed))
            finally:
                self._track(self._close_context(prepared.ctx))

    def _size(self, viewport: tuple[int, int] | None) -> tuple[int, int]:
        if viewport is None:
            return self.config.viewport_width, self.config.viewport_height
        width, height = (int(v) for v in viewport)
        if width <= 0 or height <= 0:
            raise ValueError(f"viewport must be positive, got {viewport}")
        return width, height

    async def _render_with_retries(self, site: dict[str, bytes | str], entry: str, seed: int | None,
                                   keep_open: bool, size: tuple[int, int]) -> tuple[Rendering, _Prepared | None]:
        seed = self.config.seed if seed is None else seed
        for attempt in range(1, self.config.retries + 2):
            result, prepared = await self._attempt(site, entry, seed, keep_open, size)
            result.attempts = attempt
            if result.status is not RenderStatus.INFRA_ERROR:
                break
            log.warning("render attempt %d failed on our side: %s", attempt, result.error)
        return result, prepared

    async def _attempt(self, site: dict[str, bytes | str], entry: str, seed: int,
                       keep_open: bool, size: tuple[int, int]) -> tuple[Rendering, _Prepared | None]:
        try:
            await self.start()
        except Exception as exc:  # noqa: BLE001 - any launch failure is an infra failure
            return Rendering(status=RenderStatus.INFRA_ERROR, error=f"browser launch failed: {exc}"), None
        trace = _Trace()
        try:
            with self._watchdog:
                return await self._within_total_deadline(self._render(site, entry, seed, trace, keep_open, size),
                                                         trace)
        except asyncio.TimeoutError:
            await self._discard_browser("wedged: a render exceeded its total deadline")
            return self._failed(RenderStatus.INFRA_ERROR, "render exceeded its total deadline", trace), None
        except WorldScriptError as exc:  # a script of ours broke in our own world: ours
            return self._failed(RenderStatus.INFRA_ERROR, str(exc), trace), None
        except PlaywrightError as exc:
            if trace.crashed:
                return self._failed(RenderStatus.CRASHED, "the page crashed its renderer (memory or a "
                                    "renderer bug); it was killed", trace), None
            if self._browser is None or not self._browser.is_connected():
                await self._discard_browser("disconnected")
            return self._failed(RenderStatus.INFRA_ERROR, f"browser error: {exc.message.splitlines()[0]}", trace), None

    async def _within_total_deadline(self, coro, trace: _Trace):
        """`coro` under `total_timeout_s`, grown by what the render's stages were granted beyond
        their usual deadlines (`trace.extra_s`): every stage bounds the page, so a render past
        this deadline is the browser wedged, not the page slow."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        task = asyncio.ensure_future(coro)
        try:
            while not task.done():
                left = start + self.config.total_timeout_s + trace.extra_s - loop.time()
                if left <= 0:
                    raise asyncio.TimeoutError
                await asyncio.wait({task}, timeout=left)
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, 5)

    async def _discard_browser(self, why: str) -> None:
        log.warning("restarting the browser (%s)", why)
        browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), 5)

    def _failed(self, status: RenderStatus, error: str, trace: _Trace) -> Rendering:
        return Rendering(status=status, error=error, console=trace.console, page_errors=trace.page_errors,
                         requests=trace.requests, dialogs=trace.dialogs, timings_ms=trace.timings,
                         provenance=self.provenance)

    async def _prepared_page(self, seed: int) -> _Prepared:
        """A fresh context and page, fully set up but not navigated: seeded prelude, routing,
        event watchers, paused clock, CDP session. The render that takes it fills its slot."""
        cfg = self.config
        assert self._browser is not None
        ctx = await self._browser.new_context(
            viewport={"width": cfg.viewport_width, "height": cfg.viewport_height},
            device_scale_factor=cfg.device_scale_factor, service_workers="block",
            accept_downloads=False, java_script_enabled=True, reduced_motion="no-preference")
        try:
            await ctx.add_init_script(f"{install_natives()}\n({_PAGE_PRELUDE})({int(seed)})")
            page = await ctx.new_page()
            prepared = _Prepared(ctx, page, None, seed)
            await ctx.route("**/*", lambda route: self._route(route, prepared))
            self._watch(prepared)
            if cfg.freeze_time:
                # `pause_at` alone installs the fake clock already paused; an `install` first
                # would let a few real milliseconds leak into every document's clock.
                await page.clock.pause_at(datetime.fromisoformat(cfg.clock_epoch.replace("Z", "+00:00")))
                await page.add_init_script(_BROWSER_TIMERS)
            prepared.cdp = await ctx.new_cdp_session(page)
            prepared.world = World(prepared.cdp)
            return prepared
        except BaseException:
            self._track(self._close_context(ctx))
            raise

    async def _take_page(self, seed: int) -> _Prepared:
        """A prepared page for this render: from the warm set (made ahead of demand, in the
        background) when one with this seed is ready, otherwise made now. Never reused."""
        prepared = None
        while self._warm:
            candidate = self._warm.pop()
            if candidate.ctx.browser is self._browser and self._browser.is_connected() and candidate.seed == seed:
                prepared = candidate
                break
            self._track(self._close_context(candidate.ctx))
        if prepared is None:
            prepared = await self._prepared_page(seed)
        return prepared

    def _top_up(self) -> None:
        """Bring the warm set back to `warm_pages`, counting pages already being made (counted
        when scheduled, so two quick renders never over-fill it)."""
        for _ in range(self.config.warm_pages - len(self._warm) - self._warming):
            self._warming += 1
            self._track(self._refill())

    async def _refill(self) -> None:
        try:
            with contextlib.suppress(PlaywrightError, AssertionError, asyncio.TimeoutError):
                self._warm.append(await asyncio.wait_for(self._prepared_page(self.config.seed), 15))
        finally:
            self._warming -= 1

    async def _render(self, site: dict[str, bytes | str], entry: str, seed: int, trace: _Trace,
                      keep_open: bool, size: tuple[int, int]) -> tuple[Rendering, _Prepared | None]:
        cfg = self.config
        async with trace.stage("setup"):
            prepared = await self._take_page(seed)
        prepared.site, prepared.trace = site, trace
        kept = False
        try:
            if size != (cfg.viewport_width, cfg.viewport_height):  # warm pages have the configured size
                await prepared.page.set_viewport_size({"width": size[0], "height": size[1]})
            result = await self._capture(prepared.page, prepared.cdp, prepared.world, entry, trace, size)
            result.provenance = self.provenance
            result.libraries = library_usage(result.requests).model_dump()
            if keep_open and not trace.crashed:
                # The capture ends on the phone-width probe; agents act at the judging size.
                kept = await self._bounded("restore_viewport", self._at_size(
                    prepared.page, *size), cfg.snapshot_timeout_s,
                                           trace, prepared.cdp) is True
                if not kept:  # the record says why there is no page to act on
                    result.status, result.error = _status(trace), _problems(trace)
                    result.stages_timed_out = list(trace.timed_out)
            return result, prepared if kept else None
        finally:
            if not kept:
                self._track(self._close_context(prepared.ctx))
            # The replacement page is made once this render is done with the CPU: made at once,
            # it took the browser's main thread from this render's navigation (+34 ms median).
            self._top_up()

    def _track(self, coro) -> None:
        """Background work (closing used contexts, warming new ones) that `close()` awaits."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _close_context(ctx: BrowserContext) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ctx.close(), 5)

    @staticmethod
    def _watch(prepared: _Prepared) -> None:
        def on_dialog(dialog) -> None:
            prepared.trace.dialogs += 1
            asyncio.ensure_future(dialog.dismiss())

        def on_console(message) -> None:
            if len(prepared.trace.console) < 200:
                prepared.trace.console.append(ConsoleEntry(type=message.type, text=message.text[:2000]))

        def on_error(error) -> None:
            note_page_error(prepared.trace.page_errors, str(error))

        page = prepared.page
        page.on("console", on_console)
        page.on("pageerror", on_error)
        page.on("dialog", on_dialog)
        page.on("popup", lambda p: asyncio.ensure_future(p.close()))
        page.on("crash", lambda _: setattr(prepared.trace, "crashed", True))
        page.on("load", lambda _: prepared.trace.document_loaded.set())

    async def _route(self, route: Route, prepared: _Prepared) -> None:
        request, site, trace = route.request, prepared.site, prepared.trace
        url = request.url
        if _navigates_the_page(request, prepared.page):
            trace.navigations += 1
            if not url.startswith(ORIGIN + "/"):
                # A 204 cancels the navigation and keeps the artifact on screen: we judge the page
                # the model wrote, not an error page or whatever it tried to leave for.
                trace.requests.append(RequestEntry(url=url[:2000], resource_type=request.resource_type,
                                                   outcome=RequestOutcome.BLOCKED, detail="top-level navigation away"))
                await route.fulfill(status=204, body="")
                return
            trace.document_loaded.clear()
        if url.startswith(ORIGIN + "/"):
            path = url[len(ORIGIN) + 1:].split("?", 1)[0].split("#", 1)[0] or "index.html"
            if path in site:
                body = site[path]
                ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
                if path.endswith((".html", ".htm")):
                    ctype = "text/html; charset=utf-8"
                trace.requests.append(RequestEntry(url=url, resource_type=request.resource_type,
                                                   outcome=RequestOutcome.SERVED))
                await route.fulfill(status=200, body=body, content_type=ctype)
                return
            trace.requests.append(RequestEntry(url=url, resource_type=request.resource_type,
                                               outcome=RequestOutcome.MISSING))
            await route.fulfill(status=404, body="not found", content_type="text/plain")
            return
        for resolver in self.resolvers:
            hit = resolver.resolve(url)
            if hit is not None:
                body, ctype, label = hit
                trace.requests.append(RequestEntry(url=url, resource_type=request.resource_type,
                                                   outcome=RequestOutcome.SERVED_LOCAL, detail=label))
                await route.fulfill(status=200, body=body, content_type=ctype,
                                    headers={"access-control-allow-origin": "*"})
                return
        if self.config.online and url.startswith(("http://", "https://")):
            trace.requests.append(RequestEntry(url=url[:2000], resource_type=request.resource_type,
                                               outcome=RequestOutcome.NETWORK))
            await route.continue_()
            return
        trace.requests.append(RequestEntry(url=url[:2000], resource_type=request.resource_type,
                                           outcome=RequestOutcome.BLOCKED))
        await route.abort("blockedbyclient")

    async def _bounded(self, name: str, coro, timeout: float | None, trace: _Trace, cdp) -> object | None:
        """Run one stage under its deadline; on expiry stop the page's JavaScript and go on.
        A page that destroys its own document mid-stage fails that stage, not the render."""
        async with trace.stage(name):
            try:
                return await asyncio.wait_for(coro, timeout)
            except (asyncio.TimeoutError, PlaywrightTimeoutError):
                trace.timed_out.append(name)
                await stop_scripts(cdp)
            except PlaywrightError as exc:
                if trace.crashed or self._browser is None or not self._browser.is_connected():
                    raise
                trace.failed[name] = exc.message.splitlines()[0][:300]
            return None

    @staticmethod
    async def _open(page: Page, entry: str) -> dict | None:
        """Navigate, then wait for the document's own load event and its fonts (one round
        trip), and say what the page set up while loading (`_LOADED`). Waiting inside `goto`
        would mistake a page that tries to navigate away (and is held back) for a hung one."""
        await page.goto(f"{ORIGIN}/{entry}", wait_until="commit")
        facts = await ask_page(page, _LOADED)
        return facts if isinstance(facts, dict) else None

    async def _settle(self, page: Page, trace: _Trace, drawing: bool) -> None:
        """A fixed slice of the page's (virtual) time after load (see `aesenv.render.settle`):
        `drawing` is a page that draws with WebGL, which settles frame by frame. A page that
        started leaving its document at the end of the slice (a reload on its last timer) is
        captured on the document it went to, once that has loaded: capturing meanwhile would
        race the navigation's commit. What the page started while loading is forgotten first
        (it was held back, or the settle meets its new document). The look at whether it is
        leaving waits behind the page's main thread, which on a drawing page can be busy with a
        frame for seconds: it is bounded frame by frame too."""
        before = trace.navigations
        await self._leaving(page, trace, drawing)
        if not self.config.freeze_time:
            await page.evaluate(_THREE_FRAMES)
        elif drawing:
            await settle_drawing(page, trace, self.config)
        else:
            await settle_timers(page, trace, self.config)
        if await self._leaving(page, trace, drawing):
            await await_new_document(trace, before, self.config.navigation_timeout_s)

    async def _leaving(self, page: Page, trace: _Trace, drawing: bool) -> bool:
        if drawing:
            return await within_a_frame(is_leaving(page), trace, self.config)
        return await asyncio.wait_for(is_leaving(page), self.config.snapshot_timeout_s)

    async def _on_its_document(self, trace: _Trace, call):
        """`call()`, once more on the new document if the page replaced its own meanwhile (it
        reloaded itself): the first document's is gone."""
        for attempt in range(2):
            try:
                return await call()
            except PlaywrightError as exc:
                if not lost_its_document(exc) or attempt:
                    raise
            await trace.document_loaded.wait()
        return None

    async def _freeze(self, page: Page, world: World, trace: _Trace) -> tuple[dict, float]:
        """Close the resize gate and read the page's claims (its world), then stop motion and
        measure the document's height (ours): what the capture needs before it is taken."""
        async def facts_then_height():
            try:
                facts = await ask_page(page, _PAGE_FACTS, True)
            except PlaywrightError as exc:  # the page broke its own world's answer: no claims
                if lost_its_document(exc):
                    raise
                facts = None
            return (facts if isinstance(facts, dict) else {}), _number(await world.ask(_FREEZE))

        return await self._on_its_document(trace, facts_then_height) or ({}, 0.0)

    async def _snapshot(self, world: World, trace: _Trace, facts: dict) -> object:
        """The snapshot (ours; it crosses as one JSON string, see `inpage`), taken once the page is
        captured: a page's layout may settle during its first full-page capture, and the boxes
        the counterfactual takes away must be the capture's. A document replaced meanwhile is
        snapshotted instead."""
        contexts = facts.get("contexts")
        options = {"maxNodes": self.config.max_dom_nodes, "maxHeight": self.config.max_full_page_height,
                   "contexts": [str(c)[:32] for c in contexts[:200]] if isinstance(contexts, list) else []}

        async def snapshot():
            await world.adopt_closed_shadow_roots()
            return await world.ask(_SNAPSHOT, options)

        return await self._on_its_document(trace, snapshot)

    async def _markup(self, world: World, trace: _Trace, cdp) -> tuple[DomMarkup | None, list[str]]:
        """The DOM as the page's scripts left it (`markup.js`), read in the frozen state the snapshot
        described, in a stage of its own: a page that holds it up costs this stage, not the
        snapshot. Not tried on a page that just hung the snapshot (it would cost a second deadline
        to learn the same): None then, and the record says the page hung."""
        if {"freeze", "snapshot"} & set(trace.timed_out):
            return None, []
        raw = await self._bounded("markup", world.ask(_MARKUP, {"maxChars": self.config.max_markup_chars}),
                                  self.config.snapshot_timeout_s, trace, cdp)
        if raw is None:
            return None, []
        markup, bad = lenient(DomMarkup, raw)
        return markup, [f"markup failed validation ({', '.join(bad)}); left out"] if bad else []

    @staticmethod
    def _validated(snap: object, runs: list[Run], verdicts: Verdicts | None) -> tuple[list, PageMetrics, list[str]]:
        """Elements and metrics from the snapshot, each value that fails validation reset or left
        out and said so in the notes (a page's values never make a render raise); the shown text
        assembled from the characters the counterfactual found shown (`aesenv.render.shown`), the
        pictures from those it found shown. Without verdicts nothing is shown."""
        if not isinstance(snap, dict):
            return [], PageMetrics(), []
        elements, note, index = snapshot_elements(snap.get("elements"))
        notes = [note] if note else []
        metrics, bad = lenient(PageMetrics, snap.get("metrics"))
        if bad:
            notes.append(f"snapshot: page metrics failed validation; defaults for {', '.join(bad)}")
        metrics = metrics or PageMetrics()
        verdicts = verdicts or Verdicts(notes=["no counterfactual measure: nothing counts as shown"])
        notes.extend(verdicts.notes)
        # Runs name elements by their index among the snapshot's entries; renumber to those kept,
        # keep the characters shown and the elements a person sees (`painted`).
        shown_runs = []
        for i, run in enumerate(runs):
            run.element = index[run.element] if 0 <= run.element < len(index) else -1
            verdict = verdicts.text.get(i)
            shown_runs.extend(run.part(a, b) for a, b in (verdict.stretches if verdict else []))
        elements, nearest = painted(elements, shown_runs, verdicts.pictures)
        for run in shown_runs:
            run.element = nearest[run.element] if 0 <= run.element < len(nearest) else -1
        shown = assemble(shown_runs, [e.tag for e in elements], [e.parent for e in elements])
        for i, element in enumerate(elements):
            element.text = shown.element_text.get(i, "")
            element.text_len = len(element.text)
        metrics.visible_text = shown.visible_text
        metrics.text_chars = len(shown.visible_text)
        metrics.headings = shown.headings
        # Pictures count where the counterfactual found them shown.
        metrics.images_total = sum(e.tag == "img" for e in elements) + metrics.images_broken
        metrics.canvases = [c for c in metrics.canvases if verdicts.pictures.get(int(_number(c.get("item"))) if "item" in c else -1, False)]
        return elements, metrics, notes

    async def _measure(self, cdp, world: World, snap: object, runs: list[Run], pixels, size: tuple[int, int],
                       scale: float) -> Verdicts | None:
        """The counterfactual measure of the snapshot's text, pictures and boxes against the capture."""
        if pixels is None or not isinstance(snap, dict):
            return None
        entries = snap.get("elements") if isinstance(snap.get("elements"), list) else []
        paintings, parents = [], []
        for at, entry in enumerate(entries):
            entry = entry if isinstance(entry, dict) else {}
            parent = entry.get("parent")
            parents.append(parent if isinstance(parent, int) else -1)
            if isinstance(entry.get("item"), int) and entry["item"] >= 0:
                paintings.append(Painting(entry["item"], tuple(_number(entry.get(k)) for k in ("x", "y", "w", "h")), at))
        metrics = snap.get("metrics") if isinstance(snap.get("metrics"), dict) else {}
        known = {p.item for p in paintings}
        for canvas in metrics.get("canvases") or []:
            if isinstance(canvas, dict) and isinstance(canvas.get("item"), int) and canvas["item"] not in known:
                paintings.append(Painting(canvas["item"], _canvas_box(canvas)))
        return await measure(cdp, world, runs, snap.get("items"), paintings, parents, pixels, size, scale)

    @staticmethod
    async def _at_size(page: Page, width: int, height: int, then=None):
        """Resize the viewport, then run `then()` (a page call) at that size."""
        await page.set_viewport_size({"width": width, "height": height})
        return await then() if then is not None else True

    @staticmethod
    async def _probe_resized(page: Page, world: World) -> object:
        """The mobile probe, once the page has dispatched the resize to phone width that
        `_RELEASE_RESIZE` armed for (a page whose scripts size a canvas to `innerWidth` is
        measured after they did, every time). A page that keeps the wait from ending costs the
        wait, and is measured as it stands."""
        with contextlib.suppress(asyncio.TimeoutError, PlaywrightError):
            await asyncio.wait_for(ask_page(page, _RESIZED), RESIZE_WAIT_S)
        return await world.ask(_MOBILE_PROBE)

    async def _capture(self, page: Page, cdp, world: World, entry: str, trace: _Trace,
                       size: tuple[int, int]) -> Rendering:
        cfg = self.config
        width, height = size
        loaded = await self._bounded("navigate", self._open(page, entry), cfg.navigation_timeout_s, trace, cdp)
        frames_at_load = _number(loaded.get("frames")) if isinstance(loaded, dict) else 0
        drawing = cfg.freeze_time and isinstance(loaded, dict) and (_number(loaded.get("webgl")) or 0) > 0
        trace.drawing = drawing
        # A WebGL page's settle stage is bounded frame by frame instead (see `aesenv.render.settle`).
        settle_timeout = None if drawing else cfg.settle_timeout_s
        await self._bounded("settle", self._settle(page, trace, drawing), settle_timeout, trace, cdp)
        # Motion is stopped first so the capture and the snapshot describe one frame. The page's
        # resize handlers are held during the capture: a full-page capture resizes the view, and a
        # handler that resets a canvas (`canvas.width = innerWidth`) would blank the frame it drew,
        # with a frozen clock to never draw it again.
        frozen = await self._bounded("freeze", self._freeze(page, world, trace), cfg.snapshot_timeout_s, trace, cdp)
        facts, doc_height = frozen if isinstance(frozen, tuple) else ({}, 0.0)
        doc_height = doc_height or height
        if not drawing:  # a WebGL page's settle counts its own frames
            trace.settle_frames = max(0, int(_number(facts.get("frames")) or 0) - int(frames_at_load))
        captured = int(max(height, min(doc_height, cfg.max_full_page_height)))
        shot = await self._bounded("screenshot", cdp.send("Page.captureScreenshot", {
            "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": True, "fromSurface": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": captured, "scale": 1}}),
            cfg.capture_timeout_s, trace, cdp)
        full_png = base64.b64decode(shot["data"]) if isinstance(shot, dict) and "data" in shot else None
        # Its pixels are decoded in a thread while the page answers the snapshot and the markup.
        decoding = asyncio.ensure_future(asyncio.to_thread(decode_rgb, full_png)) if full_png else None
        snap = None
        if "freeze" not in trace.timed_out:
            snap = await self._bounded("snapshot", self._snapshot(world, trace, facts), cfg.snapshot_timeout_s, trace, cdp)
        markup, notes_markup = await self._markup(world, trace, cdp)
        pixels = await decoding if decoding is not None else None
        scale = pixels.shape[1] / width if pixels is not None and width else 1.0
        runs = parse_runs(snap.get("runs")) if isinstance(snap, dict) else []
        # Content counts where taking it away changes these pixels: measured now, while the page
        # is as captured (before the phone-width probe resizes it).
        verdicts = await self._bounded("counterfactual", self._measure(cdp, world, snap, runs, pixels, (width, captured), scale),
                                       cfg.capture_timeout_s, trace, cdp)
        # Our side's work on the verdicts (assembling the shown text) runs in a thread while the page
        # answers the phone-width probe: neither reads the other's results, so the record is the
        # same, sooner.
        checked = asyncio.ensure_future(asyncio.to_thread(self._validated, snap, runs, verdicts))
        try:
            await self._bounded("release_resize", ask_page(page, _RELEASE_RESIZE, cfg.mobile_width),
                                cfg.capture_timeout_s, trace, cdp)
            # A resize waits for the renderer to answer, so it is bounded like any page call: a
            # page still busy parsing a flood would otherwise hold the render past every deadline.
            probe = await self._bounded("mobile_probe", self._at_size(
                page, cfg.mobile_width, cfg.mobile_height, lambda: self._probe_resized(page, world)),
                                        cfg.snapshot_timeout_s, trace, cdp)
        finally:
            elements, metrics, notes = await checked
        metrics.popups_blocked = int(_number(facts.get("popups")) or 0)
        notes += notes_markup
        mobile, bad = lenient(MobileProbe, probe) if probe is not None else (None, [])
        if bad:
            notes.append(f"mobile probe failed validation ({', '.join(bad)}); left out")
        return Rendering(
            status=_status(trace), error=_problems(trace), stages_timed_out=trace.timed_out,
            settled_ms=trace.settled_ms, settle_frames=trace.settle_frames, notes=notes,
            viewport=(width, height),
            full_page_png=full_png, captured_height=captured if full_png else 0,
            height_capped=doc_height > cfg.max_full_page_height,
            elements=elements, elements_truncated=bool(isinstance(snap, dict) and snap.get("truncated")),
            metrics=metrics, mobile=mobile, markup=markup, console=trace.console, page_errors=trace.page_errors,
            requests=trace.requests, dialogs=trace.dialogs, timings_ms=trace.timings).with_pixels(pixels)
