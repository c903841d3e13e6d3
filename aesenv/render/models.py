"""What a render produces. Screenshots are bytes in memory; records keep only summaries."""

from __future__ import annotations

import functools
import io
import struct
import zlib
from enum import Enum
from typing import Any, TypeVar

import numpy as np
from PIL import Image
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

M = TypeVar("M", bound=BaseModel)


class RenderStatus(str, Enum):
    OK = "ok"
    TIMEOUT = "timeout"          # the page itself hung a stage (its fault, scored)
    CRASHED = "crashed"          # the page crashed or was killed for memory (its fault, scored)
    INFRA_ERROR = "infra_error"  # the browser or our side failed (masked, never scored)


class RequestOutcome(str, Enum):
    SERVED = "served"            # from the artifact's own files on the virtual origin
    SERVED_LOCAL = "served_local"  # a vendored copy of a known library
    BLOCKED = "blocked"
    NETWORK = "network"          # fetched from the real network (only with `online=True`)
    MISSING = "missing"          # asked for a file the artifact does not have


class RequestEntry(BaseModel):
    url: str
    resource_type: str
    outcome: RequestOutcome
    detail: str = ""


class ConsoleEntry(BaseModel):
    type: str
    text: str


class DomElement(BaseModel):
    """One visible element. Coordinates are document pixels (full-page screenshot space)."""

    tag: str
    id: str = ""
    classes: list[str] = Field(default_factory=list)
    parent: int = -1
    x: float
    y: float
    w: float
    h: float
    text: str = ""
    text_len: int = 0
    color: str = ""
    background: str = ""
    own_background: str = ""
    background_image: bool = False
    border: bool = False
    shadow: bool = False
    radius: float = 0.0
    font_size: float = 16.0
    font_weight: int = 400
    font_family: str = ""
    line_height: float = 0.0
    text_align: str = ""
    position: str = "static"
    z_index: int = 0
    padding: list[float] = Field(default_factory=list)
    interactive: bool = False
    transform_3d: bool = False  # 3D transform/perspective: its box is a 2D projection
    opacity: float = 1.0  # effective: its own times every ancestor's
    paints: str = ""  # what it paints besides its text: "style", "replaced" (shown by the counterfactual), "" (nothing)
    item: int = -1  # for a "replaced" one: what the counterfactual takes away to see it


class MobileProbe(BaseModel):
    width: int
    doc_width: float
    overflowing_elements: int
    text_elements: int
    tiny_text_elements: int


class PageMetrics(BaseModel):
    title: str = ""
    lang: str = ""
    doc_width: float = 0
    doc_height: float = 0
    viewport_width: int = 0
    viewport_height: int = 0
    node_count: int = 0
    popups_blocked: int = 0
    tag_counts: dict[str, int] = Field(default_factory=dict)
    text_chars: int = 0
    visible_text: str = ""
    images_total: int = 0
    images_broken: int = 0
    canvases: list[dict[str, Any]] = Field(default_factory=list)
    headings: list[dict[str, Any]] = Field(default_factory=list)


class DomMarkup(BaseModel):
    """The DOM as the page's scripts left it, serialised from our own world (`markup.js`), for the
    execution channel's lint. `html` holds it when it was taken; otherwise `problem` says why not,
    and that is the page's doing (a DOM over the bound, one the browser could not serialise).
    `chars`: the markup's length (when refused, as far as it was counted)."""

    html: str = Field(default="", repr=False)
    chars: int = 0
    shadow_roots: int = 0  # open shadow roots serialised inline (closed ones are out of reach)
    problem: str = ""


def lenient(model: type[M], data: Any) -> tuple[M | None, list[str]]:
    """`model` from what a page gave us, with each field that fails validation reset to its
    default, and the names of those fields. None when a required field fails (or `data` is no
    object): a page's values must never make a render raise, wherever our script lets one through."""
    if not isinstance(data, dict):
        return None, ["(not an object)"]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        bad = sorted({str(error["loc"][0]) for error in exc.errors() if error["loc"]})
    if any(model.model_fields[name].is_required() for name in bad if name in model.model_fields):
        return None, bad
    try:
        return model.model_validate({k: v for k, v in data.items() if k not in bad}), bad
    except ValidationError:
        return None, bad


