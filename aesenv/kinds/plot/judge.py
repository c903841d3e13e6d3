"""The offline plot judge: the 40/30/30 rubric filled from measured plot defects.

No model, no network, no randomness. Each figure is reduced to a digest (axes with their data
marks, labels, legend and series colours; texts with pixel boxes) from its description, which
the host makes from the figure as it draws it (`aesenv.kinds.plot.drawn`, for matplotlib and plotly
alike: nothing the script claims about itself; text names something only where it is legible as
displayed, `aesenv.kinds.plot.legibility`); metrics then measure what a reader of a chart
trips over: a legend sitting on the data, tick labels running into each other, text too small
to read or cut off at the figure edge, unlabelled axes, series colours that cannot be told
apart or vanish into the background, empty panels, and a chart of another kind than the one
asked for. It is a proxy, not a statistician's judgement: it cannot tell whether the chart
answers the question well, only whether it avoids measurable failures. Every sub-score carries
its numbers in `evidence`, and the total is capped (`PROXY_CEILING`).

Rubric (points): alignment 40 = chart kind 16 + data present 10 + prompt terms 8 + title 6;
aesthetics 30 = font size 8 + axis labels 8 + palette 8 + text contrast 3 + legend when needed 3;
structure 30 = legend/data overlap 8 + tick collisions 7 + text overlaps 6 + clipping 5 +
empty axes 2 + space use 2. A figure without a description (the host could not draw it) is
judged as empty; geometry metrics with nothing measured get `UNMEASURED_SHARE` and say so.
"""

from __future__ import annotations

import asyncio
import io
import math
import re
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from aesenv.colour import contrast_ratio, linearise, luminance
from aesenv.judging.base import StaticJudgement
from aesenv.judging.base import ramp as _ramp
from aesenv.judging.copy import prompt_terms, stem, text_stems
from aesenv.judging.rubric import PROXY_CEILING, assemble
from aesenv.judging.rubric import metric as _metric
from aesenv.kinds.plot.legibility import displayed_px
from aesenv.sandbox.base import Figure
from aesenv.tasks import Task

UNMEASURED_SHARE = 0.6
LEGEND_CELL_PX = 4

Box = tuple[float, float, float, float]

# Chart kinds a prompt can ask for: (prompt pattern, marks that prove it was drawn).
CHART_KINDS: dict[str, str] = {
    "pie": r"\b(pie|donut|doughnut)\b",
    "heatmap": r"\b(heat ?maps?|correlation matrix|confusion matrix)\b",
    "box": r"\b(box ?plots?|box-and-whisker|whiskers?)\b",
    "violin": r"\bviolin",
    "histogram": r"\b(histograms?|hist)\b",
    "scatter": r"\b(scatter|bubble)",
    "bar": r"\b(bar|bars|barh|column chart|bar chart)\b",
    "line": r"\b(line (plot|chart|graph)s?|time series|over time|trend)\b",
    "area": r"\b(area (chart|plot)|stacked area|fill between)\b",
    "3d": r"\b(3d|three-dimensional)\b",
    "polar": r"\b(polar|radar|spider)\b",
    "multi": r"\b(subplots?|panels?|side by side|side-by-side|grid of|small multiples|facet)",
}
# Collections drawn in one colour (a scatter series, a filled area, a violin): that colour must
# stand out from the background like a line's.
UNIFORM_MARKS = frozenset({"PathCollection", "PolyCollection", "FillBetweenPolyCollection"})
# Words that instruct how to draw rather than name the data: not expected as text in the figure.
CHART_VOCABULARY = frozenset(stem(w) for w in """
plot plots draw chart graph scatter line lines bar bars pie histogram heatmap box violin area legend
label labels title axis axes seaborn plotly matplotlib regression fitted fit confidence band slice
slices percentage percent subplot subplots panel panels figure colour color coloured colored marker
bins mark annotate cell map dashed vertical horizontal stacked grouped overlay sorted order format
diverging centred centered decimal
""".split())
# A text the figure draws but too small to read as displayed (`drawn`): it names nothing and its
# words do not count; it only counts where small or colliding text is the fault (font size,
# overlaps, clipping).
SMALL = "small"
RAINBOW_CMAPS = frozenset({"jet", "hsv", "rainbow", "gist_rainbow", "nipy_spectral", "gist_ncar"})


