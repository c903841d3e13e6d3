"""Answer-only supervised fine-tuning of a small local model on CPU (the toy's Stage I, the smoke's
warm start). veRL's SFT trainer is the GPU path (`train/scripts/sft_stage1.sh`); here transformers'
`Trainer` runs it, because TRL's SFTTrainer computes its loss with a chunked kernel that costs this
CPU six times the step."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Iterable


def answer_examples(tokenizer: Any, conversations: Iterable[tuple[list[dict[str, Any]], str]],
                    tools: list[dict[str, Any]] | None = None) -> list[dict[str, list[int]]]:
    """Token ids of each (prompt messages, answer) pair, as the policy sees them at rollout (the
    chat template, the generation prompt, `tools` where the loop passes them), labels on the
    answer and its end-of-turn token only."""
    examples = []
    for messages, answer in conversations:
        prompt = tokenizer.apply_chat_template(list(messages), tools=tools, add_generation_prompt=True, tokenize=False)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        answer_ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        examples.append({"input_ids": prompt_ids + answer_ids, "labels": [-100] * len(prompt_ids) + answer_ids})
    return examples


def model_class(folder: Path) -> Any:
    """The transformers class that trains the model in `folder`: a vision-language model (a config
    with a `vision_config`) learns its text answers through its image-text class."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    config = AutoConfig.from_pretrained(folder)
    return AutoModelForImageTextToText if getattr(config, "vision_config", None) is not None else AutoModelForCausalLM


def train_answers(model: Path, examples: list[dict[str, list[int]]], out: Path, *, lr: float,
                  epochs: float = 1, max_steps: int = -1, batch: int = 2, schedule: str = "cosine",
                  seed: int = 0) -> dict[str, Any]:
    """Fine-tune `model` on `examples` (from `answer_examples`) and save it in `out`, beside copies
    of the folder's other files (tokenizer, chat template, a VL model's processor). Returns steps,
    first and last logged loss, and seconds."""
    import shutil

    import torch
    from transformers import AutoTokenizer, Trainer, TrainingArguments

    tokenizer = AutoTokenizer.from_pretrained(model)
    pad = tokenizer.pad_token_id

    def collate(batch_rows: list[dict[str, list[int]]]) -> dict[str, torch.Tensor]:
        width = max(len(x["input_ids"]) for x in batch_rows)
        return {"input_ids": torch.tensor([x["input_ids"] + [pad] * (width - len(x["input_ids"])) for x in batch_rows]),
                "labels": torch.tensor([x["labels"] + [-100] * (width - len(x["labels"])) for x in batch_rows]),
                "attention_mask": torch.tensor([[1] * len(x["input_ids"]) + [0] * (width - len(x["input_ids"]))
                                                for x in batch_rows])}

    args = TrainingArguments(output_dir=str(out / "trainer"), num_train_epochs=epochs, max_steps=max_steps,
                             learning_rate=lr, per_device_train_batch_size=batch, lr_scheduler_type=schedule,
                             warmup_steps=0.1, logging_steps=10, save_strategy="no", report_to=[], use_cpu=True,
                             seed=seed, dataloader_num_workers=0, remove_unused_columns=False, disable_tqdm=True)
    trained = model_class(model).from_pretrained(model, dtype=torch.float32)
    trainer = Trainer(model=trained, args=args, train_dataset=examples, data_collator=collate)
    result = trainer.train()
    out.mkdir(parents=True, exist_ok=True)
    for file in model.iterdir():  # tokenizer, chat template, a VL model's processor: as they were saved
        if file.is_file() and "safetensors" not in file.name and file.name not in ("config.json", "generation_config.json"):
            shutil.copy(file, out / file.name)
    trainer.save_model(str(out))
    shutil.rmtree(out / "trainer", ignore_errors=True)
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    return {"steps": result.global_step, "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None, "seconds": result.metrics.get("train_runtime"),
            "answer_tokens_mean": statistics.fmean(sum(t != -100 for t in x["labels"]) for x in examples)}
