""""Shown" means what a person sees in the captured image: one definition for every consumer (a first
filter, aesenv/render/seen.js in our isolated world, then the counterfactual: content counts where
taking it away changes the captured pixels, aesenv/render/counterfactual.py).

Each way of hiding text is checked next to an honest way of showing it that looks alike to a
naive reader (the same element, the same words), so a rule that is too strict fails as surely
as one that is too lax."""

from __future__ import annotations

import numpy as np
import pytest

from aesenv.render.models import DomElement
from aesenv.render.counterfactual import Item, Taken, apart, apca, judge_element, judge_text, needs_chars, plan
from aesenv.render.shown import Run, assemble, painted, parse_runs

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
    # Paint effects a list of properties does not read: only the pixels can say.
    "transparent mask": f'<p style="-webkit-mask-image:linear-gradient(transparent,transparent);'
                        f'mask-image:linear-gradient(transparent,transparent)">{WORDS}</p>',
    "SVG filter that zeroes alpha": '<svg width="0" height="0" style="position:absolute"><filter id="z"><feColorMatrix '
                                    'type="matrix" values="0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"/></filter></svg>'
                                    f'<p style="filter:url(#z)">{WORDS}</p>',
    "blend mode that paints nothing": f'<p style="color:#000;mix-blend-mode:lighten">{WORDS}</p>',
    "clip-path path": f'<p style="clip-path:path(\'M0 0 L1 0 L1 1 Z\')">{WORDS}</p>',
    "glyphs transparent, a far shadow as ink": f'<p style="color:transparent;text-shadow:0 300px 0 #000">{WORDS}</p>',
    "under its own parent's background": f'<div style="background:#fff"><p style="position:relative;z-index:-1">{WORDS}</p></div>',
    "covered, click-through, below the first screen": f'<div style="margin-top:1200px;position:relative"><p>{WORDS}</p>'
                                                      '<div style="position:absolute;inset:0;background:#fff;pointer-events:none">'
                                                      '</div></div>',
    "masked over stripes": '<div style="background:repeating-linear-gradient(90deg,#000 0 2px,#fff 2px 6px)">'
                           f'<p style="-webkit-mask-image:linear-gradient(transparent,transparent)">{WORDS}</p></div>',
    "content-visibility hidden": f'<div style="content-visibility:hidden"><p>{WORDS}</p></div>',
    "hidden until found": f'<div hidden="until-found"><p>{WORDS}</p></div>',
    "pale yellow on white": f'<p style="color:#ffff99">{WORDS}</p>',
    "transparent, over other text": '<div style="position:relative"><p>Lorem ipsum dolor sit amet consectetur</p>'
                                    f'<p style="position:absolute;top:0;left:0;margin:0;-webkit-text-fill-color:transparent">{WORDS}</p></div>',
    "a list box option not displayed": f'<select size="3"><option>Rye</option><option style="display:none">{WORDS}</option></select>',
    # The page answers our taking-away: a loop of its own (not on the frozen clock) watches the
    # masked copy and paints its box when the copy's glyphs go; and a style sheet that shows the
    # copy only while scripting is off. The page is frozen while we measure: neither runs.
    "a page that answers the taking-away": '<div style="position:relative"><p id="w" style="-webkit-mask-image:'
                                           f'linear-gradient(transparent,transparent)">{WORDS}</p><div id="o" style="'
                                           'position:absolute;inset:0"></div></div><script>const ch = new MessageChannel();'
                                           'ch.port1.onmessage = () => { const f = getComputedStyle(document.getElementById("w"))'
                                           '.webkitTextFillColor; document.getElementById("o").style.background = '
                                           'f === "rgba(0, 0, 0, 0)" ? "#000" : ""; ch.port2.postMessage(0); };'
                                           'ch.port2.postMessage(0);</script>',
    "painted over while scripting is off": '<style>@media (scripting: none) { #o { background: #000 } }</style>'
                                           '<div style="position:relative"><p style="-webkit-mask-image:linear-gradient('
                                           f'transparent,transparent)">{WORDS}</p><div id="o" style="position:absolute;'
                                           'inset:0"></div></div>',
    "in a shadow root, under a cover": '<div id="h"></div><script>const r = document.getElementById("h").attachShadow('
                                       '{mode: "closed"}); r.innerHTML = `<div style="position:relative"><p>' + WORDS
                                       + '</p><div style="position:absolute;inset:0;background:#fff;pointer-events:none">'
                                       '</div></div>`;</script>',
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
    "on a face of a 3D cube": f'<div style="perspective:600px"><div style="transform-style:preserve-3d;width:400px;margin:40px 140px;transform:rotateY(20deg)">'
                             f'<p style="width:400px;background:#234;color:#fff;backface-visibility:hidden">{WORDS}</p></div></div>',
    "in an open shadow root": '<div id="h"></div><script>document.getElementById("h").attachShadow({mode: "open"})'
                              f'.innerHTML = "<p>{WORDS}</p>";</script>',
    "in a closed shadow root": '<div id="h"></div><script>document.getElementById("h").attachShadow({mode: "closed"})'
                               f'.innerHTML = "<p>{WORDS}</p>";</script>',
    "in a declarative closed shadow root": f'<div><template shadowrootmode="closed"><p>{WORDS}</p></template></div>',
    "slotted into a shadow root": f'<div id="h"><span>{WORDS}</span></div><script>document.getElementById("h")'
                                  '.attachShadow({mode: "closed"}).innerHTML = "<p style=\'color:#123\'><slot></slot></p>";</script>',
    "an opaque mask": f'<p style="-webkit-mask-image:linear-gradient(#000,#000)">{WORDS}</p>',
    "stroke only": f'<p style="color:transparent;-webkit-text-stroke:1px #222;font-size:28px">{WORDS}</p>',
    "under a translucent veil": f'<div style="position:relative"><p>{WORDS}</p><div style="position:absolute;inset:0;'
                                'background:rgba(255,255,255,0.4)"></div></div>',
    "multiply on a tint": f'<div style="background:#fde"><p style="mix-blend-mode:multiply;color:#235">{WORDS}</p></div>',
    "open details": f'<details open><summary>More</summary><p>{WORDS}</p></details>',
    "visible inside a hidden parent": f'<div style="visibility:hidden"><p style="visibility:visible">{WORDS}</p></div>',
    "in a display: contents wrapper": f'<div style="display:contents"><p>{WORDS}</p></div>',
    "behind its own stacking context's background": '<div style="position:relative;z-index:0;background:#eef">'
                                                     f'<p style="position:relative;z-index:-1">{WORDS}</p></div>',
    "a list box option": f'<select size="3" style="width:400px"><option>{WORDS}</option><option>Rye</option></select>',
    "glowing": f'<p style="text-shadow:0 0 6px #f0f">{WORDS}</p>',
    "under a link colour transition": f'<p><a href="#" style="transition:color 2s,-webkit-text-fill-color 2s">{WORDS}</a></p>',
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


