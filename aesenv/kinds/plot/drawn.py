"""What a figure shows, read from the figure as the host draws it.

`describe_scene` turns a `Scene` (the figure's SVG, read and cleaned on the host), the picture
the browser drew from it and the boxes the browser gave its texts into the figure description
the plot judges read (`evidence.FigureDescription`). Nothing in it is taken from the script's
word: a text is drawn when it is on the canvas, not clipped away, visibly opaque,
distinguishable from what is behind it in the picture, and with its ink in the picture; it is
read only where it is also legible as displayed (`legibility`: its characters drawn at least
`MIN_LEGIBLE_PX` to the em at the display scale, each run of them on its own). A drawn text that
is not legible is "small": it fills no role (title, axis label, tick label, legend entry,
annotation) and none of its words count, it only counts against the figure where small text is
a fault. A data mark counts when it is drawn visibly and its colour is found where it is drawn.
Roles follow from geometry: a panel is where data marks are drawn, its tick
labels are rows and columns of texts along its edges, its axis labels are the texts beyond them,
its title the text centred above it, a legend entry a text beside a drawn handle. Mark kinds
follow from shapes: rectangles standing on a shared baseline are bars, rectangles tiling a grid
are a mesh, closed curved shapes are wedges, stamped shapes are markers, open strokes are lines.
Group ids (matplotlib's gids, plotly's classes) only say which marks belong together.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from aesenv.colour import contrast_ratio, luminance
from aesenv.kinds.plot.legibility import MIN_LEGIBLE_PX, displayed_px, legible
from aesenv.kinds.plot.svg_scene import Box, Item, Scene, hex_colour

MIN_TEXT_PX = 3.5  # below this (in the figure's pixels) a text is a speck: not even counted as small text
MIN_ALPHA = 0.08  # effective opacity under which a text or mark is not drawn
MIN_TEXT_CONTRAST = 1.3  # text against what is behind it in the picture
MIN_MARK_CONTRAST = 1.04  # a mark against its panel's background
MAX_POINTS_PER_ARTIST = 400
MAX_POINTS_PER_AXES = 2000
MAX_BOXES_PER_AXES = 400
MAX_TEXTS = 400
MIN_PANEL_PX = 20  # a panel narrower or lower than this shows nothing a reader can make out
STEP_PX = 4.0
MAX_STEPS_PER_SEGMENT = 2000

PANEL = re.compile(r"^(axes_\d+|\.subplot\b.*|\.trace\b.*\bpie\b.*|\.polar\b.*|\.scene\b.*)$")
DECORATION = re.compile(r"^(matplotlib\.axis_\d+|xtick_\d+|ytick_\d+|axis3d_\d+|grid3d_\d+|pane3d_\d+|"
                        r"\.(xaxislayer|yaxislayer|gridlayer|minor-gridlayer|zerolinelayer|xlines|ylines|bglayer|"
                        r"angularaxis|radialaxis|polarsublayer|overaxes|frontplot|layer-above|layer-below)\b.*)$")
LEGEND = re.compile(r"^(legend_\d+|\.legend\b.*)$")


# ---------------------------------------------------------------------------------------------
# Sampling along lines (the legend/data overlap reads these points)
# ---------------------------------------------------------------------------------------------


def _step_ends(pts: np.ndarray) -> np.ndarray:
    """Cumulative counts of the points a path gets when each segment is cut into STEP_PX steps."""
    lengths = np.hypot(np.diff(pts[:, 0]), np.diff(pts[:, 1])) / STEP_PX
    steps = np.clip(np.ceil(lengths).astype(int), 1, MAX_STEPS_PER_SEGMENT)
    return np.cumsum(steps)


def densify_capped(paths: list[np.ndarray], limit: int) -> np.ndarray:
    """At most `limit` points spread evenly over the paths, as if a point were inserted every
    STEP_PX along each segment: a segment crossing a legend is seen, and only the chosen points
    are computed (a long noisy series would otherwise cost one point per 4 px of line)."""
    ends = [_step_ends(pts) if len(pts) >= 2 else None for pts in paths]
    sizes = [int(e[-1]) + 1 if e is not None else len(pts) for pts, e in zip(paths, ends)]
    total = sum(sizes)
    if total == 0:
        return np.zeros((0, 2))
    picks = np.arange(total) if total <= limit else np.linspace(0, total - 1, limit).astype(int)
    out = np.empty((len(picks), 2))
    start = 0
    for pts, path_ends, size in zip(paths, ends, sizes):
        mine = (picks >= start) & (picks < start + size)
        local = picks[mine] - start
        start += size
        if path_ends is None:
            out[mine] = pts[local]
            continue
        seg = np.searchsorted(path_ends, local, side="right")
        final = seg == len(path_ends)
        seg = np.minimum(seg, len(path_ends) - 1)
        first = np.where(seg > 0, path_ends[seg - 1], 0)
        count = path_ends[seg] - first
        chosen = pts[seg] + (pts[seg + 1] - pts[seg]) * ((local - first) / count)[:, None]
        chosen[final] = pts[-1]
        out[mine] = chosen
    return out


def cap(pts: np.ndarray, limit: int) -> np.ndarray:
    return pts if len(pts) <= limit else pts[np.linspace(0, len(pts) - 1, limit).astype(int)]


# ---------------------------------------------------------------------------------------------
# The picture
# ---------------------------------------------------------------------------------------------


class Picture:
    """The drawn figure's pixels, with the colour questions the description asks of them."""

    def __init__(self, pixels: np.ndarray) -> None:
        self.pixels = pixels.astype(np.int16)
        self.height, self.width = pixels.shape[:2]

    def region(self, box: Box, pad: int = 0) -> np.ndarray:
        x0, y0 = max(0, int(math.floor(box[0])) - pad), max(0, int(math.floor(box[1])) - pad)
        x1, y1 = min(self.width, int(math.ceil(box[2])) + pad), min(self.height, int(math.ceil(box[3])) + pad)
        if x1 <= x0 or y1 <= y0:
            return np.zeros((0, 3), dtype=np.int16)
        return self.pixels[y0:y1, x0:x1].reshape(-1, 3)

    def ring(self, box: Box, width: int = 3) -> np.ndarray:
        """The pixels just outside a box: what is behind a text, around its glyphs."""
        x0, y0, x1, y1 = (int(math.floor(box[0])), int(math.floor(box[1])), int(math.ceil(box[2])),
                          int(math.ceil(box[3])))
        parts = [self.region((x0 - width, y0 - width, x1 + width, y0)), self.region((x0 - width, y1, x1 + width, y1 + width)),
                 self.region((x0 - width, y0, x0, y1)), self.region((x1, y0, x1 + width, y1))]
        parts = [p for p in parts if len(p)]
        return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int16)

    def mode(self, pixels: np.ndarray) -> np.ndarray | None:
        """The most common colour (quantised to 8 levels per channel, then averaged)."""
        if not len(pixels):
            return None
        keys = (pixels[:, 0] // 8) * 1024 + (pixels[:, 1] // 8) * 32 + pixels[:, 2] // 8
        values, counts = np.unique(keys, return_counts=True)
        return pixels[keys == values[counts.argmax()]].mean(axis=0)

    def ink_share(self, box: Box, ink: np.ndarray, behind: np.ndarray) -> float:
        """Share of a box's pixels that lean from `behind` at least half-way towards `ink`."""
        pixels = self.region(box)
        direction = ink - behind
        norm = float(direction @ direction)
        if not len(pixels) or norm < 1:
            return 0.0
        towards = (pixels - behind) @ direction / norm
        return float((towards >= 0.5).mean())

    def inked_box(self, box: Box, ink: np.ndarray, behind: np.ndarray) -> Box | None:
        """The part of a box its ink covers (a text's glyphs, not its line box)."""
        x0, y0 = max(0, int(math.floor(box[0]))), max(0, int(math.floor(box[1])))
        x1, y1 = min(self.width, int(math.ceil(box[2]))), min(self.height, int(math.ceil(box[3])))
        direction = ink - behind
        norm = float(direction @ direction)
        if x1 <= x0 or y1 <= y0 or norm < 1:
            return None
        mask = (self.pixels[y0:y1, x0:x1] - behind) @ direction / norm >= 0.3
        if not mask.any():
            return None
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        return (float(x0 + cols[0]), float(y0 + rows[0]), float(x0 + cols[-1] + 1), float(y0 + rows[-1] + 1))

    def ink_at(self, points: np.ndarray, ink: np.ndarray, behind: np.ndarray, radius: int = 1) -> float:
        """Share of the points with a pixel within `radius` that leans half-way towards `ink`."""
        direction = ink - behind
        norm = float(direction @ direction)
        if not len(points) or norm < 1:
            return 0.0
        hits = 0
        for x, y in points:
            x, y = int(round(x)), int(round(y))
            patch = self.pixels[max(0, y - radius):y + radius + 1, max(0, x - radius):x + radius + 1].reshape(-1, 3)
            if len(patch) and ((patch - behind) @ direction / norm >= 0.5).any():
                hits += 1
        return hits / len(points)


def _contrast(a: np.ndarray, b: np.ndarray) -> float:
    return float(contrast_ratio(luminance(np.clip(a, 0, 255)), luminance(np.clip(b, 0, 255))))


def _over(colour: tuple[int, int, int], alpha: float, behind: np.ndarray) -> np.ndarray:
    return alpha * np.asarray(colour, dtype=float) + (1 - alpha) * behind


def _hex(rgb: np.ndarray | None) -> str | None:
    return None if rgb is None else hex_colour(tuple(int(round(v)) for v in np.clip(rgb, 0, 255)))


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a: Box, b: Box) -> Box:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _centre(b: Box) -> tuple[float, float]:
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


