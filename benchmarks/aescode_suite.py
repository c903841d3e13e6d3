"""The AesCode requirement suite: task specs we wrote, and the pages that exercise the verifiers.

Each spec is one artboard task (poster, slide, dashboard, report page) with required strings,
ECharts charts and/or HTML tables. From a spec this module builds the task row (what
`builtin:aescode` ships) and six pages: the correct one and five broken variants, each breaking
exactly one requirement the way a model gets it wrong, and only the channels that should see it
fail (the requirement's own verifier, and AesCode's `table_chart` for a table or chart; `vgr`
too where a predicate binds what broke):

    missing_text    a required string paraphrased (its last word dropped)     -> text, vgr
    overflow        a badge placed half past the canvas's right edge           -> boundary
    static_chart    the first chart kept only as an SVG picture of itself      -> chart, table_chart, vgr
                    (inline or <img>; same text and marks, no live chart)
    wrong_chart     one value of the first chart's first series off by one     -> chart, table_chart
    wrong_cell      one body cell of the first table changed                   -> table, table_chart
    wrong_order     two steps of the process swapped                           -> vgr
    forbidden_logo  a logo the brief rules out, in the header's corner         -> vgr
    misaligned_row  one key-figure card dropped below its row                  -> vgr

Each task also carries its target design graph and VGR predicates (`Task.design`).

    python -m benchmarks.aescode_suite --write   # regenerate builtin/aescode.jsonl and the pages
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE_FILE = ROOT / "aesenv" / "tasks" / "builtin" / "aescode.jsonl"
PAGES_DIR = Path(__file__).resolve().parent / "aescode_pages"
ECHARTS_URL = "https://cdn.jsdelivr.net/npm/echarts@5/dist/echarts.min.js"

# variant -> the channels it must fail (and no other)
VARIANTS: dict[str, tuple[str, ...]] = {
    "missing_text": ("text", "vgr"), "overflow": ("boundary",), "static_chart": ("chart", "table_chart", "vgr"),
    "wrong_chart": ("chart", "table_chart"), "wrong_cell": ("table", "table_chart"), "wrong_order": ("vgr",),
    "forbidden_logo": ("vgr",), "misaligned_row": ("vgr",)}
LOGO_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" '
            'fill="#444"/><path d="M18 40 L32 16 L46 40 Z" fill="#fff"/></svg>')


@dataclass(frozen=True)
class Chart:
    kind: str  # bar | line | pie
    title: str
    labels: list[str]
    series: dict[str, list[float]]


@dataclass(frozen=True)
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Spec:
    id: str
    category: str
    brief: str
    size: tuple[int, int]
    title: str
    subtitle: str
    footer: str
    palette: tuple[str, str, str]  # background, text, accent
    charts: list[Chart] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    kpis: list[tuple[str, str]] = field(default_factory=list)
    with_reference: bool = False
    steps: list[str] = field(default_factory=list)  # a process shown in order, left to right

    @property
    def required_strings(self) -> list[str]:
        return [self.title, self.footer]


def _c(kind, title, labels, **series) -> Chart:
    return Chart(kind, title, labels, {k.replace("_", " "): v for k, v in series.items()})


SPECS: list[Spec] = [
    Spec("poster-jazz-night", "Website", "A poster for a jazz night with a pie chart of the set list by style.",
         (900, 1200), "Blue Hour Jazz Night", "Five sets, one long evening by the river", "Doors open 19:30 at Pier 7",
         ("#0f1b33", "#f3efe6", "#f2a541"),
         charts=[_c("pie", "Set list by style", ["Bebop", "Swing", "Modal", "Latin"], Minutes=[40, 35, 25, 20])],
         with_reference=True),
    Spec("poster-book-fair", "Website", "A poster for a book fair with a table of the reading stages.",
         (900, 1200), "Riverside Book Fair 2026", "Three stages, forty authors, one weekend", "Free entry all weekend",
         ("#fbf6ee", "#2b2118", "#b5482a"), steps=["Register online", "Collect your badge", "Meet the authors", "Vote for a book"],
         tables=[Table("Reading stages", ["Stage", "Saturday", "Sunday"],
                       [["Garden", "Poetry", "Essays"], ["Library", "Crime", "History"],
                        ["Boathouse", "Children", "Travel"], ["Courtyard", "Science", "Comics"]])]),
    Spec("poster-marathon", "Website", "A city marathon poster with a line chart of the elevation profile.",
         (1080, 1350), "Harbour City Marathon", "42.195 km through six neighbourhoods", "Registration closes 1 March",
         ("#ffffff", "#111827", "#e11d48"), steps=["Register", "Pick up your bib", "Run the course", "Collect your medal"],
         charts=[_c("line", "Elevation (m)", ["0k", "10k", "20k", "30k", "42k"], Elevation=[12, 48, 31, 65, 10])],
         kpis=[("Runners", "18,000"), ("Start", "07:00"), ("Water points", "14")], with_reference=True),
    Spec("poster-film-festival", "Website", "A film festival poster with a screening table and a bar chart of films per country.",
         (1080, 1350), "Northlight Film Festival", "Ten days of new cinema from the far north", "Tickets from 9 euro",
         ("#14141c", "#ececf4", "#7dd3fc"),
         charts=[_c("bar", "Films per country", ["Norway", "Iceland", "Finland", "Sweden"], Films=[14, 9, 12, 17])],
         tables=[Table("Opening weekend", ["Day", "Film", "Hall"],
                       [["Fri", "Ice Road", "Aurora"], ["Sat", "Salt Wind", "Fjord"], ["Sun", "Long Dusk", "Aurora"]])]),
    Spec("poster-farmers-market", "Website", "A farmers market poster with a bar chart of stalls by produce.",
         (900, 1200), "Saturday Farmers Market", "Fresh from twenty local farms", "Every Saturday 8 to 13",
         ("#f4f9ef", "#1d2b12", "#4d7c0f"),
         charts=[_c("bar", "Stalls by produce", ["Vegetables", "Fruit", "Dairy", "Bread", "Flowers"],
                    Stalls=[9, 6, 3, 4, 2])]),
    Spec("poster-science-talk", "Website", "A poster for a public science talk with a table of the talk programme.",
         (900, 1200), "Why the Sky Is Dark", "An evening talk on light, distance and time", "Lecture Hall 2, Thursday 18:00",
         ("#0b1020", "#e6e9f5", "#a78bfa"),
         tables=[Table("Programme", ["Time", "Part"],
                       [["18:00", "Welcome"], ["18:10", "Olbers paradox"], ["18:40", "Questions"], ["19:00", "Telescopes"]])],
         kpis=[("Speaker", "Dr. Ines Kovac"), ("Seats", "220")], with_reference=True),
    Spec("slide-quarterly-revenue", "Data Visualization", "A results slide with a bar chart of quarterly revenue.",
         (1280, 720), "Revenue grew 18% this year", "Quarterly revenue in million euro", "Source: internal finance, FY2025",
         ("#ffffff", "#0f172a", "#2563eb"),
         charts=[_c("bar", "Revenue (M EUR)", ["Q1", "Q2", "Q3", "Q4"], Revenue=[4.2, 4.8, 5.1, 5.9])],
         kpis=[("Year total", "20.0 M"), ("Growth", "+18%")], with_reference=True),
    Spec("slide-roadmap", "UI Component", "A roadmap slide with a table of milestones.",
         (1280, 720), "Product Roadmap 2026", "What ships when, and who owns it", "Dates are targets, not promises",
         ("#f8fafc", "#1e293b", "#0d9488"), steps=["Discover", "Design", "Build", "Launch"],
         tables=[Table("Milestones", ["Milestone", "Quarter", "Owner"],
                       [["Offline mode", "Q1", "Mobile"], ["Team spaces", "Q2", "Platform"],
                        ["Audit log", "Q3", "Security"], ["Public API", "Q4", "Platform"]])]),
    Spec("slide-survey-results", "Data Visualization", "A survey slide with a pie chart of the answers and a table of counts.",
         (1280, 720), "Most teams prefer async reviews", "Survey of 412 engineers, May 2026", "Margin of error 4 points",
         ("#fffdf7", "#27272a", "#d97706"),
         charts=[_c("pie", "Preferred review style", ["Async", "Pairing", "Meetings"], Answers=[231, 118, 63])],
         tables=[Table("Counts", ["Answer", "Count"], [["Async", "231"], ["Pairing", "118"], ["Meetings", "63"]])]),
    Spec("slide-energy-mix", "Data Visualization", "A slide with a line chart of the solar and wind share over five years.",
         (1280, 720), "Renewables passed half of supply", "Share of electricity supply, percent", "Data: grid operator yearly reports",
         ("#f0fdf4", "#14532d", "#16a34a"),
         charts=[_c("line", "Share of supply (%)", ["2021", "2022", "2023", "2024", "2025"],
                    Solar=[11, 14, 18, 22, 27], Wind=[19, 21, 23, 24, 26])], with_reference=True),
    Spec("slide-hiring-plan", "UI Component", "A hiring plan slide with a bar chart of open roles by team and a table of start dates.",
         (1280, 720), "Hiring Plan for the Second Half", "Open roles by team", "Approved by the leadership team",
         ("#ffffff", "#111111", "#9333ea"), steps=["Apply", "Interview", "Offer", "Start"],
         charts=[_c("bar", "Open roles", ["Design", "Backend", "Data", "Support"], Roles=[3, 6, 2, 4])],
         tables=[Table("Start dates", ["Team", "First start"], [["Design", "July"], ["Backend", "August"],
                                                                ["Data", "September"], ["Support", "July"]])]),
    Spec("slide-latency", "Data Visualization", "An engineering slide with a line chart of p95 latency per week.",
         (1280, 720), "Latency is down by a third", "p95 API latency per week, milliseconds", "Measured at the edge, all regions",
         ("#0a0a0a", "#fafafa", "#22d3ee"),
         charts=[_c("line", "p95 latency (ms)", ["W1", "W2", "W3", "W4", "W5", "W6"],
                    p95=[310, 295, 260, 240, 215, 205])],
         kpis=[("Now", "205 ms"), ("Target", "200 ms")]),
    Spec("dashboard-sales", "Data Visualization", "A sales dashboard with a bar chart by region, a line chart by month and a table of top products.",
         (1440, 900), "Sales Overview March 2026", "All regions, all channels", "Updated nightly at 02:00 UTC",
         ("#f1f5f9", "#0f172a", "#4f46e5"),
         charts=[_c("bar", "Sales by region (k)", ["North", "South", "East", "West"], Sales=[320, 275, 410, 198]),
                 _c("line", "Monthly orders", ["Jan", "Feb", "Mar"], Orders=[1820, 1960, 2240])],
         tables=[Table("Top products", ["Product", "Units", "Revenue"],
                       [["Trail Shoe", "1,204", "96,320"], ["Rain Shell", "860", "111,800"],
                        ["Day Pack", "745", "44,700"], ["Wool Cap", "690", "13,800"]])],
         kpis=[("Revenue", "1.20 M"), ("Orders", "6,020"), ("Return rate", "3.1%")], with_reference=True),
    Spec("dashboard-support", "Data Visualization", "A support dashboard with a pie chart of tickets by channel and a table of agents.",
         (1440, 900), "Support Desk This Week", "Tickets, response times and agents", "Response times are business hours",
         ("#ffffff", "#1f2937", "#ea580c"), steps=["New", "Triaged", "In progress", "Solved"],
         charts=[_c("pie", "Tickets by channel", ["Email", "Chat", "Phone"], Tickets=[540, 380, 120])],
         tables=[Table("Agents", ["Agent", "Solved", "First reply"],
                       [["Amara", "142", "14 min"], ["Jonas", "128", "19 min"], ["Keiko", "133", "11 min"],
                        ["Luis", "97", "25 min"]])],
         kpis=[("Open", "64"), ("Solved", "1,040"), ("CSAT", "92%")]),
    Spec("dashboard-web-traffic", "Data Visualization", "A web analytics dashboard with a line chart of visits and a bar chart of sources.",
         (1440, 900), "Website Traffic Last 7 Days", "Visits and where they came from", "Bots are filtered out",
         ("#0f172a", "#e2e8f0", "#38bdf8"),
         charts=[_c("line", "Daily visits", ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
                    Visits=[5200, 5480, 5010, 6120, 6400, 3900, 3650]),
                 _c("bar", "Sources", ["Search", "Direct", "Social", "Email"], Share=[46, 28, 17, 9])],
         kpis=[("Visits", "35,760"), ("Bounce", "41%")], with_reference=True),
    Spec("dashboard-warehouse", "Data Visualization", "A warehouse dashboard with a bar chart of stock by aisle and a table of low-stock items.",
         (1440, 900), "Warehouse Stock Levels", "Units on hand by aisle", "Counted at 06:00 today",
         ("#fafaf9", "#1c1917", "#ca8a04"),
         charts=[_c("bar", "Units by aisle", ["A", "B", "C", "D", "E"], Units=[1200, 860, 1430, 540, 990])],
         tables=[Table("Low stock", ["Item", "Aisle", "Units"],
                       [["Pallet wrap", "D", "12"], ["Label rolls", "B", "30"], ["Tape 50mm", "D", "41"]])]),
    Spec("dashboard-fitness", "Data Visualization", "A personal fitness dashboard with a line chart of steps and a pie chart of activity types.",
         (1440, 900), "Your Training Week", "Steps per day and how you moved", "Goal: 10,000 steps a day",
         ("#fdf2f8", "#3b0a24", "#db2777"),
         charts=[_c("line", "Steps", ["Mon", "Tue", "Wed", "Thu", "Fri"], Steps=[8200, 11050, 9400, 12030, 7600]),
                 _c("pie", "Activity", ["Run", "Cycle", "Swim"], Minutes=[95, 140, 45])],
         kpis=[("Best day", "12,030"), ("Active min", "280")]),
    Spec("page-price-list", "Website", "A pricing page with a table comparing plans.",
         (1280, 960), "Plans for Every Team Size", "Simple monthly pricing, cancel anytime", "Prices exclude VAT",
         ("#ffffff", "#111827", "#059669"),
         tables=[Table("Compare plans", ["Plan", "Price", "Seats", "Storage"],
                       [["Starter", "9", "3", "20 GB"], ["Team", "29", "15", "200 GB"],
                        ["Business", "79", "50", "1 TB"], ["Enterprise", "Custom", "Unlimited", "Custom"]])],
         kpis=[("Free trial", "30 days"), ("Support", "24/7")], with_reference=True),
    Spec("page-timetable", "Website", "A train timetable page with a table of departures.",
         (1280, 960), "Departures from Central Station", "Regional trains, platform and time", "Times are local",
         ("#111827", "#f9fafb", "#facc15"),
         tables=[Table("Next departures", ["Time", "Destination", "Platform"],
                       [["08:02", "Lakeside", "3"], ["08:15", "Old Town", "1"], ["08:21", "Airport", "5"],
                        ["08:34", "Hill Park", "2"], ["08:40", "Lakeside", "3"]])]),
    Spec("page-nutrition", "Website", "A recipe page with a nutrition table and a pie chart of macronutrients.",
         (1280, 960), "Green Lentil Soup", "Serves four, ready in forty minutes", "Values per serving",
         ("#fffbeb", "#292524", "#65a30d"), steps=["Rinse the lentils", "Soften the onion", "Simmer for 25 minutes", "Blend half"],
         charts=[_c("pie", "Macronutrients (g)", ["Protein", "Carbs", "Fat"], Grams=[18, 42, 9])],
         tables=[Table("Nutrition", ["Nutrient", "Amount"], [["Energy", "320 kcal"], ["Fibre", "14 g"],
                                                             ["Salt", "1.1 g"], ["Iron", "5 mg"]])],
         with_reference=True),
    Spec("page-league-table", "Website", "A sports page with a league table and a bar chart of goals scored.",
         (1280, 960), "Coastal League Standings", "After matchday 12", "Top two are promoted",
         ("#f0f9ff", "#0c4a6e", "#0284c7"),
         charts=[_c("bar", "Goals scored", ["Harbour FC", "Dunes United", "Pier Rovers", "Cliff Town"],
                    Goals=[27, 24, 19, 15])],
         tables=[Table("Standings", ["Team", "Played", "Points"],
                       [["Harbour FC", "12", "28"], ["Dunes United", "12", "25"], ["Pier Rovers", "12", "20"],
                        ["Cliff Town", "12", "16"]])]),
    Spec("page-climate-report", "Data Visualization", "A climate report page with a line chart of mean temperature.",
         (1280, 960), "A Warmer Decade in Numbers", "Mean annual temperature, degrees Celsius", "Station record since 1950",
         ("#fff7ed", "#431407", "#ea580c"),
         charts=[_c("line", "Mean temperature", ["2016", "2018", "2020", "2022", "2024"],
                    Mean=[9.8, 10.1, 10.4, 10.3, 10.9])],
         kpis=[("Change", "+1.1 C"), ("Warmest", "2024")]),
]


# --- pages -------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _option(chart: Chart) -> dict:
    if chart.kind == "pie":
        (name, values), = chart.series.items()
        return {"animation": False, "tooltip": {}, "legend": {"bottom": 0},
                "series": [{"name": name, "type": "pie", "radius": ["35%", "65%"],
                            "data": [{"name": n, "value": v} for n, v in zip(chart.labels, values)]}]}
    return {"animation": False, "grid": {"left": 48, "right": 16, "top": 24, "bottom": 32},
            "legend": {"top": 0} if len(chart.series) > 1 else {"show": False},
            "xAxis": {"type": "category", "data": chart.labels}, "yAxis": {"type": "value"},
            "series": [{"name": n, "type": chart.kind, "data": v} for n, v in chart.series.items()]}


def _picture_script(i: int, chart: Chart, alt: str, inline: bool) -> str:
    """The chart drawn as a picture: ECharts draws it once with its SVG renderer, off the page, at
    the container's size; the page keeps the drawing (inline, or as an <img> of it) and disposes
    the chart. The picture shows what the live chart would, text and marks in the same places,
    but no chart is left on the page: what it claims cannot be read or confirmed."""
    place = ("box.innerHTML = svg;" if inline else
             "const img = document.createElement('img'); img.alt = " + json.dumps(alt) + "; "
             "img.src = 'data:image/svg+xml;base64,' + btoa(unescape(encodeURIComponent(svg))); box.appendChild(img);")
    return (f"(function () {{ const box = document.getElementById('chart-{i}'); "
            "const drawn = echarts.init(document.createElement('div'), null, "
            "{renderer: 'svg', width: box.clientWidth, height: box.clientHeight}); "
            f"drawn.setOption({json.dumps(_option(chart))}); const svg = drawn.renderToSVGString(); drawn.dispose(); "
            f"{place} }})();")


def _panel(title: str, body: str) -> str:
    return f'<section class="panel"><h2>{_esc(title)}</h2>{body}</section>'


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in table.header)
    rows = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


_DROPPED = ' style="margin-top: 14px"'


def page(spec: Spec, variant: str = "correct") -> str:
    """The page for `spec`: correct, or broken in the one way `variant` names."""
    if variant not in ("correct", *VARIANTS):
        raise ValueError(f"unknown variant {variant!r}")
    width, height = spec.size
    bg, fg, accent = spec.palette
    title = spec.title.rsplit(" ", 1)[0] if variant == "missing_text" else spec.title
    charts = list(spec.charts)
    if variant == "wrong_chart":
        first = charts[0]
        name, values = next(iter(first.series.items()))
        # A typo-sized error: the chart is wrong, but it is drawn with the same text in the same
        # places (a doubled slice would move a pie's labels, which an image-based layout rightly sees).
        changed = [values[0] + 1, *values[1:]]
        charts[0] = Chart(first.kind, first.title, first.labels, {**first.series, name: changed})
    tables = list(spec.tables)
    if variant == "wrong_cell":
        first_t = tables[0]
        rows = [list(r) for r in first_t.rows]
        rows[1][-1] = rows[0][-1] if rows[0][-1] != rows[1][-1] else rows[1][-1] + "0"
        tables[0] = Table(first_t.title, first_t.header, rows)
    panels, scripts = [], []
    for i, chart in enumerate(charts):
        body = f'<div class="chart" id="chart-{i}"></div>'
        if variant == "static_chart" and i == 0:  # inline SVG on even widths, an <img> of it on odd ones
            scripts.append(_picture_script(i, chart, chart.title, inline=spec.size[0] % 2 == 0))
        else:
            scripts.append(f"echarts.init(document.getElementById('chart-{i}')).setOption({json.dumps(_option(chart))});")
        panels.append(_panel(chart.title, body))
    panels += [_panel(t.title, _table_html(t)) for t in tables]
    kpis = "".join(f'<div class="kpi"{_DROPPED if variant == "misaligned_row" and i == 1 else ""}><span>{_esc(k)}</span>'
                   f'<strong>{_esc(v)}</strong></div>' for i, (k, v) in enumerate(spec.kpis))
    steps = list(spec.steps)
    if variant == "wrong_order":
        steps[1], steps[2] = steps[2], steps[1]
    process = "".join(f'<li class="step"><b>{i}</b> {_esc(step)}</li>' for i, step in enumerate(steps, start=1))
    logo = ""
    if variant == "forbidden_logo":
        data = base64.b64encode(LOGO_SVG.encode()).decode()
        logo = (f'<img class="logo" alt="{_esc(spec.title.split()[0])} logo" src="data:image/svg+xml;base64,{data}" '
                f'style="position:absolute; top:24px; right:24px; width:56px; height:56px" />')
    portrait = height > width
    columns = 1 if portrait else min(len(panels), 3)
    badge = ('<div class="badge" style="left:' + str(width - 90) + 'px">New this year</div>'
             if variant == "overflow" else "")
    library = f'<script src="{ECHARTS_URL}"></script>' if scripts else ""
    init = f"<script>{' '.join(scripts)}</script>" if scripts else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width={width}, initial-scale=1" />
<title>{_esc(spec.title)}</title>
{library}
<style>
* {{ box-sizing: border-box; }}
html, body {{ margin: 0; padding: 0; }}
body {{ width: {width}px; height: {height}px; position: relative; background: {bg}; color: {fg};
  font-family: "DejaVu Sans", Arial, sans-serif; }}
.frame {{ display: flex; flex-direction: column; gap: 20px; height: 100%; padding: 40px; }}
header h1 {{ margin: 0; font-size: {56 if portrait else 40}px; line-height: 1.1; color: {accent}; }}
header p {{ margin: 8px 0 0; font-size: 20px; }}
.kpis {{ display: flex; gap: 16px; }}
.kpi {{ flex: 1; padding: 12px 16px; border: 1px solid {accent}; border-radius: 10px; }}
.kpi span {{ display: block; font-size: 14px; }}
.kpi strong {{ font-size: 24px; }}
main {{ flex: 1; min-height: 0; display: grid; gap: 20px;
  grid-template-columns: repeat({columns}, 1fr); grid-auto-rows: 1fr; }}
.panel {{ display: flex; flex-direction: column; min-height: 0; padding: 14px; border-radius: 12px;
  background: rgba(127, 127, 127, 0.08); }}
.panel h2 {{ margin: 0 0 8px; font-size: 18px; }}
.chart {{ flex: 1; min-height: 0; }}
.chart img {{ width: 100%; height: 100%; object-fit: contain; }}
table {{ width: 100%; border-collapse: collapse; font-size: 16px; }}
th, td {{ text-align: left; padding: 6px 8px; border-bottom: 1px solid rgba(127, 127, 127, 0.4); }}
th {{ color: {accent}; }}
footer {{ font-size: 16px; }}
.steps {{ display: flex; gap: 12px; margin: 0; padding: 0; list-style: none; }}
.step {{ flex: 1; padding: 8px 12px; font-size: 16px; border-left: 4px solid {accent}; }}
.step b {{ color: {accent}; margin-right: 6px; }}
.badge {{ position: absolute; top: 40px; width: 200px; padding: 10px; text-align: center;
  background: {accent}; color: {bg}; font-weight: 700; border-radius: 8px; }}
</style>
</head>
<body>
<div class="frame">
<header><h1>{_esc(title)}</h1><p>{_esc(spec.subtitle)}</p></header>
{f'<div class="kpis">{kpis}</div>' if kpis else ""}
{f'<ol class="steps">{process}</ol>' if process else ""}
<main>{"".join(panels)}</main>
<footer>{_esc(spec.footer)}</footer>
</div>
{badge}
{logo}
{init}
</body>
</html>
"""


