"""The svgart judge: a model role of the kind's own (`SVG_JUDGE`), with an offline backend that
rates a drawing from its pixels, so the kind needs no model to be scored end to end."""

from __future__ import annotations

from typing import Any

import numpy as np

from aesenv.models import ModelRole
from aesenv.registry import Registry

BACKGROUND = 250  # a pixel lighter than this in every channel is the page, not the drawing


class PaletteJudge:
    """Rates a drawing 0-10 from its rendered image: half for how much of its frame it fills
    (full marks from half the frame), half for how many colours it uses (full marks from six)."""

    name = "svgart-palette"  # a record's provenance names the judge and its version
    version = "1"

    def judge(self, pixels: np.ndarray) -> dict[str, Any]:
        drawn = (pixels < BACKGROUND).any(axis=-1)
        if not drawn.any():
            return {"score": 0.0, "coverage": 0.0, "colours": 0}
        rows, cols = np.nonzero(drawn)
        frame = pixels[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
        coverage = float(drawn[rows.min():rows.max() + 1, cols.min():cols.max() + 1].mean())
        colours = len(np.unique((frame // 32).reshape(-1, frame.shape[-1]), axis=0))
        score = 5 * min(coverage / 0.5, 1.0) + 5 * min(colours / 6, 1.0)
        return {"score": round(score, 4), "coverage": round(coverage, 4), "colours": colours}


def offline_svg_judge(argument: str = "", **options: Any) -> PaletteJudge:
    return PaletteJudge()


_BACKENDS: Registry[Any] = Registry("svgart judge")
_BACKENDS.register("offline")(offline_svg_judge)
SVG_JUDGE = ModelRole("svgart_judge", "svgart judge", _BACKENDS)
