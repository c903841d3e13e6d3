"""veRL's own trainer taking real optimizer steps on CPU, once per training shape we ship.

    python -m train.smoke --out runs/train-smoke                 # every shape, 2 steps each
    python -m train.smoke --out DIR --shape grpo_ar_single_turn --steps 20

Each shape goes through `train/scripts/launch.sh` and its shipped config (so `verl.trainer.main_ppo`
composes exactly what a GPU launch composes), with overrides that only shrink it and move it to
the host: a tiny Qwen2 built locally (no downloads), `VERL_PLATFORM=cpu` and the `aes_hf` rollout
(train.cpu_platform, train.cpu_rollout), FSDP2 over gloo, small batches and lengths, the offline
judge (`allow_offline_judge`), a checkpoint at the last step and a validation pass there (veRL
logs the reward's `aes_*` fields as validation metrics, not as training ones).

After the run the checkpoint is reloaded twice: veRL's FSDP shard (`model_world_size_1_rank_0.pt`)
must equal the HF weights veRL exported beside it, and, unless `resume=False`, a second launch
resumes from the checkpoint and takes one more step (veRL's own loader). `DIR/summary.json` holds,
per shape: the trainer class, the steps taken, ‖θ_after − θ_before‖, wall time and the last step's
metrics. `run_shape` is the reusable part (a learning run calls it with more steps).

On CPU the actor trains without the reference model (`use_kl_loss=false`): veRL's FSDP2 reference
worker pins host memory for its offload (`CPUOffloadPolicy(pin_memory=True)`), which needs an
accelerator, and its FSDP1 path refuses host parameters with `sync_module_states`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LAUNCH = REPO / "train" / "scripts" / "launch.sh"


@dataclass(frozen=True)
class Shape:
    """One training shape: its shipped config, the task rows it trains on, and its own overrides."""

    config: str
    tasks: str
    multi_turn: bool = False
    overrides: tuple[str, ...] = ()
    agent_loop: str | None = None  # a shipped agent-loop file (train/config/agent_loops/NAME.yaml)
    response_length: int = 32
    prompt_length: int = 512
    model: str = "text"  # the tiny policy (train.tiny_models): "text" (Qwen2) or "vl" (Qwen2-VL, for rows with pictures)
    contrast: str = "gate"  # what the warm start teaches it to vary in (train.warm_start.CONTRASTS)
    # Train on the first `rows` rows only, in file order (veRL's data.train_max_samples), the rows
    # the warm start teaches on. A 2-layer model taught on ~3,000-token prompts does not carry the
    # lesson to a prompt it was not taught: on another task it writes fragments of the taught turn
    # in no order (measured: the refine shape's rollouts on untaught tasks all failed to parse).
    rows: int | None = None


SHAPES: dict[str, Shape] = {
    # AesCoder's GRPO-AR behind the execution gate (Eq. 1).
    "grpo_ar_single_turn": Shape(config="grpo_ar_single_turn", tasks="builtin:web", response_length=128),
    # The refine agent loop with WebCoder's context management and segment credit (aes_segment_grpo,
    # v1 trainer) on web refine episodes; its agent-loop file is shrunk to the smoke's lengths.
    "grpo_webcoder_project": Shape(config="grpo_webcoder_project", tasks="builtin:web", multi_turn=True,
                                   agent_loop="webcoder_project", response_length=320, prompt_length=3072,
                                   contrast="refine_gate", rows=2),
    # AesCode's GDPO over its channels (legacy trainer: veRL hands channel values only to "gdpo"
    # there), on its rows with their reference pictures: the tiny Qwen2-VL reads each one as at
    # most 64 image tokens (train.tiny_models.SMOKE_VL_PIXELS). The rows in file order, whose first
    # four are one text-only and three pictured: both steps train on pictures, the first on a mix.
    "gdpo_aescode": Shape(config="gdpo_aescode", tasks="builtin:aescode", prompt_length=1152, response_length=160,
                          model="vl", contrast="boundary", overrides=("data.shuffle=false",)),
}

# The agent loop's lengths at smoke size (the loop's own keys; see train/config/agent_loops/).
# The window and threshold count the context's prompt too: the env's first turn (its system prompt
# lists the tools) is about 2,900 tokens of the tiny tokenizer, so a threshold below that would ask
# for a handover note after every turn. At these sizes an episode (write, then submit) stays in one
# context; compaction and multi-context segment credit are exercised with the same loop by
# tests/test_train_verl.py::test_a_compacting_rollout_returns_samples_that_train_each_turn_once.
SMOKE_AGENT_LOOP = {"max_samples": 2, "sample_cap": None, "rollout_window": 4096,
                    "budget": {"max_turns": 3, "max_wall_s": 600, "run_timeout_s": 30},
                    "context": {"compact_at_tokens": 3584, "keep_recent_turns": 1, "fold_after": 2, "summary_words": 20}}


def shrunk_agent_loop(name: str, out: Path) -> Path:
    """A copy of a shipped agent-loop file with only its lengths and budgets set to the smoke's."""
    import yaml

    entries = yaml.safe_load((REPO / "train" / "config" / "agent_loops" / f"{name}.yaml").read_text())
    for entry in entries:
        for key, value in SMOKE_AGENT_LOOP.items():
            if key in entry:
                entry[key] = {**entry[key], **value} if isinstance(value, dict) else value
    out.write_text(yaml.safe_dump(entries))
    return out