# --- tasks -------------------------------------------------------------------------------------


def _prompt(spec: Spec) -> str:
    width, height = spec.size
    lines = [spec.brief, f"Design it as a single HTML file on a fixed {width}x{height} px artboard: "
             "nothing may extend past its edges."]
    lines += [f'Show the text "{s}" exactly as written.' for s in spec.required_strings]
    for chart in spec.charts:
        series = "; ".join(f"{n}: {', '.join(f'{v:g}' for v in vals)}" for n, vals in chart.series.items())
        lines.append(f'Draw a {chart.kind} chart titled "{chart.title}" with ECharts (echarts.init), '
                     f"labels {', '.join(chart.labels)} and series {series}.")
    for table in spec.tables:
        rows = " | ".join(", ".join(r) for r in table.rows)
        lines.append(f'Include an HTML table "{table.title}" with the header {", ".join(table.header)} '
                     f"and the rows {rows}.")
    if spec.kpis:
        lines.append("Set the key figures side by side in one row: "
                     + ", ".join(f"{k} {v}" for k, v in spec.kpis) + ".")
    if spec.steps:
        lines.append("Show the steps in this order, left to right: " + ", ".join(spec.steps) + ".")
    lines.append("Do not show any logo or brand mark.")
    return " ".join(lines)


