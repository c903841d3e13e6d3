"""Webdev-Bench: the composite-task model, the metrics by hand, the offline and LLM users' gate
(never quoting a hidden item, never shown one), terminal acceptance catching a regression by its
coverage item, resumable runs, and (slow) the whole built-in suite run by the scripted reference
agent, the do-nothing agent and the OpenAI chat policy over the scripted test server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from aesenv.kinds.project.build import scaffold_files
from aesenv.render.models import PageMetrics, Rendering
from aesenv.render import RenderStatus
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.runner import RunMismatch
from aesenv.webdev.acceptance import ItemGrade, accept, check_item, grade_of
from aesenv.webdev.gate import OfflineUser, Review, review_messages
from aesenv.webdev.graders import VlmGrader
from aesenv.kinds.project.health import Delivery, HealthCheck, check_health, deliver
from aesenv.webdev.scored import delivery_scores, starting_files
from aesenv.webdev.metrics import suite_metrics, task_metrics
from aesenv.webdev.session import run_task
from aesenv.webdev.tasks import ChecklistItem, CompositeTask, load_suite, load_task
from benchmarks import webdev
from benchmarks.webdev_check import MIN_ITEMS
from policies.webdev import DoNothingAgent, WebdevReferenceAgent, reference_step
from support.forgeries import case, case_names, side
from support.openai_server import tool_calls

SUITE = Path(webdev.__file__).with_name("webdev_suite")


def _item(id_, dimension="functional", covers=None, **expect):
    return {"id": id_, "dimension": dimension, "criterion": f"criterion of {id_}", "expect": expect or {"text": ["x"]},
            **({"covers": covers} if covers else {})}


def _task(**overrides) -> dict:
    data = {"id": "t", "title": "T", "start": "description", "brief": "An app.",
            "requirements": [{"id": f"r{j}", "text": f"Do 'thing {j}'.", "items": [_item(f"i{j}")]} for j in range(4)]}
    return {**data, **overrides}


# --- the model --------------------------------------------------------------------------------

def test_the_builtin_suite_has_every_starting_condition_and_enough_hidden_items():
    tasks = load_suite(SUITE)
    assert len(tasks) >= 8
    starts = [t.start for t in tasks]
    assert all(starts.count(s) >= 2 for s in ("reference", "description", "project"))
    assert any(t.defect for t in tasks)
    for task in tasks:
        assert 4 <= len(task.requirements) <= 5
        assert len(task.items()) >= MIN_ITEMS, task.id
        assert any(i.dimension == "coverage" for i in task.items()), task.id
        assert all(r.solution for r in task.requirements), task.id
        assert CompositeTask.model_validate_json(task.model_dump_json()) == task


@pytest.mark.parametrize("change, message", [
    ({"start": "reference"}, "reference_html"),
    ({"defect": "broken"}, "injected defect"),
    ({"requirements": _task()["requirements"][:3]}, "at least 4"),
    ({"requirements": [{"id": "r0", "text": "a", "items": [_item("i0", "coverage", covers="r1")]},
                       *_task()["requirements"][1:]]}, "earlier requirement"),
    ({"requirements": [{"id": "r0", "text": "a", "items": [_item("i0", "coverage")]},
                       *_task()["requirements"][1:]]}, "names the requirement it covers"),
])
def test_tasks_that_cannot_be_run_or_graded_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        CompositeTask.model_validate(_task(**change))


def test_a_task_folder_keeps_its_files_beside_task_json(tmp_path):
    (tmp_path / "start" / "src").mkdir(parents=True)
    (tmp_path / "start" / "src" / "App.jsx").write_text("export default () => null")
    (tmp_path / "solution" / "r1" / "src").mkdir(parents=True)
    (tmp_path / "solution" / "r1" / "src" / "App.jsx").write_text("// r1")
    (tmp_path / "task.json").write_text(json.dumps(_task(start="project")))
    task = load_task(tmp_path)
    assert task.files == {"src/App.jsx": "export default () => null"}
    assert task.requirements[0].solution == {"src/App.jsx": "// r1"} and not task.requirements[1].solution
    (tmp_path / "task.json").write_text(json.dumps({**_task(start="project"), "files": {"a": "b"}}))
    with pytest.raises(ValueError, match="beside it"):
        load_task(tmp_path)


# --- metrics ----------------------------------------------------------------------------------

def _grade(requirement, dimension, grade, weight=1.0):
    return ItemGrade(id=f"{requirement}-{dimension}-{grade}", requirement=requirement, dimension=dimension,
                     weight=weight, grade=grade, score=grade / 3)


def test_metrics_follow_the_conjunctive_rule_by_hand():
    grades = [_grade("a", "functional", 3), _grade("a", "interaction", 2, 1.5),   # a: not satisfied
              _grade("b", "functional", 3), _grade("b", "visual", 3),             # b: satisfied
              _grade("c", "coverage", 1), _grade("c", "visual", 3)]               # c: not satisfied
    m = task_metrics(grades, delivered=True)
    assert m["RS"] == round(1 / 3, 6)
    assert m["FS"] == round(2 / 3, 6)       # a and b hold their functional items; c's coverage fails
    assert m["IS"] == 0.0                   # only a has an interaction item, graded 2
    assert m["VS"] == 1.0                   # b and c have visual items, all 3
    assert m["DSR"] == 1.0
    assert m["weighted"] == round((3 + 1.5 * 2 + 3 + 3 + 1 + 3) / 3 / 6.5, 6)
    other = task_metrics([_grade("a", "functional", 0)], delivered=False)
    assert other["IS"] is None and other["RS"] == 0.0 and other["DSR"] == 0.0
    suite = suite_metrics([m, other])
    assert suite["RS"] == round((1 / 3 + 0) / 2, 4) and suite["IS"] == 0.0 and suite["VS"] == 1.0
    assert suite["DSR"] == 0.5 and suite["n"] == 2
    # a task without items (nothing graded, or all weights zero) has no weighted score and no subset
    # values, and a suite where no task has a subset reports None for it, never 0
    empty = task_metrics([], delivered=False)
    assert empty == {"RS": None, "FS": None, "IS": None, "VS": None, "DSR": 0.0, "weighted": None}
    assert task_metrics([_grade("a", "visual", 3, 0.0)], delivered=True)["weighted"] is None
    assert suite_metrics([empty]) == {"RS": None, "FS": None, "IS": None, "VS": None, "DSR": 0.0, "weighted": None,
                                      "n": 1}
    assert suite_metrics([]) == {name: None for name in ("RS", "FS", "IS", "VS", "DSR", "weighted")} | {"n": 0}


def test_grades_are_three_only_in_full():
    assert [grade_of(s) for s in (1.0, 0.99, 0.6, 0.59, 0.01, 0.0)] == [3, 2, 2, 1, 1, 0]


# --- the gate ---------------------------------------------------------------------------------

def _delivery(text="", *, built=True, up=True, errors=(), blank=False) -> Delivery:
    health = HealthCheck(built=built, up=up, status=200 if up else 0, html=up, app=up,
                         problem="" if up else "`npm start` did not bring the app up")
    if not built:
        return Delivery(health)
    metrics = PageMetrics(visible_text=text, text_chars=0 if blank else max(len(text), 500))
    rendering = Rendering(status=RenderStatus.OK, metrics=metrics, page_errors=list(errors))
    return Delivery(health, {"index.html": b"<html>"}, rendering)


def _hidden_strings(task: CompositeTask) -> list[str]:
    """What of the hidden checklist a critique could quote: its criteria, and the texts its checks
    expect or type that are more than one common word ("What" in a critique quotes nothing)."""
    found = []
    for item in task.items():
        texts = [*item.expect.text, *item.expect.absent, *(s.text for s in item.steps), *(s.value for s in item.steps)]
        found += [item.criterion, *(t for t in texts if len(t.split()) > 1 or len(t.strip()) >= 8)]
    return found


async def test_the_offline_critique_never_quotes_a_hidden_item():
    user = OfflineUser()
    critiques = set()
    for task in load_suite(SUITE):
        request = task.requirements[1].text
        for delivery, previous in [(_delivery(built=False), None), (_delivery(up=False), None),
                                   (_delivery("", blank=True), None), (_delivery("Hi", errors=["TypeError: x"]), None),
                                   (_delivery("same page"), "same page"), (_delivery("an unrelated page"), None)]:
            verdict = await user.review(Review(task.brief, request, 2, delivery, previous))
            assert not verdict.passed and verdict.critique
            critiques.add(verdict.critique)
            leaked = [s for s in _hidden_strings(task) if s.casefold() in verdict.critique.casefold()]
            assert not leaked, (task.id, verdict.critique, leaked)
    assert len(critiques) == 6  # each failure is told apart, in a user's words


async def test_the_offline_user_passes_a_changed_page_that_shows_what_was_asked():
    verdict = await OfflineUser().review(Review("b", "Add a button 'Save draft' and a 'Clear' link.", 2,
                                                _delivery("Editor Save draft Clear"), "Editor"))
    assert verdict.passed and verdict.critique == ""


def test_the_llm_user_is_shown_the_request_and_the_evidence_but_no_hidden_item():
    for task in load_suite(SUITE):
        requirement = task.requirements[-1]
        messages = review_messages(Review(task.brief, requirement.text, 5, _delivery("Some page text"), None))
        sent = json.dumps(messages)
        assert requirement.text in json.dumps(messages[1]["content"]) or requirement.text in messages[1]["content"]
        for item in task.items():
            assert item.criterion not in sent, (task.id, item.id)


# --- a regression caught by a coverage item ----------------------------------------------------

APP = """import {{ useState }} from 'react'
export default function App() {{
  const [n, setN] = useState(0)
  return (<main><h1>{title}</h1><p>A small page to show what a later round can break.</p>{button}</main>)
}}"""
COUNTER = "<button onClick={() => setN(n + 1)}>Liked {n}</button>"


def _regressing_suite(folder: Path) -> Path:
    """Round 1 asks for a like counter; round 3 restyles the page and its solution drops the
    button (the page text still changes, so the offline user passes the round)."""
    task = folder / "regress"
    requirements = []
    for j in range(1, 5):
        items = [_item(f"r{j}-title", text=[f"Version {j}"])]
        if j == 1:
            items.append({**_item("r1-like", "interaction", text=["Liked 1"]),
                          "steps": [{"action": "click", "selector": "button", "text": "Liked"}]})
        if j == 3:
            items.append({**_item("r3-still-likes", "coverage", covers="r1", text=["Liked 1"]),
                          "steps": [{"action": "click", "selector": "button", "text": "Liked"}]})
        requirements.append({"id": f"r{j}", "text": f"Show the heading 'Version {j}'.", "items": items})
        solution = task / "solution" / f"r{j}" / "src"
        solution.mkdir(parents=True)
        title = ", ".join(f"Version {k}" for k in range(1, j + 1))  # every round's heading stays
        (solution / "App.jsx").write_text(APP.format(title=title, button="" if j >= 3 else COUNTER))
    (task / "task.json").write_text(json.dumps(_task(id="regress", requirements=requirements)))
    return folder


async def test_a_requirement_broken_by_a_later_round_is_caught_by_its_coverage_item(tmp_path):
    suite = _regressing_suite(tmp_path)
    [task] = load_suite(suite)
    async with RewardPipeline(PipelineConfig()) as pipeline:
        run = await run_task(task, WebdevReferenceAgent(str(suite)), pipeline, OfflineUser())
    record = run.record
    assert record.status == "ok" and record.delivered and record.end == "done"
    assert all(r.passed for r in record.rounds) and len(record.rounds) == 4  # the gate saw nothing wrong
    grades = {g.id: g for g in record.grades}
    assert grades["r3-still-likes"].grade == 0 and "Liked" in grades["r3-still-likes"].problem
    assert grades["r1-like"].grade == 0  # terminal acceptance re-grades round 1 on the final project too
    assert all(g.grade == 3 for g in record.grades if g.id.endswith("-title"))
    assert record.metrics["RS"] == 0.5  # r2 and r4 hold; r1 and r3 do not
    assert record.metrics["IS"] == 0.0 and record.metrics["FS"] == 0.75  # r3's coverage item is its only failure
    assert set(run.screenshots) == {"r1-a1.jpg", "r2-a1.jpg", "r3-a1.jpg", "r4-a1.jpg"}


# --- runs -------------------------------------------------------------------------------------

def test_the_reference_step_writes_the_revealed_rounds_files_then_submits():
    [task] = [t for t in load_suite(SUITE) if t.start == "description"][:1]
    requirements = list(task.requirements)
    conversation = [{"role": "system", "content": "s"},
                    {"role": "user", "content": f"{task.brief}\n\nRound 1 of {len(requirements)}: {requirements[0].text}"}]
    written = []
    while True:
        name, arguments = reference_step(conversation, requirements)
        if name == "submit":
            break
        written.append(arguments["path"])
        conversation += [{"role": "assistant", "content": None, "tool_calls": [{"id": str(len(written)), "type": "function",
                          "function": {"name": name, "arguments": json.dumps(arguments)}}]},
                         {"role": "tool", "tool_call_id": str(len(written)), "content": "Wrote."}]
    assert sorted(written) == sorted(requirements[0].solution)


async def test_a_rerun_skips_graded_tasks_and_refuses_another_policy(tmp_path, capsys):
    [task] = [t for t in load_suite(SUITE) if t.start == "description"][:1]
    args = ["--policy", "do-nothing", "--tasks", task.id, "--out", str(tmp_path), "--no-progress"]
    assert await _main(args) == 0
    first = (tmp_path / "records.jsonl").read_text().splitlines()
    record = json.loads(first[0])
    assert record["metrics"]["RS"] == 0.0 and record["status"] == "ok"
    assert await _main(args) == 0
    assert (tmp_path / "records.jsonl").read_text().splitlines() == first
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["tasks"][task.id]["wall_s"] > 0 and (tmp_path / "report.html").is_file()
    with pytest.raises(RunMismatch, match="policy"):
        await _main(["--policy", "webdev-reference", *args[2:]])


async def _main(argv: list[str]) -> int:
    """`aesenv bench webdev` inside the test's event loop."""
    args = webdev.build_parser().parse_args(argv)
    summary = await webdev.run(args)
    return 0 if summary["n"] else 3


