"""The one way aesenv renders a page: async Playwright over one long-lived Chromium.

Every render gets a fresh browser context (no state leaks between episodes), the page is
served from a virtual origin (never `file://`), every other request goes through the asset
resolvers (vendored libraries, a later layer) and is otherwise blocked and logged. Each stage
has its own deadline; a page that hangs a stage is cut off and captured as far as it got.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import mimetypes
import time
from importlib import resources
from typing import Protocol

from playwright.async_api import Browser, BrowserContext, Error as PlaywrightError, Page, Playwright, Route
from playwright.async_api import async_playwright
from pydantic import BaseModel

from aesenv.render.browser import CHROMIUM_ARGS, BrowserBinary, find_chromium
from aesenv.render.vendor import library_usage
from aesenv.render.models import (ConsoleEntry, DomElement, MobileProbe, PageMetrics, Rendering,
                                  RenderStatus, RequestEntry, RequestOutcome)

log = logging.getLogger(__name__)

ORIGIN = "https://artifact.aesenv.invalid"
_JS = {name: (resources.files("aesenv.render") / name).read_text() for name in ("snapshot.js", "mobile_probe.js")}


class RenderConfig(BaseModel):
    """Capture policy and deadlines. Defaults follow OpenDesign's 1280-wide judging view."""

    viewport_width: int = 1280
    viewport_height: int = 960
    device_scale_factor: float = 1.0
    max_full_page_height: int = 8000
    mobile_width: int = 390
    mobile_height: int = 844
    settle_frames: int = 3
    max_dom_nodes: int = 3000
    navigation_timeout_s: float = 10.0
    settle_timeout_s: float = 3.0
    capture_timeout_s: float = 10.0
    snapshot_timeout_s: float = 5.0
    total_timeout_s: float = 45.0
    concurrency: int = 2


class AssetResolver(Protocol):
    """Serves a request that is not for the artifact itself (e.g. a vendored CDN library)."""

    def resolve(self, url: str) -> tuple[bytes, str, str] | None:
        """Return (body, content type, label) or None to leave the request blocked."""


