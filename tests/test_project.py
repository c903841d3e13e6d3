"""The `project` kind and `AesWebProject-v0` (WebCoder's Webdev-World): the task model, the
verifier's parts, the tools, and whole episodes on both sandbox backends.

The slow half builds real React + Vite projects in the sandbox and serves them to Chromium: the
verifier's gate on projects that fail to build, render blank, loop in their build or fill the
disk; every suite task end to end; the scripted agent repairing each injected defect; a model
(the scripted OpenAI-compatible server) driving edit → webshot → fix → submit; `aesenv run`.
"""

from __future__ import annotations

import json
import os

import gymnasium as gym
import pytest
import pytest_asyncio
from gymnasium.utils.env_checker import check_env
from pydantic import ValidationError

from aesenv.channels import ChannelResult
from aesenv.envs import make_core
from aesenv.envs.project import PROJECT_TOOL_SPECS
from aesenv.envs.refine import as_text
from aesenv.envs.tools import ActionError, parse_action
from aesenv.kinds.project.kind import PROJECT
from aesenv.kinds.project.kind import potential_of
from aesenv.kinds.project.build import scaffold_files
from aesenv.kinds.project.census import (Census, pixel_similarity, requirement_score, source_authoring,
                                         text_overlap)
from aesenv.kinds.project.judge import Sight, snap
from aesenv.models import PROJECT_JUDGE
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.kinds.project.aggregate import webcoder
from aesenv.tasks import Task, load_tasks
from aesenv.trajectory import run_episode
from policies.project_repair import ProjectRepairPolicy, diagnose, fix_anchor, fix_import, fix_mount
from support.forgeries import case, case_names, side
from support.openai_server import choices, tool_calls

SUITE = load_tasks("builtin:project")
BY_ID = {t.id: t for t in SUITE}
DEFECTS = [t for t in SUITE if t.project.defect]


def _task(**project) -> Task:
    return Task(id="t", kind="project", prompt="Build a bakery site", project=project)


MENU = {"id": "menu", "type": "section", "weight": 0.6, "description": "a menu of breads",
        "keywords": ["Menu", "Sourdough"], "selector": "li", "min_count": 4}
NAV = {"id": "nav", "type": "navigation", "weight": 0.4, "description": "links to each section", "links_resolve": True}


# --- tasks ------------------------------------------------------------------------------------


def test_builtin_suite_has_every_starting_condition_and_round_trips():
    starts = [t.project.start for t in SUITE]
    assert len(SUITE) >= 12 and all(t.kind == "project" for t in SUITE)
    assert starts.count("scaffold") >= 5 and starts.count("reference") >= 3 and starts.count("files") >= 4
    assert len(DEFECTS) >= 3 and all(t.project.requirements[0].type == "repair" for t in DEFECTS)
    assert all(t.reference_html for t in SUITE if t.project.start == "reference")
    assert any(not t.project.requirements for t in SUITE)  # the source-authoring potential gets used
    assert any(r.hidden for t in SUITE for r in t.project.requirements)
    for task in SUITE:
        assert Task.model_validate_json(task.model_dump_json()) == task
        assert abs(sum(r.weight for r in task.project.requirements) - 1) < 1e-6 or not task.project.requirements


@pytest.mark.parametrize("bad, message", [
    ({"requirements": [dict(MENU, weight=0.5), NAV]}, "sum to 0.9"),
    ({"requirements": [dict(MENU, weight=0.5), dict(NAV, id="menu", weight=0.5)]}, "ids repeat"),
    ({"defect": "renamed an id"}, "injected defect"),
    ({"start": "files"}, "needs files"),
    ({"requirements": [{"id": "x", "type": "content", "weight": 1, "description": "d"}]}, "checks nothing"),
    ({"requirements": [{"id": "x", "type": "content", "weight": 1, "description": "d", "min_count": 2}]},
     "needs a selector"),
])
def test_project_specs_that_cannot_be_graded_are_refused(bad, message):
    with pytest.raises(ValidationError, match=message):
        _task(**bad)


