"""The judge-fidelity corpus is well-formed and its arithmetic is right (`aesenv bench fidelity`).

The corpus checks guard what the benchmark's numbers rest on: a pair that names a page of another
prompt, contradicts another pair, or disagrees with the grades would make an agreement figure
meaningless. The arithmetic is checked on score tables small enough to work out by hand.
"""

import itertools
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aesenv.cli import benchmarks
from aesenv.tasks import Category
from benchmarks import fidelity as fb

CORPUS = fb.load_corpus()
LANGUAGES = {"en", "zh", "ja", "es", "de", "fr", "pt"}
# Where a page may load things from: the CDNs models use (the offline renderer's mirror serves
# them, or blocks them as a real CDN would 404). esm.sh appears once, on purpose: a page whose
# import is never served.
CDN_HOSTS = {"cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "cdn.tailwindcss.com", "d3js.org",
             "fonts.googleapis.com", "fonts.gstatic.com", "esm.sh"}
MIN_PAIRS_PER_TAG = {"canvas": 10, "webgl": 10, "cdn": 20, "non-english": 30, "form-letter": 10, "garish": 15,
                     "placeholder": 8, "empty-chart": 8, "contrast": 5, "layout": 8, "broken": 15, "unstyled": 8,
                     "near-empty": 10, "primitive": 10, "prompt-miss": 15, "polish": 8}
URL = re.compile(r"""(?:src|href)\s*=\s*["'](https?://[^"']+)["']|from\s+["'](https?://[^"']+)["']|"(https?://[^"]+)"\s*[,}]""")


def grade(page_id: str) -> int:
    return CORPUS.pages[page_id].grade


# -- corpus --------------------------------------------------------------------------------


def test_tasks_cover_every_category_and_the_required_languages():
    tasks = list(CORPUS.tasks.values())
    assert len(tasks) >= 20 and len({t.id for t in tasks}) == len(tasks)
    assert {Category.parse(t.category) for t in tasks} == set(Category)
    per_category = Counter(t.category for t in tasks)
    assert min(per_category.values()) >= 3, per_category
    assert {t.language for t in tasks} <= LANGUAGES
    assert LANGUAGES - {"en"} <= {t.language for t in tasks}, "each non-English language needs a prompt"
    for t in tasks:
        assert t.prompt.strip() and t.id.split("-")[0] in {"web", "3d", "game", "ui", "dv"}


def test_every_page_file_is_graded_and_belongs_to_its_task():
    files = {p.stem for p in (CORPUS.root / "pages").glob("*.html")}
    assert files == set(CORPUS.pages), f"ungraded: {files - set(CORPUS.pages)}; missing: {set(CORPUS.pages) - files}"
    assert len(files) >= 70
    for page in CORPUS.pages.values():
        assert page.task in CORPUS.tasks and page.id.startswith(page.task + "--")
        assert 1 <= page.grade <= 10
        assert set(page.traits) <= fb.PAGE_TRAITS, page.id
    per_task = Counter(p.task for p in CORPUS.pages.values())
    assert set(per_task) == set(CORPUS.tasks) and min(per_task.values()) >= 3


def test_grades_within_a_prompt_are_a_strict_order():
    """Every pair of pages of one prompt is a preference, so no two can share a grade."""
    for tid in CORPUS.tasks:
        grades = [p.grade for p in CORPUS.pages_of(tid)]
        assert len(set(grades)) == len(grades), (tid, grades)


def test_pairs_name_pages_of_their_own_task_and_agree_with_the_grades():
    assert len(CORPUS.pairs) >= 120
    for p in CORPUS.pairs:
        assert p.task in CORPUS.tasks
        assert CORPUS.pages[p.better].task == p.task and CORPUS.pages[p.worse].task == p.task, p
        assert p.better != p.worse
        gap = grade(p.better) - grade(p.worse)
        assert gap > 0, f"{p.better} is preferred but graded below {p.worse}"
        assert p.margin in fb.MARGINS
        # a clear preference is at least two grade points apart; a subtle one at most three
        assert (p.margin == "clear" and gap >= 2) or (p.margin == "subtle" and gap <= 3), (p, gap)


