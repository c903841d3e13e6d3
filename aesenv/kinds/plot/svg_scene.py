"""A figure's SVG, read on the host as data: what it draws, and a clean copy to draw it from.

The sandboxed script leaves its figures open; the worker saves each as SVG (texts as `<text>`).
Everything in that file is the script's to choose, so it is read here as untrusted data:
`defusedxml` (no entity expansion, no external references), bounded bytes, elements, depth and
coordinates. Reading it flattens it into `Scene`: every shape, marker, image and text in paint
order, in the figure's pixels, with its fill and stroke, its effective opacity (the product
along its groups), and the clip regions it is drawn under. Anything this reader does not model
(CSS rules, filters, masks, scripts, foreign objects, links, animations, patterns, `textLength`,
external images) is dropped, and `Scene.svg` is re-written from the model alone, so the browser
draws exactly what the description is made from: a forged SVG can only be drawn as it is
described. Group ids are kept as hints (`Item.hints`) for grouping marks into artists; nothing
decides a role or a visibility from them.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_SVG_BYTES = 24 * 1024 * 1024
MAX_ELEMENTS = 300_000
MAX_DEPTH = 48
MAX_COORDINATES = 4_000_000  # numbers in path data, summed over the figure
MAX_IMAGE_PIXELS = 16_000_000  # per embedded raster (an imshow, a rasterised artist)
MAX_TEXT_CHARS = 400
MAX_SIZE_PX = 12_000  # a figure's side in pixels, once scaled
CURVE_STEPS = 8  # a Bézier segment is sampled at this many points for geometry

Box = tuple[float, float, float, float]
RGB = tuple[int, int, int]


class BadFigure(ValueError):
    """The SVG cannot be used as a figure: the answer's failure (the message says why)."""


# ---------------------------------------------------------------------------------------------
# Values: colours, lengths, transforms, CSS declarations
# ---------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_UNITS = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}
_SAFE_FAMILY = re.compile(r"[^\w \-.,'\"]", re.UNICODE)


def _finite(value: float, limit: float = 1e7) -> float:
    if not math.isfinite(value) or abs(value) > limit:
        raise BadFigure(f"a number out of range ({value!r})")
    return value


def parse_length(text: str | None, default: float | None = None) -> float | None:
    """A length in CSS pixels ('12', '12px', '9pt'); None (or default) when absent or relative."""
    if text is None:
        return default
    match = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-z]*)\s*", text)
    if not match or match.group(2) not in _UNITS:
        return default
    return _finite(float(match.group(1)) * _UNITS[match.group(2)])


def parse_colour(text: str | None) -> RGB | None | str:
    """(r, g, b) for a colour, None for 'none'/unknown paint, 'inherit' to keep the parent's.
    The alpha of rgba()/#rrggbbaa is not a colour: `parse_alpha_of` reads it."""
    if text is None:
        return "inherit"
    value = text.strip().lower()
    if value in ("inherit", ""):
        return "inherit"
    if value in ("none", "transparent") or value.startswith(("url(", "currentcolor")):
        return None
    rgba = _rgba(value)
    return None if rgba is None else rgba[:3]


def _rgba(value: str) -> tuple[int, int, int, float] | None:
    match = re.fullmatch(r"rgba?\(\s*([^)]*)\)", value)
    if match:
        parts = [p.strip() for p in re.split(r"[,\s/]+", match.group(1)) if p.strip()]
        if len(parts) not in (3, 4):
            return None
        try:
            rgb = [float(p[:-1]) * 2.55 if p.endswith("%") else float(p) for p in parts[:3]]
            alpha = float(parts[3][:-1]) / 100 if len(parts) == 4 and parts[3].endswith("%") else (
                float(parts[3]) if len(parts) == 4 else 1.0)
        except ValueError:
            return None
        if not all(math.isfinite(v) for v in (*rgb, alpha)):
            return None
        r, g, b = (int(round(min(255.0, max(0.0, v)))) for v in rgb)
        return r, g, b, min(1.0, max(0.0, alpha))
    from matplotlib import colors as mcolors  # named and #hex colours, as CSS spells them

    try:
        r, g, b, a = mcolors.to_rgba(value)
    except (ValueError, TypeError):
        return None
    return int(round(r * 255)), int(round(g * 255)), int(round(b * 255)), float(a)


def colour_alpha(text: str | None) -> float:
    """The alpha a colour value itself carries (rgba(), #rrggbbaa); 1 otherwise."""
    if not text:
        return 1.0
    rgba = _rgba(text.strip().lower())
    return rgba[3] if rgba else 1.0


def hex_colour(rgb: RGB | None) -> str | None:
    return None if rgb is None else "#%02x%02x%02x" % rgb


def parse_style(text: str | None) -> dict[str, str]:
    """CSS declarations of a style attribute, lower-case names; `font` is split into its parts."""
    out: dict[str, str] = {}
    for part in (text or "").split(";"):
        if ":" not in part:
            continue
        name, value = part.split(":", 1)
        name, value = name.strip().lower(), value.replace("!important", "").strip()
        if name == "font":
            out.update(_font_shorthand(value))
        elif name:
            out[name] = value
    return out


def _font_shorthand(value: str) -> dict[str, str]:
    match = re.match(r"\s*((?:(?:italic|oblique|normal|bold|bolder|lighter|\d{3})\s+)*)"
                     r"([\d.]+(?:px|pt|em)?)(?:/[\d.]+\w*)?\s+(.+)", value)
    if not match:
        return {}
    out = {"font-size": match.group(2), "font-family": match.group(3)}
    for word in match.group(1).split():
        if word in ("italic", "oblique"):
            out["font-style"] = word
        elif word in ("bold", "bolder") or word.isdigit():
            out["font-weight"] = word
    return out