# ---------------------------------------------------------------------------------------------
# Texts: shown or not
# ---------------------------------------------------------------------------------------------


@dataclass
class ShownText:
    item: Item
    box: Box
    colour: np.ndarray  # as drawn (its colour over what is behind it)
    role: str = "annotation"  # "small": drawn, but not legible as displayed
    panel: int | None = None
    unkeyed: bool = False
    text: str = ""  # what a reader reads of it: its legible runs of characters

    @property
    def legible(self) -> bool:
        return self.role != "small"


def _readable(item: Item, behind: np.ndarray, width: float) -> str:
    """The characters of a drawn text a reader can read: its runs drawn legibly as displayed, in a
    colour that is opaque and stands out from what is behind the text (a run inherits the text's
    checks, but a tiny or transparent tspan beside a legible one is not read with it)."""
    if not item.pieces:
        return item.text if legible(item.size_px, width) else ""
    runs = []
    for piece in item.pieces:
        alpha = piece.alpha * item.opacity
        if piece.fill is None or alpha < MIN_ALPHA or not legible(piece.size_px, width):
            continue
        if _contrast(_over(piece.fill, alpha, behind), behind) < MIN_TEXT_CONTRAST:
            continue
        runs.append(piece.text)
    return "".join(runs).strip()


def shown_texts(scene: Scene, picture: Picture, boxes: dict[str, Box]) -> tuple[list[ShownText], list[str],
                                                                               list[tuple[Item, Box]]]:
    """The texts drawn (legible or "small"), a note per text left out or not legible (for the
    record), and the texts drawn mostly off the figure (a penalty for the layout, never something
    read)."""
    shown, dropped, cut = [], [], []
    canvas = (0.0, 0.0, float(scene.width), float(scene.height))
    for item in scene.texts:
        box = boxes.get(item.key)
        why = ""
        if box is None or _area(box) <= 0:
            why = "not drawn"
        elif item.size_px < MIN_TEXT_PX:
            why = f"{item.size_px:.1f} px high"
        elif item.fill is None or item.visible_fill < MIN_ALPHA:
            why = "transparent"
        else:
            clip = item.clip_box
            visible = _inter(box, clip) if clip is not None else box
            if _area(visible) < 0.5 * _area(box):
                why = "clipped away"
            elif _area(_inter(box, canvas)) < 0.5 * _area(box):
                why = "off the figure"
        if not why:
            behind = picture.mode(picture.ring(box))
            if behind is None:
                behind = np.array([255.0, 255.0, 255.0])
            colour = _over(item.fill, item.visible_fill, behind)
            if _contrast(colour, behind) < MIN_TEXT_CONTRAST:
                why = "the colour of what is behind it"
            elif picture.ink_share(_inter(box, canvas), colour, behind) < 0.01:
                why = "no ink where it is drawn"
        if why:
            dropped.append(f"{item.text[:40]!r}: {why}")
            if why == "off the figure":
                cut.append((item, box))
            continue
        tight = picture.inked_box(_inter(box, canvas), colour, behind)
        if tight is not None and _area(_inter(box, canvas)) >= 0.99 * _area(box):
            box = tight  # wholly on the canvas: its glyphs' box (a text cut at the edge keeps its own)
        text = _readable(item, behind, scene.width)
        if not text:
            dropped.append(f"{item.text[:40]!r}: {displayed_px(item.size_px, scene.width):.1f} px to the em as "
                           f"displayed, under the legible {MIN_LEGIBLE_PX:.1f}")
        shown.append(ShownText(item, box, colour, role="annotation" if text else "small", text=text or item.text))
    return shown, dropped, cut


# ---------------------------------------------------------------------------------------------
# Panels, marks, series
# ---------------------------------------------------------------------------------------------


