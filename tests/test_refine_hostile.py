"""Refine envs under hostile tool input and hostile workspace state: every step returns an
observation (never an exception), observations always serialize as UTF-8, an answer's own fault
is scored (finite reward, `reward_valid`), never masked as our infra failure, and the episode goes
on and can be submitted afterwards."""

from __future__ import annotations

import asyncio
import json
import math

import gymnasium as gym
import pytest

from aesenv.envs import make_core
from aesenv.envs.refine import RefineBudget
from aesenv.envs.tools import (MAX_FILE_BYTES, MAX_FILES, REFINE_TOOL_SPECS, ActionError, ToolCall, Workspace,
                               parse_action, path_problem)
from aesenv.kinds.plot.judge import OfflinePlotJudge
from aesenv.kinds.plot.figures import draw_figure
from aesenv.kinds.plot.plotly_png import figure_problem, figure_size
from aesenv.sandbox.base import CommandRun, Figure, RunStatus
from aesenv.tasks import Task

WEB = Task(id="cafe", prompt="A landing page for Corner Cafe with a menu of Espresso, Latte and Mocha")
PLOT = Task(id="p", kind="plot", prompt="Bar chart of sales by region", data_files={"data.csv": "region,sales\nN,3\nS,5\n"})
PAGE = ("<!doctype html><html lang=en><head><meta charset=utf-8><title>Corner Cafe</title></head><body>"
        "<h1>Corner Cafe</h1><ul><li>Espresso $3</li><li>Latte $4</li><li>Mocha $5</li></ul></body></html>")
HANG_GUARD_S = 60.0
SCRIPT = ("import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('data.csv')\n"
          "fig, ax = plt.subplots()\nax.bar(df['region'], df['sales'])\nax.set_title('Sales by region')\n"
          "ax.set_xlabel('Region')\nax.set_ylabel('Sales')\n")


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def native(*calls: tuple[str, object]) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)]}


def text_of(messages: list[dict]) -> str:
    parts = []
    for m in messages:
        content = m["content"]
        parts += [p.get("text", "") for p in content] if isinstance(content, list) else [content]
    return "\n".join(parts)


def workspace_is_clean(ws: Workspace) -> None:
    assert len(ws.files) <= MAX_FILES
    for name, data in ws.files.items():
        assert path_problem(name) == (name, ""), name
        assert isinstance(data, bytes) and len(data) <= MAX_FILE_BYTES
    ws.fingerprint()  # hashes every name: fails on a name that is not UTF-8


async def step(env, action) -> tuple[list[dict], float, bool, bool, dict]:
    """One step that must behave: an observation that serializes as UTF-8, no tool answered by
    the internal-error safety net (a bug), reward 0 until the end, then a real score."""
    obs, reward, terminated, truncated, info = await env.step(action)
    assert isinstance(obs, list) and obs and all(isinstance(m, dict) for m in obs)
    json.dumps(obs, ensure_ascii=False).encode("utf-8")  # no lone surrogates anywhere
    json.dumps(info["tool_results"], ensure_ascii=False).encode("utf-8")
    assert not [r for r in info["tool_results"] if r["error"].startswith("internal error")], info["tool_results"]
    if terminated or truncated:
        # Nothing here is our infrastructure's fault: every end is a real, finite score.
        assert info["reward_valid"] is True and math.isfinite(reward), (reward, info.get("failure"))
        assert info["status"] != "infra_error"
        json.dumps(info["record"], ensure_ascii=False).encode("utf-8")
    else:
        assert reward == 0.0
    workspace_is_clean(env.workspace)
    return obs, reward, terminated, truncated, info


# --- hostile actions, through both envs ----------------------------------------------------