def test_no_pair_is_repeated_or_contradicted_and_preferences_have_no_cycle():
    seen = set()
    for p in CORPUS.pairs:
        assert (p.better, p.worse) not in seen, f"duplicate pair {p}"
        assert (p.worse, p.better) not in seen, f"contradicting pair {p}"
        seen.add((p.better, p.worse))
    graph = defaultdict(set)
    for a, b in seen:
        graph[a].add(b)
    state: dict[str, int] = {}

    def visit(node: str) -> None:
        state[node] = 1
        for nxt in graph[node]:
            assert state.get(nxt) != 1, f"preference cycle through {node} -> {nxt}"
            if nxt not in state:
                visit(nxt)
        state[node] = 2

    for node in list(graph):
        if node not in state:
            visit(node)


def test_pairs_cover_every_page_combination_of_a_prompt():
    for tid in CORPUS.tasks:
        ids = {p.id for p in CORPUS.pages_of(tid)}
        expected = {frozenset(c) for c in itertools.combinations(ids, 2)}
        assert {frozenset((p.better, p.worse)) for p in CORPUS.pairs if p.task == tid} == expected, tid


def test_tags_are_known_follow_the_page_traits_and_meet_minimum_counts():
    counts = Counter()
    for p in CORPUS.pairs:
        assert set(p.tags) <= fb.PAIR_TAGS, p
        traits = set(CORPUS.pages[p.better].traits) | set(CORPUS.pages[p.worse].traits)
        assert traits <= set(p.tags), (p, traits)
        assert ("non-english" in p.tags) == (CORPUS.tasks[p.task].language != "en"), p
        assert ("polish" in p.tags) == (min(grade(p.better), grade(p.worse)) >= 6), p
        counts.update(p.tags)
    short = {t: (counts[t], n) for t, n in MIN_PAIRS_PER_TAG.items() if counts[t] < n}
    assert not short, f"tags below their minimum (have, need): {short}"
    by_category = Counter(CORPUS.tasks[p.task].category for p in CORPUS.pairs)
    assert min(by_category.values()) >= 20, by_category
    margins = Counter(p.margin for p in CORPUS.pairs)
    assert margins["clear"] >= 60 and margins["subtle"] >= 25, margins


def test_reasons_are_one_sentence():
    for p in CORPUS.pairs:
        r = p.reason.strip()
        assert r and "\n" not in r and len(r) <= 240 and r[-1] in ".!", p
        assert r.count(". ") == 0, f"more than one sentence: {r}"


def test_pages_are_self_contained_in_the_prompt_language_and_good_ones_are_substantial():
    for page in CORPUS.pages.values():
        html = page.html
        task = CORPUS.tasks[page.task]
        for m in URL.finditer(html):
            url = next(g for g in m.groups() if g)
            assert urlsplit(url).hostname in CDN_HOSTS, f"{page.id} loads {url}"
        assert not re.search(r"<img\b[^>]*\bsrc\s*=\s*[\"']https?:", html, re.I), f"{page.id} has an external image"
        lang = re.search(r"<html\b[^>]*\blang\s*=\s*[\"']([A-Za-z-]+)", html, re.I)
        if task.language != "en":
            assert lang and lang.group(1).lower().split("-")[0] == task.language, page.id
        elif lang:
            assert lang.group(1).lower().startswith("en"), page.id
        if page.grade >= 8:
            assert len(html.splitlines()) >= 100, f"{page.id} is graded {page.grade} but is short"


