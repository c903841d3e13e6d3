"""Content counts only where taking it away changes the captured pixels.

"Shown" cannot be decided by reading the CSS properties we thought of: an artifact written to
raise its own score finds the property we did not read (a mask, an SVG filter, a blend mode, a
cover that ignores the pointer, its own parent's background). So it is decided in the captured
image, counterfactually: the content is taken away from our isolated world (the page half,
`counterfactual.js`), the page is captured again, and the content is credited only where its own
boxes' pixels changed, legibly. Text is judged character by character where a clip or a mask
takes part of it; what the pixels show of it must be large enough and contrast enough with what
is behind it (the pixels on both captures say both colours) to be read.

Items whose boxes (grown by how far their paint may reach) overlap are never taken away together,
so one item's ink is never credited to another; an item whose paint may land anywhere (an SVG
filter, a reflection) is measured alone; a group whose capture changed outside its items' reach
is split and measured again, within a budget of captures (what the budget leaves is unmeasured,
and unmeasured content is not credited).

While it measures, the page is frozen (the browser's page lifecycle: no task of the page's runs,
so nothing it does can answer our taking-away), entered and left with its scripts switched off so
no `freeze`/`resume` handler of its runs either. Two captures of one frozen page differ only by
what was taken away.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import math
import secrets
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import numpy as np

from aesenv.render.inpage import World, in_page
from aesenv.render.models import decode_rgb

# A pixel changed when some channel moved by more than this (two captures of an unchanged frozen
# page are identical; antialiasing next to a removed glyph moves a few levels).
CHANGE = 12
# Text must show at least this many changed pixels per character it carries (calibrated on
# common faces: a 9-px line box, the smallest legible one (`seen.js`), leaves 9-12 per character
# in sans and serif faces at regular weight; text scaled or squeezed below legibility leaves 1-4).
MIN_INK_PER_CHAR = 5.0
MIN_INK_PIXELS = 3
# A character of a run judged one by one shows when this share of its box changed (a full stop
# at 16 px is ~5% of its box).
MIN_CHAR_SHARE = 0.025
# Perceptual contrast of what changed, APCA (Accessible Perceptual Contrast Algorithm, APCA-W3
# 0.1.9, the contrast method drafted for WCAG 3): its guidance sets Lc 15 as the point below which
# text or marks may be invisible to many readers, so content below it is not shown.
MIN_APCA_LC = 15.0
# A stretch of a text line this many line heights long with no change inside a changed run means
# part of it is not shown: its characters are then judged one by one.
GAP_LINES = 1.0
# A picture (an image, a canvas, a field) shows when this share of its box changed, or at least
# `MIN_ELEMENT_PIXELS` of it for a small one.
MIN_ELEMENT_SHARE = 0.002
MIN_ELEMENT_PIXELS = 16
# Captures one measurement may take (groups, and their splits when a group's capture changed
# beyond its items' reach).
MAX_CAPTURES = 8
# How far past an item's reach a change still counts as the item's own overhang (glyphs whose ink
# leaves their font's line box: accents, italics, a fallback face's tall ascenders), not ink that
# landed elsewhere. A change beyond that this large (pixels, and share of what the group changed)
# is ink landing away from its boxes (or, against the render's capture, a page that moved since),
# and the group is split (or measured against fresh captures); a smaller one is the browser
# repainting neighbouring text a few levels differently (a collapsed table border a pixel over, a
# bold run after a run made transparent).
SPILL_SLACK = 8
SPILL_PIXELS = 256
SPILL_SHARE = 0.10

_HIDE = in_page("(N, arg) => N.cf.hide(arg)")
_RESTORE = in_page("(N) => N.cf.restore()")
_CHARS = in_page("(N, requests) => N.cf.chars(requests)")
_RECORD = in_page("(N, verdicts) => N.cf.record(verdicts)")


@dataclasses.dataclass
class Item:
    """One thing taken away together: an element's own text (`text`), or an element whole."""

    id: int
    kind: str
    rects: list[tuple[float, float, float, float]]  # x0, y0, x1, y1, page pixels
    margin: float = 0.0  # how far its paint may reach past its boxes (shadows, strokes)
    wide: bool = False

    @property
    def reach(self) -> list[tuple[float, float, float, float]]:
        m = self.margin
        return [(x0 - m, y0 - m, x1 + m, y1 + m) for x0, y0, x1, y1 in self.rects]


@dataclasses.dataclass
class Taken:
    """What one item's taking-away did: the pixels before and after in its group's clip, and
    where they differ (computed once per group, shared by its items)."""

    before: np.ndarray
    after: np.ndarray
    origin: tuple[int, int]  # the clip's top-left in page pixels
    scale: float
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.mask is None:
            self.mask = changed(self.before, self.after)


