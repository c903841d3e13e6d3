"""The forgery corpus (benchmarks/forgeries/, `aesenv bench forgery`): every forged artifact beside
its honest twin, and no forgery may gain. The runner's own rules are checked on records made
here, so a runner that called every case "no gain" would fail."""

from __future__ import annotations

import pytest

from aesenv.channels.base import ChannelResult, ChannelStatus
from aesenv.rewards.record import ArtifactInfo, RewardRecord
from benchmarks.forgery import CASES, compare, load_cases, run, summary


def test_the_corpus_covers_every_kind_and_at_least_forty_cases():
    cases = load_cases()
    assert len(cases) >= 40
    kinds = {c.task.kind for c in cases}
    assert {"web", "plot", "project"} <= kinds, kinds
    for case in cases:
        assert case.mechanism and case.channels, case.id
        assert case.honest != case.forged, case.id
    assert (CASES / "README.md").is_file()


def _record(reward: float | None, **channels: tuple[str, float | None]) -> RewardRecord:
    results = {name: ChannelResult(status=ChannelStatus(status), score=score, raw=score)
               for name, (status, score) in channels.items()}
    return RewardRecord(task_id="t", category="Website", status="ok" if reward is not None else "infra_error",
                        reward=reward, normalized=reward, reward_name="paper", channels=results,
                        artifact=ArtifactInfo(kind="html", sha256="0" * 64, bytes=1))


def test_a_gain_is_a_higher_score_a_masked_channel_or_a_voided_sample():
    case = load_cases()[0]
    case.channels = ["static"]
    honest = _record(0.3, static=("ok", 0.3))
    assert not any(g.gained for g in compare(case, honest, _record(0.3, static=("ok", 0.3))))
    assert not any(g.gained for g in compare(case, honest, _record(0.2, static=("failed", 0.2))))
    higher = compare(case, honest, _record(0.4, static=("ok", 0.4)))
    assert [g.target for g in higher if g.gained] == ["static", "reward", "normalized"]
    masked = compare(case, honest, _record(0.3, static=("infra_error", None)))
    assert [(g.target, g.how) for g in masked if g.gained] == [("static", "masked as infra_error")]
    voided = compare(case, honest, _record(None, static=("infra_error", None)))
    assert {g.target for g in voided if g.gained} == {"static", "reward", "normalized"}


@pytest.mark.slow
async def test_no_forgery_gains_over_its_honest_twin():
    outcomes = await run(load_cases(), concurrency=2, progress=False)
    totals = summary(outcomes)
    assert not totals["broken_cases"], [(o.case, o.broken) for o in outcomes if o.broken]
    gains = {o.case: [(g.target, g.honest, g.forged) for g in o.gains if g.gained] for o in outcomes if o.gained}
    assert not gains, gains