HOSTILE_ACTIONS = [
    None, 7, 3.5, [], ["render"], b"bytes", {}, {"name": None}, {"name": ["write_file"]}, {"name": {"x": 1}},
    {"name": "write_file"}, {"name": "write_file", "arguments": None}, {"name": "write_file", "arguments": []},
    {"name": "write_file", "arguments": "not json"}, {"name": "write_file", "arguments": "[" * 100_000},
    call("write_file", path=5, content=None), call("write_file", path="index.html"),
    call("edit_file", path="index.html", old=["a"], new={}), call("run", command=12),
    {"tool_calls": 5}, {"tool_calls": "render"}, {"tool_calls": [5, None, "x", {"function": "render"},
                                                                 {"id": ["x"], "function": {"name": 3}}]},
    {"content": [{"type": "text", "text": 5}, 3, None]}, {"content": {"text": "x"}}, {"role": "assistant"},
    native(("render", "{oops"), ("write_file", {"path": "x"}), ("nope", {}), (None, None)),
    "<tool_call>" * 60_000, "</tool_call>" + '<tool_call name="render">' * 40_000,
    '<tool_call name="write_file"><path>a.txt</path>' + "<content>" * 60_000 + "</tool_call>",
    "<tool_call>" + "[" * 100_000 + "</tool_call>",
    call("write_file", path="index.html", content="x" * (MAX_FILE_BYTES + 1)),
    call("write_file", path="\udcff.html", content="x"), call("write_file", path="bad\udc80\udcfe/name", content="x"),
    call("write_file", path="\ud800", content="x"), call("write_file", path="a.html", content="ok \ud800 not"),
    call("write_file", path="../x", content="x"), call("write_file", path="/etc/passwd", content="x"),
    call("write_file", path="a/../../b", content="x"), call("write_file", path="..\\..\\x", content="x"),
    call("write_file", path="line\nbreak.html", content="x"), call("write_file", path="nul\x00.html", content="x"),
    call("write_file", path="", content="x"), call("write_file", path=".", content="x"),
    call("write_file", path="d" * 5000, content="x"), call("view_file", path="/etc/passwd"),
    call("view_file", path="\udcff"), call("edit_file", path="missing.html", old="a", new="b"),
    {"name": "wr\udcffite", "arguments": {}}, native(("render", "{}"),) | {"tool_calls": [
        {"id": "\udcff-id", "type": "function", "function": {"name": "view_file", "arguments": '{"path": "nope"}'}}]},
    native(*[("view_file", {"path": "nope"})] * 40),  # more calls than a message may run
]


@pytest.mark.parametrize("env_id, entry, content", [("AesWebRefine-v0", "index.html", PAGE),
                                                     ("AesPlotRefine-v0", "main.py", SCRIPT)])
async def test_hostile_actions_are_observations_and_the_episode_goes_on(pipeline, env_id, entry, content):
    task = WEB if env_id == "AesWebRefine-v0" else PLOT
    env = make_core(env_id, [task], pipeline=pipeline, budget=RefineBudget(max_turns=200))
    await env.reset(task=task.id)
    files_before = dict(env.workspace.files)
    for action in HOSTILE_ACTIONS:
        try:  # a hang guard per action (the slowest takes about a second here), naming the one that hung
            obs, *_ = await asyncio.wait_for(step(env, action), HANG_GUARD_S)
        except asyncio.TimeoutError:
            pytest.fail(f"{str(action)[:80]} hung")
    assert env.workspace.files == files_before  # nothing hostile got in
    # A file cannot also be a folder (the sandbox could not lay the workspace out: our failure).
    await step(env, call("write_file", path="sub/x.txt", content="x"))
    for path in ("sub", "sub/x.txt/y", "data.csv/evil" if "data.csv" in files_before else "sub/x.txt/z/w"):
        obs, *_, info = await step(env, call("write_file", path=path, content="x"))
        assert not info["tool_results"][0]["ok"] and ("is a f" in text_of(obs) or "bad path" in text_of(obs)), path
    obs, *_ = await step(env, call("run", command="rm -r sub; echo a > sub; ls"))
    assert "'sub': sub is a folder in the workspace" in text_of(obs) and env.workspace.read("sub/x.txt") == "x"
    obs, *_, info = await step(env, native(*[("view_file", {"path": "nope"})] * 40))
    assert sum("at most 16 tool calls" in m["content"] for m in obs) == 24
    obs, *_ = await step(env, call("write_file", path="a.html", content="ok \ud800 not"))
    assert "not valid Unicode text" in text_of(obs)
    obs, *_ = await step(env, call("write_file", path="\udcff.html", content="x"))
    assert "bad path '\\xff.html' (the name is not valid UTF-8)" in text_of(obs)
    await step(env, call("write_file", path=entry, content=content))
    await step(env, call("edit_file", path=entry, old=content[:10], new=content[:10] + "\ud800"))  # refused
    assert env.workspace.read(entry) == content
    obs, *_ = await step(env, call("render"))
    assert "status: ok" in text_of(obs)
    _, reward, terminated, _, info = await step(env, call("submit"))
    assert terminated and reward > 0 and info["failure"] == ""


# --- what `run` leaves ----------------------------------------------------------------------