Matrix = tuple[float, float, float, float, float, float]  # a b c d e f, as SVG's matrix()
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def compose(m: Matrix, n: Matrix) -> Matrix:
    """m then... : the matrix of applying n first, then m (SVG nesting: parent · child)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2,
            a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def parse_transform(text: str | None) -> Matrix:
    """An SVG transform list as one matrix; BadFigure for a malformed or non-finite one."""
    m = IDENTITY
    if not text:
        return m
    for name, args in re.findall(r"([a-zA-Z]+)\s*\(([^)]*)\)", text):
        v = [_finite(float(x)) for x in _NUMBER.findall(args)]
        name = name.lower()
        if name == "matrix" and len(v) == 6:
            step = tuple(v)
        elif name == "translate" and len(v) in (1, 2):
            step = (1.0, 0.0, 0.0, 1.0, v[0], v[1] if len(v) == 2 else 0.0)
        elif name == "scale" and len(v) in (1, 2):
            step = (v[0], 0.0, 0.0, v[1] if len(v) == 2 else v[0], 0.0, 0.0)
        elif name == "rotate" and len(v) in (1, 3):
            r = math.radians(v[0])
            step = (math.cos(r), math.sin(r), -math.sin(r), math.cos(r), 0.0, 0.0)
            if len(v) == 3:
                step = compose(compose((1, 0, 0, 1, v[1], v[2]), step), (1, 0, 0, 1, -v[1], -v[2]))
        elif name == "skewx" and len(v) == 1:
            step = (1.0, 0.0, math.tan(math.radians(v[0])), 1.0, 0.0, 0.0)
        elif name == "skewy" and len(v) == 1:
            step = (1.0, math.tan(math.radians(v[0])), 0.0, 1.0, 0.0, 0.0)
        else:
            raise BadFigure(f"unreadable transform {name}({args[:40]})")
        m = compose(m, step)
    if not all(math.isfinite(x) for x in m):
        raise BadFigure("a transform is not finite")
    return m


def apply(m: Matrix, pts: np.ndarray) -> np.ndarray:
    a, b, c, d, e, f = m
    return np.column_stack([a * pts[:, 0] + c * pts[:, 1] + e, b * pts[:, 0] + d * pts[:, 1] + f])


def scale_of(m: Matrix) -> float:
    """How much the matrix scales lengths (geometric mean of its axes)."""
    return math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))


def smallest_scale(m: Matrix) -> float:
    """How much the matrix shrinks lengths in the direction it shrinks them most (its smallest
    singular value): a glyph drawn through it is this many times its size on its thinnest side,
    however the matrix squeezes, skews or stretches it."""
    a, b, c, d = m[:4]
    total = a * a + b * b + c * c + d * d
    det = a * d - b * c
    return math.sqrt(max(0.0, (total - math.sqrt(max(0.0, total * total - 4 * det * det))) / 2))


# ---------------------------------------------------------------------------------------------
# Path data
# ---------------------------------------------------------------------------------------------

_PATH_TOKEN = re.compile(r"([MmLlHhVvCcSsQqTtAaZz])|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_ARITY = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "s": 4, "q": 4, "t": 2, "a": 7, "z": 0}


@dataclass
class PathData:
    """A path in absolute commands (re-emitted as is) and its outline sampled into points."""

    commands: list[tuple[str, tuple[float, ...]]]
    subpaths: list[np.ndarray]
    closed: list[bool]
    curved: bool
    n_numbers: int


def parse_path(d: str) -> PathData:
    """Absolute M/L/C/Q/A/Z commands and sampled outlines for an SVG path's `d`."""
    tokens = _PATH_TOKEN.findall(d)
    commands: list[tuple[str, tuple[float, ...]]] = []
    subpaths: list[list[tuple[float, float]]] = []
    closed: list[bool] = []
    curved = False
    x = y = sx = sy = 0.0
    last_ctrl: tuple[float, float] | None = None
    last_cmd = ""
    i, n_numbers = 0, 0
    cmd = ""
    current: list[tuple[float, float]] = []

    def start_subpath() -> None:
        nonlocal current
        if current:
            subpaths.append(current)
            closed.append(False)
        current = []

    while i < len(tokens):
        letter, number = tokens[i]
        if letter:
            cmd = letter
            i += 1
            if cmd in "Zz":
                commands.append(("Z", ()))
                if current:
                    current.append((sx, sy))
                    subpaths.append(current)
                    closed.append(True)
                    current = []
                x, y = sx, sy
                last_cmd = "z"
                continue
        elif not cmd:
            raise BadFigure("path data does not start with a command")
        arity = _ARITY[cmd.lower()]
        args = []
        for _ in range(arity):
            if i >= len(tokens) or tokens[i][0]:
                raise BadFigure("path data ends inside a command")
            args.append(_finite(float(tokens[i][1])))
            i += 1
        n_numbers += arity
        rel = cmd.islower()
        kind = cmd.lower()
        ox, oy = (x, y) if rel else (0.0, 0.0)
        if kind == "m":
            start_subpath()
            x, y = ox + args[0], oy + args[1]
            sx, sy = x, y
            current = [(x, y)]
            commands.append(("M", (x, y)))
            cmd = "l" if rel else "L"  # further pairs are line-tos
            last_ctrl = None
        elif kind in ("l", "h", "v"):
            if kind == "l":
                x, y = ox + args[0], oy + args[1]
            elif kind == "h":
                x = (x if rel else 0.0) + args[0]
            else:
                y = (y if rel else 0.0) + args[0]
            if not current:
                current = [(sx, sy)]
            current.append((x, y))
            commands.append(("L", (x, y)))
            last_ctrl = None
        elif kind in ("c", "s"):
            if kind == "c":
                c1 = (ox + args[0], oy + args[1])
                c2, end = (ox + args[2], oy + args[3]), (ox + args[4], oy + args[5])
            else:
                c1 = (2 * x - last_ctrl[0], 2 * y - last_ctrl[1]) if last_cmd in ("c", "s") and last_ctrl else (x, y)
                c2, end = (ox + args[0], oy + args[1]), (ox + args[2], oy + args[3])
            if not current:
                current = [(x, y)]
            for k in range(1, CURVE_STEPS + 1):
                t = k / CURVE_STEPS
                u = 1 - t
                current.append((u ** 3 * x + 3 * u * u * t * c1[0] + 3 * u * t * t * c2[0] + t ** 3 * end[0],
                                u ** 3 * y + 3 * u * u * t * c1[1] + 3 * u * t * t * c2[1] + t ** 3 * end[1]))
            commands.append(("C", (*c1, *c2, *end)))
            last_ctrl = c2
            x, y = end
            curved = True
        elif kind in ("q", "t"):
            if kind == "q":
                c1, end = (ox + args[0], oy + args[1]), (ox + args[2], oy + args[3])
            else:
                c1 = (2 * x - last_ctrl[0], 2 * y - last_ctrl[1]) if last_cmd in ("q", "t") and last_ctrl else (x, y)
                end = (ox + args[0], oy + args[1])
            if not current:
                current = [(x, y)]
            for k in range(1, CURVE_STEPS + 1):
                t = k / CURVE_STEPS
                u = 1 - t
                current.append((u * u * x + 2 * u * t * c1[0] + t * t * end[0],
                                u * u * y + 2 * u * t * c1[1] + t * t * end[1]))
            commands.append(("Q", (*c1, *end)))
            last_ctrl = c1
            x, y = end
            curved = True
        else:  # arc: kept as an arc, sampled along it (plotly's markers are arcs)
            end = (ox + args[5], oy + args[6])
            if not current:
                current = [(x, y)]
            current += _arc_points((x, y), end, abs(args[0]), abs(args[1]), args[2], bool(args[3]), bool(args[4]))
            commands.append(("A", (abs(args[0]), abs(args[1]), args[2], 1.0 if args[3] else 0.0,
                                   1.0 if args[4] else 0.0, *end)))
            x, y = end
            last_ctrl = None
            curved = True
        last_cmd = kind
    if current:
        subpaths.append(current)
        closed.append(False)
    return PathData(commands, [np.asarray(s, dtype=float) for s in subpaths], closed, curved, n_numbers)


