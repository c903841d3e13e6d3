"""The chat policy, the judge client and a refine episode against a real vLLM server.

The scripted server checks what the clients send; this checks that vLLM accepts it (chat template
with tools, the hermes tool-call parser, structured output, `n`) and that the answers are read and
recorded. The model has random weights, so nothing here asserts that it does well: only that
requests are accepted, answers are well-formed and episodes are recorded.
"""

from __future__ import annotations

import json
import subprocess
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from aesenv.envs import make_core
from aesenv.envs.refine import RefineBudget
from aesenv.envs.tools import TOOLS
from aesenv.llm.client import ChatClient, ClientConfig, ModelError
from aesenv.llm.serve import JudgeServer
from aesenv.trajectory import run_episode
from policies.openai_chat import OpenAIChatPolicy
from support.vllm_server import minimal_env, vllm_problem, vllm_venv
from test_refine import TASK

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # the first test also waits for the server to start

NO_KEY = "AESENV_TEST_NO_KEY"  # unset: the server takes requests without a key


class Verdict(BaseModel):
    """Every field bounded, so a constrained random model ends its object well within max_tokens."""

    score: int = Field(ge=0, le=10)
    verdict: Literal["good", "bad"]


def _policy(server, **options) -> OpenAIChatPolicy:
    client = dict(base_url=server.url, api_key_env=NO_KEY, max_tokens=16, timeout_s=120, retries=1, backoff_s=0.1)
    return OpenAIChatPolicy(server.model, **{**client, **options})


def _judge(server, **options) -> ChatClient:
    config = dict(model=server.model, base_url=server.url, api_key_env=NO_KEY, max_tokens=64, timeout_s=120,
                  retries=1, backoff_s=0.1, cache_dir=None)
    return ChatClient(ClientConfig(**{**config, **options}))


def _well_formed(reply: dict) -> None:
    assert reply["role"] == "assistant"
    assert reply["content"] is None or isinstance(reply["content"], str)
    for call in reply.get("tool_calls", []):
        assert isinstance(call["function"]["name"], str) and isinstance(call["function"]["arguments"], str)


def test_the_server_inherits_no_environment(vllm_server, tmp_path):
    """API keys and tokens of the test run must not reach the server process."""
    with open(f"/proc/{vllm_server.pid}/environ", "rb") as f:
        names = {entry.split(b"=", 1)[0].decode() for entry in f.read().split(b"\0") if entry}
    assert names == set(minimal_env(tmp_path))


async def test_native_tool_calls_are_accepted(vllm_server):
    messages = [{"role": "user", "content": "Render the page."}]
    with_tools, plain = _policy(vllm_server), _policy(vllm_server, tool_mode="text")
    reply = await with_tools.act(messages, TOOLS)
    _well_formed(reply)
    assert with_tools.usage.requests == 1 and with_tools.usage.completion_tokens > 0
    await plain.act(messages, TOOLS)
    # the server put the tools into the prompt through the chat template
    assert with_tools.usage.prompt_tokens > plain.usage.prompt_tokens + 500
    await with_tools.close()
    await plain.close()


async def test_text_form_sends_no_tools_and_reads_the_text(vllm_server):
    policy = _policy(vllm_server, tool_mode="text")
    history = [{"role": "user", "content": "Write the page."},
               {"role": "assistant", "content": '<tool_call name="render"></tool_call>'},
               {"role": "user", "content": "render: 0 errors"}]
    reply = await policy.act(history, TOOLS)
    _well_formed(reply)
    assert "tool_calls" not in reply and isinstance(reply["content"], str) and reply["content"]
    assert policy.usage.requests == 1 and policy.usage.prompt_tokens > 0
    await policy.close()


async def test_chat_history_with_native_tool_calls_is_accepted(vllm_server):
    """The refine env sends back the assistant's `tool_calls` and `tool` results: the template must take them."""
    policy = _policy(vllm_server)
    history = [{"role": "user", "content": "Render the page."},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "render", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "page errors (0):"}]
    _well_formed(await policy.act(history, TOOLS))
    assert policy.usage.requests == 1
    await policy.close()


async def test_judge_answers_are_schema_valid_json(vllm_server):
    """Only a json_schema response_format makes vLLM constrain a random model to the schema."""
    client = _judge(vllm_server)
    done = await client.complete_json([{"role": "user", "content": "Rate the page."}], Verdict)
    assert isinstance(done.value, Verdict) and done.samples == [done.value]
    assert json.loads(done.raw_text) == done.value.model_dump()
    assert client.usage.requests >= 1 and client.usage.completion_tokens > 0
    await client.close()


async def test_judge_samples_come_back_in_one_request(vllm_server):
    client = _judge(vllm_server, temperature=1.0)  # vLLM refuses n > 1 with greedy sampling
    done = await client.complete_json([{"role": "user", "content": "Rate the page."}], Verdict, samples=3)
    assert len(done.samples) == 3 and all(isinstance(s, Verdict) for s in done.samples)
    assert client.usage.requests == 1
    await client.close()


async def test_refine_episode_driven_by_the_served_model_is_recorded(vllm_server, pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=2))
    policy = _policy(vllm_server, max_tokens=32)
    trajectory = await run_episode(env, policy, task="cafe")
    await policy.close()
    assert not trajectory.error, trajectory.error
    assert [s.turn for s in trajectory.steps] == [1, 2]
    assert all(s.action["role"] == "assistant" and s.tool_results and s.observation for s in trajectory.steps)
    assert trajectory.end == "max_turns" and trajectory.steps[-1].truncated
    assert trajectory.usage["requests"] == 2 and trajectory.usage["completion_tokens"] > 0
    record = trajectory.record  # None only when scoring failed on our side
    assert record is not None, trajectory.steps[-1].observation
    # whatever the random model wrote is its answer: scored by our pipeline, which must not fail
    assert record["status"] == "ok" and record["task_id"] == TASK.id, record.get("failure")
    assert isinstance(record["reward"], float) and trajectory.reward == record["reward"]


async def test_greedy_samples_are_refused_with_the_servers_reason(vllm_server):
    """vLLM will not return n > 1 greedy samples; the error must say so, not look like a bad answer."""
    client = _judge(vllm_server)
    with pytest.raises(ModelError, match="HTTP 400.*greedy"):
        await client.complete_json([{"role": "user", "content": "Rate the page."}], Verdict, samples=3)
    assert client.usage.requests == 1
    await client.close()


def test_the_printed_judge_command_parses_with_vllms_own_arguments(tmp_path):
    """`aesenv serve-judge` prints `vllm serve MODEL FLAGS`: every flag must be one this vLLM takes."""
    if problem := vllm_problem():
        pytest.skip(problem)
    args = JudgeServer(tensor_parallel_size=2, extra=["--dtype", "bfloat16"]).command()
    assert args[:2] == ["vllm", "serve"]
    check = ("import sys\n"
             "from vllm.entrypoints.launchers.cli_args import make_arg_parser\n"
             "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
             "ns = make_arg_parser(FlexibleArgumentParser()).parse_args(sys.argv[1:])\n"
             "print(ns.model, ns.tensor_parallel_size, ns.limit_mm_per_prompt, ns.tool_call_parser)\n")
    done = subprocess.run([str(vllm_venv() / "bin" / "python"), "-c", check, "--model", args[2], *args[3:]],
                          env=minimal_env(tmp_path), capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[:2] == [args[2], "2"] and "hermes" in done.stdout
