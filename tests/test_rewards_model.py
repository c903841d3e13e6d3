import json

import pytest
from pydantic import ValidationError

from aesenv.rewards import AGGREGATORS, ArtifactInfo, ChannelResult, ChannelStatus, RewardRecord


def ok(raw, score, status=ChannelStatus.OK):
    return ChannelResult(status=status, score=score, raw=raw)


def test_paper_aggregate_is_equation_one():
    channels = {"execution": ok(1.0, 1.0), "static": ok(72.5, 0.725), "interactive": ok(2.0, 2 / 3)}
    assert AGGREGATORS["paper"](channels) == pytest.approx(0.1 * 1 + 0.8 * 72.5 + 0.1 * 2)


def test_paper_aggregate_with_failed_execution_and_masked_interactive():
    channels = {"execution": ok(-1.0, 0.0, ChannelStatus.FAILED), "static": ok(50.0, 0.5),
                "interactive": ChannelResult.not_applicable("off")}
    assert AGGREGATORS["paper"](channels) == pytest.approx(-0.1 + 40.0)


def test_normalized_renormalizes_over_counted_channels():
    channels = {"execution": ok(1.0, 1.0), "static": ok(50.0, 0.5),
                "interactive": ChannelResult.not_applicable("off")}
    assert AGGREGATORS["normalized"](channels) == pytest.approx((0.1 * 1 + 0.8 * 0.5) / 0.9)


@pytest.mark.parametrize("name", ["paper", "normalized"])
def test_infra_error_in_a_required_channel_voids_the_reward(name):
    channels = {"execution": ok(1.0, 1.0), "static": ChannelResult.infra_error("judge timed out")}
    assert AGGREGATORS[name](channels) is None


def test_masked_channel_cannot_carry_a_score():
    with pytest.raises(ValidationError):
        ChannelResult(status=ChannelStatus.INFRA_ERROR, score=0.0, raw=0.0)
    with pytest.raises(ValidationError):
        ChannelResult(status=ChannelStatus.OK)
    assert ChannelResult.not_applicable("x").applicable is False


def test_record_json_contract_round_trips():
    record = RewardRecord(
        task_id="t1", category="Website", status="ok", reward=58.1, normalized=0.72,
        channels={"execution": ok(1.0, 1.0), "static": ok(72.5, 0.725),
                  "interactive": ChannelResult.not_applicable("off")},
        artifact=ArtifactInfo(kind="html", sha256="ab" * 32, bytes=10))
    data = json.loads(record.model_dump_json())
    assert data["reward"] == 58.1 and data["normalized"] == 0.72
    for name in ("execution", "static", "interactive"):
        assert set(data["channels"][name]) >= {"status", "applicable", "score", "raw", "payload"}
    assert data["channels"]["interactive"]["applicable"] is False
    assert RewardRecord.model_validate_json(record.model_dump_json()) == record