def _arc_points(start, end, rx, ry, rotation, large, sweep) -> list[tuple[float, float]]:
    """Points along an SVG elliptical arc (the spec's endpoint-to-centre conversion)."""
    if rx == 0 or ry == 0 or start == end:
        return [end]
    phi = math.radians(rotation)
    cos, sin = math.cos(phi), math.sin(phi)
    dx, dy = (start[0] - end[0]) / 2, (start[1] - end[1]) / 2
    x1, y1 = cos * dx + sin * dy, -sin * dx + cos * dy
    grow = (x1 / rx) ** 2 + (y1 / ry) ** 2
    if grow > 1:
        rx, ry = rx * math.sqrt(grow), ry * math.sqrt(grow)
    num = rx * rx * ry * ry - rx * rx * y1 * y1 - ry * ry * x1 * x1
    factor = math.sqrt(max(0.0, num / (rx * rx * y1 * y1 + ry * ry * x1 * x1)))
    if large == sweep:
        factor = -factor
    cx1, cy1 = factor * rx * y1 / ry, -factor * ry * x1 / rx
    cx = cos * cx1 - sin * cy1 + (start[0] + end[0]) / 2
    cy = sin * cx1 + cos * cy1 + (start[1] + end[1]) / 2
    a0 = math.atan2((y1 - cy1) / ry, (x1 - cx1) / rx)
    a1 = math.atan2((-y1 - cy1) / ry, (-x1 - cx1) / rx)
    delta = a1 - a0
    if sweep and delta < 0:
        delta += 2 * math.pi
    elif not sweep and delta > 0:
        delta -= 2 * math.pi
    steps = max(2, int(abs(delta) / (math.pi / 8)) + 1)
    out = []
    for k in range(1, steps + 1):
        a = a0 + delta * k / steps
        px, py = rx * math.cos(a), ry * math.sin(a)
        out.append((cos * px - sin * py + cx, sin * px + cos * py + cy))
    return out


def path_string(commands: list[tuple[str, tuple[float, ...]]]) -> str:
    return " ".join(c + " " + " ".join(f"{v:.6g}" for v in args) if args else c for c, args in commands)


def _shape_path(tag: str, el: ET.Element) -> str | None:
    """`d` for the basic shapes (rect, circle, ellipse, line, polyline, polygon)."""
    def num(name: str, default: float = 0.0) -> float:
        value = parse_length(el.get(name), default)
        return default if value is None else value

    if tag == "rect":
        x, y, w, h = num("x"), num("y"), num("width"), num("height")
        return None if w <= 0 or h <= 0 else f"M {x} {y} L {x + w} {y} L {x + w} {y + h} L {x} {y + h} Z"
    if tag in ("circle", "ellipse"):
        cx, cy = num("cx"), num("cy")
        rx = num("r") if tag == "circle" else num("rx")
        ry = num("r") if tag == "circle" else num("ry")
        if rx <= 0 or ry <= 0:
            return None
        k = 0.5523
        return (f"M {cx + rx} {cy} C {cx + rx} {cy + k * ry} {cx + k * rx} {cy + ry} {cx} {cy + ry} "
                f"C {cx - k * rx} {cy + ry} {cx - rx} {cy + k * ry} {cx - rx} {cy} "
                f"C {cx - rx} {cy - k * ry} {cx - k * rx} {cy - ry} {cx} {cy - ry} "
                f"C {cx + k * rx} {cy - ry} {cx + rx} {cy - k * ry} {cx + rx} {cy} Z")
    if tag == "line":
        return f"M {num('x1')} {num('y1')} L {num('x2')} {num('y2')}"
    if tag in ("polyline", "polygon"):
        values = _NUMBER.findall(el.get("points", ""))
        if len(values) < 4:
            return None
        pairs = [f"{values[i]} {values[i + 1]}" for i in range(0, len(values) - 1, 2)]
        return "M " + " L ".join(pairs) + (" Z" if tag == "polygon" else "")
    return None


