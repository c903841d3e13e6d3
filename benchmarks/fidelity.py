"""Judge-fidelity benchmark: does a static page judge prefer what a careful designer prefers?

`benchmarks/degradation.py` only asks whether a judge ranks a polished page above a damaged copy
of itself. Real model output fails differently: a competent but generic template, a garish
palette, lorem ipsum, an empty chart, a three.js scene that is one spinning cube, a script that
throws half-way, a page in Chinese. This benchmark holds single-file pages of that kind, written
for twenty prompts across the five categories (three to five pages per prompt), a designer's
pairwise preferences between pages of the same prompt (`pairs.jsonl`, each marked `clear` or
`subtle` with a one-sentence reason and tags) and a 1-10 grade per page (`grades.jsonl`).

Every page is rendered once with the default renderer and scored the way the reward pipeline's
static channel scores it. The report gives the share of pairs the judge orders like the designer
(ties count half), split by margin, tag, category and language; the Spearman correlation between
the judge's totals and the grades within each prompt (mean over prompts) and pooled; and the
clear pairs the judge inverts most. Scores are cached in `--out/scores.jsonl`, keyed by the page's
content, its prompt and the judge's name and version, so a rerun only renders what changed (the
key does not see the renderer or the machine's fonts: pass `--rescore` after changing either).

    python -m benchmarks.fidelity --out runs/fidelity [--judge offline|openai:<model>]
                                  [--limit N] [--tasks ID ...] [--tags TAG ...] [--concurrency 2]
    aesenv bench fidelity --out runs/fidelity
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aesenv.models import JudgeSpec, add_judge_args

CORPUS_DIR = Path(__file__).resolve().parent / "fidelity"

MARGINS = ("clear", "subtle")
# What a pair can be about. Page traits (grades.jsonl) name how a page is built or how it fails;
# a pair carries the union of its two pages' traits, plus `non-english` for a non-English prompt
# and `polish` when both pages are competent (grade >= 6) and only finer quality separates them.
PAGE_TRAITS = frozenset({
    "canvas", "webgl", "cdn",                          # how the page is built
    "form-letter", "placeholder", "garish", "contrast",  # how it falls short of a designer's page
    "layout", "broken", "empty-chart", "unstyled", "near-empty", "primitive", "prompt-miss",
})
PAIR_TAGS = PAGE_TRAITS | {"non-english", "polish"}
CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})
SUBSCORES = ("alignment", "aesthetics", "structure")

# --------------------------------------------------------------------------------------------
# Corpus
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FidelityTask:
    id: str
    category: str
    prompt: str
    language: str


@dataclass(frozen=True)
class FidelityPage:
    id: str
    task: str
    grade: int
    traits: tuple[str, ...]
    note: str
    path: Path

    @property
    def html(self) -> str:
        return self.path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Pair:
    task: str
    better: str
    worse: str
    margin: str
    reason: str
    tags: tuple[str, ...]


@dataclass
class Corpus:
    tasks: dict[str, FidelityTask]
    pages: dict[str, FidelityPage]
    pairs: list[Pair]
    root: Path = CORPUS_DIR

    def pages_of(self, task_id: str) -> list[FidelityPage]:
        return [p for p in self.pages.values() if p.task == task_id]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_corpus(root: Path = CORPUS_DIR) -> Corpus:
    """Read tasks, grades and pairs. Structural checks live in the tests; this only parses."""
    tasks = {r["id"]: FidelityTask(r["id"], r["category"], r["prompt"], r["language"])
             for r in _jsonl(root / "tasks.jsonl")}
    pages = {r["page"]: FidelityPage(r["page"], r["task"], int(r["grade"]), tuple(r.get("traits", ())),
                                     r.get("note", ""), root / "pages" / f"{r['page']}.html")
             for r in _jsonl(root / "grades.jsonl")}
    pairs = [Pair(r["task"], r["better"], r["worse"], r["margin"], r["reason"], tuple(r.get("tags", ())))
             for r in _jsonl(root / "pairs.jsonl")]
    return Corpus(tasks, pages, pairs, root)


def select(corpus: Corpus, *, limit: int | None = None, task_ids: Sequence[str] | None = None,
           tags: Sequence[str] | None = None) -> Corpus:
    """A slice: the first `limit` tasks (or the named ones), then only pairs carrying any of
    `tags`; pages that no kept pair mentions are dropped unless no tag filter is given."""
    ids = list(corpus.tasks)
    if task_ids:
        unknown = sorted(set(task_ids) - set(ids))
        if unknown:
            raise ValueError(f"unknown task ids: {unknown}; known: {ids}")
        ids = [t for t in ids if t in set(task_ids)]
    if limit is not None:
        ids = ids[:limit]
    keep = set(ids)
    pairs = [p for p in corpus.pairs if p.task in keep]
    if tags:
        unknown = sorted(set(tags) - PAIR_TAGS)
        if unknown:
            raise ValueError(f"unknown tags: {unknown}; known: {sorted(PAIR_TAGS)}")
        pairs = [p for p in pairs if set(p.tags) & set(tags)]
        used = {p.better for p in pairs} | {p.worse for p in pairs}
        pages = {k: v for k, v in corpus.pages.items() if k in used}
        keep &= {p.task for p in pairs}
    else:
        pages = {k: v for k, v in corpus.pages.items() if v.task in keep}
    return Corpus({k: v for k, v in corpus.tasks.items() if k in keep}, pages, pairs, corpus.root)


# --------------------------------------------------------------------------------------------
# Arithmetic: agreement and rank correlation (pure functions; the tests check them by hand)
# --------------------------------------------------------------------------------------------


def pair_credit(better_score: float, worse_score: float) -> float:
    """1 when the judge orders the pair like the designer, 0 when it inverts it, 1/2 on a tie
    (a judge that cannot tell two pages apart is right half the time by coin toss)."""
    if better_score > worse_score:
        return 1.0
    if better_score < worse_score:
        return 0.0
    return 0.5


def agreement(pairs: Iterable[Pair], scores: Mapping[str, float]) -> dict[str, Any]:
    """Share of pairs ordered right, and the mean score gap (better minus worse page): a judge
    can order a pair right by a hair, and a reward that separates a bespoke page from a form
    letter by one point out of a hundred teaches a policy little. Pairs with an unscored page
    are counted as `missing` and left out rather than guessed."""
    n = ties = 0
    credit = gap = 0.0
    missing = 0
    for p in pairs:
        if p.better not in scores or p.worse not in scores:
            missing += 1
            continue
        c = pair_credit(scores[p.better], scores[p.worse])
        n += 1
        credit += c
        ties += c == 0.5
        gap += scores[p.better] - scores[p.worse]
    return {"agreement": round(credit / n, 4) if n else None, "n": n, "credit": credit, "ties": ties,
            "missing": missing, "mean_gap": round(gap / n, 2) if n else None}


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of the ranks they span (what Spearman's rho needs)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        for k in range(i, j + 1):
            out[order[k]] = mean_rank
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson correlation of the ranks; None when either side is constant or has < 2 items."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs two sequences of equal length")
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def within_prompt_spearman(corpus: Corpus, scores: Mapping[str, float]) -> dict[str, Any]:
    """Per prompt, rho between grades and judge totals over its scored pages. A judge that gives
    every page of a prompt the same score has no ranking there: it counts as 0 in the mean (it
    carries no information) and is listed under `undefined`."""
    per: dict[str, float | None] = {}
    for tid in corpus.tasks:
        pages = [p for p in corpus.pages_of(tid) if p.id in scores]
        per[tid] = spearman([p.grade for p in pages], [scores[p.id] for p in pages]) if len(pages) >= 2 else None
    counted = {t: (v if v is not None else 0.0) for t, v in per.items()
               if len([p for p in corpus.pages_of(t) if p.id in scores]) >= 2}
    return {"mean": round(statistics.fmean(counted.values()), 4) if counted else None,
            "n_prompts": len(counted), "undefined": sorted(t for t in counted if per[t] is None),
            "per_prompt": {t: (round(v, 4) if v is not None else None) for t, v in per.items()}}


def pooled_spearman(corpus: Corpus, scores: Mapping[str, float]) -> float | None:
    """rho over all scored pages at once: do the judge's absolute levels track the grades?"""
    pages = [p for p in corpus.pages.values() if p.id in scores]
    rho = spearman([p.grade for p in pages], [scores[p.id] for p in pages])
    return round(rho, 4) if rho is not None else None


