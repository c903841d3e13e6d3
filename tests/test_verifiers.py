"""AesCode verifier channels: the checks on hand-made evidence, the requirement suite and its
JSON form, canvas rendering, masks and infra failures, the Rule/Visual/Overall report, the
requirement potential, and the done-when matrix (a representative subset here; the whole suite
under `slow`)."""

import io
import json

import pytest
from PIL import Image

from aesenv.artifact import extract_artifact
from aesenv.render.models import DomElement, PageMetrics, Rendering, RenderStatus
from aesenv.rewards import ChannelResult, ChannelStatus, PipelineConfig, RewardPipeline
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.aescode import aescode_scores
from aesenv.rewards.aggregate import AGGREGATORS
from aesenv.tasks import Canvas, ChartData, TableData, Task, TextExact, load_tasks
from aesenv.kinds.web.verifiers import requirement_potential
from aesenv.kinds.web.verifiers.channels import BoundaryChannel, TextChannel
from aesenv.kinds.web.verifiers.checks import check_boundary, check_charts, check_tables, check_text
from aesenv.kinds.web.verifiers.ocr import TextBlock
from aesenv.kinds.web.verifiers.reference import (OCCUPANCY_BAND, LayoutChannel, WhitespaceChannel, _layout, match_blocks,
                                         occupancy, ocr_lines)
from benchmarks import aescode_suite
from benchmarks.verifier_matrix import CHANNELS, matrix, pages_for, score_pages


def element(x, y, w, h, text="", tag="div") -> DomElement:
    return DomElement(tag=tag, x=x, y=y, w=w, h=h, text=text, text_len=len(text))


def rendering(text="", elements=(), doc=(800, 600), png=None, status=RenderStatus.OK) -> Rendering:
    return Rendering(status=status, elements=list(elements), full_page_png=png,
                     metrics=PageMetrics(visible_text=text, doc_width=doc[0], doc_height=doc[1]))


def png_with_box(size=(800, 600), box=None) -> bytes:
    image = Image.new("RGB", size, (255, 255, 255))
    if box:
        image.paste((20, 20, 120), box)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


# --- checks --------------------------------------------------------------------------------------

def test_text_is_verbatim_but_whitespace_insensitive():
    required = [TextExact(text="Grand  Opening\nJune 14"), TextExact(text="Free Entry")]
    check = check_text(required, rendering("Welcome · Grand Opening June 14 · free entry"))
    assert check.payload["found"] == ["Grand  Opening\nJune 14"]
    assert check.payload["missing"] == ["Free Entry"]  # case matters
    assert check.score == 0.5 and not check.passed


def test_boundary_names_the_element_outside_and_the_aspect_ratio():
    canvas = Canvas(width=800, height=600)
    inside = [element(0, 0, 800, 600, tag="body"), element(40, 40, 200, 50, "Title")]
    assert check_boundary(canvas, rendering(elements=inside)).passed
    spill = inside + [element(700, 40, 200, 40, "Badge")]
    check = check_boundary(canvas, rendering(elements=spill, doc=(900, 600)))
    assert not check.passed and check.payload["outside"][0]["text"] == "Badge"
    assert check.payload["aspect_agreement"] == pytest.approx((800 / 600) / (900 / 600), abs=1e-4)
    assert 0 < check.score < 1
    tall = check_boundary(canvas, rendering(elements=inside, doc=(800, 900)))  # content ran off the bottom
    assert not tall.passed and tall.payload["outside_count"] == 0


def test_table_cells_compare_in_place_and_surplus_rows_cost():
    required = [TableData(header=["Plan", "Price"], rows=[["Team", "29"], ["Pro", "79"]])]
    good = [["Plan", "Price"], ["Team", "29"], ["Pro", "79"]]
    assert check_tables(required, [[["x"]], good]).passed
    wrong = check_tables(required, [[["Plan", "Price"], ["Team", "29"], ["Pro", "97"]]])
    assert not wrong.passed and wrong.score == pytest.approx(5 / 6)
    assert wrong.payload["required"][0]["mismatches"] == [{"row": 2, "col": 1, "expected": "79", "rendered": "97"}]
    padded = check_tables(required, [good + [["Extra", "1"]]])
    assert not padded.passed and padded.score == pytest.approx(6 / 7)
    none = check_tables(required, [])
    assert none.score == 0 and none.payload["required"][0]["mismatches"][0]["reason"] == "no rendered table"


