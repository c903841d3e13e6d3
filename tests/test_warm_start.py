"""The smoke's warm start (train.warm_start): each shape's two answers really are paid apart by that
shape's reward, as its shipped config composes it (offline judge), scored by aesenv's pipeline and,
for the refine shape, through the refine env the agent loop drives. If the gate's rules or a channel
changed so that both answers earned alike, the smoke's groups would tie again and its gradients
would be zero: this fails first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hydra import compose, initialize_config_dir

from aesenv.envs import make_core
from aesenv.envs.tools import parse_text_action
from aesenv.tasks import Task
from train.reward import close_pipelines, compute_score, pipeline_config, shared_pipeline
from train.smoke import SHAPES, build_rows
from train.warm_start import CLEAN_PAGE, CONTRASTS, UNLINTED_PAGE

CONFIG_DIR = Path(__file__).resolve().parents[1] / "train" / "config"


def reward_options(config: str) -> dict:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        composed = compose(config_name=config, overrides=["hydra.searchpath=[pkg://verl.trainer.config]"])
    options = dict(composed.reward.custom_reward_function.reward_kwargs)
    return {**options, "judge": "offline", "allow_offline_judge": True}


@pytest.fixture(scope="module", autouse=True)
async def _close_reward_pipelines():
    yield
    await close_pipelines()


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("rows")
    return {name: build_rows(shape.tasks, out / name, shape.multi_turn) for name, shape in SHAPES.items()}


def first_row(folder: Path) -> dict:
    import pandas as pd

    return pd.read_parquet(folder / "train.parquet").iloc[0].to_dict()


def test_every_shape_names_a_known_contrast():
    assert {shape.contrast for shape in SHAPES.values()} <= set(CONTRASTS)


@pytest.mark.parametrize("name", [n for n, s in SHAPES.items() if not s.multi_turn])
async def test_the_single_turn_shapes_reward_pays_the_paid_answer_more(name, rows):
    shape = SHAPES[name]
    contrast, options = CONTRASTS[shape.contrast], reward_options(shape.config)
    extra_info = dict(first_row(rows[name])["extra_info"])
    paid = await compute_score("aesenv", contrast.paid, None, extra_info, **options)
    unpaid = await compute_score("aesenv", contrast.unpaid, None, extra_info, **options)
    assert paid["aes_reward_valid"] == unpaid["aes_reward_valid"] == 1.0
    assert paid["score"] > unpaid["score"], (name, paid, unpaid)
    if shape.contrast == "gate":
        assert (paid["aes_execution"], unpaid["aes_execution"]) == (1.0, 0.0)
        assert unpaid["score"] == pytest.approx(-0.1)
    if shape.contrast == "boundary":
        assert paid["aes_boundary"] > unpaid["aes_boundary"]


@pytest.mark.parametrize("name", [n for n, s in SHAPES.items() if s.multi_turn])
async def test_the_refine_shapes_episode_pays_the_page_the_paid_turn_writes_more(name, rows):
    shape = SHAPES[name]
    contrast = CONTRASTS[shape.contrast]
    assert parse_text_action(contrast.paid) == {"name": "write_file", "arguments": {"path": "index.html", "content": CLEAN_PAGE}}
    assert parse_text_action(contrast.unpaid)["arguments"]["content"] == UNLINTED_PAGE
    assert parse_text_action(contrast.then) == {"name": "submit", "arguments": {}}
    row = first_row(rows[name])
    task = Task.model_validate(json.loads(row["extra_info"]["task"]))
    pipeline = await shared_pipeline(pipeline_config(**reward_options(shape.config)))
    rewards = []
    for turn in (contrast.paid, contrast.unpaid):
        env = make_core(row["extra_info"]["env_id"], [task], pipeline=pipeline)
        try:
            await env.reset(task=task)
            _, _, done, _, _ = await env.step(turn)
            assert not done
            _, reward, done, _, _ = await env.step(contrast.then)
            assert done
            rewards.append(reward)
        finally:
            await env.close()
    assert rewards[0] > rewards[1], rewards