@dataclass
class Mark:
    item: Item
    artist: str  # the group it belongs to (grouping only)
    kind: str = ""  # Line2D / Rectangle / QuadMesh / Wedge / PathCollection / PolyCollection / AxesImage / PathPatch
    colour: tuple[int, int, int] | None = None


@dataclass
class Panel:
    key: str
    items: list[Item] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    decorations: list[Item] = field(default_factory=list)
    legend_items: dict[str, list[Item]] = field(default_factory=dict)
    box: Box | None = None
    background: np.ndarray | None = None
    background_fill: Item | None = None
    name: str = "rectilinear"
    faded: list[str] = field(default_factory=list)  # colours of marks drawn but not distinguishable


def _panel_key(item: Item) -> str | None:
    for hint in item.hints:
        if PANEL.match(hint):
            return hint
    return None


def _artist_key(item: Item, panel: str | None) -> str:
    hints = list(item.hints)
    for hint in hints:
        if hint.startswith(".trace"):
            return hint + str(hints.index(hint))
    if panel in hints:
        below = hints[hints.index(panel) + 1:]
        return below[0] if below else f"item-{item.order}"
    return hints[-1] if hints else f"item-{item.order}"


def _is_closed(item: Item) -> bool:
    if any(item.closed):
        return True
    pts = item.subpaths[0] if item.subpaths else None
    return pts is not None and len(pts) >= 4 and float(np.hypot(*(pts[0] - pts[-1]))) < 0.5


def _is_rect(item: Item) -> bool:
    if item.curved or len(item.subpaths) != 1:
        return False
    pts = item.subpaths[0]
    xs, ys = np.unique(np.round(pts[:, 0], 1)), np.unique(np.round(pts[:, 1], 1))
    return len(xs) == 2 and len(ys) == 2


def _visible_colour(item: Item, behind: np.ndarray) -> tuple[tuple[int, int, int] | None, float]:
    """The colour a mark shows (its fill, else its stroke) and its contrast with what is behind."""
    best: tuple[tuple[int, int, int] | None, float] = (None, 1.0)
    for colour, alpha in ((item.fill, item.visible_fill), (item.stroke, item.visible_stroke)):
        if colour is None or alpha < MIN_ALPHA:
            continue
        ratio = _contrast(_over(colour, alpha, behind), behind)
        if best[0] is None or ratio > best[1]:
            best = (colour, ratio)
    return best


def _panel_box(panel: Panel) -> Box | None:
    clips = Counter(tuple(round(v, 1) for v in i.clip_box) for i in panel.items
                    if i.clip_box is not None and i.kind != "text" and _area(i.clip_box) > 100)
    if clips:
        return clips.most_common(1)[0][0]
    filled = [i for i in panel.items if i.kind == "path" and i.fill is not None and _is_closed(i)]
    boxes = [i.box for i in panel.items if i.kind in ("path", "marker", "image")]
    if filled:
        largest = max(filled, key=lambda i: _area(i.box))
        if boxes and _area(largest.box) >= 0.5 * _area(_union(boxes)):
            return largest.box
    return _union(boxes) if boxes else None


def _classify_rects(marks: list[Mark]) -> None:
    """Rectangles tiling a grid are a mesh; rectangles sharing a baseline (or stacked) are bars;
    lone rectangles (box-plot boxes) are patches."""
    rects = [m for m in marks if m.kind == "Rectangle"]
    by_artist: dict[str, list[Mark]] = defaultdict(list)
    for m in rects:
        by_artist[m.artist].append(m)
    # a mesh is one artist's grid of cells; bars are one artist per bar in matplotlib, so test all too
    groups = list(by_artist.values()) + [rects]
    for group in groups:
        if len(group) < 4:
            continue
        xs = {round(m.item.box[0], 0) for m in group}
        ys = {round(m.item.box[1], 0) for m in group}
        if len(xs) >= 2 and len(ys) >= 2 and len(group) >= 0.8 * len(xs) * len(ys):
            widths = {round(m.item.box[2] - m.item.box[0], 0) for m in group}
            heights = {round(m.item.box[3] - m.item.box[1], 0) for m in group}
            if len(widths) <= 2 and len(heights) <= 2:
                for m in group:
                    m.kind = "QuadMesh"
    rects = [m for m in rects if m.kind == "Rectangle"]
    for m in rects:
        x0, y0, x1, y1 = m.item.box
        partner = False
        for o in rects:
            if o is m:
                continue
            ox0, oy0, ox1, oy1 = o.item.box
            if abs(y1 - oy1) < 1 or abs(y0 - oy0) < 1 or abs(x0 - ox0) < 1 or abs(x1 - ox1) < 1:
                if abs(y1 - oy1) < 1 or abs(y0 - oy0) < 1:
                    partner = partner or (abs(y1 - oy1) < 1 and abs(y0 - oy0) >= 1) or (abs(y0 - oy0) < 1 and abs(y1 - oy1) >= 1) \
                        or abs(x0 - ox1) < 1.5 or abs(x1 - ox0) < 1.5 or (abs(y1 - oy1) < 1 and abs(y0 - oy0) < 1)
                else:
                    partner = True
            if (abs(y0 - oy1) < 1 or abs(y1 - oy0) < 1) and min(x1, ox1) - max(x0, ox0) > 0.5 * (x1 - x0):
                partner = True  # stacked
            if partner:
                break
        if not partner:
            m.kind = "PathPatch"


def _drawn(item: Item) -> bool:
    return item.visible_fill >= MIN_ALPHA or item.visible_stroke >= MIN_ALPHA


def _slanted_line(item: Item, length: float) -> bool:
    """A straight stroke at least `length` long that runs along neither axis of the figure."""
    if item.kind != "path" or item.curved or len(item.subpaths) != 1 or len(item.subpaths[0]) != 2:
        return False
    dx, dy = item.subpaths[0][1] - item.subpaths[0][0]
    angle = math.degrees(math.atan2(abs(dy), abs(dx)))
    return math.hypot(dx, dy) >= length and 5 <= angle <= 85


def _name_of(panel: Panel, around: list[Item]) -> str:
    """3d when large slanted quadrilaterals (panes, filled or only outlined) frame it, or, with
    the panes hidden, when long slanted straight strokes (its axis lines) cross its box; polar
    when its frame is a circle. `around`: items drawn over its box outside its group (matplotlib
    draws a 3-D axes' panes, grid and axis lines that way)."""
    box = panel.box
    if box is None:
        return "rectilinear"
    area = _area(box)
    panes = [i for i in panel.items + around if i.kind == "path" and not i.curved and _drawn(i)
             and len(i.subpaths) == 1 and 4 <= len(i.subpaths[0]) <= 6 and not _is_rect(i)
             and _area(i.box) > 0.05 * area]
    side = min(box[2] - box[0], box[3] - box[1])
    axis_lines = [i for i in around if _drawn(i) and _slanted_line(i, 0.25 * side)]
    if len(panes) >= 3 or len(axis_lines) >= 2:
        return "3d"
    frames = [i for i in panel.items if i.kind == "path" and i.curved and _is_closed(i)
              and _area(i.box) > 0.6 * area and abs((i.box[2] - i.box[0]) - (i.box[3] - i.box[1])) < 0.1 * (i.box[2] - i.box[0])]
    if frames and any(i.clips and i.clips[-1].curved for i in panel.items):
        return "polar"
    return "rectilinear"