def grouped_agreement(corpus: Corpus, scores: Mapping[str, float]) -> dict[str, dict[str, Any]]:
    """Agreement overall and split by margin, tag, category and language."""
    by_margin: dict[str, list[Pair]] = defaultdict(list)
    by_tag: dict[str, list[Pair]] = defaultdict(list)
    by_category: dict[str, list[Pair]] = defaultdict(list)
    by_language: dict[str, list[Pair]] = defaultdict(list)
    for p in corpus.pairs:
        by_margin[p.margin].append(p)
        for t in p.tags:
            by_tag[t].append(p)
        task = corpus.tasks[p.task]
        by_category[task.category].append(p)
        by_language[task.language].append(p)
    return {
        "overall": agreement(corpus.pairs, scores),
        "by_margin": {m: agreement(by_margin[m], scores) for m in MARGINS if by_margin[m]},
        "by_tag": {t: agreement(by_tag[t], scores) for t in sorted(by_tag)},
        "by_category": {c: agreement(v, scores) for c, v in sorted(by_category.items())},
        "by_language": {lang: agreement(v, scores) for lang, v in sorted(by_language.items())},
    }


def inversions(corpus: Corpus, scores: Mapping[str, float], *, margin: str = "clear",
               top: int = 15) -> list[dict[str, Any]]:
    """Pairs of the given margin the judge orders the wrong way (or ties), worst first: the
    judge's score for the worse page minus its score for the better one."""
    rows = []
    for p in corpus.pairs:
        if p.margin != margin or p.better not in scores or p.worse not in scores:
            continue
        gap = scores[p.worse] - scores[p.better]
        if gap >= 0:
            rows.append({"task": p.task, "better": p.better, "worse": p.worse, "better_score": scores[p.better],
                         "worse_score": scores[p.worse], "inversion": round(gap, 2), "reason": p.reason,
                         "tags": list(p.tags)})
    rows.sort(key=lambda r: -r["inversion"])
    return rows[:top]


