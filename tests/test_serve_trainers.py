"""Real trainers drive the served envs: TRL's `GRPOTrainer` (through its `environment_factory`,
`examples/trl_grpo.py`) takes optimizer steps on AesWeb-v0 and AesWebRefine-v0 served by `aesenv
serve`, with a tiny local model; and verifiers' own `vf-eval` evaluates `aesenv_vf` against a
local OpenAI-compatible server (`examples/verifiers_eval.sh`).

For the single-turn env the tiny model is first taught (a few dozen steps of supervised fitting,
here) to answer with a page, so the rollouts carry real answers to the server, not only noise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openenv", reason="the serve extra is not installed (make setup installs it)")
trl = pytest.importorskip("trl", reason="the trl extra is not installed (make setup installs it)")

from support.serve_server import ROOT, running_server  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
PAGE_ANSWER = "```html\n<h1>Crumb &amp; Co bakery</h1><p>Fresh bread and pastries every morning.</p>\n```"


def taught_model(path: Path, prompts: list[list[dict]], tools: list | None, target: str, steps: int = 60) -> Path:
    """The tiny random Qwen2 (TRL's Qwen2.5 chat template, so TRL parses its tool calls), fitted to
    answer every prompt with `target`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from support.tiny_models import build_text

    build_text(path, qwen2_5_chat_template)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    answer = tokenizer(target + "<|im_end|>", add_special_tokens=False)["input_ids"]
    examples = []
    for prompt in prompts:
        ids = tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=True,
                                            return_dict=True)["input_ids"]
        examples.append((torch.tensor([list(ids) + answer]), len(ids)))
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        ids, start = examples[step % len(examples)]
        labels = ids.clone()
        labels[:, :start] = -100
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert loss.item() < 0.5, f"the tiny model did not learn its answer (loss {loss.item():.2f})"
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server("--env", "AesWeb-v0", "--env", "AesWebRefine-v0", "--max-sessions", "12",
                        log=tmp_path_factory.mktemp("serve") / "server.log") as (url, _):
        yield url


def run_example(server: str, env_id: str, model: Path, out: Path) -> tuple[dict, list[dict]]:
    episodes = out / "episodes.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "examples/trl_grpo.py"), "--url", server, "--env", env_id,
                           "--model", str(model), "--steps", "2", "--tasks", "4", "--max-completion-length", "96",
                           "--out", str(out / "run"), "--episodes", str(episodes)],
                          capture_output=True, text=True, timeout=2000, cwd=out,
                          env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary, [json.loads(line) for line in episodes.read_text().splitlines()]


def test_trl_grpo_on_the_single_turn_env(server, tmp_path):
    sys.path.insert(0, str(ROOT / "examples"))
    import trl_grpo

    prompts = [row["prompt"] for row in trl_grpo.dataset(f"{server}/AesWeb-v0", 4, refine=False)]
    model = taught_model(tmp_path / "model", prompts, None, PAGE_ANSWER)
    summary, episodes = run_example(server, "AesWeb-v0", model, tmp_path)
    assert summary["global_step"] == 2 and len(summary["losses"]) == 2
    assert len(episodes) == 2 * 2  # two steps of one prompt's group of two
    for episode in episodes:  # each rollout's reward is the served record's normalized reward
        assert episode["status"] == "ok" and episode["reward_name"] == "normalized" and episode["error"] is None
        assert episode["reward"] == pytest.approx(episode["normalized"]) and 0 <= episode["reward"] <= 1
    assert any(e["reward"] > 0 for e in episodes), episodes  # the taught page scores: real answers went through
    assert summary["rewards"] == pytest.approx(
        [sum(e["reward"] for e in episodes[i:i + 2]) / 2 for i in (0, 2)], abs=1e-3)


