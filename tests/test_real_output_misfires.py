"""Misfires found by replaying real model-written pages through the default pipeline, one test
each: what a page's markup or scripts do is the page's business and never breaks our in-page
scripts (a form field named `id`, a global `class Map`, a patched prototype); the page's own
exceptions are the page's failure, scored, never `infra_error`; a heavy WebGL scene that is just
slow to draw under software GL is still captured."""

import asyncio

import pytest

from aesenv.artifact import extract_artifact
from aesenv.render import RenderConfig, Renderer
from aesenv.rewards import ChannelStatus
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.interactive import InteractiveChannel
from aesenv.tasks import Task

WEBSITE = Task(id="contact", category="Website", prompt="A contact page for a design studio.")
UI = Task(id="ui", category="UI Component", prompt="A widget with a button.")
GAME = Task(id="game", category="Game Dev", prompt="A canvas game with a start button.")

# A contact form as models write them: fields named after what they hold, some of which are
# also properties of a <form> element, which the form then returns in their place.
CONTACT = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Studio Nord — Contact</title>
<style>body{font-family:sans-serif;margin:0;background:#f6f4ef;color:#222}
header{padding:24px 48px;background:#1d3557;color:#fff}main{max-width:720px;margin:40px auto;padding:0 24px}
label{display:block;margin:14px 0 4px;font-weight:600}input,textarea{width:100%;padding:10px;font-size:16px}
button{margin-top:18px;padding:12px 28px;background:#e63946;color:#fff;border:0;font-size:16px}
#thanks{display:none;margin-top:20px;padding:16px;background:#a8dadc}</style></head><body>
<header><h1>Studio Nord</h1><p>Brand identity and product design, Copenhagen.</p></header>
<main><h2>Tell us about your project</h2>
<form id="contact-form" class="contact-form card" action="/send" method="post">
  <label for="f-id">Customer number</label><input id="f-id" name="id" placeholder="Customer number">
  <label for="f-class">Company</label><input id="f-class" name="className" placeholder="Company">
  <label for="f-tag">Project type</label><input id="f-tag" name="tagName" placeholder="Project type">
  <label for="f-action">What should happen next?</label><input id="f-action" name="action" placeholder="Next step">
  <label for="f-el">Details</label><textarea id="f-el" name="elements" placeholder="Details"></textarea>
  <button type="submit" id="send">Send message</button>
</form>
<div id="thanks">Thank you! We will be in touch within two days.</div></main>
<script>
document.getElementById('contact-form').addEventListener('submit', (e) => {
  e.preventDefault();
  document.getElementById('thanks').style.display = 'block';
});
</script></body></html>"""

BUTTON = ('<button id="go" style="font-size:20px;padding:12px 24px" '
          "onclick=\"document.body.style.background='#c33';this.textContent='Done'\">Go</button>")

# Things real pages do to the names our in-page scripts read (each one broke a stage or the
# interactive channel before): DOM properties shadowed by form fields and by named elements on
# `document`, globals the page declares with the names of built-ins, patched prototypes.
HOSTILE_TO_OUR_SCRIPTS = {
    "form-fields-named-like-dom-properties": BUTTON + "<form id='f' class='c'>" + "".join(
        f"<input name='{name}' placeholder='{name}'>" for name in (
            "id", "className", "tagName", "tabIndex", "childNodes", "parentElement", "getAttribute",
            "hasAttribute", "elements", "length", "closest", "querySelector", "getBoundingClientRect")) + "</form>",
    "document-named-elements": BUTTON + "<form name='readyState'></form><img name='fonts' alt=''>"
                               "<img name='title' alt=''><form name='images'></form>",
    "page-globals-named-like-built-ins": BUTTON + "<script>class Map { constructor() { this.tiles = []; } }"
                                         "class Node { constructor(v) { this.value = v; } } class Event {}"
                                         "let scrollX = {}, scrollY = 'top'; const CSS = {};"
                                         "function getComputedStyle() { return {}; }</script>"
                                         "<select id='s'><option>a</option><option>b</option></select>",
    "patched-prototypes": BUTTON + "<script>Element.prototype.getAttribute = function () { return {}; };"
                          "Element.prototype.getBoundingClientRect = function () { return {}; };"
                          "Node.prototype.contains = function () { return true; };"
                          "Object.defineProperty(Element.prototype, 'tagName', { get() { return 42; } });"
                          "window.getComputedStyle = function () { return {}; };</script>",
}


async def _session_scores(renderer, html: str, task: Task):
    async with renderer.session(html) as (rendering, live):
        result = await InteractiveChannel().score(PageEvidence(task, extract_artifact(html), rendering, live))
    return rendering, result


async def test_a_contact_form_with_fields_named_like_dom_properties_gets_a_normal_record(pipeline):
    scored = await pipeline.score(WEBSITE, CONTACT)
    record, rendering = scored.record, scored.rendering
    assert record.status == "ok" and record.failure == "", record.failure
    assert rendering.error == "" and not rendering.notes, (rendering.error, rendering.notes)
    form = next(e for e in rendering.elements if e.tag == "form")
    assert form.id == "contact-form" and form.classes == ["contact-form", "card"]
    assert sum(e.tag == "input" for e in rendering.elements) == 4
    inter = record.channels["interactive"]
    assert inter.status is ChannelStatus.OK and inter.raw >= 1, inter.payload


SVG_CONTROLS = """<!doctype html><html><body><h1>Playlist</h1>
<button id="play"><svg width="16" height="16" viewBox="0 0 16 16" tabindex="0" style="cursor:pointer">
<path d="M4 2l10 6-10 6z"/></svg> Play</button>
<svg width="200" height="60" onclick="document.getElementById('out').textContent = 'clicked'">
<rect width="200" height="60" fill="#2563eb"/><text x="20" y="36" fill="#fff">Shuffle</text></svg>
<math><mi>x</mi></math><p id="out"></p>
<script>document.getElementById("play").onclick = () => document.getElementById("out").textContent = "playing";</script>
</body></html>"""


async def test_svg_and_mathml_elements_are_read_without_breaking_the_explorer(pipeline):
    # HTMLElement's own getters (isContentEditable, style) throw "Illegal invocation" on SVG and
    # MathML elements; read blindly, every page with an inline SVG icon lost its interactions.
    record = (await pipeline.score(WEBSITE, SVG_CONTROLS)).record
    inter = record.channels["interactive"]
    assert inter.status is not ChannelStatus.INFRA_ERROR, inter.payload
    assert inter.raw >= 1, inter.payload


@pytest.mark.parametrize("name", sorted(HOSTILE_TO_OUR_SCRIPTS))
async def test_our_in_page_scripts_do_not_trust_what_the_page_can_shadow(renderer, name):
    html = f"<!doctype html><html><body>{HOSTILE_TO_OUR_SCRIPTS[name]}</body></html>"
    rendering, result = await _session_scores(renderer, html, UI)
    assert rendering.error == "" and not rendering.notes, (rendering.error, rendering.notes)
    button = next(e for e in rendering.elements if e.id == "go")
    assert button.tag == "button" and button.interactive and button.w > 10, button
    assert rendering.mobile is not None and rendering.mobile.width == renderer.config.mobile_width
    assert result.status is ChannelStatus.OK, result.payload
    steps = {s["target"]: s["verdict"] for s in result.payload["steps"]}
    assert steps["#go"]["score"] == 1, steps


async def test_a_snapshot_entry_that_fails_validation_is_reset_or_left_out_and_noted(pipeline, monkeypatch):
    from aesenv.render import renderer as renderer_module

    real = renderer_module._JS["snapshot.js"]
    corrupting = ("(...args) => { const snap = (" + real + ")(...args);"
                  " snap.elements[0].id = { nested: true }; snap.elements[1].font_size = 'large';"
                  " snap.elements[3].x = 'left'; return snap; }")
    monkeypatch.setattr(renderer_module, "_SNAPSHOT", renderer_module.in_page(
        "(N, opts) => ({freeze})(N) && ({snapshot})(N, opts)".format(freeze=renderer_module._JS["freeze_animations.js"],
                                                                  snapshot=corrupting)))
    scored = await pipeline.score(UI, f"<html><body><h1>Title</h1><p>Text</p>{BUTTON}</body></html>")
    rendering = scored.rendering
    assert scored.record.status == "ok"
    # Bad optional fields fall back to their defaults; an element without a valid box is left out.
    assert [(e.tag, e.id, e.font_size) for e in rendering.elements][:2] == [("body", "", 16.0), ("h1", "", 16.0)]
    assert [(e.tag, e.parent) for e in rendering.elements] == [("body", -1), ("h1", 0), ("p", 0)]
    assert rendering.notes == ["snapshot: 3 of 4 elements failed validation; 2 kept with defaults for "
                               "font_size, id; 1 left out (x)"], rendering.notes
    assert scored.record.rendering["notes"] == rendering.notes


# The page's own exceptions, as real output throws them: an animation loop that reads an
# undefined variable on every frame, a timer that throws once, a click handler that throws, an
# async loop whose promise rejects on every frame.
THROWING = {
    "raf-every-frame": ("<canvas id='c' width='400' height='200'></canvas><script>const ctx = "
                        "document.getElementById('c').getContext('2d'); function draw(t) {"
                        " ctx.fillStyle = '#123'; ctx.fillRect(0, 0, 400, 200); ctx.fillRect(ship.x, 50, 20, 20);"
                        " requestAnimationFrame(draw); }"
                        " requestAnimationFrame(draw); setInterval(() => { score.value += 1; }, 100);</script>",
                        "ship is not defined"),
    "timeout-once-after-500ms": ("<script>setTimeout(() => { document.querySelector('#missing').classList.add('x'); },"
                                 " 500);</script>", "Cannot read properties of null"),
    "async-rejection-every-frame": ("<script>async function tick() { requestAnimationFrame(tick); await null;"
                                    " throw new Error('level data missing'); } requestAnimationFrame(tick);</script>",
                                    "level data missing"),
}


@pytest.mark.parametrize("name", sorted(THROWING))
async def test_a_page_whose_own_code_throws_gets_a_scored_interactive_channel(pipeline, name):
    script, message = THROWING[name]
    record = (await pipeline.score(GAME, f"<html><body>{BUTTON}{script}</body></html>")).record
    inter = record.channels["interactive"]
    assert record.status == "ok" and inter.status is ChannelStatus.OK and inter.raw >= 1, inter.payload
    assert any(message in e for e in record.rendering["page_errors"]), record.rendering["page_errors"]


async def test_a_click_handler_that_throws_scores_zero_with_the_error_on_the_record(pipeline):
    html = ("<html><body><button id='go' style='font-size:20px' onclick=\"this.textContent = 'Saved';"
            " analytics.track('save')\">Save</button></body></html>")
    record = (await pipeline.score(UI, html)).record
    inter = record.channels["interactive"]
    assert inter.status is ChannelStatus.FAILED and inter.raw == 0.0, inter.payload
    assert "analytics is not defined" in inter.payload["steps"][0]["verdict"]["reason"]
    assert any("analytics is not defined" in e for e in inter.payload["page_errors"]), inter.payload


async def test_clock_calls_a_browser_would_take_are_taken_and_misuse_is_the_pages_error(renderer):
    # cancelAnimationFrame with a timer's id does nothing in a browser (the loop runs on); a
    # requestAnimationFrame without a callback, from inside a timer, is an uncaught TypeError.
    html = (f"<html><body>{BUTTON}<p id='n'>0</p><script>const t = setTimeout(() => {{}}, 5000); let frames = 0;"
            "function loop() { cancelAnimationFrame(t); frames++; document.getElementById('n').textContent = frames;"
            " requestAnimationFrame(loop); } requestAnimationFrame(loop);"
            " setTimeout(() => requestAnimationFrame(window.notAFunction), 300);</script></body></html>")
    async with renderer.session(html) as (rendering, live):
        frames = int(await live.evaluate("() => document.getElementById('n').textContent"))
    assert frames > 20, frames
    assert any("requestAnimationFrame" in e for e in rendering.page_errors), rendering.page_errors


@pytest.mark.parametrize("at_ms", [300, 790])
async def test_a_page_that_reloads_itself_once_while_settling_is_captured_on_its_new_document(renderer, at_ms):
    # At 790 ms the reload starts on the slice's last timer, after which nothing of the page's
    # time is left to run: the capture must wait for the new document instead of racing its commit.
    html = (f"<html><body>{BUTTON}<p id='visit'></p><script>document.getElementById('visit').textContent ="
            " sessionStorage.seen ? 'welcome back' : 'first visit';"
            f" if (!sessionStorage.seen) {{ sessionStorage.seen = 1; setTimeout(() => location.reload(), {at_ms}); }}"
            "</script></body></html>")
    async with renderer.session(html) as (rendering, live):
        assert live is not None
        text = await live.evaluate("() => document.getElementById('visit').textContent")
    assert rendering.error == "", rendering.error
    assert text == "welcome back" and any(e.text == "welcome back" for e in rendering.elements)
    assert rendering.settled_ms == renderer.config.settle_ms


async def test_a_page_that_only_says_it_is_leaving_is_captured_without_waiting(renderer):
    html = (f"<html><body>{BUTTON}<script>setTimeout(() => dispatchEvent(new Event('beforeunload')), 700);"
            "</script></body></html>")
    rendering = await renderer.render(html)
    assert rendering.status.value == "ok" and rendering.error == "", rendering.error
    assert rendering.stages_timed_out == [], rendering.stages_timed_out


async def test_a_page_that_hangs_on_the_way_back_to_the_judging_size_fails_instead_of_masking(renderer,
                                                                                              monkeypatch):
    # The capture ends at phone width; a page whose renderer never answers the resize back (a
    # frame it is still drawing, a hung main thread) has no live page to act on. That is the
    # page hanging, scored 0, not "the page was not kept open" (ours, masked).
    resize = renderer._at_size

    async def hangs_when_restored(page, width, height, then=None):
        if then is None:
            await asyncio.sleep(3600)
        return await resize(page, width, height, then)

    monkeypatch.setattr(renderer, "_at_size", hangs_when_restored)
    html = f"<html><body>{BUTTON}</body></html>"
    rendering, result = await _session_scores(renderer, html, UI)
    assert rendering.status.value == "timeout" and rendering.stages_timed_out == ["restore_viewport"]
    assert result.status is ChannelStatus.FAILED and result.raw == 0.0, result.payload
    assert "hung before it could be used" in result.payload["reason"]


# A heavy three.js scene as models write them: a thousand shadow-casting towers under four
# shadow-mapped spot lights, 40,000 particles updated on the CPU every frame, bloom
# post-processing, antialiasing. Under software GL one frame costs seconds of CPU.
HEAVY_WEBGL = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Neon City</title>
<style>html,body{margin:0;height:100%;overflow:hidden;background:#05060f;font-family:sans-serif}
#hud{position:fixed;top:20px;left:24px;color:#cfe3ff}#hud h1{margin:0;font-size:28px}
#hud button{margin-top:12px;padding:8px 18px;background:#1f6feb;color:#fff;border:0;border-radius:6px}</style>
<script type="importmap">{"imports":{"three":"https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js",
"three/addons/":"https://cdn.jsdelivr.net/npm/three@0.160.0/examples/jsm/"}}</script></head>
<body><div id="hud"><h1>NEON CITY</h1><p>1,000 towers, 40,000 sparks.</p><button id="boost">Boost lights</button></div>
<script type="module">
import * as THREE from 'three';
import { EffectComposer } from 'three/addons/postprocessing/EffectComposer.js';
import { RenderPass } from 'three/addons/postprocessing/RenderPass.js';
import { UnrealBloomPass } from 'three/addons/postprocessing/UnrealBloomPass.js';
import { OutputPass } from 'three/addons/postprocessing/OutputPass.js';
const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setSize(innerWidth, innerHeight);
renderer.shadowMap.enabled = true; renderer.shadowMap.type = THREE.PCFSoftShadowMap;
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene(); scene.fog = new THREE.FogExp2(0x05060f, 0.012);
const camera = new THREE.PerspectiveCamera(60, innerWidth / innerHeight, 0.1, 500);
camera.position.set(60, 45, 60); camera.lookAt(0, 0, 0);
scene.add(new THREE.AmbientLight(0x223355, 0.6));
const lights = [0xff3377, 0x33ddff, 0xffcc33, 0x77ff66].map((color, i) => {
  const l = new THREE.SpotLight(color, 800, 200, 0.6, 0.4);
  l.position.set(Math.cos(i * 1.57) * 50, 60, Math.sin(i * 1.57) * 50);
  l.castShadow = true; l.shadow.mapSize.set(2048, 2048); scene.add(l); return l; });
const ground = new THREE.Mesh(new THREE.PlaneGeometry(400, 400), new THREE.MeshStandardMaterial({ color: 0x0b0d1a }));
ground.rotation.x = -Math.PI / 2; ground.receiveShadow = true; scene.add(ground);
const towers = [];
for (let i = 0; i < 1000; i++) {
  const h = 4 + Math.random() * 30;
  const m = new THREE.Mesh(new THREE.BoxGeometry(3, h, 3, 2, 8, 2), new THREE.MeshStandardMaterial({
    color: new THREE.Color().setHSL(0.6 + Math.random() * 0.3, 0.7, 0.25),
    emissive: new THREE.Color().setHSL(Math.random(), 1, 0.15) }));
  m.position.set((Math.random() - 0.5) * 160, h / 2, (Math.random() - 0.5) * 160);
  m.castShadow = m.receiveShadow = true; scene.add(m); towers.push(m);
}
const N = 40000, pos = new Float32Array(N * 3);
for (let i = 0; i < N * 3; i++) pos[i] = (Math.random() - 0.5) * 200;
const sparks = new THREE.BufferGeometry(); sparks.setAttribute('position', new THREE.BufferAttribute(pos, 3));
scene.add(new THREE.Points(sparks,
  new THREE.PointsMaterial({ color: 0x88ccff, size: 0.5, blending: THREE.AdditiveBlending })));
const composer = new EffectComposer(renderer);
composer.addPass(new RenderPass(scene, camera));
composer.addPass(new UnrealBloomPass(new THREE.Vector2(innerWidth, innerHeight), 1.2, 0.5, 0.2));
composer.addPass(new OutputPass());
document.getElementById('boost').addEventListener('click', () => lights.forEach((l) => (l.intensity *= 2)));
function animate(t) {
  requestAnimationFrame(animate);
  for (let i = 1; i < N * 3; i += 3) pos[i] = pos[i] < -100 ? 100 : pos[i] - 0.2;
  sparks.attributes.position.needsUpdate = true;
  towers.forEach((m, i) => { m.material.emissiveIntensity = 0.5 + 0.5 * Math.sin(t / 500 + i); });
  composer.render();
}
requestAnimationFrame(animate);
</script></body></html>"""


@pytest.mark.slow
async def test_a_heavy_webgl_scene_is_captured_not_timed_out(renderer):
    # Before: the first 100 ms settle step (six frames, about ten seconds each here) overran the
    # settle deadline, and the snapshot and the screenshot then waited behind the GPU: "page hung
    # in: settle, snapshot", no elements. Now it runs the whole slice with a frame or two drawn.
    rendering = await renderer.render(HEAVY_WEBGL)
    assert rendering.status.value == "ok", (rendering.error, rendering.timings_ms)
    assert rendering.settled_ms == renderer.config.settle_ms
    assert 1 <= rendering.settle_frames <= renderer.config.webgl_settle_frames
    assert rendering.metrics.canvases and rendering.metrics.canvases[0]["context"] == "webgl2"
    assert any(e.id == "boost" for e in rendering.elements) and rendering.has_screenshot


async def test_a_webgl_page_whose_frame_hangs_is_the_pages_timeout_not_ours():
    # A WebGL page whose animation loop never returns from its third frame: the GPU draws
    # nothing while the page waits, so this is a hang (its fault), not a slow frame.
    html = ("<html><body><canvas id='c' width='300' height='200'></canvas><h1 id='t'>Scene</h1><script>"
            "const gl = document.getElementById('c').getContext('webgl'); let n = 0;"
            "function frame() { requestAnimationFrame(frame); gl.clearColor(0.1, 0.4, 0.8, 1);"
            " gl.clear(gl.COLOR_BUFFER_BIT); if (++n === 3) for (;;) {} } requestAnimationFrame(frame);"
            "</script></body></html>")
    async with Renderer(RenderConfig(webgl_frame_timeout_s=3)) as renderer:
        rendering = await asyncio.wait_for(renderer.render(html), 10 * renderer.config.total_timeout_s)  # hang guard
    # the frame deadline, not the render's, ended it: only settle timed out, after two frames
    assert rendering.status.value == "timeout" and rendering.stages_timed_out == ["settle"], rendering.error
    assert rendering.settle_frames == 2 and rendering.metrics.canvases[0]["context"] == "webgl"
    assert any(e.id == "t" for e in rendering.elements) and rendering.has_screenshot


async def test_a_webgl_page_slow_to_draw_is_interacted_with_not_taken_for_hung(renderer):
    # Every frame of this scene costs real time (here its script's, as software GL's would): the
    # explorer's first idle second was 75 frames, longer than a call on the page may take, and
    # the page "hung while it was being read". A WebGL page now draws one frame per advance.
    html = (f"<html><body><h1 id='t'>Scene</h1>{BUTTON}<canvas id='c' width='400' height='200'></canvas><script>"
            "const gl = document.getElementById('c').getContext('webgl'); let s = 0;"
            "function frame(t) { requestAnimationFrame(frame); for (let i = 0; i < 6e7; i++) s += i % 7;"
            " gl.clearColor(0.1, 0.2, (t % 1000) / 1000, 1); gl.clear(gl.COLOR_BUFFER_BIT); }"
            " requestAnimationFrame(frame);</script></body></html>")
    rendering, result = await _session_scores(renderer, html, UI)
    assert rendering.status.value == "ok" and rendering.settled_ms == renderer.config.settle_ms, rendering.error
    assert result.status is ChannelStatus.OK, result.payload
    steps = {s["target"]: s["verdict"] for s in result.payload["steps"]}
    assert steps["#go"]["score"] == 1, steps