def chart(kind="bar", labels=("A", "B"), series=(("Sales", [1, 2]),)):
    return {"categories": [list(labels)] if kind != "pie" else [],
            "series": [{"type": kind, "name": n, "values": v,
                        "names": list(labels) if kind == "pie" else [""] * len(v)} for n, v in series]}


def test_chart_type_labels_and_series_each_count_a_third():
    req = [ChartData(chart="bar", labels=["A", "B"], series={"Sales": [1, 2]})]
    assert check_charts(req, [chart()]).passed
    assert check_charts(req, [chart(kind="line")]).score == pytest.approx(2 / 3)
    assert check_charts(req, [chart(labels=("A", "C"))]).score == pytest.approx(2 / 3)
    assert check_charts(req, [chart(series=(("Sales", [1, 3]),))]).score == pytest.approx(2 / 3)
    assert check_charts(req, [chart(series=(("Costs", [1, 2]),))]).score == pytest.approx(2 / 3)
    nothing = check_charts(req, [])
    assert nothing.score == 0 and nothing.payload["required"][0]["reason"] == "no live ECharts instance"
    pie = [ChartData(chart="pie", labels=["X", "Y"], series=[3, 4])]
    assert check_charts(pie, [chart(kind="pie", labels=("X", "Y"), series=(("", [3, 4]),))]).passed


def test_layout_pairs_blocks_by_text_then_by_similar_text():
    ref = [element(0, 0, 100, 20, "Grand Opening June 14"), element(0, 50, 100, 20, "Free entry")]
    page = [element(0, 0, 100, 20, "Grand Opening June"), element(300, 50, 100, 20, "Free entry"),
            element(0, 90, 100, 20, "Something else entirely")]
    pairs = match_blocks(ref, page)
    assert [p.text if p else None for _, p in pairs] == ["Grand Opening June", "Free entry"]
    assert match_blocks([element(0, 0, 10, 10, "Quarterly")], [element(0, 0, 10, 10, "Zebra")])[0][1] is None


def test_ocr_pieces_of_one_line_are_one_block_on_both_sides():
    """A detector that cuts a headline in two on one image must not move or lose it: pieces a word
    space apart on one line join; separate columns, lines and labels stay apart."""
    split = [TextBlock("Harbour City", 40, 40, 411, 62), TextBlock("Marathon", 457, 49, 304, 46),
             TextBlock("Runners", 55, 165, 64, 20), TextBlock("18,000", 54, 182, 99, 30),
             TextBlock("Start", 393, 165, 42, 21), TextBlock("0k", 185, 1230, 17, 17), TextBlock("10k", 362, 1228, 26, 20)]
    lines = ocr_lines(split)
    assert [b.text for b in lines] == ["Harbour City Marathon", "Runners", "18,000", "Start", "0k", "10k"]  # as read
    assert (lines[0].x, lines[0].y, lines[0].w, lines[0].h) == (40, 40, 721, 62)
    whole = [TextBlock("Harbour City Marathon", 40, 44, 724, 59)]
    check = _layout(whole, (1080, 1350), lines, (1080, 1350), "ocr")
    assert check.score == 1.0 and not check.payload["missing"]
    unjoined = _layout(whole, (1080, 1350), split, (1080, 1350), "ocr")  # the pieces as read: the headline moved
    assert unjoined.score < 1.0 and unjoined.payload["moved"]
    # Word spaces OCR drops do not decide which block is which (by similarity, "Collect your metal"
    # would be taken for the line read without its spaces).
    page = [TextBlock("Collect your metal", 300, 0, 100, 20), TextBlock("Collectyourmedal", 0, 0, 100, 20)]
    spaced = _layout([TextBlock("Collect your medal", 0, 0, 100, 20)], (800, 600), page, (800, 600), "ocr")
    assert spaced.score == 1.0
    assert _layout([TextBlock("Collect your medal", 0, 0, 100, 20)], (800, 600), page, (800, 600), "dom").score == 0


def test_occupancy_sees_ink_where_it_is():
    grid = occupancy(png_with_box(box=(0, 0, 400, 300)), 800, 600, 2)
    assert grid.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert occupancy(png_with_box(), 800, 600, 8).sum() == 0


# --- task model and suite ------------------------------------------------------------------------

