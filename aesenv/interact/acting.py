"""Perform one action on the live page and measure what it changed.

Every action is measured against the page left alone: the page first idles for as long as the
action will take (virtual time, the clock is paused otherwise), then the action runs. A page that
stays still while it idles (no DOM change, no animation, nothing that draws by itself: a canvas,
a video, a frame) has changed no pixel either, so its idle change is known without a screenshot;
one that moved is measured over a second idle window of the same length. DOM
mutations count only on nodes that never changed while the page idled (so a ticking clock or an
animation is not mistaken for a response), and pixel change must clearly exceed the idle change
in the affected region (the canvas for game keys; the viewport minus the control itself for
clicks, so a hover or focus style is not a response). Scrolling, hash changes and reloads are
read directly, and so are new page errors, net of those the page also throws left alone (a
background timer that throws on every tick is not a response to the action, nor its failure).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from PIL import Image

from aesenv.interact.labeling import thumbnail
from aesenv.interact.models import NEAR_PX, Action, Box, Labeling, Mark, MarkKind, Response
from aesenv.render.inpage import in_page
from aesenv.render.live import LivePage
from aesenv.render.models import rgb_pixels
from aesenv.stages import stage

SETTLE_MS = 600      # virtual time after an action for timers, transitions and frames to run
HOLD_MS = 300        # how long a game key is held down
WAIT_MS = 1500
PIXEL_THRESHOLD = 24  # per-channel difference that counts as a visible change
T = TypeVar("T")

# The actor's page calls read the page only through the natives `N` (aesenv/render/natives.js);
# the marks are the labeled elements label.js keeps in `N.state.marks`.
_OBSERVE = in_page("""(N, phase) => {
  let o = N.state.observer, fresh = false;
  if (!o) {
    fresh = true;
    N.setStyle(N.inlineStyle(N.root(N.document)), "scroll-behavior", "auto", "important");
    o = { phase: "idle", idle: new N.WeakSet(), idleCount: 0, actCount: 0 };
    o.take = (records) => {
      for (const r of records) {
        if (o.phase === "idle") { o.idle.add(r.target); o.idleCount++; }
        else if (!o.idle.has(r.target)) o.actCount++;
      }
    };
    o.obs = N.observer(o.take);
    N.observe(o.obs, N.document, { subtree: true, childList: true, attributes: true, characterData: true });
    N.state.observer = o;
  }
  o.take(N.takeRecords(o.obs));
  const view = N.viewport();
  // What changes pixels without a DOM mutation: animations and transitions under way, and
  // elements that draw by themselves (SMIL animations and GIFs included).
  const moving = N.animations(N.document).length > 0 || N.all(N.document,
    "canvas, video, iframe, frame, embed, object, marquee, animate, animateTransform, animateMotion, set, " +
    "img[src*='.gif' i], img[src^='data:image/gif' i], img[src*='.webp' i], img[src*='.apng' i]").length > 0;
  const out = { fresh, idle: o.idleCount, act: o.actCount, hash: N.hash(), x: view.scrollX, y: view.scrollY, moving };
  o.phase = phase; o.idleCount = 0; o.actCount = 0;
  return out;
}""")
# The boxes of the marks `indices` (null for one gone or hidden), each with whether it lies wholly
# in the viewport, the first scrolled into view first when `scroll` (and whether the page
# scrolled), and the box of the element that has the focus: what an action aims with, in one call.
_AIM = in_page("""(N, [indices, scroll]) => {
  const marks = N.state.marks || [];
  const element = (i) => { const el = marks[i]; return el && N.isConnected(el) ? el : null; };
  const from = N.viewport();
  if (scroll && indices.length && element(indices[0])) N.reveal(element(indices[0]));
  const to = N.viewport();
  const boxes = indices.map((i) => {
    const el = element(i);
    if (!el) return null;
    const r = N.box(el);
    const inside = r.left >= 0 && r.top >= 0 && r.left + r.width <= to.width && r.top + r.height <= to.height;
    return r.width >= 1 && r.height >= 1 ? { x: r.left, y: r.top, w: r.width, h: r.height, inside } : null;
  });
  const active = N.activeElement(N.document);
  let focused = null;
  if (active && active !== N.body(N.document) && active !== N.root(N.document)) {
    const r = N.box(active);
    focused = { x: r.left, y: r.top, w: r.width, h: r.height };
  }
  return { boxes, focused, scrolled: to.scrollX !== from.scrollX || to.scrollY !== from.scrollY };
}""")
_CHOOSE_NEXT = in_page("""(N, i) => {
  const el = N.state.marks[i];
  const count = N.list(N.prop(el, "options")).length;
  if (count < 2) return false;
  N.setProp(el, "selectedIndex", (N.prop(el, "selectedIndex") + 1) % count);
  N.dispatch(el, "input");
  N.dispatch(el, "change");
  return true;
}""")
_KEY_FOCUS = in_page("""(N, i) => {
  const target = i === null ? null : N.state.marks[i];
  const active = N.activeElement(N.document);
  if (target) N.focus(target, { preventScroll: true });
  else if (active && active !== N.body(N.document)) N.blur(active);
}""")


# A blank spot of the viewport as it is now: on a grid from the top left, the first point at
# least `margin` from the region `away` whose element (and every ancestor) is no control.
_BLANK = in_page("""(N, [away, margin]) => {
  const { width, height } = N.viewport(), doc = N.document;
  const CONTROL = "a[href],button,input,select,textarea,label,summary,details,video,audio,canvas,iframe,"
    + "[onclick],[role=button],[role=link],[role=tab],[role=checkbox],[role=switch],[role=menuitem],[tabindex],[contenteditable]";
  const near = (x, y) => x > away[0] - margin && x < away[2] + margin && y > away[1] - margin && y < away[3] + margin;
  for (let y = margin; y < height - margin; y += 40) {
    for (let x = margin; x < width - margin; x += 40) {
      if (near(x, y)) continue;
      const el = N.elementFromPoint(doc, x, y);
      if (!el || N.closest(el, CONTROL)) continue;
      let pointer = false;
      for (let node = el; node && !pointer; node = N.parent(node)) pointer = N.style(node)("cursor") === "pointer";
      if (!pointer) return [x, y];
    }
  }
  return null;
}""")
STRAY_MARGIN = 24  # px kept between a stray click and the change it tests


class ActionFailed(RuntimeError):
    """The action could not be performed (its element is gone or hidden): not a verdict."""


class Frame:
    """One viewport screenshot, decoded only when a comparison or a thumbnail needs its pixels.
    Each is worked out once per frame (by whichever thread asks first; the same either way)."""

    def __init__(self, png: bytes) -> None:
        self.png = png
        self._shape: tuple[int, int] | None = None
        self._pixels: np.ndarray | None = None
        self._image: Image.Image | None = None
        self._jpeg_b64: str | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(height, width), read from the PNG's header."""
        if self._shape is None:
            width, height = Image.open(io.BytesIO(self.png)).size
            self._shape = height, width
        return self._shape

    @property
    def pixels(self) -> np.ndarray:
        """(height, width, 3) uint8 RGB."""
        if self._pixels is None:
            self._pixels = rgb_pixels(self.png)
        return self._pixels

    @property
    def image(self) -> Image.Image:
        if self._image is None:
            self._image = Image.fromarray(self.pixels)
        return self._image

    @property
    def jpeg_b64(self) -> str:
        """The thumbnail a record keeps."""
        if self._jpeg_b64 is None:
            with stage("thumbnail"):
                self._jpeg_b64 = thumbnail(self.image)
        return self._jpeg_b64


