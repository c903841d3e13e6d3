"""The deterministic requirement checks, as pure functions of what a render produced.

Each returns a `Check`: a score in [0, 1], whether the requirement is met in full, and the
evidence. Channels (aesenv.kinds.web.verifiers.channels) wrap them; `requirement_potential` reuses them,
so a training potential and the reward can never disagree about what "satisfied" means.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from aesenv.render.models import Rendering
from aesenv.tasks.model import Canvas, ChartData, TableData, TextExact

# An element may poke out of the canvas by this much (sub-pixel rounding, borders) unnoticed.
BOUNDARY_TOLERANCE_PX = 1.0
# The rendered page's aspect ratio may differ from the canvas's by this factor and still agree.
MIN_ASPECT_AGREEMENT = 0.99
_SPACE = re.compile(r"\s+")


@dataclass
class Check:
    score: float
    passed: bool
    payload: dict[str, Any] = field(default_factory=dict)


def normalize_text(text: str) -> str:
    """Whitespace-insensitive, otherwise verbatim (case and punctuation matter)."""
    return _SPACE.sub(" ", text).strip()


def check_text(required: list[TextExact], rendering: Rendering) -> Check:
    """Every required string appears verbatim in the page's shown text (`aesenv.render.shown`:
    the characters whose pixels change when they are taken away, legibly)."""
    visible = normalize_text(rendering.metrics.visible_text)
    found = [r.text for r in required if normalize_text(r.text) in visible]
    missing = [r.text for r in required if normalize_text(r.text) not in visible]
    return Check(score=len(found) / len(required), passed=not missing,
                 payload={"found": found, "missing": missing, "visible_chars": len(visible)})


def check_boundary(canvas: Canvas, rendering: Rendering) -> Check:
    """Every visible element lies inside the canvas, and the page has the canvas's aspect ratio
    (content that spills below or beside the artboard stretches the document)."""
    width, height, tol = canvas.width, canvas.height, BOUNDARY_TOLERANCE_PX
    outside = [e for e in rendering.elements
               if e.x < -tol or e.y < -tol or e.x + e.w > width + tol or e.y + e.h > height + tol]
    doc_w = max(rendering.metrics.doc_width, 1.0)
    doc_h = max(rendering.metrics.doc_height, 1.0)
    page_ratio, canvas_ratio = doc_w / doc_h, width / height
    agreement = min(page_ratio, canvas_ratio) / max(page_ratio, canvas_ratio)
    contained = 1.0 - len(outside) / max(len(rendering.elements), 1)
    passed = not outside and agreement >= MIN_ASPECT_AGREEMENT
    return Check(score=round(contained * agreement, 6), passed=passed, payload={
        "canvas": [width, height], "document": [round(doc_w, 1), round(doc_h, 1)],
        "aspect_agreement": round(agreement, 4), "elements": len(rendering.elements),
        "outside": [{"tag": e.tag, "id": e.id, "classes": e.classes, "text": e.text[:60],
                     "box": [round(e.x, 1), round(e.y, 1), round(e.w, 1), round(e.h, 1)]} for e in outside[:20]],
        "outside_count": len(outside)})


def _table_match(required: TableData, rows: list[list[str]]) -> tuple[float, list[dict]]:
    """Cells of `required` matched in place by a rendered table (its first row is the header)."""
    want = [required.header, *required.rows]
    got = [[normalize_text(c) for c in row] for row in rows]
    total, hits, wrong = 0, 0, []
    for r, row in enumerate(want):
        for c, cell in enumerate(row):
            total += 1
            seen = got[r][c] if r < len(got) and c < len(got[r]) else None
            if seen == normalize_text(cell):
                hits += 1
            elif len(wrong) < 20:
                wrong.append({"row": r, "col": c, "expected": cell, "rendered": seen})
    extra_rows = max(0, len(got) - len(want))
    return hits / max(total + extra_rows, 1), wrong


def check_tables(required: list[TableData], tables: list[list[list[str]]]) -> Check:
    """Each required table against its best-matching rendered HTML table, cell by cell
    (header row first; surplus rendered rows count against the match)."""
    scores, per = [], []
    for req in required:
        matches = [(*_table_match(req, rows), i) for i, rows in enumerate(tables)]
        score, wrong, index = max(matches, key=lambda m: m[0], default=(0.0, [{"reason": "no rendered table"}], -1))
        scores.append(score)
        per.append({"header": req.header, "score": round(score, 4), "table_index": index, "mismatches": wrong})
    return Check(score=round(sum(scores) / len(scores), 6), passed=all(s == 1.0 for s in scores),
                 payload={"tables_rendered": len(tables), "required": per})


def _same_number(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _series_match(want: list[float], got: list[float | None]) -> bool:
    return len(want) == len(got) and all(_same_number(g, w) for g, w in zip(got, want))


def _chart_match(req: ChartData, chart: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    series = chart.get("series", [])
    kind = req.chart.lower()
    type_ok = any(str(s.get("type", "")).lower() == kind for s in series)
    if kind == "pie":
        labels = [str(n) for n in (series[0].get("names", []) if series else [])]
    else:
        labels = next(iter(chart.get("categories", [])), [])
    labels_ok = [normalize_text(x) for x in labels] == [normalize_text(x) for x in req.labels]
    wanted = req.series if isinstance(req.series, dict) else {"": req.series}
    matched = []
    for name, values in wanted.items():
        candidates = [s for s in series if not name or s.get("name") == name]
        if any(_series_match(values, s.get("values", [])) for s in candidates):
            matched.append(name)
    series_score = len(matched) / len(wanted)
    score = (type_ok + labels_ok + series_score) / 3
    return score, {"type_ok": type_ok, "labels_ok": labels_ok, "series_matched": matched,
                   "series_wanted": list(wanted), "rendered_labels": labels[:50],
                   "rendered_series": [{"type": s.get("type"), "name": s.get("name"),
                                        "values": s.get("values", [])[:50]} for s in series[:10]]}


def check_charts(required: list[ChartData], charts: list[dict[str, Any]]) -> Check:
    """Each required chart against the best-matching live ECharts instance: chart type,
    category labels (pie: slice names) and series values. Only instances that `echarts.init`
    created count; a picture of a chart is not one."""
    scores, per = [], []
    for req in required:
        score, detail = max((_chart_match(req, chart) for chart in charts), key=lambda m: m[0],
                            default=(0.0, {"reason": "no live ECharts instance"}))
        scores.append(score)
        per.append({"chart": req.chart, "score": round(score, 4), **detail})
    return Check(score=round(sum(scores) / len(scores), 6), passed=all(s == 1.0 for s in scores),
                 payload={"charts_rendered": len(charts), "required": per})