def analyse(corpus: Corpus, totals: Mapping[str, float],
            subscores: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, Any]:
    """Every number the report gives, from a page -> total table (and optional sub-scores)."""
    out = grouped_agreement(corpus, totals)
    out["spearman_within_prompt"] = within_prompt_spearman(corpus, totals)
    out["spearman_pooled"] = pooled_spearman(corpus, totals)
    out["worst_inversions"] = inversions(corpus, totals)
    if subscores:
        out["by_subscore"] = {s: agreement(corpus.pairs, {k: v[s] for k, v in subscores.items() if s in v})
                              for s in SUBSCORES}
    return out


# --------------------------------------------------------------------------------------------
# Score cache: one JSON line per judged page, keyed by what the score depends on
# --------------------------------------------------------------------------------------------


def cache_key(html: str, task: FidelityTask, judge_id: str) -> str:
    """The page's bytes, the prompt and category it is judged against, and the judge."""
    h = hashlib.sha256()
    for part in (html, task.prompt, task.category, judge_id):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:32]


class ScoreCache:
    """Append-only `scores.jsonl`; the last line for a key wins, so a crashed run loses nothing
    it had finished and a rerun appends only what it had to recompute."""

    def __init__(self, path: Path, enabled: bool = True) -> None:
        self.path = path
        self.rows: dict[str, dict[str, Any]] = {}
        if enabled and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a killed run
                if "key" in row:
                    self.rows[row["key"]] = row

    def get(self, key: str) -> dict[str, Any] | None:
        return self.rows.get(key)

    def put(self, row: dict[str, Any]) -> None:
        self.rows[row["key"]] = row
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------------------
# Rendering and judging
# --------------------------------------------------------------------------------------------


def judge_identity(judge: Any) -> str:
    return f"{getattr(judge, 'name', type(judge).__name__)}@{getattr(judge, 'version', '?')}"