def test_task_json_round_trip_with_requirements_and_typed_checklist():
    row = {"id": "t1", "kind": "web", "category": "Website", "prompt": "A poster.",
           "canvas": {"width": 900, "height": 1200},
           "requirements": [{"type": "text_exact", "text": "Hi"},
                            {"type": "chart_data", "chart": "bar", "labels": ["a"], "series": {"s": [1]}},
                            {"type": "table_data", "header": ["h"], "rows": [["c"]]}],
           "checklist": ["Is there a headline?", {"question": "Is it aligned?", "category": "layout",
                                                   "element": "h1"}]}
    task = Task(**row)
    assert task.checklist[0].category == "content" and task.checklist[0].element is None
    assert task.checklist[1].category == "layout" and task.checklist[1].element == "h1"
    assert Task.model_validate_json(task.model_dump_json()) == task
    with pytest.raises(ValueError):
        Task(**{**row, "checklist": [{"question": "?", "category": "mood"}]})


def test_builtin_suite_is_requirement_bearing_and_matches_its_generator():
    tasks = load_tasks("builtin:aescode")
    assert len(tasks) >= 20
    assert all(t.canvas and any(isinstance(r, TextExact) for r in t.requirements) for t in tasks)
    assert sum(any(isinstance(r, ChartData) for r in t.requirements) for t in tasks) >= 10
    assert sum(any(isinstance(r, TableData) for r in t.requirements) for t in tasks) >= 10
    assert any(t.reference_html for t in tasks) and not all(t.reference_html for t in tasks)
    shipped = [json.loads(line) for line in aescode_suite.SUITE_FILE.read_text().splitlines()]
    assert shipped == [aescode_suite.task_row(s) for s in aescode_suite.SPECS]  # regenerate with --write
    for spec in aescode_suite.SPECS:
        assert pages_for(Task(**aescode_suite.task_row(spec))) == aescode_suite.pages_of(spec)


# --- channels: masks, infra, reporting -------------------------------------------------------------

BARE = Task(id="bare", prompt="A page.")


async def test_channels_are_masked_without_requirements_and_infra_without_a_rendering():
    artifact = extract_artifact("<html><body>x</body></html>")
    masked = await TextChannel().score(PageEvidence(BARE, artifact, rendering("x")))
    assert masked.status is ChannelStatus.NOT_APPLICABLE and masked.score is None
    task = Task(id="t", prompt="p", canvas={"width": 800, "height": 600},
                requirements=[{"type": "text_exact", "text": "x"}])
    broken = rendering(status=RenderStatus.INFRA_ERROR)
    assert (await BoundaryChannel().score(PageEvidence(task, artifact, broken))).status is ChannelStatus.INFRA_ERROR
    jsx = extract_artifact("```jsx\nexport default () => <div/>\n```")
    zero = await TextChannel().score(PageEvidence(task, jsx, None))
    assert zero.status is ChannelStatus.FAILED and zero.score == 0


def result(score, dims=None):
    payload = {"dimensions": dims} if dims else {}
    return ChannelResult(status=ChannelStatus.OK if score == 1 else ChannelStatus.FAILED, score=score, raw=score,
                         payload=payload)


def test_rule_visual_overall_leave_out_what_does_not_count():
    channels = {"text": result(1.0), "boundary": result(0.5), "table_chart": ChannelResult.not_applicable("none"),
                "table": ChannelResult.infra_error("boom"), "whitespace": result(0.0),
                "checklist": result(0.5, {"content": 1.0, "layout": 0.0, "style": 0.5})}
    # AesCode's report: Rule over text, boundary and table/chart; Visual the checklist's dimensions.
    assert aescode_scores(channels) == {"rule": 0.75, "visual": 0.5, "overall": 0.625}
    assert aescode_scores(channels, report="channels") == {"rule": 0.5, "visual": None, "overall": 0.5}
    assert AGGREGATORS["aescode"](channels) == 0.625
    with_vgr = {**channels, "execution": result(1.0), "vgr": result(0.9), "design_graph": result(0.2)}
    assert aescode_scores(with_vgr) == aescode_scores(channels)  # VGR and execution are not reported
    assert aescode_scores(with_vgr, report="channels") == {"rule": 0.625, "visual": 0.9, "overall": 0.7625}
    no_judge = {"text": result(1.0), "checklist": ChannelResult.not_applicable("offline")}
    assert aescode_scores(no_judge) == {"rule": 1.0, "visual": None, "overall": 1.0}
    assert aescode_scores({"static": result(1.0)}) is None


# --- rendering at the canvas and the live page -----------------------------------------------------

SUBSET = ("aescode-poster-film-festival", "aescode-dashboard-sales", "aescode-poster-marathon")  # all variants


