"""The whole AesCoder reward on its VLM path: execution (HTMLHint) + VLM static judge + VLM web
agent, through `aesenv score` and through `AesWeb-v0`. No model is involved: the "remote models" are
a stand-in, the scripted OpenAI-compatible server (tests/support/openai_server.py) answering what
`support.aescoder_script` says for each role. A cached re-score asks nothing; a judge that answers
garbage masks its channel."""

import json
import math
import os
import subprocess
import sys

import gymnasium as gym
import pytest

import aesenv  # noqa: F401 - registers the envs
from aesenv.tasks import Task
from support.aescoder_script import PAGE, role_of, scripted_aescoder

TASK = Task(id="demo-button", category="UI Component", prompt="A demo card with a button that says it was clicked.")
# AesCoder Eq. 1 on what the script answers: exec +1, static 72, one interaction scored 1.
EXPECTED_REWARD = 0.1 * 1 + 0.8 * 72 + 0.1 * 1


def check_full_record(record: dict) -> None:
    channels = record["channels"]
    assert channels["execution"]["status"] == "ok", channels["execution"]["payload"]
    assert channels["execution"]["raw"] == 1
    static = channels["static"]
    assert static["status"] == "ok" and static["raw"] == 72 and static["payload"]["judge"] == "openai:test-model"
    interactive = channels["interactive"]
    assert interactive["status"] == "ok" and interactive["raw"] == 1
    assert interactive["payload"]["agent"] == "vlm-agent:test-model"
    assert record["reward"] == pytest.approx(EXPECTED_REWARD)


@pytest.mark.slow
def test_aesenv_score_runs_the_full_vlm_reward_and_rescoring_is_cached(openai_server, tmp_path):
    openai_server.default = scripted_aescoder
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    env = {**os.environ, "OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": "sk-test",
           "AESENV_JUDGE_CACHE": str(tmp_path / "cache")}

    def score() -> dict:
        out = subprocess.run([sys.executable, "-m", "aesenv.cli", "score", str(page), "--prompt", TASK.prompt,
                              "--category", TASK.category.value, "--judge", "openai:test-model", "--json"],
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    check_full_record(score())
    roles = [role_of(r) for r in openai_server.completions]
    assert roles.count("static") == 1 and roles.count("agent") >= 2
    asked = len(openai_server.completions)
    check_full_record(score())
    assert len(openai_server.completions) == asked  # every answer came from the cache


@pytest.mark.slow
def test_the_env_runs_the_full_vlm_reward_and_masks_a_garbage_judge(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    options = {"base_url": openai_server.url, "cache_dir": str(tmp_path / "cache"), "backoff_s": 0.01}
    config = {"judge": "openai:test-model", "judge_options": options}
    openai_server.default = scripted_aescoder
    env = gym.make("AesWeb-v0", tasks=[TASK], config=config)
    try:
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(f"```html\n{PAGE}\n```")
        assert terminated and info["reward_valid"] and reward == pytest.approx(EXPECTED_REWARD)
        check_full_record(info["record"])
    finally:
        env.close()

    def garbage(request):
        return "I like it!" if role_of(request) == "static" else scripted_aescoder(request)

    openai_server.default = garbage
    env = gym.make("AesWeb-v0", tasks=[TASK], config={**config, "judge_options": {
        **options, "cache_dir": str(tmp_path / "fresh-cache"), "retries": 1}})
    try:
        env.reset(seed=0)
        _, reward, _, _, info = env.step(f"```html\n{PAGE}\n```")
        assert math.isnan(reward) and not info["reward_valid"]
        assert info["record"]["channels"]["static"]["status"] == "infra_error"
        assert info["record"]["reward"] is None
    finally:
        env.close()
