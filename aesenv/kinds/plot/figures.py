"""The host draws every figure a script left, and describes what it drew.

A matplotlib figure arrives as the SVG the worker saved; a plotly figure as its JSON, which
plotly.js (ours, bundled with the host's `plotly`) lays out into SVG in the hermetic browser.
Either SVG is read on the host (`svg_scene.read_scene`: bounded, cleaned, re-written from what
was understood), drawn by the renderer into the PNG every judge sees, and described from that
drawing (`drawn.describe_scene`). Claims and pixels therefore come from one artifact out of the
script's reach: a figure can only be described as it is drawn.

Faults: a figure the script broke (an SVG that does not parse, an absurd size, a bomb, a plotly
JSON plotly.js refuses, a drawing that hangs or crashes the page) is the answer's: the figure is
kept as unusable with the reason. The renderer failing on our side makes the run `infra_error`.
"""

from __future__ import annotations

import asyncio
import functools
import io
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from aesenv.kinds.plot.drawn import describe_scene
from aesenv.kinds.plot.evidence import FigureDescription
from aesenv.kinds.plot.plotly_png import figure_problem, figure_size, plotly_js
from aesenv.kinds.plot.svg_scene import BadFigure, Box, Scene, read_scene
from aesenv.render import Renderer, RenderStatus
from aesenv.sandbox.base import Figure, PlotRun, RunStatus

