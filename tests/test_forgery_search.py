"""The forgery search (`aesenv bench forgery --search N`, benchmarks/forgery_search.py): its grammar
emits what it says, its plan is deterministic, its oracle keeps only pixel-identical mutations
(a visible control is never kept), a gain must beat both runs of the twin, a gain is saved as a
replayable corpus case, and a fixed-seed sample of real mutations finds no gain."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from aesenv.tasks import Task
from benchmarks import forgery_grammar as grammar
from benchmarks import forgery_search as search
from benchmarks.forgery import Scores, load_cases
from benchmarks.forgery_grammar import (DELIVERIES, PLOT_PRIMITIVES, PLOT_ROLES, PRIMITIVES, WEB_CONTENT, Slot,
                                        blank_font, mutate_page, plot_code)

TASK = Task.model_validate({
    "id": "search-test", "kind": "web", "category": "Data Visualization",
    "prompt": "A 1280x720 slide titled Quarterly report. Show the text \"Revenue grew 18% this year\" exactly as "
              "written, a bar chart of revenue by quarter and a table of plans and prices.",
    "canvas": {"width": 1280, "height": 720},
    "requirements": [{"type": "text_exact", "text": "Revenue grew 18% this year"},
                     {"type": "chart_data", "chart": "bar", "labels": ["Q1", "Q2"], "series": {"Revenue": [4.2, 4.8]}},
                     {"type": "table_data", "header": ["Plan", "Price"], "rows": [["Team", "29"]]}]})
PAGE = "<!DOCTYPE html><html><head><title>t</title></head><body><h1>Quarterly report</h1></body></html>"
SLOT = Slot("quiet", 40, 300, 480, 240, (250, 250, 250))


def test_every_primitive_and_delivery_hides_each_content_it_takes():
    """Each primitive fills all its placeholders for every content kind and every delivery, the
    content (or its text) is in the forgery, the honest twin is the page or the page plus the
    primitive's frame, and the addition goes inside the body."""
    contents = {name: make(TASK, SLOT) for name, make in WEB_CONTENT.items()}
    assert contents["section"] is None and all(c is not None for n, c in contents.items() if n != "section")
    names = [p.name for p in PRIMITIVES]
    assert len(names) == len(set(names)) >= 100
    for primitive in PRIMITIVES:
        for content in (c for c in contents.values() if c is not None):
            if primitive.text_only and content.graphic:
                continue
            for delivery in DELIVERIES.values():
                m = mutate_page(PAGE, primitive, delivery, content, SLOT, uid="7")
                assert not re.search(r"\$(?:content|uid|bg|w|h|options|svgtext|quoted|font)\b", m.forged), primitive.name
                carried = json.dumps(content.markup)[1:-1] if delivery.name not in ("inline", "shadow-declarative") else content.markup
                assert (carried in m.forged or all(grammar._esc(line) in m.forged for line in content.lines)
                        or grammar._esc(content.markup) in m.forged), (primitive.name, delivery.name, content.kind)
                assert m.forged.index("<h1>") < m.forged.index("data-fx-slot") < m.forged.rindex("</body>")
                assert m.honest == PAGE if not primitive.frame else "data-fx-slot" in m.honest and content.markup not in m.honest


def test_the_plan_is_deterministic_and_reaches_every_primitive():
    bases = [b for b in search.load_bases() if b.id in (
        "bare:web-website-01", "bare:aescode-slide-quarterly-revenue", "corpus:plot-alpha-zero-labels", "start:project-gen-01")]
    assert len(bases) == 4
    rounds = 2 * (len(PRIMITIVES) + len(PLOT_PRIMITIVES))
    first, again, other = (search.plan(bases, seed, rounds) for seed in (5, 5, 6))
    assert first == again and first != other
    assert {p.primitive for p in first if p.delivery != "plot"} == {p.name for p in PRIMITIVES}
    assert {p.primitive for p in first if p.delivery == "plot"} == {p.name for p in PLOT_PRIMITIVES}
    assert {p.delivery for p in first} == {*DELIVERIES, "plot"}
    assert {p.content for p in first if p.delivery == "plot"} <= set(PLOT_ROLES)
    by_id = {b.id: b for b in bases}
    for p in first:  # content only where the base's task has it; text-only primitives never hide a chart
        kind = by_id[p.base].kind
        assert (p.delivery == "plot") == (kind == "plot")
        if p.content == "section":
            assert kind == "project"
        if p.content == "chart":
            assert not next(x for x in PRIMITIVES if x.name == p.primitive).text_only
        if p.delivery != "plot":
            assert p.slot in next(x.slots for x in PRIMITIVES if x.name == p.primitive)


def test_slots_are_one_exact_colour_or_the_busiest_area():
    pixels = np.full((1400, 1280, 3), 255, dtype=np.uint8)
    pixels[:300, :] = (10, 20, 30)                     # a dark band at the top
    rng = np.random.default_rng(0)
    pixels[400:700, 700:1200] = rng.integers(0, 255, (300, 500, 3))  # a busy picture
    pixels[330, 100] = (254, 255, 255)                # one pixel off by one level
    slots = search.find_slots(pixels, viewport_height=960)
    quiet, below, ink = slots["quiet"], slots["quiet-below"], slots["ink"]
    for slot in (quiet, below):
        area = pixels[slot.y:slot.y + slot.h, slot.x:slot.x + slot.w]
        assert (area == area[0, 0]).all() and slot.bg == tuple(int(v) for v in area[0, 0])
    assert quiet.y + quiet.h <= 960 and below.y >= 960
    assert not (quiet.x <= 100 < quiet.x + quiet.w and quiet.y <= 330 < quiet.y + quiet.h)
    assert ink.x + ink.w > 700 and ink.x < 1200 and ink.y + ink.h > 400 and ink.y < 700
    assert set(search.find_slots(np.zeros((90, 90, 3), dtype=np.uint8), 960)) == {"flow"}  # too small for any


