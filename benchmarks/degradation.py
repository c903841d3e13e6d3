"""Degradation-pair benchmark: does a static judge rank a page above a damaged copy of itself?

Each polished page is damaged in one known way (CSS stripped, contrast destroyed, boxes
overlapping, tiny fonts, requested content removed). A judge that measures design quality must
score the original higher. The share of pairs it orders correctly is a cheap, label-free sanity
check of any static judge (the offline metrics judge by default).

    python -m benchmarks.degradation --out runs/degradation [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aesenv.tasks import Task, load_tasks

PAGES_DIR = Path(__file__).resolve().parent / "pages"

# --------------------------------------------------------------------------------------------
# Degradations: html -> html. Each one damages a single, named design quality.
# --------------------------------------------------------------------------------------------

_STYLE_BLOCK = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.I | re.S)
_STYLESHEET_LINK = re.compile(r"<link\b[^>]*\brel\s*=\s*[\"']?[^\"'>]*stylesheet[^>]*>", re.I)
_STYLE_ATTR = re.compile(r"""\sstyle\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""", re.I)
_HEAD_END = re.compile(r"</head\s*>", re.I)
_BODY_END = re.compile(r"</body\s*>", re.I)


def _inject_css(html: str, css: str) -> str:
    """Append a style sheet at the very end so it wins the cascade without touching the rest."""
    block = f"<style>{css}</style>"
    m = None
    for m in _BODY_END.finditer(html):
        pass
    if m is not None:
        return html[: m.start()] + block + html[m.start():]
    return html + block


def strip_css(html: str) -> str:
    """Remove every author style: <style> blocks, stylesheet links and style="" attributes."""
    html = _STYLE_BLOCK.sub("", html)
    html = _STYLESHEET_LINK.sub("", html)
    return _STYLE_ATTR.sub("", html)


def destroy_contrast(html: str) -> str:
    """Paint all text nearly the colour of a forced white background."""
    return _inject_css(html, """
      *, *::before, *::after {
        color: #e6e6e6 !important; -webkit-text-fill-color: #e6e6e6 !important;
        background: #ffffff !important; border-color: #f4f4f4 !important;
        box-shadow: none !important; text-shadow: none !important; }
      svg text, svg tspan { fill: #e6e6e6 !important; }
    """)


def overlap_boxes(html: str) -> str:
    """Pull every element up onto its previous sibling so blocks and their text collide."""
    return _inject_css(html, """
      body * + * { margin-top: -34px !important; }
      body * + * + * { margin-left: -60px !important; }
    """)


def tiny_fonts(html: str) -> str:
    """Force 7px type everywhere (headings included), as a broken font-size reset would."""
    return _inject_css(html, """
      *, *::before, *::after { font-size: 7px !important; line-height: 1.15 !important; }
      svg text, svg tspan { font-size: 7px !important; }
    """)


def garish(html: str) -> str:
    """Clashing neon: magenta and yellow grounds, green and red text, Comic Sans. Every pair
    still passes a luminance-contrast check more often than not; a designer rejects it at once."""
    return _inject_css(html, """
      body, body * { font-family: "Comic Sans MS", "Comic Sans", cursive !important; }
      body { background: #ff00ff !important; }
      body *:nth-child(odd) { background-color: #ffff00 !important; color: #ff0000 !important; }
      body *:nth-child(even) { background-color: #ff00ff !important; color: #00ff00 !important; }
    """)


_HEAD = re.compile(r"<head\b[^>]*>.*?</head\s*>", re.I | re.S)
_BODY_START = re.compile(r"<body\b[^>]*>", re.I)
_HEADER = re.compile(r"<header\b[^>]*>.*?</header\s*>", re.I | re.S)
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)
_GENERIC_HEADER = "<header><h1>Welcome</h1><p>Our new page is coming soon.</p></header>"


def remove_content(html: str) -> str:
    """Keep the page's styles and its header (or a generic one); drop everything the prompt asked for."""
    head = _HEAD.search(html)
    body_tag = _BODY_START.search(html)
    body = html[body_tag.end():] if body_tag else html
    header = _HEADER.search(body)
    kept = _SCRIPT.sub("", header.group(0)) if header else _GENERIC_HEADER
    return ("<!DOCTYPE html><html lang=\"en\">" + (head.group(0) if head else "<head><meta charset=\"utf-8\"></head>")
            + (body_tag.group(0) if body_tag else "<body>") + kept + "</body></html>")


DEGRADATIONS: dict[str, Callable[[str], str]] = {
    "strip_css": strip_css,
    "destroy_contrast": destroy_contrast,
    "overlap_boxes": overlap_boxes,
    "tiny_fonts": tiny_fonts,
    "remove_content": remove_content,
    "garish": garish,
}

# --------------------------------------------------------------------------------------------
# Polished pages: handwritten ones, plus the template policy's pages when it is available.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    source: str  # "handwritten" or "template"
    task: Task
    html: str


def handwritten_pages() -> list[Page]:
    pages = []
    for line in (PAGES_DIR / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        task = Task(id=row["id"], category=row["category"], prompt=row["prompt"], source="handwritten")
        pages.append(Page("handwritten", task, (PAGES_DIR / f"{row['id']}.html").read_text(encoding="utf-8")))
    return pages


async def template_pages() -> tuple[list[Page], str]:
    """The template policy's answers for the built-in suite; ("", reason) when unavailable."""
    try:
        from policies.template import TemplatePolicy  # written by another layer; optional here
        from aesenv.artifact import extract_artifact
    except Exception as exc:  # noqa: BLE001 - any import failure just means "no template pages"
        return [], f"template pages skipped: {type(exc).__name__}: {exc}"
    policy = TemplatePolicy()
    pages, failed = [], []
    for task in load_tasks("builtin:web"):
        try:
            artifact = extract_artifact(await policy.generate(task))
        except Exception as exc:  # noqa: BLE001 - one bad template must not sink the benchmark
            failed.append(f"{task.id}: {type(exc).__name__}: {exc}")
            continue
        if artifact.renderable and artifact.code.strip():
            pages.append(Page("template", task, artifact.code))
        else:
            failed.append(f"{task.id}: not renderable ({artifact.reason})")
    return pages, (f"template pages skipped: {'; '.join(failed[:5])}" if failed else "")


# --------------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------------


def _scores(j) -> dict[str, float]:
    return {"total": j.total, "alignment": j.alignment, "aesthetics": j.aesthetics, "structure": j.structure}


async def arun_degradation(out_dir: str | Path, limit: int | None = None, *, judge=None,
                           progress: bool = True, save_screenshots: bool = False) -> dict[str, Any]:
    """Render and judge every page and every degraded copy; write and return the report."""
    from aesenv.judging.design import OfflineDesignJudge
    from aesenv.render import Renderer, RenderStatus

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    judge = judge or OfflineDesignJudge()
    pages = handwritten_pages()
    extra, note = await template_pages()
    pages += extra
    if limit is not None:
        pages = pages[:limit]

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(pages) * (1 + len(DEGRADATIONS)), desc="degradation", unit="render",
                   file=sys.stderr)

    judge_ms: list[float] = []
    per_deg = {name: {"n": 0, "correct": 0} for name in DEGRADATIONS}
    failing, rows, skipped = [], [], []

    async def score(renderer, page: Page, html: str, label: str):
        rendering = await renderer.render(html)
        if bar:
            bar.update(1)
        if rendering.status is RenderStatus.INFRA_ERROR:
            skipped.append({"page": page.task.id, "variant": label, "error": rendering.error})
            return None
        if save_screenshots and rendering.full_page_png:
            (out / "shots").mkdir(exist_ok=True)
            (out / "shots" / f"{page.task.id}__{label}.png").write_bytes(rendering.full_page_png)
        t0 = time.perf_counter()
        judgement = await judge.judge(page.task, rendering)
        judge_ms.append((time.perf_counter() - t0) * 1000)
        return judgement

    async with Renderer() as renderer:
        for page in pages:
            base = await score(renderer, page, page.html, "polished")
            row = {"page": page.task.id, "source": page.source, "category": page.task.category.value,
                   "polished": _scores(base) if base else None, "degraded": {}}
            for name, fn in DEGRADATIONS.items():
                worse = await score(renderer, page, fn(page.html), name)
                if base is None or worse is None:
                    continue
                row["degraded"][name] = _scores(worse)
                ok = base.total > worse.total
                per_deg[name]["n"] += 1
                per_deg[name]["correct"] += int(ok)
                if not ok:
                    failing.append({"page": page.task.id, "source": page.source, "degradation": name,
                                    "polished": _scores(base), "degraded": _scores(worse),
                                    "polished_rationale": base.rationale, "degraded_rationale": worse.rationale})
            rows.append(row)
    if bar:
        bar.close()

    n = sum(d["n"] for d in per_deg.values())
    correct = sum(d["correct"] for d in per_deg.values())
    polished_totals = [r["polished"]["total"] for r in rows if r["polished"]]
    report = {
        "judge": f"{getattr(judge, 'name', type(judge).__name__)}@{getattr(judge, 'version', '?')}",
        "accuracy": round(correct / n, 4) if n else 0.0,
        "n_pairs": n,
        "n_pages": len(rows),
        "pages_by_source": {s: sum(r["source"] == s for r in rows) for s in sorted({r["source"] for r in rows})},
        "per_degradation": {k: {"accuracy": round(v["correct"] / v["n"], 4) if v["n"] else 0.0, **v}
                            for k, v in per_deg.items()},
        "polished_total": _spread(polished_totals),
        "degraded_total": {k: _spread([r["degraded"][k]["total"] for r in rows if k in r["degraded"]])
                           for k in DEGRADATIONS},
        "judge_ms_median": round(statistics.median(judge_ms), 1) if judge_ms else None,
        "failing": failing,
        "skipped": skipped,
        "notes": [note] if note else [],
        "pages": rows,
    }
    (out / "degradation.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def _spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"min": round(min(values), 1), "median": round(statistics.median(values), 1),
            "max": round(max(values), 1)}


def run_degradation(out_dir: str | Path, limit: int | None = None, **kwargs) -> dict[str, Any]:
    """Synchronous entry point (one event loop, one Renderer for the whole run)."""
    return asyncio.run(arun_degradation(out_dir, limit, **kwargs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.degradation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/degradation", help="output folder for degradation.json")
    ap.add_argument("--limit", type=int, default=None, help="only the first N polished pages")
    ap.add_argument("--screenshots", action="store_true", help="also save every full-page screenshot")
    args = ap.parse_args(argv)
    report = run_degradation(args.out, args.limit, save_screenshots=args.screenshots)
    print(f"accuracy {report['accuracy']:.3f} over {report['n_pairs']} pairs ({report['n_pages']} pages)")
    for name, d in report["per_degradation"].items():
        print(f"  {name:17s} {d['accuracy']:.3f}  ({d['correct']}/{d['n']})")
    print(f"polished totals {report['polished_total']}; judge median {report['judge_ms_median']} ms")
    for f in report["failing"][:20]:
        print(f"  FAIL {f['page']} {f['degradation']}: {f['polished']['total']:.1f} <= {f['degraded']['total']:.1f}")
    print(f"wrote {Path(args.out) / 'degradation.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