async def test_a_clipped_line_counts_the_characters_inside_the_clip(renderer):
    rendering = await renderer.render(page(f'<div style="width:150px;overflow:hidden;white-space:nowrap">{WORDS}</div>'))
    text = rendering.metrics.visible_text
    assert text.startswith("Bakery Sourdough") and WORDS not in text and "dollars" not in text, text
    masked = ('<p style="display:inline-block;-webkit-mask-image:linear-gradient(90deg,#000 50%,transparent 50%)">'
              f'{WORDS}</p>')
    text = (await renderer.render(page(masked))).metrics.visible_text
    assert "Sourdough" in text and "dollars" not in text, text


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


def _taken(before: np.ndarray, after: np.ndarray) -> Taken:
    return Taken(before, after, (0, 0), 1.0)


def _glyphs(image: np.ndarray, x0: int, x1: int, y0: int = 5, y1: int = 19, colour: int = 20) -> None:
    """Glyph-like strokes: vertical bars two pixels wide every four (about a character's ink)."""
    for x in range(x0, x1, 4):
        image[y0:y1, x:x + 2] = colour


def test_text_counts_where_taking_it_away_changed_its_boxes():
    before = np.full((40, 300, 3), 255, dtype=np.uint8)
    _glyphs(before, 0, 100)
    after = np.full_like(before, 255)
    verdict = judge_text(_taken(before, after), "Hello world", [(0, 0, 100, 24)])
    assert verdict.stretches == [(0, 11)] and verdict.lc > 60
    # the same pixels before and after: ink there, but not this text's
    assert judge_text(_taken(before, before.copy()), "Hello world", [(0, 0, 100, 24)]).stretches == []


