import asyncio

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import aesenv  # noqa: F401 - registers the envs
from aesenv.envs import make_core
from aesenv.rewards import RewardRecord
from aesenv.tasks import Task

PAGE = """```html
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><meta name="viewport" content="width=device-width" />
<title>Clock</title></head><body style="font-family:sans-serif;padding:40px"><h1>World clock widget</h1>
<p>Shows the time in London, Tokyo and New York.</p><button type="button">Add city</button></body></html>
```"""


@pytest.fixture(scope="module")
def env():
    e = gym.make("AesWeb-v0", tasks="builtin:web", render_mode="rgb_array")
    yield e
    e.close()


def test_registered_and_passes_the_gymnasium_checker(env):
    assert "AesWeb-v0" in gym.registry
    check_env(env.unwrapped, skip_render_check=False)


def test_reset_picks_tasks_by_seed_and_by_id(env):
    obs_a, info_a = env.reset(seed=3)
    obs_b, info_b = env.reset(seed=3)
    assert obs_a == obs_b and info_a["task_id"] == info_b["task_id"]
    first = env.unwrapped.tasks[0]
    obs, info = env.reset(options={"task": first.id})
    assert obs == {"prompt": first.prompt, "category": first.category.value}
    with pytest.raises(KeyError):
        env.reset(options={"task": "no-such-task"})


def test_step_scores_and_terminates_with_record(env):
    env.reset(options={"task": {"id": "clock", "category": "UI Component",
                                "prompt": "A world clock widget for London, Tokyo and New York."}})
    obs, reward, terminated, truncated, info = env.step(PAGE)
    assert terminated and not truncated
    record = RewardRecord.model_validate(info["record"])
    assert env.unwrapped.last.record.timings_ms["total"] > 0
    assert record.task_id == "clock" and info["reward_valid"]
    assert reward == pytest.approx(record.reward)
    frame = env.render()
    assert frame.shape == (960, 1280, 3) and frame.dtype == np.uint8 and frame.std() > 1


def test_step_before_reset_is_a_clear_error():
    e = gym.make("AesWeb-v0", tasks="builtin:web")
    with pytest.raises(gym.error.ResetNeeded):
        e.unwrapped.step("x")
    e.close()


async def test_async_core_runs_inside_a_callers_event_loop(pipeline):
    core = make_core("AesWeb-v0", [Task(id="t", prompt="A world clock widget.", category="UI Component")], pipeline=pipeline)
    obs, _ = await core.reset(core.tasks[0])
    results = await asyncio.gather(*(make_core("AesWeb-v0", core.tasks, pipeline=pipeline).reset(core.tasks[0])
                                     for _ in range(2)))
    assert all(r[0] == obs for r in results)
    _, reward, terminated, _, info = await core.step(PAGE)
    assert terminated and info["status"] == "ok" and reward == info["record"]["reward"]
