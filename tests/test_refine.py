"""Refine envs: the tool grammar, the workspace, budgets, observations, Φ, the Gymnasium facade,
and the done-when episode (a scripted model fixes a JS bug it saw in the render)."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from aesenv.envs import make_core
from aesenv.envs.refine import RefineBudget, parse_text_action, truncate
from aesenv.envs.tools import ActionError, ToolError, Workspace, parse_action
from aesenv.tasks import Task
from aesenv.trajectory import run_episode, write_trajectory
from policies.openai_chat import OpenAIChatPolicy
from support.openai_server import tool_calls

TASK = Task(id="cafe", prompt="A landing page for Corner Cafe with a menu of Espresso, Latte and Mocha")

BUGGY = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Corner Cafe</title>
<style>body{font-family:sans-serif;margin:0;color:#222}header{background:#3b2a20;color:#fff;padding:48px}
section{padding:32px 48px}.item{display:flex;justify-content:space-between;border-bottom:1px solid #ddd;padding:12px 0}</style>
</head><body><div id="app"></div>
<script>
const menu = [["Espresso", "$3"], ["Latte", "$4"], ["Mocha", "$5"]];
const app = documnet.getElementById("app");
app.innerHTML = `<header><h1>Corner Cafe</h1><p>Fresh coffee on the corner since 1998.</p></header>
<section><h2>Menu</h2>${menu.map(([n, p]) => `<div class="item"><span>${n}</span><b>${p}</b></div>`).join("")}</section>
<section><h2>Visit us</h2><p>Open every day from 7 to 19, at 12 Main Street.</p></section>`;
</script></body></html>"""


# --- grammar -------------------------------------------------------------------------------


def test_text_form_named_arguments_keep_raw_content():
    text = 'I will write it.\n<tool_call name="write_file">\n<path>index.html</path>\n<content>\n<p a="1">"x"</p>\n</content>\n</tool_call>'
    assert parse_text_action(text) == {"name": "write_file", "arguments": {"path": "index.html", "content": '<p a="1">"x"</p>'}}


def test_text_form_json_spellings():
    hermes = '<tool_call>\n{"name": "edit_file", "arguments": {"path": "a", "old": "b", "new": "c"}}\n</tool_call>'
    assert parse_text_action(hermes)["arguments"] == {"path": "a", "old": "b", "new": "c"}
    assert parse_text_action('<tool_call name="view_file">{"path": "a.js"}</tool_call>')["arguments"] == {"path": "a.js"}


@pytest.mark.parametrize("text, fragment", [
    ("just prose", "no tool call found"),
    ('<tool_call name="render">', "never closed"),
    ('<tool_call name="delete_all"></tool_call>', "unknown tool"),
    ("<tool_call>not json</tool_call>", "JSON object"),
])
def test_text_form_errors(text, fragment):
    result = parse_text_action(text)
    assert isinstance(result, ActionError) and fragment in result.message


def test_native_calls_with_bad_arguments_are_answered_not_dropped():
    calls = parse_action({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "render", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "edit_file", "arguments": '{"path": "x"}'}},
        {"id": "c", "type": "function", "function": {"name": "write_file", "arguments": "{oops"}}]})
    assert [(c.id, c.name, bool(c.problem)) for c in calls] == [("a", "render", False), ("b", "edit_file", True),
                                                               ("c", "write_file", True)]
    assert "missing argument" in calls[1].problem and "not valid JSON" in calls[2].problem


def test_workspace_edit_errors_and_paths():
    ws = Workspace()
    ws.write("index.html", "<p>one</p><p>one</p>")
    with pytest.raises(ToolError, match="occurs 2 times"):
        ws.edit("index.html", "one", "two")
    with pytest.raises(ToolError, match="does not occur"):
        ws.edit("index.html", "three", "two")
    ws.edit("./index.html", "<p>one</p><p>", "<p>1</p><p>")
    assert ws.read("index.html") == "<p>1</p><p>one</p>"
    for bad in ("../etc/passwd", "/etc/passwd", "", "a/../../b"):
        with pytest.raises(ToolError, match="bad path"):
            ws.write(bad, "x")


def test_truncate_marks_what_it_cut():
    cut = truncate("x" * 5000, 1000)
    assert len(cut) == 1000 and cut.endswith("[truncated 4000 characters]")
    assert truncate("short", 1000) == "short"


# --- env -----------------------------------------------------------------------------------


@pytest.fixture
async def web_env(pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=8, max_observation_chars=2000))
    yield env
    await env.close()


