"""The vendored-package catalog (aesenv/node/catalog.json): package.json and the lock agree with it,
and every example URL of every entry is served by the build the entry names.

The per-entry tables use the mirror `aesenv setup` installs and are skipped when it is not there;
the consistency and parsing checks need no install. The slow tests render real pages.
"""

from __future__ import annotations

import io
import json
import re
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from aesenv.node import catalog as cat
from aesenv.render.vendor import (LIBRARIES, Build, FontCssAsk, PackageAsk, VendorMirror, _family_key,
                                  libraries_from, parse_spec, parse_url)
from support.dom import element_by_id

CATALOG = cat.load_catalog()
NODE_DIR = Path(str(resources.files("aesenv.node")))
REAL = VendorMirror.default()
needs_mirror = pytest.mark.skipif(not REAL.available, reason="vendored mirror not installed: run `aesenv setup`")

LIBRARY_EXAMPLES = [pytest.param(lib.npm, build.version, url, id=f"{lib.npm}@{build.version} {url.split('//', 1)[1]}")
                    for lib in CATALOG.libraries for build in lib.builds for url in build.examples]
FONT_EXAMPLES = [pytest.param(font, url, id=f"{font.family} {url.split('//', 1)[1]}")
                 for font in CATALOG.fonts for url in font.examples]

_EXPECTED_TYPE = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".woff2": "font/woff2",
                  ".woff": "font/woff", ".png": "image/png", ".svg": "image/svg+xml"}


# ---------------------------------------------------------------------------------------------
# the catalog, package.json and the lock agree


def test_package_json_is_generated_from_the_catalog():
    assert (NODE_DIR / "package.json").read_text(encoding="utf-8") == cat.package_json(CATALOG), \
        "package.json differs from catalog.json: run `python -m aesenv.node.catalog --lock`"
    assert cat.main(["--check"]) == 0


def test_lock_pins_what_the_catalog_says():
    lock = json.loads((NODE_DIR / "package-lock.json").read_text(encoding="utf-8"))
    deps = cat.dependencies(CATALOG)
    assert lock["packages"][""]["dependencies"] == deps, \
        "package-lock.json is stale: run `python -m aesenv.node.catalog --lock`"
    for key, spec in deps.items():
        version = spec.rsplit("@", 1)[1] if spec.startswith("npm:") else spec
        assert lock["packages"][f"node_modules/{key}"]["version"] == version, key


def test_every_entry_has_examples_and_libraries_match_the_catalog():
    assert [lib.npm for lib in LIBRARIES] == [lib.npm for lib in CATALOG.libraries]
    for lib in CATALOG.libraries:
        assert all(b.examples for b in lib.builds), lib.npm
    assert all(s.reason for s in CATALOG.skipped)


@pytest.mark.parametrize("npm, version, url", LIBRARY_EXAMPLES)
def test_library_examples_route_to_their_library(npm, version, url):
    """Parsing alone (no install): the URL shape names this entry's package."""
    ask = parse_url(url)
    assert isinstance(ask, PackageAsk), url
    assert ask.name == npm


@pytest.mark.parametrize("font, url", FONT_EXAMPLES)
def test_font_examples_ask_for_their_family(font, url):
    ask = parse_url(url)
    assert isinstance(ask, FontCssAsk), url
    assert _family_key(font.family) in {_family_key(f.family) for f in ask.families}


def test_generator_writes_aliases_for_second_majors():
    catalog = cat.parse_catalog(json.dumps({
        "tools": [{"npm": "htmlhint", "version": "1.0.0"}],
        "libraries": [{"npm": "chart.js", "builds": [
            {"version": "4.6.1", "examples": ["https://cdn.jsdelivr.net/npm/chart.js"]},
            {"version": "3.9.1", "alias": "chart.js-3", "examples": ["https://unpkg.com/chart.js@3"]}]}],
        "fonts": [{"family": "Lora", "npm": "@fontsource/lora", "version": "5.3.0",
                   "examples": ["https://fonts.googleapis.com/css2?family=Lora"]}]}))
    assert cat.dependencies(catalog) == {"htmlhint": "1.0.0", "chart.js": "4.6.1", "chart.js-3": "npm:chart.js@3.9.1",
                                         "@fontsource/lora": "5.3.0"}
    assert json.loads(cat.package_json(catalog))["dependencies"] == cat.dependencies(catalog)