@pytest.fixture(scope="module")
def suite():
    return {t.id: t for t in load_tasks("builtin:aescode")}


async def test_artboard_tasks_render_at_their_canvas(renderer, suite):
    task = suite["aescode-poster-film-festival"]
    shot = await renderer.render(pages_for(task)["correct"], viewport=(task.canvas.width, task.canvas.height))
    assert shot.viewport == (1080, 1350) and shot.metrics.viewport_width == 1080
    assert Image.open(io.BytesIO(shot.full_page_png)).size == (1080, 1350)
    default = await renderer.render("<p>hi</p>")
    assert default.viewport == (renderer.config.viewport_width, renderer.config.viewport_height)


async def test_requirement_potential_counts_satisfied_requirements(renderer, suite):
    task = suite["aescode-poster-film-festival"]  # 2 strings + chart + table + canvas = 5
    viewport = (task.canvas.width, task.canvas.height)
    async with renderer.session(pages_for(task)["correct"], viewport=viewport) as (shot, live):
        assert await requirement_potential(task, shot, live) == 1.0
        assert await requirement_potential(task, shot, None) == pytest.approx(3 / 5)
    async with renderer.session(pages_for(task)["wrong_cell"], viewport=viewport) as (shot, live):
        assert await requirement_potential(task, shot, live) == pytest.approx(4 / 5)
    assert await requirement_potential(BARE, shot, live) is None


async def test_a_fake_chart_library_that_hangs_fails_the_page_not_the_run(renderer):
    task = Task(id="hang", prompt="p", requirements=[{"type": "chart_data", "chart": "bar", "labels": ["a"],
                                                      "series": [1]}])
    page = ("<html><body><div _echarts_instance_='x'></div><script>"
            "window.echarts = {getInstanceByDom() { for (;;) {} }};</script></body></html>")
    pipeline = RewardPipeline(PipelineConfig(channels=["chart"], reward="aescode"), renderer=renderer)
    record = (await pipeline.score(task, page)).record
    await pipeline.close_parts()
    chart_result = record.channels["chart"]
    assert chart_result.status is ChannelStatus.FAILED and chart_result.score == 0
    assert "stalled" in chart_result.payload["reason"]


@pytest.fixture(scope="module")
async def verifier_pipeline(renderer):
    pipeline = RewardPipeline(PipelineConfig(channels=CHANNELS + ["checklist", "design_graph"], reward="aescode"),
                              renderer=renderer)
    yield pipeline
    await pipeline.close_parts()


def assert_matrix(rows):
    wrong = [f"{r['task']}/{r['variant']}: failed {r['failed']} infra {r['infra']}" for r in rows if not r["right"]]
    assert not wrong, wrong
    table = matrix(rows)
    for variant, channels in aescode_suite.VARIANTS.items():
        for channel in channels:
            failed, applied = table[variant][channel].split("/")
            assert failed == applied != "0"
    assert all(cell.startswith("0/") or cell == "-" for cell in table["correct"].values())


async def test_matrix_on_a_representative_subset(verifier_pipeline, suite):
    rows = await score_pages(verifier_pipeline, [suite[i] for i in SUBSET])
    assert {r["variant"] for r in rows} == {"correct", *aescode_suite.VARIANTS}
    assert_matrix(rows)
    correct = next(r for r in rows if r["variant"] == "correct" and r["task"] == "aescode-dashboard-sales")
    assert correct["statuses"]["layout"] == "ok" and correct["statuses"]["checklist"] == "not_applicable"
    # AesCode's report: Visual is the checklist, masked without a VLM judge; VGR (1.0 here) is not reported
    assert correct["aescode"] == {"rule": 1.0, "visual": None, "overall": 1.0}
    assert correct["scores"]["vgr"] == 1.0
    assert correct["graph"]["node_types"]["chart"] == 2 and correct["vgr"]["masked"] > 0
    static = next(r for r in rows if r["variant"] == "static_chart" and r["task"] == SUBSET[0])
    assert static["scores"]["chart"] < 1 and static["statuses"]["text"] == "ok"


@pytest.mark.slow
async def test_matrix_on_the_whole_suite(verifier_pipeline, suite):
    rows = await score_pages(verifier_pipeline, list(suite.values()))
    assert len(rows) >= 100
    assert_matrix(rows)