@dataclass
class ScoreRun:
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # page id -> scored row
    failed: list[dict[str, Any]] = field(default_factory=list)       # our side failed: not scored
    rendered: int = 0
    cached: int = 0


async def _score_page(page: FidelityPage, task: FidelityTask, renderer: Any, channel: Any,
                      timeout_retries: int) -> dict[str, Any]:
    """Render (retrying a page that timed out, since on a loaded machine a heavy WebGL scene
    can miss the settle deadline by host load alone) and score it through the static channel,
    so blank and screenshot-less pages get exactly the reward pipeline's treatment."""
    from aesenv.artifact import extract_artifact
    from aesenv.render import RenderStatus
    from aesenv.channels import ChannelStatus
    from aesenv.kinds.page import PageEvidence
    from aesenv.tasks import Task

    artifact = extract_artifact(page.html)
    t0 = time.perf_counter()
    rendering = await renderer.render(artifact.code) if artifact.renderable else None
    attempts = 1
    while (rendering is not None and rendering.status is RenderStatus.TIMEOUT and attempts <= timeout_retries):
        rendering = await renderer.render(artifact.code)
        attempts += 1
    render_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    result = await channel.score(PageEvidence(Task(id=page.id, prompt=task.prompt, category=task.category,
                                               source="fidelity"), artifact, rendering))
    row = {"page": page.id, "task": task.id, "render_status": rendering.status.value if rendering else "not_rendered",
           "render_attempts": attempts, "render_error": ((rendering.error if rendering else artifact.reason) or "")[:300],
           "page_errors": len(rendering.page_errors) if rendering else 0,
           "render_ms": round(render_ms, 1), "judge_ms": round((time.perf_counter() - t1) * 1000, 1),
           "channel_status": result.status.value}
    if result.status is ChannelStatus.INFRA_ERROR:
        row["error"] = result.payload.get("reason", "infra error")
        return row
    payload = result.payload
    row.update(total=float(result.raw), **{s: float(payload.get(s, 0.0)) for s in SUBSCORES},
               rationale=str(payload.get("rationale", payload.get("reason", "")))[:400])
    return row


async def score_corpus(corpus: Corpus, judge: Any, cache: ScoreCache, *, concurrency: int = 2,
                       progress: bool = True, timeout_retries: int = 1) -> ScoreRun:
    """Score every page of the corpus: cached pages are read back, the rest rendered and judged."""
    from aesenv.render import RenderConfig, Renderer
    from aesenv.kinds.web.static import StaticChannel

    judge_id = judge_identity(judge)
    run = ScoreRun()
    todo = []
    for page in corpus.pages.values():
        key = cache_key(page.html, corpus.tasks[page.task], judge_id)
        hit = cache.get(key)
        if hit is not None and "total" in hit:
            run.rows[page.id] = {**hit, "cached": True}
            run.cached += 1
        else:
            todo.append((page, key))
    if not todo:
        return run

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), desc="fidelity", unit="page", file=sys.stderr)
    channel = StaticChannel(judge)
    slots = asyncio.Semaphore(max(1, concurrency))
    async with Renderer(RenderConfig(concurrency=max(1, concurrency))) as renderer:
        async def one(page: FidelityPage, key: str) -> None:
            async with slots:
                try:
                    row = await _score_page(page, corpus.tasks[page.task], renderer, channel, timeout_retries)
                except Exception as exc:  # noqa: BLE001 - one page's infrastructure failure must not sink the run
                    row = {"page": page.id, "task": page.task, "error": f"{type(exc).__name__}: {exc}"[:300]}
            row.update(key=key, judge=judge_id)
            if "total" in row:
                cache.put(row)
                run.rows[page.id] = {**row, "cached": False}
            else:
                run.failed.append(row)
            run.rendered += 1
            if bar:
                bar.update(1)

        await asyncio.gather(*(one(page, key) for page, key in todo))
    if bar:
        bar.close()
    return run


