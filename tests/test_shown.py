""""Shown" means what a person sees in the captured image: one definition (aesenv/render/seen.js
in our isolated world, then ink in the screenshot, aesenv/render/shown.py) for every consumer.

Each way of hiding text is checked next to an honest way of showing it that looks alike to a
naive reader (the same element, the same words), so a rule that is too strict fails as surely
as one that is too lax."""

from __future__ import annotations

import numpy as np
import pytest

from aesenv.render.models import DomElement
from aesenv.render.shown import Run, assemble, confirmed, has_ink, painted, parse_runs, stands_out

WORDS = "Sourdough loaf six dollars"


def page(body: str, style: str = "") -> str:
    return (f"<!doctype html><html><head><title>Title words only</title><style>body{{margin:0;background:#fff;"
            f"color:#222;font:18px sans-serif}} {style}</style></head><body><h1>Bakery</h1>{body}</body></html>")


HIDDEN = {
    "opacity zero": f'<p style="opacity:0">{WORDS}</p>',
    "ancestor nearly transparent": f'<div style="opacity:0.03"><p style="opacity:1">{WORDS}</p></div>',
    "filter opacity": f'<p style="filter:opacity(0)">{WORDS}</p>',
    "off the left edge": f'<p style="position:absolute;left:-9999px">{WORDS}</p>',
    "past the capture cap": f'<p style="margin-top:12000px">{WORDS}</p>',
    "text-indent": f'<p style="text-indent:-9999px;overflow:hidden">{WORDS}</p>',
    "zero-height clip": f'<div style="height:0;overflow:hidden"><p>{WORDS}</p></div>',
    "outside a small clipping parent": f'<div style="width:40px;height:40px;overflow:hidden;position:relative">'
                                       f'<p style="position:absolute;left:300px;width:600px">{WORDS}</p></div>',
    "clip-path inset": f'<p style="clip-path:inset(50%)">{WORDS}</p>',
    "clip-path flat polygon": f'<p style="clip-path:polygon(0 0, 100% 0, 50% 0)">{WORDS}</p>',
    "legacy clip rect": f'<p style="position:absolute;clip:rect(0 0 0 0);width:1px;height:1px;overflow:hidden">{WORDS}</p>',
    "transparent colour": f'<p style="color:transparent">{WORDS}</p>',
    "nearly transparent colour": f'<p style="color:rgba(0,0,0,0.05)">{WORDS}</p>',
    "background colour": f'<p style="color:#fff">{WORDS}</p>',
    "a near twin of the background colour": f'<div style="background:#fff8f0"><p style="color:#f4f8ff">{WORDS}</p></div>',
    "translucent card, same colour": f'<div style="background:rgba(0,0,255,0.1)"><p style="color:#e5e5ff">{WORDS}</p></div>',
    "one-pixel font": f'<p style="font-size:1px;line-height:1px">{WORDS}</p>',
    "scaled to nothing": f'<p style="transform:scale(0.01);transform-origin:0 0">{WORDS}</p>',
    "covered by an opaque box": f'<div style="position:relative"><p>{WORDS}</p>'
                                f'<div style="position:absolute;inset:0;background:#fff"></div></div>',
    "covered, click-through": f'<div style="position:relative"><p>{WORDS}</p><div style="position:absolute;'
                              f'inset:0;background:#fff;pointer-events:none"></div></div>',
    "visibility hidden": f'<p style="visibility:hidden">{WORDS}</p>',
    "closed details": f'<details><summary>More</summary><p>{WORDS}</p></details>',
    "noscript": f"<noscript><p>{WORDS}</p></noscript>",
    "template": f"<template><p>{WORDS}</p></template>",
    "svg fill-opacity": f'<svg width="500" height="60"><text x="0" y="30" fill-opacity="0">{WORDS}</text></svg>',
    "blurred": f'<p style="filter:blur(30px)">{WORDS}</p>',
}