# --- the whole suite (slow) ---------------------------------------------------------------------
# Each runs every task of the suite end to end (16 task runs for the first: about 4 minutes on a
# quiet 2-core machine), so they get a deadline of their own above the default 300 s.
WHOLE_SUITE_TIMEOUT_S = 900


@pytest.mark.slow
@pytest.mark.timeout(WHOLE_SUITE_TIMEOUT_S)
async def test_the_reference_agent_meets_every_item_and_doing_nothing_scores_zero(tmp_path):
    reference = await webdev.run(webdev.build_parser().parse_args(
        ["--policy", "webdev-reference", "--out", str(tmp_path / "reference"), "--no-progress"]))
    assert reference["n"] == reference["n_total"] == len(load_suite(SUITE))
    assert reference["metrics"]["RS"] == 1.0 and reference["metrics"]["DSR"] == 1.0, reference["tasks"]
    assert all(t["returned"] == 0 for t in reference["tasks"].values())
    idle = await webdev.run(webdev.build_parser().parse_args(
        ["--policy", "do-nothing", "--out", str(tmp_path / "idle"), "--no-progress"]))
    assert idle["metrics"]["RS"] == 0.0 and idle["n"] == reference["n"]
    assert idle["metrics"]["DSR"] < 1.0  # the project with a defect that stops its build is not delivered
    assert all(t["deliveries"] == 3 * len(load_suite(SUITE, [i])[0].requirements) for i, t in idle["tasks"].items())


