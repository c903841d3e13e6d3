"""Plotly figures from the sandbox: whether their JSON can be drawn, at what size, and plotly.js.

The sandbox returns plotly figures as JSON (`fig.to_json()`); plotly lays them out in a browser.
`aesenv.kinds.plot.figures` draws them with the same hermetic Chromium that renders pages (plotly.js
from the renderer's virtual origin: the copy bundled with the host's `plotly` package, the
version that wrote the JSON) and reads the SVG plotly.js drew, which is then drawn and described
like a matplotlib figure's. Nothing is read from the JSON's own claims (a title in the
background colour is drawn, and found invisible, like any other text).
"""

from __future__ import annotations

import functools
import json
import reprlib

DEFAULT_SIZE = (700, 450)  # plotly's own default figure size
MIN_SIZE_PX, MAX_SIZE_PX = 10, 10_000  # plotly's own minimum; the largest size a figure may ask for


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