def test_faint_or_tiny_text_is_not_shown_though_its_pixels_changed():
    before = np.full((40, 300, 3), 255, dtype=np.uint8)
    _glyphs(before, 0, 100, colour=235)  # pale on white: APCA well under 15
    verdict = judge_text(_taken(before, np.full_like(before, 255)), "Hello world", [(0, 0, 100, 24)])
    assert verdict.stretches == [] and "faint" in verdict.why
    tiny = np.full((40, 300, 3), 255, dtype=np.uint8)
    tiny[10:11, 0:12] = 0  # forty characters in a dozen pixels
    verdict = judge_text(_taken(tiny, np.full_like(tiny, 255)), "x" * 40, [(0, 0, 100, 24)])
    assert verdict.stretches == [] and "small" in verdict.why


def test_a_line_half_shown_is_judged_character_by_character():
    before = np.full((40, 300, 3), 255, dtype=np.uint8)
    _glyphs(before, 0, 60)  # only the first 60 px of a 120-px line changed
    taken = _taken(before, np.full_like(before, 255))
    rects = [(0, 0, 120, 24)]
    assert needs_chars(taken, rects)
    text = "abcdefghijkl"
    chars = [(10.0 * i, 0.0, 10.0, 24.0) for i in range(len(text))]
    assert judge_text(taken, text, rects, chars).stretches == [(0, 6)]
    whole = np.full((40, 300, 3), 255, dtype=np.uint8)
    _glyphs(whole, 0, 120)
    assert not needs_chars(_taken(whole, np.full_like(whole, 255)), rects)


def test_a_picture_shows_where_its_box_changed():
    before = np.full((100, 100, 3), 255, dtype=np.uint8)
    before[20:60, 20:60] = (30, 90, 200)
    assert judge_element(_taken(before, np.full_like(before, 255)), (20, 20, 60, 60))
    assert not judge_element(_taken(before, before.copy()), (20, 20, 60, 60))


def test_apca_signs_and_floor():
    assert apca(np.array([0, 0, 0]), np.array([255, 255, 255])) > 100
    assert apca(np.array([255, 255, 255]), np.array([0, 0, 0])) < -100
    assert abs(apca(np.array([255, 255, 224]), np.array([255, 255, 255]))) < 15  # pale yellow on white


def test_items_that_may_share_pixels_are_never_taken_away_together():
    a = Item(0, "text", [(0, 0, 100, 20)])
    b = Item(1, "text", [(50, 5, 150, 25)])        # over a
    c = Item(2, "text", [(0, 40, 100, 60)])        # clear of both
    d = Item(3, "text", [(0, 80, 100, 100)], wide=True)
    far = Item(4, "text", [(300, 0, 400, 20)], margin=260)  # its shadow reaches a
    groups = plan([a, b, c, d, far])
    together = {frozenset(i.id for i in g) for g in groups}
    assert not any({0, 1} <= g or {0, 4} <= g for g in together)
    assert frozenset({3}) in together and any({0, 2} <= g for g in together)


def test_a_box_clear_of_all_content_is_measured_with_it_and_one_over_content_waits():
    """`apart` picks the boxes that may share no pixel with any text or picture (a shadow counts):
    only those are taken away in the content's captures."""
    text = Item(0, "text", [(0, 0, 100, 20)])
    card = Item(1, "box", [(-10, -10, 120, 40)])         # behind the text
    divider = Item(2, "box", [(0, 60, 100, 62)])         # clear of it
    shadowed = Item(3, "box", [(0, 30, 100, 50)], margin=12)  # its shadow reaches the text
    assert [i.id for i in apart([card, divider, shadowed], [text])] == [2]
    assert apart([divider], []) == [divider]


