"""`HFPolicy`: a local transformers causal LM as a policy (text only, for small checkpoints).

Optional: `pip install 'aesenv[hf]'` (transformers; torch is the user's choice of build). It
speaks the text form of the refine tools (no native tool calls), and images in observations are
replaced by a note. Generation is greedy and runs in a worker thread so the event loop (and the
renderer) keep going. The model loads from a local directory or the user's HF cache; aesenv
never downloads weights itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aesenv.kinds import kind_of
from aesenv.tasks import Task
from policies.base import register_policy
from policies.openai_chat import without_images


@register_policy("hf")
class HFPolicy:
    """`hf:<model directory or name>`."""

    def __init__(self, model: str = "", *, max_new_tokens: int = 2048, device: str = "cpu",
                 max_prompt_tokens: int = 8192) -> None:
        if not model:
            raise ValueError("the hf policy needs a model: hf:<path or name>")
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise ImportError("the hf policy needs transformers: pip install 'aesenv[hf]'") from None
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model).to(device).eval()
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.max_prompt_tokens = max_prompt_tokens
        self.name = f"hf:{model}"

    async def generate(self, task: Task) -> str:
        reply = await self.act([{"role": "user", "content": kind_of(task).request(task)}])
        return reply["content"]

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        text = await asyncio.to_thread(self._complete, _as_chat(messages))
        return {"role": "assistant", "content": text}

    def _prompt(self, messages: list[dict[str, str]]) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "

    def _complete(self, messages: list[dict[str, str]]) -> str:
        import torch

        ids = self.tokenizer(self._prompt(messages), return_tensors="pt").input_ids[:, -self.max_prompt_tokens:]
        with torch.no_grad():
            out = self.model.generate(ids.to(self.device), max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id)
        return self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)


def _as_chat(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Plain role/content strings; tool results (native calls) read as user turns."""
    return [{"role": "user" if m["role"] == "tool" else m["role"], "content": m.get("content") or ""}
            for m in without_images(messages)]