async def off_the_loop(work: Callable[[], T]) -> T:
    """Pixel work (decoding, comparing, thumbnails) in a worker thread: zlib, numpy and Pillow
    let go of the GIL while they work, so the event loop goes on serving the calls of the other
    pages scored at the same time instead of waiting for one page's arithmetic."""
    return await asyncio.to_thread(work)


@dataclass
class Measured:
    response: Response
    before: Frame
    after: Frame  # the same object as `before` when not one pixel changed
    target: Mark | None


def _region_mask(shape: tuple[int, int], include: Box | None, exclude: list[Box]) -> np.ndarray:
    """The pixels inside `include` (all when None) and outside every `exclude`."""
    height, width = shape
    mask = np.zeros(shape, dtype=bool)

    def clip(box: Box) -> tuple[int, int, int, int]:
        return (max(0, int(box.x)), max(0, int(box.y)), min(width, int(box.x + box.w + 1)), min(height, int(box.y + box.h + 1)))

    if include is None:
        mask[:] = True
    else:
        x0, y0, x1, y1 = clip(include)
        mask[y0:y1, x0:x1] = True
    for box in exclude:
        x0, y0, x1, y1 = clip(box)
        mask[y0:y1, x0:x1] = False
    return mask


def _change_map(a: Frame, b: Frame) -> np.ndarray | None:
    """The pixels whose colour changed visibly from `a` to `b` (every pixel when the sizes
    differ); None when the two screenshots are the same image (equal PNG bytes: no decoding)."""
    if a is b or a.png == b.png:
        return None
    x, y = a.pixels, b.pixels
    if x.shape != y.shape:
        return np.ones(y.shape[:2], dtype=bool)
    d = np.maximum(x, y) - np.minimum(x, y)  # |x - y| in uint8, without widening the arrays
    return np.maximum(np.maximum(d[..., 0], d[..., 1]), d[..., 2]) > PIXEL_THRESHOLD