def build_panels(scene: Scene, picture: Picture, figure_bg: np.ndarray) -> tuple[list[Panel], list[Item]]:
    """Panels (with their marks) and the items drawn outside any panel."""
    panels: dict[str, Panel] = {}
    outside: list[Item] = []
    for item in scene.items:
        if item.kind == "text":
            continue
        key = _panel_key(item)
        if key is None:
            outside.append(item)
            continue
        panels.setdefault(key, Panel(key)).items.append(item)
    out = []
    for panel in panels.values():
        panel.box = _panel_box(panel)
        if panel.box is None or min(panel.box[2] - panel.box[0], panel.box[3] - panel.box[1]) < MIN_PANEL_PX:
            continue
        box = panel.box
        # its background: the first large filled shape covering its box
        for item in panel.items:
            if item.kind == "path" and item.fill is not None and _is_closed(item) and \
                    _area(_inter(item.box, box)) > 0.9 * _area(box):
                panel.background_fill = item
                break
            if item.kind != "path":
                break
        fill = panel.background_fill
        panel.background = _over(fill.fill, fill.visible_fill, figure_bg) if fill is not None else figure_bg
        around = [i for i in outside if box[0] <= _centre(i.box)[0] <= box[2] and box[1] <= _centre(i.box)[1] <= box[3]]
        panel.name = _name_of(panel, around)
        panel.decorations += [i for i in around if any(DECORATION.match(h) for h in i.hints)]
        for item in panel.items:
            if item is panel.background_fill:
                continue
            legend = next((h for h in item.hints if LEGEND.match(h)), None)
            if legend:
                panel.legend_items.setdefault(legend, []).append(item)
                continue
            if any(DECORATION.match(h) for h in item.hints) or _is_spine(item, box):
                panel.decorations.append(item)
                continue
            mark = _mark(item, _artist_key(item, panel.key), panel.background)
            if mark is not None:
                panel.marks.append(mark)
            elif item.kind != "image":
                # drawn in the panel's background colour: faded, unless it stands out from what is
                # around it (a white median dot on a dark box), which is neither a mark nor a fault
                colour = item.fill if item.fill is not None and item.visible_fill >= MIN_ALPHA else (
                    item.stroke if item.visible_stroke >= MIN_ALPHA else None)
                around = picture.mode(picture.ring(item.box, 2)) if colour is not None else None
                local = _visible_colour(item, around)[1] if around is not None else 1.0
                if colour is not None and local < MIN_MARK_CONTRAST and hex_colour(colour) not in panel.faded:
                    panel.faded.append(hex_colour(colour))
        _group_small_shapes(panel.marks)
        _classify_rects(panel.marks)
        _confirm_marks(panel, picture)
        if panel.marks or panel.decorations or panel.background_fill is not None and _contrast(
                panel.background, figure_bg) >= MIN_MARK_CONTRAST:
            out.append(panel)  # a panel with nothing drawn in it is no panel
    return _merge_same_boxes(out), outside


def _is_spine(item: Item, box: Box) -> bool:
    """A straight stroke along one edge of the panel (matplotlib's spines are patches)."""
    if item.kind != "path" or item.curved or len(item.subpaths) != 1 or _is_closed(item):
        return False
    x0, y0, x1, y1 = item.box
    near = 2.5
    horizontal = y1 - y0 < near and (abs(y0 - box[1]) < near or abs(y1 - box[3]) < near)
    vertical = x1 - x0 < near and (abs(x0 - box[0]) < near or abs(x1 - box[2]) < near)
    return horizontal or vertical


def _mark(item: Item, artist: str, behind: np.ndarray) -> Mark | None:
    if item.kind == "image":
        return Mark(item, artist, "AxesImage") if item.opacity >= MIN_ALPHA else None
    colour, ratio = _visible_colour(item, behind)
    if colour is None or ratio < MIN_MARK_CONTRAST:
        return None
    if item.kind == "marker" and max(item.box[2] - item.box[0], item.box[3] - item.box[1]) <= 24:
        return Mark(item, artist, "PathCollection", colour)
    filled = item.fill is not None and item.visible_fill >= MIN_ALPHA and _is_closed(item)
    if not filled:
        return Mark(item, artist, "Line2D", colour)
    if _is_rect(item):
        return Mark(item, artist, "Rectangle", colour)
    if item.curved:
        return Mark(item, artist, "Wedge", colour)
    return Mark(item, artist, "PolyCollection", colour)


def _group_small_shapes(marks: list[Mark]) -> None:
    """Small shapes of one size stamped three or more times by one artist are markers (plotly
    draws its markers as paths)."""
    by_artist: dict[str, list[Mark]] = defaultdict(list)
    for m in marks:
        if m.kind in ("Wedge", "PolyCollection", "Rectangle") and (m.item.marker or max(
                m.item.box[2] - m.item.box[0], m.item.box[3] - m.item.box[1]) <= 24):
            by_artist[m.artist + m.item.marker].append(m)
    for group in by_artist.values():
        sizes = Counter((round(m.item.box[2] - m.item.box[0]), round(m.item.box[3] - m.item.box[1])) for m in group)
        if len(group) >= 3 and sizes.most_common(1)[0][1] >= 0.6 * len(group):
            for m in group:
                m.kind = "PathCollection"


def _sample_points(mark: Mark, outline: bool = False) -> np.ndarray:
    """Where a mark's colour should be found in the picture (along its outline for a shape seen
    by its edge: white bars with black edges on white)."""
    item = mark.item
    if mark.kind in ("Line2D",) or outline:
        return densify_capped(item.subpaths, 24)
    if mark.kind == "PathCollection":
        return np.array([_centre(item.box)]) if item.fill is not None and item.visible_fill >= MIN_ALPHA \
            else densify_capped(item.subpaths, 8)
    if mark.kind == "AxesImage":
        return np.zeros((0, 2))
    pts = item.subpaths[0]
    centre = pts.mean(axis=0)
    inner = centre + (pts - centre) * 0.6  # inside the outline, off its antialiased edge
    return cap(np.vstack([inner, [_centre(item.box)]]), 12) if mark.kind != "Wedge" else cap(inner, 12)