@pytest.mark.slow
@pytest.mark.timeout(WHOLE_SUITE_TIMEOUT_S)
async def test_the_openai_chat_policy_runs_the_suite_with_an_llm_user(tmp_path, openai_server, monkeypatch):
    """The model and the user are the scripted server (a stand-in for a remote model): as the
    agent it plays the reference implementation through native tool calls; as the user (no
    tools in the request) it passes every round."""
    requirements = [r for t in load_suite(SUITE) for r in t.requirements]

    def reply(request):
        if "tools" not in request.body:
            return {"verdict": "pass", "critique": ""}
        name, arguments = reference_step(request.messages, requirements)
        return tool_calls((name, arguments))

    openai_server.default = reply
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    summary = await webdev.run(webdev.build_parser().parse_args(
        ["--policy", "openai:test-model", "--user", "openai:test-user", "--out", str(tmp_path), "--no-progress",
         "--concurrency", "2"]))
    assert summary["n"] == len(load_suite(SUITE)) and summary["metrics"]["RS"] == 1.0, summary["not_graded"]
    users = [r for r in openai_server.requests if "tools" not in r.body]
    assert users and all(r.body["model"] == "test-user" for r in users)
    assert len(users) == sum(len(t.requirements) for t in load_suite(SUITE))
    assert any(r.images for r in users)  # the user saw the delivered page