def test_each_required_style_has_pages():
    traits = Counter(t for p in CORPUS.pages.values() for t in p.traits)
    for trait in ("canvas", "webgl", "cdn", "form-letter", "garish", "placeholder", "empty-chart", "contrast",
                  "layout", "broken", "unstyled", "near-empty", "primitive"):
        assert traits[trait] >= 2, (trait, traits[trait])
    webgl = [p for p in CORPUS.pages.values() if "webgl" in p.traits]
    assert any("three" in p.html and "importmap" in p.html for p in webgl)
    assert any("cdn.tailwindcss.com" in p.html and "chart.js" in p.html.lower() for p in CORPUS.pages.values())


def test_the_benchmark_is_registered_with_the_cli():
    assert benchmarks()["fidelity"].value == "benchmarks.fidelity:main"
    assert callable(fb.main)


# -- arithmetic on hand-made tables ----------------------------------------------------------


def tiny_corpus() -> fb.Corpus:
    """Prompt t1 with pages a (grade 3) > b (2) > c (1); prompt t2 with d (2) > e (1)."""
    tasks = {"t1": fb.FidelityTask("t1", "Website", "p1", "en"), "t2": fb.FidelityTask("t2", "Game Dev", "p2", "fr")}
    pages = {pid: fb.FidelityPage(pid, task, g, (), "", Path("/nonexistent"))
             for pid, task, g in [("a", "t1", 3), ("b", "t1", 2), ("c", "t1", 1), ("d", "t2", 2), ("e", "t2", 1)]}
    pairs = [fb.Pair("t1", "a", "b", "subtle", "", ("garish",)), fb.Pair("t1", "a", "c", "clear", "", ("garish", "cdn")),
             fb.Pair("t1", "b", "c", "clear", "", ("cdn",)), fb.Pair("t2", "d", "e", "clear", "", ("non-english",))]
    return fb.Corpus(tasks, pages, pairs)


def test_pair_credit_counts_ties_as_half():
    assert fb.pair_credit(70, 60) == 1.0
    assert fb.pair_credit(60, 70) == 0.0
    assert fb.pair_credit(65, 65) == 0.5


def test_agreement_by_margin_tag_category_and_language():
    corpus = tiny_corpus()
    # a ties b (1/2); c above a and b inverts two clear pairs (0, 0); d beats e (1): 1.5 of 4
    scores = {"a": 50.0, "b": 50.0, "c": 55.0, "d": 80.0, "e": 20.0}
    out = fb.grouped_agreement(corpus, scores)
    assert out["overall"] == {"agreement": 0.375, "n": 4, "credit": 1.5, "ties": 1, "missing": 0,
                              "mean_gap": 12.5}  # (0 - 5 - 5 + 60) / 4
    assert out["by_margin"]["subtle"]["agreement"] == 0.5
    assert out["by_margin"]["clear"]["agreement"] == pytest.approx(1 / 3, abs=1e-4)
    assert out["by_tag"]["garish"]["agreement"] == 0.25
    assert out["by_tag"]["cdn"]["agreement"] == 0.0
    # Website: the tie (1/2) and the two inversions (0, 0) of t1, gaps 0, -5, -5; Game Dev: d beats e by 60
    assert out["by_category"] == {
        "Game Dev": {"agreement": 1.0, "n": 1, "credit": 1.0, "ties": 0, "missing": 0, "mean_gap": 60.0},
        "Website": {"agreement": 0.1667, "n": 3, "credit": 0.5, "ties": 1, "missing": 0, "mean_gap": -3.33}}
    assert out["by_language"]["fr"]["agreement"] == 1.0


def test_agreement_leaves_unscored_pages_out_rather_than_guessing():
    corpus = tiny_corpus()
    out = fb.agreement(corpus.pairs, {"a": 9.0, "b": 1.0, "d": 0.0, "e": 5.0})
    assert out == {"agreement": 0.5, "n": 2, "credit": 1.0, "ties": 0, "missing": 2, "mean_gap": 1.5}  # (8 - 5) / 2
    assert fb.agreement([], {})["agreement"] is None