def test_runs_are_assembled_in_document_order():
    runs = [Run(1, "Hello ", (0, 0, 45, 20), True), Run(2, "world", (48, 0, 45, 20), False), Run(3, "Next", (0, 40, 40, 15), True)]
    shown = assemble(runs, ["body", "h2", "b", "p"], [-1, 0, 1, 0])
    assert shown.visible_text == "Hello world Next"
    assert shown.element_text == {1: "Hello", 2: "world", 3: "Next"}
    assert shown.headings == [{"level": 2, "text": "Hello world"}]
    assert runs[0].part(1, 4).text == "ell" and runs[0].part(1, 4).gap


def test_malformed_runs_are_left_out():
    good = [0, "ok", 0, 0, 10, 10, 1, "", 0, 0, 0, [[0, 0, 10, 10]], 0]
    raw = [good, [0, 5, *good[2:]], "x", [0, "nan", float("nan"), *good[3:]], [0, "short"], good[:7]]
    assert [(r.text, r.rects) for r in parse_runs(raw)] == [("ok", [(0.0, 0.0, 10.0, 10.0)])]


def _el(tag: str, parent: int, paints: str = "", box=(0, 0, 10, 10), item: int = -1) -> DomElement:
    return DomElement(tag=tag, parent=parent, x=box[0], y=box[1], w=box[2], h=box[3], paints=paints, item=item)


def test_painted_keeps_what_paints_or_holds_shown_text_and_its_ancestors():
    els = [_el("body", -1), _el("nav", 0), _el("a", 1), _el("section", 0), _el("div", 3, "style"),
           _el("img", 0, "replaced", (0, 0, 20, 20), 0), _el("canvas", 0, "replaced", (55, 55, 20, 20), 1), _el("p", 0)]
    runs = [Run(7, "text", (0, 0, 5, 5), False)]
    kept, nearest = painted(els, runs, {0: False, 1: True})
    assert [e.tag for e in kept] == ["body", "section", "div", "canvas", "p"]
    assert [e.parent for e in kept] == [-1, 0, 1, 0, 0]
    assert nearest[2] == 0 and nearest[4] == 2  # the link's runs would go to body; the div is kept


CHANGING = page(
    '<button id="fav" onclick="this.firstChild.data = \'Remove from favourites\'">Add to favourites</button>'
    '<div id="results" style="min-height:40px;background:url(data:image/gif;base64,R0lGODlhAQABAAAAACw=)"></div>'
    f'<p id="masked" style="-webkit-mask-image:linear-gradient(transparent,transparent)">{WORDS}</p>'
    '<script>function fill() { document.getElementById("results").textContent = "3 recipes found"; }</script>')
READ = """() => { const N = globalThis.__aesenv__, seen = N.seen({}), doc = N.document;
  const el = (id) => N.all(doc, '#' + id)[0];
  return [seen.textIn(el('fav'), 200), seen.element(el('results')).shown, seen.textIn(el('results'), 200),
          seen.textIn(el('masked'), 200)]; }"""


async def test_a_verdict_holds_only_for_what_it_measured(renderer):
    """The counterfactual's verdicts are kept for later reads (labels, census, acceptance), but a
    button relabelled by a click or an empty box filled later is not what was measured: it is read
    again, while copy under a mask that the click left alone stays unshown."""
    async with renderer.session(CHANGING) as (rendering, live):
        assert WORDS not in rendering.metrics.visible_text and "Add to favourites" in rendering.metrics.visible_text
        before = await live.evaluate(READ)
        await live.evaluate_in_page("() => { document.getElementById('fav').click(); fill(); }")
        after = await live.evaluate(READ)
    assert before == ["Add to favourites", False, "", ""]
    assert after == ["Remove from favourites", True, "3 recipes found", ""]
