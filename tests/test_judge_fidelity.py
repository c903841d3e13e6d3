"""The offline judge on what real model output looks like: canvas scenes, form letters, garish
palettes, prompts in other languages, empty charts, pages that throw."""

from __future__ import annotations

import numpy as np
import pytest

from aesenv.judging.copy import copy_profile, prompt_terms, requested_content, tokens, verbatim_spans
from aesenv.judging.design import PROXY_CEILING, OfflineDesignJudge
from aesenv.judging.pixels import loudness, scene_quality
from aesenv.tasks import Task, load_tasks

JUDGE = OfflineDesignJudge()

# -- text in any language -----------------------------------------------------------------------


def test_prompt_terms_in_languages_without_spaces_are_bigrams():
    terms, _ = prompt_terms("创建一个咖啡店的网页，包含菜单和价格")
    assert {"咖啡", "菜单", "价格"} <= set(terms)
    assert not {"创建", "一个", "网页", "包含"} & set(terms)  # request boilerplate carries no content
    assert "ラーメン" not in tokens("ラーメン")  # runs are split into bigrams
    assert tokens("ラーメン") == ["ラー", "ーメ", "メン"]


def test_prompt_terms_of_a_spanish_prompt_drop_its_function_words():
    terms, _ = prompt_terms("Crea una página para una panadería con precios y horarios de apertura")
    assert {"panadería", "precio", "horario", "apertura"} <= set(terms)
    assert not {"crea", "una", "página", "para"} & set(terms)


def test_verbatim_restatement_is_measured_on_tokens():
    prompt = "Make a snake game with a snake that grows when it eats and a score counter"
    share, copied = verbatim_spans(prompt, "Features: snake that grows when it eats. Score: 0")
    assert share > 0.5 and len(copied) >= 6
    assert verbatim_spans(prompt, "Guide the serpent to the apples; each one adds a segment.")[0] == 0


def test_copy_profile_finds_placeholders_stock_phrases_and_repeated_frames():
    prompt = "A landing page for a bakery with a menu, prices and opening hours"
    letter = copy_profile(prompt, [
        "Welcome to Bakery", "Get started", "Learn more",
        "From first look to last detail: menu, explained in plain words.",
        "From first look to last detail: opening hours, explained in plain words.",
        "Feature 1", "Lorem ipsum dolor sit amet, consectetur adipiscing elit."])
    assert {"welcome to", "get started", "learn more"} <= set(letter.stock)
    assert {"feature 1", "lorem"} <= set(letter.placeholders)
    assert letter.repeated_frames == 2
    bespoke = copy_profile(prompt, [
        "Slow-fermented sourdough, baked before sunrise.",
        "Country loaf $9.50 — crackling crust from our fifteen-year-old starter.",
        "Open Tuesday to Sunday, 7:00–15:00."])
    assert not bespoke.stock and not bespoke.placeholders and bespoke.repeated_frames == 0


def test_requested_content_is_the_content_not_its_name():
    prompt = "A landing page for a bakery with prices and opening hours"
    named = requested_content(prompt, "Prices: we put care into prices. Opening hours: easy to follow.")
    assert named == {"prices": {"found": 0, "need": 2, "ok": False}, "hours": {"found": 0, "need": 2, "ok": False}}
    shown = requested_content(prompt, "Sourdough $9.50, croissant $4.25. Mon–Fri 7:00–18:00")
    assert shown["prices"]["ok"] and shown["hours"]["ok"]
    assert requested_content("A settings panel with contact preferences", "Email me", "UI Component") == {}


# -- pixels -------------------------------------------------------------------------------------


def test_scene_quality_orders_a_blank_frame_a_lone_square_and_a_rich_scene():
    blank = np.zeros((240, 320, 3), dtype=np.uint8)
    lone = blank.copy()
    lone[100:140, 140:180] = (200, 200, 200)
    rng = np.random.default_rng(0)
    ys, xs = np.mgrid[0:240, 0:320]
    rich = np.stack([(xs * 0.8) % 256, (ys * 1.1) % 256, ((xs + ys) * 0.5) % 256], axis=2).astype(np.uint8)
    rich[rng.random((240, 320)) > 0.97] = 255
    scores = [scene_quality(a)["score"] for a in (blank, lone, rich)]
    assert scores[0] < 0.1 and scores[0] < scores[1] < scores[2] and scores[2] > 0.7


def test_loudness_flags_neon_fields_in_clashing_hues():
    calm = np.full((100, 3), (245, 243, 238), dtype=np.uint8)
    calm[:10] = (180, 83, 9)
    clash = np.concatenate([np.full((40, 3), (255, 0, 255)), np.full((40, 3), (255, 255, 0)),
                            np.full((20, 3), (0, 255, 0))]).astype(np.uint8)
    assert loudness(calm)["garish"] == 0
    assert loudness(clash)["garish"] == 1.0 and len(loudness(clash)["loud_hues"]) == 3


# -- rendered pages -----------------------------------------------------------------------------

SCENE_TASK = Task(id="galaxy", category="3D Design",
                  prompt="A WebGL particle galaxy that slowly rotates, with glowing spiral arms")

