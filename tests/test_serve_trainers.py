"""Real trainers drive the served envs: TRL's `GRPOTrainer` (through its `environment_factory`,
`examples/trl_grpo.py`) takes optimizer steps on AesWeb-v0 and AesWebRefine-v0 served by `aesenv
serve`, with a tiny local model; and verifiers' own `vf-eval` evaluates `aesenv_vf` against a
local OpenAI-compatible server (`examples/verifiers_eval.sh`).

The tiny model is first taught (a few dozen steps of supervised fitting, here) to answer with a
page or a `write_file` call, so the rollouts carry real answers and real tool calls through TRL's
tool loop to the server, not noise that never calls a tool."""

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
WRITE_CALL = ('<tool_call>\n{"name": "write_file", "arguments": {"path": "index.html", "content": '
              '"<h1>Crumb bakery</h1><p>Fresh bread every morning.</p>"}}\n</tool_call>')


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
    sys.path.insert(0, str(ROOT / "examples"))
    import trl_grpo

    prompts = [row["prompt"] for row in trl_grpo.dataset(f"{server}/AesWebRefine-v0", 4, refine=True)]
    tools = [getattr(trl_grpo.RefineEnv, name) for name in ("edit_file", "render", "submit", "view_file", "write_file")]
    model = taught_model(tmp_path / "model", prompts, tools, WRITE_CALL)
    summary, episodes = run_example(server, "AesWebRefine-v0", model, tmp_path)
    assert summary["global_step"] == 2 and len(episodes) == 4
    for episode in episodes:
        assert episode["status"] == "ok" and episode["end"] == "submit" and episode["error"] is None
        assert episode["reward"] == pytest.approx(episode["normalized"])
    # TRL's tool loop called write_file on the server: more than the closing submit was played, and the page scored
    assert all(e["turns"] >= 2 for e in episodes), episodes
    assert any(e["reward"] > 0 for e in episodes), episodes