def test_spearman_matches_hand_computed_values():
    assert fb.spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8)  # 1 - 6*2/(4*15)
    assert fb.spearman([1, 2, 3], [5, 5, 9]) == pytest.approx(1.5 / 3 ** 0.5)  # tied ranks 1.5, 1.5, 3
    assert fb.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert fb.spearman([1, 2, 3], [7, 7, 7]) is None
    assert fb.spearman([1], [2]) is None
    assert fb.ranks([30, 10, 30, 20]) == [3.5, 1.0, 3.5, 2.0]


def test_within_prompt_spearman_counts_a_constant_judge_as_no_information():
    corpus = tiny_corpus()
    scores = {"a": 90.0, "b": 10.0, "c": 50.0, "d": 40.0, "e": 40.0}
    out = fb.within_prompt_spearman(corpus, scores)
    assert out["per_prompt"] == {"t1": 0.5, "t2": None}  # t1 ranks 3,1,2 against grades 3,2,1
    assert out["undefined"] == ["t2"] and out["mean"] == 0.25 and out["n_prompts"] == 2
    # pooled over all pages: grade ranks 5, 3.5, 1.5, 3.5, 1.5 against score ranks 5, 1, 4, 2.5, 2.5;
    # centred (mean 3) the cross products sum to 2, the squares to 9 and 9.5: r = 2 / sqrt(85.5)
    assert fb.pooled_spearman(corpus, scores) == 0.2163


def test_worst_inversions_lists_clear_pairs_worst_first():
    corpus = tiny_corpus()
    scores = {"a": 30.0, "b": 60.0, "c": 70.0, "d": 50.0, "e": 50.0}
    rows = fb.inversions(corpus, scores)
    assert [(r["better"], r["worse"], r["inversion"]) for r in rows] == [("a", "c", 40.0), ("b", "c", 10.0), ("d", "e", 0.0)]
    assert all(r["task"] in ("t1", "t2") for r in rows)


def test_select_slices_by_task_limit_and_tag():
    sliced = fb.select(CORPUS, limit=2)
    assert list(sliced.tasks) == list(CORPUS.tasks)[:2]
    assert all(p.task in sliced.tasks for p in sliced.pairs) and all(p.task in sliced.tasks for p in sliced.pages.values())
    tagged = fb.select(CORPUS, tags=["webgl"])
    assert tagged.pairs and all("webgl" in p.tags for p in tagged.pairs)
    assert {p.better for p in tagged.pairs} | {p.worse for p in tagged.pairs} == set(tagged.pages)
    with pytest.raises(ValueError):
        fb.select(CORPUS, tags=["no-such-tag"])
    with pytest.raises(ValueError):
        fb.select(CORPUS, task_ids=["no-such-task"])


def test_cache_key_and_cache_file_round_trip(tmp_path):
    task = fb.FidelityTask("t", "Website", "a prompt", "en")
    key = fb.cache_key("<p>x</p>", task, "offline@1")
    assert key != fb.cache_key("<p>y</p>", task, "offline@1")
    assert key != fb.cache_key("<p>x</p>", task, "offline@2")
    assert key != fb.cache_key("<p>x</p>", fb.FidelityTask("t", "Website", "another prompt", "en"), "offline@1")
    cache = fb.ScoreCache(tmp_path / "scores.jsonl")
    cache.put({"key": key, "page": "p", "total": 61.5})
    cache.put({"key": key, "page": "p", "total": 62.0})
    with (tmp_path / "scores.jsonl").open("a") as f:
        f.write('{"key": "cut sho')  # a run killed mid-write
    again = fb.ScoreCache(tmp_path / "scores.jsonl")
    assert again.get(key)["total"] == 62.0
    assert fb.ScoreCache(tmp_path / "scores.jsonl", enabled=False).get(key) is None