async def test_whitespace_without_reference_wants_the_canvas_neither_empty_nor_full(renderer):
    task = Task(id="w", prompt="p", canvas={"width": 800, "height": 600})
    artifact = extract_artifact("<html><body>x</body></html>")
    channel = WhitespaceChannel(renderer=renderer)
    empty = await channel.score(PageEvidence(task, artifact, rendering(png=png_with_box())))
    assert empty.status is ChannelStatus.FAILED and empty.payload["mode"] == "band"
    assert empty.payload["occupied_share"]["32"] == 0 < OCCUPANCY_BAND[0]
    half = await channel.score(PageEvidence(task, artifact, rendering(png=png_with_box(box=(0, 0, 800, 300)))))
    assert half.status is ChannelStatus.OK and half.score == 1.0


async def test_a_reference_that_was_never_rendered_is_our_failure(renderer, suite):
    task = suite["aescode-dashboard-sales"].model_copy(update={"reference_html": "<p>never prepared</p>"})
    evidence = PageEvidence(task, extract_artifact(pages_for(task)["correct"]), rendering("x", png=png_with_box()))
    for channel in (LayoutChannel(renderer=renderer), WhitespaceChannel(renderer=renderer)):
        result = await channel.score(evidence)
        assert result.status is ChannelStatus.INFRA_ERROR and "reference" in result.payload["reason"]


ECHARTS = '<script src="https://cdn.jsdelivr.net/npm/echarts@5/dist/echarts.min.js"></script>'
BOX = '<div id="c" style="width:600px;height:400px{}"></div>'


@pytest.mark.parametrize("body, passes", [
    (BOX.format("") + ECHARTS + "<script>echarts.init(document.getElementById('c')).setOption({animation:false,"
     "dataset:{source:[['quarter','Revenue','Cost'],['Q1',4,3],['Q2',5,3.5]]},xAxis:{type:'category'},yAxis:{},"
     "series:[{type:'bar'},{type:'bar'}]});</script>", True),
    (BOX.format("") + ECHARTS + "<script>echarts.init(document.getElementById('c')).setOption({animation:false,"
     "xAxis:{data:['Q1','Q2']},yAxis:{},series:[{type:'bar',name:'Revenue',data:[4,5]},"
     "{type:'bar',name:'Cost',data:[{value:3},{value:3.5}]}]});</script>", True),
    (BOX.format(";display:none") + ECHARTS + "<script>echarts.init(document.getElementById('c')).setOption({"
     "xAxis:{data:['Q1','Q2']},yAxis:{},series:[{type:'bar',name:'Revenue',data:[4,5]},"
     "{type:'bar',name:'Cost',data:[3,3.5]}]});</script>", False),  # never drawn
    ('<div id="c" _echarts_instance_="1"><img alt="chart" src="chart.png"></div><script>window.echarts = '
     "{getInstanceByDom: () => ({getOption: () => ({xAxis: [{data: ['Q1','Q2']}], series: [{type: 'bar', "
     "name: 'Revenue', data: [4, 5]}, {type: 'bar', name: 'Cost', data: [3, 3.5]}]})})};</script>", False),  # a shim
])
async def test_charts_are_read_from_live_instances_that_drew_something(renderer, body, passes):
    from aesenv.kinds.web.verifiers.probes import read_charts

    required = [ChartData(chart="bar", labels=["Q1", "Q2"], series={"Revenue": [4, 5], "Cost": [3, 3.5]})]
    async with renderer.session(f"<!DOCTYPE html><html><body>{body}</body></html>") as (_, live):
        found = await read_charts(live)
    assert check_charts(required, found["charts"]).passed is passes


async def test_layout_credit_falls_with_the_shift_of_each_block(renderer):
    reference = "<html><body style='margin:0'><h1 style='position:absolute;left:{}px;top:0'>Title</h1>" \
                "<p style='position:absolute;left:0;top:300px'>Body text</p></body></html>"
    task = Task(id="l", prompt="p", canvas={"width": 1000, "height": 600}, reference_html=reference.format(0))
    channel = LayoutChannel(renderer=renderer)
    await channel.prepare(task)
    scores = []
    for left in (0, 10, 85, 400):  # 0 %, 1 % (within tolerance), 8.5 % (half credit), 40 % of the width
        shot = await renderer.render(reference.format(left), viewport=(1000, 600))
        scores.append((await channel.score(PageEvidence(task, extract_artifact(reference.format(left)), shot))).score)
    assert scores[0] == scores[1] == 1.0
    assert scores[2] == pytest.approx(0.75, abs=0.01) and scores[3] == 0.5
