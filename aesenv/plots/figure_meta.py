"""Describe a drawn matplotlib figure as plain JSON: what a plot judge needs to measure it.

STANDALONE on purpose: the sandbox worker loads this file by path inside the sandbox (also in
the Docker image, where aesenv is not installed), so it imports only matplotlib and numpy.

`describe(fig)` returns pixel geometry in the figure's own raster (origin top-left, y down, at
`fig.dpi`): every visible text with its role, size and box; per axes its box, labels, tick
labels, legend, artist counts by class, the colours of its data series, and a capped sample of
the pixels its data marks cover (points for lines and markers, boxes for bars, wedges, images
and fills). The judge compares those against each other; it never needs the figure object.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import colors as mcolors

SCHEMA_VERSION = 1
MAX_TEXTS = 400
MAX_POINTS_PER_ARTIST = 400
MAX_POINTS_PER_AXES = 2000
MAX_BOXES_PER_AXES = 400
STEP_PX = 4.0  # lines are sampled every few pixels so a segment crossing a legend is seen


def _hex(color) -> str | None:
    try:
        return mcolors.to_hex(color, keep_alpha=False)
    except (ValueError, TypeError):
        return None


def _alpha(color) -> float:
    try:
        return float(mcolors.to_rgba(color)[3])
    except (ValueError, TypeError):
        return 1.0


class _Geometry:
    """Display coordinates (origin bottom-left) -> raster pixels (origin top-left)."""

    def __init__(self, fig) -> None:
        self.width = float(fig.bbox.width)
        self.height = float(fig.bbox.height)

    def box(self, bb) -> list[float] | None:
        if bb is None or not all(math.isfinite(float(v)) for v in (bb.x0, bb.y0, bb.x1, bb.y1)):
            return None
        x0, y0, x1, y1 = (float(v) for v in (bb.x0, bb.y0, bb.x1, bb.y1))
        return [round(x0, 1), round(self.height - y1, 1), round(x1, 1), round(self.height - y0, 1)]

    def points(self, xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        finite = np.isfinite(xy).all(axis=1)
        if not finite.all():  # copied only when needed: a line can hold millions of points
            xy = xy[finite]
        return np.column_stack([xy[:, 0], self.height - xy[:, 1]])


def _window_box(artist, renderer, geo: _Geometry) -> list[float] | None:
    try:
        return geo.box(artist.get_window_extent(renderer))
    except Exception:  # noqa: BLE001 - an artist that cannot measure itself is left out
        return None


def _text(t, role: str, axes: int | None, renderer, geo: _Geometry, dpi: float) -> dict | None:
    if not t.get_visible() or not t.get_text().strip():
        return None
    bbox = _window_box(t, renderer, geo)
    if bbox is None or bbox[2] - bbox[0] <= 0:
        return None
    size = float(t.get_fontsize())
    return {"role": role, "text": t.get_text()[:200], "axes": axes, "size_pt": round(size, 2),
            "size_px": round(size * dpi / 72.0, 2), "rotation": round(float(t.get_rotation()) % 180, 1),
            "color": _hex(t.get_color()), "bbox": bbox}


MAX_STEPS_PER_SEGMENT = 2000


def _step_ends(pts: np.ndarray) -> np.ndarray:
    """Cumulative counts of the points a path gets when each segment is cut into STEP_PX steps (at
    least 1, at most MAX_STEPS_PER_SEGMENT per segment), computed in place: a few numbers per
    point of the path, whatever its length in pixels."""
    lengths = np.diff(pts[:, 0])
    np.hypot(lengths, np.diff(pts[:, 1]), out=lengths)
    lengths /= STEP_PX
    np.ceil(lengths, out=lengths)
    steps = lengths.astype(int)
    del lengths
    np.maximum(steps, 1, out=steps)
    np.minimum(steps, MAX_STEPS_PER_SEGMENT, out=steps)
    return np.cumsum(steps, out=steps)


def _densify_capped(paths: list[np.ndarray], limit: int) -> np.ndarray:
    """At most `limit` points spread evenly over the paths, joined, as if a point had been inserted
    every STEP_PX along each segment (so a segment crossing a legend is seen). Only the chosen
    points are computed: building every inserted point first costs one per 4 px of line, which for
    a long noisy series (millions of samples, each segment spanning the axes) is hundreds of
    millions of points, GBs charged to the script's memory limit for 400 points of evidence."""
    ends = [_step_ends(pts) if len(pts) >= 2 else None for pts in paths]
    sizes = [int(e[-1]) + 1 if e is not None else len(pts) for pts, e in zip(paths, ends)]
    total = sum(sizes)
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
        seg = np.searchsorted(path_ends, local, side="right")  # len(path_ends): the path's last point
        final = seg == len(path_ends)
        seg = np.minimum(seg, len(path_ends) - 1)
        first = np.where(seg > 0, path_ends[seg - 1], 0)
        count = path_ends[seg] - first
        chosen = pts[seg] + (pts[seg + 1] - pts[seg]) * ((local - first) / count)[:, None]
        chosen[final] = pts[-1]
        out[mine] = chosen
    return out


