"""Reads from the live page: HTML tables as shown, and the live ECharts instances that are drawn.

Tables are read in our isolated world (`aesenv.render.inpage`), through the first filter of what
is shown (`seen.js`), then taken away from the page (`aesenv.render.counterfactual`): a table
counts only where its pixels change without it, and a cell's text is the text the render's
counterfactual found shown. An ECharts instance's options live only in the page's own world, so
what a chart claims there (its container, data and colours) counts only where our world and the
pixels confirm it: the container it names is shown and large enough to hold a chart, taking it
away changes enough of its pixels to be marks, and those marks are in the colours its series
claim (stripes of the page's own behind the container change nothing). Answers are plain JSON,
capped in size so a hostile page cannot flood the record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aesenv.render.counterfactual import Ink
from aesenv.render.live import LivePage

MAX_TABLES = 20
MAX_ROWS = 200
MAX_CHARTS = 20
MAX_POINTS = 1000

MIN_CHART_PX = (80, 50)  # a container smaller than this cannot show a chart anyone reads
MIN_CHART_INK = 0.002    # share of the container's pixels that must be marks (a thin line chart: ~0.5%)
COLOUR_NEAR = 40         # per-channel distance within which a pixel has a series' claimed colour
MIN_COLOUR_SHARE = 0.001  # of the container's pixels in each claimed series colour

# Tables that pass the first filter, each with its box (page pixels), the item that takes it away
# and its cells' shown text; in our world, through shadow roots.
_TABLES_JS = """([maxTables, maxRows]) => {
  const N = globalThis.__aesenv__, seen = N.seen({});
  const out = [];
  for (const t of seen.deepAll("table")) {
    if (out.length >= maxTables) break;
    const shown = seen.element(t);
    if (!shown.shown) continue;
    const rows = N.all(t, "tr").filter((r) => N.closest(r, "table") === t).slice(0, maxRows);
    const b = shown.seen;
    out.push({ box: [b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0], item: N.cf.elementItem(t),
               rows: rows.map((r) => N.all(r, "td,th").filter((c) => N.parent(c) === r).map((c) => seen.textIn(c, 500))) });
  }
  return out;
}"""

# Every element ECharts marked as a container, in document order (the same order in both
# worlds): its shown part and whether a drawing surface inside it is shown; in our world.
_CONTAINERS_JS = """(maxCharts) => {
  const N = globalThis.__aesenv__, seen = N.seen({});
  return N.all(N.document, "[_echarts_instance_]").slice(0, 4 * maxCharts).map((el) => {
    const shown = seen.element(el), b = shown.seen;
    const surface = N.all(el, "canvas, svg").some((s) => seen.element(s).shown);
    return { shown: shown.shown && surface, opacity: shown.opacity, box: [b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0],
             item: N.cf.elementItem(el) };
  });
}"""

# Instances are found by the attribute `echarts.init` puts on its container and read back with
# `getInstanceByDom(...).getOption()`: the options the chart is drawn from after merging. Series
# fed from a `dataset` (array rows with a header, or objects) are read through `encode` or, by
# default, the column after the category column. An instance counts only when it drew a visible
# surface (its canvas or SVG), so a chart object without a picture is not a chart on the page.
_CHARTS_JS = """([maxCharts, maxPoints]) => {
  const ec = self.echarts;
  if (!ec || typeof ec.getInstanceByDom !== "function") return { library: false, charts: [] };
  const num = (v) => { const n = typeof v === "string" ? Number(v) : v;
    return typeof n === "number" && isFinite(n) ? n : null; };
  const point = (d) => {
    if (d !== null && typeof d === "object" && !Array.isArray(d)) d = d.value;
    if (Array.isArray(d)) d = d[d.length - 1];
    return num(d);
  };
  const label = (d) => String(d !== null && typeof d === "object" ? (d.value ?? d.name ?? "") : d);
  const list = (v) => (Array.isArray(v) ? v : v ? [v] : []);
  const axes = (value) => list(value).filter((a) => Array.isArray(a.data) && a.data.length)
    .map((a) => a.data.slice(0, maxPoints).map(label));
  const table = (dataset) => {  // -> { dims: [...], rows: [[...]] } or null
    const source = dataset && dataset.source;
    if (!Array.isArray(source) || !source.length) return null;
    if (Array.isArray(source[0])) {
      const header = list(dataset.dimensions).length ? null : source[0];
      const named = header && header.every((h) => typeof h === "string");
      const dims = list(dataset.dimensions).map((d) => String(d && d.name !== undefined ? d.name : d));
      return { dims: dims.length ? dims : named ? header.map(String) : source[0].map((_, i) => String(i)),
               rows: (named ? source.slice(1) : source).slice(0, maxPoints) };
    }
    const dims = list(dataset.dimensions).map((d) => String(d && d.name !== undefined ? d.name : d));
    const keys = dims.length ? dims : Object.keys(source[0]);
    return { dims: keys, rows: source.slice(0, maxPoints).map((o) => keys.map((k) => o[k])) };
  };
  const column = (t, dim) => { const i = typeof dim === "number" ? dim : t.dims.indexOf(String(dim));
    return i < 0 ? [] : t.rows.map((r) => r[i]); };
  const charts = [];
  const containers = [...document.querySelectorAll("[_echarts_instance_]")];
  for (let at = 0; at < containers.length; at++) {
    if (charts.length >= maxCharts) break;
    const inst = ec.getInstanceByDom(containers[at]);
    if (!inst || (inst.isDisposed && inst.isDisposed())) continue;
    const opt = inst.getOption() || {};
    const palette = list(opt.color).filter((c) => typeof c === "string");
    const visual = list(opt.visualMap).length > 0;
    const datasets = list(opt.dataset).map(table);
    let categories = [...axes(opt.xAxis), ...axes(opt.yAxis)];
    if (!categories.length && datasets[0]) categories = [column(datasets[0], 0).map(label)];
    charts.push({
      container: at,
      categories,
      series: list(opt.series).slice(0, 50).map((s, index) => {
        let data = Array.isArray(s.data) ? s.data.slice(0, maxPoints) : [];
        let names = data.map((d) => (d && typeof d === "object" && !Array.isArray(d) && d.name != null ? String(d.name) : ""));
        const t = datasets[s.datasetIndex || 0];
        let name = s.name == null ? "" : String(s.name);
        if (!data.length && t) {
          const enc = s.encode || {};
          const dims = [enc.value, enc.y, enc.x, enc.itemName].flatMap(list);
          const numeric = (d) => column(t, d).filter((v) => num(v) !== null).length > column(t, d).length / 2;
          const valueDim = dims.find(numeric) ?? index + 1;
          const nameDim = dims.find((d) => d !== valueDim && !numeric(d)) ?? 0;
          data = column(t, valueDim);
          names = column(t, nameDim).map(label);
          if (!name) name = typeof valueDim === "number" ? (t.dims[valueDim] ?? "") : String(valueDim);
        }
        const style = s.itemStyle || s.lineStyle || {};
        // A colour set by a gradient, a callback or a visual map is not claimed (not checked).
        const colour = visual ? "" : typeof style.color === "string" ? style.color
          : style.color == null && palette.length ? palette[index % palette.length] : "";
        return { type: String(s.type || ""), name, values: data.map(point), names, colour: String(colour).slice(0, 40) };
      }),
    });
  }
  return { library: true, charts };
}"""


async def read_tables(live: LivePage) -> list[list[list[str]]]:
    """The shown tables' rows of cell texts: tables whose pixels change when taken away."""
    tables = await live.evaluate(_TABLES_JS, [MAX_TABLES, MAX_ROWS])
    tables = [t for t in tables if isinstance(t, dict)] if isinstance(tables, list) else []
    inks = await live.element_ink([(int(t["item"]), tuple(t["box"])) for t in tables])
    return [t["rows"] for t in tables if inks.get(int(t["item"])) and inks[int(t["item"])].shown]


