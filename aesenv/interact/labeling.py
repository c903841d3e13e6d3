"""Set-of-marks labeling of a live page: which elements a user could act on, numbered.

Besides the usual heuristics (links, buttons, inputs, ARIA roles, `onclick`, `tabindex`,
pointer cursors) it asks the browser itself, through CDP, which nodes have event listeners, so
controls wired only with `addEventListener` are found, and it labels canvas regions (games,
WebGL) for coordinate clicks and key presses. The numbers are drawn on a copy of the
screenshot with Pillow; the page is never modified, so what is judged is what the model wrote.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from aesenv.interact.models import Labeling, Mark
from aesenv.render.inpage import KEY, in_page
from aesenv.render.live import LivePage
from aesenv.stages import stage

_LABEL_JS = in_page((resources.files("aesenv.interact") / "label.js").read_text())
_GROUP = "aesenv-labeling"
# Event types that make an element a control; keys on window/document/body mark a game page.
_RELEVANT = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick",
                       "keydown", "keyup", "keypress", "input", "change", "submit"})
# label.js, given the nodes with listeners as (node, types, node, types, ...) after its options:
# kept as `N.state.listened` for it, in our world, in the same call.
_LABEL_WITH_LISTENED = f"""function (arg, ...pairs) {{
  const N = globalThis.{KEY};
  const map = new N.Map();
  for (let i = 0; i < pairs.length; i += 2) map.set(pairs[i], pairs[i + 1]);
  N.state.listened = map;
  return ({_LABEL_JS})(arg);
}}"""
MAX_MARKS = 60
MAX_SCAN = 4000
MAX_LISTENED_NODES = 400


async def _together(*calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Protocol calls that do not wait on each other, sent at once: one wait, not one each."""
    return list(await asyncio.gather(*(call() for call in calls)))


async def _listened_nodes(live: LivePage) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(objectId, event types) for every node with a relevant listener, and window's key events."""
    cdp = live.cdp
    doc, win = await live.bounded(_together(
        lambda: cdp.send("Runtime.evaluate", {"expression": "document", "objectGroup": _GROUP}),
        lambda: cdp.send("Runtime.evaluate", {"expression": "window", "objectGroup": _GROUP})))
    found, on_window = await live.bounded(_together(
        lambda: cdp.send("DOMDebugger.getEventListeners", {
            "objectId": doc["result"]["objectId"], "depth": -1, "pierce": True}),
        lambda: cdp.send("DOMDebugger.getEventListeners", {"objectId": win["result"]["objectId"]})))
    by_node: dict[int, set[str]] = {}
    for listener in found.get("listeners", []):
        node = listener.get("backendNodeId")
        if node and listener["type"] in _RELEVANT:
            by_node.setdefault(node, set()).add(listener["type"])
    listened = sorted(by_node)[:MAX_LISTENED_NODES]
    world = live.world
    await live.bounded(world.context())  # made once, before the nodes are resolved into it at once
    object_ids = await live.bounded(_together(*(
        lambda backend_id=backend_id: world.resolve(backend_id, _GROUP) for backend_id in listened)))
    window_keys = sorted({entry["type"] for entry in on_window.get("listeners", []) if entry["type"].startswith("key")})
    return [(object_id, sorted(by_node[backend_id])) for object_id, backend_id in zip(object_ids, listened)], window_keys


async def label(live: LivePage, *, max_marks: int = MAX_MARKS) -> Labeling:
    """Number the interactable elements of the page as it is now (viewport coordinates)."""
    with stage("label"):
        return await _label(live, max_marks)


async def _label(live: LivePage, max_marks: int) -> Labeling:
    cdp = live.cdp
    try:
        nodes, window_keys = await _listened_nodes(live)
        pairs = [item for object_id, types in nodes for item in ({"objectId": object_id}, {"value": types})]
        found = await live.ask(_LABEL_WITH_LISTENED, {"maxMarks": max_marks, "maxScan": MAX_SCAN}, more=pairs)
    finally:
        await live.bounded(cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP}))
    marks = [Mark.model_validate(m) for m in found["marks"]]
    keys = sorted(set(window_keys) | set(found["page_keys"]))
    return Labeling(marks=marks, key_listeners=keys)


_PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180),
            (240, 50, 230), (0, 128, 128), (170, 110, 40), (128, 0, 0), (0, 0, 128)]


def draw_marks(screenshot: bytes, labeling: Labeling) -> bytes:
    """The viewport screenshot with each visible mark's box and number drawn on it (PNG)."""
    image = Image.open(io.BytesIO(screenshot)).convert("RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=14)
    for mark in labeling.marks:
        if not mark.in_viewport:
            continue
        color = _PALETTE[mark.index % len(_PALETTE)]
        b = mark.box
        draw.rectangle((b.x, b.y, b.x + b.w, b.y + b.h), outline=color, width=2)
        tag = str(mark.index)
        left, top, right, bottom = draw.textbbox((0, 0), tag, font=font)
        lx, ly = max(0.0, b.x), max(0.0, b.y - (bottom - top) - 6)
        draw.rectangle((lx, ly, lx + right - left + 6, ly + bottom - top + 6), fill=color)
        draw.text((lx + 3 - left, ly + 3 - top), tag, fill=(255, 255, 255), font=font)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def thumbnail(image: Image.Image, width: int = 240, quality: int = 50) -> str:
    """A small JPEG (base64) of a screenshot for records: enough to see what happened, a few KB."""
    scale = min(1.0, width / image.width, 2 * width / image.height)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    # A new image (the caller's is left as it is), box-reduced first, then resampled.
    small = image.resize(size, Image.Resampling.BICUBIC, reducing_gap=2.0)
    out = io.BytesIO()
    (small if small.mode == "RGB" else small.convert("RGB")).save(out, "JPEG", quality=quality, optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii")
