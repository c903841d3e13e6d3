"""Interaction agents: labeling, the action grammar, the offline explorer, the interactive channel."""

from pathlib import Path

import pytest

from aesenv.artifact import extract_artifact
from aesenv.interact import Action, MarkKind, OfflineExplorer, draw_marks, label
from aesenv.render import RenderStatus
from aesenv.render.models import Rendering
from aesenv.rewards import ChannelStatus
from aesenv.channels import Evidence
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.interactive import InteractiveChannel
from aesenv.tasks import Task

PAGES = Path(__file__).resolve().parents[1] / "benchmarks" / "interactions" / "pages"
UI = Task(id="ui", category="UI Component", prompt="An interactive widget.")

LABELING_PAGE = """<!doctype html><html><body>
<span id="plain-listener">only addEventListener</span>
<div id="decor">not interactive</div>
<form><input id="q" placeholder="Search"><button id="send">Send</button></form>
<a id="away" href="https://example.com/">elsewhere</a>
<canvas id="game" width="300" height="150"></canvas>
<canvas id="blank" width="300" height="150"></canvas>
<script>
const ink = document.getElementById('game').getContext('2d');
ink.fillStyle = '#234'; ink.fillRect(20, 20, 260, 110); ink.fillStyle = '#fff'; ink.fillText('Press a key to start', 90, 80);
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
    assert "#blank" not in by_path  # a canvas that draws nothing shows no one a place to click
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
    return PageEvidence(task, extract_artifact(html), Rendering(status=status, error="scripted"), None)


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
        result = await InteractiveChannel().score(PageEvidence(task, extract_artifact(html), rendering, live))
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


# The explorer's shortcuts (issue 22): they skip work only where skipping cannot change what is measured.
STILL_PAGE = """<!doctype html><html><body style="margin:40px">
<button id="dead" style="padding:12px">Does nothing</button>
<button id="other" style="padding:12px">Nothing either</button>
<button id="live" style="padding:12px" onclick="document.getElementById('out').textContent = 'Clicked!'">Works</button>
<p id="out" style="font-size:32px"></p></body></html>"""
TICKING_PAGE = """<!doctype html><html><body style="margin:40px">
<button id="dead" style="padding:12px">Does nothing</button>
<p id="clock" style="font-size:48px">0</p>
<script>let n = 0; setInterval(() => { document.getElementById('clock').textContent = String(++n); }, 200);</script>
</body></html>"""
SPINNING_PAGE = """<!doctype html><html><body style="margin:40px">
<button id="spin" style="padding:12px">Spin</button> <button id="dead" style="padding:12px">Does nothing</button>
<div id="spinner" style="width:120px;height:120px;margin:40px;background:#0f766e"></div>
<script>document.getElementById('spin').addEventListener('click', () => document.getElementById('spinner')
  .animate([{ transform: 'rotate(0deg)' }, { transform: 'rotate(360deg)' }], { duration: 1000, iterations: Infinity }));
</script></body></html>"""


class _Counting:
    """Counts the live page's screenshots and the labeler's passes."""

    def __init__(self, monkeypatch, live):
        from aesenv.interact import explorer
        self.shots = 0
        self.labels = 0
        shoot, relabel = live.screenshot, explorer.label

        async def screenshot(*args, **kwargs):
            self.shots += 1
            return await shoot(*args, **kwargs)

        async def counted_label(*args, **kwargs):
            self.labels += 1
            return await relabel(*args, **kwargs)

        monkeypatch.setattr(live, "screenshot", screenshot)
        monkeypatch.setattr(explorer, "label", counted_label)


async def _click(live, path):
    from aesenv.interact.acting import Actor
    labeling = await label(live)
    actor = Actor(live)
    await actor.start()
    mark = next(m for m in labeling.marks if m.path == path)
    return await actor.run(Action(kind="click", mark=mark.index), labeling)


async def test_a_still_page_is_measured_without_an_idle_screenshot(renderer, monkeypatch):
    async with renderer.session(STILL_PAGE) as (_, live):
        counting = _Counting(monkeypatch, live)
        dead = await _click(live, "#dead")
        assert counting.shots == 2  # before and after: the idle window changed nothing, so no picture of it
        working = await _click(live, "#live")
    assert dead.response.idle_changed_px == 0 and not dead.response.responded
    assert dead.after is dead.before  # not one pixel changed: one frame serves both (and is never decoded)
    assert working.response.responded and working.response.changed_px > 100 and working.after is not working.before


async def test_a_page_that_changes_by_itself_gets_its_idle_measured_over_a_second_window(renderer, monkeypatch):
    async with renderer.session(TICKING_PAGE) as (_, live):
        counting = _Counting(monkeypatch, live)
        measured = await _click(live, "#dead")
        assert counting.shots == 3  # the first window showed DOM changes: a second one is pictured
    response = measured.response
    assert response.idle_mutations > 0 and response.idle_changed_px > 0
    assert response.mutations == 0  # the clock's node changed while idle too: not the button's doing
    assert not response.responded


async def test_a_running_animation_is_pictured_from_the_start_of_the_idle_window(renderer, monkeypatch):
    async with renderer.session(SPINNING_PAGE) as (_, live):
        await _click(live, "#spin")
        counting = _Counting(monkeypatch, live)
        measured = await _click(live, "#dead")
        assert counting.shots == 3  # the page was moving when the window opened: it is pictured then
    # An animation changes no DOM and is caught anyway.
    assert measured.response.idle_mutations == 0 and measured.response.idle_changed_px > 0


async def test_the_page_is_relabeled_only_after_an_interaction_changed_it(renderer, monkeypatch):
    async with renderer.session(STILL_PAGE) as (_, live):
        counting = _Counting(monkeypatch, live)
        report = await OfflineExplorer(budget=3).explore(live, UI)
    tried = [s.target for s in report.steps]
    assert set(tried) == {"#dead", "#other", "#live"}
    # One pass before the first interaction, and one after the only one that changed the DOM unless
    # it was the last: the dead buttons leave the labels as they were, and a used budget needs none.
    assert counting.labels == 1 + (tried[-1] != "#live")
    assert [s.verdict.score for s in report.steps if s.target == "#live"] == [1]


def _form(gap_px: int, works: bool) -> str:
    """The confirmation shows under the submit, where a user who clicked it looks (one at the top of
    a tall page, out of view, is no response anyone sees)."""
    handler = "document.getElementById('out').textContent = 'Thanks, ' + document.getElementById('n').value;" if works else ""
    return f"""<!doctype html><html><body style="margin:40px"><h1>Contact</h1>
