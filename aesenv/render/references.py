"""A task's reference as pixels: a given picture decoded, or a reference page rendered once per
renderer and shared by everything that compares with it (the kinds' `reference`, the reference
channels), so the policy sees the very pixels it is compared with."""

from __future__ import annotations

import base64
import binascii
import hashlib

from aesenv.memo import AsyncMemo, PerOwner
from aesenv.render.models import Rendering, RenderStatus
from aesenv.render.renderer import Renderer
from aesenv.tasks.model import Task

_CACHE_SIZE = 64  # renderings keep their screenshots


def decode_reference(reference: str) -> bytes:
    """A base64 PNG, bare or as a data: URL (how datasets store ground-truth plots)."""
    data = reference.split(",", 1)[1] if reference.startswith("data:") else reference
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"the task's reference image is not base64: {exc}") from exc


class ReferenceRenderings(PerOwner):
    """Renderings of reference pages, one render per (page, canvas), shared by the channels of
    one renderer. A reference the page's own fault broke is remembered as such; one our side
    failed to render is tried again by the next sample."""

    def __init__(self) -> None:
        self._memo: AsyncMemo[Rendering] = AsyncMemo(
            _CACHE_SIZE, keep=lambda rendering: rendering.status is not RenderStatus.INFRA_ERROR)

    @staticmethod
    def key(task: Task) -> str | None:
        if not task.reference_html:
            return None
        canvas = f"{task.canvas.width}x{task.canvas.height}" if task.canvas else "page"
        return hashlib.sha256(f"{canvas}\n{task.reference_html}".encode()).hexdigest()

    async def prepare(self, task: Task, renderer: Renderer) -> None:
        key = self.key(task)
        if key is None:
            return
        viewport = (task.canvas.width, task.canvas.height) if task.canvas else None
        await self._memo.get(key, lambda: renderer.render(task.reference_html, viewport=viewport))

    def get(self, task: Task) -> Rendering | None:
        key = self.key(task)
        return self._memo.peek(key) if key else None


