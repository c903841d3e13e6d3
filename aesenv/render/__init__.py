"""Rendering: one async Playwright renderer, hermetic by default."""

from aesenv.render.browser import BrowserBinary, BrowserNotFound, find_chromium
from aesenv.render.live import LivePage, PageCrashed, PageFault, PageReloading, PageStalled, PageThrew, Session
from aesenv.render.models import DomElement, PageMetrics, Rendering, RenderStatus, RequestOutcome
from aesenv.render.renderer import ORIGIN, AssetResolver, RenderConfig, Renderer

__all__ = ["ORIGIN", "AssetResolver", "BrowserBinary", "BrowserNotFound", "DomElement", "LivePage", "PageCrashed",
           "PageFault", "PageMetrics", "PageReloading", "PageStalled", "PageThrew", "RenderConfig", "RenderStatus",
           "Renderer", "Rendering", "RequestOutcome", "Session", "find_chromium"]
