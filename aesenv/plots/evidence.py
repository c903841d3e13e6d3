"""Figures from a sandboxed script are untrusted: bound them, and check their descriptions against
their pixels before a judge reads either.

The figure description (`figure_meta.describe`) is computed inside the user's process, so the
script can replace it, or `savefig`, or feed it anything. The host therefore (1) refuses images
whose header promises more pixels than `MAX_PIXELS` before decoding them, (2) validates the
description against a bounded schema (types, finite numbers, capped counts and string lengths),
so the judge's cost is capped and a malformed description cannot make it raise, and (3) checks
the description's claims against the PNG: its size, ink where its texts and data marks are
said to be, no data claimed on a blank image; a plotly figure's JSON must be drawable
(`plotly_png.figure_problem`: no width of 1e400). A figure that fails is kept with its meta set to
{"error": why, "unusable": True}: the answer's failure in both plot channels (a real low score,
never `infra_error`).
"""

from __future__ import annotations

import io
import struct
from typing import Annotated

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from aesenv.plots.plotly_png import figure_problem
from aesenv.sandbox.base import Figure

MAX_PIXELS = 25_000_000  # 5000 x 5000: a 420 KB PNG may otherwise decode to gigabytes
MAX_TEXTS = 400
MAX_AXES = 64
MAX_SERIES = 60
MAX_POINTS = 2000
MAX_BOXES = 400
INK_THRESHOLD = 24  # summed RGB distance from the background that counts as drawn
SAMPLE = 200  # claims checked per kind (evenly spaced)


def _truncate(limit: int):
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, str) else v)