def snapshot_elements(entries: Any) -> tuple[list[DomElement], str, list[int]]:
    """The snapshot's elements, validated one by one (see `lenient`), with `parent` indices
    renumbered around those left out (to the nearest ancestor kept), a note saying what failed
    ("" when nothing did), and, per entry, its index among those kept (or its nearest kept
    ancestor's)."""
    entries = entries if isinstance(entries, list) else []
    kept: list[DomElement] = []
    new_index: list[int] = []  # per entry: its index among those kept, else its nearest kept ancestor's
    reset: set[str] = set()
    dropped: set[str] = set()
    fixed = left_out = 0
    for i, entry in enumerate(entries):
        element, bad = lenient(DomElement, entry)
        parent = element.parent if element is not None else (entry.get("parent", -1) if isinstance(entry, dict) else -1)
        ancestor = new_index[parent] if isinstance(parent, int) and 0 <= parent < i else -1
        if element is None:
            left_out += 1
            dropped.update(bad)
            new_index.append(ancestor)
            continue
        if bad:
            fixed += 1
            reset.update(bad)
        element.parent = ancestor
        new_index.append(len(kept))
        kept.append(element)
    if not fixed and not left_out:
        return kept, "", new_index
    parts = []
    if fixed:
        parts.append(f"{fixed} kept with defaults for {', '.join(sorted(reset))}")
    if left_out:
        parts.append(f"{left_out} left out ({', '.join(sorted(dropped))})")
    return kept, f"snapshot: {fixed + left_out} of {len(entries)} elements failed validation; " + "; ".join(parts), new_index


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RGB8 = (8, 2, 0, 0, 0)  # IHDR after the size: 8 bits, truecolour, deflate, adaptive filters, not interlaced
_NO_FILTER, _UP = 0, 2


def png_rgb(png: bytes) -> np.ndarray | None:
    """The pixels of a PNG as Chromium's fast screenshots write it (8-bit RGB, every row filtered
    `Up`, or none), (height, width, 3) uint8, exactly as any decoder gives them; None for any
    other PNG (decode it in full). Undoing `Up` is one vector add per row: about half of what
    a general decoder costs; every render's capture is decoded, and a screenshot on every compared
    action."""
    if not png.startswith(_PNG_SIGNATURE):
        return None
    header: tuple[int, ...] | None = None
    data: list[bytes] = []
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", png[at + 8:at + 8 + length])
        elif kind == b"IDAT":
            data.append(png[at + 8:at + 8 + length])
        elif kind == b"IEND":
            break
        at += 12 + length
    if header is None or header[2:] != _RGB8:
        return None
    width, height = header[0], header[1]
    size = height * (1 + 3 * width)
    try:
        raw = zlib.decompressobj().decompress(b"".join(data), size + 1)
    except zlib.error:
        return None
    if len(raw) != size:
        return None
    rows = np.frombuffer(raw, np.uint8).reshape(height, 1 + 3 * width)
    filters = rows[:, 0]
    pixels = rows[:, 1:].copy()
    if (filters == _UP).all():
        # Each row is the difference from the one above, mod 256. Row by row: `np.cumsum` down
        # the columns gives the same pixels but walks memory across rows, some 50 times slower.
        for y in range(1, height):
            np.add(pixels[y], pixels[y - 1], out=pixels[y])
    elif not (filters == _NO_FILTER).all():
        return None
    return pixels.reshape(height, width, 3)


def rgb_pixels(png: bytes) -> np.ndarray:
    """A PNG's pixels as an RGB array: Chromium's fast PNGs through `png_rgb`, any other through
    Pillow (which raises for bytes that are no image)."""
    fast = png_rgb(png)
    if fast is not None:
        return fast
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image if image.mode == "RGB" else image.convert("RGB"))


def decode_rgb(png: bytes | None) -> np.ndarray | None:
    """A PNG's pixels as an RGB array (None for no or unreadable bytes)."""
    if not png:
        return None
    try:
        return rgb_pixels(png)
    except Exception:  # noqa: BLE001 - an unreadable screenshot has no pixels
        return None


def _encode(image: Image.Image, fmt: str, quality: int = 80) -> bytes:
    fmt = {"jpg": "jpeg"}.get(fmt.lower(), fmt.lower())
    buf = io.BytesIO()
    image.convert("RGB" if fmt == "jpeg" else image.mode).save(buf, fmt.upper(), quality=quality)
    return buf.getvalue()