# ---------------------------------------------------------------------------------------------
# The scene
# ---------------------------------------------------------------------------------------------


@dataclass
class Clip:
    """A clip region in figure pixels: its outline and its box."""

    outline: list[np.ndarray]
    box: Box
    curved: bool


class Piece(NamedTuple):
    """A run of a text's characters drawn with one style (a tspan; mathtext writes one per glyph)."""

    text: str
    size_px: float  # its em as drawn: font size x the smallest scale of the text's transform
    fill: RGB | None
    alpha: float  # its fill's effective opacity, within its text element


@dataclass
class Item:
    """One drawn thing in paint order, in figure pixels."""

    kind: str  # "path" | "marker" | "image" | "text"
    order: int
    hints: tuple[str, ...]  # ids of the groups it is in (matplotlib's gids): grouping hints only
    box: Box  # before clipping
    opacity: float  # product of `opacity` along its groups and itself
    fill: RGB | None = None
    fill_alpha: float = 0.0  # fill-opacity x the colour's own alpha (x opacity: see `alpha_of_fill`)
    stroke: RGB | None = None
    stroke_alpha: float = 0.0
    stroke_px: float = 0.0
    clips: list[Clip] = field(default_factory=list)
    # paths and markers
    subpaths: list[np.ndarray] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)
    curved: bool = False
    marker: str = ""  # markers: the shape they stamp (the def they use)
    # texts
    key: str = ""  # the id the clean copy gives it (to find its drawn box)
    text: str = ""
    size_px: float = 0.0  # its largest piece's em, as drawn (font size x the transform's smallest scale)
    pieces: tuple[Piece, ...] = ()  # its runs of characters (tspans), in reading order
    rotation: float = 0.0
    family: str = ""
    anchor_point: tuple[float, float] = (0.0, 0.0)
    # images
    image_size: tuple[int, int] = (0, 0)
    image_data: bytes = b""

    @property
    def visible_fill(self) -> float:
        return self.opacity * self.fill_alpha if self.fill is not None else 0.0

    @property
    def visible_stroke(self) -> float:
        return self.opacity * self.stroke_alpha if self.stroke is not None and self.stroke_px > 0 else 0.0

    @property
    def clip_box(self) -> Box | None:
        if not self.clips:
            return None
        x0, y0, x1, y1 = self.clips[0].box
        for c in self.clips[1:]:
            x0, y0, x1, y1 = max(x0, c.box[0]), max(y0, c.box[1]), min(x1, c.box[2]), min(y1, c.box[3])
        return x0, y0, x1, y1

    @property
    def shown_box(self) -> Box | None:
        """The part of its box inside its clips (None when clipped away)."""
        clip = self.clip_box
        x0, y0, x1, y1 = self.box
        if clip is not None:
            x0, y0, x1, y1 = max(x0, clip[0]), max(y0, clip[1]), min(x1, clip[2]), min(y1, clip[3])
        if x1 < x0 or y1 < y0:
            return None
        return x0, y0, x1, y1


@dataclass
class Scene:
    width: int
    height: int
    items: list[Item]
    svg: str  # the clean copy the browser draws
    scale: float = 1.0  # figure pixels per unit of the SVG read (its viewBox from 0, 0)

    @property
    def texts(self) -> list[Item]:
        return [i for i in self.items if i.kind == "text"]


@dataclass
class _Paint:
    fill: RGB | None = (0, 0, 0)
    fill_alpha: float = 1.0
    stroke: RGB | None = None
    stroke_alpha: float = 1.0
    stroke_width: float = 1.0
    font_size: float = 16.0
    font_family: str = "sans-serif"
    font_style: str = "normal"
    font_weight: str = "normal"
    anchor: str = "start"
    dasharray: str = ""
    linecap: str = ""
    linejoin: str = ""
    fill_rule: str = "nonzero"

    def copy(self) -> "_Paint":
        return _Paint(**self.__dict__)


_PRESENTATION = ("fill", "fill-opacity", "stroke", "stroke-opacity", "stroke-width", "opacity", "font-size",
                 "font-family", "font-style", "font-weight", "text-anchor", "stroke-dasharray", "stroke-linecap",
                 "stroke-linejoin", "fill-rule", "display", "visibility")


def _declarations(el: ET.Element) -> dict[str, str]:
    """Presentation attributes, then the style attribute over them (as CSS ranks them)."""
    out = {name: el.get(name) for name in _PRESENTATION if el.get(name) is not None}
    out.update({k: v for k, v in parse_style(el.get("style")).items() if k in _PRESENTATION})
    return out


def _unit_float(text: str, default: float = 1.0) -> float:
    try:
        value = float(text.strip().rstrip("%")) / (100.0 if text.strip().endswith("%") else 1.0)
    except ValueError:
        return default
    return min(1.0, max(0.0, value)) if math.isfinite(value) else default