@dataclasses.dataclass
class Outcome:
    """Per item, the evidence of its taking-away (absent: unmeasured), and notes."""

    taken: dict[int, Taken] = dataclasses.field(default_factory=dict)
    unmeasured: set[int] = dataclasses.field(default_factory=set)
    captures: int = 0
    notes: list[str] = dataclasses.field(default_factory=list)


TOUCH = 1.0  # px two boxes may share at an edge without sharing pixels (a word beside a link)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] - TOUCH and b[0] < a[2] - TOUCH and a[1] < b[3] - TOUCH and b[1] < a[3] - TOUCH


class _Grid:
    """Boxes (x0, y0, x1, y1) filed by the cells they cover, to ask which new boxes touch them."""

    def __init__(self, cell: int = 64) -> None:
        self.cell, self.cells = cell, {}

    def _cells(self, boxes: Sequence[tuple[float, float, float, float]]) -> set[tuple[int, int]]:
        c = self.cell
        return {(cx, cy) for x0, y0, x1, y1 in boxes
                for cx in range(int(x0 // c), int(x1 // c) + 1) for cy in range(int(y0 // c), int(y1 // c) + 1)}

    def touches(self, boxes: Sequence[tuple[float, float, float, float]]) -> bool:
        return any(_overlaps(r, other) for c in self._cells(boxes) for other in self.cells.get(c, ()) for r in boxes)

    def add(self, boxes: Sequence[tuple[float, float, float, float]]) -> None:
        for c in self._cells(boxes):
            self.cells.setdefault(c, []).extend(boxes)


def plan(items: Sequence[Item]) -> list[list[Item]]:
    """Groups of items no two of which may share pixels (their reaches do not overlap), fewest
    first-fit in reading order; an item whose paint may land anywhere is a group of its own."""
    groups: list[tuple[list[Item], _Grid]] = []
    singles: list[list[Item]] = []
    for item in sorted(items, key=lambda i: (min((r[1] for r in i.rects), default=0), min((r[0] for r in i.rects), default=0))):
        if item.wide:
            singles.append([item])
            continue
        reach = item.reach
        for group, grid in groups:
            if not grid.touches(reach):
                break
        else:
            group, grid = [], _Grid()
            groups.append((group, grid))
        group.append(item)
        grid.add(reach)
    return [group for group, _ in groups] + singles


def apart(candidates: Sequence[Item], items: Sequence[Item]) -> list[Item]:
    """The candidates whose paint can share no pixel with any of `items`' (nor land anywhere)."""
    grid = _Grid()
    for item in items:
        grid.add(item.reach)
    return [c for c in candidates if not c.wide and not grid.touches(c.reach)]


@contextlib.asynccontextmanager
async def frozen(cdp: Any) -> AsyncIterator[None]:
    """The page frozen (no task of its own runs) while the block runs; its scripts are off while
    it freezes and resumes, so no handler of its sees either."""

    async def switch(state: str) -> None:
        await cdp.send("Emulation.setScriptExecutionDisabled", {"value": True})
        try:
            await cdp.send("Page.setWebLifecycleState", {"state": state})
        finally:
            await cdp.send("Emulation.setScriptExecutionDisabled", {"value": False})

    await switch("frozen")
    try:
        yield
    finally:
        await switch("active")


RING = 6  # px around a box that stand for what surrounds it
# Rows of nothing to take away between two bands that are worth a capture each: on this machine a
# full-width capture costs ~37 ms plus ~19 ms per 1,000 rows (and its decoding ~5 ms per 1,000).
BAND_GAP = 1500


def _bands(group: Iterable[Item], width: int, height: int) -> list[tuple[tuple[int, int, int, int], list[Item]]]:
    """The bands of the page a group's captures take, each with the items in it: the page's whole
    width (a clip that starts mid-row rasterises fractional boxes a pixel apart from the full
    capture), the rows its items may reach, rows far apart captured apart (a capture costs what
    its area costs)."""
    spans = []
    for item in group:
        rows = [(r[1], r[3]) for r in item.reach if r[2] > 0 and r[0] < width and r[3] > 0 and r[1] < height]
        if rows:  # (with a ring of rows around: what surrounds a box says whether its paint shows)
            spans.append((max(0, math.floor(min(a for a, _ in rows)) - RING), min(height, math.ceil(max(b for _, b in rows)) + RING), item))
    spans.sort(key=lambda s: s[0])
    bands: list[list[Any]] = []
    for y0, y1, item in spans:
        if bands and y0 <= bands[-1][1] + BAND_GAP:
            bands[-1][1] = max(bands[-1][1], y1)
            bands[-1][2].append(item)
        else:
            bands.append([y0, y1, [item]])
    return [((0, y0, width, y1), items) for y0, y1, items in bands if y1 - y0 >= 1 and width >= 1]


async def view(cdp: Any) -> tuple[float, float, float, float] | None:
    """The part of the page the view shows (page pixels: x0, y0, x1, y1), or None when the view is
    zoomed or the browser does not say."""
    try:
        metrics = await cdp.send("Page.getLayoutMetrics")
        v = metrics["cssVisualViewport"]
        if v.get("scale", 1) != 1 or v.get("zoom", 1) != 1:
            return None
        x, y = float(v["pageX"]), float(v["pageY"])
        return x, y, x + float(v["clientWidth"]), y + float(v["clientHeight"])
    except Exception:  # noqa: BLE001 - without the view's place every capture reaches beyond it
        return None


async def capture(cdp: Any, clip: tuple[int, int, int, int],
                  shown: tuple[float, float, float, float] | None = None) -> np.ndarray | None:
    """The page's pixels in `clip` (page pixels), as the render's full-page capture has them. A
    clip inside the part of the page the view shows (`shown`, from `view`) is captured as the view
    stands: the same pixels (the layout is the same either way: a capture beyond the view keeps
    the view's size for `vh`, media queries and fixed boxes), without the capture beyond the view's
    resize of the frame, which lays a large document out twice (a 100,000-cell table: 1.2-1.8 s ->
    0.2 s a capture). A capture that differs from the render's anyway spills, and is measured
    against fresh captures, taken the same way."""
    x0, y0, x1, y1 = clip
    inside = shown is not None and shown[0] <= x0 and shown[1] <= y0 and x1 <= shown[2] and y1 <= shown[3]
    shot = await cdp.send("Page.captureScreenshot", {
        "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": not inside, "fromSurface": True,
        "clip": {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0, "scale": 1}})
    return decode_rgb(base64.b64decode(shot["data"])) if isinstance(shot, dict) and "data" in shot else None


def changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Where the two captures differ beyond antialiasing noise (bool, per pixel). Rows with no
    byte changed are found first (most of a page's rows), and only the others compared by
    channel (a reduction across the colour axis costs ten times more)."""
    out = np.zeros(before.shape[:2], dtype=bool)
    rows = np.flatnonzero((before != after).reshape(before.shape[0], -1).any(axis=1))
    if len(rows):
        a, b = before[rows], after[rows]
        delta = np.maximum(a, b)
        delta -= np.minimum(a, b)
        out[rows] = (delta[..., 0] > CHANGE) | (delta[..., 1] > CHANGE) | (delta[..., 2] > CHANGE)
    return out


def _spilled(mask: np.ndarray, group: Sequence[Item], origin: tuple[int, int], scale: float) -> bool:
    """Whether the capture changed outside every item's reach (and its slack) by more than
    repainting noise: some ink landed where its boxes do not say."""
    if not mask.any():
        return False
    inside = np.zeros_like(mask)
    h, w = mask.shape
    k = SPILL_SLACK
    for item in group:
        for x0, y0, x1, y1 in item.reach:
            a0, b0 = max(0, int((x0 - k - origin[0]) * scale)), max(0, int((y0 - k - origin[1]) * scale))
            a1, b1 = min(w, math.ceil((x1 + k - origin[0]) * scale)), min(h, math.ceil((y1 + k - origin[1]) * scale))
            if a1 > a0 and b1 > b0:
                inside[b0:b1, a0:a1] = True
    outside = int((mask & ~inside).sum())
    return outside > max(SPILL_PIXELS, SPILL_SHARE * int(mask.sum()))


async def take_away(cdp: Any, world: World, items: Sequence[Item], size: tuple[int, int],
                    base: np.ndarray | None = None, scale: float = 1.0,
                    max_captures: int = MAX_CAPTURES, freeze: bool = True) -> Outcome:
    """Take each group of `items` away in turn and keep, per item, the pixels of its band before
    and after. `size` is the captured area (width, height) in page pixels; `base` the render's
    capture of it (None: each band is captured before as well). The page is frozen throughout and
    left as it was; no other call of ours may use it meanwhile (`World.turn`). `freeze=False`:
    the caller holds the page frozen already."""
    out = Outcome()
    width, height = size
    queue = plan(items)
    hidden = False  # (the next group's hiding puts the last group back first)
    async with frozen(cdp) if freeze else contextlib.nullcontext():
        try:
            while queue:
                group = queue.pop(0)
                bands = _bands(group, width, height)
                placed = {i.id for _, members in bands for i in members}
                out.unmeasured.update(i.id for i in group if i.id not in placed)
                if not bands:
                    continue
                needed = len(bands) * (1 if base is not None else 2)
                if out.captures + needed > max_captures:
                    out.unmeasured.update(placed)
                    out.notes.append(f"counterfactual: capture budget spent; {len(placed)} items left unmeasured")
                    continue
                if hidden and base is None:
                    await world.ask(_RESTORE)
                    hidden = False
                befores = []
                shown = await view(cdp) if base is None else None
                for clip, _ in bands:
                    if base is not None:
                        x0, y0, x1, y1 = (round(v * scale) for v in clip)
                        befores.append(base[y0:y1, x0:x1])
                    else:
                        befores.append(await capture(cdp, clip, shown))
                        out.captures += 1
                hidden = True  # (before the call: one cut off midway has hidden some)
                answer = await world.ask(_HIDE, {"ids": [i.id for i in group], "nonce": secrets.token_hex(6)})
                afters = []
                shown = await view(cdp)  # (where the view stands once the group is taken away)
                for clip, _ in bands:
                    afters.append(await capture(cdp, clip, shown))
                    out.captures += 1
                failed = set(answer.get("unmeasurable", [])) if isinstance(answer, dict) else set(placed)
                taken, spilled = [], False
                for (clip, members), before, after in zip(bands, befores, afters):
                    if before is None or after is None or before.shape != after.shape:
                        failed.update(i.id for i in members)
                        continue
                    band_scale = after.shape[1] / (clip[2] - clip[0])
                    origin, mask = (clip[0], clip[1]), changed(before, after)
                    spilled = spilled or _spilled(mask, members, origin, band_scale)
                    taken.extend((i, Taken(before, after, origin, band_scale, mask)) for i in members)
                if spilled and base is not None:
                    # The page's pixels moved since its capture (a layout that settled during it):
                    # from here on each band is captured before it is taken away.
                    base = None
                    queue.insert(0, group)
                    out.notes.append("counterfactual: the page changed after its capture; measured against fresh captures")
                    continue
                if spilled and len(group) > 1:
                    half = len(group) // 2
                    queue[:0] = [group[:half], group[half:]]
                    out.notes.append("counterfactual: a group's change spilled past its items; split")
                    continue
                for item, evidence in taken:
                    if item.id in failed:
                        out.unmeasured.add(item.id)
                    else:
                        out.taken[item.id] = evidence
        finally:
            if hidden:
                with contextlib.suppress(Exception):
                    await world.ask(_RESTORE)
    return out


# --- reading the evidence ------------------------------------------------------------------

# Each 8-bit channel value's linear light, as `_srgb_y` computes it (the same float for every
# value: a look-up instead of a power per pixel, which was most of judging a large run's contrast).
_LINEAR = (np.arange(256, dtype=np.float64) / 255.0) ** 2.4


def _srgb_y(rgb: np.ndarray) -> np.ndarray:
    """APCA's screen luminance of sRGB colours (..., 3) in 0-255."""
    c = _LINEAR[rgb] if rgb.dtype == np.uint8 else (rgb.astype(np.float64) / 255.0) ** 2.4
    return 0.2126729 * c[..., 0] + 0.7151522 * c[..., 1] + 0.0721750 * c[..., 2]


def apca(text: np.ndarray, background: np.ndarray) -> float:
    """APCA-W3 (0.1.9) lightness contrast Lc of a text colour on a background colour (sRGB 0-255):
    positive for dark on light, negative for light on dark, 0 below its noise floor."""
    ys = []
    for colour in (text, background):
        y = float(_srgb_y(np.asarray(colour)))
        ys.append(y + (0.022 - y) ** 1.414 if y < 0.022 else y)
    y_text, y_bg = ys
    if abs(y_bg - y_text) < 0.0005:
        return 0.0
    if y_bg > y_text:
        sapc = (y_bg ** 0.56 - y_text ** 0.57) * 1.14
        return 0.0 if sapc < 0.1 else (sapc - 0.027) * 100
    sapc = (y_bg ** 0.65 - y_text ** 0.62) * 1.14
    return 0.0 if sapc > -0.1 else (sapc + 0.027) * 100


def _region(taken: Taken, rect: tuple[float, float, float, float]) -> tuple[slice, slice] | None:
    x0, y0, x1, y1 = rect
    h, w = taken.before.shape[:2]
    s = taken.scale
    a0, b0 = max(0, math.floor((x0 - taken.origin[0]) * s)), max(0, math.floor((y0 - taken.origin[1]) * s))
    a1, b1 = min(w, math.ceil((x1 - taken.origin[0]) * s)), min(h, math.ceil((y1 - taken.origin[1]) * s))
    if a1 <= a0 or b1 <= b0:
        return None
    return slice(b0, b1), slice(a0, a1)


@dataclasses.dataclass
class TextVerdict:
    """How one run of text came out: the [start, end) stretches of its characters shown (relative
    to the run), and why not where it is not."""

    stretches: list[tuple[int, int]]
    ink_per_char: float = 0.0
    lc: float = 0.0
    why: str = ""


def _ink(taken: Taken, rects: Sequence[tuple[float, float, float, float]]) -> tuple[int, list[np.ndarray], list[np.ndarray]]:
    count, inks, backs = 0, [], []
    for rect in rects:
        region = _region(taken, rect)
        if region is None:
            continue
        mask = taken.mask[region]
        hits = int(mask.sum())
        if hits:
            count += hits
            inks.append(taken.before[region][mask])
            backs.append(taken.after[region][mask])
    return count, inks, backs


def _contrast(inks: list[np.ndarray], backs: list[np.ndarray]) -> float:
    """The contrast of what changed: at the pixels that changed most in lightness (the glyphs'
    cores, not their antialiased edges), the colour before (ink) against the colour after (what
    is behind it)."""
    ink, back = np.concatenate(inks), np.concatenate(backs)
    delta = np.abs(_srgb_y(ink) - _srgb_y(back))
    keep = delta >= np.quantile(delta, 0.75)
    return apca(np.median(ink[keep], axis=0), np.median(back[keep], axis=0))


def _glyphs(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def _gaps(taken: Taken, rects: Sequence[tuple[float, float, float, float]]) -> bool:
    """Whether some line of the run has a long stretch with no change inside (part of it is not
    shown), or a line with none at all."""
    for rect in rects:
        region = _region(taken, rect)
        if region is None:
            return True
        mask = taken.mask[region]
        h, w = mask.shape
        if w < h:  # a vertical or rotated line: judged as a whole
            if not mask.any():
                return True
            continue
        hits = np.flatnonzero(mask.any(axis=0))
        if not len(hits):
            return True
        longest = max(int(hits[0]), w - 1 - int(hits[-1]), int(np.diff(hits).max() - 1) if len(hits) > 1 else 0)
        if longest > GAP_LINES * h:
            return True
    return False


def judge_text(taken: Taken, text: str, rects: Sequence[tuple[float, float, float, float]],
               chars: Sequence[tuple[float, float, float, float] | None] | None = None) -> TextVerdict:
    """The verdict on one run from its taking-away. `chars` (one box per character, None where a
    character has none), when given, judges the characters one by one; without them the run is
    judged whole (see `needs_chars`)."""
    count, inks, backs = _ink(taken, rects)
    glyphs = max(1, _glyphs(text))
    per = count / glyphs
    if count < MIN_INK_PIXELS or per < MIN_INK_PER_CHAR:
        return TextVerdict([], per, 0.0, "its pixels did not change without it" if count < MIN_INK_PIXELS
                           else "too small to read (too little ink per character)")
    lc = _contrast(inks, backs)
    if abs(lc) < MIN_APCA_LC:
        return TextVerdict([], per, lc, f"too faint against what is behind it (APCA Lc {lc:.1f})")
    if chars is None:
        return TextVerdict([(0, len(text))], per, lc)
    shown = []
    for i, box in enumerate(chars[:len(text)]):
        if text[i].isspace():
            shown.append(None)
            continue
        ok = False
        if box is not None:
            x, y, w, h = box
            region = _region(taken, (x, y, x + w, y + h))
            if region is not None:
                mask = taken.mask[region]
                ok = mask.sum() >= max(1, MIN_CHAR_SHARE * mask.size)
        shown.append(ok)
    # spaces take the side of their neighbours: shown between two shown characters
    stretches: list[tuple[int, int]] = []
    start = None
    for i, flag in enumerate(shown + [False]):
        if flag is None:
            continue
        if flag and start is None:
            start = i
        if not flag and start is not None:
            end = i
            while end > start and shown[end - 1] is None:
                end -= 1
            stretches.append((start, end))
            start = None
    merged: list[tuple[int, int]] = []
    for a, b in stretches:
        if merged and all(shown[k] is None for k in range(merged[-1][1], a)):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return TextVerdict(merged, per, lc, "" if merged else "no character's pixels changed without it")


def needs_chars(taken: Taken, rects: Sequence[tuple[float, float, float, float]]) -> bool:
    """Whether a run must be judged character by character (part of it shows no change)."""
    return _gaps(taken, rects)


@dataclasses.dataclass
class Ink:
    """What an element painted, by its taking-away: the colours (before) of the pixels in its box
    that changed without it and look unlike what surrounds the box (a cover painted in the page's
    own colour changes the pixels of what it hides, and still shows nothing), and the box's size."""

    colours: np.ndarray  # (n, 3) uint8
    area: int

    @property
    def shown(self) -> bool:
        return len(self.colours) >= Ink.needed(self.area)

    @property
    def share(self) -> float:
        return len(self.colours) / self.area if self.area else 0.0

    @staticmethod
    def needed(area: int) -> float:
        """Pixels of ink that make a box of `area` pixels shown."""
        return min(MIN_ELEMENT_PIXELS, max(MIN_INK_PIXELS, MIN_ELEMENT_SHARE * area))


UNLIKE = 24  # a channel difference from the surroundings' dominant colour that a person tells apart


def _dominant(colours: np.ndarray) -> np.ndarray:
    codes = ((colours[:, 0] >> 4).astype(np.int32) << 8) | ((colours[:, 1] >> 4).astype(np.int32) << 4) | (colours[:, 2] >> 4)
    return colours[codes == np.bincount(codes, minlength=4096).argmax()].mean(axis=0)


def _surroundings(taken: Taken, region: tuple[slice, slice]) -> np.ndarray | None:
    """The dominant colour (whole channel values) of the ring of pixels around a region."""
    rows, cols = region
    before = taken.before
    ring = [before[max(0, rows.start - RING):rows.start, cols], before[rows.stop:rows.stop + RING, cols],
            before[rows, max(0, cols.start - RING):cols.start], before[rows, cols.stop:cols.stop + RING]]
    around = [r.reshape(-1, 3) for r in ring if r.size]
    return _dominant(np.concatenate(around)).astype(np.int16) if around else None


def _unlike(colours: np.ndarray, dominant: np.ndarray) -> np.ndarray:
    """Which colours (n, 3 uint8) differ from `dominant` by more than UNLIKE in some channel
    (compared in 8 bits against the bounds: no widened copy of a large box's pixels)."""
    out = np.zeros(len(colours), dtype=bool)
    for c in range(3):
        low, high = int(dominant[c]) - UNLIKE, int(dominant[c]) + UNLIKE
        channel = colours[:, c]
        if high < 255:
            out |= channel > high
        if low > 0:
            out |= channel < low
    return out


def ink_of(taken: Taken, rect: tuple[float, float, float, float]) -> Ink:
    region = _region(taken, rect)
    if region is None:
        return Ink(np.zeros((0, 3), np.uint8), 0)
    mask = taken.mask[region]
    colours = taken.before[region][mask]
    dominant = _surroundings(taken, region) if len(colours) else None
    if dominant is not None:
        colours = colours[_unlike(colours, dominant)]
    return Ink(colours, int(mask.size))


def judge_element(taken: Taken, rect: tuple[float, float, float, float]) -> bool:
    """Whether an element (a picture, a box) shows: its box's pixels changed without it, into
    colours unlike what surrounds it (`ink_of(...).shown`, counted only as far as the verdict
    needs: a large picture's first few thousand changed pixels usually settle it)."""
    region = _region(taken, rect)
    if region is None:
        return False
    mask = taken.mask[region]
    need = Ink.needed(int(mask.size))
    if np.count_nonzero(mask) < need:
        return False
    dominant = _surroundings(taken, region)
    if dominant is None:
        return True
    rows, cols = np.nonzero(mask)
    pixels = taken.before[region]
    for limit in (4096, len(rows)):
        if np.count_nonzero(_unlike(pixels[rows[:limit], cols[:limit]], dominant)) >= need:
            return True
    return False


async def char_boxes(world: World, requests: Sequence[tuple[int, int, int]]) -> list[list[Any]]:
    """Per request (node, start, end), each character's box [x, y, w, h] or None."""
    if not requests:
        return []
    answer = await world.ask(_CHARS, [list(r) for r in requests])
    return answer if isinstance(answer, list) else [[] for _ in requests]


async def record(world: World, text: Sequence[tuple[int, list[tuple[int, int]]]], elements: Sequence[tuple[int, bool]]) -> None:
    """Keep the verdicts in our world: every later read of this document honours them."""
    await world.ask(_RECORD, {"text": [[n, [list(s) for s in st]] for n, st in text],
                              "elements": [[i, bool(v)] for i, v in elements]})


# --- the render's measurement ----------------------------------------------------------------

@dataclasses.dataclass
class Verdicts:
    """What the counterfactual found of a snapshot: per run (by index) the stretches of it shown,
    per picture item whether it shows, and notes for the record."""

    text: dict[int, TextVerdict] = dataclasses.field(default_factory=dict)
    pictures: dict[int, bool] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)


def _utf16_offsets(text: str) -> list[int]:
    out, at = [], 0
    for ch in text:
        out.append(at)
        at += 2 if ord(ch) > 0xFFFF else 1
    out.append(at)
    return out


def _items(runs: Sequence[Any], items_meta: Any, pictures: Sequence[tuple[int, tuple[float, float, float, float]]]) -> list[Item]:
    meta = items_meta if isinstance(items_meta, list) else []
    rects: dict[int, list[tuple[float, float, float, float]]] = {}
    for run in runs:
        if 0 <= run.item < len(meta):
            rects.setdefault(run.item, []).extend(run.rects)
    for item, (x, y, w, h) in pictures:
        if 0 <= item < len(meta) and w > 0 and h > 0:
            rects.setdefault(item, []).append((x, y, x + w, y + h))
    out = []
    for item, boxes in rects.items():
        entry = meta[item]
        if not (isinstance(entry, list) and len(entry) == 4 and entry[0] in ("text", "element", "box")):
            continue
        try:
            margin = min(200.0, max(0.0, float(entry[1])))
        except (TypeError, ValueError):
            margin = 200.0
        for line in entry[3] if isinstance(entry[3], list) else []:  # all its own text, shown or not
            box = _box(line)
            if box is not None and box[2] > 0 and box[3] > 0:
                boxes.append((box[0], box[1], box[0] + box[2], box[1] + box[3]))
        out.append(Item(item, entry[0], boxes[:MAX_ITEM_RECTS], margin if math.isfinite(margin) else 200.0, bool(entry[2])))
    return out


MAX_ITEM_RECTS = 400


@dataclasses.dataclass
class Painting:
    """An element the counterfactual may take away whole or by its own paint: its item, box
    (x, y, w, h) and its index among the snapshot's elements (-1: none, a canvas's claim)."""

    item: int
    box: tuple[float, float, float, float]
    element: int = -1


def item_kinds(items_meta: Any, paintings: Iterable[Painting]) -> dict[int, str]:
    """Each painting's item kind ("text", "element", "box") as the snapshot's item table says,
    "" where the table says nothing usable (it crossed from the page as data)."""
    return {p.item: (items_meta[p.item][0] if isinstance(items_meta, list) and 0 <= p.item < len(items_meta)
                     and isinstance(items_meta[p.item], list) and items_meta[p.item] else "")
            for p in paintings}


async def measure(cdp: Any, world: World, runs: Sequence[Any], items_meta: Any, paintings: Sequence[Painting],
                  parents: Sequence[int], base: np.ndarray, size: tuple[int, int], scale: float) -> Verdicts:
    """Take the snapshot's text and pictures away from the render's capture (`base`) and judge
    each run (by its characters where part of it did not change) and each picture; then the boxes
    (an element's own background, border, shadow) of elements that hold nothing shown, which only
    their own paint could show (one that holds shown content is on the page whatever its box
    does). `parents`: each snapshot element's parent index. The verdicts are kept in our world
    for every later read of the document. The page is frozen once for both passes."""
    async with frozen(cdp):
        return await _measure_frozen(cdp, world, runs, items_meta, paintings, parents, base, size, scale)


async def _measure_frozen(cdp: Any, world: World, runs: Sequence[Any], items_meta: Any, paintings: Sequence[Painting],
                          parents: Sequence[int], base: np.ndarray, size: tuple[int, int], scale: float) -> Verdicts:
    verdicts = Verdicts()
    kinds = item_kinds(items_meta, paintings)
    first = [p for p in paintings if kinds[p.item] != "box"]
    items = _items(runs, items_meta, [(p.item, p.box) for p in first])
    # A box no text or picture can share pixels with is taken away in the same captures (its
    # verdict is the same whether or not it turns out to hold shown content: see below).
    early = apart(_items([], items_meta, [(p.item, p.box) for p in paintings if kinds[p.item] == "box"]), items)
    items += early
    outcome = await take_away(cdp, world, items, size, base=base, scale=scale, freeze=False) if items else Outcome()
    verdicts.notes.extend(dict.fromkeys(outcome.notes))
    partial = [(i, run) for i, run in enumerate(runs)
               if run.item in outcome.taken and not run.atomic and run.text.strip() and needs_chars(outcome.taken[run.item], run.rects)]
    boxes = await char_boxes(world, [(run.node, run.start, run.start + _utf16_offsets(run.text)[-1]) for _, run in partial])
    by_run = {i: b for (i, _), b in zip(partial, boxes)}
    not_shown: dict[str, int] = {}
    recorded: dict[int, list[tuple[int, int]]] = {}
    holds = [False] * len(parents)  # per snapshot element: it (or what it holds) shows content
    for i, run in enumerate(runs):
        taken = outcome.taken.get(run.item)
        if taken is None:
            verdict = TextVerdict([], why="unmeasured")
        elif i in by_run:
            offsets = _utf16_offsets(run.text)
            units = by_run[i] if isinstance(by_run[i], list) else []
            chars = [_box(units[offsets[k]]) if offsets[k] < len(units) else None for k in range(len(run.text))]
            verdict = judge_text(taken, run.text, run.rects, chars)
        else:
            verdict = judge_text(taken, run.text, run.rects)
        verdicts.text[i] = verdict
        if not verdict.stretches:
            not_shown[verdict.why.split(" (")[0]] = not_shown.get(verdict.why.split(" (")[0], 0) + 1
        elif 0 <= run.element < len(holds):
            holds[run.element] = True
        if run.node >= 0:
            offsets = _utf16_offsets(run.text)
            recorded.setdefault(run.node, []).extend((run.start + offsets[a], run.start + offsets[b]) for a, b in verdict.stretches)
    for p in first:
        verdicts.pictures[p.item] = shown = _shows(outcome, p)
        if shown and 0 <= p.element < len(holds):
            holds[p.element] = True
    for i in range(len(parents) - 1, -1, -1):  # parents come before children: fold upwards
        if holds[i] and 0 <= parents[i] < i:
            holds[parents[i]] = True
    lone = [p for p in paintings if kinds[p.item] == "box" and not (0 <= p.element < len(holds) and holds[p.element])]
    # (a set of their fields, which is what `p not in lone` compared, pair by pair: 0.85 s on 3,000 boxes)
    lone_keys = {(p.item, p.box, p.element) for p in lone}
    for p in paintings:
        if kinds[p.item] == "box" and (p.item, p.box, p.element) not in lone_keys:
            verdicts.pictures[p.item] = True
    measured = {i.id for i in early}
    for p in lone:
        if p.item in measured:
            verdicts.pictures[p.item] = _shows(outcome, p)
    lone = [p for p in lone if p.item not in measured]
    if lone:
        items = _items([], items_meta, [(p.item, p.box) for p in lone])
        second = await take_away(cdp, world, items, size, base=base, scale=scale, max_captures=MAX_CAPTURES // 2, freeze=False)
        verdicts.notes.extend(n for n in dict.fromkeys(second.notes) if n not in verdicts.notes)
        for p in lone:
            verdicts.pictures[p.item] = _shows(second, p)
    if not_shown:
        verdicts.notes.append(f"{sum(not_shown.values())} of {len(runs)} text runs not shown by the counterfactual: "
                              + "; ".join(f"{n} {why}" for why, n in sorted(not_shown.items())))
    await record(world, sorted(recorded.items()), sorted(verdicts.pictures.items()))
    return verdicts


def _shows(outcome: Outcome, painting: Painting) -> bool:
    """Whether a painting taken away in `outcome` shows (unmeasured: it does not)."""
    taken = outcome.taken.get(painting.item)
    x, y, w, h = painting.box
    return taken is not None and judge_element(taken, (x, y, x + w, y + h))


def _box(value: Any) -> tuple[float, float, float, float] | None:
    if isinstance(value, list) and len(value) == 4:
        try:
            box = tuple(float(v) for v in value)
        except (TypeError, ValueError):
            return None
        if all(math.isfinite(v) for v in box):
            return box  # type: ignore[return-value]
    return None


# --- elements of a live page -------------------------------------------------------------------

_CAPTURED = in_page("(N) => { const c = N.seen({}).captured; return [c.x1, c.y1]; }")


async def element_ink(cdp: Any, world: World, found: Sequence[tuple[int, tuple[float, float, float, float]]]) -> dict[int, Ink]:
    """Take each found element (`(item, (x, y, w, h))`, registered in our world by
    `N.cf.elementItem`) away from the page as it is now and say what it painted; the verdicts are
    kept in our world. An element left unmeasured painted nothing."""
    found = [(item, box) for item, box in found if box[2] > 0 and box[3] > 0]
    if not found:
        return {}
    size = await world.ask(_CAPTURED)
    width, height = (int(v) for v in size) if isinstance(size, list) and len(size) == 2 else (0, 0)
    items = [Item(item, "element", [(x, y, x + w, y + h)]) for item, (x, y, w, h) in found]
    outcome = await take_away(cdp, world, items, (width, height))
    inks = {}
    for item, (x, y, w, h) in found:
        taken = outcome.taken.get(item)
        inks[item] = ink_of(taken, (x, y, x + w, y + h)) if taken else Ink(np.zeros((0, 3), np.uint8), 0)
    await record(world, [], [(item, ink.shown) for item, ink in inks.items()])
    return inks
