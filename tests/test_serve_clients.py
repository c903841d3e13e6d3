"""`aesenv serve` as a newcomer's client meets it, written without aesenv (a WebSocket library,
urllib, OpenEnv's own clients): every action form on every env, wrong forms as `bad_action`,
errors that do not end an episode saying `done` false, the stateless `POST /score`, `/schema`
and `/metadata` enough to write the client from, `GET /tasks`, per-session options (reward
scale, images, frames by reference), the refine budget told to the agent, the refine tools over
OpenEnv's `/mcp`, and OpenEnv's own runtime validator."""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("openenv", reason="the serve extra is not installed (make setup installs it)")
import websockets

from support.serve_server import PAGE, PLOT, ROOT, call, running_server

pytestmark = pytest.mark.timeout(1800)
SINGLE = ["AesWeb-v0", "AesPlot-v0"]
REFINE = "AesWebRefine-v0"
FORMS = ["text", "message", "tool_calls"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    envs = [arg for env_id in [*SINGLE, REFINE] for arg in ("--env", env_id)]
    with running_server(*envs, "--max-sessions", "10", log=tmp_path_factory.mktemp("serve") / "server.log") as (url, _):
        yield url


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=900) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def answer_of(env_id: str) -> str:
    return f"```html\n{PAGE.format(marker='Bakery')}\n```" if env_id == "AesWeb-v0" else f"```python\n{PLOT}```"


def single_action(env_id: str, form: str) -> dict:
    """The one answer of a single-turn episode, in `form`."""
    answer = answer_of(env_id)
    if form == "text":
        return {"text": answer}
    if form == "message":
        return {"message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}
    return {"tool_calls": [call("answer", {"content": answer})]}


def refine_actions(form: str) -> list[dict]:
    """Write the page, then submit, in `form`."""
    page = PAGE.format(marker="Bakery")
    if form == "text":
        return [{"text": f'<tool_call name="write_file">\n<path>index.html</path>\n<content>\n{page}\n</content>\n'
                         "</tool_call>"}, {"text": '<tool_call name="submit"></tool_call>'}]
    calls = [[call("write_file", {"path": "index.html", "content": page}, "w")], [call("submit", {}, "s")]]
    if form == "message":
        return [{"message": {"role": "assistant", "content": None, "tool_calls": c}} for c in calls]
    return [{"tool_calls": c} for c in calls]


class Session:
    """A raw WebSocket session: what a client written without aesenv or OpenEnv sends."""

    def __init__(self, server: str, env_id: str) -> None:
        self.url = f"{server.replace('http', 'ws')}/{env_id}/ws"

    async def __aenter__(self) -> Session:
        self.ws = await websockets.connect(self.url, max_size=2**26)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ws.close()

    async def send(self, kind: str, data: dict | None = None) -> dict:
        await self.ws.send(json.dumps({"type": kind, **({} if data is None else {"data": data})}))
        return json.loads(await self.ws.recv())

    async def reset(self, **data) -> dict:
        answer = await self.send("reset", data)
        assert answer["type"] == "observation", answer
        return answer["data"]

    async def step(self, action: dict) -> dict:
        answer = await self.send("step", action)
        assert answer["type"] == "observation", answer
        return answer["data"]


def assert_scored(result: dict) -> None:
    observation = result["observation"]
    assert observation["error"] is None, observation["error"]
    assert result["done"] is True and isinstance(result["reward"], float) and observation["reward_valid"]
    record = observation["info"]["record"]
    assert record["status"] == "ok" and record["channels"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("env_id", SINGLE)
async def test_single_turn_takes_every_form(server, env_id, form):
    """The bug: `message` and `tool_calls` ended single-turn episodes as our failure (infra)."""
    async with Session(server, env_id) as session:
        reset = await session.reset(task=None, seed=0)
        assert reset["done"] is False and reset["observation"]["error"] is None
        result = await session.step(single_action(env_id, form))
    assert_scored(result)
    assert result["observation"]["info"]["record"]["artifact"]["kind"] == ("html" if env_id == "AesWeb-v0" else "python")


@pytest.mark.parametrize("form", FORMS)
async def test_refine_takes_every_form(server, form):
    async with Session(server, REFINE) as session:
        await session.reset(task="web-website-01")
        first, last = refine_actions(form)
        written = await session.step(first)
        assert written["done"] is False and written["observation"]["error"] is None
        assert "Wrote index.html" in written["observation"]["text"]
        result = await session.step(last)
    assert_scored(result)
    assert result["observation"]["info"]["end"] == "submit"


@pytest.mark.parametrize("env_id", SINGLE)
async def test_wrong_forms_are_bad_action_and_the_episode_goes_on(server, env_id):
    wrong = [
        {"tool_calls": [call("write_file", {"path": "index.html", "content": "<p>x</p>"})]},  # a refine tool
        {"tool_calls": [call("answer", {"text": "no content argument"})]},
        {"tool_calls": [call("answer", {"content": "a"}, "1"), call("answer", {"content": "b"}, "2")]},
        {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "answer", "arguments": "{broken"}}]},
        {"message": {"role": "assistant", "content": None}},
        {"message": {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}},
    ]
    async with Session(server, env_id) as session:
        before = await session.step({"text": "x"})
        assert before["observation"]["error"]["code"] == "no_episode" and before["done"] is False
        await session.reset(seed=1)
        for action in wrong:
            result = await session.step(action)
            error = result["observation"]["error"]
            assert error["code"] == "bad_action" and error["infra"] is False, (action, error)
            assert result["done"] is False and result["reward"] is None
        state = await session.send("state")
        assert state["data"]["done"] is False and state["data"]["turn"] == 0  # the one step is not used up
        assert_scored(await session.step(single_action(env_id, "text")))
        over = await session.step({"text": "again"})
        assert over["observation"]["error"]["code"] == "episode_over" and over["done"] is True


