"""Agent policies: the OpenAI-compatible chat policy over the scripted server (native tool calls,
text form, images, retries, token accounting), the scripted repair agent, and the HF policy on a
tiny random-weight model built in the test (skipped without transformers)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from aesenv.envs import make_core
from aesenv.envs.refine import RefineBudget
from aesenv.envs.tools import TOOLS
from aesenv.trajectory import Agent, run_episode
from policies import make_policy
from policies.openai_chat import OpenAIChatPolicy, without_images
from policies.repair import fix_method_on_missing_element, fix_undefined_name, has_errors
from support.openai_server import answer, http_error, tool_calls
from test_refine import BUGGY, TASK


def _policy(server, **options) -> OpenAIChatPolicy:
    return OpenAIChatPolicy("test-model", base_url=server.url, api_key_env="AESENV_TEST_NO_KEY", backoff_s=0.01,
                            **options)


async def test_native_tool_calls_round_trip(openai_server):
    openai_server.script(answer("", usage=(120, 30)))
    openai_server.script(tool_calls(("view_file", {"path": "index.html"}), text="Let me look."))
    policy = _policy(openai_server)
    first = await policy.act([{"role": "user", "content": "hi"}], TOOLS)
    assert first == {"role": "assistant", "content": ""}
    reply = await policy.act([{"role": "user", "content": "hi"}], TOOLS)
    assert reply["content"] == "Let me look."
    assert json.loads(reply["tool_calls"][0]["function"]["arguments"]) == {"path": "index.html"}
    assert openai_server.completions[1].body["tools"] == TOOLS
    assert "response_format" not in openai_server.completions[1].body
    assert policy.usage.requests == 2 and policy.usage.prompt_tokens >= 120 and policy.usage.completion_tokens >= 30
    await policy.close()


async def test_text_mode_sends_no_tools_and_can_drop_images(openai_server):
    openai_server.script('<tool_call name="submit"></tool_call>')
    policy = _policy(openai_server, tool_mode="text", keep_images=0)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    reply = await policy.act([{"role": "user", "content": [{"type": "text", "text": "look"}, image]}], TOOLS)
    request = openai_server.completions[0]
    assert "tools" not in request.body and not request.images
    assert request.messages[0]["content"] == "look\n[image omitted]"
    assert reply["content"] == '<tool_call name="submit"></tool_call>'
    await policy.close()


async def test_retries_transport_errors_then_answers(openai_server):
    openai_server.script(http_error(503), http_error(429, retry_after=0), tool_calls(("render", {})))
    policy = _policy(openai_server)
    reply = await policy.act([{"role": "user", "content": "go"}], TOOLS)
    assert reply["tool_calls"][0]["function"]["name"] == "render"
    assert policy.usage.requests == 3 and policy.usage.retries == 2
    await policy.close()


async def test_single_turn_generate_sends_the_task_prompt(openai_server):
    openai_server.script("```html\n<p>hi</p>\n```")
    policy = _policy(openai_server)
    assert "<p>hi</p>" in await policy.generate(TASK)
    assert openai_server.completions[0].messages == [{"role": "user", "content": TASK.prompt}]
    await policy.close()


def test_only_the_latest_images_are_kept():
    def shot(i):
        return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{i}"}}

    messages = [{"role": "user", "content": [{"type": "text", "text": f"turn {i}"}, shot(i)]} for i in range(4)]
    kept = without_images(messages, keep_last=2)
    assert [m["content"] for m in kept[:2]] == ["turn 0\n[image omitted]", "turn 1\n[image omitted]"]
    assert [m["content"][1]["image_url"]["url"][-1] for m in kept[2:]] == ["2", "3"]
    assert messages[0]["content"][1]["type"] == "image_url"  # the caller's conversation is untouched


def test_policies_are_agents_from_the_registry():
    assert isinstance(make_policy("repair"), Agent)
    with pytest.raises(ValueError, match="needs a model"):
        make_policy("openai")
    assert without_images([{"role": "tool", "tool_call_id": "x", "content": "ok"}])[0]["content"] == "ok"


def test_repair_fixers():
    source = 'const app = documnet.getElementById("app");\nconst box = document.querySelector("#b");'
    assert fix_undefined_name("page errors (1):\n  documnet is not defined", source) == (
        'const app = documnet.getElementById("app");', 'const app = document.getElementById("app");')
    js = 'document.getElementById("go").addEventListener("click", run);'
    assert fix_method_on_missing_element("Cannot read properties of null (reading 'addEventListener')", js) == (
        js, 'document.getElementById("go")?.addEventListener("click", run);')
    assert fix_undefined_name("zzz is not defined", source) is None
    assert has_errors("page errors (0):\nconsole errors/warnings (2):") and not has_errors("page errors (0):\nconsole errors/warnings (0):")
    assert has_errors("status: error\ntraceback:\nNameError") and fix_undefined_name(
        "NameError: name 'pltt' is not defined", "import matplotlib.pyplot as plt\npltt.show()") == ("pltt.show()", "plt.show()")


class _BuggyDraft:
    """Writes the buggy page, then hands over to the repair agent."""

    name = "buggy-draft+repair"

    def __init__(self) -> None:
        self.repair = make_policy("repair")

    async def act(self, messages, tools=None):
        if not any(m["role"] == "assistant" for m in messages):
            return {"role": "assistant", "content": f'<tool_call name="write_file">\n<path>index.html</path>\n<content>\n{BUGGY}\n</content>\n</tool_call>'}
        return await self.repair.act(messages, tools)


@pytest.mark.slow
async def test_repair_agent_fixes_the_bug_and_submits(pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=10))
    trajectory = await run_episode(env, _BuggyDraft(), task="cafe")
    names = [r["name"] for s in trajectory.steps for r in s.tool_results]
    assert names == ["write_file", "render", "view_file", "edit_file", "render", "submit"]
    assert trajectory.steps[4].potential > trajectory.steps[1].potential
    draft = (await pipeline.score(TASK, BUGGY)).record
    assert trajectory.reward > draft.reward


def _tiny_model(directory) -> str:
    """A random-weight GPT-2 with a word-level tokenizer, made here (no downloads)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["<unk>", "<eos>", "user", "assistant", "system", ":", "<tool_call", 'name="render">', "</tool_call>"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<eos>")
    tokenizer.save_pretrained(directory)
    config = GPT2Config(vocab_size=len(words), n_positions=2048, n_embd=16, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).save_pretrained(directory)
    return str(directory)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                    reason="HFPolicy needs the optional extra: pip install 'aesenv[hf]' (transformers)")
async def test_hf_policy_drives_an_episode_step(tmp_path, pipeline):
    policy = make_policy(f"hf:{_tiny_model(tmp_path)}")
    policy.max_new_tokens = 8
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=1))
    messages, _ = await env.reset(task="cafe")
    reply = await policy.act(messages + [{"role": "user", "content": [{"type": "text", "text": "x"},
                                                                      {"type": "image_url", "image_url": {"url": "data:,"}}]}])
    assert reply["role"] == "assistant" and isinstance(reply["content"], str)
    *_, truncated, info = await env.step(reply)
    assert truncated and info["end"] == "max_turns" and info["reward_valid"]  # random text: an invalid action, scored
