"""WCAG colour maths: sRGB linearisation, relative luminance, contrast ratio.

One implementation for the judges (numpy, on arrays of pixels or single colours) and for code
that works on one colour at a time (`*_scalar`: plain Python floats, no numpy), such as the
template policy choosing readable colours. Colours are 0-255 sRGB channels.

The knee is sRGB's 0.04045 (IEC 61966-2-1); WCAG 2.x prints 0.03928, which selects the same
branch for every 8-bit channel value (10/255 is below both, 11/255 above both).

The browser-side scripts (`aesenv/render/*.js`) do not compute contrast: the judges measure it
here, from the snapshot's computed colours and the screenshot's pixels.
"""

from __future__ import annotations

import numpy as np

SRGB_KNEE = 0.04045
LUMINANCE_WEIGHTS = (0.2126, 0.7152, 0.0722)  # Rec. 709 primaries: red, green, blue


def linearise(c) -> np.ndarray:
    """Linear-light values (0-1) of 0-255 sRGB channel values, any shape."""
    c = np.asarray(c, dtype=np.float64) / 255.0
    return np.where(c <= SRGB_KNEE, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def luminance(rgb) -> np.ndarray | float:
    """WCAG relative luminance of an (..., 3) array of 0-255 colours."""
    lin = linearise(rgb)
    wr, wg, wb = LUMINANCE_WEIGHTS
    return lin[..., 0] * wr + lin[..., 1] * wg + lin[..., 2] * wb


def contrast_ratio(l1, l2):
    """WCAG contrast ratio (1-21) of two relative luminances, in either order (arrays broadcast)."""
    hi, lo = np.maximum(l1, l2), np.minimum(l1, l2)
    return (hi + 0.05) / (lo + 0.05)


def linearise_scalar(c: float) -> float:
    """`linearise` of one 0-255 channel value, in plain Python."""
    s = c / 255
    return s / 12.92 if s <= SRGB_KNEE else ((s + 0.055) / 1.055) ** 2.4


def luminance_scalar(r: float, g: float, b: float) -> float:
    """`luminance` of one 0-255 colour, in plain Python."""
    wr, wg, wb = LUMINANCE_WEIGHTS
    return linearise_scalar(r) * wr + linearise_scalar(g) * wg + linearise_scalar(b) * wb


def contrast_ratio_scalar(l1: float, l2: float) -> float:
    """`contrast_ratio` of two relative luminances, in plain Python."""
    hi, lo = max(l1, l2), min(l1, l2)
    return (hi + 0.05) / (lo + 0.05)