def _confirm_marks(panel: Panel, picture: Picture) -> None:
    """Keep the artists whose colour is found where they are drawn (a chart painted over by an
    opaque shape, or drawn outside its clip, is not shown)."""
    by_artist: dict[tuple[str, str], list[Mark]] = defaultdict(list)
    for m in panel.marks:
        by_artist[(m.artist, m.kind)].append(m)
    kept = []
    behind = panel.background
    for (_, kind), group in by_artist.items():
        if kind == "AxesImage":
            kept += [m for m in group if _area(m.item.shown_box or (0, 0, 0, 0)) > 0]
            continue
        sample = group if len(group) <= 40 else [group[int(i * len(group) / 40)] for i in range(40)]
        hits = total = 0
        for m in sample:
            fill_shows = m.item.fill is not None and m.item.visible_fill >= MIN_ALPHA and m.kind != "Line2D" and \
                _contrast(_over(m.item.fill, m.item.visible_fill, behind), behind) >= MIN_MARK_CONTRAST
            pts = _sample_points(m, outline=not fill_shows)
            clip = m.item.clip_box
            if clip is not None and len(pts):
                pts = pts[(pts[:, 0] >= clip[0] - 1) & (pts[:, 0] <= clip[2] + 1)
                          & (pts[:, 1] >= clip[1] - 1) & (pts[:, 1] <= clip[3] + 1)]
            if not len(pts):
                total += 1
                continue
            colour, alpha = (m.item.fill, m.item.visible_fill) if fill_shows else (m.item.stroke, m.item.visible_stroke)
            if colour is None:
                total += 1
                continue
            ink = _over(colour, max(alpha, MIN_ALPHA), behind)
            share = picture.ink_at(pts, ink, behind, radius=1 if fill_shows else 2)
            hits += share
            total += 1
        if total and hits / total >= 0.3:
            kept += group
    panel.marks = [m for m in panel.marks if m in kept]


def _merge_same_boxes(panels: list[Panel]) -> list[Panel]:
    """Panels drawn on the same box (twin axes, or one panel split into groups) are one panel."""
    merged: list[Panel] = []
    for panel in panels:
        same = next((m for m in merged if m.box and panel.box and _area(_inter(m.box, panel.box))
                     > 0.8 * max(_area(m.box), _area(panel.box))), None)
        if same is None:
            merged.append(panel)
            continue
        same.items += panel.items
        same.marks += panel.marks
        same.decorations += panel.decorations
        for key, items in panel.legend_items.items():
            same.legend_items.setdefault(key, []).extend(items)
    return merged


# ---------------------------------------------------------------------------------------------
# Legends and roles
# ---------------------------------------------------------------------------------------------


@dataclass
class Legend:
    box: Box
    entries: list[ShownText]
    handle_colours: list[str | None]
    frame_alpha: float
    panel: int | None
    key: str = ""


def find_legends(groups: dict[str, list[Item]], texts: list[ShownText], picture: Picture,
                 figure_bg: np.ndarray) -> list[Legend]:
    """A legend is texts each with a drawn handle just left of it (a line, a patch, a marker)."""
    legends = []
    for key, items in groups.items():
        members = [t for t in texts if key in t.item.hints]
        if not members:
            continue
        drawn = [i for i in items if i.kind != "text"]
        frame = max((i for i in drawn if i.kind == "path" and _is_closed(i)
                     and all(_area(_inter(i.box, t.box)) > 0.5 * _area(t.box) for t in members)),
                    key=lambda i: _area(i.box), default=None)
        handles = [i for i in drawn if i is not frame]
        entries, colours = [], []
        for t in members:
            size = t.item.size_px
            beside = [h for h in handles if h.box[2] <= t.box[0] + 1 and t.box[0] - h.box[2] <= 3 * size
                      and h.box[1] <= _centre(t.box)[1] + size * 0.6 and h.box[3] >= _centre(t.box)[1] - size * 0.6]
            shown = []
            for h in beside:
                behind = picture.mode(picture.ring(h.box)) if picture.ring(h.box).size else figure_bg
                colour, ratio = _visible_colour(h, behind if behind is not None else figure_bg)
                if colour is not None and ratio >= MIN_MARK_CONTRAST:
                    shown.append((colour, h))
            if shown:
                entries.append(t)
                colours.append(hex_colour(shown[0][0]))
        if not entries:
            for t in members:
                t.unkeyed = True  # names without keys: neither a legend nor a label next to its mark
            continue
        frame_alpha = 0.0
        if frame is not None and frame.fill is not None:
            frame_alpha = round(frame.visible_fill, 3)
        box = frame.box if frame is not None else _union([t.box for t in entries])
        legends.append(Legend(box=box, entries=entries, handle_colours=colours, frame_alpha=frame_alpha, panel=None,
                              key=key))
        for t in members:
            t.role = "legend"
    return legends


def assign_roles(panels: list[Panel], texts: list[ShownText], width: float, height: float) -> None:
    """Tick labels, axis labels and titles from where texts sit around each panel's box: tick
    labels are rows and columns along its edges; every other text takes the role, among those its
    place allows, whose panel edge it is nearest to (a title above the lower panel is not an axis
    label of the upper one)."""
    free = [t for t in texts if t.role == "annotation"]
    framed = {i: p.name == "rectilinear" and bool(p.decorations) for i, p in enumerate(panels)}
    for index, panel in enumerate(panels):
        if panel.name == "3d" and panel.box is not None:
            _axes_3d(free, panel, index)
    _ticks(free, panels, framed)
    extent = {}
    for index, panel in enumerate(panels):
        if panel.box is None:
            continue
        x0, y0, x1, y1 = panel.box
        mine = [u for u in free if u.panel == index]
        extent[index] = (max([u.box[3] for u in mine if u.role == "xtick"] or [y1]),
                         min([u.box[0] for u in mine if u.role == "ytick"] or [x0]),
                         max([u.box[2] for u in mine if u.role == "ytick"] or [x1]))
    for t in free:
        if t.role != "annotation":
            continue
        bx0, by0, bx1, by1 = t.box
        cx, cy = _centre(t.box)
        s = t.item.size_px
        vertical = abs(t.item.rotation - 90) < 10
        options: list[tuple[float, str, int]] = []
        for index, panel in enumerate(panels):
            if panel.box is None:
                continue
            x0, y0, x1, y1 = panel.box
            below, left, right = extent[index]
            if not vertical and y0 - 8 * s <= by1 <= y0 + 2 and (
                    abs(cx - (x0 + x1) / 2) <= 0.1 * (x1 - x0) + 2 or abs(bx0 - x0) <= 3 or abs(bx1 - x1) <= 3):
                options.append((y0 - by1, "title", index))
            if not framed[index]:
                continue
            if not vertical and y1 - 2 <= by0 <= below + 3 * s and x0 <= cx <= x1:
                options.append((by0 - below, "xlabel", index))
            if vertical and left - 3 * s <= bx1 <= x0 + 2 and y0 <= cy <= y1:
                options.append((left - bx1, "ylabel", index))
            if vertical and x1 - 2 <= bx0 <= right + 3 * s and y0 <= cy <= y1:
                options.append((bx0 - right, "ylabel", index))
        if options:
            _, t.role, t.panel = min(options)
    for index in range(len(panels)):  # one title line per panel: the nearest
        titles = [t for t in free if t.panel == index and t.role == "title"]
        if titles:
            nearest = max(t.box[3] for t in titles)
            for t in titles:
                if abs(t.box[3] - nearest) >= 2:
                    t.role, t.panel = "annotation", None
    tops = [p.box[1] for p in panels if p.box]
    bottoms = [p.box[3] for p in panels if p.box]
    lefts = [p.box[0] for p in panels if p.box]
    for t in free:
        if t.role != "annotation" or t.panel is not None:
            continue
        cx, cy = _centre(t.box)
        vertical = abs(t.item.rotation - 90) < 10
        if tops and t.box[3] <= min(tops) + 2 and t.box[3] <= 0.25 * height and not vertical:
            t.role = "suptitle"  # above every panel, at the top: the figure's title (plotly's sits left)
        elif bottoms and t.box[1] >= max(bottoms) and abs(cx - width / 2) < 0.25 * width and not vertical:
            t.role = "xlabel"
        elif lefts and vertical and t.box[2] <= min(lefts) and abs(cy - height / 2) < 0.25 * height:
            t.role = "ylabel"
    for t in texts:  # texts that name nothing belong to the panel they sit in
        if t.panel is None and t.role in ("annotation", "legend", "small"):
            cx, cy = _centre(t.box)
            t.panel = next((i for i, p in enumerate(panels) if p.box and p.box[0] <= cx <= p.box[2]
                            and p.box[1] <= cy <= p.box[3]), None)


