"""A self-contained HTML report: summary, sortable table, screenshot gallery, evidence.

Optional per task: a ground-truth image shown beside the answer's (PandasPlotBench), the judge's
k-sample interval (`summary["judge_variance"]["per_item"]`), and a link to a refine episode's
timeline (`episodes/<id>/timeline.html`, written next to the report).
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from aesenv.rewards import RewardRecord
from aesenv.text import safe_name

_STYLE = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:24px 32px}header h1{margin:0 0 4px;font-size:24px}
main{padding:24px 32px;max-width:1400px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:24px}
.card{background:#fff;border-radius:10px;padding:12px 16px;box-shadow:0 1px 3px rgba(0,0,0,.08);min-width:140px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;width:100%;background:#fff;border-radius:10px;overflow:hidden}
th,td{padding:8px 10px;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
th{background:#eef0f5;cursor:pointer;user-select:none}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#b42318}.ok{color:#067647}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:16px;margin-top:24px}
figure{margin:0;background:#fff;border-radius:10px;padding:10px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
figure img{width:100%;border:1px solid #e6e8ee;border-radius:6px}
figcaption{font-size:13px;margin-top:6px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:8px;font-size:12px;color:#5b6475}
details pre{white-space:pre-wrap;font-size:12px;max-height:320px;overflow:auto;background:#f5f6f8;padding:8px;border-radius:6px}
"""

_SORT_JS = """
document.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const asc = th.dataset.asc !== '1'; th.dataset.asc = asc ? '1' : '0';
  const key = (tr) => { const t = tr.children[col].dataset.v ?? tr.children[col].textContent;
                        const n = parseFloat(t); return isNaN(n) ? t : n; };
  [...body.rows].sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * (asc ? 1 : -1))
    .forEach((r) => body.appendChild(r));
}));
"""


def _thumbnail(path: Path, width: int = 480, max_height: int = 1400) -> str:
    try:
        img = Image.open(path).convert("RGB")
    except (OSError, ValueError):
        return ""
    img = img.crop((0, 0, img.width, min(img.height, int(max_height * img.width / width))))
    img.thumbnail((width, max_height))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=72)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return html.escape(str(value))


def _image_src(out_dir: Path, ref: str) -> str:
    """A data URL as is; a path (relative to the report) as a thumbnail."""
    if ref.startswith("data:"):
        return ref
    return _thumbnail(out_dir / ref)


