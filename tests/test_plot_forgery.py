"""No plot forgery pays: every plot case of the forgery corpus (benchmarks/forgeries/plot*) is
scored as its honest twin and as the forgery through the one pipeline; the twin must be scored
`ok`, and the forgery may not score higher on any channel or on the reward, nor turn a channel
the twin is scored on into a masked one (infra_error, not_applicable)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aesenv.rewards import ChannelStatus
from aesenv.tasks import Task, load_tasks

CORPUS = Path(__file__).parents[1] / "benchmarks" / "forgeries"
CASES = sorted(p for p in CORPUS.iterdir() if p.name.startswith("plot") and (p / "case.json").is_file())
BUILTIN = {t.id: t for t in load_tasks("builtin:plot")}
MASKED = (ChannelStatus.INFRA_ERROR, ChannelStatus.NOT_APPLICABLE)


def case_task(case: dict) -> Task:
    return BUILTIN[case["task"]["builtin"]] if "builtin" in case["task"] else Task.model_validate(case["task"])


def test_the_corpus_has_the_plot_mechanisms():
    names = {p.name for p in CASES}
    assert len(CASES) >= 10
    for needed in ("plot-describe-hook", "plot-png-writer", "plot-svg-writer-lies", "plot-alpha-zero-labels",
                   "plot-white-on-white", "plot-half-point-text", "plot-text-off-canvas", "plot-forged-get-visible",
                   "plot-legend-without-handles", "plot-invisible-bars-on-pie", "plot-hidden-second-figure",
                   "plotly-title-in-background-colour", "plot-tiny-text-fontsize", "plot-tiny-text-squeezed",
                   "plot-tiny-text-huge-figure", "plot-tiny-text-low-dpi"):
        assert needed in names, needed
    for folder in CASES:
        case = json.loads((folder / "case.json").read_text())
        assert case["mechanism"] and case["channels"] and case_task(case).kind == "plot"
        assert (folder / "honest.py").read_text() != (folder / "forged.py").read_text()


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
async def test_a_plot_forgery_does_not_gain(plot_pipeline, folder):
    case = json.loads((folder / "case.json").read_text())
    task = case_task(case)
    records = {}
    for side in ("honest", "forged"):
        code = (folder / f"{side}.py").read_text()
        records[side] = (await plot_pipeline.score(task, f"```python\n{code}```")).record
    honest, forged = records["honest"], records["forged"]
    assert all(c.status is ChannelStatus.OK for c in honest.channels.values()), honest.channels
    for name, channel in honest.channels.items():
        theirs = forged.channels[name]
        assert theirs.status not in MASKED, (name, theirs)
        assert (theirs.raw or 0.0) <= (channel.raw or 0.0) + 1e-6, (name, channel.raw, theirs.raw, theirs.payload)
    assert forged.reward <= honest.reward + 1e-6, (honest.reward, forged.reward)