MIN_ROW_3D = 3  # tick labels in a line: two texts are always in one
MAX_TEXTS_3D = 60  # texts around one 3-D panel considered for its axes (the search is cubic)


def _rows_3d(texts: list[ShownText], span: float) -> list[list[ShownText]]:
    """Tick label rows of a 3-D panel: three or more texts of one size whose centres lie on one
    straight line (any slant), evenly enough spaced (no gap over `span`, half the panel's larger
    side), largest row first."""
    centres = np.array([_centre(t.box) for t in texts], dtype=float).reshape(-1, 2)
    sizes = np.array([t.item.size_px for t in texts], dtype=float)
    left = np.ones(len(texts), dtype=bool)
    rows = []
    while left.sum() >= MIN_ROW_3D:
        best = np.zeros(0, dtype=int)
        order = np.flatnonzero(left)
        for a_pos, a in enumerate(order):
            same = left & (np.abs(sizes - sizes[a]) <= 0.05 * sizes[a])  # one axis's labels share one size
            for b in order[a_pos + 1:]:
                d = centres[b] - centres[a]
                length = float(np.hypot(*d))
                if length < 1 or not same[b]:
                    continue
                normal = np.array([-d[1], d[0]]) / length
                members = np.flatnonzero(same & (np.abs((centres - centres[a]) @ normal) <= 0.35 * sizes))
                if len(members) <= max(len(best), MIN_ROW_3D - 1):
                    continue
                gaps = np.diff(np.sort((centres[members] - centres[a]) @ (d / length)))
                median = float(np.median(gaps))
                if gaps.min() > 0.5 and gaps.max() <= 2.5 * median and median <= span:
                    best = members
        if not len(best):
            break
        rows.append([texts[k] for k in best])
        left[best] = False
    return rows


def _axes_3d(free: list[ShownText], panel: Panel, index: int) -> None:
    """The axes of a 3-D panel, read as a 2-D panel's are: each axis's tick labels are a row of
    texts along it, its label the nearest text beyond that row (away from the panel's middle)
    across from the row's middle (matplotlib centres it there). The most upright row is z; the others are x and y in the order they are
    drawn (matplotlib draws x, then y, then z)."""
    x0, y0, x1, y1 = panel.box
    near = [t for t in free if t.role == "annotation" and x0 - 3 * t.item.size_px <= _centre(t.box)[0]
            <= x1 + 3 * t.item.size_px and y0 <= _centre(t.box)[1] <= y1 + 3 * t.item.size_px][:MAX_TEXTS_3D]
    rows = _rows_3d(near, 0.5 * max(x1 - x0, y1 - y0))
    if not rows:
        return
    middle = np.array(_centre(panel.box))
    named = []
    for row in rows:
        centres = np.array([_centre(t.box) for t in row], dtype=float)
        direction = np.linalg.svd(centres - centres.mean(axis=0), full_matrices=False)[2][0]  # along the row
        normal = np.array([-direction[1], direction[0]])
        if float((centres.mean(axis=0) - middle) @ normal) < 0:
            normal = -normal
        named.append({"row": row, "direction": direction, "normal": normal, "offset": float((centres @ normal).max()),
                      "span": (float((centres @ direction).min()), float((centres @ direction).max())),
                      "upright": abs(float(direction[1])), "first": min(t.item.order for t in row)})
    upright = max(named, key=lambda r: r["upright"])
    flat = sorted((r for r in named if r is not upright or r["upright"] < math.cos(math.radians(30))),
                  key=lambda r: r["first"])
    names = {}
    if upright["upright"] >= math.cos(math.radians(30)):
        names[id(upright)] = "z"
    for r, axis in zip(flat, "xy"):
        names[id(r)] = axis
    in_rows = {id(t) for r in named for t in r["row"]}
    options = []
    for r in named:
        axis = names.get(id(r))
        if axis is None:
            continue
        for t in r["row"]:
            t.role, t.panel = f"{axis}tick", index
        lo, hi = r["span"]
        for t in near:
            if id(t) in in_rows or t.role != "annotation":
                continue
            c = np.array(_centre(t.box))
            beyond = float(c @ r["normal"]) - r["offset"]
            if abs(float(c @ r["direction"]) - (lo + hi) / 2) <= 0.3 * (hi - lo) + t.item.size_px \
                    and 0 < beyond <= 10 * t.item.size_px:
                options.append((beyond, axis, id(t), t))
    taken_axes, taken = set(), set()
    for beyond, axis, key, t in sorted(options, key=lambda o: o[:3]):
        if axis in taken_axes or key in taken:
            continue
        t.role, t.panel = f"{axis}label", index
        taken_axes.add(axis)
        taken.add(key)