def _apply_paint(paint: _Paint, decl: dict[str, str]) -> tuple[_Paint, float]:
    """The paint inherited by the element's content, and the element's own opacity."""
    p = paint.copy()
    for name, attr in (("fill", "fill"), ("stroke", "stroke")):
        if name in decl:
            colour = parse_colour(decl[name])
            if colour != "inherit":
                setattr(p, attr, colour)
                setattr(p, f"{attr}_alpha", colour_alpha(decl[name]) if colour is not None else 0.0)
    if "fill-opacity" in decl:
        p.fill_alpha = _unit_float(decl["fill-opacity"]) * (colour_alpha(decl.get("fill")) if "fill" in decl else 1.0)
    if "stroke-opacity" in decl:
        p.stroke_alpha = _unit_float(decl["stroke-opacity"]) * (
            colour_alpha(decl.get("stroke")) if "stroke" in decl else 1.0)
    if "stroke-width" in decl:
        width = parse_length(decl["stroke-width"])
        if width is not None and width >= 0:
            p.stroke_width = min(width, 1e4)
    if "font-size" in decl:
        size = parse_length(decl["font-size"])
        if size is not None and size >= 0:
            p.font_size = min(size, 5000.0)
    if "font-family" in decl:
        p.font_family = _SAFE_FAMILY.sub("", decl["font-family"])[:300] or p.font_family
    if decl.get("font-style", "").strip() in ("normal", "italic", "oblique"):
        p.font_style = decl["font-style"].strip()
    weight = decl.get("font-weight", "").strip()
    if weight in ("normal", "bold", "bolder", "lighter") or re.fullmatch(r"[1-9]00", weight):
        p.font_weight = weight
    if decl.get("text-anchor", "").strip() in ("start", "middle", "end"):
        p.anchor = decl["text-anchor"].strip()
    if "stroke-dasharray" in decl:
        dashes = _NUMBER.findall(decl["stroke-dasharray"])
        p.dasharray = " ".join(f"{_finite(float(v)):.4g}" for v in dashes[:20] if float(v) >= 0)
    for name, attr, allowed in (("stroke-linecap", "linecap", ("butt", "round", "square")),
                                ("stroke-linejoin", "linejoin", ("miter", "round", "bevel")),
                                ("fill-rule", "fill_rule", ("nonzero", "evenodd"))):
        if decl.get(name, "").strip() in allowed:
            setattr(p, attr, decl[name].strip())
    opacity = _unit_float(decl["opacity"]) if "opacity" in decl else 1.0
    return p, opacity


def _local(tag: object) -> str | None:
    if not isinstance(tag, str) or not tag.startswith("{" + SVG_NS + "}"):
        return None
    return tag[len(SVG_NS) + 2:]


def _href(el: ET.Element) -> str:
    return (el.get(f"{{{XLINK_NS}}}href") or el.get("href") or "").strip()


