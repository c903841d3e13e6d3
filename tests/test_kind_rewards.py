"""What a record carries and what a pipeline refuses: every aggregate the task's kind declares is in
`record.rewards`, and names (channels, the reward) are the kinds' and are checked by the pipeline
(on its first task, or all at once by `validate()`), not when a config is written."""

from __future__ import annotations

import pytest

from aesenv.kinds import KINDS
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.rewards.aggregate import AGGREGATORS
from aesenv.tasks import Task

PAGE = "```html\n<!doctype html><html><body><h1>Pricing</h1><p>Three plans for small teams.</p></body></html>\n```"


def test_every_kind_declares_the_paper_and_normalized_rewards_with_known_aggregators():
    for name in KINDS:
        declared = KINDS[name].scoring.rewards
        assert {"paper", "normalized"} <= set(declared), name
        assert set(declared.values()) <= set(AGGREGATORS), name


def test_a_config_names_what_no_kind_offers_and_only_the_pipeline_refuses_it(renderer):
    config = PipelineConfig(channels=["execution", "sparkle"])  # a config is data: it does not load the kinds
    with pytest.raises(ValueError, match=r"unknown channels \['sparkle'\]"):
        RewardPipeline(config, renderer=renderer).validate()
    with pytest.raises(ValueError, match=r"unknown channels \['glitter'\]"):
        RewardPipeline(PipelineConfig(channel_options={"glitter": {}}), renderer=renderer).validate()
    with pytest.raises(ValueError, match="unknown reward"):
        PipelineConfig(reward="vibes")  # aggregators are the pipeline's own: known at once


def test_a_channel_refuses_an_option_it_does_not_take(renderer):
    with pytest.raises(Exception, match="speed"):
        RewardPipeline(PipelineConfig(channel_options={"execution": {"speed": 2}}), renderer=renderer).validate()
    with pytest.raises(Exception, match="budget"):
        RewardPipeline(PipelineConfig(channel_options={"interactive": {"budget": 0}}), renderer=renderer).validate()


def test_an_option_reaches_the_kinds_whose_channel_takes_it_and_no_other(renderer):
    """Kinds share channel names: `execution` is a page's lint and a script's import check, and
    `dom_lint` is the page's. A pipeline with it builds, the plot's channel never sees it, and an
    option no kind's channel takes is still refused, naming it."""
    from aesenv.kinds.plot.channels import PlotExecutionChannel
    from aesenv.kinds.web.execution import ExecutionChannel

    pipeline = RewardPipeline(PipelineConfig(channel_options={"execution": {"dom_lint": False}}), renderer=renderer)
    web = next(c for c in pipeline.channels("web") if c.name == "execution")
    plot = next(c for c in pipeline.channels("plot") if c.name == "execution")
    assert isinstance(web, ExecutionChannel) and web.options.dom_lint is False
    assert isinstance(plot, PlotExecutionChannel)
    with pytest.raises(ValueError, match=r"channel 'execution' takes no option \['speed'\]; its options: \['dom_lint'\]"):
        RewardPipeline(PipelineConfig(channel_options={"execution": {"dom_lint": True, "speed": 2}}),
                       renderer=renderer).validate()


def test_a_pipeline_builds_a_kind_on_its_first_use_and_checks_names_as_validate_does(renderer):
    """Construction loads no kind's parts; the first kind built checks the config's names (against
    the other kinds too when it lacks one), so a typo fails on the first task as it does in
    `validate()`, and a name only another kind offers is no error."""
    typo = RewardPipeline(PipelineConfig(channels=["execution", "sparkle"]), renderer=renderer)
    assert typo._parts == {}
    with pytest.raises(ValueError, match=r"unknown channels \['sparkle'\]"):
        typo.channels("web")
    elsewhere = RewardPipeline(PipelineConfig(channels=["execution", "static", "vgr", "project_gate"]), renderer=renderer)
    assert [c.name for c in elsewhere.channels("web")] == ["execution", "static", "vgr"]
    assert set(elsewhere._parts) == {"web"}
    assert set(elsewhere.validate()._parts) == set(KINDS)


async def test_the_record_carries_every_declared_aggregate_and_selects_the_configured_one(renderer):
    task = Task(id="r", prompt="A pricing page for a small team tool.")
    config = PipelineConfig(channels=["execution", "static", "text"], reward="aescode")
    async with RewardPipeline(config, renderer=renderer) as pipeline:
        record = (await pipeline.score(task, PAGE)).record
    assert set(record.rewards) == set(KINDS["web"].scoring.rewards)
    assert record.rewards["paper"] == record.reward and record.rewards["normalized"] == record.normalized
    assert record.reward_name == "aescode" and record.selected_reward == record.rewards["aescode"]
    assert record.rewards["aescode"] == AGGREGATORS["aescode"](record.channels)
    assert record.model_dump(mode="json")["rewards"] == record.rewards


async def test_a_reward_the_task_kind_does_not_declare_is_a_clear_error_not_a_score(renderer):
    plot = Task(id="p", kind="plot", prompt="Plot y = x.")
    async with RewardPipeline(PipelineConfig(reward="aescode"), renderer=renderer) as pipeline:
        with pytest.raises(ValueError, match="reward 'aescode' is not one 'plot' records declare"):
            await pipeline.score(plot, "```python\nprint(1)\n```")
