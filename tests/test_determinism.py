"""Rendering the same page twice gives the same pixels, for animated and random pages too."""

import io

import numpy as np
import pytest
from PIL import Image

from benchmarks.degradation import handwritten_pages

ANIMATED = """<!DOCTYPE html><html><head><style>
@keyframes spin { to { transform: rotate(360deg); } }
.s { width: 80px; height: 80px; background: #e11d48; animation: spin 2s linear infinite; margin: 40px }
.f { width: 60px; height: 60px; background: #0ea5e9; transition: width 3s; margin: 20px }</style></head><body>
<div class="s"></div><div class="f" id="f"></div><p id="d"></p><canvas id="c" width="400" height="200"></canvas>
<script>
document.getElementById("d").textContent = new Date().toISOString() + " " + Math.random() + " " +
  crypto.getRandomValues(new Uint8Array(2)).join(",");
setTimeout(() => document.getElementById("f").style.width = "300px", 100);
const c = document.getElementById("c").getContext("2d");
function loop(t) { c.clearRect(0, 0, 400, 200); c.fillStyle = "#16a34a"; c.beginPath();
  c.arc((t / 5) % 400, 100, 30, 0, 7); c.fill(); requestAnimationFrame(loop); }
requestAnimationFrame(loop);
</script></body></html>"""

CHART = """<!DOCTYPE html><html><head><script src="https://cdn.jsdelivr.net/npm/chart.js@4"></script></head>
<body><canvas id="c" width="600" height="300"></canvas><script>
new Chart(document.getElementById("c"), {type: "bar", data: {labels: ["Q1", "Q2", "Q3", "Q4"],
  datasets: [{label: "Revenue", data: [12, 19, 7, 15].map(v => v + Math.random() * 5)}]}});
</script></body></html>"""

THREE = """<!DOCTYPE html><html><head><style>body{margin:0}</style>
<script src="https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"></script></head><body><script>
const scene = new THREE.Scene(); const camera = new THREE.PerspectiveCamera(60, 1280 / 960, 0.1, 100);
camera.position.z = 4; const renderer = new THREE.WebGLRenderer(); renderer.setSize(1280, 960);
document.body.appendChild(renderer.domElement);
const cube = new THREE.Mesh(new THREE.BoxGeometry(1.5, 1.5, 1.5), new THREE.MeshNormalMaterial()); scene.add(cube);
function animate(t) { cube.rotation.x = t / 1000; cube.rotation.y = t / 700; renderer.render(scene, camera);
  requestAnimationFrame(animate); } requestAnimationFrame(animate);
</script></body></html>"""


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)


def differing_share(a: bytes, b: bytes) -> float:
    x, y = pixels(a), pixels(b)
    if x.shape != y.shape:
        return 1.0
    return float((np.abs(x - y).sum(axis=2) > 0).mean())


PAGES = {"animated_js_css_random": ANIMATED, "chartjs_animated": CHART, "threejs_webgl": THREE,
         **{f"handwritten_{p.task.id}": p.html for p in handwritten_pages()}}


@pytest.mark.parametrize("name", sorted(PAGES))
async def test_same_page_twice_gives_the_same_pixels(renderer, name):
    first = await renderer.render(PAGES[name])
    second = await renderer.render(PAGES[name])
    assert first.status.value == second.status.value == "ok", (first.error, second.error)
    assert differing_share(first.full_page_png, second.full_page_png) == 0.0


async def test_seed_changes_random_content(renderer):
    a = await renderer.render(ANIMATED, seed=1)
    b = await renderer.render(ANIMATED, seed=2)
    text = lambda r: next(e.text for e in r.elements if e.id == "d")  # noqa: E731
    assert text(a) != text(b) and text(a).startswith("2025-01-01T12:00:00.000Z")