def png_header_size(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 24 and data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


class _Reader:
    """One pass over the parsed SVG: the model and its clean copy, together."""

    def __init__(self, root: ET.Element, px_per_unit: float) -> None:
        self.root = root
        self.elements = 0
        self.numbers = 0
        self.order = 0
        self.items: list[Item] = []
        self.defs: dict[str, ET.Element] = {}
        self.marker_ids: dict[str, str] = {}  # def id in the input -> id of the clean marker shape
        self.clip_ids: dict[tuple, str] = {}
        self.out_defs: list[ET.Element] = []
        self.px = px_per_unit
        self.n_texts = 0
        self._clips: dict[tuple, Clip | None] = {}
        self._clip_names: dict[int, str] = {}
        self._last_wrap: tuple[ET.Element, tuple[int, ...], ET.Element] | None = None
        for el in root.iter():
            self.elements += 1
            if self.elements > MAX_ELEMENTS:
                raise BadFigure(f"the SVG has over {MAX_ELEMENTS:,} elements")
            if el.get("id"):
                self.defs.setdefault(el.get("id"), el)

    # ---------------------------------------------------------------- clips

    def _to_px(self, m: Matrix) -> Matrix:
        return compose((self.px, 0.0, 0.0, self.px, 0.0, 0.0), m)

    def _clip(self, ref: str, ctm: Matrix) -> Clip | None:
        """The clip region a `clip-path: url(#id)` names, in figure pixels (None: unknown, ignored)."""
        key = (ref, ctm)
        if key not in self._clips:
            self._clips[key] = self._read_clip(ref, ctm)
        return self._clips[key]

    def _read_clip(self, ref: str, ctm: Matrix) -> Clip | None:
        match = re.fullmatch(r"\s*url\(\s*['\"]?#([^'\")]+)['\"]?\s*\)\s*", ref or "")
        if not match:
            return None
        element = self.defs.get(match.group(1))
        if element is None or _local(element.tag) != "clipPath":
            return None
        outline: list[np.ndarray] = []
        curved = False
        for child in element:
            tag = _local(child.tag)
            d = child.get("d") if tag == "path" else _shape_path(tag or "", child)
            if not d:
                continue
            data = parse_path(d)
            self._count(data.n_numbers)
            m = self._to_px(compose(ctm, parse_transform(child.get("transform"))))
            outline += [apply(m, s) for s in data.subpaths if len(s)]
            curved |= data.curved or not _is_rectangle(data)
        if not outline:
            return Clip([], (0.0, 0.0, 0.0, 0.0), False)  # clipped to nothing
        pts = np.concatenate(outline)
        return Clip(outline, (float(pts[:, 0].min()), float(pts[:, 1].min()),
                              float(pts[:, 0].max()), float(pts[:, 1].max())), curved)

    def _clip_id(self, clip: Clip) -> str:
        if id(clip) in self._clip_names:
            return self._clip_names[id(clip)]
        key = tuple(np.round(np.concatenate(clip.outline), 2).ravel().tolist()) if clip.outline else ()
        if key not in self.clip_ids:
            ident = f"c{len(self.clip_ids)}"
            self.clip_ids[key] = ident
            element = ET.Element("clipPath", {"id": ident, "clipPathUnits": "userSpaceOnUse"})
            d = " ".join("M " + " L ".join(f"{x:.3f} {y:.3f}" for x, y in s) + " Z" for s in clip.outline)
            ET.SubElement(element, "path", {"d": d or "M 0 0 Z"})
            self.out_defs.append(element)
        self._clip_names[id(clip)] = self.clip_ids[key]
        return self.clip_ids[key]

    def _count(self, numbers: int) -> None:
        self.numbers += numbers
        if self.numbers > MAX_COORDINATES:
            raise BadFigure(f"the SVG has over {MAX_COORDINATES:,} coordinates")

    # ---------------------------------------------------------------- walk

    def walk(self, el: ET.Element, out: ET.Element, ctm: Matrix, paint: _Paint, opacity: float,
             clips: list[Clip], hints: tuple[str, ...], depth: int) -> None:
        if depth > MAX_DEPTH:
            raise BadFigure(f"the SVG nests deeper than {MAX_DEPTH} levels")
        for child in el:
            tag = _local(child.tag)
            if tag not in ("g", "path", "use", "text", "image", "rect", "circle", "ellipse", "line", "polyline",
                           "polygon", "a", "switch"):
                continue  # defs, clipPath, style, metadata, script, foreignObject, filters...: not drawn
            decl = _declarations(child)
            if decl.get("display", "").strip() == "none" or _unmodelled(child):
                continue
            child_paint, own_opacity = _apply_paint(paint, decl)
            child_opacity = opacity * own_opacity
            if child_opacity <= 0:
                continue
            m = compose(ctm, parse_transform(child.get("transform")))
            child_clips = clips
            if child.get("clip-path") or "clip-path" in parse_style(child.get("style")):
                clip = self._clip(child.get("clip-path") or parse_style(child.get("style"))["clip-path"], m)
                if clip is not None:
                    child_clips = clips + [clip]
            hidden = decl.get("visibility", "").strip() in ("hidden", "collapse")
            child_hints = hints + ((child.get("id")[:80],) if child.get("id") else ()) + (
                ("." + " ".join(child.get("class").split())[:80],) if child.get("class") else ())
            if tag in ("g", "a", "switch"):
                self.walk(child, out, m, child_paint, child_opacity, child_clips, child_hints, depth + 1)
            elif hidden:
                continue
            elif tag == "text":
                self._text(child, out, m, child_paint, child_opacity, child_clips, child_hints)
            elif tag == "image":
                self._image(child, out, m, child_opacity, child_clips, child_hints)
            elif tag == "use":
                self._use(child, out, m, child_paint, child_opacity, child_clips, child_hints)
            else:
                d = child.get("d") if tag == "path" else _shape_path(tag, child)
                if d:
                    self._path(d, out, m, child_paint, child_opacity, child_clips, child_hints)

    def _wrap(self, out: ET.Element, clips: list[Clip]) -> ET.Element:
        """Where a drawn element goes in the clean copy: inside one group per clip region."""
        if not clips:
            return out
        key = tuple(id(c) for c in clips)
        if self._last_wrap and self._last_wrap[0] is out and self._last_wrap[1] == key and len(out) \
                and out[-1] is self._last_wrap[2]:
            return self._innermost(self._last_wrap[2], len(clips))
        parent = out
        for clip in clips:
            parent = ET.SubElement(parent, "g", {"clip-path": f"url(#{self._clip_id(clip)})"})
        self._last_wrap = (out, key, out[-1])
        return parent

    @staticmethod
    def _innermost(group: ET.Element, depth: int) -> ET.Element:
        for _ in range(depth - 1):
            group = group[0]
        return group

    @staticmethod
    def _style(paint: _Paint, opacity: float, *, text: bool = False) -> str:
        parts = [f"fill:{hex_colour(paint.fill) or 'none'}", f"fill-opacity:{paint.fill_alpha:.4g}",
                 f"fill-rule:{paint.fill_rule}"]
        if text:
            parts += [f"font-size:{paint.font_size:.4g}px", f"font-family:{paint.font_family}",
                      f"font-style:{paint.font_style}", f"font-weight:{paint.font_weight}",
                      f"text-anchor:{paint.anchor}", "white-space:pre"]
        parts += [f"stroke:{hex_colour(paint.stroke) or 'none'}", f"stroke-opacity:{paint.stroke_alpha:.4g}",
                  f"stroke-width:{paint.stroke_width:.4g}"]
        if paint.dasharray:
            parts.append(f"stroke-dasharray:{paint.dasharray}")
        for name, value in (("stroke-linecap", paint.linecap), ("stroke-linejoin", paint.linejoin)):
            if value:
                parts.append(f"{name}:{value}")
        parts.append(f"opacity:{opacity:.4g}")
        return ";".join(parts)

    def _item(self, kind: str, hints, box: Box, opacity: float, paint: _Paint, m: Matrix, clips, **extra) -> Item:
        self.order += 1
        item = Item(kind=kind, order=self.order, hints=hints, box=box, opacity=opacity, fill=paint.fill,
                    fill_alpha=paint.fill_alpha if paint.fill is not None else 0.0, stroke=paint.stroke,
                    stroke_alpha=paint.stroke_alpha if paint.stroke is not None else 0.0,
                    stroke_px=paint.stroke_width * scale_of(m) * self.px, clips=list(clips), **extra)
        self.items.append(item)
        return item

    def _path(self, d: str, out, m: Matrix, paint: _Paint, opacity: float, clips, hints) -> None:
        data = parse_path(d)
        self._count(data.n_numbers)
        if not data.subpaths:
            return
        px = self._to_px(m)
        subpaths = [apply(px, s) for s in data.subpaths]
        pts = np.concatenate(subpaths)
        box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
        self._item("path", hints, box, opacity, paint, m, clips, subpaths=subpaths, closed=data.closed,
                   curved=data.curved)
        ET.SubElement(self._wrap(out, clips), "path", {"d": path_string(data.commands), "transform": _matrix(px),
                                                       "style": self._style(paint, opacity)})

    def _use(self, el, out, m: Matrix, paint: _Paint, opacity: float, clips, hints) -> None:
        """A `use` of a path def: matplotlib's markers. Drawn as a stamp of a clean copy of the shape."""
        href = _href(el)
        target = self.defs.get(href[1:]) if href.startswith("#") else None
        if target is None or _local(target.tag) != "path" or not target.get("d"):
            return
        x, y = parse_length(el.get("x"), 0.0), parse_length(el.get("y"), 0.0)
        m = compose(m, (1.0, 0.0, 0.0, 1.0, x, y))
        own, own_opacity = _apply_paint(paint, _declarations(target))  # the def's own style wins
        opacity *= own_opacity
        if opacity <= 0:
            return
        m = compose(m, parse_transform(target.get("transform")))
        data = parse_path(target.get("d"))
        ident = self.marker_ids.get(href)
        if ident is None:
            self._count(data.n_numbers)
            ident = f"m{len(self.marker_ids)}"
            self.marker_ids[href] = ident
            self.out_defs.append(ET.Element("path", {"id": ident, "d": path_string(data.commands)}))
        if not data.subpaths:
            return
        px = self._to_px(m)
        subpaths = [apply(px, s) for s in data.subpaths]
        pts = np.concatenate(subpaths)
        box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
        self._item("marker", hints, box, opacity, own, m, clips, subpaths=subpaths, closed=data.closed,
                   curved=data.curved, marker=ident)
        ET.SubElement(self._wrap(out, clips), "use", {"href": f"#{ident}", "transform": _matrix(px),
                                                      "style": self._style(own, opacity)})

    def _text(self, el, out, m: Matrix, paint: _Paint, opacity: float, clips, hints) -> None:
        """A text and its tspans (matplotlib's mathtext: one tspan per glyph, placed by x and y)."""
        pieces: list[tuple[float, float, str, _Paint, float]] = []  # x, y, text, paint, its own opacity
        x0, y0 = parse_length(el.get("x"), 0.0), parse_length(el.get("y"), 0.0)
        if el.text and el.text.strip():
            pieces.append((x0, y0, el.text, paint, 1.0))
        for span in el:
            if _local(span.tag) != "tspan":
                continue
            decl = _declarations(span)
            if decl.get("display", "").strip() == "none":
                continue
            span_paint, span_opacity = _apply_paint(paint, decl)
            if span.text and span.text.strip() and span_opacity > 0 and not _unmodelled(span):
                pieces.append((parse_length(span.get("x"), x0), parse_length(span.get("y"), y0), span.text,
                               span_paint, span_opacity))
        pieces = [(x, y, _clean_text(t), p, o) for x, y, t, p, o in pieces]
        pieces = [piece for piece in pieces if piece[2].strip()]
        if not pieces:
            return
        px = self._to_px(m)
        key = f"t{self.n_texts}"
        self.n_texts += 1
        ordered = sorted(pieces, key=lambda piece: (piece[0], piece[1])) if len(pieces) > 1 else pieces
        text = "".join(piece[2] for piece in ordered)[:MAX_TEXT_CHARS]
        main = max(pieces, key=lambda piece: piece[3].font_size)[3]
        scale = smallest_scale(px)
        runs = tuple(Piece(text=piece[2], size_px=piece[3].font_size * scale, fill=piece[3].fill,
                           alpha=piece[3].fill_alpha * piece[4] if piece[3].fill is not None else 0.0)
                     for piece in ordered)
        anchor = apply(px, np.array([[pieces[0][0], pieces[0][1]]]))[0]
        rotation = math.degrees(math.atan2(px[1], px[0])) % 180
        rotation = round(rotation, 1) if min(rotation, 180 - rotation) > 0.5 else 0.0
        self._item("text", hints, (float(anchor[0]), float(anchor[1]), float(anchor[0]), float(anchor[1])), opacity,
                   main, m, clips, key=key, text=text, size_px=main.font_size * scale, pieces=runs, rotation=rotation,
                   family=main.font_family, anchor_point=(float(anchor[0]), float(anchor[1])))
        element = ET.SubElement(self._wrap(out, clips), "text", {"id": key, "transform": _matrix(px),
                                                                 "style": self._style(main, opacity, text=True)})
        for x, y, chunk, piece_paint, piece_opacity in pieces:
            ET.SubElement(element, "tspan", {"x": f"{x:.4f}", "y": f"{y:.4f}",
                                             "style": self._style(piece_paint, piece_opacity, text=True)}).text = chunk

    def _image(self, el, out, m: Matrix, opacity: float, clips, hints) -> None:
        """An embedded PNG or JPEG (an imshow, a rasterised artist): decoded under a pixel cap."""
        href = _href(el)
        match = re.fullmatch(r"data:image/(png|jpeg);base64,([A-Za-z0-9+/=\s]+)", href, re.S)
        if not match:
            return
        try:
            data = base64.b64decode(re.sub(r"\s+", "", match.group(2)), validate=True)
        except ValueError:
            return
        from PIL import Image

        import io

        header = png_header_size(data)
        if header is not None and header[0] * header[1] > MAX_IMAGE_PIXELS:
            raise BadFigure(f"an embedded image is {header[0]}x{header[1]} px, over {MAX_IMAGE_PIXELS:,}")
        try:
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_IMAGE_PIXELS:
                    raise BadFigure(f"an embedded image is {image.width}x{image.height} px, over "
                                    f"{MAX_IMAGE_PIXELS:,}")
                image.load()
                size = image.size
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            if isinstance(exc, BadFigure):
                raise
            return  # not an image the browser would draw either
        x, y = parse_length(el.get("x"), 0.0), parse_length(el.get("y"), 0.0)
        w, h = parse_length(el.get("width"), float(size[0])), parse_length(el.get("height"), float(size[1]))
        if w <= 0 or h <= 0:
            return
        px = self._to_px(m)
        corners = apply(px, np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]]))
        box = (float(corners[:, 0].min()), float(corners[:, 1].min()), float(corners[:, 0].max()),
               float(corners[:, 1].max()))
        self._item("image", hints, box, opacity, _Paint(fill=None, stroke=None), m, clips, image_size=size,
                   image_data=data, subpaths=[corners], closed=[True])
        ET.SubElement(self._wrap(out, clips), "image", {
            "href": f"data:image/{match.group(1)};base64,{base64.b64encode(data).decode()}",
            "x": f"{x:.4f}", "y": f"{y:.4f}", "width": f"{w:.4f}", "height": f"{h:.4f}",
            "preserveAspectRatio": "none", "transform": _matrix(px), "style": f"opacity:{opacity:.4g}"})