async def test_first_turn_is_the_single_turn_prompt(web_env):
    messages, info = await web_env.reset(task="cafe")
    assert messages[-1] == {"role": "user", "content": TASK.prompt}
    assert messages[0]["role"] == "system" and '<tool_call name="edit_file">' in messages[0]["content"]
    assert info["potential"] == 0.0 and "submit" in info["tools"]
    assert info["start_potential"] == 0.0  # an empty start is worth nothing, and that is known


async def test_invalid_actions_are_observations_and_render_needs_a_file(web_env):
    await web_env.reset(task="cafe")
    obs, reward, terminated, truncated, info = await web_env.step("I think the page is fine.")
    assert "Invalid action" in obs[0]["content"] and (reward, terminated, truncated) == (0.0, False, False)
    obs, *_, info = await web_env.step({"name": "render", "arguments": {}})
    assert "no file 'index.html'" in obs[0]["content"] and info["tool_results"][0]["ok"] is False
    obs, reward, terminated, _, info = await web_env.step({"name": "submit", "arguments": {}})
    assert "Submitted without index.html" in obs[0]["content"] and terminated
    assert info["reward_valid"] and info["failure"] and reward < 10  # an empty answer: scored, and low


async def test_render_shows_the_error_and_potential_carries_forward(web_env):
    await web_env.reset(task="cafe")
    await web_env.step({"name": "write_file", "arguments": {"path": "index.html", "content": BUGGY}})
    obs, _, _, _, info = await web_env.step('<tool_call name="render"></tool_call>')
    text, image = obs[0]["content"][0]["text"], obs[0]["content"][1]
    assert "documnet is not defined" in text and image["type"] == "image_url"
    buggy_phi = info["potential"]
    await web_env.step({"name": "write_file", "arguments": {"path": "notes.txt", "content": "n" * 5000}})
    obs, _, _, _, info = await web_env.step({"name": "view_file", "arguments": {"path": "notes.txt"}})
    assert info["potential"] == buggy_phi and info["delta_potential"] == 0.0
    assert len(obs[0]["content"]) == 2000 and obs[0]["content"].endswith("characters]")  # the observation budget
    await web_env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": "documnet", "new": "document"}})
    _, _, _, _, info = await web_env.step({"name": "render", "arguments": {}})
    assert info["potential"] > buggy_phi and info["delta_potential"] == pytest.approx(info["potential"] - buggy_phi)
    assert info["start_potential"] == 0.0  # the page was written in the episode: the start stays empty


