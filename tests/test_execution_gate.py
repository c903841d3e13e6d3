"""AesCoder's execution gate, and reward options that reach the pipeline or fail at start-up."""

from __future__ import annotations

import pytest

from aesenv.lint.htmlhint import HtmlHint
from aesenv.rewards import ChannelStatus, PipelineConfig, RewardPipeline
from aesenv.tasks import Task
from train import reward

TASK = Task(id="gate", category="Website", prompt="A landing page for a bakery.")
PASSING = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\" />"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" /><title>Bakery</title></head>"
           "<body><h1>Fresh bread daily</h1><p>Sourdough, rye and brioche from our oven.</p>"
           "<button onclick=\"this.textContent='Ordered'\">Order</button></body></html>")
# The same page as models often write it (AesCoder's rules fail it: tag-self-close, tag-pair).
FAILING = PASSING.replace(" />", ">").replace("</p>", "")


@pytest.fixture
async def gated(renderer):
    linter = HtmlHint()
    made: list[RewardPipeline] = []

    def make(gate: bool) -> RewardPipeline:
        made.append(RewardPipeline(PipelineConfig(gate_on_execution=gate), renderer=renderer, linter=linter))
        return made[-1]

    yield make
    await linter.close()


async def test_a_page_failing_execution_scores_on_execution_alone_behind_the_gate(gated):
    record = (await gated(True).score(TASK, FAILING)).record
    assert record.channels["execution"].status is ChannelStatus.FAILED
    assert record.gate == "closed" and record.status == "ok"
    assert record.reward == pytest.approx(-0.1)  # 0.1 × (−1); nothing else counts
    for name in ("static", "interactive"):
        assert record.channels[name].status is ChannelStatus.NOT_APPLICABLE
        assert "execution gate" in record.channels[name].payload["reason"]


async def test_without_the_gate_every_channel_scores_the_same_page(gated):
    record = (await gated(False).score(TASK, FAILING)).record
    assert record.gate == "off" and record.channels["static"].status is ChannelStatus.OK
    assert record.reward > 0  # the static judge's 0.8 share is back


async def test_a_page_that_passes_execution_goes_through_the_gate(gated):
    record = (await gated(True).score(TASK, PASSING)).record
    assert record.gate == "passed" and record.channels["execution"].raw == 1.0
    assert record.channels["static"].status is ChannelStatus.OK and record.reward > 0.1


def test_an_unknown_reward_option_fails_before_anything_is_scored():
    with pytest.raises(ValueError, match="(?s)judge_sample.*known options"):
        reward.pipeline_config(judge="offline", allow_offline_judge=True, judge_sample=3)


def test_every_reward_option_reaches_the_pipeline():
    config = reward.pipeline_config(judge="openai:test-model", judge_base_url="http://judge:1/v1",
                                    judge_options={"timeout_s": 7.0}, judge_samples=3, interactor="offline",
                                    interaction_budget=5, gate_on_execution=True, channel_timeout_s=90, deadline_s=30)
    assert config.judge_options == {"timeout_s": 7.0, "samples": 3, "base_url": "http://judge:1/v1"}
    assert (config.interactor, config.interaction_budget, config.gate_on_execution, config.channel_timeout_s) == \
        ("offline", 5, True, 90)


@pytest.mark.slow
async def test_a_training_reward_call_with_three_judge_samples_draws_three(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    answer = {"alignment": 30.0, "aesthetics": 22.0, "structure": 21.0, "total": 73.0, "rationale": "clear"}
    openai_server.default = lambda _: answer
    try:
        fields = await reward.compute_score(
            "aesenv/web", PASSING, "", {"task": TASK.model_dump_json()}, judge="openai:test-model",
            judge_base_url=openai_server.url, judge_options={"samples": 3, "cache_dir": None, "backoff_s": 0.01},
            channels=["execution", "static"])
    finally:
        await reward.close_pipelines()
    assert fields["aes_reward_valid"] == 1.0 and fields["aes_static"] == pytest.approx(0.73)
    # Three draws, asked as one request for three choices (`n`), as the judge samples.
    assert [request.body.get("n") for request in openai_server.completions] == [3]


def test_the_opendesign_runner_scores_every_case_ungated_with_its_interaction_budget(tmp_path):
    from benchmarks.opendesign import build_parser, config_from_args

    args = build_parser().parse_args(["--judge", "offline", "--interaction-budget", "5", "--out", str(tmp_path)])
    config = config_from_args(args)
    assert config.interaction_budget == 5 and not config.gate_on_execution


def test_a_reward_worker_scores_as_many_pages_at_once_as_its_cores_plus_two():
    import os
    import subprocess
    import sys

    from train import reward

    cores = len(os.sched_getaffinity(0))
    assert reward.pipeline_config(judge="offline", allow_offline_judge=True).render.concurrency == min(8, cores + 2)
    assert reward.pipeline_config(judge="offline", allow_offline_judge=True, concurrency=1).render.concurrency == 1
    # On one core of its own (a pinned Ray actor, a small node) it follows that core, not the machine.
    pinned = subprocess.run(["taskset", "-c", "0", sys.executable, "-c",
                             "from train import reward; print(reward.pipeline_config(judge='offline', "
                             "allow_offline_judge=True).render.concurrency)"],
                            capture_output=True, text=True, check=True, timeout=120)
    assert pinned.stdout.split()[-1] == "3"