async def test_reset_errors_do_not_end_the_episode(server):
    async with Session(server, "AesWeb-v0") as session:
        for data, code in (({"task": "no-such-task"}, "bad_task"), ({"task": {"prompt": 5}}, "bad_task"),
                           ({"bogus": 1}, "bad_options"), ({"options": {"images": "huge"}}, "bad_options"),
                           ({"options": {"reward": "gdpo"}}, "bad_options")):
            result = await session.reset(**data)
            assert result["observation"]["error"]["code"] == code, (data, result["observation"]["error"])
            assert result["done"] is False
        # the README's whole-task form without an id is a task
        result = await session.reset(task={"prompt": "A landing page for a bakery", "category": "Website"})
        assert result["observation"]["error"] is None and result["observation"]["task_id"].startswith("inline-")


def test_schema_says_enough_to_write_a_client(server):
    status, schema = get(f"{server}/AesWeb-v0/schema")
    assert status == 200
    assert {"text", "tool_calls", "message"} <= set(schema["action"]["properties"])
    assert {"task", "seed", "options"} <= set(schema["reset"]["properties"])
    assert {"max_turns", "turn", "done", "options", "env_id", "task_id"} <= set(schema["state"]["properties"])
    assert set(schema["action_forms"]) >= {"text", "message", "tool_calls", "wrong_form"}
    assert [t["function"]["name"] for t in schema["tools"]] == ["answer"]
    assert schema["errors"]["bad_action"]["done"] is False and schema["errors"]["infra"]["done"] is True
    assert schema["calls"]["POST /score"]["session"] is False and schema["calls"]["WS /ws"]["session"] is True
    assert schema["score"]["request"]["properties"]["task"] and schema["budget"] is None
    status, refine = get(f"{server}/{REFINE}/schema")
    assert refine["budget"]["max_turns"] == 16 and refine["score"] is None
    assert {t["function"]["name"] for t in refine["tools"]} >= {"write_file", "render", "submit"}
    status, metadata = get(f"{server}/{REFINE}/metadata")
    assert status == 200 and metadata["name"] == REFINE
    assert "/ws" in metadata["readme_content"] and "16 turns" in metadata["readme_content"]
    status, openapi = get(f"{server}/AesWeb-v0/openapi.json")
    assert "stateless" in openapi["paths"]["/step"]["post"]["description"]