def test_a_reproduction_needs_its_reference():
    with pytest.raises(ValidationError, match="needs reference_html"):
        _task(start="reference")


def test_the_request_shows_requirements_but_not_hidden_ones():
    task = _task(requirements=[MENU, dict(NAV, hidden=True)])
    text = PROJECT.request(task)
    assert "a menu of breads (0.6)" in text and "links to each section" not in text


# --- the verifier's parts ---------------------------------------------------------------------


def test_requirement_checks_average_and_the_ledger_leaves_counts_out():
    spec = _task(requirements=[MENU, NAV]).project
    census = Census(text="Our  MENU: sourdough, rye", links=4, broken_count=1, counts={"menu": 2})
    menu, nav = spec.requirements
    assert requirement_score(menu, census) == pytest.approx((1.0 + 0.5) / 2)
    assert requirement_score(menu, census, with_counts=False) == 1.0
    assert requirement_score(nav, census) == 0.75
    counted_only = menu.model_copy(update={"keywords": ()})
    assert requirement_score(counted_only, census, with_counts=False) is None
    assert potential_of(_task(requirements=[MENU, NAV]), {"nav": 0.5}) == 0.5  # renormalised to what is kept
    assert requirement_score(nav, Census(text="", links=0)) == 0.0  # no links at all is not navigation


def _result(status: str, score: float | None = None) -> ChannelResult:
    if status in ("ok", "failed"):
        return ChannelResult(status=status, score=score, raw=score)
    return ChannelResult(status=status, payload={"reason": "r"})


def test_webcoder_reward_is_gate_times_the_weighted_parts():
    assert webcoder({"project_gate": _result("ok", 1.0), "project_det": _result("ok", 0.5),
                     "project_vlm": _result("ok", 1.0)}) == pytest.approx(0.7)
    assert webcoder({"project_gate": _result("failed", 0.0), "project_det": _result("not_applicable"),
                     "project_vlm": _result("not_applicable")}) == 0.0
    assert webcoder({"project_gate": _result("ok", 1.0), "project_det": _result("not_applicable"),
                     "project_vlm": _result("ok", 0.5)}) == 0.5
    assert webcoder({"project_gate": _result("infra_error")}) is None
    assert webcoder({"project_gate": _result("ok", 1.0), "project_det": _result("ok", 1.0),
                     "project_vlm": _result("infra_error")}) is None


def _png(stripes: bool) -> bytes:
    import io

    import numpy as np
    from PIL import Image

    px = np.full((120, 160, 3), 255, np.uint8)
    if stripes:
        px[::20] = (30, 60, 200)
        px[:, 40:60] = (200, 40, 40)
    out = io.BytesIO()
    Image.fromarray(px).save(out, "PNG")
    return out.getvalue()


def test_pixel_comparison_separates_a_copy_from_a_blank_page():
    reference = _png(True)
    assert pixel_similarity(reference, reference)["score"] == 1.0
    blank = pixel_similarity(_png(False), reference)
    assert blank["layout"] == 0.0 and blank["score"] < 0.6
    assert text_overlap("Northbound trails hiking", "Northbound Trails: guided hiking tours")["recall"] == 0.6


def test_source_authoring_grows_as_the_project_leaves_the_scaffold():
    scaffold = scaffold_files()
    assert source_authoring(scaffold, scaffold)["score"] == 0.0
    grown = dict(scaffold)
    grown["src/App.jsx"] = b"import Hero from './components/Hero.jsx'\nimport './app.css'\n" + b"\n".join(
        f"const line{i} = {i}".encode() for i in range(160))
    grown["src/components/Hero.jsx"] = b"export default function Hero() { return <h1>Hi</h1> }\n"
    grown["src/app.css"] = b"\n".join(f".c{i} {{ margin: {i}px }}".encode() for i in range(70))
    parts = source_authoring(grown, scaffold)["parts"]
    assert parts["root_authored"] == 1.0 and parts["source_lines"] == 1.0 and parts["styling"] == 1.0
    assert parts["components"] == pytest.approx(1 / 3, abs=1e-4) and parts["imports_used"] == pytest.approx(2 / 3, abs=1e-4)


