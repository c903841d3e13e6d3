"""The answer's faults are the answer's: a page whose own scripts throw, or that floods itself
with frames, gets a scored interactive channel (never `infra_error`); our own failures stay masked."""

import asyncio
import contextlib

import pytest

from aesenv.artifact import extract_artifact
from aesenv.interact.models import InteractionReport
from aesenv.rewards import ChannelStatus
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.interactive import InteractiveChannel
from aesenv.tasks import Task

UI = Task(id="ui", category="UI Component", prompt="A widget with a button.")
GAME = Task(id="game", category="Game Dev", prompt="A canvas scene with a pause button.")

# A timer and an animation frame that throw on every tick (an undefined variable, as model pages
# often have), next to a button that works.
THROWING_TIMERS = """<!doctype html><html><body style="margin:0">
<h1 id="title" style="font:32px sans-serif;padding:20px;background:#eee">Solar system</h1>
<button id="toggle" style="font-size:20px;padding:10px 20px">Show orbits</button>
<script>
const title = document.getElementById('title');
document.getElementById('toggle').addEventListener('click', () => {
  title.textContent = 'Orbits shown';
  title.style.background = '#1f6feb';
  title.style.color = '#fff';
});
setInterval(() => { planet.angle += 0.1; }, 50);
requestAnimationFrame(function spin() { requestAnimationFrame(spin); planet.draw(); });
</script></body></html>"""

# A canvas animation loop that passes non-finite numbers to createRadialGradient every frame.
NONFINITE_GRADIENT = """<!doctype html><html><body style="margin:0;background:#111;color:#eee">
<h1 id="state" style="font:28px sans-serif;margin:12px">Running</h1>
<button id="pause" style="font-size:20px;padding:8px 18px">Pause</button>
<canvas id="sky" width="600" height="300"></canvas>
<script>
const ctx = document.getElementById('sky').getContext('2d');
const state = document.getElementById('state');
let radius = 0;
document.getElementById('pause').onclick = () => {
  state.textContent = 'Paused'; state.style.background = '#d29922'; state.style.color = '#000';
};
function frame(t) {
  requestAnimationFrame(frame);
  ctx.fillStyle = '#123'; ctx.fillRect(0, 0, 600, 300);
  const g = ctx.createRadialGradient(300, 150, radius / 0 - Infinity, 300, 150, Math.sqrt(-t));
  g.addColorStop(0, '#fff'); g.addColorStop(1, '#000');
  ctx.fillStyle = g; ctx.fillRect(0, 0, 600, 300);
}
requestAnimationFrame(frame);
</script></body></html>"""

IFRAME_FLOOD = """<!doctype html><html><body>
<button id="b" onclick="document.getElementById('o').textContent = 'pressed'">Press</button><p id="o">idle</p>
<script>for (let i = 0; i < 10000; i++) { const f = document.createElement('iframe'); f.width = 4; f.height = 4;
document.body.appendChild(f); }</script></body></html>"""


async def _interactive(renderer, html: str, task: Task):
    async with renderer.session(html) as (rendering, live):
        result = await InteractiveChannel().score(PageEvidence(task, extract_artifact(html), rendering, live))
    return rendering, result


async def test_a_page_whose_timers_throw_is_scored_and_its_working_button_gets_credit(renderer):
    rendering, result = await _interactive(renderer, THROWING_TIMERS, UI)
    assert result.status is ChannelStatus.OK, result.payload
    steps = {s["target"]: s["verdict"] for s in result.payload["steps"]}
    assert steps["#toggle"]["score"] == 1, steps
    # The page's errors are on the record as the page's, and the render still settled in full.
    assert any("planet is not defined" in e for e in rendering.page_errors), rendering.page_errors
    assert rendering.settled_ms == renderer.config.settle_ms and "settle" not in rendering.error


async def test_a_canvas_loop_with_non_finite_gradient_arguments_is_scored(renderer):
    rendering, result = await _interactive(renderer, NONFINITE_GRADIENT, GAME)
    assert result.status is ChannelStatus.OK, result.payload
    steps = {s["target"]: s["verdict"] for s in result.payload["steps"]}
    assert steps["#pause"]["score"] == 1, steps
    assert any("createRadialGradient" in e for e in rendering.page_errors), rendering.page_errors


@pytest.mark.parametrize("html", [
    # A frame of the page's with no clock (as when a frame flood is stopped mid-set-up).
    "<iframe srcdoc=\"<script>delete globalThis.__pwClock</script>\"></iframe>",
    # A timer that throws a value that is not an Error.
    "<script>setInterval(() => { throw 'boom'; }, 100);</script>",
], ids=["frame-without-clock", "thrown-string"])
async def test_other_failures_of_the_pages_clock_are_the_pages(renderer, html):
    page = f"<html><body><button onclick=\"document.body.style.background='#c33'\">Go</button>{html}</body></html>"
    rendering, result = await _interactive(renderer, page, UI)
    assert result.status is ChannelStatus.OK and result.raw == 1.0, result.payload
    assert rendering.settled_ms == renderer.config.settle_ms and "settle" not in rendering.error


async def test_an_error_the_action_itself_raises_still_scores_zero(renderer):
    # Errors are measured net of the page left alone: the background timer's error repeats while
    # idle and does not count against the button, but a handler that throws does.
    html = THROWING_TIMERS.replace("title.textContent = 'Orbits shown';", "title.textContent = orbits.label;")
    _, result = await _interactive(renderer, html, UI)
    steps = {s["target"]: s["verdict"] for s in result.payload["steps"]}
    assert steps["#toggle"]["score"] == 0 and "orbits is not defined" in steps["#toggle"]["reason"], steps