async def test_the_vlm_acceptance_agent_operates_the_app_and_grades_every_item(tmp_path, openai_server):
    """The scripted server stands in for a remote VLM: on each requirement it waits once, then
    grades; an answer that leaves an item ungraded is asked again."""
    suite = _regressing_suite(tmp_path)
    [task] = load_suite(suite)
    files = scaffold_files()
    for requirement in task.requirements[:2]:
        files.update({p: t.encode() for p, t in requirement.solution.items()})

    def turn(request):
        text = request.text
        requirement = next(r for r in task.requirements if r.text in text)
        if "You did: wait" not in text:
            return {"thought": "let the page settle", "action": "wait"}
        return {"action": "grade", "grades": [{"id": i.id, "grade": 3 if "title" in i.id else 1, "reason": "seen"}
                                              for i in requirement.items]}

    openai_server.script({"action": "grade", "grades": []})  # missing every id: refused, asked again
    openai_server.default = turn
    grader = VlmGrader("test-vlm", base_url=openai_server.url, api_key_env="AESENV_TEST_NO_KEY", backoff_s=0.01,
                       cache_dir=None)
    async with RewardPipeline(PipelineConfig()) as pipeline:
        delivery = await deliver(pipeline.backends, files, task.port)
        grades = await grader.grade(pipeline.backends, task, delivery)
    await grader.close()
    assert [g.id for g in grades] == [i.id for i in task.items()]
    assert {g.id: g.grade for g in grades} == {i.id: 3 if "title" in i.id else 1 for i in task.items()}
    assert all(r.images for r in openai_server.requests)
    assert any("criterion of r1-like" in r.text for r in openai_server.requests)
    assert grader.usage.requests == len(openai_server.requests)


