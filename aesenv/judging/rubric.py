"""Filling the 40/30/30 rubric from measured sub-scores: what the offline judges share.

The offline page judge (`judges.offline`) and the offline plot judge (`plots.judge`) measure
different things, but turn their measurements into a judgement the same way: each sub-score is
a `metric` (its points, clamped to its maximum, with the numbers it came from); the sub-scores
of a part of the rubric are summed, scaled by how much there is to judge (aesthetics and
structure only), clamped into the part's range, capped by the proxy's ceiling and rounded; the
evidence carries every sub-score; the rationale names the biggest deductions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aesenv.judging.base import RUBRIC_MAX, StaticJudgement, clamp

# Measurements can show that a page is free of defects, not that it is excellent, so the proxy
# never awards the rubric's top band (90–100, "outstanding"): every sub-score is scaled by this.
PROXY_CEILING = 0.85

# The parts that a near-empty page (or a figure with nothing plotted) cannot earn: there is
# nothing to be well-designed about, so no points for avoiding mistakes.
PRESENCE_SCALED = ("aesthetics", "structure")


def metric(points: float, maximum: float, **details: Any) -> dict[str, Any]:
    """One sub-score: its numbers, then its points (clamped to 0..maximum, 2 decimals) and maximum."""
    return {**details, "points": round(clamp(points, 0.0, maximum), 2), "max": maximum}


def deductions(*groups: dict[str, dict[str, Any]]) -> str:
    """' Biggest deductions: ...' for the (at most three, at least half a point) sub-scores that
    lost the most, largest first (ties by name); '' when none did."""
    lost = sorted(((m["max"] - m["points"], name, m.get("note", "")) for g in groups for name, m in g.items()),
                  key=lambda t: (-t[0], t[1]))
    parts = [f"-{delta:.1f} {name}" + (f" ({note})" if note else "") for delta, name, note in lost[:3] if delta >= 0.5]
    return " Biggest deductions: " + "; ".join(parts) + "." if parts else ""


def assemble(alignment: dict[str, dict[str, Any]], aesthetics: dict[str, dict[str, Any]],
             structure: dict[str, dict[str, Any]], *, ceiling: float, presence: float, evidence: dict[str, Any],
             headline: Callable[[float, float, float, float], str]) -> StaticJudgement:
    """The judgement from three groups of `metric`s. A part's score is
    `round(ceiling * clamp(sum(points) [* presence], 0, part maximum), 2)` (presence scales
    aesthetics and structure only, before the clamp); the total is their sum, rounded.
    `evidence` is what the judge records besides the groups (the groups are appended, in rubric
    order); the rationale is `headline(total, a, e, s)` followed by the biggest deductions."""
    groups = {"alignment": alignment, "aesthetics": aesthetics, "structure": structure}
    scores = {}
    for part, group in groups.items():
        points = sum(m["points"] for m in group.values())
        if part in PRESENCE_SCALED:
            points = points * presence
        scores[part] = round(ceiling * clamp(points, 0, RUBRIC_MAX[part]), 2)
    a, e, s = scores["alignment"], scores["aesthetics"], scores["structure"]
    total = round(a + e + s, 2)
    return StaticJudgement(alignment=a, aesthetics=e, structure=s, total=total,
                           rationale=headline(total, a, e, s) + deductions(alignment, aesthetics, structure),
                           evidence={**evidence, **groups})
