"""The toy learning check's own parts: its model folder loads as built, and its verdict reads the
rollouts veRL dumps without being able to call a flat curve a learning one."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from train.toy import StepRewards, build_model, read_rollouts, verdict  # noqa: E402

PAGE = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Crumb &amp; Co</title>"
        "<style>body{font-family:system-ui;margin:0}header{padding:24px}</style></head>"
        "<body><header><h1>Crumb &amp; Co</h1></header><main><p>Bread and pastries.</p></main></body></html>")


def test_the_model_folder_loads_with_the_tokenizer_it_was_built_with(tmp_path: Path) -> None:
    """veRL and the trainers load the folder through AutoTokenizer: a class that re-splits words
    would silently make every page many times longer than the tokenizer we fitted."""
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    build_model(tmp_path, [PAGE] * 50, vocab_size=600, hidden=64, layers=1)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    fitted = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ids = loaded(PAGE, add_special_tokens=False)["input_ids"]
    assert ids == fitted.encode(PAGE).ids
    assert len(ids) < len(PAGE) / 8            # merges span words: the page is a few tokens
    assert loaded.decode(ids) == PAGE
    chat = loaded.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False)
    assert chat.endswith("<|im_start|>assistant\n")
    model = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert model.config.vocab_size == len(loaded)


def _dump(folder: Path, step: int, groups: dict[str, list[float]], execution: float = 1.0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"input": prompt, "output": "x" * 10, "score": s, "step": step, "aes_execution": execution}
             for prompt, scores in groups.items() for s in scores]
    (folder / f"{step}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_rollouts_are_read_per_step_in_step_order(tmp_path: Path) -> None:
    for step in (10, 2, 1):
        _dump(tmp_path, step, {"a": [0.0, 1.0], "b": [0.5, 0.5]}, execution=0.0 if step == 2 else 1.0)
    curve = read_rollouts(tmp_path)
    assert [s.step for s in curve] == [1, 2, 10]
    assert curve[0].n == 4 and curve[0].mean == pytest.approx(0.5)
    assert curve[0].within_group_std == pytest.approx(0.25)   # group a spreads 0.5, group b not at all
    assert curve[1].gate_failures == 1.0 and curve[0].gate_failures == 0.0


def _flat(step: int, mean: float, std: float = 0.2, n: int = 16) -> StepRewards:
    return StepRewards(step=step, n=n, mean=mean, std=std, gate_failures=0.0, mean_length=100.0, within_group_std=std)


def test_a_rise_beyond_the_standard_error_learns_and_noise_does_not() -> None:
    rising = [_flat(i, 0.3 + 0.05 * i) for i in range(1, 9)]
    result = verdict(rising, 3)
    assert result["learns"] and result["difference"] > result["standard_error"]
    wobbling = [_flat(i, 0.5 + (0.01 if i % 2 else -0.01)) for i in range(1, 9)]
    assert not verdict(wobbling, 3)["learns"]
    falling = list(reversed([_flat(9 - i, 0.3 + 0.05 * i) for i in range(1, 9)]))
    assert not verdict(falling, 3)["learns"]
    assert math.isfinite(verdict(wobbling, 3)["standard_error"])


def test_too_short_a_curve_is_an_error_not_a_verdict() -> None:
    with pytest.raises(ValueError, match="need at least 6"):
        verdict([_flat(i, 0.5) for i in range(4)], 3)


def test_the_grpo_prompts_are_one_fixed_task_per_category(tmp_path: Path) -> None:
    from aesenv.tasks import load_tasks
    from train.toy import fixed_prompts

    spec = fixed_prompts("builtin:web", 1, tmp_path / "tasks.jsonl")
    chosen = load_tasks(spec)
    every = load_tasks("builtin:web")
    assert len(chosen) == len({t.category for t in every})
    assert len({t.category for t in chosen}) == len(chosen)
    assert [t.id for t in chosen] == [t.id for t in every if t.id in {c.id for c in chosen}]  # first of each, in order
    assert len(load_tasks(fixed_prompts("builtin:web", 2, tmp_path / "two.jsonl"))) == 2 * len(chosen)
