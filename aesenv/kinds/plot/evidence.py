"""Bounds on figure evidence: the description schema the plot judges read.

A figure's description is made on the host from the figure as the host draws it
(`aesenv.kinds.plot.figures`, `aesenv.kinds.plot.drawn`), never taken from the script's process. It is
still validated against a bounded schema (types, finite numbers, capped counts and string
lengths), so a judge's cost is capped and nothing in it can make a judge raise. A figure the
host refused is kept with its meta set to {"error": why, "unusable": True}: the answer's
failure in both plot channels (a real low score, never `infra_error`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from aesenv.sandbox.base import Figure

MAX_TEXTS = 400
MAX_AXES = 64
MAX_SERIES = 60
MAX_POINTS = 2000
MAX_BOXES = 400


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
    faded_colors: list[Colour] = Field(default_factory=list, max_length=MAX_SERIES)  # drawn, not seen


class FigureDescription(_Strict):
    """What a plot judge reads of a drawn figure (`drawn.describe_scene`), bounded."""

    schema_version: int = 2
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
    dropped_texts: list[Text] = Field(default_factory=list, max_length=40)  # drawn but not legible, and why


def unusable_notes(figures: list[Figure]) -> list[str]:
    """Why figures were refused as evidence, for the record."""
    return [f"{f.name}: {f.meta['error']}" for f in figures if f.meta.get("unusable")]