def environment_notes(corpus: Corpus) -> list[str]:
    """Facts about this machine that change what a judge can see, so a reader does not blame
    the judge for them: a missing CJK font turns Chinese and Japanese pages into tofu boxes."""
    notes = []
    cjk = sorted({t.language for t in corpus.tasks.values()} & CJK_LANGUAGES)
    if cjk and shutil.which("fc-list"):
        try:
            found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            found = "unknown"
        if not found:
            notes.append(f"no CJK font is installed (fc-list :lang=zh is empty): pages in {', '.join(cjk)} "
                         "render their text as empty boxes, so their scores measure the machine as much as the judge")
    return notes


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def build_report(corpus: Corpus, run: ScoreRun, judge_id: str, wall_s: float,
                 notes: Sequence[str] = ()) -> dict[str, Any]:
    totals = {pid: r["total"] for pid, r in run.rows.items()}
    subs = {pid: {s: r[s] for s in SUBSCORES if s in r} for pid, r in run.rows.items()}
    analysis = analyse(corpus, totals, subs)
    statuses: dict[str, int] = defaultdict(int)
    for r in run.rows.values():
        statuses[r.get("render_status", "?")] += 1
    pages = []
    for p in sorted(corpus.pages.values(), key=lambda p: (p.task, -p.grade)):
        r = run.rows.get(p.id, {})
        pages.append({"page": p.id, "task": p.task, "grade": p.grade, "traits": list(p.traits),
                      "total": r.get("total"), **{s: r.get(s) for s in SUBSCORES},
                      "render_status": r.get("render_status"), "render_attempts": r.get("render_attempts"),
                      "cached": r.get("cached"), "rationale": r.get("rationale", "")})
    return {
        "benchmark": "fidelity",
        "judge": judge_id,
        "corpus": {"tasks": len(corpus.tasks), "pages": len(corpus.pages), "pairs": len(corpus.pairs),
                   "pairs_by_margin": {m: sum(p.margin == m for p in corpus.pairs) for m in MARGINS}},
        **analysis,
        "render_status": dict(statuses),
        "timed_out_pages": sorted(pid for pid, r in run.rows.items() if r.get("render_status") == "timeout"),
        "failed": run.failed,
        "pages_rendered": run.rendered,
        "pages_cached": run.cached,
        "wall_s": round(wall_s, 1),
        "notes": list(notes),
        "pages": pages,
    }


def _pct(block: Mapping[str, Any] | None) -> str:
    if not block or block.get("agreement") is None:
        return "  n/a "
    return f"{block['agreement'] * 100:5.1f}%"