async def test_potential_is_the_share_of_requirements_met_and_is_remeasured_at_the_end(pipeline):
    task = Task(id="req", prompt=TASK.prompt, requirements=[{"type": "text_exact", "text": "Corner Cafe"},
                                                            {"type": "text_exact", "text": "Open daily"}])
    env = make_core("AesWebRefine-v0", [task], pipeline=pipeline)
    await env.reset(task="req")
    await env.step({"name": "write_file", "arguments": {"path": "index.html", "content": BUGGY}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] == 0.0  # the page threw before writing any text
    await env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": "documnet", "new": "document"}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] == 0.5 and info["delta_potential"] == 0.5
    await env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": "Open every day", "new": "Open daily"}})
    _, reward, terminated, _, info = await env.step({"name": "submit", "arguments": {}})
    assert terminated and info["potential"] == 1.0 and info["delta_potential"] == 0.5  # edited after the last render


async def test_an_edit_no_one_sees_earns_no_potential(pipeline):
    """Φ pays for what a person would see: required text added where no pixel shows it (masked, or
    under the page's own background) leaves Φ where it was, and so does any edit whose render is
    pixel-identical to the last one, whatever else its measures read."""
    task = Task(id="req", prompt=TASK.prompt, requirements=[{"type": "text_exact", "text": "Corner Cafe"},
                                                            {"type": "text_exact", "text": "Open daily"}])
    env = make_core("AesWebRefine-v0", [task], pipeline=pipeline)
    await env.reset(task="req")
    page = '<!doctype html><html><body><h1>Corner Cafe</h1><p>Good coffee</p></body></html>'
    await env.step({"name": "write_file", "arguments": {"path": "index.html", "content": page}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] == 0.5
    hidden = ('<p style="-webkit-mask-image:linear-gradient(transparent,transparent)">Open daily</p>'
              '<div style="background:#fff"><p style="position:relative;z-index:-1">Open daily</p></div>')
    await env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": "</body>", "new": hidden + "</body>"}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] == 0.5 and info["delta_potential"] == 0.0
    await env.close()
    # a measure that reads more than pixels (console errors lower the structural Φ): an edit that
    # only silences them changes no pixel, so Φ stays
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline)
    await env.reset(task="cafe")
    noisy = '<!doctype html><html><body><h1>Corner Cafe</h1><script>console.error("noise")</script></body></html>'
    await env.step({"name": "write_file", "arguments": {"path": "index.html", "content": noisy}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    noisy_phi = info["potential"]
    await env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": 'console.error("noise")', "new": ""}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] == noisy_phi and info["delta_potential"] == 0.0
    await env.step({"name": "edit_file", "arguments": {"path": "index.html", "old": "<h1>", "new": "<p>Fresh bread daily</p><h1>"}})
    _, _, _, _, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] > noisy_phi  # a change a person sees is measured again (now without the noise)
    await env.close()


async def test_multi_file_pages_render_from_the_workspace(web_env):
    await web_env.reset(task="cafe")
    page = '<!doctype html><html><head><link rel="stylesheet" href="css/site.css"></head><body><h1>Hi</h1><script src="app.js"></script></body></html>'
    action = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "w1", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"path": "index.html", "content": page})}},
        {"id": "w2", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"path": "css/site.css", "content": "h1{color:rgb(200, 0, 0)}"})}},
        {"id": "w3", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"path": "app.js", "content": "document.body.insertAdjacentHTML('beforeend', '<p id=js>from app.js</p>')"})}},
        {"id": "r", "type": "function", "function": {"name": "render", "arguments": "{}"}}]}
    obs, *_ = await web_env.step(action)
    assert [m.get("tool_call_id") for m in obs[:4]] == ["w1", "w2", "w3", "r"]
    assert obs[4]["role"] == "user" and obs[4]["content"][1]["type"] == "image_url"
    assert "blocked or missing requests (0)" in obs[3]["content"] and "p×1" in obs[3]["content"]  # app.js ran
    await web_env.step({"name": "submit", "arguments": {}})
    final = web_env.last.rendering  # the pipeline scored the page with its files
    assert next(e for e in final.elements if e.tag == "h1").color == "rgb(200, 0, 0)"
    assert any("from app.js" in e.text for e in final.elements)


async def test_turn_budget_ends_and_scores_the_workspace(pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=2))
    await env.reset(task="cafe")
    await env.step({"name": "write_file", "arguments": {"path": "index.html", "content": BUGGY.replace("documnet", "document")}})
    obs, reward, terminated, truncated, info = await env.step({"name": "view_file", "arguments": {"path": "index.html"}})
    assert (terminated, truncated, info["end"]) == (False, True, "max_turns")
    assert info["reward_valid"] and reward > 0 and info["record"]["task_id"] == "cafe"
    assert "Episode ended (max_turns)" in obs[-1]["content"]
    with pytest.raises(gym.error.ResetNeeded):
        await env.step({"name": "render", "arguments": {}})


async def test_plot_workspace_starts_with_the_data(pipeline):
    task = Task(id="p", kind="plot", prompt="Bar chart of sales by region", data_files={"data.csv": "region,sales\nN,3\nS,5\n"})
    env = make_core("AesPlotRefine-v0", [task], pipeline=pipeline)
    messages, _ = await env.reset(task="p")
    assert "data.csv" in messages[-1]["content"] and set(env.workspace.files) == {"data.csv"}
    obs, *_ = await env.step({"name": "view_file", "arguments": {"path": "data.csv"}})
    assert "region,sales" in obs[0]["content"]