def cpu_overrides(run_dir: Path, steps: int, *, group: int, batch: int, response_length: int,
                  prompt_length: int) -> list[str]:
    """What moves a shipped config onto this host and shrinks it; nothing about the algorithm."""
    return [
        "trainer.device=cpu",
        "actor_rollout_ref.rollout.name=aes_hf",
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.ref.strategy=fsdp2",
        "actor_rollout_ref.actor.use_kl_loss=false",  # no reference worker on CPU: module docstring
        "actor_rollout_ref.model.use_remove_padding=false",  # flash-attn's unpadding: GPU only
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        "actor_rollout_ref.model.enable_gradient_checkpointing=false",
        # fp32 parameters on the host (a config's bf16 would also round a small step away to nothing)
        "actor_rollout_ref.actor.fsdp_config.dtype=float32",
        f"data.train_batch_size={batch}",
        f"data.val_batch_size={batch}",
        f"data.max_prompt_length={prompt_length}",
        f"data.max_response_length={response_length}",
        "data.dataloader_num_workers=0",
        f"actor_rollout_ref.rollout.n={group}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={batch * group}",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={batch * group}",
        f"actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={batch * group}",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]",
        "reward.num_workers=1",
        "reward.custom_reward_function.reward_kwargs.judge=offline",
        "reward.custom_reward_function.reward_kwargs.allow_offline_judge=true",
        f"trainer.total_training_steps={steps}",
        f"trainer.save_freq={steps}",
        f"trainer.test_freq={steps}",
        "trainer.val_before_train=false",
        "trainer.logger=[console,file]",
        f"trainer.default_local_dir={run_dir / 'checkpoints'}",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
        "+ray_kwargs.ray_init.num_gpus=1",  # one logical slot for the one trainer rank (train.cpu_platform)
        "ray_kwargs.ray_init.num_cpus=8",
    ]


def row_overrides(shape: Shape, steps: int, batch: int) -> list[str]:
    """For a shape that trains on its first `rows` rows only: those rows in file order, and enough
    passes over them for every step, the resumed one included (veRL stops at the last epoch even
    when it has not reached `total_training_steps`)."""
    if not shape.rows:
        return []
    if shape.rows < batch:
        raise ValueError(f"{shape.config}: {shape.rows} rows cannot fill a batch of {batch}")
    epochs = math.ceil((steps + 1) * batch / shape.rows)
    return ["data.shuffle=false", f"data.train_max_samples={shape.rows}", f"trainer.total_epochs={epochs}"]


def build_tiny_model(path: Path, kind: str = "text") -> Path:
    """A tiny policy of `kind` (train.tiny_models: "text" a Qwen2, "vl" a Qwen2-VL), built here once."""
    if (path / "config.json").exists():
        return path
    from train import tiny_models

    builders = {"text": tiny_models.build_text, "vl": tiny_models.build_vl}
    if kind not in builders:
        raise ValueError(f"unknown tiny model {kind!r}; models: {sorted(builders)}")
    path.mkdir(parents=True, exist_ok=True)
    builders[kind](path)
    return path