CHECKED_PAGE = """<!doctype html><html><body>
<header style="background: rgb(20, 30, 40); color: white"><h1>Shop</h1><nav><a href="#menu">Menu</a><a href="#gone">Gone</a></nav></header>
<section id="menu"><div class="row" style="display:flex;gap:10px"><article>One</article><article>Two</article><article>Three</article></div></section>
<input id="q" placeholder="Search"><p id="echo"></p>
<select><option value="a">Apples</option><option value="p">Pears</option></select><p id="picked">picked a</p>
<button onclick="document.getElementById('count').textContent = 'Clicked ' + (++window.n)">Like</button>
<p id="count">Clicked 0</p><button onclick="throw new Error('boom')">Break</button>
<script>window.n = 0;
document.getElementById('q').addEventListener('input', (e) => { document.getElementById('echo').textContent = 'You typed ' + e.target.value; });
document.querySelector('select').addEventListener('change', (e) => { document.getElementById('picked').textContent = 'picked ' + e.target.value; });
document.getElementById('q').addEventListener('keydown', (e) => { if (e.key === 'Enter') document.getElementById('echo').textContent = 'Searched'; });
</script></body></html>"""


@pytest.mark.parametrize("item, grade, problem", [
    ({"expect": {"text": ["Shop", "Three"], "within": "header"}}, 1, ""),                     # one of two: 0.5
    ({"expect": {"text": ["shop"], "absent": ["Sold out"], "selector": "article", "min_count": 3}}, 3, ""),
    ({"expect": {"selector": "article", "columns": 3, "max_count": 3}}, 3, ""),
    ({"expect": {"selector": "article", "max_count": 0}}, 0, ""),
    ({"expect": {"selector": "header", "style": {"background-color": "=rgb(20, 30, 40)", "color": "!rgb(0, 0, 0)"}}}, 3, ""),
    ({"expect": {"selector": "header", "style": {"background-color": "=rgb(20, 30, 4)"}}}, 0, ""),
    ({"expect": {"absent": ["Sold out"], "within": "table"}}, 0, ""),                     # no table: nothing holds
    ({"expect": {"links_resolve": True, "fits_width": True}}, 2, ""),                          # one link of two is broken
    ({"steps": [{"action": "click", "selector": "button", "text": "like"}] * 2, "expect": {"text": ["Clicked 2"]}}, 3, ""),
    ({"steps": [{"action": "fill", "selector": "input", "value": "pears"}], "expect": {"text": ["You typed pears"]}}, 3, ""),
    ({"steps": [{"action": "fill", "selector": "input", "value": "x"}, {"action": "press", "value": "Enter"}],
      "expect": {"text": ["Searched"]}}, 3, ""),
    ({"steps": [{"action": "select", "selector": "select", "value": "pears"}], "expect": {"text": ["picked p"]}}, 3, ""),
    ({"steps": [{"action": "select", "selector": "select", "value": "plums"}], "expect": {"text": ["picked"]}}, 0,
     "no option"),
    ({"steps": [{"action": "click", "selector": "button", "text": "Add to cart"}], "expect": {"text": ["x"]}}, 0,
     "nothing visible matches button with the text 'Add to cart'"),
    ({"steps": [{"action": "click", "selector": "button", "text": "Break"}], "expect": {"text": ["Shop"], "no_errors": True}},
     1, ""),                                                                      # text holds, an error was thrown: 0.5
])
async def test_executable_checks_grade_what_the_page_does(renderer, item, grade, problem):
    checked = ChecklistItem.model_validate({"id": "i", "dimension": "interaction", "criterion": "c", **item})
    async with renderer.session(CHECKED_PAGE) as (_, live):
        graded = await check_item(live, checked, "r")
    assert graded.grade == grade, graded
    assert problem in graded.problem and bool(problem) == bool(graded.problem)