async def test_a_page_that_breaks_a_builtin_our_scripts_use_is_still_measured(renderer):
    # Our in-page scripts use the built-ins as they were before the page's scripts ran, so a
    # page that breaks one for itself is measured like any other (see aesenv/render/natives.js).
    html = ("<html><body><button onclick=\"this.textContent='done'\">Go</button><script>"
            "Element.prototype.getBoundingClientRect = function () { throw new TypeError('no boxes here'); };"
            "</script></body></html>")
    _, result = await _interactive(renderer, html, UI)
    assert result.status is ChannelStatus.OK and result.raw == 1.0, result.payload


class _BuggyAgent:
    """An agent whose own script is wrong: that is our failure, masked."""

    name, budget = "buggy", 3

    async def explore(self, live, task) -> InteractionReport:
        await live.evaluate("() => { const marks = null; return marks.length; }")
        return InteractionReport(agent=self.name, budget=self.budget)


async def test_our_own_script_failing_stays_an_infra_error(renderer):
    html = "<html><body><button>x</button></body></html>"
    async with renderer.session(html) as (rendering, live):
        result = await InteractiveChannel(agent=_BuggyAgent()).score(
            PageEvidence(UI, extract_artifact(html), rendering, live))
    assert result.status is ChannelStatus.INFRA_ERROR, result.payload


async def test_a_page_with_ten_thousand_iframes_is_never_an_infra_error(pipeline):
    for run in range(5):
        record = (await pipeline.score(UI, IFRAME_FLOOD)).record
        inter = record.channels["interactive"]
        assert record.status == "ok", (run, record.failure)
        assert inter.status in (ChannelStatus.OK, ChannelStatus.FAILED), (run, inter.payload)
        assert inter.raw is not None, (run, inter.payload)


# Every animation frame costs real CPU time (the clock is virtual), so every step is slow.
SLOW_FRAMES = """<!doctype html><html><body><canvas id="c" width="400" height="300"></canvas>
<button id="b" onclick="this.textContent = 'pressed'">Press</button>
<script>const ctx = document.getElementById('c').getContext('2d');
function f() { requestAnimationFrame(f); let s = 0; for (let i = 0; i < 4e7; i++) s += Math.sqrt(i);
  ctx.fillStyle = '#333'; ctx.fillRect(0, 0, 400, 300); }
requestAnimationFrame(f);</script></body></html>"""


async def test_a_page_too_slow_for_the_channel_deadline_fails_its_interactions(renderer):
    from aesenv.rewards import PipelineConfig, RewardPipeline

    p = RewardPipeline(PipelineConfig(channel_timeout_s=4), renderer=renderer)
    try:
        record = (await p.score(UI, SLOW_FRAMES)).record
    finally:
        await p.close_parts()
    inter = record.channels["interactive"]
    assert inter.status is ChannelStatus.FAILED and inter.raw == 0.0, inter.payload
    # 4 s for the channel leaves the page under 3 s in all: less than one call's own deadline.
    assert inter.payload["stopped"] == "the page hung", inter.payload
    assert "used up" in inter.payload["steps"][-1]["verdict"]["reason"], inter.payload
    assert record.status == "ok"


async def test_fault_follows_the_world_the_code_ran_in_never_the_names_it_carries(renderer):
    """A throw in the page's own world is the page's, whatever its stack is named (even after
    Playwright's own frames); a throw in our world is ours; the page going away is neither."""
    from aesenv.render import PageThrew
    from aesenv.render.inpage import WorldScriptError

    html = ("<html><body><p>x</p><script>window.echarts = { getInstanceByDom: function UtilityScript() {"
            " throw new TypeError('at UtilityScript.evaluate (<anonymous>:377:18)'); } };</script></body></html>")
    async with renderer.session(html) as (_, live):
        with pytest.raises(PageThrew, match="UtilityScript"):
            await live.evaluate_in_page("() => window.echarts.getInstanceByDom(document.body)")
        with pytest.raises(PageThrew):  # a thrown primitive that names a closed target is still a throw
            await live.evaluate_in_page("() => { throw 'Target page, context or browser has been closed'; }")
        with pytest.raises(WorldScriptError, match="Cannot read properties of null"):
            await live.evaluate("() => { const marks = null; return marks.length; }")
        assert await live.evaluate("() => typeof window.echarts") == "undefined"  # our world sees none of its globals


async def test_a_page_that_crashes_is_its_failure_not_a_thrown_error(renderer):
    from aesenv.render import PageCrashed

    html = "<html><body><button onclick=\"this.textContent='x'\">Go</button></body></html>"
    async with renderer.session(html) as (rendering, live):
        with contextlib.suppress(Exception):
            await asyncio.wait_for(live.cdp.send("Page.crash"), 1)
        with pytest.raises(PageCrashed):
            await live.advance(100)
        assert live.trace.crashed and not live.page_errors
        result = await InteractiveChannel().score(PageEvidence(UI, extract_artifact(html), rendering, live))
    assert result.status is ChannelStatus.FAILED and result.raw == 0.0, result.payload
    assert "crashed" in result.payload["steps"][-1]["verdict"]["reason"], result.payload
