"""How large a figure's text must be drawn for a reader to read it: the one place that says so.

A figure is seen at one figure pixel per CSS pixel, scaled down to fit `DISPLAY_WIDTH_PX` when it
is wider (a figure is never scaled up: its pixels hold no more than they hold). 1280 CSS px is the
width the renderer shows a page at (`RenderConfig.viewport_width`), the desktop width a figure
shown in a browser is fitted to; VLM judges downscale wide figures too (Qwen2-VL's suggested
`max_pixels` is 1280·28·28, GPT-4o fits an image to a 768-px short side).

A CSS pixel subtends 0.0213° = 1.278′ of visual angle: the reference pixel of CSS Values and
Units Level 3 §5.2 (one pixel at 96 dpi seen from an arm's length of 28 in), which WCAG 2.2 takes
as its definition of a CSS pixel. The smallest letter a reader without visual impairment can
recognise subtends 10′: the Snellen optotype of visual acuity 6/12 (20/40) — a 6/6 letter subtends
5′ — and the WHO counts acuity worse than 6/12 as visual impairment (ICD-11 9D90, "mild"). A
letter's height is its capital height; DejaVu Sans (matplotlib's default font) draws capitals
1493/2048 = 0.729 em high. So a text is legible when its glyphs are
drawn at least 10′ / 1.278′ / 0.729 = 10.73 px to the em at the display scale: 8 pt at 100 dpi
(11.1 px) is, 7 pt (9.7 px) is not; matplotlib's default 10 pt at 100 dpi stays legible in a
figure up to 1658 px wide.

The size measured is the drawn one (`svg_scene`: the font size the clean copy is drawn with,
times the smallest scale of its transform, so a glyph squeezed along any direction is as small as
its smallest side), never a size the script reports.
"""

from __future__ import annotations

DISPLAY_WIDTH_PX = 1280.0
ARCMIN_PER_PX = 0.0213 * 60  # CSS Values and Units Level 3 §5.2: the reference pixel, 0.0213°
MIN_LETTER_ARCMIN = 10.0  # a Snellen 6/12 letter; the WHO's bound of unimpaired acuity (ICD-11 9D90)
CAP_HEIGHT_EM = 1493 / 2048  # DejaVu Sans: capital height over the em
MIN_LEGIBLE_PX = MIN_LETTER_ARCMIN / ARCMIN_PER_PX / CAP_HEIGHT_EM  # ≈ 10.73 px to the em, as displayed


def display_scale(figure_width_px: float) -> float:
    """How much a figure this wide (in its drawn pixels) is scaled for display (≤ 1)."""
    if figure_width_px <= 0:
        return 1.0
    return min(1.0, DISPLAY_WIDTH_PX / figure_width_px)


def displayed_px(size_px: float, figure_width_px: float) -> float:
    """A text's em size as displayed, from its drawn size in a figure this wide."""
    return size_px * display_scale(figure_width_px)


def legible(size_px: float, figure_width_px: float) -> bool:
    """Whether glyphs drawn `size_px` to the em in a figure this wide can be read as displayed."""
    return displayed_px(size_px, figure_width_px) >= MIN_LEGIBLE_PX