class _Slow:
    """Never answers: only the task's time budget can end its turn."""

    name = "slow"

    async def act(self, messages, tools=None):
        await asyncio.Event().wait()


class _Broken:
    name = "broken"

    async def act(self, messages, tools=None):
        raise ConnectionError("the model server went away")


async def test_the_time_budget_covers_the_whole_task_and_what_stands_is_graded(tmp_path):
    [task] = load_suite(_regressing_suite(tmp_path))
    async with RewardPipeline(PipelineConfig()) as pipeline:
        slow = await run_task(task, _Slow(), pipeline, OfflineUser(), seconds_per_requirement=0.5)
        broken = await run_task(task, _Broken(), pipeline, OfflineUser())
    record = slow.record
    assert record.status == "ok" and record.end == "time_budget" and record.reached == 1 and not record.rounds
    assert len(record.grades) == len(task.items()) and record.metrics["RS"] == 0.0
    assert broken.record.status == "policy_error" and broken.record.end == "agent_error"
    assert "went away" in broken.record.error and not broken.record.grades and not broken.record.metrics


async def test_handing_back_the_starting_project_unchanged_is_returned(tmp_path):
    """An existing project that already shows what round 1 quotes: the user knows it from before."""
    task = tmp_path / "suite" / "same"
    (task / "start" / "src").mkdir(parents=True)
    (task / "start" / "src" / "App.jsx").write_text(APP.format(title="Version 1", button=COUNTER))
    requirements = [{"id": f"r{j}", "text": f"Keep the heading 'Version 1' and add 'Part {j}'.",
                     "items": [_item(f"i{j}", text=[f"Part {j}"])]} for j in range(1, 5)]
    (task / "task.json").write_text(json.dumps(_task(id="same", start="project", requirements=requirements)))
    [loaded] = load_suite(tmp_path / "suite")
    async with RewardPipeline(PipelineConfig()) as pipeline:
        run = await run_task(loaded, DoNothingAgent(), pipeline, OfflineUser())
    first = run.record.rounds[0]
    assert not first.passed and "change" in first.critique
    assert len(run.record.rounds) == 12 and run.record.metrics["RS"] == 0.0 and run.record.delivered