@pytest.mark.parametrize("form", ["answer", *FORMS])
def test_score_over_plain_http(server, form):
    """POST /score: a task and an answer, the reward and the record, no session."""
    body = {"task": "web-website-01"}
    if form == "answer":
        body["answer"] = answer_of("AesWeb-v0")
    else:
        body["action"] = single_action("AesWeb-v0", form)
    status, scored = post(f"{server}/AesWeb-v0/score", body)
    assert status == 200, scored
    assert scored["error"] is None and scored["reward_valid"] and isinstance(scored["reward"], float)
    assert scored["record"]["status"] == "ok" and scored["record"]["task_id"] == "web-website-01"
    assert scored["reward"] == pytest.approx(scored["record"]["reward"])


def test_score_refuses_clearly(server):
    status, answer = post(f"{server}/AesWeb-v0/score", {"task": "no-such-task", "answer": "x"})
    assert status == 400 and answer["error"]["code"] == "bad_task" and answer["reward"] is None
    status, answer = post(f"{server}/AesWeb-v0/score", {"task": "web-website-01",
                                                        "action": {"tool_calls": [call("submit", {})]}})
    assert status == 400 and answer["error"]["code"] == "bad_action"
    status, answer = post(f"{server}/AesWeb-v0/score", {"task": "web-website-01"})
    assert status == 422
    status, answer = post(f"{server}/{REFINE}/score", {"task": "web-website-01", "answer": "x"})
    assert status == 404 and "/ws" in answer["detail"]
    status, answer = post(f"{server}/AesWeb-v0/step", {"action": {"text": "x"}})  # OpenEnv's stateless step
    assert answer["observation"]["error"]["code"] == "no_episode" and answer["done"] is False


def test_tasks_are_listed_in_pages(server):
    status, first = get(f"{server}/AesWeb-v0/tasks?limit=7")
    assert status == 200 and first["total"] >= 10 and len(first["tasks"]) == 7
    ids = []
    for offset in range(0, first["total"], 7):
        ids += [t["id"] for t in get(f"{server}/AesWeb-v0/tasks?offset={offset}&limit=7")[1]["tasks"]]
    assert len(ids) == len(set(ids)) == first["total"] and "web-website-01" in ids
    assert all(t["prompt"] and t["category"] for t in first["tasks"])
    status, websites = get(f"{server}/AesWeb-v0/tasks?category=website&limit=500")
    assert 0 < websites["total"] < first["total"] and {t["category"] for t in websites["tasks"]} == {"Website"}
    assert get(f"{server}/AesWeb-v0/tasks?limit=0")[0] == 422


async def test_session_options_shape_what_comes_back(server):
    """Reward scale, images and frames by reference: the same answer, a small reply, the same record."""
    results = {}
    for name, options in (("full", {}), ("lean", {"reward": "normalized", "images": "none", "frames": "reference"}),
                          ("thumb", {"reward": "paper", "images": "thumbnail"})):
        async with Session(server, "AesWeb-v0") as session:
            await session.reset(task="web-website-01", options=options)
            await session.ws.send(json.dumps({"type": "step", "data": single_action("AesWeb-v0", "text")}))
            raw = await session.ws.recv()
            results[name] = (len(raw), json.loads(raw)["data"])
    full, lean, thumb = (results[k][1] for k in ("full", "lean", "thumb"))
    for result in (full, lean, thumb):
        assert_scored(result)
    record = lean["observation"]["info"]["record"]
    assert lean["reward"] == pytest.approx(record["normalized"]) and 0 <= lean["reward"] <= 1
    assert thumb["reward"] == pytest.approx(record["reward"]) and lean["observation"]["info"]["reward_name"] == "normalized"
    assert results["lean"][0] * 3 < results["full"][0], (results["lean"][0], results["full"][0])
    assert "data:image" not in json.dumps(lean) and "base64" not in json.dumps(lean)
    assert "image_url" not in json.dumps(lean["observation"]["messages"])
    urls = [p["image_url"]["url"] for m in thumb["observation"]["messages"] for p in m["content"]
            if isinstance(m["content"], list) and p.get("type") == "image_url"]
    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(urls[0].split(",", 1)[1])))
    assert image.format == "JPEG" and max(image.size) <= 320
    inline = json.dumps(full["observation"]["info"]["record"])
    refs = sorted(set(part.split('"')[0] for part in json.dumps(record).split('"frames/')[1:]))
    assert refs and '"frames/' not in inline
    with urllib.request.urlopen(f"{server}/AesWeb-v0/frames/{refs[0]}", timeout=30) as response:
        frame = response.read()
        assert response.headers["content-type"] == "image/jpeg" and frame[:2] == b"\xff\xd8"
    assert get(f"{server}/AesWeb-v0/frames/not-a-frame")[0] == 404