async def read_charts(live: LivePage) -> dict[str, Any]:
    """`{"library": whether the page claims ECharts, "charts": [{box, categories, series}],
    "unconfirmed": [why each claimed chart did not count]}`: the page's claims (read in its
    own world), kept where our world finds their container shown and taking the container away
    changes marks in the claimed colours."""
    claimed = await live.evaluate_in_page(_CHARTS_JS, [MAX_CHARTS, MAX_POINTS])
    if not isinstance(claimed, dict) or not isinstance(claimed.get("charts"), list):
        return {"library": False, "charts": [], "unconfirmed": ["the page's chart claims are not readable"]}
    containers = await live.evaluate(_CONTAINERS_JS, MAX_CHARTS)
    named = {c.get("container") for c in claimed["charts"][:MAX_CHARTS] if isinstance(c, dict)}
    wanted = [(int(box["item"]), tuple(box["box"])) for at, box in enumerate(containers)
              if at in named and box.get("shown")]
    inks = await live.element_ink(wanted)
    charts, unconfirmed = [], []
    for chart in claimed["charts"][:MAX_CHARTS]:
        if not isinstance(chart, dict):
            continue
        at = chart.get("container")
        box = containers[at] if isinstance(at, int) and 0 <= at < len(containers) else None
        why = _unconfirmed(chart, box, inks.get(int(box["item"])) if box else None)
        if why:
            unconfirmed.append(why)
            continue
        charts.append({**chart, "box": box["box"]})
    return {"library": bool(claimed.get("library")), "charts": charts, "unconfirmed": unconfirmed}


