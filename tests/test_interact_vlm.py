"""The VLM web agent against a stand-in: the scripted OpenAI-compatible server (no model), with
scripted conversations."""

from pathlib import Path

import pytest

from aesenv.artifact import extract_artifact
from aesenv.interact.vlm_agent import VlmAgent
from aesenv.llm.client import ChatClient, ClientConfig
from aesenv.rewards import ChannelStatus, PipelineConfig
from aesenv.channels import ChannelContext
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.interactive import InteractiveChannel
from aesenv.tasks import Task

PAGES = Path(__file__).resolve().parents[1] / "benchmarks" / "interactions" / "pages"
TWO_BUTTONS = """<!doctype html><html><body><h1>Counter</h1>
<button id="inc" onclick="document.getElementById('n').textContent = 'count: 1'">Add one</button>
<button id="dead">Reset</button><p id="n">count: 0</p>
<input id="q" placeholder="Name"><p id="hello"></p>
<script>document.getElementById('q').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') document.getElementById('hello').textContent = 'Hello ' + e.target.value; });</script>
</body></html>"""
TASK = Task(id="counter", category="ui component", prompt="A counter with add and reset buttons and a greeting box.")


def turn(action: str, score=None, reason: str = "") -> dict:
    return {"previous_score": score, "previous_reason": reason, "thought": "next", "action": action}


@pytest.fixture
async def make_agent(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    clients: list[ChatClient] = []

    def make(budget: int = 3, **overrides) -> VlmAgent:
        settings = {"model": "test-vlm", "base_url": openai_server.url, "backoff_s": 0.01, "timeout_s": 5.0,
                    "cache_dir": None, **overrides}
        client = ChatClient(ClientConfig(**settings))
        clients.append(client)
        return VlmAgent(client, budget=budget)

    yield make
    for client in clients:
        await client.close()


async def _score(renderer, agent: VlmAgent, html: str = TWO_BUTTONS, task: Task = TASK):
    async with renderer.session(html) as (rendering, live):
        return await InteractiveChannel(agent=agent).score(PageEvidence(task, extract_artifact(html), rendering, live))


async def test_scripted_conversation_gives_the_expected_score(renderer, openai_server, make_agent):
    openai_server.script(
        {"plan": ["click Add one [0]", "click Reset [1]", "type a name [2]"]},
        turn("click [0]"),
        turn("click [1]", 1, "the count went up"),
        turn("type [2]; Ada", 0, "reset did nothing"),
        turn("finish", None, "typed; Enter was pressed but I wait for the result"),
    )
    result = await _score(renderer, make_agent())
    assert result.status is ChannelStatus.OK and result.raw == 1.0 and result.score == pytest.approx(1 / 3)
    steps = result.payload["steps"]
    assert [(s["action"], s["verdict"].get("score")) for s in steps] == [
        ("click [0]", 1), ("click [1]", 0), ("type [2]; Ada", None)]
    assert steps[0]["response"]["mutations"] >= 1 and steps[1]["response"]["mutations"] == 0
    assert result.payload["plan"][0] == "click Add one [0]" and result.payload["stopped"] == "the agent finished"
    assert result.payload["usage"]["requests"] == 5
    plan_request, first_turn, second_turn = openai_server.completions[:3]
    assert "A counter with add and reset" in plan_request.text and "[0] button" in plan_request.text
    assert len(plan_request.images) == 1 and plan_request.image_mimes == ["image/jpeg"]
    assert "first turn" in first_turn.text
    assert len(second_turn.images) == 2 and "Your previous action: click [0]" in second_turn.text
    assert "This page is a game" not in plan_request.text


async def test_the_budget_ends_the_episode(renderer, openai_server, make_agent):
    openai_server.script({"plan": ["press add"]}, turn("click [0]"), turn("click [0]", 1), turn("click [0]", 1),
                         turn("click [1]", 1))
    result = await _score(renderer, make_agent(budget=2))
    assert result.raw == 2.0 and result.score == 1.0 and result.payload["scored"] == 2
    assert len(openai_server.completions) == 4 and openai_server.pending == 1


async def test_null_verdict_after_a_click_is_sent_back(renderer, openai_server, make_agent):
    openai_server.script({"plan": ["add"]}, turn("click [0]"), turn("click [1]", None), turn("finish", 1, "works"))
    result = await _score(renderer, make_agent())
    assert result.raw == 1.0
    assert "previous_score may be null only after a typing step" in openai_server.completions[-1].text


async def test_garbage_answers_are_an_infra_error_not_a_zero(renderer, openai_server, make_agent):
    openai_server.default = lambda _: "I think the page is lovely."
    result = await _score(renderer, make_agent(retries=1))
    assert result.status is ChannelStatus.INFRA_ERROR and result.raw is None and result.score is None
    assert "ModelError" in result.payload["reason"] or "no usable answer" in result.payload["reason"]


async def test_game_pages_get_game_guidance(renderer, openai_server, make_agent):
    openai_server.script({"plan": ["start", "arrows"]}, turn("finish"))
    game = Task(id="g", category="game dev", prompt="A canvas game.")
    result = await _score(renderer, make_agent(), (PAGES / "canvas_game_ok.html").read_text(), game)
    assert result.status is ChannelStatus.FAILED and result.raw == 0.0  # a game that was never played
    assert "This page is a game" in openai_server.completions[0].text


def test_the_agent_follows_the_judge():
    config = PipelineConfig(judge="openai:test-vlm", judge_options={"base_url": "http://judge:1/v1", "samples": 3})
    agent = InteractiveChannel.from_context(ChannelContext(options=InteractiveChannel.config_options(config))).agent
    assert isinstance(agent, VlmAgent) and agent.client.config.base_url == "http://judge:1/v1"
    assert agent.name == "vlm-agent:test-vlm" and agent.budget == 3
    offline = InteractiveChannel.from_context(
        ChannelContext(options=InteractiveChannel.config_options(PipelineConfig(interaction_budget=5)))).agent
    assert offline.name == "offline-explorer" and offline.budget == 5