def _ticks(free: list[ShownText], panels: list[Panel], framed: dict[int, bool]) -> None:
    """Rows of two or more texts just below (or above) a panel's box, columns just left (or right).
    A text between two panels is the bottom or left label of the nearer side first: the right
    column of one panel is not the left column of its neighbour."""
    rows: dict[tuple[int, str, int], list[ShownText]] = defaultdict(list)
    for t in free:
        if t.role != "annotation":
            continue
        s = t.item.size_px
        cx, cy = _centre(t.box)
        options = []
        for index, panel in enumerate(panels):
            if panel.box is None or not framed[index]:
                continue
            x0, y0, x1, y1 = panel.box
            if x0 - 2 * s <= cx <= x1 + 2 * s and y1 - 2 <= t.box[1] <= y1 + 2.5 * s:
                options.append((0, t.box[1] - y1, index, "x", round(t.box[1] / max(s * 0.6, 1))))
            if y0 - s <= cy <= y1 + s and x0 - 2.5 * s <= t.box[2] <= x0 + 2:
                options.append((0, x0 - t.box[2], index, "y", round(t.box[2] / max(s * 0.6, 1))))
            if x0 - 2 * s <= cx <= x1 + 2 * s and y0 - 2.5 * s <= t.box[3] <= y0 + 2:
                options.append((1, y0 - t.box[3], index, "x-top", round(t.box[3] / max(s * 0.6, 1))))
            if y0 - s <= cy <= y1 + s and x1 - 2 <= t.box[0] <= x1 + 2.5 * s:
                options.append((1, t.box[0] - x1, index, "y-right", round(t.box[0] / max(s * 0.6, 1))))
        if options:
            _, _, index, side, row = min(options)
            rows[(index, side, row)].append(t)
    for (index, side, _), members in rows.items():
        if len(members) >= 2:
            for t in members:
                t.role, t.panel = ("xtick" if side.startswith("x") else "ytick"), index


# ---------------------------------------------------------------------------------------------
# The description
# ---------------------------------------------------------------------------------------------


def _series(panel: Panel, legend: Legend | None) -> list[dict]:
    """Per artist: what the judge reads of a series (kind, colours, point count)."""
    out: list[dict] = []
    by_artist: dict[str, list[Mark]] = defaultdict(list)
    for m in panel.marks:
        by_artist[m.artist].append(m)
    named = {}
    if legend is not None:
        named = {c: t.text for c, t in zip(legend.handle_colours, legend.entries) if c}
    bar_colours = Counter(hex_colour(m.colour) for m in panel.marks if m.kind == "Rectangle")
    groups = []
    for marks in by_artist.values():
        kinds = defaultdict(list)
        for m in marks:
            kinds[m.kind].append(m)
        if "Line2D" in kinds:
            kinds.pop("PathCollection", None)  # a line's markers are the line's
        kinds.pop("Rectangle", None)  # bars are series by colour, across artists (one per bar)
        groups += [(kind, group) for kind, group in kinds.items()]
    bars = [m for m in panel.marks if m.kind == "Rectangle"]
    if bars:
        groups.append(("Rectangle", bars))
    for kind, marks in groups:
        colours = [hex_colour(m.colour) for m in marks if m.colour is not None]
        first = colours[0] if colours else None
        label = named.get(first, "_unnamed")
        if kind == "Line2D":
            for m in marks:
                n = sum(len(s) for s in m.item.subpaths)
                out.append({"kind": "line", "label": named.get(hex_colour(m.colour), "_unnamed"),
                            "color": hex_colour(m.colour), "n": n if n >= 3 else 2, "drawn": True,
                            "alpha": round(m.item.visible_stroke, 3), "linewidth": round(m.item.stroke_px, 2)})
        elif kind == "Rectangle":
            colour_counts = Counter(colours)
            for colour, n in colour_counts.items():
                # a colour that marks one bar names a category (the axis does); one repeated names a series
                label_of = named.get(colour) or ("_category" if bar_colours[colour] < 2 else f"bars {colour}")
                out.append({"kind": "bars", "label": label_of, "color": colour, "n": n})
        elif kind == "PathCollection":
            uniq = list(dict.fromkeys(colours))
            out.append({"kind": "PathCollection", "label": label, "colors": uniq[:8], "n_colors": len(uniq),
                        "n": len(marks), "alpha": round(marks[0].item.visible_fill or marks[0].item.visible_stroke, 3)})
        elif kind == "Wedge":
            for m in marks:
                out.append({"kind": "wedge", "label": named.get(hex_colour(m.colour), "_unnamed"),
                            "color": hex_colour(m.colour)})
        elif kind == "AxesImage":
            out.append({"kind": "image", "cmap": _cmap_of_image(marks[0].item)})
        else:
            uniq = list(dict.fromkeys(colours))
            entry = {"kind": kind, "label": label, "colors": uniq[:8], "n_colors": len(uniq)}
            if kind == "QuadMesh":
                entry["cmap"] = _cmap_of_colours([m.colour for m in marks if m.colour])
            out.append(entry)
    return out


def _rainbow_luts() -> dict[str, np.ndarray]:
    from matplotlib import colormaps

    from aesenv.kinds.plot.judge import RAINBOW_CMAPS

    return {name: colormaps[name](np.linspace(0, 1, 64))[:, :3] * 255 for name in sorted(RAINBOW_CMAPS)}


_LUTS: dict[str, np.ndarray] | None = None