def write_report(out_dir: Path, records: list[RewardRecord], summary: dict[str, Any], *, title: str,
                 references: dict[str, str] | None = None) -> Path:
    esc = html.escape
    references = references or {}
    judge_ci = (summary.get("judge_variance") or {}).get("per_item", {})
    cards = "".join(
        f'<div class="card">{esc(label)}<b>{_fmt(summary.get(key))}</b></div>'
        for label, key in [("episodes", "n_total"), ("infra errors", "n_infra_error"), ("mean reward (paper)", "reward_mean"),
                           ("mean normalized", "normalized_mean"), ("static total", "static_total_mean"),
                           ("good rate", "good_rate"), ("execution pass", "execution_pass_rate"),
                           ("interactive mean", "interactive_mean"), ("wall s", "wall_s"),
                           *([("error rate", "error_rate")] if "error_rate" in summary else [])])
    rows, figures = [], []
    for r in records:
        static = r.channels.get("static")
        execution = r.channels.get("execution")
        interactive = r.channels.get("interactive")
        sp = static.payload if static else {}
        status_cls = "ok" if r.status == "ok" else "bad"
        cells = [
            f"<td>{esc(r.task_id)}</td>", f"<td>{esc(r.category)}</td>",
            f'<td class="{status_cls}">{esc(r.status)}</td>',
            f'<td class="num">{_fmt(r.reward)}</td>', f'<td class="num">{_fmt(r.normalized)}</td>',
            f'<td class="num">{_fmt(execution.raw if execution else None)}</td>',
            f'<td class="num">{_fmt(sp.get("total"))}</td>', f'<td class="num">{_fmt(sp.get("alignment"))}</td>',
            f'<td class="num">{_fmt(sp.get("aesthetics"))}</td>', f'<td class="num">{_fmt(sp.get("structure"))}</td>',
            f'<td class="num">{_fmt(interactive.raw if interactive else None)}</td>',
            f"<td>{esc(r.failure)[:160]}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
        thumb = _thumbnail(out_dir / r.screenshot) if r.screenshot else ""
        image = f'<img src="{thumb}" alt="screenshot of {esc(r.task_id)}" />' if thumb else "<p>(no screenshot)</p>"
        reference = _image_src(out_dir, references[r.task_id]) if r.task_id in references else ""
        if reference:
            image = (f'<div class="pair"><div>answer{image}</div><div>ground truth'
                     f'<img src="{reference}" alt="ground truth of {esc(r.task_id)}" /></div></div>')
        notes = []
        if r.task_id in judge_ci:
            notes.append(f"judge samples: {esc(_interval(judge_ci[r.task_id]))}")
        timeline = Path("episodes") / safe_name(r.task_id) / "timeline.html"
        if (out_dir / timeline).is_file():
            notes.append(f'<a href="{esc(timeline.as_posix())}">episode timeline</a>')
        evidence = json.dumps({name: {"status": c.status.value, "raw": c.raw, "payload": c.payload}
                               for name, c in r.channels.items()}, indent=1, default=str)
        figures.append(
            f'<figure id="{esc(r.task_id)}">{image}<figcaption><b>{esc(r.task_id)}</b> · {esc(r.category)} · '
            f'reward {_fmt(r.reward)} · static {_fmt(sp.get("total"))} {" · ".join(notes)}'
            f'<br />{esc(str(sp.get("rationale", "")))}'
            f"<details><summary>evidence</summary><pre>{esc(evidence)}</pre></details></figcaption></figure>")
    heads = ["task", "category", "status", "reward", "normalized", "exec", "static", "align /40",
             "aesth /30", "struct /30", "interactive", "failure"]
    per_cat = "".join(
        f"<tr><td>{esc(cat)}</td><td class=\"num\">{b['n']}</td><td class=\"num\">{_fmt(b['static_total_mean'])}</td>"
        f"<td class=\"num\">{_fmt(b['good_rate'])}</td><td class=\"num\">{_fmt(b.get('interactive_mean'))}</td>"
        f"<td class=\"num\">{_fmt(b['reward_mean'])}</td></tr>"
        for cat, b in summary.get("per_category", {}).items())
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><title>{esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1" /><style>{_STYLE}</style></head><body>
<header><h1>{esc(title)}</h1><div>policy {esc(str(summary.get('policy', '')))} · judge {esc(str(summary.get('provenance', {}).get('judge', '')))}
· browser {esc(str(summary.get('provenance', {}).get('browser_version', '')))}</div></header><main>
<div class="cards">{cards}</div>
<h2>Per category</h2><table><thead><tr><th>category</th><th>n</th><th>static mean</th><th>good rate</th><th>interactive mean</th><th>reward mean</th></tr></thead><tbody>{per_cat}</tbody></table>
<h2>Episodes</h2><table><thead><tr>{''.join(f'<th>{h}</th>' for h in heads)}</tr></thead><tbody>{''.join(rows)}</tbody></table>
<h2>Gallery</h2><div class="gallery">{''.join(figures)}</div></main><script>{_SORT_JS}</script></body></html>"""
    path = out_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _interval(value: dict[str, Any]) -> str:
    mean, low, high = value.get("mean"), value.get("low"), value.get("high")
    if low is None:
        return f"{_fmt(mean)} (n={value.get('n')})"
    return f"{_fmt(mean)} [{_fmt(low)}, {_fmt(high)}] (n={value.get('n')})"