@pytest.mark.parametrize("bad", [
    {"libraries": [{"npm": "x", "builds": [{"version": "1.0.0", "examples": ["u"]},
                                           {"version": "2.0.0", "examples": ["u"]}]}]},       # two plain names
    {"libraries": [{"npm": "x", "builds": [{"version": "1.0.0", "examples": ["u"]}]},
                   {"npm": "y", "builds": [{"version": "1.0.0", "alias": "x", "examples": ["u"]}]}]},  # key clash
    {"libraries": [{"npm": "x", "builds": [{"version": "1.0.0", "examples": []}]}]},          # no example
    {"libraries": [{"npm": "x", "bulds": []}]},                                                # typo
    {"fonts": [{"family": "Lora", "npm": "lora", "version": "5", "examples": ["u"]}]},         # not fontsource
])
def test_catalog_mistakes_are_refused(bad):
    with pytest.raises(ValidationError):
        cat.parse_catalog(json.dumps(bad))


# ---------------------------------------------------------------------------------------------
# version ranges and shared cdnjs names, from the catalog alone


def _builds(name: str, *versions: str) -> list[Build]:
    return [Build(name, tuple(int(p) for p in v.split(".")), v, Path("/" + v), {}) for v in versions]


def test_also_serves_widens_same_major_and_keeps_own_majors_first():
    catalog = cat.parse_catalog(json.dumps({"libraries": [{"npm": "swiper", "builds": [
        {"version": "11.2.10", "also_serves": {"min": "7", "below": "11"}, "examples": ["u"]},
        {"version": "8.4.7", "alias": "swiper-8", "examples": ["u"]}]}]}))
    lib, = libraries_from(catalog)
    new, old = _builds("swiper", "11.2.10", "8.4.7")
    assert lib.order(parse_spec("9.4.1"), "", [new, old]) == [new]
    assert lib.order(parse_spec("8"), "", [new, old]) == [old, new]  # its own major first, then the range
    assert lib.order(parse_spec("6.8.4"), "", [new, old]) == []
    assert lib.order(parse_spec(""), "", [old, new]) == [new, old]


@pytest.mark.parametrize("url, npm", [
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.min.css", "font-awesome"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css", "@fortawesome/fontawesome-free"),
    ("https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.16.1/umd/popper.min.js", "popper.js"),
    ("https://cdnjs.cloudflare.com/ajax/libs/popper.js/2.11.8/umd/popper.min.js", "@popperjs/core"),
    ("https://maxcdn.bootstrapcdn.com/font-awesome/4.7.0/css/font-awesome.min.css", "font-awesome"),
    ("https://stackpath.bootstrapcdn.com/bootstrap/4.5.2/css/bootstrap.min.css", "bootstrap"),
])
def test_shared_cdnjs_names_go_to_the_package_holding_the_major(url, npm):
    assert parse_url(url).name == npm


@pytest.mark.parametrize("url, spec, path", [
    ("https://cdn.plot.ly/plotly-2.27.0.min.js", "2.27.0", "plotly.min.js"),
    ("https://cdn.plot.ly/plotly-latest.min.js", "1.58.5", "plotly.min.js"),
    ("https://cdn.plot.ly/plotly-gl3d-2.35.2.min.js", "2.35.2", "plotly.min.js"),
    ("https://use.fontawesome.com/releases/v5.15.4/webfonts/fa-solid-900.woff2", "5.15.4",
     "webfonts/fa-solid-900.woff2"),
    ("https://code.jquery.com/jquery-latest.min.js", "1.11.1", "jquery.min.js"),
])
def test_new_url_shapes(url, spec, path):
    ask = parse_url(url)
    assert (ask.spec, ask.path) == (spec, path)