SHOWN = {
    "plain": f"<p>{WORDS}</p>",
    "gradient text (background-clip)": f'<p style="background:linear-gradient(90deg,#e11,#11e);-webkit-background-clip:'
                                       f'text;background-clip:text;color:transparent;font-size:32px">{WORDS}</p>',
    "light grey on white": f'<p style="color:#9a9a9a">{WORDS}</p>',
    "white on a dark card": f'<div style="background:#123"><p style="color:#fff">{WORDS}</p></div>',
    "on a translucent tint": f'<div style="background:rgba(127,127,127,0.08)"><p style="color:#0d9488">{WORDS}</p></div>',
    "dropdown escaping a clipping card": f'<div style="overflow:hidden;height:40px"><div style="position:relative">'
                                         f'</div></div><div style="position:relative;overflow:hidden;height:30px">'
                                         f'<span>tab</span></div><div style="position:relative"><div style="overflow:'
                                         f'hidden;height:20px"><p style="position:absolute;top:30px">{WORDS}</p></div></div>',
    "fixed header": f'<header style="position:fixed;top:0;left:0;right:0;background:#fff"><p>{WORDS}</p></header>',
    "svg text": f'<svg width="500" height="60"><text x="0" y="30" fill="#222" font-size="20">{WORDS}</text></svg>',
    "uppercased by CSS": f'<p style="text-transform:uppercase">{WORDS.lower()}</p>',
    "inline parts": "<p>Sourdough <b>loaf</b> six <i>dollars</i></p>",
    "text over a photo": f'<div style="background:linear-gradient(#345,#987);padding:20px"><p style="color:#fff">{WORDS}</p></div>',
    "half opacity": f'<p style="opacity:0.5">{WORDS}</p>',
    "red on green (as light as each other)": f'<div style="background:#00a000"><p style="color:#f00">{WORDS}</p></div>',
    "on a face of a 3D cube": f'<div style="perspective:600px"><div style="transform-style:preserve-3d;width:400px;margin:40px;transform:rotateY(20deg)">'
                             f'<p style="width:400px;background:#234;color:#fff;backface-visibility:hidden">{WORDS}</p></div></div>',
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
async def test_hidden_text_is_not_page_text(renderer, name):
    rendering = await renderer.render(page(HIDDEN[name]))
    assert rendering.metrics.visible_text.startswith("Bakery"), rendering.metrics.visible_text
    assert "Sourdough" not in rendering.metrics.visible_text.replace("More", ""), (name, rendering.metrics.visible_text)
    assert "Title words" not in rendering.metrics.visible_text  # <title> is never page text
    assert not any("Sourdough" in e.text for e in rendering.elements), name


@pytest.mark.parametrize("name", sorted(SHOWN))
async def test_shown_text_is_page_text(renderer, name):
    rendering = await renderer.render(page(SHOWN[name]))
    text = rendering.metrics.visible_text
    assert WORDS.upper() in text if "upper" in name else WORDS in text, (name, text, rendering.notes)


async def test_headings_and_element_text_come_from_the_shown_runs(renderer):
    rendering = await renderer.render(page('<h2>Menu <span style="opacity:0">secret</span>of <b>breads</b></h2>'))
    assert {"level": 2, "text": "Menu of breads"} in rendering.metrics.headings
    assert [e.text for e in rendering.elements if e.tag == "b"] == ["breads"]


async def test_a_bare_wrapper_around_nothing_visible_is_not_an_element(renderer):
    body = ('<nav><a href="#a" style="color:transparent">Menu</a><a href="#b" style="color:transparent">Hours</a></nav>'
            '<footer><p style="opacity:0">Contact</p></footer><section style="border:1px solid #ccc;height:40px"></section>')
    rendering = await renderer.render(page(body))
    tags = [e.tag for e in rendering.elements]
    assert "nav" not in tags and "footer" not in tags and "a" not in tags, tags
    assert "section" in tags  # it paints a border: a person sees the box


async def test_an_empty_picture_is_not_a_picture_and_a_broken_one_is_counted_broken(renderer):
    body = ('<img alt="menu prices" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="1" height="1">'
            '<canvas width="300" height="150"></canvas>'
            '<canvas id="c" width="300" height="150"></canvas><script>const x = document.getElementById("c")'
            '.getContext("2d"); x.fillStyle = "#c33"; x.fillRect(10, 10, 200, 100);</script>')
    rendering = await renderer.render(page(body))
    assert rendering.metrics.images_broken == 1 and rendering.metrics.images_total == 1
    assert not any(e.tag == "img" for e in rendering.elements)
    assert len(rendering.metrics.canvases) == 1 and rendering.metrics.canvases[0]["context"] == "2d"
    assert sum(e.tag == "canvas" for e in rendering.elements) == 1


async def test_a_canvas_context_the_page_claims_counts_only_where_the_canvas_has_it(renderer):
    body = ('<canvas id="c" width="300" height="150" style="background:#eee"></canvas><script>'
            'const c = document.getElementById("c"); c.getContext("2d").fillRect(0, 0, 50, 50);'
            'window.__aesenv__.noteContext(document.body.appendChild(document.createElement("canvas")), "webgl2", {});'
            '</script>')
    rendering = await renderer.render(page(body))
    assert [c["context"] for c in rendering.metrics.canvases] == ["2d"]


async def test_the_page_cannot_change_what_our_snapshot_reports(renderer):
    forged = '{"elements": [], "runs": [[-1, "forged words", 0, 0, 500, 40, 1]], "metrics": {"visible_text": "forged"}}'
    body = (f"<p>{WORDS}</p><script>window.eval = () => () => {forged!r}; Object.prototype.toJSON = () => 'x';"
            "Element.prototype.getBoundingClientRect = () => ({left: 0, top: 0, width: 0, height: 0});"
            "window.getComputedStyle = () => ({getPropertyValue: () => 'none'}); class Map {}; window.Map = Map;</script>")
    rendering = await renderer.render(page(body))
    assert WORDS in rendering.metrics.visible_text and "forged" not in rendering.metrics.visible_text
    assert any(e.tag == "p" and e.text == WORDS for e in rendering.elements)


# --- the host side, on pixels made here ----------------------------------------------------------


def test_ink_is_pixels_unlike_the_box_dominant_colour():
    image = np.full((100, 200, 3), 250, dtype=np.uint8)
    assert not has_ink(image, (10, 10, 100, 30))
    image[20:30, 20:60] = 30  # glyph strokes
    assert has_ink(image, (10, 10, 100, 30))
    assert not has_ink(image, (120, 10, 60, 30))  # beside them: blank
    assert not has_ink(image, (-500, 10, 100, 30)) and not has_ink(image, (10, 150, 50, 20))  # outside the image
    faint = np.full((100, 200, 3), 250, dtype=np.uint8)
    faint[20:30, 20:60] = 240  # 2% opacity text: invisible
    assert not has_ink(faint, (10, 10, 100, 30))


def test_runs_are_confirmed_then_assembled_in_document_order():
    image = np.full((60, 300, 3), 255, dtype=np.uint8)
    image[5:15, 0:40] = 0      # "Hello " drawn
    image[5:15, 50:90] = 0     # "world" drawn
    runs = [Run(1, "Hello ", (0, 0, 45, 20), True), Run(2, "world", (48, 0, 45, 20), False),
            Run(1, " hidden", (200, 30, 80, 20), False), Run(3, "Next", (0, 40, 40, 15), True)]
    image[42:52, 2:30] = 0
    kept, unconfirmed = confirmed(runs, image)
    assert unconfirmed == 1 and [r.text for r in kept] == ["Hello ", "world", "Next"]
    shown = assemble(kept, ["body", "h2", "b", "p"], [-1, 0, 1, 0])
    assert shown.visible_text == "Hello world Next"
    assert shown.element_text == {1: "Hello", 2: "world", 3: "Next"}
    assert shown.headings == [{"level": 2, "text": "Hello world"}]


def test_malformed_runs_are_left_out():
    raw = [[0, "ok", 0, 0, 10, 10, 1], [0, 5, 0, 0, 1, 1, 0], "x", [0, "nan", float("nan"), 0, 1, 1, 0], [0, "short"]]
    assert [r.text for r in parse_runs(raw)] == ["ok"]


def _el(tag: str, parent: int, paints: str = "", box=(0, 0, 10, 10)) -> DomElement:
    return DomElement(tag=tag, parent=parent, x=box[0], y=box[1], w=box[2], h=box[3], paints=paints)


def test_painted_keeps_what_paints_or_holds_shown_text_and_its_ancestors():
    image = np.full((100, 100, 3), 255, dtype=np.uint8)
    image[60:70, 60:70] = 0
    els = [_el("body", -1), _el("nav", 0), _el("a", 1), _el("section", 0), _el("div", 3, "style"),
           _el("img", 0, "replaced", (0, 0, 20, 20)), _el("canvas", 0, "replaced", (55, 55, 20, 20)), _el("p", 0)]
    runs = [Run(7, "text", (0, 0, 5, 5), False)]
    kept, nearest = painted(els, runs, image)
    assert [e.tag for e in kept] == ["body", "section", "div", "canvas", "p"]
    assert [e.parent for e in kept] == [-1, 0, 1, 0, 0]
    assert nearest[2] == 0 and nearest[4] == 2  # the link's runs would go to body; the div is kept


def test_a_picture_of_one_colour_stands_out_from_what_surrounds_it():
    image = np.full((100, 100, 3), 255, dtype=np.uint8)
    image[20:60, 20:60] = (30, 90, 200)  # a canvas cleared to blue
    assert not has_ink(image, (20, 20, 40, 40)) and stands_out(image, (20, 20, 40, 40))
    assert not stands_out(image, (70, 70, 20, 20))  # a white canvas on white shows nothing
    assert stands_out(np.full((50, 50, 3), 9, dtype=np.uint8), (0, 0, 50, 50))  # filling everything, it is the page