def _unmodelled(el: ET.Element) -> bool:
    """An element whose look depends on what this reader does not model (a mask, a filter, a
    squeezed text length): it is neither drawn nor described, rather than drawn differently."""
    style = parse_style(el.get("style"))
    return any(el.get(name) is not None or name in style for name in ("mask", "filter", "textLength"))


# The one stylesheet matplotlib writes; any other is the file's own CSS, which could hide or show
# what this reader cannot tell.
_MATPLOTLIB_STYLE = "*{stroke-linejoin: round; stroke-linecap: butt}"


def _check_stylesheets(root: ET.Element) -> None:
    for el in root.iter(f"{{{SVG_NS}}}style"):
        if (el.text or "").strip() not in ("", _MATPLOTLIB_STYLE):
            raise BadFigure("the SVG carries a stylesheet of its own")


def _matrix(m: Matrix) -> str:
    return "matrix(" + " ".join(f"{v:.6g}" for v in m) + ")"


def _clean_text(text: str) -> str:
    """Printable characters only (no controls, no bidirectional overrides)."""
    return "".join(c for c in text if c.isprintable() and c not in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _is_rectangle(data: PathData) -> bool:
    if data.curved or len(data.subpaths) != 1:
        return False
    pts = data.subpaths[0]
    return len(np.unique(np.round(pts[:, 0], 3))) <= 2 and len(np.unique(np.round(pts[:, 1], 3))) <= 2


def read_scene(svg: str | bytes, *, dpi: float | None = None, max_pixels: int = 12_000_000) -> Scene:
    """Read a figure's SVG into a `Scene` at `dpi` (matplotlib: its size is in points; None: the
    SVG's own units are pixels, as plotly's are), scaled down to at most `max_pixels`. BadFigure
    for anything that is not a bounded, parsable SVG document."""
    raw = svg.encode("utf-8") if isinstance(svg, str) else svg
    if len(raw) > MAX_SVG_BYTES:
        raise BadFigure(f"the SVG is {len(raw):,} bytes, over the {MAX_SVG_BYTES:,}-byte limit")
    try:
        root = SafeET.fromstring(raw, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except (ET.ParseError, DefusedXmlException, ValueError) as exc:
        raise BadFigure(f"the SVG does not parse: {type(exc).__name__}: {str(exc)[:200]}") from exc
    if _local(root.tag) != "svg":
        raise BadFigure("the document is not an SVG")
    _check_stylesheets(root)
    view = [_finite(float(v)) for v in _NUMBER.findall(root.get("viewBox", ""))]
    width, height = parse_length(root.get("width")), parse_length(root.get("height"))
    if len(view) != 4 or view[2] <= 0 or view[3] <= 0:
        if not width or not height:
            raise BadFigure("the SVG has no size")
        view = [0.0, 0.0, width, height]
    width, height = width or view[2], height or view[3]
    if not (0 < width <= 1e6 and 0 < height <= 1e6):
        raise BadFigure(f"the SVG is {width}x{height}, not a figure size")
    css_px = 1.0 if dpi is None else float(dpi) / 96.0  # CSS px are 1/96 in; a figure's are 1/dpi
    w_px, h_px = width * css_px, height * css_px
    shrink = min(1.0, math.sqrt(max_pixels / (w_px * h_px)), MAX_SIZE_PX / max(w_px, h_px))
    w_px, h_px = w_px * shrink, h_px * shrink
    if w_px < 2 or h_px < 2:
        raise BadFigure(f"the figure is {w_px:.1f}x{h_px:.1f} px")
    px_per_unit = w_px / view[2]
    reader = _Reader(root, px_per_unit)
    width_i, height_i = int(round(w_px)), int(round(h_px))
    out = ET.Element("svg", {"xmlns": SVG_NS, "width": str(width_i), "height": str(height_i),
                             "viewBox": f"0 0 {width_i} {height_i}"})
    defs = ET.SubElement(out, "defs")
    body = ET.SubElement(out, "g")
    origin = (1.0, 0.0, 0.0, 1.0, -view[0], -view[1])
    reader.walk(root, body, origin, _Paint(), 1.0, [], (), 0)
    for element in reader.out_defs:
        defs.append(element)
    return Scene(width=width_i, height=height_i, items=reader.items, svg=ET.tostring(out, encoding="unicode"),
                 scale=px_per_unit)