class Rendering(BaseModel):
    """Everything the reward channels may look at, from one isolated render."""

    status: RenderStatus
    error: str = ""
    attempts: int = 1
    stages_timed_out: list[str] = Field(default_factory=list)
    settled_ms: int = 0  # virtual time the page ran after load before capture
    settle_frames: int = 0  # animation frames the page ran in that time
    viewport: tuple[int, int] = (1280, 960)
    full_page_png: bytes | None = Field(default=None, repr=False)
    captured_height: int = 0
    height_capped: bool = False
    elements: list[DomElement] = Field(default_factory=list)
    elements_truncated: bool = False
    metrics: PageMetrics = Field(default_factory=PageMetrics)
    mobile: MobileProbe | None = None
    # None when the render did not get as far as reading it (see `Rendering.error`).
    markup: DomMarkup | None = Field(default=None, repr=False)
    console: list[ConsoleEntry] = Field(default_factory=list)
    page_errors: list[str] = Field(default_factory=list)
    requests: list[RequestEntry] = Field(default_factory=list)
    dialogs: int = 0
    libraries: dict[str, list[str]] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    provenance: dict[str, str] = Field(default_factory=dict)
    # What the page gave us that did not validate and what was done about it (the render went on).
    notes: list[str] = Field(default_factory=list)

    @property
    def has_screenshot(self) -> bool:
        return self.full_page_png is not None

    @property
    def coverage(self) -> float:
        """Share of the page's height that the full-page capture shows (below 1 when capped)."""
        if not self.full_page_png:
            return 0.0
        return round(min(1.0, self.captured_height / max(self.metrics.doc_height, 1.0)), 4)

    def image(self, fmt: str = "png", *, quality: int = 80, max_height: int | None = None) -> bytes | None:
        """The full-page capture in the consumer's format: PNG for pixel verifiers, JPEG or
        WebP (smaller, cheaper to send) for VLM judges; optionally cut to `max_height`."""
        if self.full_page_png is None:
            return None
        image = Image.open(io.BytesIO(self.full_page_png))
        if max_height is not None and image.height > max_height:
            image = image.crop((0, 0, image.width, max_height))
        elif fmt.lower() == "png":
            return self.full_page_png
        return _encode(image, fmt, quality)

    def tiles(self, tile_height: int | None = None, fmt: str = "png") -> list[bytes]:
        """The capture cut into screens (default: the viewport height), top to bottom, for
        judges that take several images instead of one very tall one."""
        if self.full_page_png is None:
            return []
        image = Image.open(io.BytesIO(self.full_page_png))
        step = tile_height or self.viewport[1]
        return [_encode(image.crop((0, top, image.width, min(top + step, image.height))), fmt)
                for top in range(0, image.height, step)]

    _pixels: Any = PrivateAttr(default=None)

    @property
    def pixels(self) -> np.ndarray | None:
        """The full-page capture's pixels (RGB), decoded once for every consumer."""
        if self._pixels is None and self.full_page_png is not None:
            self._pixels = decode_rgb(self.full_page_png)
        return self._pixels

    def with_pixels(self, pixels: np.ndarray | None) -> "Rendering":
        """Keep pixels already decoded from `full_page_png` (the renderer decodes them once)."""
        self._pixels = pixels
        return self

    @functools.cached_property
    def viewport_png(self) -> bytes | None:
        """The first screen: the top of the full-page capture (one capture serves both)."""
        if self.full_page_png is None:
            return None
        image = Image.open(io.BytesIO(self.full_page_png))
        width, height = self.viewport
        if image.height <= height:
            return self.full_page_png
        return _encode(image.crop((0, 0, width, height)), "png")

    def summary(self) -> dict[str, Any]:
        """The part of a rendering that belongs in a reward record."""
        return {
            "status": self.status.value,
            "error": self.error,
            "attempts": self.attempts,
            "stages_timed_out": self.stages_timed_out,
            "settled_ms": self.settled_ms,
            "settle_frames": self.settle_frames,
            "page_height": self.metrics.doc_height,
            "captured_height": self.captured_height,
            "coverage": self.coverage,
            "height_capped": self.height_capped,
            "elements": len(self.elements),
            "console_errors": [c.text[:300] for c in self.console if c.type == "error"][:20],
            "page_errors": [e[:300] for e in self.page_errors][:20],
            "blocked_requests": [r.url[:300] for r in self.requests if r.outcome is RequestOutcome.BLOCKED][:50],
            "dialogs": self.dialogs,
            "popups_blocked": self.metrics.popups_blocked,
            "libraries_requested": self.libraries.get("libraries_requested", []),
            "libraries_served": self.libraries.get("libraries_served", []),
            "timings_ms": self.timings_ms,
            "notes": self.notes,
        }
