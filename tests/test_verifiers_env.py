"""The verifiers environment (`aesenv_vf`): loaded with the installed `verifiers`, its tasks are
aesenv's, and its rubric is aesenv's channels, one reward per channel."""

from __future__ import annotations

import pytest

vf = pytest.importorskip("verifiers.v1", reason="verifiers is not installed (make setup installs it)")

import aesenv_vf  # noqa: E402
from aesenv.judging.aescoder import PAPER_WEIGHTS  # noqa: E402
from aesenv.serve.verifiers_env import close_pipelines  # noqa: E402
from verifiers.v1.trace import Trace  # noqa: E402

PAGE = ("```html\n<!doctype html><html><head><title>Crumb &amp; Co.</title></head><body><h1>Crumb &amp; Co. bakery</h1>"
        "<p>Breads and pastries, open 7-18.</p><form><input placeholder='Cake order'><button>Order</button></form>"
        "</body></html>\n```")


def _trace(reply: str, trace_id: str) -> Trace:
    return Trace.model_construct(id=trace_id, root_reply=reply, rewards={}, metrics={}, info={})


async def test_load_environment_gives_aesenv_tasks_and_a_rubric_per_channel():
    env = aesenv_vf.load_environment(kind="web", tasks="builtin:web")
    assert isinstance(env, vf.Env) and env.taskset.config.id == "aesenv_vf"
    tasks = list(env.taskset.take(2))
    assert len(tasks) == 2 and all(t.data.id.startswith("web-") and t.aesenv_task().kind == "web" for t in tasks)
    task = tasks[0]
    assert [fn.__name__ for fn in task.hooks("reward")] == sorted(["execution", "static", "interactive"])
    assert task.data.prompt[0].role == "user" and task.data.system_prompt
    try:
        good, empty = _trace(PAGE, "good"), _trace("I cannot help with that.", "empty")
        await task.score(good)
        await task.score(empty)
    finally:
        await close_pipelines()
    assert set(good.rewards) == {"execution", "static", "interactive"}
    for name, reward in good.rewards.items():
        assert 0 <= reward.score <= 1 and reward.weight == PAPER_WEIGHTS[name]
    assert good.reward > empty.reward  # a page beats no page, channel by channel summed


async def test_channels_and_plot_kind_are_configurable():
    env = aesenv_vf.load_environment(kind="plot", channels=["execution", "static"])
    task = next(iter(env.taskset))
    assert task.aesenv_task().kind == "plot"
    assert sorted(fn.__name__ for fn in task.hooks("reward")) == ["execution", "static"]


def test_its_kinds_are_the_registrys_single_turn_ones():
    from aesenv.kinds import kinds_with
    from aesenv.serve.verifiers_env import AesTasksetConfig

    assert {"web", "plot"} <= set(kinds_with("single")) and "project" not in kinds_with("single")
    assert AesTasksetConfig(kind="plot").kind == "plot"
    with pytest.raises(ValueError, match="'project' has no single-turn env"):
        AesTasksetConfig(kind="project")