def warm_conversations(shape: Shape, contrast: Any, data: Path, count: int
                       ) -> tuple[list[tuple[list[dict[str, Any]], str]], list[dict] | None]:
    """What the warm start teaches, as (messages, answer) pairs rendered as the policy sees them at
    rollout, and the tools passed with them. A single-turn shape: both answers after each of the
    first `count` rows' prompts. The refine loop: both first turns after the env's own first turn
    (its system prompt, the task, its tools, as `train.agent_loop` builds them), then what the loop
    asks next: after the env's answer to it, `contrast.then` (submit). A later turn that wrote
    another page would replace the one the contrast is about."""
    import asyncio

    import pandas as pd

    rows = pd.read_parquet(data / "train.parquet").to_dict("records")[:count]
    answers = (contrast.paid, contrast.unpaid)
    if not shape.multi_turn:
        return [(list(row["prompt"]), answer) for row in rows for answer in answers], None
    from aesenv.envs import make_core
    from aesenv.tasks import Task
    from train.agent_loop import for_policy

    async def episodes() -> tuple[list[tuple[list[dict[str, Any]], str]], list[dict] | None]:
        conversations: list[tuple[list[dict[str, Any]], str]] = []
        tools = None
        for row in rows:
            task = Task.model_validate(json.loads(row["extra_info"]["task"]))
            for answer in answers:
                env = make_core(row["extra_info"]["env_id"], [task])
                try:
                    messages, _ = await env.reset(task=task)
                    tools = list(env.tools)
                    prompt = [for_policy(m, False)[0] for m in messages]
                    observation, *_ = await env.step(answer)
                finally:
                    await env.close()
                after = [*prompt, {"role": "assistant", "content": answer}, *(for_policy(m, False)[0] for m in observation)]
                conversations += [(prompt, answer), (after, contrast.then)]
        return conversations, tools

    return asyncio.run(episodes())


def warm_model(shape: Shape, model: Path, data: Path, out: Path) -> tuple[Path, dict[str, Any]]:
    """The tiny model taught the shape's two answers (train.warm_start) after its first training
    prompts, once per contrast and model."""
    from train.warm_start import CONTRASTS, warm_start

    contrast = CONTRASTS[shape.contrast]
    folder = out / f"warm_{model.name}_{shape.contrast}"
    conversations, tools = warm_conversations(shape, contrast, data, shape.rows or 12)
    return folder, warm_start(model, conversations, folder, contrast, tools=tools)


def build_rows(tasks: str, out: Path, multi_turn: bool) -> Path:
    if (out / "train.parquet").exists():
        return out
    command = [sys.executable, "-m", "train.data", "--tasks", tasks, "--out", str(out)]
    if multi_turn:
        command.append("--multi-turn")
    subprocess.run(command, check=True, cwd=REPO, env=_env(), stdout=subprocess.DEVNULL)
    return out


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["VERL_PLATFORM"] = "cpu"
    env["PYTHON"] = sys.executable
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.update(extra or {})
    return env


def launch(shape: Shape, model: Path, data: Path, run_dir: Path, overrides: list[str], log_name: str,
           timeout_s: float) -> list[dict[str, Any]]:
    """One `launch.sh` run; returns the metrics veRL's file logger wrote, one dict per step."""
    metrics_path = run_dir / f"{log_name}.metrics.jsonl"
    metrics_path.unlink(missing_ok=True)
    log_path = run_dir / f"{log_name}.log"
    command = ["bash", str(LAUNCH), shape.config, str(model), str(data), "1", *overrides]
    with log_path.open("w") as log:
        done = subprocess.run(command, cwd=REPO, env=_env({"VERL_FILE_LOGGER_PATH": str(metrics_path)}),
                              stdout=log, stderr=subprocess.STDOUT, timeout=timeout_s)
    if done.returncode != 0:
        tail = log_path.read_text(errors="replace").splitlines()[-40:]
        raise RuntimeError(f"{shape.config}: main_ppo exited {done.returncode}; log {log_path}:\n" + "\n".join(tail))
    if not metrics_path.exists():
        raise RuntimeError(f"{shape.config}: veRL wrote no metrics ({metrics_path}); log {log_path}")
    return [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]


