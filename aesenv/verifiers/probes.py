"""Reads from the live page: HTML tables as rendered, and the options of live ECharts instances.

Both run inside the page under the live page's deadline; they return plain JSON, capped in size
so a hostile page cannot flood the record.
"""

from __future__ import annotations

from typing import Any

from aesenv.render.live import LivePage

MAX_TABLES = 20
MAX_ROWS = 200
MAX_CHARTS = 20
MAX_POINTS = 1000

# Visible tables only (a table hidden with CSS is not shown to anyone); cells as innerText.
_TABLES_JS = """([maxTables, maxRows]) => {
  const shown = (el) => { const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return r.width >= 1 && r.height >= 1 && cs.visibility !== "hidden" && cs.display !== "none"; };
  return [...document.querySelectorAll("table")].filter(shown).slice(0, maxTables).map((t) =>
    [...t.rows].slice(0, maxRows).map((row) => [...row.cells].map((c) => (c.innerText || "").trim())));
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
  for (const el of document.querySelectorAll("[_echarts_instance_]")) {
    if (charts.length >= maxCharts) break;
    const inst = ec.getInstanceByDom(el);
    if (!inst || (inst.isDisposed && inst.isDisposed())) continue;
    const surface = [...el.querySelectorAll("canvas, svg")].some((s) => {
      const r = s.getBoundingClientRect(); return r.width >= 1 && r.height >= 1; });
    if (!surface) continue;
    const opt = inst.getOption() || {};
    const datasets = list(opt.dataset).map(table);
    let categories = [...axes(opt.xAxis), ...axes(opt.yAxis)];
    if (!categories.length && datasets[0]) categories = [column(datasets[0], 0).map(label)];
    const r = el.getBoundingClientRect();
    charts.push({
      box: [r.left + scrollX, r.top + scrollY, r.width, r.height],
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
        return { type: String(s.type || ""), name, values: data.map(point), names };
      }),
    });
  }
  return { library: true, charts };
}"""


async def read_tables(live: LivePage) -> list[list[list[str]]]:
    return await live.evaluate(_TABLES_JS, [MAX_TABLES, MAX_ROWS])


async def read_charts(live: LivePage) -> dict[str, Any]:
    """`{"library": whether window.echarts exists, "charts": [{box, categories, series}]}`."""
    return await live.evaluate(_CHARTS_JS, [MAX_CHARTS, MAX_POINTS])