async def test_an_app_its_start_script_does_not_serve_is_not_delivered(tmp_path):
    """The build works and the page would render, but `npm start` serves nothing on the port: the
    user is told so, and terminal acceptance grades every item 0 (DSR 0)."""
    [task] = load_suite(_regressing_suite(tmp_path))
    files = scaffold_files()
    files.update({p: t.encode() for p, t in task.requirements[0].solution.items()})
    package = json.loads(files["package.json"])
    package["scripts"]["start"] = "vite preview --host 127.0.0.1 --port 5999 --strictPort"  # not the task's port
    files["package.json"] = json.dumps(package).encode()
    async with RewardPipeline(PipelineConfig()) as pipeline:
        delivery = await deliver(pipeline.backends, files, task.port)
        grades = await accept(pipeline.backends, task, delivery)
    assert delivery.health.built and not delivery.health.up and not delivery.launched
    assert f"port {task.port}" in delivery.health.problem and delivery.rendering is not None
    verdict = await OfflineUser().review(Review(task.brief, task.requirements[0].text, 1, delivery, None))
    assert not verdict.passed and "npm start" in verdict.critique
    assert all(g.grade == 0 and g.problem.startswith("not delivered") for g in grades)
    assert task_metrics(grades, delivery.launched) == {"RS": 0.0, "FS": 0.0, "IS": 0.0, "VS": None, "DSR": 0.0,
                                                       "weighted": 0.0}


# --- the health check is ours: our build, the sandbox's own probe ----------------------------------

_PAGE = "<!doctype html><html><body><h1>Habit tracker</h1><p>Drink water, Read 20 minutes</p></body></html>"
# Serves dist/index.html as built, but anything else (the app's script and styles) as its own text.
_HALF = ("const fs = require('fs'); require('http').createServer((q, r) => { r.writeHead(200); "
         "r.end(q.url === '/' ? fs.readFileSync('dist/index.html') : 'console.log(1)') }).listen(4173, '127.0.0.1')")
_PLUGIN = ("import fs from 'fs'\nexport default { plugins: [{ name: 'x', closeBundle() { "
           "fs.writeFileSync('dist/index.html', %s) } }] }\n" % json.dumps(_PAGE))
PREVIEW = "vite preview --host 127.0.0.1 --port 4173 --strictPort"
START_SCRIPTS = {  # name: (start script, extra files, serving, what the problem says)
    "the scaffold's": (PREVIEW, {}, True, ""),
    "rebuilds with the scaffold's settings": ("vite build && " + PREVIEW, {}, True, ""),
    "only says it is up": ("echo 'UP 200 5000 1'; sleep 30", {}, False, "did not bring the app up on port 4173"),
    "serves another page": ("node serve.cjs", {"serve.cjs": "require('http').createServer((q, r) => r.end(%s))"
                                                            ".listen(4173, '127.0.0.1')" % json.dumps(_PAGE)},
                            False, "not with the built app's page"),
    "serves the page but not its files": ("node half.cjs", {"half.cjs": _HALF}, False, "not the build's files"),
    "rebuilds with its own config": ("vite build && " + PREVIEW, {"vite.config.js": _PLUGIN}, False,
                                     "not with the built app's page"),
}


