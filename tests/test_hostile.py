"""Hostile pages: each finishes with an honest status (its stage deadlines end the slow ones), and the browser
and the pool survive (a normal page renders right after each)."""

import asyncio

import pytest

from aesenv.render import RenderStatus

NORMAL = "<html><body><h1 id='ok'>still alive</h1></body></html>"

HOSTILE = {
    "inline_loop": ("<html><body><h1>spin</h1><script>while (true) {}</script></body></html>",
                    {RenderStatus.TIMEOUT}),
    "timer_loop": ("<html><body><h1>later</h1><script>setTimeout(() => { while (true) {} }, 50)</script></body></html>",
                   {RenderStatus.TIMEOUT}),
    "interval_flood": ("<html><body><p id='n'>0</p><script>let n = 0; setInterval(() => { n++; "
                       "document.getElementById('n').textContent = n; }, 0)</script></body></html>",
                       {RenderStatus.OK, RenderStatus.TIMEOUT}),
    "raf_flood": ("<html><body><p id='n'>0</p><script>let n = 0; (function f() { n++; "
                  "document.getElementById('n').textContent = n; requestAnimationFrame(f); })()</script></body></html>",
                  {RenderStatus.OK}),
    "alert_storm": ("<html><body><h1>dialogs</h1><script>for (let i = 0; i < 200; i++) { alert(i); confirm('c'); "
                    "prompt('p'); }</script></body></html>", {RenderStatus.OK, RenderStatus.TIMEOUT}),
    "endless_alerts": ("<html><body><h1>dialogs</h1><script>while (true) alert('again');</script></body></html>",
                       {RenderStatus.TIMEOUT}),
    "window_open": ("<html><body><h1>popups</h1><script>for (let i = 0; i < 50; i++) "
                    "window.open('https://example.org/' + i);</script></body></html>", {RenderStatus.OK}),
    "navigate_away": ("<html><body><h1 id='stay'>the artifact</h1><script>location.href = "
                      "'https://example.org/phish';</script></body></html>", {RenderStatus.OK}),
    "document_write_flood": ("<html><body><script>for (let i = 0; i < 200000; i++) "
                             "document.write('<p>flood ' + i + '</p>');</script></body></html>",
                             {RenderStatus.OK, RenderStatus.TIMEOUT}),
    "js_heap_bomb": ("<html><body><h1>heap</h1><script>const a = []; while (true) a.push(new Array(1e6).fill(1));"
                     "</script></body></html>", {RenderStatus.CRASHED, RenderStatus.TIMEOUT, RenderStatus.OK}),
    "arraybuffer_bomb": ("<html><body><h1>buffers</h1><script>const k = []; for (let i = 0; i < 80; i++) "
                         "{ const b = new Uint8Array(100 * 1024 * 1024); b.fill(1); k.push(b); }</script></body></html>",
                         {RenderStatus.CRASHED, RenderStatus.TIMEOUT}),
    "huge_dom": ("<html><body><div id='root'></div><script>const r = document.getElementById('root'); "
                 "for (let i = 0; i < 100000; i++) { const d = document.createElement('span'); "
                 "d.textContent = i + ' '; r.appendChild(d); }</script></body></html>", {RenderStatus.OK, RenderStatus.TIMEOUT}),
    "file_probe": ("<html><body><iframe src='file:///etc/passwd'></iframe><a id='l' href='file:///etc/passwd'>x</a>"
                   "<pre id='out'></pre><script>fetch('file:///etc/passwd').then(r => r.text()).then(t => "
                   "document.getElementById('out').textContent = t).catch(e => "
                   "document.getElementById('out').textContent = 'denied'); document.getElementById('l').click();"
                   "</script></body></html>", {RenderStatus.OK}),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_page_finishes_honestly_and_browser_survives(renderer, name):
    """Each page ends in an allowed status and the browser renders the next page. The stage
    deadlines end the slow ones (how close to them is `aesenv bench deadlines`' to measure); the
    wait_for is a hang guard, ten times the whole render budget."""
    html, allowed = HOSTILE[name]
    r = await asyncio.wait_for(renderer.render(html), 10 * renderer.config.total_timeout_s)
    assert r.status in allowed, (name, r.status, r.error)
    assert r.status is not RenderStatus.INFRA_ERROR
    if r.status is not RenderStatus.OK:
        assert r.error
    text = r.metrics.visible_text + " ".join(e.text for e in r.elements)
    assert "root:x:0:0" not in text
    after = await renderer.render(NORMAL)
    assert after.status is RenderStatus.OK and any(e.id == "ok" for e in after.elements), after.error


async def test_popups_are_counted_not_opened(renderer):
    r = await renderer.render(HOSTILE["window_open"][0])
    assert r.status is RenderStatus.OK and not r.error
    assert r.metrics.popups_blocked == 50 and r.summary()["popups_blocked"] == 50


async def test_navigation_away_keeps_the_artifact_and_logs_it(renderer):
    r = await renderer.render(HOSTILE["navigate_away"][0])
    assert any(e.id == "stay" for e in r.elements)
    blocked = [q for q in r.requests if q.url.startswith("https://example.org/phish")]
    assert blocked and blocked[0].detail == "top-level navigation away"


async def test_memory_bomb_is_killed_by_the_watchdog_not_the_host(renderer):
    r = await renderer.render(HOSTILE["arraybuffer_bomb"][0])
    assert r.status in (RenderStatus.CRASHED, RenderStatus.TIMEOUT)
    if r.status is RenderStatus.CRASHED:
        assert "crashed" in r.error