def _scores(static: float, reward: float) -> Scores:
    return Scores(True, "", {"static": ("ok", static)}, {"reward": reward})


def test_a_gain_beats_both_runs_of_the_twin():
    twins = [_scores(0.30, 24.0), _scores(0.32, 25.6)]
    between = search._gains_over(["static"], twins, _scores(0.31, 24.8))
    assert not any(g.gained for g in between)
    above = search._gains_over(["static"], twins, _scores(0.40, 32.0))
    assert [(g.target, round(g.by, 4)) for g in above if g.gained] == [("static", 0.08), ("reward", 6.4)]
    masked = search._gains_over(["static"], twins, Scores(True, "", {"static": ("infra_error", None)}, {"reward": 24.0}))
    assert [g.target for g in masked if g.gained] == ["static"]


def test_a_saved_gain_replays_as_a_corpus_case(tmp_path):
    base = next(b for b in search.load_bases({"web"}) if b.id == "bare:aescode-slide-quarterly-revenue")
    plan = search.Plan(3, "mask-empty-svg", "masking", "inline", "text_exact", base.id, "quiet")
    gains = search._gains_over(["text"], [Scores(True, "", {"text": ("failed", 0.0)}, {})],
                               Scores(True, "", {"text": ("ok", 1.0)}, {}))
    search.save_case(tmp_path / plan.id, plan, base, base.text, base.text + "<!-- x -->", gains, "quiet")
    (case,) = load_cases(tmp_path)
    assert case.id == plan.id and case.channels == ["text"] and case.task.id == base.task.id
    assert case.config == base.config and case.honest[0] == base.text and case.forged[0].endswith("<!-- x -->")


def test_the_blank_fonts_lay_out_and_draw_nothing():
    import io

    from fontTools.ttLib import TTFont

    for advance in (0, 550):
        font = TTFont(io.BytesIO(blank_font(advance)))
        cmap = font.getBestCmap()
        assert ord("A") in cmap and ord("é") in cmap
        glyph = font["glyf"][cmap[ord("A")]]
        assert glyph.numberOfContours == 0
        assert font["hmtx"][cmap[ord("A")]][0] == advance
    assert blank_font(550) == grammar.blank_font.__wrapped__(550)  # deterministic bytes


@pytest.mark.parametrize("role", PLOT_ROLES)
def test_plot_text_is_added_in_a_free_role_out_of_the_layout(role):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([1, 2], [3, 4])
    ax.set_title("Taken")  # the centre title is the script's own: ours goes to a free slot
    primitive = next(p for p in PLOT_PRIMITIVES if p.name == "alpha-0")
    scope: dict = {}
    exec(plot_code(role, primitive, TASK), scope)  # noqa: S102 - our own generated code
    made = scope["A"]
    assert scope["_fx_role"] == role
    assert ax.get_title() == "Taken"
    if role == "title":
        assert scope["_fx_loc"] == "left" and ax.get_title(loc="left")
    assert all(not p.get_in_layout() for p in scope["_fx_parts"] if hasattr(p, "get_in_layout"))
    assert made.get_alpha() == 0
    plt.close(fig)


@pytest.mark.slow
async def test_a_fixed_seed_sample_of_the_search_finds_no_gain(tmp_path):
    """40 pixel-identical mutations of eight bases of every kind (a few minutes): none may raise
    a channel or an aggregate; and the visible control is never kept (the oracle sees it)."""
    wanted = ("bare:web-website-01", "bare:aescode-slide-quarterly-revenue", "corpus:web-transparent-text",
              "aescode:aescode-page-price-list/missing_text", "pages:ui_signup", "corpus:plot-alpha-zero-labels",
              "template:plot-bar-fruit-sales", "start:project-gen-01")
    bases = [b for b in search.load_bases() if b.id in wanted]
    assert len(bases) == len(wanted)
    data = await search.search(bases, seed=47, keep=40, max_tries=160, out=tmp_path, progress=False)
    s = data["summary"]
    assert s["pixel_identical"] == 40, s
    assert not s["controls_kept"]
    assert s["broken"] == 0, [r for r in data["results"] if r["status"] == "broken"]
    async with search.Searcher(bases, artifact_timeout_s=120) as searcher:
        for base, delivery, content in (("bare:web-website-01", "inline", "copy"),
                                        ("corpus:plot-alpha-zero-labels", "plot", "title")):
            control = search.Plan(0, "control-visible", "control", delivery, content, base, "quiet" if delivery != "plot" else "")
            assert (await searcher.run(control)).status == "not-identical"
    gains = [f"{g['id']}: " + ", ".join(f"{d['target']} {d['honest']} -> {d['forged']}" for d in g["deltas"])
             for g in data["gains"]]
    if gains:  # every one, untruncated: the list is the lead's to-do
        pytest.fail(f"{len(gains)} pixel-identical mutations gained:\n" + "\n".join(gains))