def test_judge_levels_snap_to_the_anchored_scale():
    assert [snap(v) for v in (0.97, 0.8, 0.6, 0.3, 0.1)] == [1.0, 0.75, 0.5, 0.25, 0.0]


# --- the env's tools without a build --------------------------------------------------------------


def test_project_tools_replace_render_with_webshot():
    assert "webshot" in PROJECT_TOOL_SPECS and "render" not in PROJECT_TOOL_SPECS
    assert isinstance(parse_action('<tool_call name="render"></tool_call>', PROJECT_TOOL_SPECS), ActionError)
    calls = parse_action('<tool_call name="skill"><name>repair</name></tool_call>', PROJECT_TOOL_SPECS)
    assert calls[0].name == "skill" and calls[0].arguments == {"name": "repair"}


async def test_workspace_tools_on_an_existing_project():
    env = make_core("AesWebProject-v0", [BY_ID["project-fix-anchors"]])
    try:
        messages, info = await env.reset(task="project-fix-anchors")
        assert "webshot" in info["tools"] and info["ledger"] == {} and "list_files" in messages[0]["content"]
        # A handed-over project is looked at once at reset: its Φ is known before the first action.
        assert info["start_potential"] is not None and 0 < info["start_potential"] < 1
        listing, *_ = await env.step({"name": "list_files", "arguments": {}})
        assert "src/components/Services.jsx" in listing[0]["content"] and "node_modules" not in listing[0]["content"]
        found, *_ = await env.step({"name": "search_files", "arguments": {"pattern": "service-list"}})
        assert "src/components/Services.jsx:" in found[0]["content"]
        guide, *_ = await env.step({"name": "skill", "arguments": {"name": "repair"}})
        assert len(guide[0]["content"]) > 400
        unknown, _, _, _, info = await env.step({"name": "skill", "arguments": {"name": "magic"}})
        assert "no skill 'magic'" in unknown[0]["content"] and not info["tool_results"][0]["ok"]
        ran, _, _, _, info = await env.step({"name": "run", "arguments": {
            "command": "ls node_modules/react/package.json && echo made > src/made.txt && mkdir -p dist && touch dist/x"}})
        assert info["tool_results"][0]["ok"], ran[0]["content"]
        assert "src/made.txt" in env.workspace.files and not any(p.startswith(("dist", "node_modules"))
                                                                 for p in env.workspace.files)
    finally:
        await env.close()


def test_gymnasium_check_env_on_the_project_env():
    env = gym.make("AesWebProject-v0", disable_env_checker=True).unwrapped
    try:
        check_env(env, skip_render_check=True)
        obs, reward, terminated, truncated, info = env.step("not a tool call")
        assert "Invalid action" in obs and reward == 0.0 and "ledger" in info
    finally:
        env.close()


# --- the scripted agent's diagnoses ---------------------------------------------------------------


def test_repair_agent_reads_each_fault_from_what_the_env_shows():
    build = 'build: the build failed (error: exit code 1): Could not resolve "./components/Fotter.jsx" from "src/App.jsx"'
    assert diagnose(build) == "import"
    fix = fix_import(build, "src/App.jsx (900 B)\nsrc/components/Footer.jsx (300 B)\nsrc/main.jsx (200 B)")
    assert fix.arguments == {"path": "src/App.jsx", "old": "./components/Fotter.jsx", "new": "./components/Footer.jsx"}
    assert diagnose("page errors (1):\n  Error: Minified React error #299; visit https://react.dev") == "mount"
    fix = fix_mount("src/main.jsx:5: createRoot(document.getElementById('app')).render(", '<div id="root"></div>')
    assert fix.arguments["old"] == "getElementById('app')" and fix.arguments["new"] == "getElementById('root')"
    shot = "in-page links: 5, 1 without a target; broken targets: #services"
    assert diagnose(shot) == "anchors"
    fix = fix_anchor(shot, 'src/components/Services.jsx:3: <section id="service-list" className="s">\n'
                           'src/components/Hero.jsx:2: <section id="hero">')
    assert fix.arguments == {"path": "src/components/Services.jsx", "old": 'id="service-list"', "new": 'id="services"'}
    assert diagnose("build: ok (2.1 s)\nin-page links: 3, 0 without a target") is None