Text = Annotated[str, _truncate(300)]
Colour = Annotated[str | None, _truncate(16)]
Box = Annotated[list[float], Field(min_length=4, max_length=4)]
Point = Annotated[list[float], Field(min_length=2, max_length=2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class TextClaim(_Strict):
    role: Text = ""
    text: Text = ""
    axes: int | None = None
    size_pt: float = 0
    size_px: float = Field(0, ge=0, le=2000)
    rotation: float = 0
    color: Colour = None
    bbox: Box | None = None


class LegendClaim(_Strict):
    axes: int | None = None
    bbox: Box | None = None
    entries: list[Text] = Field(default_factory=list, max_length=MAX_SERIES)
    handle_colors: list[Colour] = Field(default_factory=list, max_length=MAX_SERIES)
    frame_alpha: float = 1.0


class SeriesClaim(_Strict):
    kind: Text = ""
    label: Text = ""
    color: Colour = None
    colors: list[Colour] = Field(default_factory=list, max_length=8)
    n_colors: int = Field(0, ge=0)
    n: int = Field(0, ge=0)
    alpha: float | None = None
    drawn: bool = False
    linewidth: float = 0
    cmap: Text | None = None


class AxesClaim(_Strict):
    index: int = 0
    name: Text = ""
    visible: bool = True
    axison: bool = True
    colorbar: bool = False
    position: Box | None = None
    facecolor: Colour = None
    title: Text = ""
    xlabel: Text = ""
    ylabel: Text = ""
    zlabel: Text = ""
    xscale: Text = ""
    yscale: Text = ""
    artists: dict[Annotated[str, _truncate(40)], Annotated[int, Field(ge=0)]] = Field(default_factory=dict,
                                                                                      max_length=40)
    n_texts_in_axes: int = Field(0, ge=0)
    n_tables: int = Field(0, ge=0)
    series: list[SeriesClaim] = Field(default_factory=list, max_length=MAX_SERIES)
    legend: LegendClaim | None = None
    data_points: list[Point] = Field(default_factory=list, max_length=MAX_POINTS)
    data_boxes: list[Box] = Field(default_factory=list, max_length=MAX_BOXES)


class FigureDescription(_Strict):
    """The parts of `figure_meta.describe` a judge reads, bounded."""

    schema_version: int = 1
    matplotlib: Text = ""
    width_px: float = Field(gt=0, le=20_000)
    height_px: float = Field(gt=0, le=20_000)
    dpi: float = Field(72.0, gt=0, le=2000)
    facecolor: Colour = None
    suptitle: Text = ""
    axes: list[AxesClaim] = Field(default_factory=list, max_length=MAX_AXES)
    figure_legends: list[LegendClaim] = Field(default_factory=list, max_length=16)
    texts: list[TextClaim] = Field(default_factory=list, max_length=MAX_TEXTS)
    n_texts: int = Field(0, ge=0)


class UntrustedFigure(ValueError):
    """The answer's figure cannot be used as evidence (the message says why)."""


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG header, without decoding."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise UntrustedFigure("the figure is not a PNG image")
    return struct.unpack(">II", png[16:24])


def decode_png(png: bytes) -> np.ndarray:
    """RGB pixels of a PNG whose header promises at most MAX_PIXELS."""
    from PIL import Image

    width, height = png_size(png)
    if width * height > MAX_PIXELS:
        raise UntrustedFigure(f"the figure is {width}x{height} px, over the {MAX_PIXELS:,}-pixel limit")
    try:
        with Image.open(io.BytesIO(png)) as image:
            return np.asarray(image.convert("RGB"))
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow's decoders raise these for broken data
        raise UntrustedFigure(f"the figure's PNG does not decode: {exc}") from exc


def _background(pixels: np.ndarray, facecolor: str | None) -> np.ndarray:
    if facecolor and facecolor.startswith("#") and len(facecolor) == 7:
        try:
            return np.array([int(facecolor[i:i + 2], 16) for i in (1, 3, 5)])
        except ValueError:
            pass
    return pixels[0, 0].astype(int)


def _evenly(items: list, n: int = SAMPLE) -> list:
    if len(items) <= n:
        return items
    return [items[int(i * len(items) / n)] for i in range(n)]


def _inked(ink: np.ndarray, box: list[float], pad: int = 1) -> bool:
    h, w = ink.shape
    x0, y0 = max(0, int(box[0]) - pad), max(0, int(box[1]) - pad)
    x1, y1 = min(w, int(np.ceil(box[2])) + pad), min(h, int(np.ceil(box[3])) + pad)
    return x1 > x0 and y1 > y0 and bool(ink[y0:y1, x0:x1].any())


def check_against_pixels(desc: FigureDescription, pixels: np.ndarray) -> str:
    """'' when the description's claims hold in the image, else the first that does not."""
    height, width = pixels.shape[:2]
    if abs(desc.width_px - width) > 2 or abs(desc.height_px - height) > 2:
        return f"it describes a {desc.width_px:.0f}x{desc.height_px:.0f} figure, the image is {width}x{height}"
    ink = np.abs(pixels.astype(int) - _background(pixels, desc.facecolor)).sum(axis=2) > INK_THRESHOLD
    claims = {"text": [t.bbox for t in desc.texts if t.bbox and t.text.strip()],
              "data mark": [[x - 2, y - 2, x + 2, y + 2] for ax in desc.axes for x, y in ax.data_points]
              + [b for ax in desc.axes for b in ax.data_boxes]}
    if not ink.any() and any(claims.values()):
        return "it claims texts or data marks on a blank image"
    for kind, boxes in claims.items():
        sample = _evenly(boxes)
        if len(sample) >= 4:
            missing = sum(not _inked(ink, box) for box in sample)
            if missing > len(sample) / 2:
                return f"{missing} of {len(sample)} {kind} positions it claims hold no ink"
    return ""


def screen(figure: Figure) -> Figure:
    """The figure as evidence: bounded, its description validated and checked against its pixels.
    Never raises; what the answer got wrong is said in `meta['error']` (and `png` dropped when
    the image itself is unusable)."""
    try:
        pixels = decode_png(figure.png) if figure.png else None
    except UntrustedFigure as exc:
        return figure.model_copy(update={"png": None, "meta": {"error": str(exc), "unusable": True}})
    if figure.kind == "plotly":
        problem = figure_problem(figure.plotly_json)
        if problem:
            return figure.model_copy(update={"plotly_json": None, "png": None, "meta": {
                "error": f"unusable plotly figure: {problem}", "unusable": True}})
        return figure
    if figure.meta and "error" in figure.meta and len(figure.meta) <= 2:
        return figure
    try:
        desc = FigureDescription.model_validate(figure.meta)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return figure.model_copy(update={"meta": {
            "error": f"figure description rejected ({where}: {first['msg']})"[:300], "unusable": True}})
    problem = check_against_pixels(desc, pixels) if pixels is not None else "no image to check it against"
    if problem:
        return figure.model_copy(update={"meta": {
            "error": f"figure description does not match its pixels: {problem}", "unusable": True}})
    return figure.model_copy(update={"meta": desc.model_dump(exclude_unset=True)})


def unusable_notes(figures: list[Figure]) -> list[str]:
    """Why figures were refused as evidence, for the record."""
    return [f"{f.name}: {f.meta['error']}" for f in figures if f.meta.get("unusable")]