@pytest.mark.parametrize("env_id", ["AesWebRefine-v0", "AesPlotRefine-v0"])
def test_gymnasium_check_env(env_id):
    env = gym.make(env_id, disable_env_checker=True).unwrapped
    try:
        check_env(env, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert env.observation_space.contains(obs) and info["messages"][-1]["role"] == "user"
        obs, reward, terminated, truncated, info = env.step("not a tool call")
        assert "Invalid action" in obs and reward == 0.0 and not (terminated or truncated)
    finally:
        env.close()


# --- the done-when episode -----------------------------------------------------------------


def _fix_after_seeing_the_error(request):
    """The scripted model edits only if the render it was shown reported the bug."""
    shown = "\n".join(m["content"] for m in request.messages if m["role"] == "tool" and isinstance(m["content"], str))
    assert "documnet is not defined" in shown, "the render observation did not show the page error"
    assert request.images, "the screenshot did not reach the model"
    return tool_calls(("edit_file", {"path": "index.html", "old": "documnet.getElementById", "new": "document.getElementById"}))


@pytest.mark.slow
async def test_scripted_model_fixes_a_js_bug_and_beats_its_first_draft(openai_server, pipeline, tmp_path):
    openai_server.script(
        tool_calls(("write_file", {"path": "index.html", "content": BUGGY})),
        tool_calls(("render", {})),
        _fix_after_seeing_the_error,
        tool_calls(("render", {})),
        tool_calls(("submit", {})),
    )
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline)
    policy = OpenAIChatPolicy("test-model", base_url=openai_server.url, api_key_env="AESENV_TEST_NO_KEY")
    try:
        trajectory = await run_episode(env, policy, task="cafe")
    finally:
        await policy.close()
    draft = (await pipeline.score(TASK, BUGGY)).record
    assert trajectory.end == "submit" and not trajectory.error
    assert trajectory.reward is not None and draft.reward is not None
    assert trajectory.reward > draft.reward
    assert [s.potential for s in trajectory.steps][1] < trajectory.steps[3].potential
    assert openai_server.completions[0].body["tools"][0]["function"]["name"] == "write_file"
    assert policy.usage.requests == 5 and policy.usage.prompt_tokens > 0

    timeline = write_trajectory(trajectory, tmp_path)
    page = timeline.read_text()
    assert "documnet is not defined" in page and "edit_file" in page and f"{trajectory.reward}" in page
    images = list((tmp_path / "images").iterdir())
    assert images and all(f'alt="images/{p.name}"' in page for p in images)
    assert page.count('src="data:image/png;base64,') == len(images)  # self-contained: the images are inlined
    stored = json.loads((tmp_path / "trajectory.json").read_text())
    assert stored["reward"] == trajectory.reward and not math.isnan(stored["steps"][-1]["reward"])


@pytest.mark.slow
async def test_plot_episode_run_tool_and_repair_of_a_traceback(pipeline):
    from policies.repair import RepairPolicy

    task = Task(id="p", kind="plot", prompt="Bar chart of sales by region", data_files={"data.csv": "region,sales\nN,3\nS,5\n"})
    env = make_core("AesPlotRefine-v0", [task], pipeline=pipeline)
    await env.reset(task="p")
    obs, *_, info = await env.step({"name": "run", "arguments": {"command": "wc -l < data.csv > lines.txt; echo made"}})
    assert "made" in obs[0]["content"] and env.workspace.read("lines.txt").strip() == "3"
    script = ("import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('data.csv')\n"
              "fig, ax = plt.subplots()\nax.bar(df['region'], df['sales'])\nax.set_title('Sales by region')\npltt.tight_layout()\n")
    await env.step({"name": "write_file", "arguments": {"path": "main.py", "content": script}})
    render = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "r", "type": "function", "function": {"name": "render", "arguments": "{}"}}]}
    obs, *_, info = await env.step(render)
    assert "NameError" in obs[0]["content"] and obs[1]["content"][1]["type"] == "image_url"  # traceback and figure
    broken_phi = info["potential"]
    messages = [*env.first_turn(task), render, *obs]
    repair = RepairPolicy()
    view = await repair.act(messages)
    obs, *_ = await env.step(view)
    messages += [view, *obs]
    edit = await repair.act(messages)
    assert json.loads(edit["tool_calls"][0]["function"]["arguments"])["new"] == "plt.tight_layout()"
    await env.step(edit)
    obs, *_, info = await env.step({"name": "render", "arguments": {}})
    assert info["potential"] > broken_phi and obs[-1]["content"][1]["type"] == "image_url"
    _, reward, terminated, _, info = await env.step({"name": "submit", "arguments": {}})
    assert terminated and info["reward_valid"] and reward > 0 and info["record"]["failure"] == ""


async def test_wall_time_budget_and_a_failing_agent(pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_wall_s=1e-6))
    await env.reset(task="cafe")
    _, _, terminated, truncated, info = await env.step({"name": "view_file", "arguments": {"path": "index.html"}})
    assert (terminated, truncated, info["end"]) == (False, True, "max_wall_s")

    class Broken:
        name = "broken"

        async def act(self, messages, tools=None):
            raise ConnectionError("endpoint down")

    trajectory = await run_episode(make_core("AesWebRefine-v0", [TASK], pipeline=pipeline), Broken(), task="cafe")
    assert trajectory.error == "agent broken failed: ConnectionError: endpoint down"
    assert trajectory.steps == [] and trajectory.reward is None