@pytest.mark.parametrize("name", list(START_SCRIPTS))
async def test_the_launch_check_passes_only_the_app_our_build_made(name):
    """The start script's own words count for nothing: the sandbox probes the port itself, and what
    answers must be our build's dist/ byte for byte (index.html and the files it loads)."""
    start, extra, serving, problem = START_SCRIPTS[name]
    files = {**scaffold_files(), **{p: t.encode() for p, t in extra.items()}}
    package = json.loads(files["package.json"])
    package["scripts"]["start"] = start
    files["package.json"] = json.dumps(package).encode()
    async with RewardPipeline(PipelineConfig()) as pipeline:
        health, dist = await check_health(pipeline.backends, files, 4173)
    assert health.built and not health.infra and "index.html" in dist
    assert health.serving is serving, health
    assert problem in health.problem and bool(problem) == bool(health.problem), health.problem
    if name == "serves the page but not its files":
        assert health.up and health.status == 200 and health.mismatched and "index.html" not in health.mismatched
    if name == "rebuilds with its own config":
        assert "vite.config.js" in health.ignored  # and our build of the sources is what gets opened
        assert b"Habit tracker" not in dist["index.html"]


async def test_a_project_that_does_not_build_is_not_built_by_its_own_script():
    """Our build decides `built`: a project whose sources fail stays unbuilt whatever its build
    script would have made, and that is the project's failure, not ours."""
    files = {**scaffold_files(), "src/App.jsx": b"export default function App() { return (<div> }",
             "package.json": scaffold_files()["package.json"].replace(
                 b'"build": "vite build"', b'"build": "mkdir -p dist && echo \'<h1>x</h1>\' > dist/index.html"')}
    async with RewardPipeline(PipelineConfig()) as pipeline:
        delivery = await deliver(pipeline.backends, files, 4173)
    assert not delivery.health.built and not delivery.infra and not delivery.launched and delivery.dist == {}
    assert "does not build" in delivery.health.problem and "package.json" in delivery.health.ignored


@pytest.mark.slow
@pytest.mark.parametrize("name", case_names("webdev-"))
async def test_a_launch_forgery_scores_exactly_as_its_honest_twin(name):
    """Each Webdev-Bench case of the forgery corpus (a start script that prints UP, a server of its
    own on the port, a build script that writes dist/): the same launch verdict and acceptance
    score as the honest twin."""
    [task] = load_suite(SUITE, [case(name)["task"]["webdev"]])
    start = starting_files(task)
    async with RewardPipeline(PipelineConfig()) as pipeline:
        honest = await delivery_scores(pipeline.backends, task, side(name, "honest", start))
        forged = await delivery_scores(pipeline.backends, task, side(name, "forged", start))
    assert not honest.infra and not forged.infra, (honest.infra, forged.infra)
    assert forged.scores == honest.scores, (honest.scores, forged.scores, forged.delivery.health.problem)


def test_a_session_is_budgeted_by_wall_time_alone_unless_the_turn_cap_is_asked_for():
    """Webdev-Bench budgets a session by wall time per requirement; the 30-turn cap per requirement
    and attempt is ours (`--turns-per-requirement 30`), off by default on every path."""
    import inspect

    from aesenv.webdev.session import (MAX_ATTEMPTS, SECONDS_PER_REQUIREMENT, TURNS_PER_REQUIREMENT, UNCAPPED_TURNS,
                                       run_task, session_budget, webdev_env)
    from benchmarks.webdev import build_parser

    default = session_budget(4)
    assert default.max_turns == UNCAPPED_TURNS and default.max_wall_s == 4 * SECONDS_PER_REQUIREMENT
    assert session_budget(4, turns_per_requirement=TURNS_PER_REQUIREMENT).max_turns == 30 * 4 * MAX_ATTEMPTS
    for entry in (run_task, webdev_env):
        assert inspect.signature(entry).parameters["turns_per_requirement"].default is None
    assert build_parser().parse_args(["--policy", "reference", "--out", "x"]).turns_per_requirement is None