def test_report_summary_renders_from_an_analysis(tmp_path):
    corpus = tiny_corpus()
    run = fb.ScoreRun(rows={pid: {"total": s, "alignment": s * 0.4, "aesthetics": s * 0.3, "structure": s * 0.3,
                                  "render_status": "ok", "cached": False}
                            for pid, s in {"a": 80.0, "b": 60.0, "c": 70.0, "d": 50.0, "e": 40.0}.items()})
    report = fb.build_report(corpus, run, "fake@1", 1.0)
    assert report["overall"]["agreement"] == 0.75 and report["by_subscore"]["alignment"]["agreement"] == 0.75
    assert report["worst_inversions"][0]["better"] == "b"
    text = "\n".join(fb.summary_lines(report))
    assert "overall" in text and "75.0%" in text
    fb.write_markdown(report, tmp_path / "report.md")
    assert "fake@1" in (tmp_path / "report.md").read_text()


# -- end to end ------------------------------------------------------------------------------


def hand_agreement(pairs, totals: dict[str, float]) -> float:
    """The share of preferences a judge's totals order right, ties half: counted here, not by `fb`."""
    credit = sum(1.0 if totals[p.better] > totals[p.worse] else 0.5 if totals[p.better] == totals[p.worse] else 0.0
                 for p in pairs)
    return round(credit / len(pairs), 4)


def quoted_fidelity() -> dict[str, float]:
    """What `OFFLINE_FIDELITY` (quoted whenever a run trains or benchmarks on the offline judge) claims."""
    from aesenv.judging.design import OFFLINE_FIDELITY

    m = re.search(r"(\d+) pages we wrote, (\d+) designer preferences\) it orders (\d+\.\d)% of pairwise", OFFLINE_FIDELITY)
    assert m, OFFLINE_FIDELITY
    return {"pages": int(m.group(1)), "pairs": int(m.group(2)), "percent": float(m.group(3))}


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_quoted_offline_fidelity_is_what_the_benchmark_measures_and_a_slice_reuses_the_cache(tmp_path, capsys):
    """The whole corpus with the offline judge gives the agreement OFFLINE_FIDELITY quotes; a slice
    run into the same folder then renders nothing and its agreement is the hand count of its pairs."""
    from aesenv.cli import main as cli

    out = tmp_path / "fid"
    assert cli(["bench", "fidelity", "--out", str(out), "--no-progress"]) == 0
    report = json.loads((out / "report.json").read_text())
    quoted = quoted_fidelity()
    assert report["corpus"]["pages"] == quoted["pages"] and report["corpus"]["pairs"] == quoted["pairs"]
    assert report["pages_rendered"] == quoted["pages"] and report["pages_cached"] == 0 and not report["failed"]
    totals = {p["page"]: p["total"] for p in report["pages"]}
    assert report["overall"]["agreement"] == hand_agreement(CORPUS.pairs, totals)
    assert round(100 * report["overall"]["agreement"], 1) == quoted["percent"], report["overall"]
    assert (out / "report.md").read_text().startswith("# Judge fidelity")
    assert "overall" in capsys.readouterr().out

    args = ["bench", "fidelity", "--out", str(out), "--tasks", "web-portfolio", "ui-login", "--no-progress"]
    assert cli(args) == 0  # every page of the slice is in the cache
    sliced_report = json.loads((out / "report.json").read_text())
    sliced = fb.select(CORPUS, task_ids=["web-portfolio", "ui-login"])
    margins = {m: sum(p.margin == m for p in sliced.pairs) for m in fb.MARGINS}
    assert sliced_report["corpus"] == {"tasks": 2, "pages": 8, "pairs": 12, "pairs_by_margin": margins}
    assert sliced_report["pages_rendered"] == 0 and sliced_report["pages_cached"] == 8
    assert {p["page"]: p["total"] for p in sliced_report["pages"]} == {pid: totals[pid] for pid in sliced.pages}
    assert sliced_report["overall"]["n"] == 12
    assert sliced_report["overall"]["agreement"] == hand_agreement(sliced.pairs, totals)
    assert set(sliced_report["spearman_within_prompt"]["per_prompt"]) == {"web-portfolio", "ui-login"}