def test_trl_grpo_on_a_refine_env(server, tmp_path):
    """The refine env's tools are the env class's methods, which TRL renders as the model's tools;
    each call is one served step. (The random tiny model seldom writes a well-formed call, so the
    tools are also called here directly, through the same class TRL instantiates.)"""
    sys.path.insert(0, str(ROOT / "examples"))
    import trl_grpo
    from trl.chat_template_utils import qwen2_5_chat_template

    from support.tiny_models import build_text

    build_text(tmp_path / "model", qwen2_5_chat_template)
    summary, episodes = run_example(server, "AesWebRefine-v0", tmp_path / "model", tmp_path)
    assert summary["global_step"] == 2 and len(summary["losses"]) == 2 and len(episodes) == 4
    assert sorted(summary["tools"]) == ["edit_file", "render", "submit", "view_file", "write_file"]
    for episode in episodes:  # each rollout's episode was played out and scored on the server
        assert episode["status"] == "ok" and episode["end"] == "submit" and episode["error"] is None
        assert episode["reward"] == pytest.approx(episode["normalized"]) and episode["turns"] >= 1
    trl_grpo.RefineEnv.url, trl_grpo.RefineEnv.log = f"{server}/AesWebRefine-v0", str(tmp_path / "direct.jsonl")
    env = trl_grpo.RefineEnv()
    env.reset(task_id="web-website-01")
    assert "Wrote index.html" in env.write_file("index.html", "<h1>Crumb bakery</h1><p>Fresh bread every morning.</p>")
    assert "Fresh bread" in env.view_file("index.html") and env.render()
    reward = env.get_reward()
    line = json.loads((tmp_path / "direct.jsonl").read_text().splitlines()[-1])
    assert line["end"] == "submit" and line["turns"] == 4 and reward == pytest.approx(line["normalized"]) and reward > 0
    assert env.write_file("x", "y").startswith("The episode has ended")


VF_PAGE = ("```html\n<!doctype html><html><head><title>Crumb &amp; Co.</title></head><body><h1>Crumb &amp; Co. bakery</h1>"
           "<p>Breads and pastries, open 7-18.</p><form><input placeholder='Cake order'><button>Order</button></form>"
           "</body></html>\n```")


def vf_eval(model_url: str, env_url: str, out: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """examples/verifiers_eval.sh: `vf-eval aesenv_vf`, 2 tasks x 2 rollouts, scored at `env_url`."""
    out.mkdir(parents=True)
    done = subprocess.run(["bash", str(ROOT / "examples/verifiers_eval.sh")], capture_output=True, text=True,
                          timeout=1200, cwd=out,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
                               "PYTHONPATH": str(ROOT), "BASE_URL": model_url, "MODEL": "local-model",
                               "ENV_URL": env_url, "TASKS": "2", "ROLLOUTS": "2", "OUT": str(out / "eval")})
    traces = [trace for path in (out / "eval").glob("*/traces.jsonl")
              for line in path.read_text().splitlines() for trace in json.loads(line)["traces"]]
    return done, traces


def test_vf_eval_scores_aesenv_vf_through_a_served_env(server, tmp_path):
    pytest.importorskip("verifiers.v1", reason="verifiers is not installed (make setup installs it)")
    from support.openai_server import OpenAIServer

    with OpenAIServer() as model:
        model.default = lambda _: VF_PAGE
        done, traces = vf_eval(model.url, server, tmp_path / "served")
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
        assert len(traces) == 4 and len(model.completions) == 4
        prompts = {r.body["messages"][-1]["content"] if isinstance(r.body["messages"][-1]["content"], str)
                   else json.dumps(r.body["messages"][-1]["content"]) for r in model.completions}
        assert len(prompts) == 2  # two aesenv tasks, each asked twice
        for trace in traces:
            assert trace["ok"] and not trace["errors"], trace["errors"]
            assert set(trace["rewards"]) == {"execution", "static", "interactive"}
            assert all(0 <= r["score"] <= 1 for r in trace["rewards"].values())
        assert all(trace["rewards"]["static"]["score"] > 0 for trace in traces)  # the page is seen, not a blank
        # scored there, not here: with no server at the URL, each rollout errors (no reward), never a 0
        dead, traces = vf_eval(model.url, "http://127.0.0.1:9", tmp_path / "dead")
        assert dead.returncode == 0 and len(traces) == 4
        assert all(not t["ok"] and "ConnectError" in json.dumps(t["errors"]) for t in traces), traces[0]["errors"]
        assert all(score is None for t in traces for score in t["rewards"].values())
