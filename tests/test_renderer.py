import asyncio
import io

import pytest
from PIL import Image

from aesenv.render import ORIGIN, RenderStatus, RequestOutcome

PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><title>Shop</title>
<link rel="stylesheet" href="https://fonts.example-cdn.com/inter.css" />
<style>body{margin:0;font-family:sans-serif;background:#0f172a;color:#f8fafc} .tall{height:3000px}</style></head>
<body><h1 id="t">Bakery</h1><p>Fresh bread</p><img src="logo.png" alt="logo" /><div class="tall"></div>
<script>console.error("from page"); document.getElementById("t").dataset.origin = location.origin;</script></body></html>"""


async def test_page_is_served_from_virtual_origin_and_foreign_requests_are_blocked(renderer):
    r = await renderer.render(PAGE)
    assert r.status is RenderStatus.OK, r.error
    outcomes = {req.url: req.outcome for req in r.requests}
    assert outcomes[f"{ORIGIN}/index.html"] is RequestOutcome.SERVED
    assert outcomes["https://fonts.example-cdn.com/inter.css"] is RequestOutcome.BLOCKED
    assert outcomes[f"{ORIGIN}/logo.png"] is RequestOutcome.MISSING
    assert any(c.text == "from page" for c in r.console)


async def test_outputs_screenshots_dom_and_timings(renderer):
    r = await renderer.render(PAGE)
    view = Image.open(io.BytesIO(r.viewport_png))
    full = Image.open(io.BytesIO(r.full_page_png))
    assert view.size == (1280, 960)
    assert full.width == 1280 and full.height > 3000
    assert view.getpixel((640, 900))[:3] == (15, 23, 42)  # the page's own background
    h1 = next(e for e in r.elements if e.tag == "h1")
    assert h1.text == "Bakery" and h1.color == "rgb(248, 250, 252)" and h1.font_size > 20
    assert r.metrics.title == "Shop" and r.metrics.lang == "en"
    assert {"navigate", "settle", "snapshot", "screenshot", "mobile_probe"} <= set(r.timings_ms)
    assert r.provenance["browser_version"]


async def test_full_page_height_is_capped(renderer):
    tall = "<html><body style='margin:0'><div style='height:30000px;background:linear-gradient(red,blue)'></div></body></html>"
    r = await renderer.render(tall)
    full = Image.open(io.BytesIO(r.full_page_png))
    assert r.height_capped and full.height == renderer.config.max_full_page_height
    assert r.metrics.doc_height >= 30000


RESIZING_CANVAS = """<html><body style="margin:0;background:#000">
<canvas id="c"></canvas><div style="height:1200px"></div><script>
const c = document.getElementById("c"), g = c.getContext("2d");
function size() { c.width = innerWidth; c.height = 600; }
function draw() { g.fillStyle = "#e11d48"; g.fillRect(100, 100, 400, 300); requestAnimationFrame(draw); }
%s size(); draw();
</script></body></html>"""


@pytest.mark.parametrize("listen", ["addEventListener('resize', size);", "window.onresize = size;"])
async def test_a_canvas_reset_on_resize_keeps_its_frame_in_the_full_page_capture(renderer, listen):
    # The capture of a page taller than the screen resizes the view; the page's handler would
    # clear the canvas (setting its width), and the frozen clock would never redraw it.
    r = await renderer.render(RESIZING_CANVAS % listen)
    full = Image.open(io.BytesIO(r.full_page_png)).convert("RGB")
    assert full.height > 960 and full.getpixel((300, 250)) == (225, 29, 72)
    assert r.mobile is not None and r.mobile.width < 1280  # the phone probe still ran the page's handlers


FOLLOWS_THE_WINDOW = """<html><body style="margin:0"><canvas id="c" height="200"></canvas><script>
const c = document.getElementById("c");
function size() { c.width = innerWidth; }
%s size();
</script></body></html>"""


@pytest.mark.parametrize("listen", ["addEventListener('resize', size);", "window.onresize = size;"])
async def test_the_mobile_probe_measures_after_the_page_handled_its_resize(renderer, listen):
    # A canvas sized to the window by the page's resize handler: the phone probe used to race that
    # handler (1 render in 8 measured the desktop-wide canvas). It now waits for the dispatch.
    widths = [(await renderer.render(FOLLOWS_THE_WINDOW % listen)).mobile.doc_width for _ in range(6)]
    assert widths == [renderer.config.mobile_width] * 6


async def test_infinite_loop_is_cut_off_within_deadline(renderer):
    r = await renderer.render("<html><body><h1>spin</h1><script>while (true) {}</script></body></html>")
    assert r.status is RenderStatus.TIMEOUT
    assert "navigate" in r.stages_timed_out
    assert r.timings_ms["navigate"] < (renderer.config.navigation_timeout_s + 2) * 1000
    after = await renderer.render(PAGE)  # the browser survives
    assert after.status is RenderStatus.OK


async def test_file_urls_never_reach_the_page(renderer):
    page = """<html><body><iframe src="file:///etc/passwd" width="600" height="300"></iframe>
    <pre id="out"></pre><script>fetch("file:///etc/passwd").then(r => r.text())
      .then(t => document.getElementById("out").textContent = t).catch(e => {});</script></body></html>"""
    r = await renderer.render(page)
    assert "root:" not in r.metrics.visible_text
    assert all("root:x:0" not in e.text for e in r.elements)


async def test_contexts_are_isolated_between_renders(renderer):
    await renderer.render("<html><body><script>localStorage.setItem('k', 'leak'); window.name = 'leak';</script></body></html>")
    r = await renderer.render("<html><body><p id='p'></p><script>document.getElementById('p').textContent ="
                              " 'value:' + localStorage.getItem('k') + ':' + window.name;</script></body></html>")
    p = next(e for e in r.elements if e.tag == "p")
    assert p.text == "value:null:"


async def test_dialogs_are_dismissed_not_hanging(renderer):
    r = await renderer.render("<html><body><p>x</p><script>for (let i = 0; i < 5; i++) alert(i); confirm('?');</script></body></html>")
    assert r.status is RenderStatus.OK
    assert r.dialogs == 6


async def test_mobile_probe_reports_overflow(renderer):
    r = await renderer.render("<html><body><div style='width:1200px;height:50px;background:#ccc'>wide</div></body></html>")
    assert r.mobile is not None
    assert r.mobile.doc_width > 390 and r.mobile.overflowing_elements >= 1


async def test_modern_color_spaces_are_reported_as_srgb(renderer):
    r = await renderer.render("<html><body style='background: oklch(0.98 0.01 250)'>"
                              "<p style='color: oklch(0.55 0.22 263)'>tailwind v4 blue</p></body></html>")
    p = next(e for e in r.elements if e.tag == "p")
    assert p.color.startswith("rgb(") and p.background.startswith("rgb(")
    red, green, blue = (int(v) for v in p.color[4:-1].split(","))
    assert blue > 200 and red < 80


async def test_formats_tiles_and_coverage_for_tall_pages(renderer):
    tall = "<html><body style='margin:0'><div style='height:20000px;background:linear-gradient(red,blue)'></div></body></html>"
    r = await renderer.render(tall)
    assert r.coverage == pytest.approx(8000 / r.metrics.doc_height, abs=1e-3)
    assert r.summary()["coverage"] == r.coverage
    jpeg = r.image("jpeg", quality=70, max_height=2000)
    assert jpeg[:3] == b"\xff\xd8\xff" and Image.open(io.BytesIO(jpeg)).size == (1280, 2000)
    assert r.image("webp")[8:12] == b"WEBP"
    tiles = r.tiles()
    assert len(tiles) == 9 and Image.open(io.BytesIO(tiles[0])).size == (1280, 960)
    assert Image.open(io.BytesIO(tiles[-1])).size == (1280, 8000 - 8 * 960)


async def test_online_mode_lets_requests_through_and_logs_them():
    from aesenv.render import RenderConfig, Renderer, RequestOutcome

    async with Renderer(RenderConfig(online=True, navigation_timeout_s=5), resolvers=[]) as r:
        rendering = await r.render("<html><body><img src='http://127.0.0.1:9/x.png' alt='' /></body></html>")
    outcomes = {q.url: q.outcome for q in rendering.requests}
    assert outcomes["http://127.0.0.1:9/x.png"] is RequestOutcome.NETWORK


async def test_our_page_scripts_run_in_our_world_with_their_natives_installed_once_per_document(renderer):
    from aesenv.render.inpage import NATIVES_JS, World, in_page

    script = in_page("(N, x) => ({ sum: x + 1, tag: N.tag(N.body(N.document)) })")
    assert NATIVES_JS not in script  # 12 KB of source not sent on every call: the world keeps it
    async with renderer.session("<body><p>kept</p></body>") as (_, live):
        assert await live.ask(script, 1) == {"sum": 2, "tag": "BODY"}
    context = await renderer._browser.new_context()
    try:
        bare = await context.new_page()  # no prelude, and a page that claims our key for itself
        await bare.set_content("<body><p>bare</p><script>window.__aesenv__ = {reply: () => '\"forged\"'};</script></body>")
        world = World(await context.new_cdp_session(bare))
        assert await world.ask(script, 41) == {"sum": 42, "tag": "BODY"}
        await bare.goto("data:text/html,<body><p>again</p></body>")  # a new document: a new world on the next call
        with pytest.raises(Exception, match="Cannot find context"):
            await world.ask(script, 1)
        assert await world.ask(script, 2) == {"sum": 3, "tag": "BODY"}
    finally:
        await context.close()


async def test_the_next_render_s_page_is_prepared_after_this_render_not_during_it():
    # Preparing the replacement page (a context, its scripts, a page) takes the browser's main
    # thread; made while a render navigates, it slowed that render. It is made once the render is done.
    from aesenv.render import RenderConfig, Renderer

    async with Renderer(RenderConfig(warm_pages=1, concurrency=1)) as r:
        await r.start()
        while len(r._warm) < 1:  # the warm set is filled at start, in the background
            await asyncio.sleep(0.05)
        events: list[str] = []
        prepare, capture = r._prepared_page, r._capture

        async def prepared_page(seed):
            events.append("prepare")
            return await prepare(seed)

        async def capturing(*args):
            events.append("capture")
            try:
                return await capture(*args)
            finally:
                events.append("captured")

        r._prepared_page, r._capture = prepared_page, capturing
        rendering = await r.render(PAGE)
        assert rendering.status is RenderStatus.OK, rendering.error
        assert events[:2] == ["capture", "captured"], events  # took the warm page; none made meanwhile
        for _ in range(200):
            if len(r._warm) == 1:
                break
            await asyncio.sleep(0.05)
        assert events == ["capture", "captured", "prepare"] and len(r._warm) == 1
