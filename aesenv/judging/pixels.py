"""What the screenshot's pixels say where the DOM is silent: canvas scenes and loud palettes.

A canvas or WebGL page is one `<canvas>` element to the DOM: a galaxy of ten thousand particles
and a single grey cube on black look the same there. Their pixels do not. `scene_quality` reads
a region of the capture as a viewer would: how much of it is drawn, how much detail and tonal
range there is, how many colours, how far the drawing spreads over the frame. `loudness` finds
the garish palettes (large areas of saturated, bright colour in competing hues) that a designer
rejects at a glance and that pass every contrast check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aesenv.judging.base import ramp as _ramp


def hues(px: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hue in degrees, saturation 0-1, value 0-255) of an (N, 3) array of RGB pixels."""
    c = px.astype(np.float64)
    cmax, cmin = c.max(axis=1), c.min(axis=1)
    d = np.maximum(cmax - cmin, 1e-9)
    r, g, b = c[:, 0], c[:, 1], c[:, 2]
    h = np.where(cmax == r, ((g - b) / d) % 6, np.where(cmax == g, (b - r) / d + 2, (r - g) / d + 4)) * 60
    sat = np.where(cmax > 0, (cmax - cmin) / np.maximum(cmax, 1), 0.0)
    return h, sat, cmax


def scene_quality(region: np.ndarray) -> dict[str, Any]:
    """0-1 richness of a drawn region (H x W x 3, any stride), with the numbers behind it.
    Blank, flat or single-primitive frames score low; composed, detailed, colourful scenes high."""
    if region.ndim != 3 or region.shape[0] < 8 or region.shape[1] < 8:
        return {"score": 0.0, "note": "no drawable region"}
    px = region.reshape(-1, 3).astype(np.int32)
    codes = ((px[:, 0] >> 4) << 8) | ((px[:, 1] >> 4) << 4) | (px[:, 2] >> 4)
    bg_code = int(np.bincount(codes, minlength=4096).argmax())
    bg = px[codes == bg_code].mean(axis=0)
    drawn_mask = np.abs(region.astype(np.int32) - bg[None, None, :]).max(axis=2) > 24
    drawn_px = drawn_mask.reshape(-1)
    drawn = float(drawn_px.mean())
    # Colours and tone are read on what is drawn, not on the whole frame: a sparse bright drawing
    # on black is still a drawing, and a field of white dots is still one colour.
    weights = np.array([0.2126, 0.7152, 0.0722])
    if drawn_px.sum() >= 50:
        # Colour richness: how many colours it takes to cover 80% of the drawing (one for a flat
        # cube, dozens for shading and gradients). Tone: the drawing against its ground, or its
        # own range when it fills the frame.
        shares = np.sort(np.bincount(codes[drawn_px], minlength=4096))[::-1] / drawn_px.sum()
        colours = int(np.searchsorted(np.cumsum(shares), 0.8) + 1)
        lum = px[drawn_px] @ weights
        tonal = max(abs(float(np.percentile(lum, 90)) - float(bg @ weights)),
                    float(np.percentile(lum, 95) - np.percentile(lum, 5))) / 255.0
    else:
        colours, tonal = 0, 0.0
    h, w = region.shape[:2]
    bh, bw = max(1, h // 12), max(1, w // 16)
    blocks = region[: bh * 12, : bw * 16].astype(np.float64).reshape(12, bh, 16, bw, 3)
    detail = float((blocks.std(axis=(1, 3)).max(axis=2) > 10).mean())
    if drawn_mask.any():
        ys, xs = np.nonzero(drawn_mask)
        spread = float((np.percentile(xs, 95) - np.percentile(xs, 5)) / w * (np.percentile(ys, 95) - np.percentile(ys, 5)) / h)
    else:
        spread = 0.0
    parts = {
        "drawn": _ramp(drawn, 0.005, 0.3),
        "detail": _ramp(detail, 0.08, 0.6),
        "colours": _ramp(colours, 1, 24),
        "tonal_range": _ramp(tonal, 0.1, 0.6),
        "spread": _ramp(spread, 0.05, 0.5),
    }
    # A frame with almost nothing drawn has no palette, tone or composition to speak of.
    sure = _ramp(drawn, 0.0, 0.02)
    parts = {k: v if k == "drawn" else v * sure for k, v in parts.items()}
    weight = {"drawn": 0.2, "detail": 0.15, "colours": 0.25, "tonal_range": 0.2, "spread": 0.2}
    # Richness in neon is not richness: a garish drawing loses up to half.
    garish = loudness(px)["garish"]
    score = float(sum(weight[k] * v for k, v in parts.items())) * (1 - 0.5 * garish)
    notes = [name.replace("_", " ") for name, v in parts.items() if v < 0.35]
    if garish >= 0.3:
        notes.append("garish")
    return {"score": round(score, 3), "garish": round(garish, 3), "drawn_share": round(drawn, 3),
            "detail_blocks": round(detail, 3),
            "colours": colours, "tonal_range": round(tonal, 3), "spread": round(spread, 3),
            "parts": {k: round(v, 3) for k, v in parts.items()},
            "note": ("weak " + ", ".join(notes)) if notes else "rich, composed drawing"}


def loudness(px: np.ndarray) -> dict[str, Any]:
    """How much of the page is loud colour (saturation >= 0.7, value >= 200) and in how many
    competing hue families; `garish` runs 0 (calm) to 1 (a clash of neon fields). Saturation and
    value are read on every pixel, the hue only on the loud ones (the same numbers as `hues`: each
    pixel's hue is its own)."""
    val = px.max(axis=1).astype(np.float64)
    chroma = val - px.min(axis=1)
    sat = np.where(val > 0, chroma / np.maximum(val, 1), 0.0)
    loud = (sat >= 0.7) & (val >= 200)
    share = float(loud.mean())
    families: list[int] = []
    if loud.any():
        hist = np.bincount((hues(px[loud])[0] // 30).astype(int) % 12, minlength=12) / len(px)
        families = [int(i) * 30 for i in np.nonzero(hist >= 0.04)[0]]
    spread = max((min(abs(a - b), 360 - abs(a - b)) for a in families for b in families), default=0)
    clash = _ramp(len(families), 1, 3) * _ramp(spread, 60, 150)
    garish = max(_ramp(share, 0.2, 0.5), clash * _ramp(share, 0.08, 0.25))
    return {"loud_share": round(share, 3), "loud_hues": families, "garish": round(garish, 3)}