# ---------------------------------------------------------------------------------------------
# Digest: the same facts from matplotlib meta or plotly JSON
# ---------------------------------------------------------------------------------------------


@dataclass
class _Axes:
    figure: int
    marks: set[str]  # chart kinds drawn here ("line", "bar", ...)
    n_marks: int
    cartesian: bool
    title: bool
    xlabel: bool
    ylabel: bool
    needs_legend: bool
    has_legend: bool
    colours: list[str]  # categorical series colours a reader must tell apart
    background: str
    mark_colours: list[str] = field(default_factory=list)  # every data mark colour (vs the background)
    cmaps: list[str] = field(default_factory=list)
    position: Box | None = None
    legend_box: Box | None = None
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    boxes: list[Box] = field(default_factory=list)
    empty: bool = False
    solid: bool = False  # a 3-D axes with its axes drawn: x, y and z each want a label
    zlabel: bool = False


@dataclass
class _Text:
    figure: int
    role: str
    text: str
    axes: int | None
    size_px: float
    rotation: float
    colour: str | None
    box: Box | None


@dataclass
class _Digest:
    axes: list[_Axes] = field(default_factory=list)
    texts: list[_Text] = field(default_factory=list)
    sizes: list[tuple[float, float]] = field(default_factory=list)  # per figure (w, h) in px
    backgrounds: list[str] = field(default_factory=list)
    geometry: list[bool] = field(default_factory=list)  # per figure: pixel geometry measured
    titles: list[str] = field(default_factory=list)  # figure-level titles
    notes: list[str] = field(default_factory=list)
    ink: list[float] = field(default_factory=list)  # per figure: share of non-background pixels
    cut: list[_Text] = field(default_factory=list)  # texts drawn mostly off their figure
    solid_axes: set[tuple[int, int]] = field(default_factory=set)  # (figure, axes) of the 3-D axes

    @property
    def data_axes(self) -> list[_Axes]:
        return [a for a in self.axes if not a.empty]

    @property
    def measured(self) -> bool:
        return any(self.geometry)


def _rgb(hex_colour: str | None) -> np.ndarray | None:
    if not hex_colour or not re.fullmatch(r"#[0-9a-fA-F]{6}", hex_colour):
        return None
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)


def _lab(rgb: np.ndarray) -> np.ndarray:
    c = linearise(rgb)
    xyz = c @ np.array([[0.4124, 0.2126, 0.0193], [0.3576, 0.7152, 0.1192], [0.1805, 0.0722, 0.9505]])
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _box(raw) -> Box | None:
    return tuple(float(v) for v in raw) if raw and len(raw) == 4 else None


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _marks_of_matplotlib(ax: dict) -> set[str]:
    art, name = ax.get("artists", {}), ax.get("name", "")
    lines = [s for s in ax.get("series", []) if s.get("kind") == "line"]
    marks = set()
    if any(s.get("drawn") and s.get("n", 0) >= 3 for s in lines):
        marks.add("line")
    if art.get("Rectangle", 0) >= 2:
        marks.add("bar")
    if art.get("Rectangle", 0) >= 5:
        marks.add("histogram")
    if art.get("PathCollection", 0) or any(not s.get("drawn") and s.get("n", 0) >= 3 for s in lines):
        marks.add("scatter")
    if art.get("Wedge", 0):
        marks.add("pie")
    # A 3-D panel's pictures are rasterised marks or a WebGL scene drawn as a picture, not heatmaps.
    if art.get("QuadMesh", 0) or (art.get("AxesImage", 0) and name != "3d"):
        marks.add("heatmap")
    if art.get("PathPatch", 0) or sum(1 for s in lines if s.get("n", 0) <= 5) >= 5:
        marks.add("box")
    if art.get("PolyCollection", 0) or art.get("FillBetweenPolyCollection", 0):
        marks.update({"violin", "area"})
    if name == "3d":
        marks.add("3d")
    if name == "polar":
        marks.add("polar")
    return marks