def _count(change: np.ndarray | None, mask: np.ndarray) -> int:
    return 0 if change is None else int(np.count_nonzero(change & mask))


def _bounds(change: np.ndarray | None, mask: np.ndarray) -> list[int] | None:
    """[x0, y0, x1, y1] of the changed pixels inside `mask` (None when none changed)."""
    if change is None:
        return None
    hit = change & mask
    rows, cols = np.flatnonzero(hit.any(axis=1)), np.flatnonzero(hit.any(axis=0))
    if not len(rows):
        return None
    return [int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1]


def _response(before: Frame, after: Frame, idle_start: Frame | None, include: Box | None, exclude: list[Box],
              own: Box | None, state_before: dict, state_after: dict, new_errors: list[str]) -> Response:
    """What an action changed, from the frames and the observer's states around it."""
    change = _change_map(before, after)
    shape = before.shape
    mask = _region_mask(shape, include, exclude)
    near = mask & _region_mask(shape, own.inflated(NEAR_PX), []) if own is not None else mask
    own_mask = _region_mask(shape, own, []) if own is not None else None
    return Response(
        mutations=0 if state_after["fresh"] else state_after["act"],
        idle_mutations=state_before["idle"],
        changed_px=_count(change, mask),
        idle_changed_px=0 if idle_start is None else _count(_change_map(idle_start, before), mask),
        own_changed_px=_count(change, own_mask) if own_mask is not None else 0,
        own_px=int(np.count_nonzero(own_mask)) if own_mask is not None else 0,
        near_changed_px=_count(change, near),
        change_box=_bounds(change, mask),
        control_box=[int(own.x), int(own.y), int(own.x + own.w), int(own.y + own.h)] if own is not None else None,
        region_px=int(np.count_nonzero(mask)),
        region="canvas" if include is not None else ("viewport minus the control" if exclude else "viewport"),
        scrolled=abs(state_after["x"] - state_before["x"]) > 20 or abs(state_after["y"] - state_before["y"]) > 20,
        hash_changed=state_after["hash"] != state_before["hash"],
        reloaded=bool(state_after["fresh"]),
        new_errors=new_errors,
    )


def _stray_response(before: Frame, after: Frame, idle_start: Frame | None, state_before: dict, state_after: dict,
                    new_errors: list[str]) -> Response:
    """What a click on blank space changed anywhere in the viewport."""
    change = _change_map(before, after)
    mask = _region_mask(before.shape, None, [])
    return Response(
        mutations=0 if state_after["fresh"] else state_after["act"], idle_mutations=state_before["idle"],
        changed_px=_count(change, mask),
        idle_changed_px=0 if idle_start is None else _count(_change_map(idle_start, before), mask),
        change_box=_bounds(change, mask), region_px=int(np.count_nonzero(mask)), region="viewport",
        reloaded=bool(state_after["fresh"]),
        new_errors=new_errors)


def duration_ms(action: Action) -> int:
    if action.kind == "key":
        return len(action.keys) * HOLD_MS + SETTLE_MS
    if action.kind == "wait":
        return WAIT_MS
    return SETTLE_MS