MIN_DPI, MAX_DPI = 10.0, 1000.0
MAX_RASTER_PIXELS = 12_000_000  # the drawing is scaled down to fit (the SVG is vector)
FONTS = {  # served to the page so texts are drawn in the fonts matplotlib laid them out with
    ("DejaVu Sans", "normal", "normal"): "DejaVuSans.ttf",
    ("DejaVu Sans", "bold", "normal"): "DejaVuSans-Bold.ttf",
    ("DejaVu Sans", "normal", "oblique"): "DejaVuSans-Oblique.ttf",
    ("DejaVu Sans", "normal", "italic"): "DejaVuSans-Oblique.ttf",
    ("DejaVu Sans", "bold", "oblique"): "DejaVuSans-BoldOblique.ttf",
    ("DejaVu Sans Mono", "normal", "normal"): "DejaVuSansMono.ttf",
    ("DejaVu Sans Mono", "bold", "normal"): "DejaVuSansMono-Bold.ttf",
    ("DejaVu Serif", "normal", "normal"): "DejaVuSerif.ttf",
    ("DejaVu Serif", "bold", "normal"): "DejaVuSerif-Bold.ttf",
    ("DejaVu Serif", "normal", "italic"): "DejaVuSerif-Italic.ttf",
    ("STIXGeneral", "normal", "normal"): "STIXGeneral.ttf",
    ("STIXGeneral", "normal", "italic"): "STIXGeneralItalic.ttf",
    ("cmr10", "normal", "normal"): "cmr10.ttf",
    ("cmmi10", "normal", "normal"): "cmmi10.ttf",
    ("cmsy10", "normal", "normal"): "cmsy10.ttf",
    ("cmex10", "normal", "normal"): "cmex10.ttf",
}
# Our script in the page that holds only the clean copy of the figure (no script of the answer's):
# the box the browser drew each text in.
_TEXT_BOXES = """() => Array.from(document.querySelectorAll("svg text[id]")).map((t) => {
  const r = t.getBoundingClientRect();
  return [t.id, r.left, r.top, r.right, r.bottom];
})"""
# plotly.js's drawing, as one SVG: its stacked layers in order, serialised as XML; and the boxes
# of the 3-D scenes drawn into it as pictures (`_PLOTLY_PAGE`). It waits for the page to say it
# has drawn (or given up on its 3-D scenes).
_PLOTLY_SVG = """async () => {
  for (let i = 0; i < 200 && !document.body.hasAttribute("data-drawn"); i++) await new Promise((r) => setTimeout(r, 25));
  if (!document.body.hasAttribute("data-drawn")) return "unfinished";
  const layers = Array.from(document.querySelectorAll("#plot svg.main-svg"));
  if (!layers.length) return null;
  const scenes = Array.from(document.querySelectorAll("#plot g.glimages g.scene image")).map((image) =>
    ["x", "y", "width", "height"].map((name) => Number(image.getAttribute(name))));
  const ns = "http://www.w3.org/2000/svg";
  const out = document.createElementNS(ns, "svg");
  out.setAttribute("width", layers[0].getAttribute("width"));
  out.setAttribute("height", layers[0].getAttribute("height"));
  out.setAttribute("viewBox", "0 0 " + layers[0].getAttribute("width") + " " + layers[0].getAttribute("height"));
  const bg = layers[0].style.background;
  for (const layer of layers) for (const child of Array.from(layer.childNodes)) out.appendChild(child.cloneNode(true));
  if (bg) {
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("width", "100%"); rect.setAttribute("height", "100%");
    rect.setAttribute("x", "0"); rect.setAttribute("y", "0");
    rect.setAttribute("width", layers[0].getAttribute("width")); rect.setAttribute("height", layers[0].getAttribute("height"));
    rect.setAttribute("style", "fill:" + bg);
    out.insertBefore(rect, out.firstChild);
  }
  return {svg: new XMLSerializer().serializeToString(out), scenes};
}"""
_PLOTLY_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<style>html,body{{margin:0;background:#fff}}</style><script src="plotly.min.js"></script></head>
<body><div id="plot"></div><script type="application/json" id="spec">{spec}</script>
<script>
const fig = JSON.parse(document.getElementById("spec").textContent);
const layout = Object.assign({{}}, fig.layout || {{}}, {{width: {width}, height: {height}}});
// A 3-D scene is drawn with WebGL, off the SVG: plotly.js's own SVG export (Plotly.toImage) holds
// each as a picture (g.glimages), which is put where the export puts it, one group per scene.
async function scenes(gd) {{
  const places = gd.querySelector("svg.main-svg g.glimages");
  if (!places || !gd.querySelector("[id^=scene]")) return;
  const url = await Plotly.toImage(gd, {{format: "svg", width: {width}, height: {height}}});
  const exported = new DOMParser().parseFromString(decodeURIComponent(url.slice(url.indexOf(",") + 1)), "image/svg+xml");
  exported.querySelectorAll("g.glimages image").forEach((image, index) => {{
    const group = document.createElementNS("http://www.w3.org/2000/svg", "g");
    group.setAttribute("class", "scene gl" + index);
    group.appendChild(document.importNode(image, true));
    places.appendChild(group);
  }});
}}
Plotly.newPlot("plot", fig.data || [], layout, {{staticPlot: true, displayModeBar: false}})
  .then((gd) => scenes(gd).catch(() => document.body.setAttribute("data-scenes", "not drawn")))
  .finally(() => document.body.setAttribute("data-drawn", ""));
</script></body></html>"""


class OurFailure(RuntimeError):
    """The renderer failed on our side: the run is infra_error, never a score."""


@functools.lru_cache(maxsize=1)
def font_files() -> dict[str, bytes]:
    from matplotlib import get_data_path

    folder = Path(get_data_path()) / "fonts" / "ttf"
    return {name: (folder / name).read_bytes() for name in set(FONTS.values()) if (folder / name).is_file()}


@functools.lru_cache(maxsize=1)
def _font_faces() -> str:
    files = font_files()
    return "".join(f'@font-face{{font-family:"{family}";font-weight:{weight};font-style:{style};'
                   f'src:url("fonts/{name}")}}' for (family, weight, style), name in FONTS.items() if name in files)


def figure_page(scene: Scene) -> tuple[str, dict[str, bytes]]:
    """The page that shows the clean copy of a figure, and the fonts it may use."""
    html = ("<!doctype html><html><head><meta charset=\"utf-8\"><style>" + _font_faces() +
            "html,body{margin:0;padding:0;background:#fff;overflow:hidden}svg{display:block}</style></head><body>"
            + scene.svg + "</body></html>")
    return html, {f"fonts/{name}": data for name, data in font_files().items()}


async def draw_scene(renderer: Renderer, scene: Scene) -> tuple[bytes, np.ndarray, dict]:
    """(PNG, its pixels, the drawn box of each text) for a scene; BadFigure when the drawing is
    the figure's fault (it hung or crashed the page), OurFailure when it is ours."""
    html, files = figure_page(scene)
    size = (scene.width, scene.height)
    async with renderer.session(html, files=files, viewport=size) as (rendering, live):
        if rendering.status is RenderStatus.INFRA_ERROR:
            raise OurFailure(rendering.error or "the renderer failed")
        if live is None or rendering.status is not RenderStatus.OK or rendering.full_page_png is None:
            raise BadFigure(f"the figure could not be drawn ({rendering.status.value}: {rendering.error})"[:300])
        try:
            raw = await live.evaluate(_TEXT_BOXES, timeout_s=10)
        except Exception as exc:  # noqa: BLE001 - the page is ours and holds no script: our failure
            raise OurFailure(f"measuring the drawn texts failed: {type(exc).__name__}: {exc}"[:300]) from exc
    from PIL import Image

    with Image.open(io.BytesIO(rendering.full_page_png)) as image:
        picture = image.convert("RGB").crop((0, 0, scene.width, scene.height))
        out = io.BytesIO()
        picture.save(out, format="PNG")
        pixels = np.asarray(picture)
    boxes = {}
    for row in raw if isinstance(raw, list) else []:
        if isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) and all(
                isinstance(v, (int, float)) and np.isfinite(v) for v in row[1:]):
            boxes[row[0]] = (float(row[1]), float(row[2]), float(row[3]), float(row[4]))
    return out.getvalue(), pixels, boxes


async def plotly_svg(renderer: Renderer, figure_json: str) -> tuple[str, list[Box]]:
    """The SVG plotly.js draws for a figure's JSON (in the hermetic browser), and the boxes of its
    3-D scenes (drawn into it as pictures). Loading plotly.js (4.6 MB) can outlast a page deadline
    on a busy machine: a page that hangs is tried once more before it counts as the figure's."""
    try:
        return await _plotly_svg(renderer, figure_json)
    except _Hung:
        pass
    try:
        return await _plotly_svg(renderer, figure_json)
    except _Hung as exc:
        raise BadFigure(str(exc)) from exc


class _Hung(Exception):
    """plotly.js's page hung a stage."""


async def _plotly_svg(renderer: Renderer, figure_json: str) -> tuple[str, list[Box]]:
    js = plotly_js()
    if js is None:
        raise OurFailure("plotly is not installed on the host")
    problem = figure_problem(figure_json)
    if problem:
        raise BadFigure(f"unusable plotly figure: {problem}")
    try:
        width, height = figure_size(figure_json, renderer.config.viewport_width, renderer.config.viewport_height)
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        raise BadFigure(f"unreadable plotly JSON: {str(exc)[:300]}") from exc
    page = _PLOTLY_PAGE.format(spec=figure_json.replace("</", "<\\/"), width=width, height=height)
    async with renderer.session(page, files={"plotly.min.js": js}, viewport=(width, height)) as (rendering, live):
        if rendering.status is RenderStatus.INFRA_ERROR:
            raise OurFailure(rendering.error or "the renderer failed")
        if rendering.status is RenderStatus.TIMEOUT:
            raise _Hung(f"plotly.js could not draw the figure ({rendering.status.value}: {rendering.error})"[:300])
        if live is None or rendering.status is not RenderStatus.OK:
            raise BadFigure(f"plotly.js could not draw the figure ({rendering.status.value}: {rendering.error})"[:300])
        if rendering.page_errors:
            raise BadFigure(f"plotly.js failed on the figure: {rendering.page_errors[0]}"[:300])
        try:
            drawn = await live.evaluate(_PLOTLY_SVG, timeout_s=10)
        except Exception as exc:  # noqa: BLE001 - reading plotly's drawing is ours to do
            raise OurFailure(f"reading plotly's drawing failed: {type(exc).__name__}: {exc}"[:300]) from exc
    if drawn == "unfinished":
        raise _Hung("plotly.js did not finish drawing the figure")
    if not isinstance(drawn, dict) or not isinstance(drawn.get("svg"), str):
        raise BadFigure("plotly.js drew nothing")
    scenes = [(float(x), float(y), float(x + w), float(y + h)) for x, y, w, h in
              (row for row in drawn.get("scenes") or [] if isinstance(row, list) and len(row) == 4
               and all(isinstance(v, (int, float)) and np.isfinite(v) for v in row))]
    return drawn["svg"], scenes


async def draw_figure(renderer: Renderer, figure: Figure) -> Figure:
    """The figure drawn on the host and described from that drawing; unusable (with the reason)
    when the answer broke it. OurFailure propagates."""
    try:
        solid: list[Box] = []
        if figure.kind == "plotly":
            (svg, solid), dpi = await plotly_svg(renderer, figure.plotly_json or ""), None
        else:
            if not figure.svg:
                raise BadFigure("the figure was not saved as SVG")
            dpi = min(MAX_DPI, max(MIN_DPI, float(figure.dpi or 100.0)))
        scene = await asyncio.to_thread(read_scene, svg if figure.kind == "plotly" else figure.svg, dpi=dpi,
                                        max_pixels=MAX_RASTER_PIXELS)
        png, pixels, boxes = await draw_scene(renderer, scene)
        meta = await asyncio.to_thread(describe_scene, scene, pixels, boxes, dpi or 96.0,
                                       [tuple(v * scene.scale for v in b) for b in solid])
        meta = FigureDescription.model_validate(meta).model_dump()
    except ValidationError as exc:  # a description past its bounds: the figure is too much to judge
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return figure.model_copy(update={"png": None, "meta": {
            "error": f"the figure's description is out of bounds ({where}: {first['msg']})"[:300], "unusable": True}})
    except BadFigure as exc:
        return figure.model_copy(update={"png": None, "meta": {"error": str(exc)[:300], "unusable": True}})
    return figure.model_copy(update={"png": png, "meta": meta, "svg": None})


async def draw_figures(run: PlotRun, renderer: Renderer) -> PlotRun:
    """The run with every figure drawn and described on the host (see the module docstring)."""
    if not run.figures:
        return run
    try:
        figures = [await draw_figure(renderer, f) for f in run.figures]
    except OurFailure as exc:
        return run.model_copy(update={"status": RunStatus.INFRA_ERROR,
                                      "reason": f"drawing the figures failed on our side: {exc}"[:500]})
    return run.model_copy(update={"figures": figures})


__all__ = ["OurFailure", "draw_figure", "draw_figures", "draw_scene", "figure_page", "plotly_svg"]