def _cap(pts: np.ndarray, limit: int) -> np.ndarray:
    if len(pts) <= limit:
        return pts
    return pts[np.linspace(0, len(pts) - 1, limit).astype(int)]


def _tick_labels(axis, name: str, index: int, renderer, geo, dpi) -> list[dict]:
    """Tick labels actually drawn: visible, non-empty, and at a location inside the view."""
    if not axis.get_visible():
        return []
    lo, hi = sorted(float(v) for v in axis.get_view_interval())
    eps = (hi - lo) * 1e-6 + 1e-12
    out = []
    for tick in axis.get_major_ticks():
        loc = tick.get_loc()
        if loc is None or not (lo - eps <= float(loc) <= hi + eps):
            continue
        for label in (tick.label1, tick.label2):
            entry = _text(label, f"{name}tick", index, renderer, geo, dpi)
            if entry:
                out.append(entry)
    return out


def _legend(legend, renderer, geo, dpi, axes: int | None) -> dict | None:
    if legend is None or not legend.get_visible():
        return None
    handles = getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])
    colours = []
    for h in handles:
        colour = None
        for getter in ("get_color", "get_facecolor"):
            fn = getattr(h, getter, None)
            if fn is None:
                continue
            value = fn()
            if isinstance(value, np.ndarray) and value.ndim == 2:
                value = value[0] if len(value) else None
            colour = _hex(value) if value is not None else None
            if colour:
                break
        colours.append(colour)
    frame = legend.get_frame()
    return {"axes": axes, "bbox": _window_box(legend, renderer, geo),
            "entries": [t.get_text()[:80] for t in legend.get_texts()],
            "handle_colors": colours,
            "frame_alpha": round(float(frame.get_alpha() if frame.get_alpha() is not None else 1.0), 3)
            if frame.get_visible() else 0.0}


def _is_colorbar(ax) -> bool:
    return hasattr(ax, "_colorbar") or ax.get_label() == "<colorbar>"


def _axes(ax, index: int, renderer, geo: _Geometry, dpi: float) -> tuple[dict, list[dict]]:
    texts: list[dict] = []

    def add(t, role):
        entry = _text(t, role, index, renderer, geo, dpi)
        if entry:
            texts.append(entry)

    for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
        if t is not None:
            add(t, "title")
    axis_names = [("x", ax.xaxis), ("y", ax.yaxis)] + ([("z", ax.zaxis)] if hasattr(ax, "zaxis") else [])
    if ax.axison:
        for name, axis in axis_names:
            if axis.get_visible():
                add(axis.label, f"{name}label")
                add(axis.offsetText, "tick_offset")
            texts.extend(_tick_labels(axis, name, index, renderer, geo, dpi))
    for t in ax.texts:
        add(t, "annotation")

    counts: dict[str, int] = {}
    series: list[dict] = []
    points: list[np.ndarray] = []
    boxes: list[list[float]] = []

    def count(artist) -> None:
        counts[type(artist).__name__] = counts.get(type(artist).__name__, 0) + 1

    for line in ax.lines:
        if not line.get_visible():
            continue
        count(line)
        pts = geo.points(line.get_transform().transform(line.get_xydata()))
        drawn = line.get_linestyle() not in ("None", "none", "", " ")
        pts = _densify_capped([pts], MAX_POINTS_PER_ARTIST) if drawn else _cap(pts, MAX_POINTS_PER_ARTIST)
        points.append(pts)
        series.append({"kind": "line", "label": line.get_label(), "color": _hex(line.get_color()),
                       "alpha": line.get_alpha(), "n": len(line.get_xydata()), "drawn": drawn,
                       "linewidth": round(float(line.get_linewidth()), 2)})
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        count(coll)
        kind = type(coll).__name__
        faces = coll.get_facecolor() if len(coll.get_facecolor()) else coll.get_edgecolor()
        uniq = []
        for c in faces[:200]:
            h = _hex(c)
            if h and h not in uniq:
                uniq.append(h)
        entry = {"kind": kind, "label": coll.get_label(), "colors": uniq[:8], "n_colors": len(uniq)}
        offsets = coll.get_offsets()
        if kind == "PathCollection" and len(offsets):
            pts = geo.points(coll.get_offset_transform().transform(offsets))
            points.append(_cap(pts, MAX_POINTS_PER_ARTIST))
            entry["n"] = len(offsets)
            entry["alpha"] = _alpha(faces[0]) if len(faces) else 1.0
        elif kind == "LineCollection":
            transform = coll.get_transform()
            segs = [geo.points(transform.transform(p.vertices)) for p in coll.get_paths()[:200]]
            if segs:
                points.append(_densify_capped(segs, MAX_POINTS_PER_ARTIST))
        else:
            box = _window_box(coll, renderer, geo)
            if box:
                boxes.append(box)
            cmap = getattr(coll, "get_cmap", lambda: None)()
            if coll.get_array() is not None and cmap is not None:
                entry["cmap"] = cmap.name
        series.append(entry)
    bar_patches = set()
    for container in ax.containers:
        patches = [p for p in getattr(container, "patches", []) or [] if p is not None]
        if patches:
            bar_patches.update(id(p) for p in patches)
            series.append({"kind": "bars", "label": container.get_label(),
                           "color": _hex(patches[0].get_facecolor()), "n": len(patches)})
    for patch in ax.patches:
        if not patch.get_visible():
            continue
        count(patch)
        box = _window_box(patch, renderer, geo)
        if box and (box[2] - box[0]) * (box[3] - box[1]) > 0:
            boxes.append(box)
        if id(patch) not in bar_patches and type(patch).__name__ == "Wedge":
            series.append({"kind": "wedge", "label": patch.get_label(), "color": _hex(patch.get_facecolor())})
    for image in ax.images:
        if image.get_visible():
            count(image)
            box = _window_box(image, renderer, geo)
            if box:
                boxes.append(box)
            series.append({"kind": "image", "cmap": image.get_cmap().name})

    all_points = np.concatenate(points) if points else np.zeros((0, 2))
    all_points = _cap(all_points, MAX_POINTS_PER_AXES)
    legend = _legend(ax.get_legend(), renderer, geo, dpi, index)
    if legend:
        texts.extend(e for t in ax.get_legend().get_texts() if (e := _text(t, "legend", index, renderer, geo, dpi)))
        title = ax.get_legend().get_title()
        entry = _text(title, "legend", index, renderer, geo, dpi)
        if entry:
            texts.append(entry)
    desc = {
        "index": index,
        "name": ax.name,
        "visible": bool(ax.get_visible()),
        "axison": bool(ax.axison),
        "colorbar": _is_colorbar(ax),
        "bbox": _window_box(ax, renderer, geo) if ax.get_visible() else None,
        "position": geo.box(ax.bbox),
        "facecolor": _hex(ax.get_facecolor()),
        "title": " ".join(t.get_text() for t in (ax.title, getattr(ax, "_left_title", None),
                                                  getattr(ax, "_right_title", None)) if t is not None).strip(),
        "xlabel": ax.get_xlabel(),
        "ylabel": ax.get_ylabel(),
        "zlabel": ax.get_zlabel() if hasattr(ax, "get_zlabel") else "",
        "xscale": ax.get_xscale() if hasattr(ax, "get_xscale") else "",
        "yscale": ax.get_yscale() if hasattr(ax, "get_yscale") else "",
        "artists": counts,
        "n_texts_in_axes": len(ax.texts),
        "n_tables": len(getattr(ax, "tables", [])),
        "series": series[:60],
        "legend": legend,
        "data_points": np.round(all_points).astype(int).tolist(),
        "data_boxes": boxes[:MAX_BOXES_PER_AXES],
    }
    return desc, texts


