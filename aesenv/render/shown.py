"""Text counts as shown only where the screenshot shows ink for it.

The snapshot (`snapshot.js`, through `seen.js`) already keeps only text that lays out inside the
captured area, unclipped, legible and distinguishable from its background. What the DOM cannot
say, the pixels do: text under an overlay that ignores the pointer, under a mask or an SVG filter,
blended away, or painted over. So each run of text is checked in the full-page capture: inside
its box some pixels must differ clearly from the box's dominant colour. A run that fails is not
page text for anyone downstream (the judges, the verifiers, the census, Φ): the visible text,
each element's text and the headings are all assembled here, from the runs that passed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

INK_DELTA = 24          # a channel difference from the dominant colour that counts as ink
MIN_INK_PIXELS = 3      # ink pixels a run must show (sampled)
MIN_INK_SHARE = 0.004   # of the sampled pixels in its box
SAMPLE = 6000           # pixels sampled per run, at most
MAX_TEXT = 20000        # characters of visible text kept
MAX_ELEMENT_TEXT = 300  # characters of an element's own text kept


@dataclass
class Run:
    element: int
    text: str  # as written (an element's own text keeps it so)
    box: tuple[float, float, float, float]  # x, y, w, h in page pixels
    gap: bool
    case: str = ""  # the text-transform it shows in: uppercase, lowercase, capitalize

    @property
    def on_screen(self) -> str:
        """The text as the screen shows it (what a visitor reads, what `text_exact` matches)."""
        if self.case == "uppercase":
            return self.text.upper()
        if self.case == "lowercase":
            return self.text.lower()
        if self.case == "capitalize":
            return re.sub(r"(^|\s)(\S)", lambda m: m.group(1) + m.group(2).upper(), self.text)
        return self.text


@dataclass
class ShownText:
    """The page's shown text, assembled from the runs the pixels confirmed."""

    visible_text: str = ""
    element_text: dict[int, str] = field(default_factory=dict)
    headings: list[dict[str, Any]] = field(default_factory=list)
    runs: int = 0


def parse_runs(raw: Any) -> list[Run]:
    """The snapshot's runs, each checked for shape; malformed ones are left out."""
    runs = []
    for item in raw if isinstance(raw, list) else []:
        if not (isinstance(item, list) and len(item) in (7, 8) and isinstance(item[1], str)):
            continue
        try:
            element = int(item[0])
            box = tuple(float(v) for v in item[2:6])
        except (TypeError, ValueError):
            continue
        if not all(math.isfinite(v) for v in box):
            continue
        case = item[7] if len(item) == 8 and item[7] in ("uppercase", "lowercase", "capitalize") else ""
        runs.append(Run(element, item[1][:2000], box, bool(item[6]), case))  # type: ignore[arg-type]
    return runs


def has_ink(pixels: np.ndarray, box: tuple[float, float, float, float], scale: float = 1.0) -> bool:
    """Whether the image shows ink inside `box` (page pixels): enough pixels clearly unlike the
    box's dominant colour. A box outside the image shows nothing."""
    height, width = pixels.shape[:2]
    x, y, w, h = (v * scale for v in box)
    x0, y0 = max(0, int(math.floor(x))), max(0, int(math.floor(y)))
    x1, y1 = min(width, int(math.ceil(x + w))), min(height, int(math.ceil(y + h)))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return False
    step = max(1, int(math.sqrt((x1 - x0) * (y1 - y0) / SAMPLE)))
    crop = pixels[y0:y1:step, x0:x1:step, :3]
    flat = crop.reshape(-1, 3)
    codes = ((flat[:, 0] >> 4).astype(np.int32) << 8) | ((flat[:, 1] >> 4).astype(np.int32) << 4) | (flat[:, 2] >> 4)
    mode = np.bincount(codes, minlength=4096).argmax()
    dominant = flat[codes == mode].mean(axis=0)
    ink = int((np.abs(flat.astype(np.int16) - dominant.astype(np.int16)).max(axis=1) > INK_DELTA).sum())
    return ink >= MIN_INK_PIXELS and ink >= MIN_INK_SHARE * len(flat)


RING = 6  # px around a box that stand for what is behind it


def _dominant(flat: np.ndarray) -> np.ndarray:
    codes = ((flat[:, 0] >> 4).astype(np.int32) << 8) | ((flat[:, 1] >> 4).astype(np.int32) << 4) | (flat[:, 2] >> 4)
    return flat[codes == np.bincount(codes, minlength=4096).argmax()].mean(axis=0)