def _unconfirmed(chart: dict[str, Any], container: dict[str, Any] | None, ink: Ink | None) -> str:
    """Why a claimed chart does not count ("" when it does)."""
    if container is None or not container.get("shown"):
        return "a chart whose container is not shown"
    x, y, w, h = container["box"]
    if w < MIN_CHART_PX[0] or h < MIN_CHART_PX[1] or container.get("opacity", 1) < 0.5:
        return f"a chart in a container of {w:.0f}x{h:.0f}px: too small or faint to read"
    if ink is None or not ink.shown or ink.share < MIN_CHART_INK:
        return "a chart whose container's pixels do not change without it (no marks of its own)"
    colours = ink.colours.astype(np.int16)
    missing = [s.get("name") or s.get("colour") for s in chart.get("series", [])[:20]
               if isinstance(s, dict) and not _shows_colour(colours, ink.area, str(s.get("colour") or ""))]
    if missing:
        return f"a chart whose series {missing[:5]} are not drawn in their colours"
    return ""


def _shows_colour(ink: np.ndarray, area: int, colour: str) -> bool:
    """Whether the chart's own marks (the pixels that change without it) show the claimed colour
    (an unparsable or gradient claim is not checked)."""
    rgb = _parse_colour(colour)
    if rgb is None:
        return True
    near = int((np.abs(ink - np.array(rgb, dtype=np.int16)).max(axis=1) <= COLOUR_NEAR).sum()) if len(ink) else 0
    return near >= MIN_COLOUR_SHARE * area


def _parse_colour(text: str) -> tuple[int, int, int] | None:
    text = text.strip().lower()
    if text.startswith("#") and len(text) in (4, 7):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        try:
            return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
        except ValueError:
            return None
    if text.startswith("rgb"):
        parts = text[text.find("(") + 1:text.rfind(")")].replace("/", " ").replace(",", " ").split()
        try:
            return int(float(parts[0])), int(float(parts[1])), int(float(parts[2]))
        except (ValueError, IndexError):
            return None
    return None