def _categorical_colours(ax: dict) -> list[str]:
    legend = ax.get("legend") or {}
    handles = [c for c in legend.get("handle_colors", []) if c]
    if handles:
        return handles
    series = ax.get("series", [])
    wedges = [s["color"] for s in series if s.get("kind") == "wedge" and s.get("color")]
    if wedges:
        return wedges
    return [s["color"] for s in series if s.get("kind") in ("line", "bars") and s.get("color")
            and not str(s.get("label", "")).startswith("_")]


def _digest_matplotlib(d: _Digest, index: int, meta: dict, png: bytes | None) -> None:
    width, height = float(meta.get("width_px", 0)), float(meta.get("height_px", 0))
    d.sizes.append((width, height))
    d.backgrounds.append(meta.get("facecolor") or "#ffffff")
    d.geometry.append(True)
    d.titles.append(meta.get("suptitle", ""))
    d.ink.append(_ink_share(png))
    fig_legends = meta.get("figure_legends", [])
    raw_axes = meta.get("axes", [])
    for ax in raw_axes:
        if not ax.get("visible", True) or ax.get("colorbar"):
            continue
        marks = _marks_of_matplotlib(ax)
        art = ax.get("artists", {})
        n_marks = sum(art.values()) + ax.get("n_texts_in_axes", 0) + ax.get("n_tables", 0)
        series = ax.get("series", [])
        labelled = {s.get("label") for s in series if s.get("label") and not str(s["label"]).startswith("_")}
        colours = _categorical_colours(ax)
        needs_legend = len(labelled) >= 2 or (len(set(colours)) >= 2 and "pie" not in marks and
                                               sum(s.get("kind") in ("line", "bars", "PathCollection")
                                                   for s in series) >= 2)
        # Pies and heatmaps name their parts with wedge labels and tick labels, not axis titles.
        cartesian = ax.get("name") == "rectilinear" and ax.get("axison", True) and not (marks & {"pie", "heatmap"})
        d.axes.append(_Axes(
            figure=index, marks=marks, n_marks=n_marks, cartesian=cartesian,
            title=bool(ax.get("title", "").strip()), xlabel=bool(ax.get("xlabel", "").strip()),
            ylabel=bool(ax.get("ylabel", "").strip()), needs_legend=needs_legend,
            has_legend=bool(ax.get("legend")) or bool(fig_legends) or ax.get("n_texts_in_axes", 0) >= len(labelled) > 0,
            colours=colours, background=ax.get("facecolor") or "#ffffff",
            mark_colours=[s["color"] if s.get("color") else s["colors"][0] for s in series
                          if s.get("color") or (s.get("n_colors") == 1 and s.get("kind") in UNIFORM_MARKS)]
            + list(ax.get("faded_colors", [])),
            cmaps=[s["cmap"] for s in series if s.get("cmap")],
            position=_box(ax.get("position")), legend_box=_box((ax.get("legend") or {}).get("bbox")),
            points=np.asarray(ax.get("data_points") or np.zeros((0, 2)), dtype=float).reshape(-1, 2),
            boxes=[b for b in (_box(x) for x in ax.get("data_boxes", [])) if b],
            empty=n_marks == 0 and ax.get("axison", True),
            solid=ax.get("name") == "3d" and ax.get("axison", True), zlabel=bool(ax.get("zlabel", "").strip())))
        if ax.get("name") == "3d":
            d.solid_axes.add((index, ax.get("index")))
    for t in meta.get("texts", []):
        # a text drawn mostly off the figure is not read (no title, no terms): it only counts as cut off
        (d.cut if t.get("role") == "cut" else d.texts).append(_Text(figure=index, role=t.get("role", ""), text=t.get("text", ""), axes=t.get("axes"),
                             size_px=float(t.get("size_px", 0)), rotation=float(t.get("rotation", 0)),
                             colour=t.get("color"), box=_box(t.get("bbox"))))


def _ink_share(png: bytes | None) -> float:
    """Share of pixels that differ from the corner colour: ~0 means a blank image."""
    if not png:
        return -1.0
    from PIL import Image

    try:
        img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))[::2, ::2].astype(int)
    except (OSError, ValueError, Image.DecompressionBombError):  # not a picture we can read: not measured
        return -1.0
    if not img.size:
        return -1.0
    return round(float((np.abs(img - img[0, 0]).sum(axis=2) > 24).mean()), 4)