def _load_hf_weights(folder: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise RuntimeError(f"no HF weights in {folder}")
    weights: dict[str, Any] = {}
    for file in files:
        weights.update(load_file(str(file)))
    return weights


def _change_norm(before: dict[str, Any], after: dict[str, Any]) -> float:
    import torch

    shared = sorted(set(before) & set(after))
    if not shared:
        raise RuntimeError("the trained and the initial weights share no parameter names")
    total = sum(float((after[n].float() - before[n].float()).pow(2).sum()) for n in shared)
    return math.sqrt(total) if torch.isfinite(torch.tensor(total)) else math.nan


def _loaded_state(folder: Path) -> dict[str, Any]:
    """The weights of an HF folder under the model's own parameter names, as transformers loads it."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    vision = getattr(AutoConfig.from_pretrained(folder), "vision_config", None) is not None
    model = (AutoModelForImageTextToText if vision else AutoModelForCausalLM).from_pretrained(folder, dtype="auto")
    return dict(model.state_dict())


def _fsdp_shard_matches_export(actor_dir: Path, exported: dict[str, Any]) -> dict[str, Any]:
    """Reload veRL's FSDP model shard and compare it with the HF weights exported from the same
    trained model: the checkpoint a resume would load holds the weights that were trained."""
    import torch

    shard = torch.load(actor_dir / "model_world_size_1_rank_0.pt", map_location="cpu", weights_only=False)
    tensors = {name: (t.full_tensor() if hasattr(t, "full_tensor") else t) for name, t in shard.items()}
    if not set(tensors) & set(exported):  # transformers saves some models (Qwen2-VL) under older names
        exported = _loaded_state(actor_dir / "huggingface")
    compared = [n for n in exported if n in tensors]
    mismatched = [n for n in compared if not torch.equal(tensors[n].to(exported[n].dtype), exported[n])]
    return {"tensors_compared": len(compared), "mismatched": mismatched[:5],
            "equal": bool(compared) and not mismatched}


def run_shape(name: str, out: Path, *, steps: int = 2, group: int = 4, batch: int = 2, response_length: int | None = None,
              prompt_length: int | None = None, resume: bool = True, overrides: tuple[str, ...] = (),
              timeout_s: float = 900) -> dict[str, Any]:
    """Train one shape for `steps` optimizer steps through veRL's main_ppo and return its summary."""
    if name not in SHAPES:
        raise ValueError(f"unknown shape {name!r}; shapes: {sorted(SHAPES)}")
    if steps < 1:
        raise ValueError("steps must be at least 1")
    shape = SHAPES[name]
    response_length = response_length or shape.response_length
    prompt_length = prompt_length or shape.prompt_length
    run_dir = (out / name).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    data = build_rows(shape.tasks, out.resolve() / ("rows_multi_turn" if shape.multi_turn else "rows") / shape.tasks.replace(":", "_"),
                      shape.multi_turn)
    tiny = build_tiny_model(out.resolve() / ("tiny_model" if shape.model == "text" else f"tiny_model_{shape.model}"),
                            shape.model)
    model, warm = warm_model(shape, tiny, data, out.resolve())
    base = cpu_overrides(run_dir, steps, group=group, batch=batch, response_length=response_length,
                         prompt_length=prompt_length) + list(shape.overrides) + list(overrides)
    base += row_overrides(shape, steps, batch)
    if shape.agent_loop:
        loops = shrunk_agent_loop(shape.agent_loop, run_dir / "agent_loops.yaml")
        base += [f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops}",
                 f"actor_rollout_ref.rollout.max_model_len={prompt_length + response_length}"]
    # a fresh run: an earlier run's checkpoints would be read below as this one's
    shutil.rmtree(run_dir / "checkpoints", ignore_errors=True)
    started = time.monotonic()
    logged = launch(shape, model, data, run_dir, base + ["trainer.resume_mode=disable"], "train", timeout_s)
    wall_s = time.monotonic() - started
    train_steps = [row for row in logged if any(k.startswith("actor/") for k in row.get("data", {}))]
    if len(train_steps) != steps:
        raise RuntimeError(f"{name}: veRL took {len(train_steps)} optimizer step(s), not {steps} "
                           f"(too few batches in the data?); log {run_dir / 'train.log'}")
    last = logged[-1]["data"] if logged else {}
    for row in logged:  # the validation pass logs at the last step, in its own record
        if row.get("step") == logged[-1].get("step"):
            last = {**last, **row["data"]}

    actor_dir = run_dir / "checkpoints" / f"global_step_{steps}" / "actor"
    exported = _load_hf_weights(actor_dir / "huggingface")
    summary: dict[str, Any] = {
        "shape": name, "config": shape.config, "trainer_class": _trainer_class(run_dir / "train.log", shape),
        "steps": len(train_steps), "wall_s": round(wall_s, 1),
        "param_change_norm": _change_norm(_load_hf_weights(model), exported),
        "warm_start": warm,
        "checkpoint": str(actor_dir), "checkpoint_reload": _fsdp_shard_matches_export(actor_dir, exported),
        # Whether the change came from the policy gradient: a group whose rewards all tie has zero
        # advantage, and a step with no varied group moves the weights by AdamW's weight decay alone
        # (why the model is warm-started: train.warm_start).
        "per_step": [{"step": row["step"], "grad_norm": row["data"].get("actor/grad_norm"),
                      "score_min": row["data"].get("critic/score/min"), "score_max": row["data"].get("critic/score/max")}
                     for row in train_steps],
        "aes_metrics": {k: v for k, v in last.items() if "aes_" in k},
        "last_step_metrics": last,
    }
    if shape.model == "vl":
        from train.cpu_rollout import PICTURED_REQUEST
        from train.tiny_models import image_tokens_per_row

        summary["image_tokens_per_row"] = image_tokens_per_row(model, data / "train.parquet")
        summary["pictured_rollouts"] = (run_dir / "train.log").read_text(errors="replace").count(PICTURED_REQUEST)
    if resume:
        started = time.monotonic()
        resumed = launch(shape, model, data, run_dir,
                         base + [f"trainer.total_training_steps={steps + 1}", "trainer.resume_mode=auto",
                                 f"trainer.save_freq={steps + 1}", f"trainer.test_freq={steps + 1}"],
                         "resume", timeout_s)
        resumed_steps = sorted({row["step"] for row in resumed if any(k.startswith("actor/") for k in row["data"])})
        summary["resume"] = {"steps_logged": resumed_steps, "resumed_from": steps,
                             "ok": resumed_steps == [steps + 1], "wall_s": round(time.monotonic() - started, 1)}
    summary["policy_gradient"] = any((row["grad_norm"] or 0) > 0 for row in summary["per_step"])
    summary["checkpoint_reloaded"] = summary["checkpoint_reload"]["equal"] and summary.get("resume", {}).get("ok", True)
    return summary