class Actor:
    """Acts on one live page; `start` once, then `run` each action."""

    def __init__(self, live: LivePage) -> None:
        self.live = live
        self.idle_errors: set[str] = set()  # page errors seen while the page was left alone

    async def _input(self, call: Awaitable[None]) -> None:
        """A mouse or keyboard call on the page, bounded like every call on it."""
        with stage("input"):
            await self.live.bounded(call)

    async def _idle(self, ms: int) -> None:
        seen = len(self.live.page_errors)
        await self.live.advance(ms)
        self.idle_errors.update(self.live.page_errors[seen:])

    async def start(self, idle_ms: int = 1200) -> None:
        """Install the mutation observer and let the page idle, so background changes
        (clocks, carousels, game loops, a timer that keeps throwing) are known before the first action."""
        await self.live.ask(_OBSERVE, "idle")
        await self._idle(idle_ms)

    async def _aim(self, indices: list[int], scroll: bool) -> tuple[list[tuple[Box, bool] | None], Box | None]:
        """Each mark's box (None: gone or hidden) with whether it lies wholly in the viewport, and
        the focused element's box, read in one call. With `scroll` the first mark is scrolled into
        view first, and a page that scrolled gets a moment for its scroll handlers (a sticky
        header, lazy content) before they are read again."""
        found = await self.live.ask(_AIM, [indices, scroll])
        if scroll and found["boxes"][0] is not None and found["scrolled"]:
            await self.live.advance(150)
            found = await self.live.ask(_AIM, [indices, False])
        boxes: list[tuple[Box, bool] | None] = []
        for box in found["boxes"]:
            inside = bool(box.pop("inside", False)) if box is not None else False
            boxes.append(None if box is None else (Box.model_validate(box), inside))
        focused = found["focused"]
        return boxes, Box.model_validate(focused) if focused is not None else None

    @staticmethod
    def _canvas(labeling: Labeling) -> Mark | None:
        canvases = [m for m in labeling.marks if m.kind is MarkKind.CANVAS and m.in_viewport]
        return max(canvases, key=lambda m: m.box.w * m.box.h, default=None)

    async def run(self, action: Action, labeling: Labeling) -> Measured:
        """Perform `action` and measure the page's response to it."""
        measured = await self.run_together([action], labeling)
        assert measured is not None  # one action always fits its own view
        return measured

    async def run_together(self, actions: list[Action], labeling: Labeling) -> Measured | None:
        """Perform `actions` one after another as one interaction (fill a form's fields, then
        submit it) and measure the page's response to them all at once: one idle window as long
        as they take, one frame before and one after. The elements are scrolled into view once,
        for the first; None (nothing done yet but that scroll) when the others do not then lie
        wholly in the viewport: they are measured one by one instead, each in its own view."""
        live, page = self.live, self.live.page
        aims: list[tuple[Mark | None, tuple[float, float] | None]] = []
        include: Box | None = None
        own: Box | None = None  # the control itself, measured apart (see `Response.responded`)
        exclude: list[Box] = []
        targets = [labeling.by_index(action.mark) if action.mark is not None else None for action in actions]
        # The elements up to the first that is not labeled (an ActionFailed, once those before it were aimed at)
        known = next((position for position, (action, target) in enumerate(zip(actions, targets))
                      if action.mark is not None and target is None), len(actions))
        indices = [target.index for target in targets[:known] if target is not None]
        boxes, focused = await self._aim(indices, scroll=targets[0] is not None) if indices else ([], None)
        unaimed = iter(boxes)
        for position, (action, target) in enumerate(zip(actions, targets)):
            if position == known:
                raise ActionFailed(f"there is no element [{action.mark}]")
            point: tuple[float, float] | None = None
            if target is not None:
                aimed = next(unaimed)
                if aimed is None:
                    raise ActionFailed(f"element [{target.index}] is gone or hidden")
                box, inside = aimed
                if position > 0 and not inside:
                    return None
                point = (box.x + box.w / 2, box.y + box.h / 2)
                if target.kind is MarkKind.CANVAS:
                    include = box
                elif target.kind is not MarkKind.CHOICE:
                    own = box.inflated(6)
                    exclude.append(own)
            elif action.kind == "key":
                canvas = self._canvas(labeling)
                include = canvas.box if canvas is not None else None
            aims.append((target, point))
        first_target, first_point = aims[0]
        if first_target is not None:
            # The element that loses focus to the first one restyles itself: not a response either.
            if focused is not None and first_target.kind is not MarkKind.CANVAS:
                exclude.append(focused.inflated(6))
            await self._input(page.mouse.move(*first_point))
        elif actions[0].kind == "key":
            keyed = next((m for m in labeling.marks if m.kind is MarkKind.CANVAS and
                          any(t.startswith("key") for t in m.listeners)), None)
            await live.ask(_KEY_FOCUS, keyed.index if keyed is not None else None)
        elapsed = sum(duration_ms(action) for action in actions)

        idle_start, before, state_before = await self._left_alone(actions[0], elapsed)
        errors_before = len(live.page_errors)
        # The frame before is decoded and thumbnailed while the page acts (it is needed either way).
        prepared = asyncio.ensure_future(off_the_loop(lambda: before.jpeg_b64))

        async with live.settles_navigation():
            for action, (target, point) in zip(actions, aims):
                await self._perform(action, target, point)

        state_after = await live.ask(_OBSERVE, "idle")
        after = Frame(await live.screenshot())
        if after.png == before.png:
            after = before
        new_errors = self._new_errors(errors_before)
        await prepared  # done with `before` in its thread before another one reads it

        def measure() -> Response:
            with stage("diff"):
                response = _response(before, after, idle_start, include, exclude, own, state_before, state_after,
                                     new_errors)
            _ = before.jpeg_b64, after.jpeg_b64  # the step's thumbnails, made here, off the loop
            return response

        return Measured(await off_the_loop(measure), before, after, aims[-1][0])

    def _new_errors(self, since: int) -> list[str]:
        """The page's errors since `since`, net of those it also throws left alone."""
        return [e[:300] for e in self.live.page_errors[since:] if e not in self.idle_errors][:5]

    async def stray_click(self, away: list[int]) -> tuple[tuple[int, int], Response] | None:
        """Click a blank spot of the viewport (on no control, away from the region `away`) and
        measure the page's response as for any click; None when there is no such spot."""
        live = self.live
        spot = await live.ask(_BLANK, [away, STRAY_MARGIN])
        if not (isinstance(spot, list) and len(spot) == 2):
            return None
        point = (int(spot[0]), int(spot[1]))
        await self._input(live.page.mouse.move(*point))
        idle_start, before, state_before = await self._left_alone(Action(kind="click"), SETTLE_MS)
        errors_before = len(live.page_errors)
        async with live.settles_navigation():
            await self._input(live.page.mouse.click(*point))
            await live.advance(SETTLE_MS)
        state_after = await live.ask(_OBSERVE, "idle")
        after = Frame(await live.screenshot())
        new_errors = self._new_errors(errors_before)

        def measure() -> Response:
            with stage("diff"):
                return _stray_response(before, after, idle_start, state_before, state_after, new_errors)

        return point, await off_the_loop(measure)

    async def _left_alone(self, action: Action, elapsed: int) -> tuple[Frame | None, Frame, dict]:
        """Let the page idle for `elapsed` and return the screenshot it started from (None when it
        stayed still: its idle change is 0, see the module), the one it ended on, and the
        observer's state then. A page that moved is measured over a second window."""
        live = self.live
        if action.kind == "wait":  # waiting is the action: there is no idle to compare with
            await live.ask(_OBSERVE, "idle")
            return None, Frame(await live.screenshot()), await live.ask(_OBSERVE, "act")
        start = await live.ask(_OBSERVE, "idle")
        idle_start = Frame(await live.screenshot()) if start["moving"] else None
        await self._idle(elapsed)
        before = Frame(await live.screenshot())
        state = await live.ask(_OBSERVE, "act")
        if idle_start is None and (state["idle"] or state["moving"]):
            await live.ask(_OBSERVE, "idle")
            idle_start = before
            await self._idle(elapsed)
            before = Frame(await live.screenshot())
            state = await live.ask(_OBSERVE, "act")
        return idle_start, before, state

    async def _perform(self, action: Action, target: Mark | None, point: tuple[float, float] | None) -> None:
        live, page = self.live, self.live.page
        if action.kind == "click" and target is not None and target.tag == "select":
            await live.ask(_CHOOSE_NEXT, target.index)
        elif action.kind == "click" and point is not None:
            await self._input(page.mouse.click(*point))
        elif action.kind == "type" and point is not None:
            await self._input(page.mouse.click(*point))
            await self._input(page.keyboard.press("ControlOrMeta+A"))
            await self._input(page.keyboard.type(action.text))
            if action.enter:
                await self._input(page.keyboard.press("Enter"))
        elif action.kind == "key":
            for key in action.keys:
                await self._input(page.keyboard.down(key))
                await live.advance(HOLD_MS)
                await self._input(page.keyboard.up(key))
        if action.kind in ("click", "type", "key"):
            await live.advance(SETTLE_MS)
        elif action.kind == "wait":
            await live.advance(WAIT_MS)