def test_workspace_take_is_the_gate_for_run_files():
    ws = Workspace({"data.csv": b"a,b\n"})
    files = {"ok.txt": b"fine", "dir/ok.css": b"x", "/etc/passwd": b"root", "../escape": b"x", "a/../../b": b"x",
             "bad\udcffname": b"x", "\ud800": b"x", "tab\there": b"x", "x" * 300: b"x", "": b"x", ".": b"x",
             "big.bin": b"0" * (MAX_FILE_BYTES + 1), "data.csv": b"a,b\n", "weird": "not bytes",
             **{f"zz/f{i:03}.txt": b"%d" % i for i in range(100)}}
    intake = ws.take(files, {"link": "a symbolic link", "d/\udcfe": "a symbolic link"})
    workspace_is_clean(ws)
    assert {"ok.txt", "dir/ok.css", "data.csv"} <= set(ws.files) and len(ws.files) == MAX_FILES
    assert "data.csv" not in intake.changed  # unchanged
    why = {s.name: s.why for s in intake.skipped}
    assert why["/etc/passwd"] == "an absolute path"
    assert why["../escape"].startswith("it leaves the workspace") and why["a/../../b"].startswith("it leaves")
    assert why["bad\\xffname"] == "the name is not valid UTF-8" and why["\\ud800"] == "the name is not valid UTF-8"
    assert why["tab\\there"] == "the name holds control characters"
    assert "file limit" in why["big.bin"] and "no file content" in why["weird"]
    assert why["link"].startswith("a symbolic link") and why["d/\\xfe"].startswith("a symbolic link")
    assert sum("already holds" in w for w in why.values()) == 100 - (MAX_FILES - 3)  # the count bound
    assert not any(n in ws.files for n in ("link", "etc/passwd", "escape", "b"))


async def test_run_files_pass_the_gate_in_the_env(pipeline, monkeypatch):
    """A sandbox answer with names no real workspace has (absolute, '..', not UTF-8): the env
    takes only what is safe and says why for the rest."""
    env = make_core("AesWebRefine-v0", [WEB], pipeline=pipeline)
    await env.reset(task="cafe")

    async def forged(argv, files, limits=None, *, links=None):
        return CommandRun(status=RunStatus.OK, exit_code=0, stdout="\udcff out", files_out={
            "index.html": PAGE.encode(), "/etc/shadow": b"x", "../../up": b"x", "sub/\udcff\udcfe": b"x"})

    monkeypatch.setattr(pipeline.sandbox, "run", forged)
    obs, *_ = await step(env, call("run", command="true"))
    text = text_of(obs)
    assert "files changed: index.html" in text and "'/etc/shadow': an absolute path" in text
    assert "'sub/\\xff\\xfe': the name is not valid UTF-8" in text and "'../../up': it leaves" in text
    assert set(env.workspace.files) == {"index.html"}
    monkeypatch.undo()
    await step(env, call("render"))
    _, reward, terminated, _, info = await step(env, call("submit"))
    assert terminated and reward > 0


async def test_run_links_odd_names_and_huge_output(pipeline):
    env = make_core("AesWebRefine-v0", [WEB], pipeline=pipeline, budget=RefineBudget(max_observation_chars=6000))
    await env.reset(task="cafe")
    command = ("ln -s /etc/passwd link; ln -s .. up; mkdir d; ln -s / d/root; mkfifo fifo; "
               "printf x > \"$(printf 'bad\\377name')\"; printf y > \"d/$(printf '\\376\\375')\"; "
               "printf z > \"$(printf 'nl\\nname')\"; echo ok > good.txt")
    obs, *_ = await step(env, call("run", command=command))
    text = text_of(obs)
    assert set(env.workspace.files) == {"good.txt"}
    assert "exit code: 0 (ok)" in text and "files changed: good.txt" in text
    for fragment in ("'link': a symbolic link", "'up': a symbolic link", "'d/root': a symbolic link",
                     "'fifo': not a regular file", "'bad\\xffname': the name is not valid UTF-8",
                     "'d/\\xfe\\xfd': the name is not valid UTF-8", "'nl\\nname': the name holds control characters"):
        assert fragment in text, fragment
    assert ".aesenv-run-" not in text  # the env's own listing stays out of sight and out of the workspace

    # 2 MB on each stream, then files: the output is cut in the observation, the files come back.
    command = ("head -c 2000000 /dev/zero | tr '\\0' o; head -c 2000000 /dev/zero | tr '\\0' e >&2; echo THE-END; "
               "head -c 1500000 /dev/zero > big.bin; for i in $(seq 1 80); do echo $i > f$i.txt; done; "
               f"printf '%s' '{PAGE}' > index.html; exit 3")
    obs, *_, info = await step(env, call("run", command=command))
    text = text_of(obs)
    assert len(text) <= 6000 and "exit code: 3 (error" in text
    assert "stdout (2000008 characters, shown in part)" in text and "characters cut here" in text
    assert "THE-END" in text and "stderr (2000000 characters, shown in part)" in text  # both streams' ends shown
    assert "index.html" in env.workspace.files and "big.bin" not in env.workspace.files
    assert "'big.bin': 1500000 bytes is over" in text and "already holds 64 files" in text
    assert len(env.workspace.files) == MAX_FILES
    await step(env, call("render"))
    _, reward, terminated, _, info = await step(env, call("submit"))
    assert terminated and reward > 0