# --- end to end on both backends ------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session", params=["local", "docker"])
async def project_pipeline(request, renderer):
    if request.param == "docker":
        from aesenv.sandbox.docker import engine_problem

        if problem := engine_problem():
            if os.environ.get("CI"):
                pytest.fail(f"CI must test the docker sandbox: {problem}")
            pytest.skip(f"docker sandbox unavailable: {problem}")
    pipeline = RewardPipeline(PipelineConfig(sandbox=request.param), renderer=renderer)
    yield pipeline
    await pipeline.sandbox.close()
    await pipeline.close_parts()


async def _score(pipeline: RewardPipeline, task: Task, files: dict[str, bytes] | None = None):
    """The verifier's record of `files` (default: the task's starting project)."""
    files = files if files is not None else PROJECT.initial_files(task)
    others = {p: b for p, b in files.items() if p != "index.html"}
    return (await pipeline.score(task, files["index.html"], files=others)).record


FAULTS = {
    "does not build": {"src/App.jsx": "export default function App() { return (<div> }"},
    "renders blank": {"src/App.jsx": "export default function App() { return null }"},
    "has no entry page": {"index.html": ""},
    "imports what is not there": {"src/main.jsx": "import App from './Missing.jsx'\nApp()"},
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_the_verifier_closes_the_gate_on_a_broken_project(project_pipeline, fault):
    task = _task(requirements=[MENU, NAV])
    files = {**PROJECT.initial_files(task), **{p: t.encode() for p, t in FAULTS[fault].items()}}
    record = await _score(project_pipeline, task, files)
    gate = record.channels["project_gate"]
    assert record.status == "ok" and record.reward == 0.0 and record.gate == "closed", record.failure
    assert gate.status.value == "failed" and record.failure
    assert record.channels["project_det"].status.value == "not_applicable"


# A build config that would loop, fill the disk or write its own dist/ if it ran.
CONFIG_THAT_MUST_NOT_RUN = {
    "vite.config.js": "import fs from 'fs'\nfs.writeFileSync('ran-vite-config', '')\nwhile (true) {}\n"
                      "export default {}",
    "postcss.config.cjs": "require('fs').writeFileSync('ran-postcss-config', '')\n"
                          "for (let i = 0; ; i++) require('fs').writeFileSync('fill' + i, Buffer.alloc(1 << 24))",
    ".env.production": "VITE_TITLE=from the env file\n",
    "package.json": '{"name": "app", "type": "module", "scripts": {"build": "node -e \\"process.exit(1)\\""}}',
}


@pytest.mark.slow
async def test_the_verifier_builds_with_its_own_settings_and_runs_no_project_config(project_pipeline):
    """A project's vite.config, PostCSS config, env files and build script never run: the build
    is the scaffold's settings on the sources, and the record names each file it left out."""
    task = _task(requirements=[MENU, NAV])
    honest = PROJECT.initial_files(task)
    honest["src/App.jsx"] = (b"export default function App() { return <main>"
                             b"<h1>{import.meta.env.VITE_TITLE || 'Menu'}</h1>"
                             b"<p>Sourdough, rye and spelt, baked every morning.</p></main> }")
    forged = {**honest, **{p: t.encode() for p, t in CONFIG_THAT_MUST_NOT_RUN.items()}}
    a, b = await _score(project_pipeline, task, honest), await _score(project_pipeline, task, forged)
    assert b.status == "ok" and b.gate == "passed" and b.reward == a.reward > 0, b.failure
    gate = b.channels["project_gate"]
    assert set(gate.payload["ignored"]) == set(CONFIG_THAT_MUST_NOT_RUN), gate.payload
    assert "build script not run" in gate.payload["ignored"]["package.json"]
    assert "ignored" not in a.channels["project_gate"].payload  # the scaffold's own files are not news


async def test_what_the_build_leaves_out_is_named_with_why():
    from aesenv.kinds.project.build import ignored_files

    scaffold = scaffold_files()
    files = {**scaffold, "vite.config.ts": b"export default {}", ".env": b"A=1", "tailwind.config.js": b"",
             "dist/index.html": b"<h1>prebuilt</h1>", "dist/assets/x.js": b"", "src/vite.config.js": b"",
             "package.json": scaffold["package.json"].replace(b'"build": "vite build"', b'"build": "node x.js"')}
    ignored = ignored_files(files, scaffold)
    assert set(ignored) == {"vite.config.ts", ".env", "tailwind.config.js", "dist/", "package.json"}
    assert "Vite config" in ignored["vite.config.ts"] and "build script not run" in ignored["package.json"]
    assert ignored_files(scaffold, scaffold) == {}  # the scaffold's config is ours: nothing is left out


@pytest.mark.slow
async def test_vite_that_cannot_be_loaded_is_our_failure_not_the_projects(project_pipeline, monkeypatch):
    """The build driver loads Vite before it reads any project file: when our install is not
    there, that is an infrastructure error (masked), never the project's 0."""
    sandbox = project_pipeline.sandbox
    monkeypatch.setattr(sandbox, "runtime_path", lambda name: "/nonexistent/aesenv/node_modules")
    record = await _score(project_pipeline, _task(requirements=[MENU, NAV]))
    assert record.channels["project_gate"].status.value == "infra_error", record.channels["project_gate"]
    assert record.reward is None and "Vite could not be loaded" in record.channels["project_gate"].payload["reason"]


@pytest.mark.slow
@pytest.mark.parametrize("name", case_names("project-"))
async def test_a_build_forgery_scores_exactly_as_its_honest_twin(project_pipeline, name):
    """Each project case of the forgery corpus (a vite.config plugin writing dist/, a build-script
    swap, .env and `define` copy, a PostCSS exit hook, a package.json that claims the name "vite",
    a config pasting the reference screenshot): the forgery gains on no channel, not even a
    little, because our build never runs what it added."""
    task = BY_ID[case(name)["task"]["builtin"]]
    start = PROJECT.initial_files(task)
    honest = await _score(project_pipeline, task, side(name, "honest", start))
    forged = await _score(project_pipeline, task, side(name, "forged", start))
    assert honest.status == "ok" and honest.gate == "passed", honest.failure
    for channel in ("project_gate", "project_det", "project_vlm"):
        h, f = honest.channels[channel], forged.channels[channel]
        assert (f.status, f.score) == (h.status, h.score), (channel, h, f)
    assert forged.reward == honest.reward


@pytest.mark.slow
async def test_webshot_shows_what_the_verifier_builds(project_pipeline):
    """The agent's webshot (and so Φ) is our build too: a config plugin that writes every keyword
    into dist/ moves neither the ledger nor the potential, and the webshot says the file was not used."""
    name = "project-vite-plugin-dist"
    task = BY_ID[case(name)["task"]["builtin"]]
    env = make_core("AesWebProject-v0", [task], pipeline=project_pipeline)
    seen = {}
    for which in ("honest", "forged"):
        await env.reset(task=task.id)
        for path, data in side(name, which, {}).items():
            await env.step({"name": "write_file", "arguments": {"path": path, "content": data.decode()}})
        shot, _, _, _, info = await env.step({"name": "webshot", "arguments": {}})
        seen[which] = (dict(info["ledger"]), info["potential"], as_text(shot))
    await env.close()
    assert seen["forged"][:2] == seen["honest"][:2] and seen["honest"][1] < 1.0
    assert "not used by the build" in seen["forged"][2] and "vite.config.js" in seen["forged"][2]
    assert "not used by the build" not in seen["honest"][2]


@pytest.mark.slow
async def test_a_project_that_meets_its_requirements_scores_high(project_pipeline):
    task = _task(requirements=[MENU, NAV])
    files = PROJECT.initial_files(task)
    files["src/App.jsx"] = (b'export default function App() { return (<div><nav><a href="#menu">Menu</a></nav>'
                            b'<section id="menu"><h2>Menu</h2><ul><li>Sourdough</li><li>Rye</li><li>Spelt</li>'
                            b'<li>Baguette</li></ul></section></div>) }')
    good, plain = await _score(project_pipeline, task, files), await _score(project_pipeline, task)
    assert good.channels["project_det"].score == 1.0 and good.reward > plain.reward > 0
    assert good.channels["project_vlm"].payload["proxy"] is True


@pytest.mark.slow
async def test_a_project_task_without_a_spec_is_scored_on_the_judge_alone(project_pipeline):
    task = Task(id="bare", kind="project", prompt="Build anything")
    record = await _score(project_pipeline, task)
    assert record.status == "ok" and record.channels["project_det"].status.value == "not_applicable"
    assert record.reward == record.channels["project_vlm"].score > 0


@pytest.mark.slow
async def test_every_suite_task_runs_end_to_end(project_pipeline):
    env = make_core("AesWebProject-v0", SUITE, pipeline=project_pipeline)
    for task in SUITE:
        messages, _ = await env.reset(task=task.id)
        if task.project.start == "reference":
            assert any(p.get("type") == "image_url" for p in messages[-1]["content"])  # the reference is shown
        shot, _, _, _, info = await env.step({"name": "webshot", "arguments": {}})
        assert info["tool_results"][0]["ok"], (task.id, shot)
        assert "build:" in as_text(shot)
        _, reward, terminated, _, info = await env.step({"name": "submit", "arguments": {}})
        assert terminated and info["status"] == "ok" and info["reward_valid"], (task.id, info)
        gate = info["record"]["channels"]["project_gate"]["status"]
        closed = task.id in ("project-fix-import", "project-fix-mount")  # it does not build; it renders blank
        assert gate == ("failed" if closed else "ok"), (task.id, info["record"]["failure"])


@pytest.mark.slow
async def test_the_scripted_agent_repairs_every_injected_defect(project_pipeline):
    env = make_core("AesWebProject-v0", DEFECTS, pipeline=project_pipeline)
    for task in DEFECTS:
        before = (await _score(project_pipeline, task)).reward
        trajectory = await run_episode(env, ProjectRepairPolicy(), task=task.id)
        tools = [r["name"] for s in trajectory.steps for r in s.tool_results]
        assert trajectory.end == "submit" and "edit_file" in tools, (task.id, tools)
        assert trajectory.reward > before, (task.id, before, trajectory.reward)
        repaired = trajectory.steps[-2]  # the webshot after the fix
        assert repaired.potential > trajectory.steps[0].potential or before == 0.0


@pytest.mark.slow
async def test_a_compacted_repair_episode_records_its_segments_and_still_repairs(project_pipeline, tmp_path):
    """Compacting every couple of turns (a small threshold) loses the early webshot from the
    context; the agent's handover note carries its fault lines, so the repair still lands. The
    timeline shows each boundary with its Φ, and train.credit reads the segments back."""
    from aesenv.context import ContextConfig
    from aesenv.trajectory import timeline_html, write_trajectory
    from train.credit import trajectory_segments

    env = make_core("AesWebProject-v0", DEFECTS, pipeline=project_pipeline)
    plain = await run_episode(env, ProjectRepairPolicy(), task="project-fix-mount")
    compacted = await run_episode(env, ProjectRepairPolicy(), task="project-fix-mount",
                                  context=ContextConfig(compact_at_tokens=2000, fold_after=2))
    await env.close()
    assert compacted.reward == plain.reward > 0.5 and len(compacted.compactions) >= 2
    first = compacted.steps[0]  # a webshot of the project as handed over: what the start is worth
    assert compacted.start_potential == first.potential and first.delta_potential == first.potential
    assert any("Minified React error #299" in c.summary for c in compacted.compactions)  # the note kept the fault
    write_trajectory(compacted, tmp_path)
    page = timeline_html(compacted, tmp_path)
    assert page.count('class="turn compaction"') == len(compacted.compactions)
    segments = trajectory_segments(json.loads((tmp_path / "trajectory.json").read_text()))
    assert [s["potential"] for s in segments] == compacted.segment_potentials
    assert all(s["retained"] and s["tokens"] > 0 for s in segments)
    weighted = sum(s["offset"] * s["tokens"] for s in segments)
    assert weighted == pytest.approx(0.0, abs=1e-3)  # rounded to 6 places per segment


def _fix_after_the_build_error(request):
    shown = "\n".join(m["content"] for m in request.messages if m["role"] == "tool" and isinstance(m["content"], str))
    assert 'Could not resolve "./components/Fotter.jsx"' in shown, "the webshot did not show the build error"
    return tool_calls(("edit_file", {"path": "src/App.jsx", "old": "./components/Fotter.jsx",
                                     "new": "./components/Footer.jsx"}))


@pytest.mark.slow
async def test_a_chat_model_drives_a_project_episode(openai_server, renderer):
    from policies.openai_chat import OpenAIChatPolicy

    task = BY_ID["project-fix-import"]
    openai_server.script(
        tool_calls(("webshot", {})),
        _fix_after_the_build_error,
        tool_calls(("webshot", {})),
        tool_calls(("submit", {})),
    )
    pipeline = RewardPipeline(renderer=renderer)
    env = make_core("AesWebProject-v0", [task], pipeline=pipeline)
    policy = OpenAIChatPolicy("test-model", base_url=openai_server.url, api_key_env="AESENV_TEST_NO_KEY")
    try:
        trajectory = await run_episode(env, policy, task=task.id)
    finally:
        await policy.close()
        await pipeline.sandbox.close()
    assert trajectory.end == "submit" and trajectory.reward > 0.3
    names = [t["function"]["name"] for t in openai_server.completions[0].body["tools"]]
    assert "webshot" in names and "render" not in names
    assert openai_server.completions[-1].images  # the webshot's screenshot reached the model
    assert trajectory.steps[2].potential > trajectory.steps[0].potential


@pytest.mark.slow
def test_aesenv_run_records_a_project_episode(tmp_path, capsys):
    from aesenv.cli import main

    out = tmp_path / "run"
    code = main(["run", "--env", "AesWebProject-v0", "--policy", "project-repair", "--task", "project-fix-mount",
                 "--out", str(out), "--max-turns", "10"])
    assert code == 0, capsys.readouterr()
    stored = json.loads((out / "trajectory.json").read_text())
    assert stored["end"] == "submit" and stored["reward"] > 0.3
    assert "Minified React error #299" in (out / "timeline.html").read_text()


async def test_the_vlm_judge_takes_the_median_of_three_draws(openai_server, renderer):
    """One request for three samples; each dimension is the median, snapped to the levels."""
    task = _task(requirements=[MENU, NAV])
    draws = [{"design": 1.0, "content": 0.5, "functionality": 0.25, "render_health": 1.0, "rationale": "a"},
             {"design": 0.75, "content": 0.5, "functionality": 0.0, "render_health": 1.0, "rationale": "b"},
             {"design": 0.25, "content": 0.8, "functionality": 1.0, "render_health": 0.75, "rationale": "c"}]
    openai_server.script(choices(*draws))
    judge = PROJECT_JUDGE.backends["openai"]("test-model", base_url=openai_server.url, api_key_env="AESENV_TEST_NO_KEY",
                                     cache_dir=None)
    rendering = await renderer.render("<main><h1>Menu</h1><p>Sourdough and rye.</p></main>")
    try:
        grade = await judge.grade(Sight(task, rendering, Census(text="Menu Sourdough")))
    finally:
        await judge.close()
    assert len(openai_server.completions) == 1 and openai_server.completions[0].n == 3
    assert openai_server.completions[0].images  # the app's screenshot
    assert grade.dimensions == {"design": 0.75, "content": 0.5, "functionality": 0.25, "render_health": 1.0}
    assert grade.score == pytest.approx(0.38 * 0.75 + 0.26 * 0.5 + 0.18 * 0.25 + 0.18) and not grade.proxy


@pytest.mark.slow
async def test_a_server_a_command_starts_does_not_outlive_it(project_pipeline):
    env = make_core("AesWebProject-v0", [BY_ID["project-gen-01"]], pipeline=project_pipeline)
    await env.reset(task="project-gen-01")
    start = ("node -e \"require('http').createServer().listen(5173, () => console.log('listening'))\" & "
             "sleep 1; echo started")
    obs, _, _, _, info = await env.step({"name": "run", "arguments": {"command": start}})
    assert info["tool_results"][0]["ok"] and "listening" in obs[0]["content"]  # it returned, it did not wait
    probe = ("node -e \"require('http').get('http://127.0.0.1:5173', () => console.log('alive'))"
             ".on('error', (e) => console.log('gone', e.code))\"")
    obs, *_ = await env.step({"name": "run", "arguments": {"command": probe}})
    assert "gone" in obs[0]["content"] and "alive" not in obs[0]["content"]


class _EditsBeforeLooking(ProjectRepairPolicy):
    """The repair agent, but its first action changes the project before any webshot."""

    name = "edits-first"

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        from aesenv.context import asks_for_summary
        from policies.project_repair import _call, _history

        names, _ = _history(messages) if not asks_for_summary(messages) else ([None], [])
        if not getattr(self, "wrote", False):
            self.wrote = True
            return _call(1, "write_file", path="src/Notes.jsx", content="export const NOTES = 'written first'\n")
        if names == ["write_file"]:
            return _call(2, "webshot")
        return await super().act(messages, tools)


@pytest.mark.slow
async def test_an_episode_that_edits_before_looking_still_gets_segment_offsets(project_pipeline, tmp_path, capsys):
    """The start potential is measured at reset (not left unknown because the first action was an
    edit), once per distinct start however many episodes reset to it, and `python -m
    train.credit` on the recorded, compacted episode prints an offset for every segment."""
    from aesenv.context import ContextConfig
    from aesenv.envs.refine import StartPotentials
    from aesenv.trajectory import write_trajectory
    from train.credit import main as credit

    task = BY_ID["project-fix-anchors"]
    env = make_core("AesWebProject-v0", [task], pipeline=project_pipeline)
    StartPotentials._owners.pop(project_pipeline, None)  # earlier tests reset to this start: a fresh cache
    cache = StartPotentials.of(project_pipeline)
    looks = cache.looks
    _, info = await env.reset(task=task.id)
    start = info["start_potential"]
    assert start is not None and 0 < start < 1  # one link of the handed-over project is broken
    assert cache.looks == looks + 1
    trajectory = await run_episode(env, _EditsBeforeLooking(), task=task.id,
                                   context=ContextConfig(compact_at_tokens=2500, fold_after=2))
    await env.close()
    assert cache.looks == looks + 1  # the second reset to the same start took no new look
    assert trajectory.steps[0].tool_results[0]["name"] == "write_file"  # it edited before looking
    assert trajectory.start_potential == start and len(trajectory.compactions) >= 1
    assert trajectory.reward > 0.7  # the anchor was repaired
    write_trajectory(trajectory, tmp_path)
    credit([str(tmp_path / "trajectory.json")])
    out = capsys.readouterr().out
    segments = [line for line in out.splitlines() if line.strip().startswith("segment ")]
    assert len(segments) == len(trajectory.compactions) + 1 >= 2
    assert all("δ +" in line or "δ -" in line for line in segments), out
    assert f"{len(segments)} of {len(segments)} segments retained, 0 broadcast" in out
    print(out)
