"""The host's reading of a figure's SVG (`plots.svg_scene`) and of its drawing (`plots.drawn`):
bounded, data-only parsing; a clean copy that holds only what was understood; opacity along
groups, clips, colours with alpha; texts shown only when legible in the picture; roles and mark
kinds from geometry. No browser here: pictures are painted with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from aesenv.kinds.plot import drawn
from aesenv.kinds.plot.svg_scene import (BadFigure, MAX_DEPTH, parse_path, parse_transform, read_scene)

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def svg(body: str, size: str = 'width="200" height="100"') -> str:
    return f"<svg {NS} {size}>{body}</svg>"


def only(scene, kind):
    items = [i for i in scene.items if i.kind == kind]
    assert len(items) == 1, items
    return items[0]


# ---------------------------------------------------------------------------------------------
# values and geometry


def test_transforms_compose_like_svg():
    m = parse_transform("translate(10 20) rotate(90 5 5) scale(2)")
    # (1, 0) scaled to (2, 0), rotated 90° about (5, 5) to (10, 2), translated to (20, 22)
    a, b, c, d, e, f = m
    assert np.allclose([a * 1 + c * 0 + e, b * 1 + d * 0 + f], [20, 22])
    with pytest.raises(BadFigure):
        parse_transform("matrix(1 0 0 1 1e400 0)")
    with pytest.raises(BadFigure):
        parse_transform("warp(3)")


def test_relative_paths_arcs_and_closing():
    data = parse_path("m 10 10 h 20 v 10 l -20 0 z")
    assert data.closed == [True] and not data.curved
    assert np.allclose(data.subpaths[0], [[10, 10], [30, 10], [30, 20], [10, 20], [10, 10]])
    circle = parse_path("M3,0A3,3 0 1,1 0,-3A3,3 0 0,1 3,0Z")  # plotly's marker
    pts = circle.subpaths[0]
    assert circle.curved and pts[:, 0].min() < -2.9 and pts[:, 1].max() > 2.9  # the arc's far side, not a chord
    with pytest.raises(BadFigure):
        parse_path("M 1 2 L 3")


def test_opacity_multiplies_along_groups_and_alpha_colours_count():
    scene = read_scene(svg('<g style="opacity:0.5"><g opacity="0.5"><text x="5" y="50" '
                           'style="fill-opacity:0.5;font-size:10px">a</text></g></g>'
                           '<text x="5" y="80" style="fill:rgba(0,0,0,0);font-size:10px">b</text>'
                           '<path d="M 0 0 L 10 10" style="stroke:#ff000080;stroke-width:2"/>'))
    a, b = scene.texts
    assert a.visible_fill == pytest.approx(0.125) and b.visible_fill == 0
    assert only(scene, "path").visible_stroke == pytest.approx(128 / 255, abs=0.01)


def test_what_is_not_drawn_is_not_read_and_not_copied():
    scene = read_scene(svg(
        '<g style="display:none"><text x="1" y="20">hidden group</text></g>'
        '<text x="1" y="40" visibility="hidden">hidden text</text>'
        '<g mask="url(#m)"><text x="1" y="60">masked</text></g>'
        '<text x="1" y="70" textLength="0">squeezed</text>'
        '<defs><text id="d" x="1" y="80">in defs</text></defs>'
        '<script>alert(1)</script><foreignObject><div>html</div></foreignObject>'
        '<title>a title element</title>'
        '<image href="https://example.com/x.png" width="10" height="10"/>'
        '<a href="javascript:alert(1)" onclick="x()"><text x="1" y="90" onmouseover="y()">linked</text></a>'))
    assert [t.text for t in scene.texts] == ["linked"]
    for banned in ("script", "foreignObject", "onclick", "onmouseover", "javascript", "example.com", "mask",
                   "textLength", "hidden", "in defs", "<title"):
        assert banned not in scene.svg, banned


def test_a_stylesheet_of_its_own_is_refused():
    with pytest.raises(BadFigure, match="stylesheet"):
        read_scene(svg('<style>.t{display:none}</style><text class="t" x="1" y="9">x</text>'))
    read_scene(svg('<defs><style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style></defs>'))


def test_clips_are_in_figure_pixels_and_can_clip_everything():
    scene = read_scene(svg('<defs><clipPath id="c"><rect x="10" y="10" width="50" height="20"/></clipPath>'
                           '<clipPath id="none"><rect x="0" y="0" width="0" height="0"/></clipPath></defs>'
                           '<g clip-path="url(#c)"><path d="M 0 0 L 100 100" style="stroke:#000"/></g>'
                           '<g clip-path="url(#none)"><text x="5" y="50">gone</text></g>',
                           'width="100pt" height="50pt" viewBox="0 0 100 50"'), dpi=144)
    line = only(scene, "path")
    assert line.clip_box == pytest.approx((20, 20, 120, 60))  # 2 px per point at 144 dpi
    assert scene.width == 200 and scene.height == 100
    text = only(scene, "text")
    assert drawn._area(text.clip_box) == 0


def test_markers_take_the_defs_style_and_stamp_where_used():
    scene = read_scene(svg('<defs><path id="m" d="M -2 -2 L 2 -2 L 2 2 L -2 2 Z" style="fill:#00ff00"/></defs>'
                           '<use xlink:href="#m" x="50" y="20" style="fill:#ff0000;stroke:#0000ff"/>'))
    marker = only(scene, "marker")
    assert marker.fill == (0, 255, 0) and marker.stroke == (0, 0, 255)
    assert marker.box == pytest.approx((48, 18, 52, 22))


@pytest.mark.parametrize("document,why", [
    ("<svg", "does not parse"),
    ('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg ' + NS + ' width="9" height="9">&a;</svg>',
     "does not parse"),
    (svg("<g>" * (MAX_DEPTH + 2) + "</g>" * (MAX_DEPTH + 2)), "nests deeper"),
    (svg("", 'width="0.5" height="0.5"'), "px"),
    ("<html/>", "not an SVG"),
])
def test_broken_documents_are_bad_figures(document, why):
    with pytest.raises(BadFigure, match=why):
        read_scene(document)


def test_huge_drawings_are_scaled_to_the_pixel_cap():
    scene = read_scene(svg("", 'width="5000pt" height="5000pt"'), dpi=300, max_pixels=1_000_000)
    assert scene.width * scene.height <= 1_000_000 * 1.01 and scene.width == scene.height


def test_an_embedded_image_bomb_is_refused_from_its_header():
    import base64
    import struct
    import zlib

    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 20000, 20000, 8, 2, 0, 0, 0)
    header += struct.pack(">I", zlib.crc32(header[12:29]))
    data = base64.b64encode(header).decode()
    with pytest.raises(BadFigure, match="20000x20000"):
        read_scene(svg(f'<image href="data:image/png;base64,{data}" width="10" height="10"/>'))


# ---------------------------------------------------------------------------------------------
# texts shown or not, in a painted picture


def _picture(width=200, height=100, background=(255, 255, 255)) -> np.ndarray:
    return np.full((height, width, 3), background, dtype=np.uint8)


def _paint(pixels, box, colour):
    x0, y0, x1, y1 = box
    pixels[y0:y1, x0:x1] = colour


def test_a_text_is_shown_only_when_legible_in_the_picture():
    scene = read_scene(svg('<text x="10" y="20" style="font-size:12px;fill:#000000">ink</text>'
                           '<text x="10" y="40" style="font-size:12px;fill:#ffffff">white</text>'
                           '<text x="10" y="60" style="font-size:2px;fill:#000000">speck</text>'
                           '<text x="10" y="80" style="font-size:12px;fill:#000000">covered</text>'
                           '<text x="300" y="20" style="font-size:12px;fill:#000000">away</text>'))
    pixels = _picture()
    _paint(pixels, (12, 10, 30, 19), (0, 0, 0))  # the glyphs of "ink" (the rest was painted over)
    _paint(pixels, (12, 30, 40, 39), (255, 255, 255))
    boxes = {"t0": (10, 8, 34, 22), "t1": (10, 28, 44, 42), "t2": (10, 58, 14, 61), "t3": (10, 68, 60, 82),
             "t4": (300, 8, 340, 22)}
    shown, dropped, cut = drawn.shown_texts(scene, drawn.Picture(pixels), boxes)
    assert [t.item.text for t in shown] == ["ink"]
    assert shown[0].box == (12, 10, 30, 19)  # its glyphs' box
    reasons = " ".join(dropped)
    for text, why in (("white", "behind"), ("speck", "px high"), ("covered", "no ink"), ("away", "off the figure")):
        assert f"'{text}': " in reasons and why in reasons
    assert [item.text for item, _ in cut] == ["away"]


# ---------------------------------------------------------------------------------------------
# roles and kinds from geometry


def _text(text, box, size=10.0, rotation=0.0):
    from aesenv.kinds.plot.svg_scene import Item

    item = Item(kind="text", order=0, hints=(), box=box, opacity=1.0, text=text, size_px=size, rotation=rotation)
    return drawn.ShownText(item, box, np.zeros(3))


def _panel(box):
    from aesenv.kinds.plot.svg_scene import Item

    panel = drawn.Panel(key="p", box=box)
    panel.decorations = [Item(kind="path", order=0, hints=(), box=(box[0], box[3], box[2], box[3]), opacity=1.0)]
    return panel


def test_roles_follow_from_where_texts_sit():
    upper, lower = _panel((100, 50, 500, 250)), _panel((100, 350, 500, 550))
    texts = {
        "ticks": [_text(f"{v}", (140 + 100 * i, 255, 160 + 100 * i, 265)) for i, v in enumerate("abcd")],
        "yticks": [_text(f"{v}", (80, 60 + 50 * i, 95, 70 + 50 * i)) for i, v in enumerate("wxyz")],
        "xlabel": [_text("Month", (280, 272, 320, 284))],
        "ylabel": [_text("Value", (60, 130, 72, 170), rotation=90)],
        "title": [_text("Upper title", (250, 30, 350, 44), size=12)],
        "lower title": [_text("Lower title", (250, 320, 350, 334), size=12)],
        "suptitle": [_text("Everything", (240, 5, 360, 20), size=14)],
    }
    everything = [t for group in texts.values() for t in group]
    drawn.assign_roles([upper, lower], everything, 600, 600)
    assert {t.role for t in texts["ticks"]} == {"xtick"} and {t.panel for t in texts["ticks"]} == {0}
    assert {t.role for t in texts["yticks"]} == {"ytick"}
    assert (texts["xlabel"][0].role, texts["xlabel"][0].panel) == ("xlabel", 0)
    assert (texts["ylabel"][0].role, texts["ylabel"][0].panel) == ("ylabel", 0)
    assert (texts["title"][0].role, texts["title"][0].panel) == ("title", 0)
    assert (texts["lower title"][0].role, texts["lower title"][0].panel) == ("title", 1)  # not the upper's xlabel
    assert texts["suptitle"][0].role == "suptitle"


def test_a_lone_text_is_not_a_tick_row_and_a_legend_needs_keys():
    panel = _panel((100, 50, 500, 250))
    lone = _text("note", (140, 255, 170, 265))
    drawn.assign_roles([panel], [lone], 600, 300)
    assert lone.role != "xtick"


def _rect_mark(box, artist):
    from aesenv.kinds.plot.svg_scene import Item

    x0, y0, x1, y1 = box
    outline = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]], dtype=float)
    item = Item(kind="path", order=0, hints=(artist,), box=box, opacity=1.0, fill=(10, 20, 30), fill_alpha=1.0,
                subpaths=[outline], closed=[True])
    return drawn.Mark(item, artist, "Rectangle", (10, 20, 30))


def test_rectangles_become_bars_meshes_or_boxes_by_their_arrangement():
    bars = [_rect_mark((10 + 30 * i, 100 - 10 * i, 30 + 30 * i, 200), f"patch_{i}") for i in range(4)]
    mesh = [_rect_mark((10 + 20 * c, 10 + 20 * r, 30 + 20 * c, 30 + 20 * r), "mesh") for r in range(3) for c in range(3)]
    boxes = [_rect_mark((10 + 40 * i, 50 + 17 * i, 30 + 40 * i, 90 + 9 * i), f"box_{i}") for i in range(3)]
    for marks, kind in ((bars, "Rectangle"), (mesh, "QuadMesh"), (boxes, "PathPatch")):
        drawn._classify_rects(marks)
        assert {m.kind for m in marks} == {kind}, kind
