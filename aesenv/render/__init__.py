"""Rendering: one async Playwright renderer, hermetic by default."""

from aesenv.render.browser import BrowserBinary, BrowserNotFound, find_chromium
from aesenv.render.models import DomElement, PageMetrics, Rendering, RenderStatus, RequestOutcome
from aesenv.render.renderer import ORIGIN, AssetResolver, RenderConfig, Renderer

__all__ = ["ORIGIN", "AssetResolver", "BrowserBinary", "BrowserNotFound", "DomElement", "PageMetrics",
           "RenderConfig", "RenderStatus", "Renderer", "Rendering", "RequestOutcome", "find_chromium"]