# What a figure's description can hold that is wrong, since the sandboxed script made it (it can
# write any JSON as its figure list): such a figure is judged as empty, never a judge failure.
_UNREADABLE = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError, RecursionError,
               OSError)
_LISTS = ("axes", "texts", "sizes", "backgrounds", "geometry", "titles", "notes", "ink", "cut")


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def _check_finite(d: _Digest, axes_from: int, texts_from: int) -> None:
    """ValueError when the figure just digested holds a non-finite number (NaN and infinities
    would otherwise turn the score into NaN, or slip through the clamps)."""
    boxes = [b for a in d.axes[axes_from:] for b in (a.position, a.legend_box, *a.boxes) if b]
    boxes += [t.box for t in d.texts[texts_from:] if t.box]
    numbers = [*d.sizes[-1], *(v for b in boxes for v in b),
               *(v for t in d.texts[texts_from:] for v in (t.size_px, t.rotation))]
    if not _finite(*numbers) or not all(np.isfinite(a.points).all() for a in d.axes[axes_from:]):
        raise ValueError("a size, position or box is not a finite number")


def digest(figures: list[Figure]) -> _Digest:
    d = _Digest()
    for i, fig in enumerate(figures):
        lengths = {name: len(getattr(d, name)) for name in _LISTS}
        try:
            if fig.meta and "error" not in fig.meta:
                _digest_matplotlib(d, i, fig.meta, fig.png)
                _check_finite(d, lengths["axes"], lengths["texts"])
                continue
            why = str(fig.meta.get("error", "missing"))
        except _UNREADABLE as exc:
            for name, n in lengths.items():
                del getattr(d, name)[n:]
            why = f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"
        d.notes.append(f"{fig.name}: no description ({why}); judged as empty")
        d.sizes.append((0.0, 0.0))
        d.backgrounds.append("#ffffff")
        d.geometry.append(False)
        d.titles.append("")
        d.ink.append(_ink_share(fig.png))
    return d


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def _unmeasured(maximum: float, why: str) -> dict[str, Any]:
    return _metric(UNMEASURED_SHARE * maximum, maximum, measured=False, note=why)


def _m_chart_kind(task: Task, d: _Digest) -> dict[str, Any]:
    prompt = task.prompt.lower()
    wanted = [k for k, pattern in CHART_KINDS.items() if re.search(pattern, prompt)]
    drawn = set().union(*(a.marks for a in d.axes)) if d.axes else set()
    if len(d.data_axes) >= 2:
        drawn.add("multi")
    if not wanted:
        return _metric(16.0 if drawn else 0.0, 16.0, wanted=[], drawn=sorted(drawn),
                       note="no chart kind named in the prompt" if drawn else "nothing drawn")
    found = [k for k in wanted if k in drawn]
    share = len(found) / len(wanted)
    return _metric(16.0 * share, 16.0, wanted=wanted, drawn=sorted(drawn), found=found,
                   note="" if share == 1 else f"asked for {', '.join(k for k in wanted if k not in drawn)}")


def _m_data(d: _Digest) -> dict[str, Any]:
    n_axes = len(d.axes)
    with_data = len(d.data_axes)
    blank = [i for i, ink in enumerate(d.ink) if 0 <= ink < 0.002]
    share = with_data / n_axes if n_axes else 0.0
    if blank:
        share *= 1 - len(blank) / max(1, len(d.ink))
    return _metric(10.0 * share, 10.0, axes=n_axes, axes_with_data=with_data, figures=len(d.sizes),
                   blank_images=blank, note="" if share == 1 else "empty axes or a blank image")


def _m_terms(task: Task, d: _Digest) -> dict[str, Any]:
    terms, phrases = prompt_terms(task.prompt)
    terms = [t for t in terms if t not in CHART_VOCABULARY]
    text = " ".join([t.text for t in d.texts if t.role != SMALL] + d.titles)
    have = text_stems(text)
    found = [t for t in terms if t in have]
    phrase_hits = [p for p in phrases if p in text.lower()]
    if not terms and not phrases:
        return _metric(8.0, 8.0, terms=[], note="no key terms in the prompt")
    share = (len(found) + len(phrase_hits)) / (len(terms) + len(phrases))
    return _metric(8.0 * _ramp(share, 0.05, 0.3), 8.0, share=round(share, 3), found=found[:20],
                   missing=[t for t in terms if t not in have][:20], phrases_found=phrase_hits)