def _design(spec: Spec) -> dict:
    """The target graph and the predicates a reviewer of this brief would check (the
    requirements' own, each string, chart and table there, are implied by the `vgr` channel)."""
    nodes = [{"id": "headline", "type": "heading", "text": spec.title},
             {"id": "subtitle", "type": "text", "text": spec.subtitle},
             {"id": "footer", "type": "text", "text": spec.footer},
             {"id": "logo", "type": "image", "text": "logo"}]
    predicates = [
        {"id": "headline-prominent", "kind": "attribute", "binds": ["headline"], "test": {"op": "most_prominent"},
         "question": "Is the headline the most prominent text on the canvas?"},
        {"id": "headline-then-subtitle", "kind": "relation", "binds": ["headline", "subtitle"],
         "test": {"op": "before"}, "question": "Does the subtitle follow the headline?"},
        {"id": "footer-closes", "kind": "global", "binds": ["footer"], "test": {"op": "last"},
         "question": "Is the footer line the last text on the canvas?"},
        {"id": "no-logo", "kind": "forbidden", "binds": ["logo"], "passes": "no", "test": {"op": "present"},
         "question": "Is a logo or brand mark shown anywhere?"},
        {"id": "one-palette", "kind": "global", "binds": ["canvas"],
         "question": "Do the colours form one consistent palette?"}]
    for i, chart in enumerate(spec.charts, start=1):
        nodes += [{"id": f"chart-{i}", "type": "chart", "labels": chart.labels},
                  {"id": f"chart-{i}-title", "type": "heading", "text": chart.title}]
        predicates.append({"id": f"chart-{i}-titled", "kind": "subgraph", "binds": [f"chart-{i}-title", f"chart-{i}"],
                           "test": {"op": "labels"}, "question": f'Is the {chart.kind} chart titled "{chart.title}"?'})
    for i, table in enumerate(spec.tables, start=1):
        nodes += [{"id": f"table-{i}", "type": "table", "header": table.header},
                  {"id": f"table-{i}-title", "type": "heading", "text": table.title}]
        predicates.append({"id": f"table-{i}-titled", "kind": "subgraph", "binds": [f"table-{i}-title", f"table-{i}"],
                           "test": {"op": "labels"}, "question": f'Is the table titled "{table.title}"?'})
    kpis = [f"kpi-{i}" for i in range(1, len(spec.kpis) + 1)]
    nodes += [{"id": k, "type": "card", "text": label} for k, (label, _) in zip(kpis, spec.kpis)]
    if kpis:
        predicates += [
            {"id": "kpis-shown", "kind": "completeness", "binds": kpis, "test": {"op": "present"},
             "question": f"Are all {len(kpis)} key figures shown, each in its own card?"},
            {"id": "kpis-one-row", "kind": "relation", "binds": kpis, "test": {"op": "aligned", "side": "top"},
             "question": "Do the key-figure cards sit in one row, their top edges aligned?"}]
    steps = [f"step-{i}" for i in range(1, len(spec.steps) + 1)]
    nodes += [{"id": k, "type": "text", "text": step} for k, step in zip(steps, spec.steps)]
    if steps:
        predicates += [
            {"id": "steps-shown", "kind": "completeness", "binds": steps, "test": {"op": "present"},
             "question": f"Are all {len(steps)} steps of the process shown?"},
            {"id": "steps-in-order", "kind": "relation", "binds": steps, "test": {"op": "before"},
             "question": "Do the steps read in order: " + ", then ".join(spec.steps) + "?"}]
    return {"nodes": nodes, "predicates": predicates}


