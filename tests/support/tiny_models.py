"""Tiny random-weight models for a real vLLM server in the tests, built locally (no downloads).

Run with the vLLM venv's Python (`python tiny_models.py DIR`): it always has torch, transformers
and tokenizers, and the files are then written by the transformers vLLM loads them with.

A 2-layer Qwen2 (head_dim 64, which vLLM's CPU attention supports) with a byte-level BPE
tokenizer and a ChatML template that renders `tools` and `tool` messages, the shape vLLM's `hermes`
tool-call parser expects; `<tool_call>` and `</tool_call>` are single tokens because that parser
looks them up in the vocabulary and refuses to start without them.

No vision-language model: vLLM's Qwen2-VL imports transformers' torchvision image processor, and
the only torchvision here is PyPI's CUDA build, which does not load against the CPU torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TAGS = ["<tool_call>", "</tool_call>"]

CHATML_WITH_TOOLS = (
    "{% macro text(content) %}"
    "{% if content is string %}{{ content }}"
    "{% elif content %}{% for p in content %}"
    "{% if p['type'] == 'text' %}{{ p['text'] }}"
    "{% endif %}{% endfor %}{% endif %}"
    "{% endmacro %}"
    "{% if tools %}<|im_start|>system\n"
    "{% if messages and messages[0]['role'] == 'system' %}{{ text(messages[0]['content']) }}\n\n{% endif %}"
    "Tools you may call:\n<tools>\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}</tools>\n"
    "To call one, answer <tool_call>{\"name\": NAME, \"arguments\": {...}}</tool_call><|im_end|>\n"
    "{% endif %}"
    "{% for m in messages %}"
    "{% if not (tools and loop.first and m['role'] == 'system') %}"
    "<|im_start|>{{ m['role'] }}\n{{ text(m['content']) }}"
    "{% for call in m.get('tool_calls') or [] %}"
    "{% set args = call['function']['arguments'] %}"
    "<tool_call>{\"name\": {{ call['function']['name'] | tojson }}, \"arguments\": "
    "{% if args is string %}{{ args }}{% else %}{{ args | tojson }}{% endif %}}</tool_call>"
    "{% endfor %}"
    "<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CORPUS = ["<html><body><h1>Hello</h1></body></html> system user assistant tool write_file render submit "
          "view_file edit_file index.html the page rendered screenshot {\"name\": \"render\", \"arguments\": {}}",
          "import matplotlib.pyplot as plt", "{\"score\": 7, \"reason\": \"clear layout\"}"] * 20


def tokenizer(chat_template: str = CHATML_WITH_TOOLS):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TAGS])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None)
    fast.chat_template = chat_template
    return fast


def build_text(path: Path, chat_template: str = CHATML_WITH_TOOLS) -> None:
    """The tiny model and its tokenizer in `path` (`chat_template`: e.g. TRL's own Qwen2.5 template,
    whose tool calls TRL knows how to parse)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    fast = tokenizer(chat_template)
    fast.save_pretrained(path)
    config = Qwen2Config(vocab_size=len(fast), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=64, max_position_embeddings=8192,
                         eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id, tie_word_embeddings=True)
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).to(torch.bfloat16).save_pretrained(path)


if __name__ == "__main__":
    build_text(Path(sys.argv[1]))


VL_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
# Qwen2-VL's way of placing a picture in the chat text: the processor widens the pad to the
# picture's token count (one per 28x28 block after resizing, for patch 14 and merge 2).
VL_CHAT_TEMPLATE = CHATML_WITH_TOOLS.replace(
    "{% if p['type'] == 'text' %}{{ p['text'] }}",
    "{% if p['type'] == 'text' %}{{ p['text'] }}"
    "{% elif p['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>")
# Qwen2.5-VL's published preprocessor bounds (min_pixels 3136, max_pixels 12845056); transformers'
# own Qwen2-VL default caps a picture at 1280 blocks (1,003,520 pixels).
QWEN25_VL_PIXELS = {"shortest_edge": 3136, "longest_edge": 12845056}


def build_processor(pixels: dict[str, int] | None = None):
    """A Qwen2-VL processor over the tiny tokenizer, built in-process: transformers' PIL image
    processor (bounded by `pixels`, e.g. `QWEN25_VL_PIXELS`; default transformers' own), a chat
    template that places each picture's tokens, and a placeholder video processor (the video one
    needs torchvision, which this CPU build lacks; images never reach it). The text tokenizer is
    the tiny byte-level one: it spends more tokens on a text than Qwen's 151k-token vocabulary."""
    from transformers import Qwen2VLProcessor
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil
    from transformers.processing_utils import ProcessorMixin
    from transformers.video_processing_utils import BaseVideoProcessor

    fast = tokenizer()
    fast.add_special_tokens({"additional_special_tokens": VL_TOKENS})
    image_processor = Qwen2VLImageProcessorPil(**({"size": pixels} if pixels else {}))
    check = ProcessorMixin.check_argument_for_proper_class
    ProcessorMixin.check_argument_for_proper_class = lambda self, name, arg: None  # the placeholder video processor
    try:
        return Qwen2VLProcessor(image_processor=image_processor, tokenizer=fast,
                                video_processor=BaseVideoProcessor(), chat_template=VL_CHAT_TEMPLATE)
    finally:
        ProcessorMixin.check_argument_for_proper_class = check
