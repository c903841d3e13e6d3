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


def test_aescode_rule_visual_overall_worked_by_hand():
    """As published (§3.4): Rule = mean of Text, Boundary and Table/Chart, Visual = mean of the
    checklist's Content, Layout and Style, Overall = their mean; s_exec, layout, whitespace and
    VGR are not reported. A masked channel (infra_error, not applicable) is left out, a failed one
    counts with its score. `aescode_channels` (ours) is Rule over every deterministic channel and
    VGR as Visual."""
    from aesenv.kinds.web.aescode import aescode_scores

    checklist = ChannelResult(status=ChannelStatus.FAILED, score=0.5, raw=0.5,
                              payload={"dimensions": {"layout": 0.2, "content": 0.6, "style": 1.0}})
    channels = {"renderable": ok(1.0, 1.0), "text": ok(0.5, 0.5), "boundary": ok(0.3, 0.3, ChannelStatus.FAILED),
                "table_chart": ChannelResult.infra_error("probe died"), "layout": ok(0.9, 0.9),
                "whitespace": ChannelResult(status=ChannelStatus.NOT_APPLICABLE, applicable=False),
                "vgr": ok(0.4, 0.4), "checklist": checklist, "static": ok(90.0, 0.9)}
    rule = round((0.5 + 0.3) / 2, 6)  # 0.4: renderable and layout are not in Rule, table_chart is masked
    visual = round((0.6 + 0.2 + 1.0) / 3, 6)  # 0.6: the checklist's dimensions; VGR is training-only
    assert aescode_scores(channels) == {"rule": rule, "visual": visual, "overall": round((rule + visual) / 2, 6)}
    assert AGGREGATORS["aescode"](channels) == 0.5
    ours_rule = round((1.0 + 0.5 + 0.3 + 0.9) / 4, 6)  # 0.675
    assert aescode_scores(channels, report="channels") == {"rule": ours_rule, "visual": 0.4,
                                                           "overall": round((ours_rule + 0.4) / 2, 6)}
    assert AGGREGATORS["aescode_channels"](channels) == 0.5375
    # a masked checklist leaves Overall to Rule, whatever VGR says
    no_visual = {**channels, "checklist": ChannelResult.infra_error("judge down")}
    assert aescode_scores(no_visual) == {"rule": rule, "visual": None, "overall": rule}
    # only Visual: Rule is None and Overall is Visual; no AesCode channel at all: None
    assert aescode_scores({"checklist": checklist}) == {"rule": None, "visual": visual, "overall": visual}
    assert aescode_scores({"vgr": ok(0.7, 0.7)}) == {"rule": None, "visual": None, "overall": None}
    assert aescode_scores({"static": ok(90.0, 0.9), "execution": ok(1.0, 1.0)}) is None
    # a checklist result without per-dimension scores adds nothing to Visual
    bare = {"text": ok(1.0, 1.0), "checklist": ok(1.0, 1.0)}
    assert aescode_scores(bare) == {"rule": 1.0, "visual": None, "overall": 1.0}
    # rounded to 6 places, as logged
    assert aescode_scores({"text": ok(1 / 3, 1 / 3)})["rule"] == 0.333333