def _checklist(spec: Spec) -> list[dict]:
    items = [{"question": "Is the headline the most prominent text on the canvas?", "category": "layout",
              "element": "headline"},
             {"question": "Is all text legible against its background?", "category": "style"},
             {"question": "Do the colours form one consistent palette?", "category": "style"},
             {"question": "Is the content aligned to a consistent grid with even margins?", "category": "layout"}]
    for chart in spec.charts:
        items.append({"question": f'Does the "{chart.title}" chart show a readable {chart.kind} chart with labelled categories?',
                      "category": "content", "element": chart.title})
    for table in spec.tables:
        items.append({"question": f'Is the "{table.title}" table complete, with a visible header row?',
                      "category": "content", "element": table.title})
    return items


def task_row(spec: Spec) -> dict:
    requirements: list[dict] = [{"type": "text_exact", "text": s} for s in spec.required_strings]
    requirements += [{"type": "chart_data", "chart": c.kind, "labels": c.labels, "series": c.series}
                     for c in spec.charts]
    requirements += [{"type": "table_data", "header": t.header, "rows": t.rows} for t in spec.tables]
    row = {"id": f"aescode-{spec.id}", "kind": "web", "category": spec.category, "prompt": _prompt(spec),
           "canvas": {"width": spec.size[0], "height": spec.size[1]}, "requirements": requirements,
           "checklist": _checklist(spec), "design": _design(spec), "source": "aesenv-aescode"}
    if spec.with_reference:
        row["reference_html"] = page(spec)
    return row