def _m_title(d: _Digest) -> dict[str, Any]:
    titled = any(d.titles) or any(a.title for a in d.data_axes)
    return _metric(6.0 if titled else 0.0, 6.0, titled=titled, note="" if titled else "no title")


def _m_font_size(d: _Digest) -> dict[str, Any]:
    sizes = [displayed_px(t.size_px, d.sizes[t.figure][0]) for t in d.texts]  # small texts too: they are the fault
    if not sizes:
        return _metric(0.0, 8.0, note="no text at all")
    p10, smallest = float(np.percentile(sizes, 10)), min(sizes)
    small = sum(s < 8 for s in sizes)
    points = 8.0 * (0.75 * _ramp(p10, 6.5, 10.0) + 0.25 * _ramp(smallest, 5.0, 9.0))
    return _metric(points, 8.0, p10_px=round(p10, 1), smallest_px=round(smallest, 1), n_small=small,
                   n_texts=len(sizes), note=f"{small} texts under 8 px" if small else "")


def _m_axis_labels(d: _Digest) -> dict[str, Any]:
    """Every axis of a cartesian axes wants a label (a label shared by a row or column of axes
    counts for each), and so does each of the three of a 3-D axes."""
    cart = [a for a in d.data_axes if a.cartesian]
    solid = [a for a in d.data_axes if a.solid]
    if not cart and not solid:
        return _metric(8.0, 8.0, note="no cartesian axes")
    sup: dict[int, set[str]] = {}
    for t in d.texts:
        if t.axes is None and t.role in ("xlabel", "ylabel"):
            sup.setdefault(t.figure, set()).add(t.role)
    have = need = 0
    missing = []
    for i, a in enumerate(cart):
        same_col = [b for b in cart if b.figure == a.figure and a.position and b.position
                    and abs(a.position[0] - b.position[0]) < 2 and abs(a.position[2] - b.position[2]) < 2]
        same_row = [b for b in cart if b.figure == a.figure and a.position and b.position
                    and abs(a.position[1] - b.position[1]) < 2 and abs(a.position[3] - b.position[3]) < 2]
        x = a.xlabel or "xlabel" in sup.get(a.figure, set()) or any(b.xlabel for b in same_col)
        y = a.ylabel or "ylabel" in sup.get(a.figure, set()) or any(b.ylabel for b in same_row)
        have += x + y
        need += 2
        if not x:
            missing.append(f"axes {i} x")
        if not y:
            missing.append(f"axes {i} y")
    for i, a in enumerate(solid):
        labelled = {"x": a.xlabel, "y": a.ylabel, "z": a.zlabel}
        have += sum(labelled.values())
        need += 3
        missing += [f"3-D axes {i} {axis}" for axis, there in labelled.items() if not there]
    share = have / need
    return _metric(8.0 * share, 8.0, labelled=have, needed=need, missing=missing[:10],
                   note="missing axis labels" if missing else "")


def _min_delta_e(colours: list[str]) -> float | None:
    labs = [_lab(rgb) for rgb in (_rgb(c) for c in dict.fromkeys(colours)) if rgb is not None]
    duplicates = len(colours) - len(set(colours))
    if duplicates:
        return 0.0
    if len(labs) < 2:
        return None
    return float(min(np.linalg.norm(a - b) for a, b in combinations(labs, 2)))


