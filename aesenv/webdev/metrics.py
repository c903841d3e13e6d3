"""Webdev-Bench's metrics, as WebCoder publishes them (App. B.2), from item grades.

sat(r) = 1 iff every item of requirement r has grade 3. Per task, RS is the mean of sat(r) over
its requirements; FS (items of the functional and coverage dimensions), IS (interaction) and VS
(visual) use the same conjunctive rule restricted to the subset, over the requirements that have
items in it. Suite values are means over tasks (for a subset, over the tasks that have it). DSR
is the share of tasks delivered: the start script brought the app up on its port and the launch
check passed (an undelivered task has every item graded 0). `weighted` is the four-grade
reference scale Σ wᵢ·(gᵢ/3) / Σ wᵢ.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from aesenv.webdev.acceptance import ItemGrade

SUBSETS: dict[str, frozenset[str]] = {
    "RS": frozenset({"functional", "interaction", "visual", "coverage"}),
    "FS": frozenset({"functional", "coverage"}),
    "IS": frozenset({"interaction"}),
    "VS": frozenset({"visual"}),
}
METRICS = (*SUBSETS, "DSR", "weighted")


def satisfied(grades: Iterable[ItemGrade], dimensions: frozenset[str]) -> dict[str, bool]:
    """sat(r) per requirement that has items in `dimensions`."""
    by_requirement: dict[str, list[int]] = {}
    for g in grades:
        if g.dimension in dimensions:
            by_requirement.setdefault(g.requirement, []).append(g.grade)
    return {r: all(grade == 3 for grade in gs) for r, gs in by_requirement.items()}


def weighted_score(grades: Sequence[ItemGrade]) -> float | None:
    total = sum(g.weight for g in grades)
    return round(sum(g.weight * g.grade / 3 for g in grades) / total, 6) if total else None


def task_metrics(grades: Sequence[ItemGrade], delivered: bool) -> dict[str, float | None]:
    """One task's RS, FS, IS, VS (None: no item in the subset), DSR (0 or 1) and weighted score."""
    out: dict[str, float | None] = {}
    for name, dimensions in SUBSETS.items():
        sat = satisfied(grades, dimensions)
        out[name] = round(sum(sat.values()) / len(sat), 6) if sat else None
    out["DSR"] = 1.0 if delivered else 0.0
    out["weighted"] = weighted_score(grades)
    return out


def suite_metrics(per_task: Sequence[dict[str, float | None]]) -> dict[str, float | None]:
    """Means over tasks, each metric over the tasks where it is defined."""
    out: dict[str, float | None] = {}
    for name in METRICS:
        values = [m[name] for m in per_task if m.get(name) is not None]
        out[name] = round(statistics.fmean(values), 4) if values else None
    out["n"] = len(per_task)
    return out
