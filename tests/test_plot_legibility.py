"""A figure's text names something (title, axis label, tick label, legend entry, annotation) and
its words count only where a reader can read it as the figure is displayed: glyphs at least
MIN_LEGIBLE_PX to the em (a 10-arc-minute capital, a Snellen 6/12 letter, at the CSS reference
pixel) once a figure wider than DISPLAY_WIDTH_PX is scaled to fit. The size is the one drawn
(the font size of the clean copy times the smallest scale of its transform), per run of
characters. Smaller text is "small": it fills no role and counts only against the figure.

The forgeries (tiny text by font size, by a squeezing transform, by a huge figure, by a low dpi)
are in benchmarks/forgeries/plot-tiny-text-*; here, the rule itself, and honest text just above
and below it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import matplotlib.pyplot as plt
from aesenv.kinds.plot.figures import draw_scene
from aesenv.kinds.plot.drawn import describe_scene
from aesenv.kinds.plot.judge import OfflinePlotJudge
from aesenv.kinds.plot.legibility import DISPLAY_WIDTH_PX, MIN_LEGIBLE_PX, legible
from aesenv.kinds.plot.svg_scene import parse_transform, read_scene, smallest_scale
from aesenv.tasks import Task
from support.plots import draw

TASK = Task(id="bars", kind="plot", category="Data Visualization",
            prompt="Grouped bar chart of quarterly revenue (million USD) in 2023 and 2024, with a legend.")
QUARTERS = ["Q1", "Q2", "Q3", "Q4"]


def test_the_legible_size_is_a_10_arcminute_capital_at_the_reference_pixel():
    assert MIN_LEGIBLE_PX == pytest.approx(10 / (0.0213 * 60) / (1493 / 2048), rel=1e-9)
    assert 10.7 < MIN_LEGIBLE_PX < 10.8
    assert legible(8 * 100 / 72, 800) and not legible(7 * 100 / 72, 800)  # 8 pt at 100 dpi is; 7 pt is not
    width = DISPLAY_WIDTH_PX * (10 * 100 / 72) / MIN_LEGIBLE_PX  # where 10 pt at 100 dpi stops being legible
    assert legible(10 * 100 / 72, width - 1) and not legible(10 * 100 / 72, width + 1)
    assert 1650 < width < 1665


@pytest.mark.parametrize("transform,expected", [
    ("rotate(-90 10 10)", 1.0), ("scale(2)", 2.0), ("scale(4 0.25)", 0.25), ("scale(0.25 4)", 0.25),
    ("rotate(30) scale(3 0.5)", 0.5), ("skewX(60)", None), ("matrix(0 0 0 0 5 5)", 0.0),
])
def test_a_glyph_is_as_small_as_its_thinnest_side(transform, expected):
    m = parse_transform(transform)
    if expected is None:  # a skew: the singular values of [[1, tan 60°], [0, 1]]
        t = math.tan(math.radians(60))
        expected = math.sqrt((2 + t * t - math.sqrt((2 + t * t) ** 2 - 4)) / 2)
    assert smallest_scale(m) == pytest.approx(expected, abs=1e-9)


def labelled_bars(size: float, figsize=(8, 5), dpi=100, title: float | None = None):
    def build():
        fig, ax = plt.subplots(figsize=figsize, dpi=dpi)
        x = np.arange(4)
        ax.bar(x - 0.2, [12, 15, 14, 18], 0.4, color="#4c72b0", label="2023")
        ax.bar(x + 0.2, [13, 17, 16, 21], 0.4, color="#dd8452", label="2024")
        ax.set_xticks(x, QUARTERS)
        ax.tick_params(labelsize=size)
        ax.set_title("Quarterly revenue in million USD", fontsize=title or size)
        ax.set_xlabel("Quarter", fontsize=size)
        ax.set_ylabel("Revenue (million USD)", fontsize=size)
        ax.legend(fontsize=size)
    return build


def roles(figure) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in figure.meta["texts"]:
        out.setdefault(t["role"], []).append(t["text"])
    return out


async def test_small_but_legible_text_keeps_its_roles(renderer):
    """8 pt at 100 dpi (11.1 px to the em): the title, both axis labels, the legend and the tick
    labels are all read."""
    (figure,) = await draw(renderer, labelled_bars(8))
    (ax,) = figure.meta["axes"]
    assert (ax["title"], ax["xlabel"], ax["ylabel"]) == ("Quarterly revenue in million USD", "Quarter",
                                                         "Revenue (million USD)")
    assert ax["legend"]["entries"] == ["2023", "2024"]
    assert roles(figure)["xtick"] == QUARTERS and "small" not in roles(figure)


async def test_text_under_the_legible_size_fills_no_role(renderer):
    """7 pt at 100 dpi (9.7 px): drawn, so it counts against the figure's font size, but it names
    nothing: no title, no axis labels, no legend, no tick labels, none of its words."""
    judge = OfflinePlotJudge()
    (small,) = await draw(renderer, labelled_bars(7))
    (ax,) = small.meta["axes"]
    assert (ax["title"], ax["xlabel"], ax["ylabel"], ax["legend"]) == ("", "", "", None)
    assert set(roles(small)) == {"small"} and "Quarter" in roles(small)["small"]
    assert any("under the legible" in note for note in small.meta["dropped_texts"])
    verdict = judge.judge_sync(TASK, [small])
    assert verdict.evidence["alignment"]["title"]["points"] == 0
    assert verdict.evidence["aesthetics"]["axis_labels"]["points"] == 0
    assert verdict.evidence["alignment"]["prompt_terms"]["found"] == []
    assert verdict.evidence["aesthetics"]["font_size"]["points"] < 8  # the small text still counts against it
    assert judge.judge_sync(TASK, await draw(renderer, labelled_bars(8))).total > verdict.total


@pytest.mark.parametrize("inches,read", [(16, True), (17, False)])
async def test_a_wide_figure_is_read_at_its_display_width(renderer, inches, read):
    """10 pt at 100 dpi stays legible in a figure up to ~1658 px wide: 1600 px is read, 1700 px
    (shown at 1280) is not; its 14 pt title is read in both."""
    (figure,) = await draw(renderer, labelled_bars(10, figsize=(inches, 6), title=14))
    (ax,) = figure.meta["axes"]
    assert ax["title"] == "Quarterly revenue in million USD"
    assert (ax["xlabel"] == "Quarter") is read and (ax["legend"] is not None) is read


async def test_a_tiny_or_invisible_run_beside_legible_text_is_not_read(renderer):
    """The size and colour are checked per run of characters (a tspan), not per text element:
    words appended to a legible title in a 2 px or a transparent run are not read with it."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">'
           '<rect width="400" height="200" style="fill:#ffffff"/>'
           '<text x="20" y="60" style="font-size:20px;font-family:DejaVu Sans;fill:#000000">Revenue'
           '<tspan x="120" y="60" style="font-size:2px"> quarterly million USD</tspan>'
           '<tspan x="150" y="60" style="fill-opacity:0"> 2023 2024</tspan></text>'
           '<text x="20" y="140" transform="translate(20 140) scale(4 0.25) translate(-20 -140)" '
           'style="font-size:20px;font-family:DejaVu Sans;fill:#000000">Quarter</text></svg>')
    scene = read_scene(svg, dpi=None)
    png, pixels, boxes = await draw_scene(renderer, scene)
    meta = describe_scene(scene, pixels, boxes, 96.0)
    texts = {t["text"]: t["role"] for t in meta["texts"]}
    assert texts == {"Revenue": "annotation", "Quarter": "small"}, meta["texts"]