async def test_refine_budget_is_told_and_counted(server):
    async with Session(server, REFINE) as session:
        reset = await session.reset(task="web-website-01")
        system = reset["observation"]["messages"][0]
        assert system["role"] == "system" and "at most 16 turns" in system["content"]
        assert reset["observation"]["info"]["budget"]["max_turns"] == 16
        bad = await session.step({"text": "no call at all"})
        assert bad["done"] is False and bad["observation"]["error"] is None and "Invalid action" in bad["observation"]["text"]
        assert bad["observation"]["info"]["turns_left"] == 15
        state = (await session.send("state"))["data"]
        assert state["max_turns"] == 16 and state["turn"] == 1 and state["done"] is False


def rpc(url: str, method: str, params: dict) -> dict:
    return post(f"{url}/mcp", {"jsonrpc": "2.0", "method": method, "params": params, "id": 1})[1]


async def test_refine_tools_over_mcp(server):
    """OpenEnv's MCP convention: the tools listed and callable over HTTP (a session by id), over the
    `/ws` session (message type `mcp`), and by OpenEnv's own `MCPToolClient`."""
    url = f"{server}/{REFINE}"
    listed = rpc(url, "tools/list", {})["result"]["tools"]
    assert {t["name"] for t in listed} >= {"start_episode", "write_file", "edit_file", "render", "run", "submit"}
    assert all(t["inputSchema"].get("type") == "object" for t in listed)
    lonely = rpc(url, "tools/call", {"name": "render", "arguments": {}})["result"]
    assert lonely["observation"]["error"]["code"] == "no_episode" and lonely["done"] is False
    session = rpc(url, "openenv/session/create", {})["result"]["session_id"]
    try:
        started = rpc(url, "tools/call", {"name": "start_episode", "arguments": {"task": "web-website-01"},
                                          "session_id": session})["result"]
        assert started["observation"]["task_id"] == "web-website-01" and started["done"] is False
        wrote = rpc(url, "tools/call", {"name": "write_file", "session_id": session,
                                        "arguments": {"path": "index.html", "content": PAGE.format(marker="Mcp")}})
        assert "Wrote index.html" in wrote["result"]["observation"]["text"]
        done = rpc(url, "tools/call", {"name": "submit", "arguments": {}, "session_id": session})["result"]
        assert done["done"] is True and isinstance(done["reward"], float)
        assert done["observation"]["info"]["record"]["status"] == "ok"
    finally:
        assert rpc(url, "openenv/session/close", {"session_id": session})["result"]["closed"] is True
    async with Session(server, REFINE) as ws:
        await ws.reset(task="web-website-01")
        answer = await ws.send("mcp", {"jsonrpc": "2.0", "method": "tools/call", "id": 7,
                                       "params": {"name": "view_file", "arguments": {"path": "index.html"}}})
        assert answer["type"] == "mcp" and answer["data"]["result"]["done"] is False
        assert "index.html" in answer["data"]["result"]["observation"]["text"]
    from openenv.core.mcp_client import MCPToolClient

    async with MCPToolClient(base_url=url, message_timeout_s=600) as client:
        client.use_production_mode = True  # HTTP /mcp with a session of its own
        assert "submit" in {t.name for t in await client.list_tools()}
        await client.call_tool("start_episode", task="web-website-01")
        result = await client.call_tool("submit")
        assert result["done"] is True and result["observation"]["info"]["end"] == "submit"


def test_openenv_validates_every_served_env(server):
    from openenv.cli._validation import validate_running_environment

    for env_id in [*SINGLE, REFINE]:
        report = validate_running_environment(f"{server}/{env_id}", timeout_s=30)
        failed = [c for c in report["criteria"] if not c["passed"]]
        assert report["passed"], failed


def test_openenv_manifest_names_a_loadable_app():
    import importlib

    import yaml

    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["runtime"] == "fastapi"
    module, _, attribute = manifest["app"].partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))