def _trainer_class(log: Path, shape: Shape) -> str:
    """The trainer class veRL ran, from its log: the v1 task runner and the trainer mode it printed
    in the composed config, or the legacy task runner (RayPPOTrainer)."""
    import re

    text = log.read_text(errors="replace")
    if "TaskRunnerV1" in text:
        mode = re.search(r"'trainer_mode': '(\w+)'", text)
        from verl.trainer.ppo.v1 import get_trainer_cls

        trainer = get_trainer_cls(mode.group(1) if mode else "sync")
        return f"{trainer.__module__}.{trainer.__qualname__}"
    if "TaskRunner pid" in text:
        return "verl.trainer.ppo.ray_trainer.RayPPOTrainer"
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.smoke", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="default: every shape")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--no-resume", action="store_true", help="skip the second launch that resumes the checkpoint")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"runs": {}, "failed": {}}
    for name in args.shape or list(SHAPES):
        try:
            summary["runs"][name] = run_shape(name, args.out, steps=args.steps, resume=not args.no_resume)
        except Exception as error:  # each shape reports on its own; the exit code says whether any failed
            summary["failed"][name] = f"{type(error).__name__}: {error}"
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps({name: {k: run[k] for k in ("steps", "param_change_norm", "policy_gradient", "wall_s", "checkpoint_reloaded")}
                      for name, run in summary["runs"].items()} | {"failed": list(summary["failed"])}, indent=2))
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