def test_material_icon_url_shapes():
    ask = parse_url("https://fonts.googleapis.com/icon?family=Material+Icons|Material+Icons+Outlined")
    assert [f.family for f in ask.families] == ["Material Icons", "Material Icons Outlined"]
    ask = parse_url("https://fonts.googleapis.com/css2?family=Material+Symbols+Outlined:"
                    "opsz,wght,FILL,GRAD@20..48,100..700,0..1,-50..200&icon_names=home,search")
    assert ask.families[0].faces == (("normal", 100, 700),)


# ---------------------------------------------------------------------------------------------
# every example, through the installed mirror


@needs_mirror
def test_installed_builds_are_the_catalogs():
    for lib in CATALOG.libraries:
        assert REAL.versions.get(lib.npm) == sorted((b.version for b in lib.builds),
                                                    key=lambda v: tuple(int(p) for p in v.split("."))), lib.npm
    for font in CATALOG.fonts:
        assert REAL.versions.get(font.npm) == [font.version], font.npm


@needs_mirror
@pytest.mark.parametrize("npm, version, url", LIBRARY_EXAMPLES)
def test_library_example_is_served_by_its_build(npm, version, url):
    hit = REAL.resolve(url)
    assert hit is not None, f"blocked: {url}"
    body, ctype, label = hit
    assert label.startswith(f"{npm}@{version} "), label
    served_file = label.split(" ", 2)[1]
    wanted = _EXPECTED_TYPE.get(Path(urlsplit(url).path).suffix.lower())
    if wanted is None:  # a bare package URL: its CDN entry, a script or a style sheet
        wanted = _EXPECTED_TYPE[Path(served_file).suffix.lower()]
        assert wanted in ("text/javascript", "text/css"), served_file
    assert ctype.startswith(wanted), (ctype, served_file)
    assert len(body) >= 500, f"{served_file}: {len(body)} bytes"
    if wanted == "text/javascript":
        assert not body.lstrip().startswith(b"<"), served_file


@needs_mirror
@pytest.mark.parametrize("font, url", FONT_EXAMPLES)
def test_font_example_css_and_files_are_served(font, url):
    hit = REAL.resolve(url)
    assert hit is not None, f"blocked: {url}"
    body, ctype, label = hit
    css = body.decode()
    assert ctype == "text/css; charset=utf-8"
    assert f"{font.npm}@{font.version}" in label.split(" ", 1)[0] and "missing" not in label, label
    assert css.count("@font-face") >= 1
    files = re.findall(r"url\(([^)]+)\)", css)
    assert files and all(f.endswith(".woff2") for f in files)
    for file_url in files:
        got = REAL.resolve(file_url)
        assert got is not None and got[1] == "font/woff2" and len(got[0]) > 1000, file_url
        assert got[2].startswith(font.npm + "@"), got[2]
    if font.family.startswith("Material "):
        cls = font.family.lower().replace(" ", "-")
        assert f".{cls} {{" in css and "'liga'" in css and "unicode-range" not in css


# ---------------------------------------------------------------------------------------------
# end to end, with the real renderer




def _canvas_rgb(rendering) -> np.ndarray:
    canvas = next(e for e in rendering.elements if e.tag == "canvas")
    img = Image.open(io.BytesIO(rendering.full_page_png)).convert("RGB")
    box = (int(canvas.x), int(canvas.y), int(canvas.x + canvas.w), int(canvas.y + canvas.h))
    return np.asarray(img.crop(box)).astype(int)


DATALABELS_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Quarterly sales</title>
<script src="https://cdn.jsdelivr.net/npm/chart.js@4.4.0/dist/chart.umd.min.js"></script>
%(plugin)s</head>
<body style="margin:0;background:#fff"><canvas id="c" width="600" height="400"></canvas><p id="out">-</p><script>
if (window.ChartDataLabels) Chart.register(ChartDataLabels);
new Chart(document.getElementById("c"), {type: "bar",
  data: {labels: ["Q1", "Q2", "Q3", "Q4"], datasets: [{data: [12, 19, 7, 15], backgroundColor: "#3b82f6"}]},
  options: {animation: false, responsive: false, layout: {padding: {top: 40}},
    plugins: {legend: {display: false},
      datalabels: {color: "#ff00ff", anchor: "end", align: "top", font: {size: 28, weight: "bold"}}}}});
