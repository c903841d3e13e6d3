"""A warm start for the smoke's tiny models, so that a group's rollouts differ in what the reward pays.

A random tiny model writes noise, and noise scores alike: every page of a group fails AesCoder's
gate (−0.1), or scores 0 on every AesCode channel. The group's advantages are then 0, and a step
moves the weights by AdamW's weight decay alone: no reward reaches the policy. Here the model is
first taught two answers in equal measure, after each of its first training prompts: one the
shape's reward pays for and one it pays less for, differing in one thing that reward measures
(`Contrast`). Sampled at temperature 1 it writes each about half the time, so a group of n ties
only when all n pick the same (2·0.5ⁿ), and the step's policy gradient moves probability toward
the paid answer.

The pages are still rendered, linted and judged by aesenv's pipeline during training: the warm
start decides what the model tends to write, not what it earns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A short page that passes every HTMLHint rule AesCoder's gate applies (doctype, lang, charset,
# viewport, title, self-closed empty tags), with one heading to show.
_HEAD = '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" />'
_VIEWPORT = '<meta name="viewport" content="width=device-width" />'
_REST = "<title>Hello</title></head><body><h1{style}>Hello</h1></body></html>"
CLEAN_PAGE = _HEAD + _VIEWPORT + _REST.format(style="")
# The same page without its viewport tag: HTMLHint's meta-viewport-require fails, so the gate fails.
UNLINTED_PAGE = _HEAD + _REST.format(style="")
# The clean page with its heading pushed past a 1280-px artboard's right edge: AesCode's Boundary drops.
OVERFLOWING_PAGE = _HEAD + _VIEWPORT + _REST.format(style=' style="margin-left:1400px"')


def fenced(page: str) -> str:
    """A single-turn answer: the page in one html code block, as the system prompt asks."""
    return f"```html\n{page}\n```"


def written(page: str) -> str:
    """A refine-loop turn: one write_file call in the tools' text form (`aesenv.envs.tools`)."""
    return f'<tool_call name="write_file"><path>index.html</path><content>{page}</content></tool_call>'


SUBMIT = '<tool_call name="submit"></tool_call>'


@dataclass(frozen=True)
class Contrast:
    """The two answers a shape's warm start teaches, what tells them apart to the reward, and, for
    a multi-turn loop, the turn taught after either (so that no later turn replaces it)."""

    paid: str
    unpaid: str
    differs_in: str
    then: str | None = None


CONTRASTS: dict[str, Contrast] = {
    "gate": Contrast(fenced(CLEAN_PAGE), fenced(UNLINTED_PAGE),
                     "HTMLHint's meta-viewport-require: the unpaid page fails AesCoder's gate (-0.1)"),
    "boundary": Contrast(fenced(CLEAN_PAGE), fenced(OVERFLOWING_PAGE),
                         "AesCode's Boundary channel: the unpaid page's heading crosses the artboard's edge"),
    "refine_gate": Contrast(written(CLEAN_PAGE), written(UNLINTED_PAGE),
                            "the page the first turn writes passes or fails the gate the episode is scored behind",
                            then=SUBMIT),
}


def warm_start(model: Path, conversations: list[tuple[list[dict[str, Any]], str]], out: Path, contrast: Contrast, *,
               tools: list[dict[str, Any]] | None = None, steps: int = 150, lr: float = 1e-2) -> dict[str, Any]:
    """Teach `model` the (messages, answer) `conversations` (both answers of `contrast` after each
    prompt, rendered by the chat template with `tools` as the rollout renders them) and save it in
    `out`. Returns the SFT's numbers and how eight answers sampled after the first prompt fall
    (`sample_split`); a folder already warm-started is reused."""
    report_path = out / "warm_start.json"
    if report_path.exists() and (out / "config.json").exists():
        return json.loads(report_path.read_text())
    from transformers import AutoTokenizer

    from train.sft import answer_examples, train_answers

    examples = answer_examples(AutoTokenizer.from_pretrained(model), conversations, tools)
    report = train_answers(model, examples, out, lr=lr, max_steps=steps, batch=4)
    report.update(differs_in=contrast.differs_in, conversations=len(conversations),
                  sampled=sample_split(out, conversations[0][0], contrast, tools=tools))
    report_path.write_text(json.dumps(report, indent=2))
    return report


def sample_split(model: Path, prompt: list[dict[str, Any]], contrast: Contrast, *,
                 tools: list[dict[str, Any]] | None = None, samples: int = 8, seed: int = 0) -> dict[str, int]:
    """How the warm model's answers to `prompt` fall, sampled at temperature 1: the paid answer,
    the unpaid one, or anything else (a check that the groups will differ)."""
    import torch
    from transformers import AutoTokenizer

    from train.sft import model_class

    tokenizer = AutoTokenizer.from_pretrained(model)
    policy = model_class(model).from_pretrained(model, dtype=torch.float32)
    text = tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    width = len(tokenizer(max(contrast.paid, contrast.unpaid, key=len), add_special_tokens=False)["input_ids"]) + 8
    torch.manual_seed(seed)
    out = policy.generate(ids.repeat(samples, 1), do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                          max_new_tokens=width, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    texts = tokenizer.batch_decode(out[:, ids.shape[1]:], skip_special_tokens=True)
    split = {"paid": 0, "unpaid": 0, "other": 0}
    for text in texts:
        split["paid" if text.strip() == contrast.paid else "unpaid" if text.strip() == contrast.unpaid else "other"] += 1
    return split
