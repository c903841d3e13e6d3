"""`Renderer.session`: the rendered page stays open for interaction, then is closed."""

import asyncio

import pytest

from aesenv.render import PageStalled, RenderStatus

BUTTON_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>
<button id="b" onclick="setTimeout(() => document.getElementById('out').textContent = 'done', 300)">Go</button>
<p id="out">waiting</p></body></html>"""


async def test_session_keeps_the_page_open_with_its_clock_paused(renderer):
    async with renderer.session(BUTTON_PAGE) as (rendering, live):
        assert rendering.status is RenderStatus.OK and rendering.has_screenshot
        assert live is not None
        assert await live.evaluate("() => innerWidth") == renderer.config.viewport_width
        await live.bounded(live.page.click("#b"))
        # The handler's timer runs on the page's virtual clock: nothing happens until time advances.
        assert await live.evaluate("() => document.getElementById('out').textContent") == "waiting"
        await live.advance(400)
        assert await live.evaluate("() => document.getElementById('out').textContent") == "done"
        shot = await live.screenshot("jpeg")
        assert shot[:3] == b"\xff\xd8\xff"
        page = live.page
    assert page.is_closed() or page.context.pages == [] or await _closed_soon(page)


async def _closed_soon(page) -> bool:
    """Wait for the page to close; 60 s is a hang guard (it closes within a second here)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while not page.is_closed():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_a_page_that_hangs_on_an_action_is_stopped_not_waited_for(renderer):
    html = "<html><body><button onclick='while(true){}'>x</button></body></html>"
    async with renderer.session(html) as (_, live):
        with pytest.raises(PageStalled):
            await live.bounded(live.page.evaluate("() => document.querySelector('button').click()"), 1.0)
        assert await live.alive()


async def test_session_render_matches_a_plain_render(renderer):
    plain = await renderer.render(BUTTON_PAGE)
    async with renderer.session(BUTTON_PAGE) as (rendering, _):
        assert rendering.full_page_png == plain.full_page_png


LEAVING_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>
<form><input id="q" name="q" value="typed"><button id="send">Send</button></form>
<button id="reload" onclick="location.reload()">Reload</button>
<button id="away" onclick="location.href = 'https://example.com/'">Leave</button>
<button id="stay" onclick="document.getElementById('q').value = 'changed'">Stay</button></body></html>"""


@pytest.mark.parametrize("control, url_after, value_after", [
    ("#send", "/index.html?q=typed", "typed"),   # a form without a handler submits and reloads
    ("#reload", "/index.html", "typed"),
    ("#away", "/index.html", "typed"),           # held back: the artifact stays on screen
    ("#stay", "/index.html", "changed"),
])
async def test_an_action_that_leaves_the_page_ends_on_the_loaded_document(renderer, control, url_after, value_after):
    async with renderer.session(LEAVING_PAGE) as (_, live):
        await live.evaluate("() => { window.marker = 1; }")
        start = asyncio.get_running_loop().time()
        async with live.settles_navigation():
            await live.bounded(live.page.click(control))
        assert asyncio.get_running_loop().time() - start < 3  # no wait for a navigation that never comes
        state = await live.evaluate("() => [location.pathname + location.search, window.marker === 1, "
                                    "document.getElementById('q').value]")
        assert state == [url_after, control in ("#away", "#stay"), value_after]
        assert await live.evaluate("() => document.readyState") == "complete"
        start = asyncio.get_running_loop().time()
        async with live.settles_navigation():  # the next action does not wait on this one's navigation
            await live.bounded(live.page.click("#stay"))
        assert asyncio.get_running_loop().time() - start < 3


async def test_a_timer_that_reloads_the_page_does_not_break_calls_on_it(renderer):
    html = ("<html><body><p>x</p><script>sessionStorage.loads = Number(sessionStorage.loads || 0) + 1;"
            "setTimeout(() => location.reload(), 100)</script></body></html>")
    async with renderer.session(html) as (_, live):
        for _ in range(5):
            await live.advance(150)
            assert await live.evaluate("() => document.querySelector('p').textContent") == "x"
        assert int(await live.evaluate("() => sessionStorage.loads")) > 1