<form onsubmit="event.preventDefault(); {handler}">
<input id="n" placeholder="Name"><div style="height:{gap_px}px"></div>
<input id="m" type="email" placeholder="Email"><div style="height:{gap_px}px"></div>
<button id="send" type="submit">Send</button></form><p id="out">Write to us.</p></body></html>"""


@pytest.mark.parametrize("works", [True, False])
async def test_a_form_in_one_view_is_measured_once_and_a_taller_one_field_by_field(renderer, works):
    short, tall = await _explore(renderer, _form(20, works)), await _explore(renderer, _form(1400, works))
    for report, reason in ((short, "measured together with the submit"), (tall, "the submit is still to come")):
        typed, submit = report.steps[:2], report.steps[2]
        assert [s.verdict.reason for s in typed] == [f"typed; {reason}"] * 2, report.steps
        assert submit.target == "#send" and submit.verdict.score == (1 if works else 0), submit.verdict
    assert not short.steps[0].response and short.steps[0].before_jpeg_b64  # one measurement, on the submit


def _png(rows: bytes, width: int, height: int) -> bytes:
    """An 8-bit RGB PNG of already filtered rows (each starting with its filter byte)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def _decoded(png: bytes):
    import io

    import numpy as np
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_the_fast_png_decoder_gives_the_pixels_any_decoder_gives():
    import io

    import numpy as np
    from PIL import Image

    from aesenv.interact.acting import Frame
    from aesenv.render.models import png_rgb
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (37, 23, 3), dtype=np.uint8)
    flat = pixels.reshape(37, 69)
    up = np.vstack([flat[:1], flat[1:] - flat[:-1]])  # uint8: mod 256, as the Up filter writes it
    for filtered, kind in ((up, 2), (flat, 0)):
        png = _png(np.hstack([np.full((37, 1), kind, np.uint8), filtered]).tobytes(), 23, 37)
        assert (_decoded(png) == pixels).all()  # the test's PNG is a valid one
        assert (png_rgb(png) == pixels).all() and (Frame(png).pixels == pixels).all()
    # Other PNGs (Pillow's adaptive filters, an alpha channel) are decoded in full, to the same pixels.
    for mode in ("RGB", "RGBA"):
        out = io.BytesIO()
        Image.fromarray(pixels).convert(mode).save(out, "PNG")
        assert png_rgb(out.getvalue()) is None and (Frame(out.getvalue()).pixels == pixels).all()


async def test_a_live_screenshot_decodes_fast_to_the_same_pixels(renderer):
    from aesenv.interact.acting import Frame
    from aesenv.render.models import png_rgb
    async with renderer.session(STILL_PAGE) as (_, live):
        png = await live.screenshot()
    fast = png_rgb(png)
    assert fast is not None and fast.shape == (*Frame(png).shape, 3)  # Chromium's fast PNGs take the fast way
    assert (fast == _decoded(png)).all() and (Frame(png).image.tobytes() == _decoded(png).tobytes())