def _m_palette(d: _Digest) -> dict[str, Any]:
    delta_es, contrasts, rainbow = [], [], []
    for a in d.data_axes:
        de = _min_delta_e(a.colours) if len(a.colours) >= 2 else None
        if de is not None:
            delta_es.append(de)
        bg = _rgb(a.background)
        for c in dict.fromkeys(a.colours + a.mark_colours):
            rgb = _rgb(c)
            if rgb is not None and bg is not None:
                contrasts.append(float(contrast_ratio(luminance(rgb), luminance(bg))))
        rainbow += [c for c in a.cmaps if c in RAINBOW_CMAPS]
    distinct = _ramp(min(delta_es), 6.0, 20.0) if delta_es else 1.0
    visible = _ramp(min(contrasts), 1.1, 1.7) if contrasts else 1.0
    points = 5.0 * distinct + 3.0 * visible - (1.5 if rainbow else 0.0)
    notes = []
    if distinct < 1:
        notes.append(f"series colours hard to tell apart (min ΔE {min(delta_es):.1f})")
    if visible < 1:
        notes.append(f"a series colour fades into the background (contrast {min(contrasts):.2f})")
    if rainbow:
        notes.append(f"rainbow colormap {rainbow[0]}")
    return _metric(points, 8.0, min_delta_e=round(min(delta_es), 1) if delta_es else None,
                   min_mark_contrast=round(min(contrasts), 2) if contrasts else None, rainbow_cmaps=rainbow,
                   note="; ".join(notes))


def _m_text_contrast(d: _Digest) -> dict[str, Any]:
    ratios = []
    for t in d.texts:
        fg, bg = _rgb(t.colour), _rgb(d.backgrounds[t.figure])
        if fg is None or bg is None or t.role in ("annotation", SMALL):
            continue
        ratios.append(float(contrast_ratio(luminance(fg), luminance(bg))))
    if not ratios:
        return _metric(3.0, 3.0, note="no measurable text colours")
    low = sum(r < 3.0 for r in ratios)
    return _metric(3.0 * (1 - low / len(ratios)), 3.0, min_ratio=round(min(ratios), 2), n_low=low,
                   note=f"{low} texts below 3:1 contrast" if low else "")


def _m_legend_needed(d: _Digest) -> dict[str, Any]:
    need = [a for a in d.data_axes if a.needs_legend]
    if not need:
        return _metric(3.0, 3.0, note="no multi-series axes")
    have = sum(a.has_legend for a in need)
    return _metric(3.0 * have / len(need), 3.0, axes_needing=len(need), with_legend=have,
                   note="" if have == len(need) else "several series and no legend")


