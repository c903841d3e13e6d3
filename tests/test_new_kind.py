"""A new artifact kind is one subclass and one `register_kind` call: this file adds `svg` (an SVG
drawing, rendered by the renderer and judged by the existing static judge) and, with nothing
changed anywhere else, gets both Gymnasium envs, pipeline scoring, a demo run and training rows.
It overrides only how an answer becomes its artifact and its page; showing a rendered page to an
agent (Φ, text, screenshot) is `PageKind`'s default."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from aesenv import cli
from aesenv.artifact import Artifact, ArtifactKind
from aesenv.kinds.web.static import StaticChannel
from aesenv.models import PAGE_JUDGE
from aesenv.kinds import KINDS, env_ids, register_kind
from aesenv.kinds.base import Scoring
from aesenv.kinds.page import PAGE_ASKING, PageKind
from aesenv.policy import register_policy
from aesenv.rewards import ChannelStatus
from aesenv.tasks import Task
from train import data as train_data

SVG_BLOCK = re.compile(r"<svg\b.*?</svg>", re.S | re.I)
TASK = Task(id="sunset", kind="svg", category="UI Component", prompt="Draw a flat sunset over the sea as an SVG.")
DRAWING = ('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600" viewBox="0 0 800 600">'
           '<rect width="800" height="600" fill="#f4efe6"/><rect y="380" width="800" height="220" fill="#2f6f8f"/>'
           '<circle cx="400" cy="360" r="140" fill="#e0693a"/>'
           '<text x="400" y="80" font-size="44" text-anchor="middle" font-family="sans-serif" fill="#1d2330">'
           'Sunset</text></svg>')
ANSWER = f"Here is the drawing:\n```svg\n{DRAWING}\n```"


class SvgKind(PageKind):
    name = "svg"
    title = "Svg"
    entry = "drawing.svg"
    default_tasks = [TASK]
    asking = replace(PAGE_ASKING, system_prompt="You are an illustrator. Answer with one SVG document in a ```svg block.",
                     workspace_brief="an SVG drawing: the entry file is drawing.svg")
    scoring = Scoring(judges=PAGE_JUDGE, channel_classes=(StaticChannel,))

    def extract(self, text: str | bytes) -> Artifact:
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        found = SVG_BLOCK.search(text)
        if found is None:
            return Artifact(kind=ArtifactKind.UNSUPPORTED, reason="no <svg> document", source_bytes=len(text))
        return Artifact(kind=ArtifactKind.HTML, code=found.group(0), source_bytes=len(text))

    def as_page(self, code: str) -> str:
        return f"<!doctype html><html><body style='margin:0'>{code}</body></html>"


SVG = register_kind(SvgKind())


class SvgPolicy:
    name = "svg-test"

    async def generate(self, task: Task) -> str:
        return ANSWER


register_policy("svg-test")(lambda _: SvgPolicy())


def test_registering_a_kind_registers_its_env_ids_once():
    assert {"AesSvg-v0", "AesSvgRefine-v0"} <= set(env_ids())
    assert gym.spec("AesSvg-v0").kwargs == {"kind": "svg"}
    assert register_kind(SVG) is SVG  # the same object again: a no-op
    with pytest.raises(ValueError, match="svg"):
        register_kind(SvgKind())  # a different object under a taken name
    assert KINDS["svg"] is SVG


async def test_the_pipeline_scores_the_new_kind(pipeline):
    scored = await pipeline.score(TASK, ANSWER)
    static = scored.record.channels["static"]
    assert static.status is ChannelStatus.OK and static.raw > 0
    assert set(scored.record.channels) == {"static"}  # the kind offers only the static channel
    assert scored.rendering.metrics.text_chars >= len("Sunset") and scored.picture
    missing = await pipeline.score(TASK, "I cannot draw.")
    assert missing.record.channels["static"].status is ChannelStatus.FAILED
    assert "no HTML page: no <svg> document" in missing.record.channels["static"].payload["reason"]


def test_gym_make_single_turn_env():
    env = gym.make("AesSvg-v0", render_mode="rgb_array")
    try:
        observation, info = env.reset(seed=0)
        assert observation["prompt"] == TASK.prompt and info["task_id"] == "sunset"
        _, reward, terminated, _, info = env.step(ANSWER)
        assert terminated and info["reward_valid"] and reward > 0
        frame = env.render()
        assert frame.ndim == 3 and np.asarray(frame).std() > 0  # the drawing, not a blank frame
    finally:
        env.close()


def test_gym_make_refine_env():
    env = gym.make("AesSvgRefine-v0")
    try:
        observation, _ = env.reset(seed=0)
        assert "drawing.svg" in observation and TASK.prompt in observation
        env.step({"name": "write_file", "arguments": {"path": "drawing.svg", "content": DRAWING}})
        observation, _, _, _, info = env.step('<tool_call name="render"></tool_call>')
        assert "status: ok" in observation and "[image]" in observation and info["potential"] > 0
        _, reward, terminated, _, info = env.step({"name": "submit", "arguments": {}})
        assert terminated and info["reward_valid"] and reward > 0
        assert info["record"]["channels"]["static"]["status"] == "ok"
    finally:
        env.close()


def test_a_demo_run_and_training_rows(tmp_path):
    tasks = tmp_path / "svg.jsonl"
    tasks.write_text(TASK.model_dump_json() + "\n")
    out = tmp_path / "demo"
    assert cli.main(["demo", "--tasks", f"jsonl:{tasks}", "--policy", "svg-test", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_total"] == 1 and summary["n_infra_error"] == 0 and summary["static_total_mean"] > 0
    assert (out / "screenshots" / "sunset.png").is_file()

    counts = train_data.build(f"jsonl:{tasks}", tmp_path / "rows", multi_turn=True, val_fraction=0)
    assert counts == {"train": 1, "test": 1}
    row = pd.read_parquet(tmp_path / "rows" / "train.parquet").iloc[0]
    assert row["data_source"] == "aesenv/svg" and row["extra_info"]["env_id"] == "AesSvgRefine-v0"
    assert [m["content"] for m in row["prompt"]] == [SvgKind.asking.system_prompt, TASK.prompt]
    single = train_data.to_row(TASK, 0, multi_turn=False)
    assert single["extra_info"]["env_id"] == "AesSvg-v0"


def test_an_unregistered_kind_is_a_clear_error():
    stray = Task(id="x", kind="slides", prompt="A deck.")
    with pytest.raises(ValueError, match="'slides' tasks have no registered kind"):
        train_data.chat_prompt(stray)