def describe(fig, *, layout: bool = True) -> dict:
    """Describe the figure (JSON-serialisable). It must be laid out first: by default this does
    a layout pass without rasterising (~30 ms); pass `layout=False` right after `fig.savefig(...)`
    at the figure's dpi, which already laid it out, so the positions are those of the saved PNG."""
    import matplotlib

    if layout:
        draw = getattr(fig, "draw_without_rendering", None)
        if draw is not None:
            draw()
        else:
            fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    geo = _Geometry(fig)
    dpi = float(fig.dpi)
    texts: list[dict] = []
    axes: list[dict] = []
    for i, ax in enumerate(fig.axes):
        desc, ax_texts = _axes(ax, i, renderer, geo, dpi)
        axes.append(desc)
        texts.extend(ax_texts)
    special = set()
    for attr, role in (("_suptitle", "suptitle"), ("_supxlabel", "xlabel"), ("_supylabel", "ylabel")):
        t = getattr(fig, attr, None)
        if t is not None:
            special.add(id(t))
            entry = _text(t, role, None, renderer, geo, dpi)
            if entry:
                texts.append(entry)
    for t in fig.texts:
        if id(t) in special:  # the suptitle and sup-labels also live in fig.texts
            continue
        entry = _text(t, "annotation", None, renderer, geo, dpi)
        if entry:
            texts.append(entry)
    legends = []
    for legend in fig.legends:
        entry = _legend(legend, renderer, geo, dpi, None)
        if entry:
            legends.append(entry)
            texts.extend(e for t in legend.get_texts() if (e := _text(t, "legend", None, renderer, geo, dpi)))
    suptitle = getattr(fig, "_suptitle", None)
    return {
        "schema_version": SCHEMA_VERSION,
        "matplotlib": matplotlib.__version__,
        "width_px": round(geo.width, 1),
        "height_px": round(geo.height, 1),
        "dpi": dpi,
        "facecolor": _hex(fig.get_facecolor()),
        "suptitle": suptitle.get_text() if suptitle is not None and suptitle.get_visible() else "",
        "axes": axes,
        "figure_legends": legends,
        "texts": texts[:MAX_TEXTS],
        "n_texts": len(texts),
    }
