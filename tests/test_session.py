"""`Renderer.session`: the rendered page stays open for interaction, then is closed."""

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
    import asyncio

    for _ in range(50):
        if page.is_closed():
            return True
        await asyncio.sleep(0.1)
    return False


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