async def test_binary_index_and_lone_surrogates_from_the_page(pipeline):
    env = make_core("AesWebRefine-v0", [WEB], pipeline=pipeline)
    await env.reset(task="cafe")
    await step(env, call("run", command="head -c 3000 /dev/urandom > index.html; printf '\\0\\377\\376<p>' >> index.html"))
    assert len(env.workspace.files["index.html"]) == 3006
    obs, *_ = await step(env, call("render"))
    assert "status:" in text_of(obs)
    await step(env, call("view_file", path="index.html"))
    page = ("<!doctype html><title>x</title><h1>Cafe</h1><script>document.title = 'lone \\ud800 title';"
            "console.error('lone \\udcff error'); throw new Error('bad \\ud800 throw');</script>")
    await step(env, call("write_file", path="index.html", content=page))
    obs, *_ = await step(env, call("render"))
    text = text_of(obs)  # the page's lone surrogates are escaped (in its quoted words), so the observation serializes
    assert "\u27e6lone \\udcff error\u27e7" in text and "title: \u27e6lone \\ud800 title\u27e7" in text
    assert "bad \\ud800 throw\u27e7" in text
    _, reward, terminated, _, info = await step(env, call("submit"))  # the record quotes the page: it serializes
    assert terminated and "lone ? error" in json.dumps(info["record"], ensure_ascii=False)

    await env.reset(task="cafe")
    await step(env, call("run", command="head -c 2000 /dev/urandom > index.html"))
    _, reward, terminated, _, info = await step(env, call("submit"))  # a binary entry is the answer's failure
    assert terminated and info["failure"]


# --- absurd plotly figures ------------------------------------------------------------------

ABSURD = {"inf": '{"data": [{"type": "bar", "x": ["N"], "y": [3]}], "layout": {"width": 1e400}}',
          "negative": '{"data": [], "layout": {"width": -500, "height": 300}}',
          "nan": '{"data": [], "layout": {"height": NaN}}',
          "huge": '{"data": [], "layout": {"width": 1e9, "height": 1e9}}',
          "bigint": '{"data": [], "layout": {"width": 1' + "0" * 500 + "}}",
          "string": '{"data": [], "layout": {"width": "wide"}}',
          "layout-list": '{"data": [], "layout": [1, 2]}',
          "data-str": '{"data": "bars", "layout": {}}',
          "not-json": "{oops", "deep": "[" * 100_000, "array": "[1, 2]"}


def absurd_script(kinds: list[str], with_matplotlib: bool = False) -> str:
    lines = ["import plotly.graph_objects as go", "class Figure(go.Figure):",
             "    def __init__(self, spec):", "        super().__init__()", "        self._spec = spec",
             "    def to_json(self, *args, **kwargs):", "        return self._spec"]
    lines += [f"Figure({ABSURD[k]!r}).show()" for k in kinds]
    return "\n".join(lines) + "\n" + (SCRIPT if with_matplotlib else "")


@pytest.mark.parametrize("kind", sorted(ABSURD))
async def test_absurd_plotly_json_is_a_problem_not_an_exception(kind):
    problem = figure_problem(ABSURD[kind])
    assert problem
    try:  # what the drawing step does with it (it catches these): a bounded size or an error
        width, height = figure_size(ABSURD[kind], 1280, 960)
        assert 50 <= width <= 1280 and 50 <= height <= 960
    except (ValueError, RecursionError):
        pass
    # refused before any browser is asked to draw it (no renderer is given)
    figure = await draw_figure(None, Figure(name="plotly-1.json", kind="plotly", plotly_json=ABSURD[kind]))
    assert figure.png is None and figure.meta["unusable"]
    assert problem in figure.meta["error"]