def _gap(block: Mapping[str, Any]) -> str:
    return "n/a" if block.get("mean_gap") is None else f"{block['mean_gap']:+.1f}"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The short table printed at the end of a run and embedded in report.md."""
    o = report["overall"]
    sp = report["spearman_within_prompt"]
    lines = [f"judge {report['judge']}: {report['corpus']['pages']} pages, {report['corpus']['pairs']} pairs, "
             f"{report['wall_s']} s ({report['pages_rendered']} rendered, {report['pages_cached']} cached)",
             "",
             f"{'slice':<28}{'agree':>8}{'n':>6}{'ties':>6}{'gap':>8}",
             f"{'overall':<28}{_pct(o):>8}{o['n']:>6}{o['ties']:>6}{_gap(o):>8}"]
    for group in ("by_margin", "by_category", "by_language", "by_tag", "by_subscore"):
        for name, block in report.get(group, {}).items():
            label = f"{group[3:]}: {name}"
            lines.append(f"{label:<28}{_pct(block):>8}{block['n']:>6}{block['ties']:>6}{_gap(block):>8}")
    lines.append("(gap: mean judge score of the preferred page minus the other, in rubric points)")
    mean = "n/a" if sp["mean"] is None else f"{sp['mean']:.3f}"
    lines += ["", f"Spearman within prompt (mean of {sp['n_prompts']} prompts): {mean}",
              f"Spearman pooled over pages: {report['spearman_pooled']}"]
    if sp["undefined"]:
        lines.append(f"  prompts where the judge gave every page the same score (counted as 0): {', '.join(sp['undefined'])}")
    return lines


def write_markdown(report: Mapping[str, Any], path: Path) -> None:
    lines = [f"# Judge fidelity: {report['judge']}", "", "```", *summary_lines(report), "```", ""]
    if report["worst_inversions"]:
        lines += ["## Clear pairs the judge gets most wrong", "",
                  "| task | designer prefers | over | judge | reason |", "|---|---|---|---|---|"]
        for r in report["worst_inversions"][:10]:
            lines.append(f"| {r['task']} | {r['better'].split('--')[-1]} | {r['worse'].split('--')[-1]} | "
                         f"{r['better_score']:.1f} vs {r['worse_score']:.1f} | {r['reason']} |")
        lines.append("")
    lines += ["## Within-prompt Spearman", "", "| prompt | rho |", "|---|---|"]
    for t, v in report["spearman_within_prompt"]["per_prompt"].items():
        lines.append(f"| {t} | {'n/a' if v is None else f'{v:.2f}'} |")
    if report["timed_out_pages"] or report["failed"] or report["notes"]:
        lines += ["", "## Caveats", ""]
        if report["timed_out_pages"]:
            lines.append(f"- render timed out (scored as captured): {', '.join(report['timed_out_pages'])}")
        for f in report["failed"]:
            lines.append(f"- not scored (our side failed): {f['page']}: {f.get('error', '')}")
        for n in report["notes"]:
            lines.append(f"- {n}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


async def arun_fidelity(out_dir: str | Path, *, judge_spec: str = "offline", judge_options: Mapping[str, Any] | None = None,
                        judge: Any = None, limit: int | None = None, task_ids: Sequence[str] | None = None,
                        tags: Sequence[str] | None = None, concurrency: int = 2, progress: bool = True,
                        use_cache: bool = True, timeout_retries: int = 1,
                        corpus: Corpus | None = None) -> dict[str, Any]:
    """Score the (sliced) corpus with one judge, write report.json and report.md, return the report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    corpus = select(corpus or load_corpus(), limit=limit, task_ids=task_ids, tags=tags)
    owned = judge is None
    if owned:
        from aesenv.kinds.web.judges import make_judge
        judge = make_judge(judge_spec, **dict(judge_options or {}))
    start = time.perf_counter()
    try:
        run = await score_corpus(corpus, judge, ScoreCache(out / "scores.jsonl", enabled=use_cache),
                                 concurrency=concurrency, progress=progress, timeout_retries=timeout_retries)
    finally:
        close = getattr(judge, "close", None)
        if owned and close is not None:
            await close()
    report = build_report(corpus, run, judge_identity(judge), time.perf_counter() - start, environment_notes(corpus))
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    write_markdown(report, out / "report.md")
    return report


def run_fidelity(out_dir: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Synchronous entry point (one event loop, one Renderer for the whole run)."""
    return asyncio.run(arun_fidelity(out_dir, **kwargs))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fidelity", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/fidelity", help="output folder: report.json, report.md, scores.jsonl (cache)")
    add_judge_args(p)
    p.add_argument("--limit", type=int, default=None, help="only the first N prompts")
    p.add_argument("--tasks", nargs="+", help="only these prompt ids")
    p.add_argument("--tags", nargs="+", help=f"only pairs with any of these tags: {', '.join(sorted(PAIR_TAGS))}")
    p.add_argument("--concurrency", type=int, default=2, help="pages rendered and judged at once")
    p.add_argument("--timeout-retries", type=int, default=1, help="re-render a page whose render timed out this many times")
    p.add_argument("--rescore", action="store_true", help="ignore cached scores (they are still appended to)")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    options = JudgeSpec.from_args(args).options()
    report = run_fidelity(args.out, judge_spec=args.judge, judge_options=options, limit=args.limit, task_ids=args.tasks,
                          tags=args.tags, concurrency=args.concurrency, progress=not args.no_progress,
                          use_cache=not args.rescore, timeout_retries=args.timeout_retries)
    print("\n".join(summary_lines(report)))
    for r in report["worst_inversions"][:8]:
        print(f"  INVERTED {r['better']} ({r['better_score']:.1f}) <= {r['worse']} ({r['worse_score']:.1f})")
    for n in report["notes"]:
        print(f"note: {n}")
    print(f"wrote {Path(args.out) / 'report.json'} and report.md")
    return 0 if not report["failed"] else 3


if __name__ == "__main__":
    raise SystemExit(main())
