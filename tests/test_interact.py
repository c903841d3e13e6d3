"""Interaction agents: labeling, the action grammar, the offline explorer, the interactive channel."""

from pathlib import Path

import pytest

from aesenv.artifact import extract_artifact
from aesenv.interact import Action, MarkKind, OfflineExplorer, draw_marks, label
from aesenv.render import RenderStatus
from aesenv.render.models import Rendering
from aesenv.rewards import ChannelStatus
from aesenv.channels import Evidence
from aesenv.channels.interactive import InteractiveChannel
from aesenv.tasks import Task

PAGES = Path(__file__).resolve().parents[1] / "benchmarks" / "interactions" / "pages"
UI = Task(id="ui", category="UI Component", prompt="An interactive widget.")

LABELING_PAGE = """<!doctype html><html><body>
<span id="plain-listener">only addEventListener</span>
<div id="decor">not interactive</div>
<form><input id="q" placeholder="Search"><button id="send">Send</button></form>
<a id="away" href="https://example.com/">elsewhere</a>
<canvas id="game" width="300" height="150"></canvas>
<script>
document.getElementById('plain-listener').addEventListener('click', () => {});
window.addEventListener('keydown', () => {});
</script></body></html>"""


async def test_labeling_finds_listener_only_controls_canvas_and_form_pairs(renderer):
    async with renderer.session(LABELING_PAGE) as (_, live):
        nodes_before = await live.evaluate("() => document.getElementsByTagName('*').length")
        labeling = await label(live)
        nodes_after = await live.evaluate("() => document.getElementsByTagName('*').length")
        shot = await live.screenshot()
    by_path = {m.path: m for m in labeling.marks}
    assert by_path["#plain-listener"].kind is MarkKind.LISTENER and by_path["#plain-listener"].listeners == ["click"]
    assert "#decor" not in by_path
    assert by_path["#game"].kind is MarkKind.CANVAS
    assert by_path["#q"].kind is MarkKind.FIELD and by_path["#q"].submit == by_path["#send"].index
    assert by_path["#away"].kind is MarkKind.LINK and by_path["#away"].href == "https://example.com/"
    assert labeling.key_listeners == ["keydown"]
    assert nodes_before == nodes_after  # the page itself is never marked up
    assert "listens: click" in labeling.element_list()
    # The marks are drawn on a copy of the screenshot.
    marked = draw_marks(shot, labeling)
    assert marked != shot and marked[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("text, expected", [
    ("click [3]", Action(kind="click", mark=3)),
    ("type [1]; red shoes", Action(kind="type", mark=1, text="red shoes")),
    ("  Left ", Action(kind="key", keys=["ArrowLeft"])),
    ("space", Action(kind="key", keys=["Space"])),
    ("wait", Action(kind="wait")),
    ("finish", Action(kind="finish")),
])
def test_the_action_grammar(text, expected):
    assert Action.parse(text) == expected


@pytest.mark.parametrize("text", ["click", "type [2]", "jump [1]", "", "click [x]", "up [2]"])
def test_the_action_grammar_rejects_malformed_actions(text):
    with pytest.raises(ValueError):
        Action.parse(text)


async def _explore(renderer, html: str, task: Task = UI, budget: int = 3):
    async with renderer.session(html) as (_, live):
        return await OfflineExplorer(budget=budget).explore(live, task)


async def test_explorer_is_deterministic(renderer):
    html = (PAGES / "canvas_game_ok.html").read_text()
    game = Task(id="g", category="Game Dev", prompt="A canvas game.")
    first, second = await _explore(renderer, html, game), await _explore(renderer, html, game)
    assert first.model_dump() == second.model_dump()
    assert [s.target for s in first.steps][:2] == ["#start", "keys:ArrowUp+ArrowLeft"]


@pytest.mark.parametrize("working, broken", [
    ("tabs_ok", "tabs_broken"),
    ("modal_ok", "modal_cannot_close"),
    ("starfield_game_ok", "starfield_game_ignores_keys"),
])
async def test_a_broken_page_scores_lower_than_its_working_twin(renderer, working, broken):
    task = Task(id="t", category="Game Dev" if "game" in working else "UI Component", prompt="x")
    good = await _explore(renderer, (PAGES / f"{working}.html").read_text(), task)
    bad = await _explore(renderer, (PAGES / f"{broken}.html").read_text(), task)
    assert good.raw > bad.raw, (good.steps, bad.steps)


async def test_typing_is_not_scored_until_its_submit(renderer):
    report = await _explore(renderer, (PAGES / "search_button_ok.html").read_text())
    typing, submit = report.steps[:2]
    assert typing.action == "type [0]; test (no Enter)" and typing.verdict.score is None
    assert submit.target == "#go" and submit.verdict.score == 1
    assert typing.before_jpeg_b64 and len(typing.before_jpeg_b64) < 20_000


MANY_BUTTONS = "<html><body>" + "".join(
    f"<button id='b{i}' onclick=\"document.getElementById('o').textContent='pressed {i}'\">Button {i}</button>"
    for i in range(6)) + "<p id='o'>none</p></body></html>"


@pytest.mark.parametrize("budget", [1, 4])
async def test_the_budget_is_respected(renderer, budget):
    report = await _explore(renderer, MANY_BUTTONS, budget=budget)
    assert len(report.scored) == budget and report.raw == budget
    assert report.stopped == "budget used"


async def test_a_page_that_hangs_on_a_click_scores_zero_without_hanging(renderer):
    html = "<html><body><button id='x' onclick='while(true){}'>Freeze</button></body></html>"
    report = await _explore(renderer, html)
    assert report.raw == 0 and report.stopped == "the page hung"
    assert "hung" in report.steps[-1].verdict.reason


def _evidence(task: Task, status: RenderStatus, html: str = "<html><body>x</body></html>") -> Evidence:
    return Evidence(task, extract_artifact(html), Rendering(status=status, error="scripted"), None)


async def test_channel_without_a_live_page():
    channel = InteractiveChannel()
    crashed = await channel.score(_evidence(UI, RenderStatus.CRASHED))
    assert crashed.status is ChannelStatus.FAILED and crashed.raw == 0.0
    ours = await channel.score(_evidence(UI, RenderStatus.INFRA_ERROR))
    assert ours.status is ChannelStatus.INFRA_ERROR and ours.raw is None


@pytest.mark.parametrize("category, status", [("Data Visualization", ChannelStatus.NOT_APPLICABLE),
                                              ("Game Dev", ChannelStatus.FAILED)])
async def test_nothing_to_interact_with_depends_on_the_category(renderer, category, status):
    html = (PAGES / "static_article.html").read_text()
    task = Task(id="s", category=category, prompt="A page.")
    async with renderer.session(html) as (rendering, live):
        result = await InteractiveChannel().score(Evidence(task, extract_artifact(html), rendering, live))
    assert result.status is status
    assert (result.raw == 0.0) if status is ChannelStatus.FAILED else (result.raw is None)


async def test_channel_in_the_pipeline_records_evidence(pipeline):
    html = (PAGES / "modal_cannot_close.html").read_text()
    record = (await pipeline.score(UI, html)).record
    inter = record.channels["interactive"]
    assert inter.status is ChannelStatus.OK and inter.raw == 1.0 and inter.score == pytest.approx(1 / 3)
    steps = inter.payload["steps"]
    assert [(s["target"], s["verdict"]["score"]) for s in steps[:2]] == [("#open", 1), ("#close", 0)]
    assert all(s["before_jpeg_b64"] and s["after_jpeg_b64"] for s in steps)
    assert len(record.model_dump_json()) < 120_000
    static = record.channels["static"].raw
    assert record.reward == pytest.approx(0.1 * record.channels["execution"].raw + 0.8 * static + 0.1 * 1.0)


ESCAPE_MODAL = """<!doctype html><html><body><button id="open">Show offer</button>
<div id="ov" style="display:none;position:fixed;inset:0;background:#0009"><div style="background:#fff;margin:100px;padding:40px">
<button id="claim">Claim 10% off</button></div></div>
<script>const ov = document.getElementById('ov');
document.getElementById('open').onclick = () => { ov.style.display = 'block'; };
addEventListener('keydown', (e) => { if (e.key === 'Escape') ov.style.display = 'none'; });</script></body></html>"""


async def test_an_overlay_without_a_close_control_is_closed_with_escape(renderer):
    report = await _explore(renderer, ESCAPE_MODAL)
    assert [(s.target, s.verdict.score) for s in report.steps[:2]] == [("#open", 1), ("keys:Escape", 1)]


UNHANDLED_FORM = """<!doctype html><html><body><h1>Contact</h1>
<form><label for="e">Email</label><input id="e" type="email"><button type="submit">Send</button></form></body></html>"""


async def test_a_form_that_reloads_the_page_is_seen_to_reload_every_time(renderer):
    # The submit's navigation starts a task later than the click: measured too early, the
    # step would read "no response" on some runs and "reloaded" on others.
    for _ in range(4):
        report = await _explore(renderer, UNHANDLED_FORM)
        submit = report.steps[-1]
        assert submit.verdict.score == 0 and submit.response.reloaded, submit.verdict.reason
