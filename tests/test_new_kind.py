"""A new kind is one package and one `register_kind` call. `tests/support/svgart` is a page kind
of its own: its answer is a standalone SVG document (its own artifact type), shown as an image by
the page renderer, scored by its own channels and judge with its own reward formula. With
nothing changed anywhere else it gets both Gymnasium envs, end-to-end scoring through
`RewardPipeline`, a demo run and training rows; each test here fails if the pipeline, the envs
or the CLI would need an edit for it, and one fails if code outside the package names it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from aesenv import cli
from aesenv.artifact import ANSWER_NAMES, ArtifactKind, register_artifact_kind
from aesenv.kinds import KINDS, env_ids, register_kind, unregister_kind
from aesenv.policy import register_policy
from aesenv.rewards import ChannelStatus, RewardPipeline
from aesenv.tasks import Task
from support.svgart import SVG, SvgArtKind
from support.svgart.kind import TASKS
from train import data as train_data



@pytest.fixture(scope="module", autouse=True)
def svgart():
    """Registered for this module only: a registered kind joins every pipeline's default channels
    and `validate()`, so it is taken away again before other modules' tests run."""
    kind = register_kind(SvgArtKind())  # the one registration line
    yield kind
    unregister_kind(kind.name)


ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(__file__).parent / "support" / "svgart"
TASK = TASKS[0]
DRAWING = ('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600" viewBox="0 0 800 600">'
           '<title>Sunset</title><rect width="800" height="600" fill="#f4efe6"/>'
           '<rect y="380" width="800" height="220" fill="#2f6f8f"/><circle cx="400" cy="360" r="140" fill="#e0693a"/>'
           '<text x="400" y="80" font-size="44" text-anchor="middle" font-family="sans-serif" fill="#1d2330">'
           'Sunset</text></svg>')
ANSWER = f"Here is the drawing:\n```svg\n{DRAWING}\n```"


class SvgPolicy:
    name = "svgart-test"

    async def generate(self, task: Task) -> str:
        return ANSWER


register_policy("svgart-test")(lambda _: SvgPolicy())


def test_registering_a_kind_registers_its_env_ids_once(svgart):
    assert {"AesSvgArt-v0", "AesSvgArtRefine-v0"} <= set(env_ids())
    assert gym.spec("AesSvgArt-v0").kwargs == {"kind": "svgart"}
    assert register_kind(svgart) is svgart  # the same object again: a no-op
    with pytest.raises(ValueError, match="svgart"):
        register_kind(SvgArtKind())  # a different object under a taken name
    assert KINDS["svgart"] is svgart


def test_its_artifact_type_is_its_own(svgart):
    assert ArtifactKind("svg") is SVG and ANSWER_NAMES[SVG] == "SVG document"
    assert register_artifact_kind("svg", "SVG document") is SVG  # the same again: a no-op
    with pytest.raises(ValueError, match="already called"):
        register_artifact_kind("svg", "vector image")
    assert svgart.extract(ANSWER).kind is SVG and svgart.extract("no drawing").kind is ArtifactKind.UNSUPPORTED


def test_nothing_outside_its_package_names_the_kind():
    named = [path.relative_to(ROOT) for folder in ("aesenv", "train", "policies", "benchmarks", "tools", "aesenv_vf")
             for path in (ROOT / folder).rglob("*.py") if "svgart" in path.read_text(errors="replace").lower()]
    assert not named, f"code outside tests/support/svgart names the new kind: {named}"
    assert Path(inspect.getfile(SvgArtKind)).parent == PACKAGE


