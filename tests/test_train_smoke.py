"""`make train-smoke` at its smallest: veRL's own trainer (main_ppo through train/scripts/launch.sh)
takes two optimizer steps on CPU for each shape, writes a checkpoint that reloads, and logs the
reward's `aes_*` fields. Slow (a few minutes per shape on two cores); the resumed second launch is
left to `make train-smoke`, the checkpoint is reloaded in-process here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from train.smoke import SHAPES

REPO = Path(__file__).resolve().parent.parent
# The first test builds the module's smoke run (three shapes: warm starts, then veRL's trainer), far
# past the suite's 300 s per-test limit; the fixture's own subprocess timeout bounds it.
pytestmark = pytest.mark.timeout(2400)


@pytest.fixture(scope="module")
def smoke_summary(tmp_path_factory):
    out = tmp_path_factory.mktemp("train-smoke")
    done = subprocess.run([sys.executable, "-m", "train.smoke", "--out", str(out), "--steps", "2", "--no-resume"],
                          cwd=REPO, capture_output=True, text=True, timeout=2100)
    summary = json.loads((out / "summary.json").read_text())
    assert done.returncode == 0, (summary.get("failed"), done.stdout[-3000:], done.stderr[-3000:])
    return summary


@pytest.mark.slow
def test_every_shape_takes_two_steps_through_verls_trainer_and_reloads_its_checkpoint(smoke_summary):
    from train.smoke import SHAPES

    assert set(smoke_summary["runs"]) == set(SHAPES)
    for name, run in smoke_summary["runs"].items():
        assert run["trainer_class"].startswith("verl.trainer."), (name, run["trainer_class"])
        assert run["steps"] >= 2 and len(run["per_step"]) >= 2, (name, run["steps"])
        assert run["checkpoint_reload"]["equal"] and run["checkpoint_reload"]["tensors_compared"] > 0, (name, run["checkpoint_reload"])
        assert run["checkpoint_reloaded"], name
        assert any(key.endswith("/aes_reward_valid/mean@1") for key in run["aes_metrics"]), (name, sorted(run["aes_metrics"]))


@pytest.mark.slow
def test_the_aescode_shape_trains_a_vl_policy_on_its_rows_pictures(smoke_summary):
    """AesCode's shape trains the tiny Qwen2-VL: its rows' references reach the rollout as
    pictures (each bounded at smoke size), in both steps (the rows in file order)."""
    from train.smoke import SHAPES

    assert SHAPES["gdpo_aescode"].model == "vl"
    run = smoke_summary["runs"]["gdpo_aescode"]
    assert run["image_tokens_per_row"] and all(4 <= n <= 64 for n in run["image_tokens_per_row"]), run["image_tokens_per_row"]
    # two steps x two prompts x four rollouts; the first prompt is text-only
    assert run["pictured_rollouts"] >= 4, run["pictured_rollouts"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_changes_the_policy_by_its_reward(smoke_summary, name):
    """The warm-started model (train.warm_start) samples answers its shape's reward pays apart, so
    some group's rewards differ, its advantages are not zero and the step has a policy gradient:
    the weights move by more than AdamW's weight decay."""
    run = smoke_summary["runs"][name]
    sampled = run["warm_start"]["sampled"]
    assert sampled["paid"] > 0 and sampled["unpaid"] + sampled["other"] > 0, (name, sampled)
    assert any(s["score_min"] < s["score_max"] for s in run["per_step"]), (name, run["per_step"])
    assert run["policy_gradient"], (name, run["per_step"])
    assert run["param_change_norm"] > 0, (name, run["param_change_norm"])


def test_run_shape_refuses_an_unknown_shape(tmp_path):
    from train.smoke import run_shape

    with pytest.raises(ValueError, match="unknown shape"):
        run_shape("no_such_shape", tmp_path)
    with pytest.raises(ValueError, match="steps"):
        run_shape("grpo_ar_single_turn", tmp_path, steps=0)


def test_a_shape_with_few_rows_trains_on_them_in_file_order_for_every_step():
    """The refine shape's warm start teaches its first rows only, so its run must draw those rows
    and pass over them often enough for every step (veRL ends at its last epoch)."""
    from train.smoke import row_overrides

    shape = SHAPES["grpo_webcoder_project"]
    assert shape.rows and shape.multi_turn
    overrides = row_overrides(shape, steps=2, batch=2)
    assert "data.shuffle=false" in overrides and f"data.train_max_samples={shape.rows}" in overrides
    epochs = int(next(o for o in overrides if o.startswith("trainer.total_epochs=")).split("=")[1])
    assert epochs * (shape.rows // 2) >= 3  # two steps and the resumed third
    assert row_overrides(SHAPES["grpo_ar_single_turn"], steps=2, batch=2) == []
    with pytest.raises(ValueError, match="cannot fill a batch"):
        row_overrides(shape, steps=2, batch=shape.rows + 1)