def _legend_cover(a: _Axes) -> tuple[float, float]:
    """(share of the axes' sampled data points under the legend, share of the legend's area
    on data marks in 4-px cells): the first catches a legend over lines, the second over bars."""
    x0, y0, x1, y1 = a.legend_box
    nx, ny = max(1, int((x1 - x0) // LEGEND_CELL_PX)), max(1, int((y1 - y0) // LEGEND_CELL_PX))
    covered = np.zeros((ny, nx), dtype=bool)
    hidden = 0.0
    if len(a.points):
        p = a.points
        inside = (p[:, 0] >= x0) & (p[:, 0] < x1) & (p[:, 1] >= y0) & (p[:, 1] < y1)
        hidden = float(inside.mean())
        q = p[inside]
        covered[np.clip(((q[:, 1] - y0) // LEGEND_CELL_PX).astype(int), 0, ny - 1),
                np.clip(((q[:, 0] - x0) // LEGEND_CELL_PX).astype(int), 0, nx - 1)] = True
    for b in a.boxes:
        bx0, by0 = max(b[0], x0), max(b[1], y0)
        bx1, by1 = min(b[2], x1), min(b[3], y1)
        if bx1 > bx0 and by1 > by0:
            covered[int((by0 - y0) // LEGEND_CELL_PX):int(np.ceil((by1 - y0) / LEGEND_CELL_PX)),
                    int((bx0 - x0) // LEGEND_CELL_PX):int(np.ceil((bx1 - x0) / LEGEND_CELL_PX))] = True
    return hidden, float(covered.mean())


def _m_legend_overlap(d: _Digest) -> dict[str, Any]:
    if not d.measured:
        return _unmeasured(8.0, "plotly places its legend at display time")
    legends = [a for a in d.data_axes if a.legend_box]
    if not legends:
        return _metric(8.0, 8.0, note="no legend inside an axes")
    covers = [_legend_cover(a) for a in legends]
    hidden, on_data = max(c[0] for c in covers), max(c[1] for c in covers)
    overlap = max(hidden, on_data)
    return _metric(8.0 * (1 - _ramp(overlap, 0.01, 0.12)), 8.0, data_hidden=round(hidden, 3),
                   legend_on_data=round(on_data, 3),
                   note=f"legend covers data ({hidden:.0%} of data points, {on_data:.0%} of its area)"
                   if overlap > 0.01 else "")


def _along(t: _Text, axis: str) -> tuple[float, float]:
    """(centre, extent) of a tick label along its axis; rotated labels are parallel strips."""
    x0, y0, x1, y1 = t.box
    height = t.size_px * 1.2
    angle = np.radians(t.rotation)
    if axis == "x":
        extent = x1 - x0 if abs(np.sin(angle)) < 0.17 else height / abs(np.sin(angle))
        return (x0 + x1) / 2, extent
    extent = y1 - y0 if abs(np.cos(angle)) < 0.17 or abs(np.sin(angle)) < 0.17 else height / abs(np.cos(angle))
    return (y0 + y1) / 2, extent


def _along_row(labels: list[_Text]) -> list[_Text]:
    """Tick labels in order along the line their centres lie on (their principal direction)."""
    centres = np.array([[(t.box[0] + t.box[2]) / 2, (t.box[1] + t.box[3]) / 2] for t in labels])
    if len(labels) < 2:
        return labels
    direction = np.linalg.svd(centres - centres.mean(axis=0), full_matrices=False)[2][0]
    return [labels[i] for i in np.argsort(centres @ direction, kind="stable")]


def _m_tick_collisions(d: _Digest) -> dict[str, Any]:
    if not d.measured:
        return _unmeasured(7.0, "plotly thins its tick labels at display time")
    groups: dict[tuple, list[_Text]] = {}
    for t in d.texts:
        if t.role in ("xtick", "ytick") and t.box:
            groups.setdefault((t.figure, t.axes, t.role), []).append(t)
    pairs = colliding = 0
    worst_axis = ""
    for (fig, ax, role), labels in groups.items():
        axis = role[0]
        if (fig, ax) in d.solid_axes:  # a 3-D axis runs at a slant: neighbours along it collide where their
            ordered = _along_row(labels)  # glyph boxes overlap (by more than the 1 px the 2-D test forgives)
            for a, b in zip(ordered, ordered[1:]):
                pairs += 1
                if min(a.box[2], b.box[2]) - max(a.box[0], b.box[0]) > 1 and \
                        min(a.box[3], b.box[3]) - max(a.box[1], b.box[1]) > 1:
                    colliding += 1
                    worst_axis = f"figure {fig} 3-D axes {ax} {axis}"
            continue
        spans = sorted(_along(t, axis) for t in labels)
        for (c1, e1), (c2, e2) in zip(spans, spans[1:]):
            pairs += 1
            if c2 - c1 < (e1 + e2) / 2 - 1:
                colliding += 1
                worst_axis = f"figure {fig} axes {ax} {axis}"
    share = colliding / pairs if pairs else 0.0
    return _metric(7.0 * (1 - _ramp(share, 0.0, 0.3)), 7.0, colliding_pairs=colliding, adjacent_pairs=pairs,
                   note=f"{colliding} tick labels collide ({worst_axis})" if colliding else "")


def _overlapping_pairs(boxed: list[_Text]):
    """Pairs of texts of one figure whose boxes overlap, by a sweep along x: near-linear for
    laid-out text (a box meets only its neighbours), where comparing every pair was quadratic."""
    by_figure: dict[int, list[_Text]] = {}
    for t in boxed:
        by_figure.setdefault(t.figure, []).append(t)
    for texts in by_figure.values():
        active: list[_Text] = []
        for t in sorted(texts, key=lambda t: t.box[0]):
            active = [a for a in active if a.box[2] > t.box[0]]
            for a in active:
                if a.box[1] < t.box[3] and t.box[1] < a.box[3]:
                    yield a, t
            active.append(t)


def _m_text_overlaps(d: _Digest) -> dict[str, Any]:
    if not d.measured:
        return _unmeasured(6.0, "plotly lays text out at display time")
    hits = []
    for a, b in _overlapping_pairs([t for t in d.texts if t.box]):
        if a.role == b.role and a.axes == b.axes and a.role in ("xtick", "ytick", "ztick", "legend"):
            continue
        inter = _inter(a.box, b.box)
        if inter > 0.1 * min(_area(a.box), _area(b.box)):
            hits.append(f"{a.role} {a.text[:20]!r} / {b.role} {b.text[:20]!r}")
    return _metric(6.0 * (1 - min(1.0, len(hits) / 4)), 6.0, overlapping_pairs=len(hits), examples=hits[:5],
                   note=f"{len(hits)} overlapping text pairs" if hits else "")


def _m_clipping(d: _Digest) -> dict[str, Any]:
    if not d.measured:
        return _unmeasured(5.0, "plotly clips at display time")
    clipped = []
    for t in d.texts + d.cut:
        w, h = d.sizes[t.figure]
        if t.box and (t.box[0] < -1 or t.box[1] < -1 or t.box[2] > w + 1 or t.box[3] > h + 1):
            clipped.append(f"{t.role} {t.text[:20]!r}")
    return _metric(5.0 * (1 - min(1.0, len(clipped) / 3)), 5.0, clipped=len(clipped), examples=clipped[:5],
                   note=f"{len(clipped)} texts cut off at the figure edge" if clipped else "")


def _m_empty_axes(d: _Digest) -> dict[str, Any]:
    empty = sum(a.empty for a in d.axes)
    share = empty / len(d.axes) if d.axes else 1.0
    return _metric(2.0 * (1 - share), 2.0, empty_axes=empty, note=f"{empty} empty axes" if empty else "")


def _m_space(d: _Digest) -> dict[str, Any]:
    if not d.measured:
        return _unmeasured(2.0, "plotly sizes its plot area at display time")
    shares = []
    for fig, (w, h) in enumerate(d.sizes):
        boxes = [a.position for a in d.data_axes if a.figure == fig and a.position]
        if boxes and w and h:
            shares.append(min(1.0, sum(_area(b) for b in boxes) / (w * h)))
    share = max(shares) if shares else 0.0
    return _metric(2.0 * _ramp(share, 0.15, 0.4), 2.0, plot_area_share=round(share, 3),
                   note="plot area is a small part of the figure" if share < 0.4 else "")


# ---------------------------------------------------------------------------------------------
# The judge
# ---------------------------------------------------------------------------------------------


class OfflinePlotJudge:
    """Deterministic plot-quality judge on the 40/30/30 rubric, from figure descriptions."""

    name = "offline-plot"
    version = "1"
    needs_images = False  # reads figure descriptions and plotly JSON

    async def judge(self, task: Task, figures: list[Figure]) -> StaticJudgement:
        return await asyncio.to_thread(self.judge_sync, task, figures)

    def judge_sync(self, task: Task, figures: list[Figure]) -> StaticJudgement:
        d = digest(figures)
        alignment = {"chart_kind": _m_chart_kind(task, d), "data": _m_data(d), "prompt_terms": _m_terms(task, d),
                     "title": _m_title(d)}
        aesthetics = {"font_size": _m_font_size(d), "axis_labels": _m_axis_labels(d), "palette": _m_palette(d),
                      "text_contrast": _m_text_contrast(d), "legend": _m_legend_needed(d)}
        structure = {"legend_overlap": _m_legend_overlap(d), "tick_collisions": _m_tick_collisions(d),
                     "text_overlaps": _m_text_overlaps(d), "clipping": _m_clipping(d),
                     "empty_axes": _m_empty_axes(d), "space": _m_space(d)}
        # Nothing drawn means nothing to be well-designed about: no points for avoiding mistakes.
        presence = 1.0 if d.data_axes else 0.0
        evidence = {"judge": f"{self.name}@{self.version}", "figures": [f.name for f in figures],
                    "geometry_measured": d.geometry, "presence": presence, "proxy_ceiling": PROXY_CEILING,
                    "notes": d.notes}
        return assemble(alignment, aesthetics, structure, ceiling=PROXY_CEILING, presence=presence,
                        evidence=evidence, headline=lambda total, a, e, s: _headline(total, a, e, s, presence))


def _headline(total: float, a: float, e: float, s: float, presence: float) -> str:
    head = (f"offline plot metrics (a proxy, not a reader; capped at {100 * PROXY_CEILING:.0f}): {total:.1f}/100 = "
            f"alignment {a:.1f}/40, aesthetics {e:.1f}/30, structure {s:.1f}/30.")
    if not presence:
        head += " Nothing was plotted, so aesthetics and structure score 0."
    return head