async def test_the_pipeline_scores_the_new_kind_end_to_end(renderer):
    pipeline = RewardPipeline(renderer=renderer)
    try:
        scored = await pipeline.score(TASK, ANSWER)
        record = scored.record
        assert record.artifact.kind == SVG.value == "svg" and record.status == "ok" and not record.failure
        assert set(record.channels) == {"svg_shape", "svg_look"}  # its own, whatever the config names
        shape, look = record.channels["svg_shape"], record.channels["svg_look"]
        assert shape.status is ChannelStatus.OK and shape.payload["checks"] == {"viewbox": True, "title": True,
                                                                               "shapes": True}
        assert look.status is ChannelStatus.OK and look.payload["colours"] >= 4 and look.raw > 5
        assert set(record.rewards) == {"paper", "normalized"} and record.reward == pytest.approx(100 * record.normalized)
        assert scored.picture and scored.rendering.status.value == "ok"

        untitled = await pipeline.score(TASK, ANSWER.replace("<title>Sunset</title>", ""))
        assert untitled.record.channels["svg_shape"].payload["checks"]["title"] is False
        assert untitled.record.reward < record.reward

        html = await pipeline.score(TASK, "```html\n<!doctype html><html><body>Sunset</body></html>\n```")
        assert html.record.channels["svg_shape"].status is ChannelStatus.FAILED
        assert html.record.failure.startswith("unsupported") and html.record.reward == 0
        assert "no SVG document" in html.record.channels["svg_shape"].payload["reason"]

        broken = await pipeline.score(TASK, "```svg\n<svg><rect></svg>\n```")
        assert "not well-formed XML" in broken.record.channels["svg_shape"].payload["reason"]
        assert broken.record.gate == "closed" and broken.record.reward == 0  # svg_shape gates the judge
    finally:
        await pipeline.close()


def test_gym_make_single_turn_env():
    env = gym.make("AesSvgArt-v0", render_mode="rgb_array")
    try:
        observation, info = env.reset(seed=0)
        assert observation["prompt"] in {t.prompt for t in TASKS} and info["task_id"] in {t.id for t in TASKS}
        _, reward, terminated, _, info = env.step(ANSWER)
        assert terminated and info["reward_valid"] and reward > 0
        frame = env.render()
        assert frame.ndim == 3 and np.asarray(frame).std() > 0  # the drawing, not a blank frame
    finally:
        env.close()


def test_gym_make_refine_env():
    env = gym.make("AesSvgArtRefine-v0")
    try:
        observation, _ = env.reset(seed=0)
        assert "drawing.svg" in observation
        env.step({"name": "write_file", "arguments": {"path": "drawing.svg", "content": DRAWING}})
        observation, _, _, _, info = env.step('<tool_call name="render"></tool_call>')
        assert "status: ok" in observation and "[image]" in observation and info["potential"] > 0
        _, reward, terminated, _, info = env.step({"name": "submit", "arguments": {}})
        assert terminated and info["reward_valid"] and reward > 0
        assert info["record"]["channels"]["svg_look"]["status"] == "ok"
    finally:
        env.close()


def test_a_demo_run_and_training_rows(tmp_path):
    tasks = tmp_path / "svgart.jsonl"
    tasks.write_text(TASK.model_dump_json() + "\n")
    out = tmp_path / "demo"
    assert cli.main(["demo", "--tasks", f"jsonl:{tasks}", "--policy", "svgart-test", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_total"] == 1 and summary["n_infra_error"] == 0 and summary["reward_mean"] > 0
    assert (out / "screenshots" / f"{TASK.id}.png").is_file()

    counts = train_data.build(f"jsonl:{tasks}", tmp_path / "rows", multi_turn=True, val_fraction=0)
    assert counts == {"train": 1, "test": 1}
    row = pd.read_parquet(tmp_path / "rows" / "train.parquet").iloc[0]
    assert row["data_source"] == "aesenv/svgart" and row["extra_info"]["env_id"] == "AesSvgArtRefine-v0"
    assert [m["content"] for m in row["prompt"]] == [SvgArtKind.asking.system_prompt, TASK.prompt]
    single = train_data.to_row(TASK, 0, multi_turn=False)
    assert single["extra_info"]["env_id"] == "AesSvgArt-v0"


def test_an_unregistered_kind_is_a_clear_error():
    stray = Task(id="x", kind="slides", prompt="A deck.")
    with pytest.raises(ValueError, match="'slides' tasks have no registered kind"):
        train_data.chat_prompt(stray)


def test_the_kind_is_gone_after_its_module(svgart):
    """What the module fixture's teardown does, checked on a second kind of the same class under
    another name: after `unregister_kind` neither the kind registry nor Gymnasium keeps it."""
    other = SvgArtKind()
    other.name, other.title = "svgart_other", "SvgArtOther"
    register_kind(other)
    assert "svgart_other" in KINDS and "AesSvgArtOther-v0" in gym.registry
    unregister_kind("svgart_other")
    assert "svgart_other" not in KINDS and "AesSvgArtOther-v0" not in gym.registry
    assert "AesSvgArtOther-v0" not in env_ids()
    with pytest.raises(KeyError, match="svgart_other"):
        unregister_kind("svgart_other")
