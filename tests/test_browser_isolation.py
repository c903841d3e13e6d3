"""No packet leaves the browser whatever a page does, and the browser does not run as root.

Listeners on 127.0.0.1 stand where an attacker's STUN/TURN server, a preconnect target or a fetch
target would be: with the browser isolated they receive nothing; with isolation turned off the
same page reaches them (so the test can fail). Neither waits a fixed time: the isolated page says
when its attempts have settled (its offer set, so ICE gathering has begun; its fetch and WebSocket
failed), and the unisolated one is waited for until a listener hears from it. (In a namespace
without interfaces ICE gathering never completes: there is no interface to gather on.)

Without root or util-linux the module skips with the reason (under CI, a failure).
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from aesenv.render import RenderConfig, Renderer, RenderStatus
from aesenv.render.browser import BROWSER_UID, _isolation_possible
from aesenv.render.watchdog import descendants

pytestmark = pytest.mark.skipif(not _isolation_possible()[0], reason=_isolation_possible()[2] or "isolation possible")
HANG_GUARD_S = 60.0  # a wait for the page or a listener; it answers within about a second here


def _listeners():
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    for s in (udp, tcp):
        s.setblocking(False)
    return udp, tcp


def _received(udp, tcp) -> list[str]:
    got = []
    try:
        got.append(f"udp {udp.recvfrom(2048)[0][:20]!r}")
    except BlockingIOError:
        pass
    try:
        conn, peer = tcp.accept()
        got.append(f"tcp from {peer}")
        conn.close()
    except BlockingIOError:
        pass
    return got


async def _until(condition, what: str):
    """Poll `condition` (a coroutine function) until it returns something truthy; a hang guard, not a timing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_GUARD_S
    while not (value := await condition()):
        assert loop.time() < deadline, f"{what}: nothing after {HANG_GUARD_S}s"
        await asyncio.sleep(0.05)
    return value


def _leaky_page(udp_port: int, tcp_port: int) -> str:
    return f"""<!DOCTYPE html><html><head>
<link rel="preconnect" href="http://127.0.0.1:{tcp_port}">
<link rel="dns-prefetch" href="//tracker.example.org">
</head><body><h1>leak</h1><script>
const pc = new RTCPeerConnection({{iceServers: [
  {{urls: 'stun:127.0.0.1:{udp_port}'}},
  {{urls: 'turn:127.0.0.1:{tcp_port}?transport=tcp', username: 'u', credential: 'p'}}]}});
pc.createDataChannel('c');
navigator.sendBeacon('http://127.0.0.1:{tcp_port}/b', 'x');
const socket = new WebSocket('ws://127.0.0.1:{tcp_port}/ws');
Promise.allSettled([
  pc.createOffer().then(o => pc.setLocalDescription(o)),
  fetch('http://127.0.0.1:{tcp_port}/beacon'),
  new Promise(done => {{ socket.onclose = done; socket.onerror = done; }}),
]).then(() => {{ document.title = 'attempts-settled'; }});
</script></body></html>"""


async def _render_and_listen(config: RenderConfig) -> tuple[list[str], str]:
    """What the listeners heard from the leaky page: isolated, once the page's attempts have
    settled; unisolated, as soon as a listener hears anything."""
    udp, tcp = _listeners()
    heard: list[str] = []

    async def anything_heard() -> list[str]:
        heard.extend(_received(udp, tcp))
        return heard

    async def attempts_settled() -> bool:
        return await live.page.title() == "attempts-settled"

    try:
        async with Renderer(config) as r:
            async with r.session(_leaky_page(udp.getsockname()[1], tcp.getsockname()[1])) as (rendering, live):
                assert rendering.status is RenderStatus.OK, rendering.error
                if config.isolate_browser:
                    await _until(attempts_settled, "the isolated page's attempts")
                    await anything_heard()
                else:
                    await _until(anything_heard, "the unisolated page reaching a listener")
        return heard, rendering.provenance["browser_isolation"]
    finally:
        udp.close()
        tcp.close()


async def test_no_packet_leaves_the_isolated_browser():
    received, isolation = await _render_and_listen(RenderConfig())
    assert received == []
    assert isolation.startswith("network namespace without interfaces")


async def test_without_isolation_the_same_page_reaches_the_listeners():
    received, isolation = await _render_and_listen(RenderConfig(isolate_browser=False))
    assert received, "the leak probe must be able to fail: unisolated, WebRTC/preconnect/fetch reach 127.0.0.1"
    assert isolation.startswith("none")


async def test_browser_processes_run_unprivileged_in_their_own_network_namespace(renderer):
    await renderer.render("<html><body><p>who am I</p></body></html>")
    ours = os.readlink("/proc/self/ns/net")
    browsers = []
    for pid in descendants(os.getpid()):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
            status = Path(f"/proc/{pid}/status").read_text()
            netns = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if "chrom" in exe or "headless_shell" in exe:
            uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            browsers.append((pid, uid, netns, argv))
    assert browsers, "no browser process found under this test process"
    assert all(uid == BROWSER_UID for _, uid, _, _ in browsers), browsers
    assert all(netns != ours for _, _, netns, _ in browsers), browsers
    # Chromium's own sandbox is on where user namespaces allow it: Playwright then leaves out
    # --no-sandbox, and the record says which it was
    _, sandbox_possible, why = _isolation_possible()
    no_sandbox = [pid for pid, _, _, argv in browsers if "--no-sandbox" in argv]
    if sandbox_possible:
        assert renderer.provenance["browser_isolation"] == (
            f"network namespace without interfaces, uid {BROWSER_UID}, chromium sandbox on")
        assert no_sandbox == [], no_sandbox
    else:
        assert renderer.provenance["browser_isolation"] == (
            f"network namespace without interfaces, uid {BROWSER_UID}, chromium sandbox off ({why})")
        assert no_sandbox, "without Chromium's sandbox the browser must have been started with --no-sandbox"


async def test_vendored_libraries_still_load_in_the_isolated_browser(renderer):
    page = ("<html><head><script src='https://cdn.jsdelivr.net/npm/chart.js'></script></head><body>"
            "<p id='v'></p><script>document.getElementById('v').textContent = typeof Chart;</script></body></html>")
    rendering = await renderer.render(page)
    assert rendering.status is RenderStatus.OK
    assert "function" in rendering.metrics.visible_text
