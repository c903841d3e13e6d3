"""`python -m train.bench_reward --profile`: the throughput batch, then each answer scored alone
with its records' stages (extract, render, one timer per channel, total)."""

from __future__ import annotations

import pytest

from train.bench_reward import bench


@pytest.mark.timeout(300)
async def test_the_profile_says_where_a_scores_time_goes():
    result = await bench("builtin:web", 3, "offline", 120.0, None, profile=True)
    assert result["pages"] == 3 and result["valid"] == 3 and result["pages_per_s"] > 0
    profile = result["profile"]
    assert profile["scored_alone"] == 3 and profile["statuses"] == ["ok"]
    stages = profile["stages_ms"]
    assert {"extract", "render", "channels", "total", "channel.execution", "channel.static",
            "channel.interactive"} <= set(stages)
    # medians of stages each record nests: a channel within the channels' stage (they run
    # concurrently), that and the render within the total
    assert max(v for k, v in stages.items() if k.startswith("channel.")) <= stages["channels"] + 1.0
    assert stages["render"] <= stages["total"] and stages["channels"] <= stages["total"]
    assert all(0 <= share <= 1 for share in profile["share_of_total"].values())
    # the interactive channel's time by kind of work (`aesenv.stages`), each within the channel's
    assert {"channel.interactive.label", "channel.interactive.screenshot", "channel.interactive.clock",
            "channel.interactive.script", "channel.interactive.diff"} <= set(stages)
    assert all(v <= stages["channel.interactive"] for k, v in stages.items() if k.startswith("channel.interactive."))


async def test_no_profile_unless_asked():
    result = await bench("builtin:web", 1, "offline", 120.0, None)
    assert "profile" not in result and result["valid"] == 1