def variants_of(spec: Spec) -> list[str]:
    """The broken variants that apply to `spec` (no chart: no chart variants; no table: no cell;
    no process: no order; fewer than two key figures: no row)."""
    out = ["missing_text", "overflow"]
    if spec.charts:
        out += ["static_chart", "wrong_chart"]
    if spec.tables:
        out.append("wrong_cell")
    if len(spec.steps) >= 3:
        out.append("wrong_order")
    out.append("forbidden_logo")
    if len(spec.kpis) >= 2:
        out.append("misaligned_row")
    return out


def pages_of(spec: Spec) -> dict[str, str]:
    return {v: page(spec, v) for v in ["correct", *variants_of(spec)]}


def write() -> None:
    SUITE_FILE.write_text("".join(json.dumps(task_row(s), ensure_ascii=False) + "\n" for s in SPECS))
    for spec in SPECS:
        folder = PAGES_DIR / f"aescode-{spec.id}"
        folder.mkdir(parents=True, exist_ok=True)
        for variant, text in pages_of(spec).items():
            (folder / f"{variant}.html").write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="regenerate the suite file and the pages")
    args = parser.parse_args(argv)
    if args.write:
        write()
        print(f"wrote {SUITE_FILE} and {PAGES_DIR} ({len(SPECS)} tasks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
