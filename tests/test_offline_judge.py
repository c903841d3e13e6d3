"""The offline design judge: rubric ranges, determinism, evidence, and degradation ordering."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from aesenv.judging.base import RUBRIC_MAX
from aesenv.judging.copy import prompt_terms, stem
from aesenv.judging.design import OfflineDesignJudge
from aesenv.render import Renderer, Rendering, RenderStatus
from aesenv.tasks import Task
from benchmarks.degradation import DEGRADATIONS, handwritten_pages

METRICS = {
    "alignment": {"prompt_terms", "requested_content", "category_fit", "substance"},
    "aesthetics": {"contrast", "typography", "palette", "whitespace"},
    "structure": {"overlaps", "grid", "grouping", "composition", "overflow", "mobile", "integrity"},
}
ORDERING_PAGES = ("website_bakery", "ui_settings")
JUDGE = OfflineDesignJudge()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def offline_renderer():
    async with Renderer() as r:
        yield r


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def judged(offline_renderer):
    """Each ordering page and its five degradations, rendered and judged once for the module."""
    pages = {p.task.id: p for p in handwritten_pages()}
    out = {}
    for pid in ORDERING_PAGES:
        page = pages[pid]
        rendering = await offline_renderer.render(page.html)
        out[(pid, "polished")] = (page.task, rendering, await JUDGE.judge(page.task, rendering))
        for name, fn in DEGRADATIONS.items():
            worse = await offline_renderer.render(fn(page.html))
            out[(pid, name)] = (page.task, worse, await JUDGE.judge(page.task, worse))
    return out


def _check_ranges(j) -> None:
    assert 0 <= j.alignment <= RUBRIC_MAX["alignment"]
    assert 0 <= j.aesthetics <= RUBRIC_MAX["aesthetics"]
    assert 0 <= j.structure <= RUBRIC_MAX["structure"]
    assert j.total == pytest.approx(j.alignment + j.aesthetics + j.structure, abs=0.02)
    assert 0 <= j.total <= 100


def test_metric_maxima_fill_the_rubric(judged):
    _, _, j = judged[("website_bakery", "polished")]
    for group, names in METRICS.items():
        assert set(j.evidence[group]) == names
        assert sum(m["max"] for m in j.evidence[group].values()) == pytest.approx(RUBRIC_MAX[group])


@pytest.mark.parametrize("variant", ["polished", *sorted(DEGRADATIONS)])
def test_ranges_and_evidence(judged, variant):
    for pid in ORDERING_PAGES:
        _, _, j = judged[(pid, variant)]
        _check_ranges(j)
        for group, names in METRICS.items():
            for name in names:
                m = j.evidence[group][name]
                assert 0 <= m["points"] <= m["max"], (group, name, m)
                assert "note" in m
        json.dumps(j.evidence)  # evidence must travel in a JSON record
        assert j.rationale


def test_polished_pages_score_high_and_spread(judged):
    for pid in ORDERING_PAGES:
        assert judged[(pid, "polished")][2].total >= 70
        assert judged[(pid, "remove_content")][2].total <= 45


@pytest.mark.parametrize("degradation", sorted(DEGRADATIONS))
def test_degradations_are_ordered(judged, degradation):
    for pid in ORDERING_PAGES:
        good = judged[(pid, "polished")][2]
        bad = judged[(pid, degradation)][2]
        assert good.total > bad.total + 3, (pid, degradation, good.total, bad.total, bad.rationale)


def test_degradations_hit_the_metric_they_damage(judged):
    pid = "website_bakery"
    ev = {v: judged[(pid, v)][2].evidence for v in ["polished", *DEGRADATIONS]}
    a, s = "aesthetics", "structure"
    assert ev["destroy_contrast"][a]["contrast"]["points"] < 0.3 * ev["polished"][a]["contrast"]["points"]
    assert ev["overlap_boxes"][s]["overlaps"]["colliding_text_share"] > 0.1
    assert ev["polished"][s]["overlaps"]["colliding_text_share"] < 0.02
    assert ev["tiny_fonts"][a]["typography"]["tiny_share"] > 0.9
    assert ev["strip_css"][a]["typography"]["default_serif_share"] > 0.5
    assert ev["remove_content"]["alignment"]["prompt_terms"]["coverage"] < 0.5 * \
        ev["polished"]["alignment"]["prompt_terms"]["coverage"]
    terms = ev["polished"]["alignment"]["prompt_terms"]
    assert {"matched", "missing", "coverage", "points", "max"} <= set(terms)


async def test_deterministic(judged):
    task, rendering, first = judged[("website_bakery", "polished")]
    again = await JUDGE.judge(task, rendering)
    assert again.model_dump() == first.model_dump()


async def test_blank_page_scores_low(offline_renderer):
    task = Task(id="blank", category="Website", prompt="A landing page for a bicycle repair shop with prices")
    rendering = await offline_renderer.render("<!DOCTYPE html><html><body></body></html>")
    j = await JUDGE.judge(task, rendering)
    _check_ranges(j)
    assert j.total < 25
    assert j.evidence["presence"]["factor"] < 0.1
    assert j.evidence["alignment"]["prompt_terms"]["coverage"] == 0
    assert "little to judge" in j.rationale


@pytest.mark.parametrize("status", [RenderStatus.TIMEOUT, RenderStatus.INFRA_ERROR, RenderStatus.OK])
async def test_empty_rendering_never_raises(status):
    task = Task(id="e", category="Game Dev", prompt="A snake game with a score counter")
    j = await JUDGE.judge(task, Rendering(status=status))
    _check_ranges(j)
    assert j.total < 5
    assert j.evidence["screenshot"] is False
    assert j.evidence["render_status"] == status.value


def test_prompt_terms_fold_plurals_and_drop_instructions():
    terms, phrases = prompt_terms('Create a modern landing page for "Crumb & Co." showing pastries and opening hours')
    assert "pastry" in terms and "hour" in terms and "open" in terms
    assert not {"create", "modern", "landing", "page"} & set(terms)
    assert phrases == ["crumb & co."]
    assert stem("rotating") == "rotat" and stem("cities") == "city"


@pytest.mark.slow
def test_degradation_benchmark_accuracy(tmp_path):
    from benchmarks.degradation import run_degradation

    report = run_degradation(tmp_path, progress=False)
    assert (tmp_path / "degradation.json").is_file()
    assert report["n_pairs"] >= 50
    assert report["accuracy"] >= 0.9, report["failing"]