class _Trace:
    """Collects what happens in one render (requests, console, errors, timings)."""

    def __init__(self) -> None:
        self.requests: list[RequestEntry] = []
        self.console: list[ConsoleEntry] = []
        self.page_errors: list[str] = []
        self.dialogs = 0
        self.timings: dict[str, float] = {}
        self.timed_out: list[str] = []

    @contextlib.asynccontextmanager
    async def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round((time.perf_counter() - start) * 1000, 1)


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
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._launch_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(self.config.concurrency)
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
            self._browser = await self._pw.chromium.launch(
                executable_path=self._binary.path, args=list(CHROMIUM_ARGS), timeout=30_000)
            self.launches += 1

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._browser:
                await asyncio.wait_for(self._browser.close(), 10)
        with contextlib.suppress(Exception):
            if self._pw:
                await asyncio.wait_for(self._pw.stop(), 10)
        self._browser, self._pw = None, None

    async def render(self, html: str, *, files: dict[str, bytes | str] | None = None,
                     entry: str = "index.html") -> Rendering:
        """Render one page. Never raises for a bad page; browser failures become INFRA_ERROR."""
        site = {entry: html, **(files or {})}
        async with self._slots:
            try:
                await self.start()
            except Exception as exc:  # noqa: BLE001 - any launch failure is an infra failure
                return Rendering(status=RenderStatus.INFRA_ERROR, error=f"browser launch failed: {exc}")
            trace = _Trace()
            try:
                return await asyncio.wait_for(self._render(site, entry, trace), self.config.total_timeout_s)
            except asyncio.TimeoutError:
                return self._failed(RenderStatus.INFRA_ERROR, "render exceeded its total deadline", trace)
            except PlaywrightError as exc:
                if self._browser is None or not self._browser.is_connected():
                    log.warning("browser died during a render; it will be relaunched")
                return self._failed(RenderStatus.INFRA_ERROR, f"browser error: {exc.message.splitlines()[0]}", trace)

    def _failed(self, status: RenderStatus, error: str, trace: _Trace) -> Rendering:
        return Rendering(status=status, error=error, console=trace.console, page_errors=trace.page_errors,
                         requests=trace.requests, timings_ms=trace.timings, provenance=self.provenance)

    async def _render(self, site: dict[str, bytes | str], entry: str, trace: _Trace) -> Rendering:
        cfg = self.config
        assert self._browser is not None
        async with trace.stage("context"):
            ctx = await self._browser.new_context(
                viewport={"width": cfg.viewport_width, "height": cfg.viewport_height},
                device_scale_factor=cfg.device_scale_factor, service_workers="block",
                accept_downloads=False, java_script_enabled=True)
        try:
            await ctx.route("**/*", lambda route: self._route(route, site, trace))
            ctx.on("page", lambda p: None)
            page = await ctx.new_page()
            self._watch(page, ctx, trace)
            cdp = await ctx.new_cdp_session(page)
            result = await self._capture(page, cdp, entry, trace)
            result.provenance = self.provenance
            result.libraries = library_usage(result.requests).model_dump()
            return result
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ctx.close(), 5)

    def _watch(self, page: Page, ctx: BrowserContext, trace: _Trace) -> None:
        def on_dialog(dialog) -> None:
            trace.dialogs += 1
            asyncio.ensure_future(dialog.dismiss())

        page.on("console", lambda m: trace.console.append(ConsoleEntry(type=m.type, text=m.text[:2000]))
                if len(trace.console) < 200 else None)
        page.on("pageerror", lambda e: trace.page_errors.append(str(e)[:2000]) if len(trace.page_errors) < 100 else None)
        page.on("dialog", on_dialog)
        page.on("popup", lambda p: asyncio.ensure_future(p.close()))

    async def _route(self, route: Route, site: dict[str, bytes | str], trace: _Trace) -> None:
        request = route.request
        url = request.url
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
        trace.requests.append(RequestEntry(url=url[:2000], resource_type=request.resource_type,
                                           outcome=RequestOutcome.BLOCKED))
        await route.abort("blockedbyclient")

    async def _bounded(self, name: str, coro, timeout: float, trace: _Trace, cdp) -> object | None:
        """Run one stage under its deadline; on expiry stop the page's JavaScript and go on."""
        async with trace.stage(name):
            try:
                return await asyncio.wait_for(coro, timeout)
            except asyncio.TimeoutError:
                trace.timed_out.append(name)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(cdp.send("Runtime.terminateExecution"), 2)
                return None

    async def _capture(self, page: Page, cdp, entry: str, trace: _Trace) -> Rendering:
        cfg = self.config
        await self._bounded("navigate", page.goto(f"{ORIGIN}/{entry}", wait_until="load"),
                            cfg.navigation_timeout_s, trace, cdp)
        await self._bounded("settle", page.evaluate(
            """async (frames) => {
                 if (document.fonts && document.fonts.ready) await document.fonts.ready;
                 for (let i = 0; i < frames; i++) await new Promise(r => requestAnimationFrame(() => r()));
               }""", cfg.settle_frames), cfg.settle_timeout_s, trace, cdp)
        snap = await self._bounded("snapshot", page.evaluate(_JS["snapshot.js"], cfg.max_dom_nodes),
                                   cfg.snapshot_timeout_s, trace, cdp)
        metrics = PageMetrics(**snap["metrics"]) if isinstance(snap, dict) else PageMetrics()
        elements = [DomElement(**e) for e in snap["elements"]] if isinstance(snap, dict) else []
        viewport_png = await self._bounded("viewport_shot", page.screenshot(
            type="png", caret="hide", timeout=cfg.capture_timeout_s * 1000), cfg.capture_timeout_s, trace, cdp)
        doc_height = int(metrics.doc_height or cfg.viewport_height)
        captured = max(cfg.viewport_height, min(doc_height, cfg.max_full_page_height))
        full_png = await self._bounded("full_page_shot", page.screenshot(
            type="png", caret="hide", full_page=True, timeout=cfg.capture_timeout_s * 1000,
            clip={"x": 0, "y": 0, "width": cfg.viewport_width, "height": captured}),
            cfg.capture_timeout_s * 2, trace, cdp)
        mobile = None
        with contextlib.suppress(PlaywrightError):
            await page.set_viewport_size({"width": cfg.mobile_width, "height": cfg.mobile_height})
            probe = await self._bounded("mobile_probe", page.evaluate(
                "async (f) => { for (let i = 0; i < 2; i++) await new Promise(r => requestAnimationFrame(() => r()));"
                f" return ({_JS['mobile_probe.js']})(); }}", 0), cfg.snapshot_timeout_s, trace, cdp)
            mobile = MobileProbe(**probe) if isinstance(probe, dict) else None
        status = RenderStatus.TIMEOUT if trace.timed_out else RenderStatus.OK
        error = f"page hung in: {', '.join(trace.timed_out)}" if trace.timed_out else ""
        return Rendering(
            status=status, error=error, stages_timed_out=trace.timed_out,
            viewport_png=viewport_png if isinstance(viewport_png, bytes) else None,
            full_page_png=full_png if isinstance(full_png, bytes) else None,
            captured_height=captured if isinstance(full_png, bytes) else 0,
            height_capped=doc_height > cfg.max_full_page_height,
            elements=elements, elements_truncated=bool(snap and snap.get("truncated")),
            metrics=metrics, mobile=mobile, console=trace.console, page_errors=trace.page_errors,
            requests=trace.requests, dialogs=trace.dialogs, timings_ms=trace.timings)