RICH_WEBGL = """<!DOCTYPE html><html><head><style>body{margin:0;background:#02030a;overflow:hidden}
h1{position:fixed;left:32px;top:20px;color:#e0e7ff;font:600 20px sans-serif}</style></head><body>
<h1>Spiral galaxy</h1><script type="module">
import * as THREE from "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js";
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setSize(innerWidth, innerHeight); document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene(), camera = new THREE.PerspectiveCamera(60, innerWidth / innerHeight, 0.1, 100);
camera.position.set(0, 3.2, 5.5); camera.lookAt(0, 0, 0);
const n = 30000, pos = new Float32Array(n * 3), col = new Float32Array(n * 3);
const inner = new THREE.Color("#ffd9a0"), outer = new THREE.Color("#5b6cff");
for (let i = 0; i < n; i++) {
  const r = Math.random() * 4, arm = (i % 3) * 2 * Math.PI / 3, spin = r * 1.4;
  const jitter = () => Math.pow(Math.random(), 3) * (Math.random() < 0.5 ? 1 : -1) * 0.5;
  pos[i * 3] = Math.cos(arm + spin) * r + jitter(); pos[i * 3 + 1] = jitter() * 0.4;
  pos[i * 3 + 2] = Math.sin(arm + spin) * r + jitter();
  const c = inner.clone().lerp(outer, r / 4); col.set([c.r, c.g, c.b], i * 3);
}
const geometry = new THREE.BufferGeometry();
geometry.setAttribute("position", new THREE.BufferAttribute(pos, 3));
geometry.setAttribute("color", new THREE.BufferAttribute(col, 3));
const points = new THREE.Points(geometry, new THREE.PointsMaterial({ size: 0.03, vertexColors: true,
  blending: THREE.AdditiveBlending, depthWrite: false }));
scene.add(points);
(function frame() { points.rotation.y += 0.002; renderer.render(scene, camera); requestAnimationFrame(frame); })();
</script></body></html>"""

LONE_CUBE = """<!DOCTYPE html><html><head><style>body{margin:0;background:#000;overflow:hidden}</style></head><body>
<script type="module">
import * as THREE from "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js";
const renderer = new THREE.WebGLRenderer({ preserveDrawingBuffer: true });
renderer.setSize(innerWidth, innerHeight); document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene(), camera = new THREE.PerspectiveCamera(60, innerWidth / innerHeight, 0.1, 100);
camera.position.z = 6;
const cube = new THREE.Mesh(new THREE.BoxGeometry(1, 1, 1), new THREE.MeshBasicMaterial({ color: 0x777777 }));
scene.add(cube);
(function frame() { cube.rotation.y += 0.01; renderer.render(scene, camera); requestAnimationFrame(frame); })();
</script></body></html>"""

THROWS_EVERY_FRAME = """<!DOCTYPE html><html><head><style>body{margin:0;background:#02030a}</style></head><body>
<canvas id="c"></canvas><script>
const c = document.getElementById("c"); c.width = innerWidth; c.height = innerHeight;
const g = c.getContext("2d");
function frame() { requestAnimationFrame(frame); g.fillStyle = palette[0]; g.fillRect(0, 0, 10, 10); }
frame();
</script></body></html>"""


async def test_canvas_and_webgl_scenes_of_different_quality_are_ordered(renderer):
    judged = {}
    for name, html in (("rich", RICH_WEBGL), ("cube", LONE_CUBE), ("throws", THROWS_EVERY_FRAME)):
        rendering = await renderer.render(html)
        judged[name] = JUDGE.judge_sync(SCENE_TASK, rendering)
    rich, cube, throws = judged["rich"], judged["cube"], judged["throws"]
    assert rich.evidence["canvas"]["score"] > cube.evidence["canvas"]["score"] + 0.2
    assert rich.total > cube.total + 8 > throws.total + 8, (rich.total, cube.total, throws.total)
    assert throws.evidence["structure"]["integrity"]["points"] < 1.5  # its own errors are visible breakage


CHART_TASK = Task(id="chart", category="Data Visualization",
                  prompt="A bar chart of monthly rainfall in Lisbon with labelled axes")
CHART = """<!DOCTYPE html><html><head><style>body{font-family:sans-serif;margin:40px;color:#1f2937}</style>
<script src="https://cdn.jsdelivr.net/npm/chart.js@4.4.1/dist/chart.umd.min.js"></script></head><body>
<h1>Monthly rainfall in Lisbon</h1><p>Millimetres per month, 1991–2020 normals.</p>
<div style="width:800px;height:400px"><canvas id="c"></canvas></div><script>
new Chart(document.getElementById("c"), { type: "bar", options: { animation: false },
  data: { labels: %s, datasets: [{ label: "Rainfall (mm)", data: %s, backgroundColor: "#2563eb" }] } });
</script></body></html>"""