document.getElementById("out").textContent = "chart " + Chart.version + " labels " + !!window.ChartDataLabels;
</script></body></html>"""
DATALABELS_SCRIPT = ('<script src="https://cdn.jsdelivr.net/npm/chartjs-plugin-datalabels@2.2.0/dist/'
                     'chartjs-plugin-datalabels.min.js"></script>')


@pytest.mark.slow
async def test_chartjs_datalabels_page_draws_its_labels(vendored):
    """The case that motivated the catalog: a Chart.js 4 page with chartjs-plugin-datalabels from
    jsDelivr draws its value labels (magenta here), which the same page without the plugin lacks."""
    with_labels = await vendored.render(DATALABELS_PAGE % {"plugin": DATALABELS_SCRIPT})
    without = await vendored.render(DATALABELS_PAGE % {"plugin": ""})
    for r in (with_labels, without):
        assert r.status.value == "ok" and not r.page_errors, r.page_errors
    assert element_by_id(with_labels, "out").text.startswith("chart 4.") and element_by_id(with_labels, "out").text.endswith(
        "labels true")
    assert element_by_id(without, "out").text.endswith("labels false")

    def counts(rendering) -> tuple[int, int]:
        px = _canvas_rgb(rendering)
        r, g, b = px[..., 0], px[..., 1], px[..., 2]
        magenta = int(((r > 200) & (g < 90) & (b > 200)).sum())
        blue = int(((abs(r - 59) < 8) & (abs(g - 130) < 8) & (abs(b - 246) < 8)).sum())
        return magenta, blue

    labels_on, bars_on = counts(with_labels)
    labels_off, bars_off = counts(without)
    assert bars_on > 5000 and bars_off > 5000  # the chart is drawn either way
    assert labels_on > 300 and labels_off == 0  # four bold 28px numbers only with the plugin
    served = {r.url: r.detail for r in with_labels.requests if r.detail}
    assert served[DATALABELS_SCRIPT.split('"')[1]].startswith("chartjs-plugin-datalabels@2.2.0 ")


SYMBOLS_CSS = ("https://fonts.googleapis.com/css2?family=Material+Symbols+Outlined:"
               "opsz,wght,FILL,GRAD@20..48,100..700,0..1,-50..200")
MATERIAL_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>icons</title>
<link href="https://fonts.googleapis.com/icon?family=Material+Icons" rel="stylesheet">
<link href="%s" rel="stylesheet"></head>
<body><span id="mi" class="material-icons">home</span> <span id="ms" class="material-symbols-outlined">search</span>
<p id="out">-</p><script>
document.fonts.ready.then(() => Promise.all([document.fonts.load("24px 'Material Icons'", "home"),
                                             document.fonts.load("24px 'Material Symbols Outlined'", "search")]))
  .then(() => { document.getElementById("out").textContent = "icons " + document.fonts.check("24px 'Material Icons'")
    + " symbols " + document.fonts.check("24px 'Material Symbols Outlined'"); });
</script></body></html>""" % SYMBOLS_CSS


@pytest.mark.slow
async def test_material_icon_ligatures_render_as_glyphs(vendored, bare_renderer):
    """The icon endpoint's class rule and ligatures: the word `home` becomes one 24px glyph."""
    r = await vendored.render(MATERIAL_PAGE)
    assert element_by_id(r, "out").text == "icons true symbols true"
    for ident in ("mi", "ms"):
        icon = element_by_id(r, ident)
        assert icon.font_size == 24 and icon.w <= 26, (ident, icon.w)  # one glyph, not a word
    bare = await bare_renderer.render(MATERIAL_PAGE)
    assert element_by_id(bare, "mi").w > 30  # blocked: the word itself, in a text font