def stands_out(pixels: np.ndarray, box: tuple[float, float, float, float], scale: float = 1.0) -> bool:
    """Whether a picture (an image, a canvas, a field) shows in the screenshot: ink inside its box,
    or a box of one colour unlike what surrounds it (a canvas cleared to blue on a white page).
    One that fills the whole image shows whatever it holds."""
    if has_ink(pixels, box, scale):
        return True
    height, width = pixels.shape[:2]
    x, y, w, h = (v * scale for v in box)
    x0, y0 = max(0, int(math.floor(x))), max(0, int(math.floor(y)))
    x1, y1 = min(width, int(math.ceil(x + w))), min(height, int(math.ceil(y + h)))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return False
    inside = pixels[y0:y1, x0:x1, :3]
    ring = [pixels[max(0, y0 - RING):y0, x0:x1], pixels[y1:y1 + RING, x0:x1],
            pixels[y0:y1, max(0, x0 - RING):x0], pixels[y0:y1, x1:x1 + RING]]
    parts = [r[..., :3].reshape(-1, 3) for r in ring if r.size]
    if not parts:
        return True
    around = np.concatenate(parts)
    step = max(1, int(math.sqrt(inside.shape[0] * inside.shape[1] / SAMPLE)))
    colour = _dominant(inside[::step, ::step].reshape(-1, 3))
    return bool(np.abs(colour.astype(np.int16) - _dominant(around).astype(np.int16)).max() > INK_DELTA)


def confirmed(runs: list[Run], pixels: np.ndarray | None, scale: float = 1.0) -> tuple[list[Run], int]:
    """The runs whose boxes show ink in the screenshot (all of them without one), and how many
    did not."""
    if pixels is None:
        return runs, 0
    kept = [run for run in runs if has_ink(pixels, run.box, scale)]
    return kept, len(runs) - len(kept)


def painted(elements: list[Any], runs: list[Run], pixels: np.ndarray | None,
            scale: float = 1.0) -> tuple[list[Any], list[int]]:
    """The elements a person sees: those that paint by themselves (a visible background, border
    or shadow; an image, canvas or field whose box shows ink), hold shown text, or contain an
    element that does; a bare wrapper around nothing visible (a `<nav>` of transparent links)
    is not on the page. Returns them with `parent` renumbered to the nearest kept ancestor, and
    per old index its new one (-1 for those left out: their runs go to the nearest kept
    ancestor). `elements` are in document order, parents before children."""
    n = len(elements)
    content = [False] * n
    for run in runs:
        if 0 <= run.element < n:
            content[run.element] = True
    for i, e in enumerate(elements):
        if e.paints == "style" or (e.paints == "replaced" and (pixels is None or stands_out(pixels, (e.x, e.y, e.w, e.h), scale))):
            content[i] = True
    for i in range(n - 1, -1, -1):  # a child comes after its parent: fold content upwards
        parent = elements[i].parent
        if content[i] and 0 <= parent < i:
            content[parent] = True
    index = [-1] * n
    kept: list[Any] = []
    for i, e in enumerate(elements):
        if content[i]:
            index[i] = len(kept)
            kept.append(e)
    for i, e in enumerate(elements):
        if content[i]:
            parent = e.parent
            while 0 <= parent < i and index[parent] < 0:
                parent = elements[parent].parent
            e.parent = index[parent] if 0 <= parent < i else -1
    nearest = list(index)
    for i, e in enumerate(elements):
        if nearest[i] < 0 and 0 <= e.parent < i:
            nearest[i] = nearest[e.parent]
    return kept, nearest


def assemble(runs: list[Run], tags: list[str], parents: list[int]) -> ShownText:
    """The shown text from confirmed runs: the page's visible text in document order, each
    element's own text, and the headings."""
    out = ShownText(runs=len(runs))
    heading_of: dict[int, int] = {}

    def heading(index: int) -> int:
        if index in heading_of:
            return heading_of[index]
        found, node, seen = -1, index, 0
        while 0 <= node < len(tags) and seen < 10_000:
            if tags[node] in ("h1", "h2", "h3", "h4", "h5", "h6"):
                found = node
                break
            node, seen = parents[node], seen + 1
        heading_of[index] = found
        return found

    text: list[str] = []
    size = 0
    heading_text: dict[int, list[str]] = {}
    for run in runs:
        piece = (" " if run.gap and text else "") + run.on_screen
        if size < MAX_TEXT:
            text.append(piece)
            size += len(piece)
        if 0 <= run.element < len(tags):
            own = out.element_text.get(run.element, "")
            if len(own) < MAX_ELEMENT_TEXT:
                out.element_text[run.element] = own + (" " if run.gap and own else "") + run.text
            h = heading(run.element)
            if h >= 0:
                heading_text.setdefault(h, []).append((" " if run.gap else "") + run.on_screen)
    out.visible_text = " ".join("".join(text).split())[:MAX_TEXT]
    out.element_text = {i: " ".join(t.split())[:MAX_ELEMENT_TEXT] for i, t in out.element_text.items()}
    out.headings = [{"level": int(tags[i][1]), "text": " ".join("".join(parts).split())[:120]}
                    for i, parts in sorted(heading_text.items())][:50]
    return out