async def test_an_empty_chart_loses_its_chart_area(renderer):
    months = '["Jan","Feb","Mar","Apr","May","Jun","Jul","Aug","Sep","Oct","Nov","Dec"]'
    full = JUDGE.judge_sync(CHART_TASK, await renderer.render(CHART % (months, "[99,81,58,61,44,15,4,6,33,90,112,115]")))
    empty = JUDGE.judge_sync(CHART_TASK, await renderer.render(CHART % ("[]", "[]")))
    area = lambda j: j.evidence["alignment"]["category_fit"]["checks"]["chart_area"]["points"]  # noqa: E731
    assert area(full) == 5 and area(empty) < 2.5
    assert full.total > empty.total + 3


GARISH_TASK = Task(id="ramen", category="Website", prompt="A landing page for a ramen bar with a menu and prices")
RAMEN = """<!DOCTYPE html><html><head><style>
body{margin:0;font-family:%s;background:%s;color:%s}
header,section{padding:48px 10%%} h1{font-size:48px;margin:0} h2{font-size:28px}
.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:24px}
.card{padding:24px;border-radius:12px;background:%s;box-shadow:0 4px 14px rgba(0,0,0,.08)}
.price{font-weight:700;color:%s} header{border-bottom:4px solid %s}</style></head><body>
<header><h1>Menya Kōji ramen bar</h1><p>Hand-pulled noodles and a 14-hour tonkotsu broth in Alfama.</p></header>
<section><h2>Menu</h2><div class="grid">
<div class="card"><h3>Tonkotsu</h3><p>Pork bone broth, chashu, ajitama egg.</p><p class="price">€14.50</p></div>
<div class="card"><h3>Shoyu</h3><p>Clear chicken broth, bamboo shoots, nori.</p><p class="price">€13.00</p></div>
<div class="card"><h3>Miso</h3><p>Red miso, charred corn, butter, scallions.</p><p class="price">€13.50</p></div>
</div></section></body></html>"""


async def test_a_garish_clash_scores_below_the_calm_original(renderer):
    calm = RAMEN % ("Helvetica, Arial, sans-serif", "#faf7f2", "#1c1917", "#ffffff", "#b45309", "#b45309")
    garish = RAMEN % ("'Comic Sans MS', cursive", "#ff00ff", "#00ff00", "#ffff00", "#ff0000", "#00ffff")
    a = JUDGE.judge_sync(GARISH_TASK, await renderer.render(calm))
    b = JUDGE.judge_sync(GARISH_TASK, await renderer.render(garish))
    assert b.evidence["aesthetics"]["palette"]["garish"] > 0.5
    assert b.evidence["aesthetics"]["typography"]["novelty_face_share"] > 0.9
    assert a.total > b.total + 5, (a.total, b.total)


MULTILINGUAL_TASK = Task(id="cafe", category="Website", prompt="为一家名叫「青山咖啡」的咖啡店创建网页，包含菜单、价格和营业时间")
CAFE = """<!DOCTYPE html><html lang="%s"><head><style>body{font-family:sans-serif;margin:0;color:#292524;background:#fafaf9}
header,section{padding:40px 12%%}</style></head><body><header><h1>%s</h1><p>%s</p></header>
<section><h2>%s</h2><ul><li>%s</li><li>%s</li></ul><p>%s</p></section></body></html>"""


async def test_a_prompt_in_chinese_is_matched_by_chinese_copy(renderer):
    chinese = CAFE % ("zh", "青山咖啡", "手冲咖啡与自家烘焙的甜点。", "菜单与价格", "拿铁 ¥32", "手冲单品 ¥38",
                      "营业时间：每天 8:00–20:00")
    english = CAFE % ("en", "Blue Hill Coffee", "Pour-over coffee and house-baked pastries.", "Menu and prices",
                      "Latte ¥32", "Single-origin pour-over ¥38", "Open daily 8:00–20:00")
    zh = JUDGE.judge_sync(MULTILINGUAL_TASK, await renderer.render(chinese))
    en = JUDGE.judge_sync(MULTILINGUAL_TASK, await renderer.render(english))
    assert zh.evidence["alignment"]["prompt_terms"]["coverage"] >= 0.6
    assert zh.evidence["alignment"]["prompt_terms"]["points"] > en.evidence["alignment"]["prompt_terms"]["points"] + 5
    assert zh.evidence["alignment"]["requested_content"]["points"] == 4


@pytest.mark.slow
async def test_the_template_policy_is_not_good_and_handwritten_pages_are(renderer):
    from benchmarks.degradation import handwritten_pages
    from policies.template import TemplatePolicy

    policy = TemplatePolicy()
    template = []
    for task in load_tasks("builtin:web"):
        template.append(JUDGE.judge_sync(task, await renderer.render(await policy.generate(task))))
    hand = [JUDGE.judge_sync(p.task, await renderer.render(p.html)) for p in handwritten_pages()]
    good = lambda js: sum(j.total >= 75 for j in js) / len(js)  # noqa: E731
    assert good(template) < 0.5 and good(hand) >= 0.75, ([j.total for j in template], [j.total for j in hand])
    # A form letter cannot reach the band a bespoke page reaches: its ceiling is lowered.
    assert sum(j.evidence["copy"]["ceiling"] < PROXY_CEILING for j in template) >= 0.8 * len(template)
    assert all(j.evidence["copy"]["ceiling"] > PROXY_CEILING - 0.02 for j in hand)