async def test_absurd_plotly_sizes_fail_the_answer_not_the_env(pipeline):
    env = make_core("AesPlotRefine-v0", [PLOT], pipeline=pipeline)
    await env.reset(task="p")
    await step(env, call("write_file", path="main.py", content=absurd_script(sorted(ABSURD))))
    obs, _, _, _, info = await step(env, call("render"))
    text = text_of(obs)
    assert f"figures: {len(ABSURD)}" in text and f"figure problems ({len(ABSURD)})" in text
    assert "layout.width is Infinity" in text and "layout.width is -500" in text and "layout.height is NaN" in text
    assert "layout.width is 1000000000.0" in text
    assert info["potential"] < 1
    _, reward, terminated, _, info = await step(env, call("submit"))
    assert terminated and info["failure"].startswith("no usable figure")
    assert info["record"]["channels"]["execution"]["status"] == "failed"

    # One usable matplotlib figure next to an absurd plotly one: scored on the usable one.
    scored = await pipeline.score(PLOT, absurd_script(["inf", "huge"], with_matplotlib=True))
    record = scored.record
    assert record.selected_reward is not None and math.isfinite(record.selected_reward)
    assert record.failure == "" and record.channels["static"].status.value == "ok"


def test_offline_judge_takes_corrupt_figure_descriptions_as_empty():
    """The sandboxed script can write any figure list: broken descriptions are empty figures."""
    figures = [Figure(name="figure-1.png", kind="matplotlib", png=b"not a png", meta={"width_px": "wide", "axes": 5}),
               Figure(name="figure-2.png", kind="matplotlib", meta={"width_px": float("nan"), "height_px": 10}),
               Figure(name="figure-3.png", kind="matplotlib", meta={"axes": [{"artists": "x", "series": [3]}]}),
               Figure(name="plotly-1.json", kind="plotly",
                      plotly_json='{"data": [{"type": "bar", "x": [1], "y": [2], "mode": 5}], "layout": {"font": 3}}'),
               Figure(name="plotly-2.json", kind="plotly",
                      plotly_json='{"data": [{"type": "bar", "x": [1], "name": "s"}], "layout": {"font": {"size": NaN}}}')]
    judgement = OfflinePlotJudge().judge_sync(PLOT, figures)
    assert math.isfinite(judgement.total) and judgement.evidence["presence"] == 0
    assert len([n for n in judgement.evidence["notes"] if "unreadable" in n]) == 3
    # a plotly figure is judged from the host's drawing of it, never from its JSON's own claims:
    # undrawn, it has no description
    assert len([n for n in judgement.evidence["notes"] if "plotly" in n and "missing" in n]) == 2


# --- the Gymnasium facade: the issue as filed -----------------------------------------------


def test_gymnasium_step_survives_a_non_utf8_name_from_run():
    env = gym.make("AesWebRefine-v0", disable_env_checker=True).unwrapped
    try:
        env.reset(seed=0, options={"task": {"id": "t", "prompt": WEB.prompt}})
        obs, *_ = env.step(f"<tool_call name=\"run\"><command>printf x > \"$(printf 'a\\377b')\"; "
                           f"printf '%s' '{PAGE}' > index.html</command></tool_call>")
        assert "'a\\xffb': the name is not valid UTF-8" in obs
        obs, reward, terminated, truncated, info = env.step('<tool_call name="render"></tool_call>')
        assert env.observation_space.contains(obs) and "status: ok" in obs and not terminated
        obs, reward, terminated, truncated, info = env.step('<tool_call name="submit"></tool_call>')
        assert terminated and info["reward_valid"] and math.isfinite(reward)
    finally:
        env.close()


def test_parse_action_never_raises_and_sorts_each_hostile_action():
    """Each hostile action is an `ActionError` (nothing to run), calls that all carry their problem
    (each answered with it), or well-formed calls whose string arguments the env then judges (paths,
    sizes, the per-message call limit); every text it returns can be echoed as UTF-8."""
    expected = (["error"] * 21 + ["refused"] + ["error"] * 3 + ["refused"] + ["error"] * 4 + ["calls"] * 17
                + ["error"] + ["calls"] * 2)
    assert len(expected) == len(HOSTILE_ACTIONS)
    got = []
    for action in HOSTILE_ACTIONS:
        parsed = parse_action(action)
        if isinstance(parsed, ActionError):
            assert parsed.message.strip()
            json.dumps(parsed.message, ensure_ascii=False).encode("utf-8")
            got.append("error")
            continue
        assert parsed and all(isinstance(c, ToolCall) for c in parsed), parsed
        json.dumps([[c.name, c.problem] for c in parsed], ensure_ascii=False).encode("utf-8")
        if all(c.problem for c in parsed):
            got.append("refused")
        else:
            assert all(not c.problem and c.name in REFINE_TOOL_SPECS for c in parsed), parsed
            assert all(isinstance(v, str) for c in parsed for v in c.arguments.values()), parsed
            got.append("calls")
    assert got == expected
    assert len(parse_action(HOSTILE_ACTIONS[-1])) == 40  # the parser keeps them all; the env answers 24 with the limit
