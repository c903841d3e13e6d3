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
# `getInstanceByDom(...).getOption()`: the options the chart is drawn from after merging.
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
  const axes = (list) => (Array.isArray(list) ? list : list ? [list] : [])
    .filter((a) => Array.isArray(a.data) && a.data.length).map((a) => a.data.slice(0, maxPoints).map(label));
  const charts = [];
  for (const el of document.querySelectorAll("[_echarts_instance_]")) {
    if (charts.length >= maxCharts) break;
    const inst = ec.getInstanceByDom(el);
    if (!inst || (inst.isDisposed && inst.isDisposed())) continue;
    const opt = inst.getOption() || {};
    const r = el.getBoundingClientRect();
    charts.push({
      box: [r.left + scrollX, r.top + scrollY, r.width, r.height],
      categories: [...axes(opt.xAxis), ...axes(opt.yAxis)],
      series: (opt.series || []).slice(0, 50).map((s) => ({
        type: String(s.type || ""), name: s.name == null ? "" : String(s.name),
        values: (Array.isArray(s.data) ? s.data : []).slice(0, maxPoints).map(point),
        names: (Array.isArray(s.data) ? s.data : []).slice(0, maxPoints)
          .map((d) => (d && typeof d === "object" && !Array.isArray(d) && d.name != null ? String(d.name) : "")),
      })),
    });
  }
  return { library: true, charts };
}"""


async def read_tables(live: LivePage) -> list[list[list[str]]]:
    return await live.evaluate(_TABLES_JS, [MAX_TABLES, MAX_ROWS])


async def read_charts(live: LivePage) -> dict[str, Any]:
    """`{"library": whether window.echarts exists, "charts": [{box, categories, series}]}`."""
    return await live.evaluate(_CHARTS_JS, [MAX_CHARTS, MAX_POINTS])