def _cmap_of_colours(colours: list) -> str:
    """The name of a rainbow colormap the colours all come from ('' for any other)."""
    global _LUTS
    if len(colours) < 6:
        return ""
    if _LUTS is None:
        _LUTS = _rainbow_luts()
    sample = np.asarray(colours[:400], dtype=float).reshape(-1, 3)
    spread = np.ptp(sample, axis=0).max()
    if spread < 80:
        return ""
    for name, lut in _LUTS.items():
        distance = np.sqrt(((sample[:, None, :] - lut[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
        if (distance < 20).mean() > 0.9:
            return name
    return ""


def _cmap_of_image(item: Item) -> str:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(item.image_data)) as image:
            small = np.asarray(image.convert("RGB").resize((16, 16)))
    except (OSError, ValueError):
        return ""
    return _cmap_of_colours([tuple(p) for p in small.reshape(-1, 3)])


def _points_and_boxes(panel: Panel) -> tuple[list, list]:
    points, boxes = [], []
    by_artist: dict[str, list[Mark]] = defaultdict(list)
    for m in panel.marks:
        by_artist[m.artist].append(m)
    for marks in by_artist.values():
        lines = [s for m in marks if m.kind == "Line2D" for s in m.item.subpaths]
        if lines:
            points.append(densify_capped(lines, MAX_POINTS_PER_ARTIST))
        stamps = [_centre(m.item.box) for m in marks if m.kind == "PathCollection"]
        if stamps:
            points.append(cap(np.asarray(stamps, dtype=float), MAX_POINTS_PER_ARTIST))
        for m in marks:
            if m.kind in ("Rectangle", "Wedge", "AxesImage", "PolyCollection", "QuadMesh", "PathPatch"):
                box = m.item.shown_box
                if box and _area(box) > 0:
                    boxes.append([round(v, 1) for v in box])
    all_points = cap(np.concatenate(points), MAX_POINTS_PER_AXES) if points else np.zeros((0, 2))
    return np.round(all_points).astype(int).tolist(), boxes[:MAX_BOXES_PER_AXES]


def describe_scene(scene: Scene, pixels: np.ndarray, text_boxes: dict[str, Box], dpi: float,
                   solid: list[Box] = ()) -> dict:
    """The figure description (`evidence.FigureDescription`'s schema) of what is drawn. `solid`:
    the boxes where our page drew a 3-D scene as a picture (plotly's WebGL scenes): a panel there
    is 3-D, and as it is only pixels, nothing in it (axes, marks) is taken apart."""
    picture = Picture(pixels)
    border = np.concatenate([picture.pixels[0], picture.pixels[-1], picture.pixels[:, 0], picture.pixels[:, -1]])
    figure_bg = picture.mode(border)
    texts, dropped, cut = shown_texts(scene, picture, text_boxes)
    panels, outside = build_panels(scene, picture, figure_bg)
    for panel in panels:
        if panel.box and any(_area(_inter(panel.box, b)) > 0.8 * max(_area(panel.box), _area(b)) for b in solid):
            panel.name = "3d"
    legend_groups: dict[str, list[Item]] = defaultdict(list)
    for panel in panels:
        for key, items in panel.legend_items.items():
            legend_groups[key] += items
    for item in outside:
        legend = next((h for h in item.hints if LEGEND.match(h)), None)
        if legend:
            legend_groups[legend].append(item)
    readable = [t for t in texts if t.legible]
    legends = find_legends(legend_groups, readable, picture, figure_bg)
    for legend in legends:
        cx, cy = _centre(legend.box)
        legend.panel = next((i for i, p in enumerate(panels) if p.box and p.box[0] <= cx <= p.box[2]
                             and p.box[1] <= cy <= p.box[3]), None)
        if legend.panel is None:  # outside every panel: the panel whose group holds it (it covers no data)
            legend.panel = next((i for i, p in enumerate(panels) if legend.key in p.legend_items), None)
    assign_roles(panels, readable, scene.width, scene.height)
    for legend in legends:
        for t in legend.entries:
            t.panel = legend.panel
    colorbars = {i for i, p in enumerate(panels) if _is_colorbar(p)}
    axes = []
    for i, panel in enumerate(panels):
        legend = next((lg for lg in legends if lg.panel == i), None)
        mine = [t for t in texts if t.panel == i]
        points, boxes = _points_and_boxes(panel)
        artists = _artist_counts(panel)
        titles = [t.text for t in mine if t.role == "title"]
        axes.append({
            "index": i, "name": panel.name, "visible": True,
            "axison": bool(panel.decorations) or any(t.role in ("xtick", "ytick", "ztick") for t in mine),
            "colorbar": i in colorbars, "position": [round(v, 1) for v in panel.box],
            "facecolor": _hex(panel.background),
            "title": " ".join(titles), "xlabel": " ".join(t.text for t in mine if t.role == "xlabel"),
            "ylabel": " ".join(t.text for t in mine if t.role == "ylabel"),
            "zlabel": " ".join(t.text for t in mine if t.role == "zlabel"),
            "artists": dict(artists), "n_texts_in_axes": sum(t.role == "annotation" and not t.unkeyed for t in mine), "n_tables": 0,
            "series": _series(panel, legend)[:60],
            "legend": None if legend is None else {
                "axes": i, "bbox": [round(v, 1) for v in legend.box],
                "entries": [t.text[:80] for t in legend.entries][:60], "handle_colors": legend.handle_colours[:60],
                "frame_alpha": legend.frame_alpha},
            "data_points": points, "data_boxes": boxes, "faded_colors": panel.faded[:60]})
    figure_legends = [{"axes": None, "bbox": [round(v, 1) for v in lg.box],
                       "entries": [t.text[:80] for t in lg.entries][:60], "handle_colors": lg.handle_colours[:60],
                       "frame_alpha": lg.frame_alpha} for lg in legends if lg.panel is None][:16]
    text_claims = [{"role": t.role, "text": t.text[:200], "axes": t.panel,
                    "size_pt": round(t.item.size_px * 72.0 / dpi, 2), "size_px": round(t.item.size_px, 2),
                    "rotation": t.item.rotation, "color": _hex(t.colour),
                    "bbox": [round(v, 1) for v in t.box]} for t in texts]
    text_claims += [{"role": "cut", "text": item.text[:200], "axes": None, "size_pt": round(item.size_px * 72.0 / dpi, 2),
                     "size_px": round(item.size_px, 2), "rotation": item.rotation, "color": hex_colour(item.fill),
                     "bbox": [round(v, 1) for v in box]} for item, box in cut]
    suptitle = " ".join(t.text for t in texts if t.role == "suptitle")
    return {"schema_version": 2, "matplotlib": "", "width_px": float(scene.width), "height_px": float(scene.height),
            "dpi": float(dpi), "facecolor": _hex(figure_bg), "suptitle": suptitle, "axes": axes[:64],
            "figure_legends": figure_legends, "texts": text_claims[:MAX_TEXTS], "n_texts": len(text_claims),
            "dropped_texts": dropped[:40]}


def _artist_counts(panel: Panel) -> dict[str, int]:
    """Artists by kind as matplotlib counts them: every patch (bar, wedge, box) is one; a line with
    its markers is one; a collection (markers, a mesh, filled polygons) is one per group."""
    counts: Counter = Counter()
    by_artist: dict[str, set[str]] = defaultdict(set)
    for m in panel.marks:
        if m.kind in ("Rectangle", "Wedge", "PathPatch"):
            counts[m.kind] += 1
        else:
            by_artist[m.artist].add(m.kind)
    for kinds in by_artist.values():
        if "Line2D" in kinds:
            kinds.discard("PathCollection")
        counts.update(kinds)
    return dict(counts)


def _is_colorbar(panel: Panel) -> bool:
    """A narrow panel filled by one image or mesh."""
    if panel.box is None or not panel.marks:
        return False
    w, h = panel.box[2] - panel.box[0], panel.box[3] - panel.box[1]
    if min(w, h) <= 0 or max(w, h) / min(w, h) < 6:
        return False
    kinds = {m.kind for m in panel.marks}
    if not kinds <= {"AxesImage", "QuadMesh", "Rectangle", "PathCollection"}:
        return False
    covered = _area(_union([m.item.box for m in panel.marks]))
    return covered >= 0.8 * _area(panel.box)
