"""Plotly figures to PNG with the renderer's Chromium.

The sandbox returns plotly figures as JSON (`fig.to_json()`); plotly lays them out in a browser.
We draw them with the same hermetic Chromium that renders pages: a page that loads plotly.js
from the renderer's virtual origin (the copy bundled with the host's `plotly` package, which is
the version that wrote the JSON) and calls `Plotly.newPlot` as a static plot at the figure's
size, then crop the screenshot to that size. Loading plotly.js (4.6 MB) costs the browser
seconds, so the pipeline does this only for judges that look at images (the VLM); the offline
judge reads the JSON. Without `plotly` on the host the figure keeps no image and says why.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import reprlib

from aesenv.render import Renderer
from aesenv.render.models import RenderStatus
from aesenv.sandbox.base import PlotRun

DEFAULT_SIZE = (700, 450)  # plotly's own default figure size
MIN_SIZE_PX, MAX_SIZE_PX = 10, 10_000  # plotly's own minimum; the largest size a figure may ask for

_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<style>html,body{{margin:0;background:#fff}}</style><script src="plotly.min.js"></script></head>
<body><div id="plot"></div><script type="application/json" id="spec">{spec}</script>
<script>
const fig = JSON.parse(document.getElementById("spec").textContent);
const layout = Object.assign({{}}, fig.layout || {{}}, {{width: {width}, height: {height}}});
Plotly.newPlot("plot", fig.data || [], layout, {{staticPlot: true, displayModeBar: false}});
</script></body></html>"""


@functools.lru_cache(maxsize=1)
def plotly_js() -> bytes | None:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        return None
    return get_plotlyjs().encode("utf-8")


def _size(value: object, key: str) -> float | None:
    """A layout width or height: None when unset, else a finite number of pixels in bounds, or
    ValueError saying what is wrong with it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"layout.{key} is {_shown(value)}, not a number of pixels")
    if not MIN_SIZE_PX <= value <= MAX_SIZE_PX:  # also NaN, infinities and huge integers
        raise ValueError(f"layout.{key} is {_shown(value)}: a figure size must be a finite number of pixels "
                         f"from {MIN_SIZE_PX} to {MAX_SIZE_PX}")
    return float(value)


def _shown(value: object) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = json.dumps(value)  # as the JSON spelled it: Infinity, NaN
    else:
        text = reprlib.repr(value)  # bounded for a huge list or string
    return text if len(text) <= 60 else text[:59] + "…"


def figure_problem(figure_json: object) -> str:
    """Why a plotly figure's JSON (made by untrusted code in the sandbox) cannot be drawn or
    judged, or "" when it can: it must be a JSON object whose `layout` is an object, whose `data`
    is a list of trace objects, and whose width and height, when set, are plausible sizes (plotly
    itself takes any number of at least 10; 1e400 parses as infinity)."""
    if not isinstance(figure_json, str):
        return "no figure JSON"
    try:
        figure = json.loads(figure_json)
    except (ValueError, RecursionError) as exc:
        return f"the figure JSON does not parse ({type(exc).__name__}: {str(exc)[:200]})"
    if not isinstance(figure, dict):
        return "the figure JSON is not an object"
    layout = figure.get("layout")
    if layout is not None and not isinstance(layout, dict):
        return "the figure's layout is not an object"
    data = figure.get("data")
    if data is not None and not (isinstance(data, list) and all(isinstance(t, dict) for t in data)):
        return "the figure's data is not a list of traces"
    try:
        for key in ("width", "height"):
            _size((layout or {}).get(key), key)
    except ValueError as exc:
        return str(exc)
    return ""


def figure_size(figure_json: str, max_width: int, max_height: int) -> tuple[int, int]:
    """The size to draw a figure at: its own (plotly's default when unset), within the viewport;
    ValueError (RecursionError for absurdly nested JSON) when the JSON or its size is unusable."""
    figure = json.loads(figure_json)
    layout = (figure.get("layout") if isinstance(figure, dict) else None) or {}
    if not isinstance(layout, dict):
        raise ValueError("the figure's layout is not an object")
    width = _size(layout.get("width"), "width") or DEFAULT_SIZE[0]
    height = _size(layout.get("height"), "height") or DEFAULT_SIZE[1]
    return max(50, min(int(width), max_width)), max(50, min(int(height), max_height))


async def plotly_png(renderer: Renderer, figure_json: str) -> tuple[bytes | None, str]:
    """(PNG, "") or (None, why not). Never raises for a bad figure."""
    js = plotly_js()
    if js is None:
        return None, "plotly is not installed on the host: judged from its JSON only"
    try:
        width, height = figure_size(figure_json, renderer.config.viewport_width, renderer.config.viewport_height)
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        return None, f"unreadable plotly JSON: {str(exc)[:300]}"
    page = _PAGE.format(spec=figure_json.replace("</", "<\\/"), width=width, height=height)
    rendering = await renderer.render(page, files={"plotly.min.js": js})
    if rendering.status is RenderStatus.INFRA_ERROR or rendering.viewport_png is None:
        return None, f"plotly figure did not render: {rendering.error or rendering.status.value}"
    if rendering.page_errors:
        return None, f"plotly.js failed on the figure: {rendering.page_errors[0]}"
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(rendering.viewport_png)).crop((0, 0, width, height)).save(out, format="PNG")
    return out.getvalue(), ""


async def with_plotly_pngs(run: PlotRun, renderer: Renderer) -> PlotRun:
    """The run with a PNG drawn for each plotly figure (or the reason there is none in its meta)."""
    pending = [i for i, f in enumerate(run.figures) if f.kind == "plotly" and f.png is None and f.plotly_json]
    if not pending:
        return run
    drawn = await asyncio.gather(*(plotly_png(renderer, run.figures[i].plotly_json) for i in pending))
    figures = list(run.figures)
    for i, (png, why) in zip(pending, drawn):
        figures[i] = figures[i].model_copy(update={"png": png, "meta": {**figures[i].meta, "png_error": why}
                                                   if why else figures[i].meta})
    return run.model_copy(update={"figures": figures})
