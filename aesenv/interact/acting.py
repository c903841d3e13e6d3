"""Perform one action on the live page and measure what it changed.

Every action is measured against the page left alone: the page first idles for as long as the
action will take (virtual time, the clock is paused otherwise; through the episode the page's
CSS and Web animations keep that clock too, see `Actor.start`), then the action runs. A page that
stays still while it idles (no DOM change, no animation, nothing that draws by itself: a canvas,
a video, a frame) has changed no pixel either, so its idle change is known without a screenshot;
one that moved is measured over a second idle window of the same length. Pixel change must
clearly exceed the idle change in the affected region (the canvas for game keys; the viewport for
the rest, the control measured apart). Scrolling, hash changes and reloads are read directly, and
so are new page errors, net of those the page also throws left alone (a background timer that
throws on every tick is not a response to the action, nor its failure). DOM mutations (on
nodes that never changed while the page idled) are never evidence by themselves: they only say
where to look for pixels that changed (`Response.dom_shown`).

What an action is credited with is what its activation changed, never the look a control takes
on when it is pointed at and focused. Before the idle window the pointer rests on the control and
the element a click there would focus is focused from our world, ring shown (`_PRIME`): its
hover and focus restyle, whatever CSS draws it (`:hover`, `:focus`, `:focus-visible`,
`:focus-within`, `:has()`, a sibling's rule), and whatever the page's scripts do on hover and
focus, are in the frame before as much as in the frame after, so none of it counts, and no list
of pseudo-classes is needed. Should the action take the focus off that element (a handler that
blurs it or sends focus on), its focus look is put back for the frame after through the protocol
(`CSS.forcePseudoState`: no event fires, no script of the page runs). Transitions are brought to
their end before every frame (the render switched them off; a page that switches them back on
with `!important` would otherwise leave an `:active` restyle half undone in the frame after).

Where the line runs (`_response`):
- A change of the control's own look counts when the frame before does not explain it: a label
  that counts up, a knob that slides, a check mark the page draws, a pressed fill. What the
  browser draws in a form field by itself (typed text, the value a select shows, a native
  check box's mark) is left out: it shows for a dead field as for a live one.
- A thin frame drawn around the control never counts, whoever draws it (the control, a wrapper,
  an overlay), at any offset: changes that enclose the control's centre, leave a hole around it
  and have no stroke thicker than `FRAME_PX` (`_frame_around`), as an outline, ring or border
  does. It reads as the focus indication it imitates. A thicker one is a restyle like a fill,
  and counts.
- Any other change away from the control counts: a panel, a message, a list, another element's
  look, the focus ring of an element the action sent the focus to.

So a menu that CSS opens on focus alone (`:focus-within`) is open in both frames, as a menu that
opens on hover always was: the pointer and the keyboard open it without activating anything,
and a click earns what it adds to that. Limits, as measured: a hover or focus reaction of the
page's scripts that lands after the idle window (a timer started on focus) counts like any
reaction of its scripts; and the forced focus look is visible to a page that polls `:focus` in a
loop while the frame after is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from PIL import Image
from playwright.async_api import Error as PlaywrightError
from scipy import ndimage

from aesenv.interact.labeling import thumbnail
from aesenv.interact.models import NEAR_PX, Action, Box, Labeling, Mark, MarkKind, Response
from aesenv.render.inpage import in_page
from aesenv.render.live import LivePage, PageFault
from aesenv.render.models import rgb_pixels
from aesenv.stages import stage

SETTLE_MS = 600      # virtual time after an action for timers, transitions and frames to run
HOLD_MS = 300        # how long a game key is held down
WAIT_MS = 1500
PIXEL_THRESHOLD = 24  # per-channel difference that counts as a visible change
FRAME_PX = 8         # the thickest band of change around a control read as a frame (see `_frame_around`)
FRAME_JOIN_PX = 4    # changes this close (twice this apart) are one stroke: the dashes of one outline
T = TypeVar("T")

# The actor's page calls read the page only through the natives `N` (aesenv/render/natives.js);
# the marks are the labeled elements label.js keeps in `N.state.marks`.

# Brings every CSS transition to its end (the render switched transitions off; one a page switched
# back on would leave a restyle half way in a frame), before each frame that is compared.
_SETTLE_JS = """(N) => {
  for (const animation of N.animations(N.document) || []) {
    if (!N.isTransition(animation)) continue;
    try { N.finish(animation); } catch (e) { /* one that cannot finish keeps its frame */ }
  }
}"""
_SETTLE = in_page(f"(N) => ({_SETTLE_JS})(N)")
# Moves every running animation on by `ms` of the page's time. Through the episode the document
# timeline is held still (`Actor.start`), so animations run on the page's virtual clock, as its
# scripts do: an idle window and an action window of the same length move them alike, whatever
# the wall clock did meanwhile, and an animation an action starts has played `ms` in the frame after.
_STEP_ANIMATIONS = in_page("""(N, ms) => {
  for (const animation of N.animations(N.document) || []) {
    if (N.playState(animation) !== "running") continue;
    const time = N.currentTime(animation);
    if (time === null || time === undefined) continue;
    try { N.setCurrentTime(animation, time + ms * N.playbackRate(animation)); } catch (e) { /* keeps its frame */ }
  }
}""")
_OBSERVE = in_page("""(N, phase) => {
  const settle = """ + _SETTLE_JS + """;
  let o = N.state.observer, fresh = false;
  if (!o) {
    fresh = true;
    N.setStyle(N.inlineStyle(N.root(N.document)), "scroll-behavior", "auto", "important");
    o = { phase: "idle", idle: new N.WeakSet(), idleCount: 0, actCount: 0, acted: new N.Set() };
    o.take = (records) => {
      for (const r of records) {
        if (o.phase === "idle") { o.idle.add(r.target); o.idleCount++; }
        else if (!o.idle.has(r.target)) { o.actCount++; o.acted.add(r.target); }
      }
    };
    o.obs = N.observer(o.take);
    N.observe(o.obs, N.document, { subtree: true, childList: true, attributes: true, characterData: true });
    N.state.observer = o;
  }
  o.take(N.takeRecords(o.obs));
  settle(N);
  const view = N.viewport();
  // What changes pixels without a DOM mutation: animations and transitions under way, and
  // elements that draw by themselves (SMIL animations and GIFs included).
  const moving = N.animations(N.document).length > 0 || N.all(N.document,
    "canvas, video, iframe, frame, embed, object, marquee, animate, animateTransform, animateMotion, set, " +
    "img[src*='.gif' i], img[src^='data:image/gif' i], img[src*='.webp' i], img[src*='.apng' i]").length > 0;
  // Whether the element primed for this action (`_PRIME`) has lost the focus look it had in the frame before.
  const primed = N.state.primed, doc = N.document;
  const lost = !!primed && N.isConnected(primed) && (N.activeElement(doc) !== primed ||
    (N.state.primedVisible === true && !N.matches(primed, ":focus-visible")));
  // Where the nodes the action changed are now (an element, a text's parent): where a DOM change
  // would show, to be looked for in the pixels (`Response.dom_shown`).
  const acted = [];
  for (const node of o.acted) {
    if (acted.length >= 40) break;
    const el = N.nodeType(node) === 1 ? node : N.parent(node);
    if (!el || !N.isConnected(el)) continue;
    const r = N.box(el);
    if (r.width >= 1 && r.height >= 1) acted.push([r.left, r.top, r.left + r.width, r.top + r.height]);
  }
  const out = { fresh, idle: o.idleCount, act: o.actCount, hash: N.hash(), x: view.scrollX, y: view.scrollY, moving,
    lost, primed_visible: N.state.primedVisible === true, acted };
  o.phase = phase; o.idleCount = 0; o.actCount = 0; o.acted = new N.Set();
  return out;
}""")
# The boxes of the marks `indices` (null for one gone or hidden), each with whether it lies wholly
# in the viewport, the first scrolled into view first when `scroll` (and whether the page
# scrolled): what an action aims with, in one call.
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
  return { boxes, scrolled: to.scrollX !== from.scrollX || to.scrollY !== from.scrollY };
}""")
# Puts the page in the pointer and focus state an action at `point` reaches before it activates
# anything: the element a click there would focus (the first focusable one from the element at
# the point up, a label's control first) is focused with its focus ring shown; with nothing to
# focus there, the focus leaves whatever had it (as a click on plain content takes it). Focus
# moves through the page's own events, so what its scripts do on focus is part of that state too.
# The element is kept (`N.state.primed`) for the frame after (`_OBSERVE`'s `lost`). `point` null:
# nothing primed (key presses focus their own target, `_KEY_FOCUS`).
_PRIME = in_page("""(N, point) => {
  const doc = N.document, body = N.body(doc), root = N.root(doc);
  N.state.primed = null;
  N.state.primedVisible = false;
  if (point === null) return false;
  const active = () => N.activeElement(doc);
  const keep = (el) => {
    if (!el || el === body || el === root) return false;
    N.state.primed = el;
    N.state.primedVisible = N.matches(el, ":focus-visible");
    return true;
  };
  for (let el = N.elementFromPoint(doc, point[0], point[1]); el && el !== body && el !== root; el = N.parent(el)) {
    const control = N.tag(el).toLowerCase() === "label" ? N.prop(el, "control") : null;
    for (const candidate of control ? [control, el] : [el]) {
      const was = active();
      if (was === candidate) return keep(candidate);
      N.focus(candidate, { preventScroll: true, focusVisible: true });
      if (active() !== was) return keep(active());  // it took the focus (or the page sent it on)
    }
  }
  const was = active();
  if (was && was !== body && was !== root) N.blur(was);
  return false;
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
  N.state.primed = null;
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
_FORCED = "aesenv-forced"  # the protocol object group of the element whose focus look is forced


def _draws_its_own_state(mark: Mark) -> bool:
    """A native choice (a box to check, a radio, a range, a select): the browser draws its new
    state (a check mark, the value shown) for any such control, dead or alive, as it draws typed
    text; what the page does with it shows elsewhere. A page's own control drawn from such a state
    (a label styled as a switch) is measured as a control."""
    return mark.tag == "select" or (mark.tag == "input" and mark.kind is MarkKind.CHOICE)


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


def _boxes_mask(shape: tuple[int, int], boxes: list[list[float]]) -> np.ndarray:
    """The pixels inside any of `boxes` ([x0, y0, x1, y1], viewport)."""
    height, width = shape
    mask = np.zeros(shape, dtype=bool)
    for x0, y0, x1, y1 in boxes:
        mask[max(0, int(y0)):min(height, int(y1) + 1), max(0, int(x0)):min(width, int(x1) + 1)] = True
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


def _frame_around(change: np.ndarray, own: Box) -> np.ndarray:
    """The changed pixels that only draw a frame around the control: a group of changes (pixels
    up to `2 * FRAME_JOIN_PX` apart are one group, so the dashes of one outline, or two rings
    drawn one inside the other, are one) that encloses the control's centre in a hole at least a
    quarter of the control's size, with no stroke thicker than `FRAME_PX`. An outline, a ring, a
    border or an inset line, at any offset, drawn by the control or by anything around it; not a
    label, a check mark or a knob (they cover the centre or leave no such hole), nor a fill, a
    thick ring or a changed picture around the control (strokes too thick)."""
    frame = np.zeros_like(change)
    rows, cols = np.flatnonzero(change.any(axis=1)), np.flatnonzero(change.any(axis=0))
    if not len(rows):
        return frame
    height, width = change.shape
    # Only the part of the frame that holds the changes is worked on; the centre must lie in it.
    y0, y1 = max(0, rows[0] - FRAME_JOIN_PX), min(height, rows[-1] + 1 + FRAME_JOIN_PX)
    x0, x1 = max(0, cols[0] - FRAME_JOIN_PX), min(width, cols[-1] + 1 + FRAME_JOIN_PX)
    cy, cx = int(own.y + own.h / 2) - y0, int(own.x + own.w / 2) - x0
    if not (0 <= cy < y1 - y0 and 0 <= cx < x1 - x0):
        return frame
    sub = change[y0:y1, x0:x1]
    square = np.ones((3, 3), dtype=bool)
    labels, _ = ndimage.label(ndimage.binary_dilation(sub, structure=square, iterations=FRAME_JOIN_PX))
    least_hole = 0.25 * own.w * own.h
    thick = np.ones((2 * (FRAME_PX // 2) + 1,) * 2, dtype=bool)  # what survives it is thicker than FRAME_PX
    for number, found in enumerate(ndimage.find_objects(labels), 1):
        if found is None:
            continue
        ys, xs = found
        if not (ys.start <= cy < ys.stop and xs.start <= cx < xs.stop):
            continue  # a group that does not surround the control's centre is no frame of it
        group = labels[found] == number
        at = (cy - ys.start, cx - xs.start)
        holes = ndimage.binary_fill_holes(group) & ~group
        if not holes[at]:
            continue  # it covers the centre, or leaves it open: a label, a knob, a panel
        hole_labels, _ = ndimage.label(holes)
        if np.count_nonzero(hole_labels == hole_labels[at]) < least_hole:
            continue  # a glyph's counter, not a hole the control sits in
        inked = group & sub[found]
        if ndimage.binary_erosion(inked, structure=thick).any():
            continue  # a stroke thicker than a frame's: a fill, a thick ring, a picture
        frame[y0:y1, x0:x1][found] |= inked
    return frame


def _response(before: Frame, after: Frame, idle_start: Frame | None, include: Box | None, exclude: list[Box],
              own: Box | None, state_before: dict, state_after: dict, new_errors: list[str]) -> Response:
    """What an action changed, from the frames and the observer's states around it: on the
    control itself (`own`, its box) and in the rest of the measured region (`include`, or the
    viewport, less `exclude`: the fields filled in), a thin frame around the control counted
    in neither (`_frame_around`)."""
    change = _change_map(before, after)
    shape = before.shape
    measured = _region_mask(shape, include, exclude)
    if own is None:
        own_mask, mask = None, measured
    else:
        own_mask = measured & _region_mask(shape, own, [])
        mask = measured & ~own_mask
    frame = None
    if change is not None and own is not None:
        frame = _frame_around(change & measured, own)
        change = change & ~frame
    idle = None if idle_start is None else _change_map(idle_start, before)
    near = mask & _region_mask(shape, own.inflated(NEAR_PX), []) if own is not None else mask
    acted = measured & _boxes_mask(shape, state_after.get("acted") or [])
    return Response(
        mutations=0 if state_after["fresh"] else state_after["act"],
        idle_mutations=state_before["idle"],
        changed_px=_count(change, mask),
        idle_changed_px=_count(idle, mask),
        own_changed_px=_count(change, own_mask) if own_mask is not None else 0,
        own_idle_px=_count(idle, own_mask) if own_mask is not None else 0,
        own_px=int(np.count_nonzero(own_mask)) if own_mask is not None else 0,
        frame_px=int(np.count_nonzero(frame)) if frame is not None else 0,
        dom_changed_px=_count(change, acted),
        dom_idle_px=_count(idle, acted),
        near_changed_px=_count(change, near),
        change_box=_bounds(change, mask),
        control_box=[int(own.x), int(own.y), int(own.x + own.w), int(own.y + own.h)] if own is not None else None,
        region_px=int(np.count_nonzero(mask)),
        region=("canvas" if include is not None else "viewport minus the control" if own is not None
                else "viewport minus the fields filled in" if exclude else "viewport"),
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
    idle = None if idle_start is None else _change_map(idle_start, before)
    acted = _boxes_mask(before.shape, state_after.get("acted") or [])
    return Response(
        mutations=0 if state_after["fresh"] else state_after["act"], idle_mutations=state_before["idle"],
        changed_px=_count(change, mask), idle_changed_px=_count(idle, mask),
        dom_changed_px=_count(change, acted), dom_idle_px=_count(idle, acted),
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
        self._styles_on = False  # the protocol's DOM and CSS domains (see `_frame_after`)
        self._timeline_held = False  # the document timeline held still (see `start`)
        self._windows = 0  # pairs of windows compared so far (see `_left_alone`)

    async def _input(self, call: Awaitable[None]) -> None:
        """A mouse or keyboard call on the page, bounded like every call on it."""
        with stage("input"):
            await self.live.bounded(call)

    async def _advance(self, ms: int) -> None:
        """Let `ms` of the page's time pass: its clock (timers, frames) and its animations."""
        await self.live.advance(ms)
        if self._timeline_held:
            await self.live.ask(_STEP_ANIMATIONS, ms)

    async def _idle(self, ms: int) -> None:
        seen = len(self.live.page_errors)
        await self._advance(ms)
        self.idle_errors.update(self.live.page_errors[seen:])

    async def start(self, idle_ms: int = 1200) -> None:
        """Hold the page's animations to its clock (`_STEP_ANIMATIONS`), install the mutation
        observer and let the page idle, so background changes (clocks, carousels, game loops, a
        timer that keeps throwing) are known before the first action."""
        # Without `Animation.enable`: the rate applies as well, and no event comes for every animation.
        await self.live.bounded(self.live.cdp.send("Animation.setPlaybackRate", {"playbackRate": 0}))
        self._timeline_held = True
        await self.live.ask(_OBSERVE, "idle")
        await self._idle(idle_ms)

    async def stop(self) -> None:
        """Give the page's animations back their own timeline (other channels share the page).
        A page that is gone needs nothing back."""
        if not self._timeline_held:
            return
        self._timeline_held = False
        with contextlib.suppress(PlaywrightError, PageFault):
            await self.live.bounded(self.live.cdp.send("Animation.setPlaybackRate", {"playbackRate": 1}))

    async def _aim(self, indices: list[int], scroll: bool) -> list[tuple[Box, bool] | None]:
        """Each mark's box (None: gone or hidden) with whether it lies wholly in the viewport,
        read in one call. With `scroll` the first mark is scrolled into view first, and a page
        that scrolled gets a moment for its scroll handlers (a sticky header, lazy content)
        before they are read again."""
        found = await self.live.ask(_AIM, [indices, scroll])
        if scroll and found["boxes"][0] is not None and found["scrolled"]:
            await self._advance(150)
            found = await self.live.ask(_AIM, [indices, False])
        boxes: list[tuple[Box, bool] | None] = []
        for box in found["boxes"]:
            inside = bool(box.pop("inside", False)) if box is not None else False
            boxes.append(None if box is None else (Box.model_validate(box), inside))
        return boxes

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
        boxes = await self._aim(indices, scroll=targets[0] is not None) if indices else []
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
                elif action.kind == "type" or _draws_its_own_state(target):
                    exclude.append(box.inflated(6))  # the browser's drawing of what was typed or chosen
                else:
                    own = box  # the control clicked, measured apart (the last, when several)
            elif action.kind == "key":
                canvas = self._canvas(labeling)
                include = canvas.box if canvas is not None else None
            aims.append((target, point))
        # The pointer rests where the interaction ends (on the control it activates last) and that
        # control is focused, as a click focuses it, before the page is left alone (see the module).
        rest = next((point for _, point in reversed(aims) if point is not None), None)
        errors_before = len(live.page_errors)  # what the page throws on hover and focus is the action's too
        if rest is not None:
            await self._input(page.mouse.move(*rest))
            await live.ask(_PRIME, list(rest))
        elif actions[0].kind == "key":
            keyed = next((m for m in labeling.marks if m.kind is MarkKind.CANVAS and
                          any(t.startswith("key") for t in m.listeners)), None)
            await live.ask(_KEY_FOCUS, keyed.index if keyed is not None else None)
        else:
            await live.ask(_PRIME, None)
        elapsed = sum(duration_ms(action) for action in actions)

        idle_start, before, state_before = await self._left_alone(actions[0], elapsed)
        # The frame before is decoded and thumbnailed while the page acts (it is needed either way).
        prepared = asyncio.ensure_future(off_the_loop(lambda: before.jpeg_b64))

        async with live.settles_navigation():
            for action, (target, point) in zip(actions, aims):
                await self._perform(action, target, point)

        state_after = await live.ask(_OBSERVE, "idle")
        after = await self._frame_after(state_after)
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
        await live.ask(_PRIME, list(point))
        idle_start, before, state_before = await self._left_alone(Action(kind="click"), SETTLE_MS)
        errors_before = len(live.page_errors)
        async with live.settles_navigation():
            await self._input(live.page.mouse.click(*point))
            await self._advance(SETTLE_MS)
        state_after = await live.ask(_OBSERVE, "idle")
        after = await self._frame_after(state_after)
        new_errors = self._new_errors(errors_before)

        def measure() -> Response:
            with stage("diff"):
                return _stray_response(before, after, idle_start, state_before, state_after, new_errors)

        return point, await off_the_loop(measure)

    async def _left_alone(self, action: Action, elapsed: int) -> tuple[Frame | None, Frame, dict]:
        """Let the page idle for `elapsed` and return the screenshot it started from (None when it
        stayed still: its idle change is 0, see the module), the one it ended on, and the
        observer's state then. A page that moved is measured over a second idle window. Each
        frame is taken right after the observer's call, which ends the transitions under way. The
        page's draws are left started afresh for the action that follows (`_same_luck`)."""
        live = self.live
        if action.kind == "wait":  # waiting is the action: there is no idle to compare with
            await live.ask(_OBSERVE, "idle")
            state = await live.ask(_OBSERVE, "act")
            before = Frame(await live.screenshot())
            await self._same_luck()
            return None, before, state
        self._windows += 1
        start = await live.ask(_OBSERVE, "idle")
        idle_start = Frame(await live.screenshot()) if start["moving"] else None
        await self._same_luck()
        await self._idle(elapsed)
        state = await live.ask(_OBSERVE, "act")
        before = Frame(await live.screenshot())
        if idle_start is None and (state["idle"] or state["moving"]):
            await live.ask(_OBSERVE, "idle")
            idle_start = before
            await self._same_luck()
            await self._idle(elapsed)
            state = await live.ask(_OBSERVE, "act")
            before = Frame(await live.screenshot())
        await self._same_luck()
        return idle_start, before, state

    async def _same_luck(self) -> None:
        """Start the page's random draws afresh, as at the start of this pair's other window: the
        window left alone and the window acted in draw the same numbers (a game's spawns, a
        shuffle), so what differs between them is the action, not the luck of the draw, and a
        page cannot choose its luck by drawing some numbers first."""
        await self.live.reseed(self._windows)

    async def _frame_after(self, state_after: dict) -> Frame:
        """The frame after an action. When the action took the focus look off the element primed
        for it (`_OBSERVE`'s `lost`), that look is forced back on it for this frame only, so the
        frame differs from the one before by what the action did and not by a focus ring gone."""
        live = self.live
        if not state_after.get("lost"):
            return Frame(await live.screenshot())
        cdp = live.cdp
        if not self._styles_on:  # the CSS domain, which forces states, is switched on when first needed
            await live.bounded(cdp.send("DOM.enable"))
            await live.bounded(cdp.send("CSS.enable"))
            self._styles_on = True
        await live.bounded(cdp.send("DOM.getDocument", {"depth": 0}))
        node: int | None = None
        try:
            primed = await live.bounded(live.world.handle("(N) => N.state.primed || null", _FORCED))
            if primed is not None:
                node = (await live.bounded(cdp.send("DOM.requestNode", {"objectId": primed})))["nodeId"]
                states = ["focus", "focus-visible"] if state_after.get("primed_visible") else ["focus"]
                await live.bounded(cdp.send("CSS.forcePseudoState", {"nodeId": node, "forcedPseudoClasses": states}))
                await live.ask(_SETTLE)
            return Frame(await live.screenshot())
        finally:
            if node is not None:
                await live.bounded(cdp.send("CSS.forcePseudoState", {"nodeId": node, "forcedPseudoClasses": []}))
            await live.bounded(cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _FORCED}))

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
                await self._advance(HOLD_MS)
                await self._input(page.keyboard.up(key))
        if action.kind in ("click", "type", "key"):
            await self._advance(SETTLE_MS)
        elif action.kind == "wait":
            await self._advance(WAIT_MS)
