"""Tiny random-weight models, built locally (no downloads): the policies `python -m train.smoke`
trains through veRL on CPU, and the models the tests serve (tests/support/tiny_models.py re-uses
this module; with the vLLM venv's Python it runs as `python tests/support/tiny_models.py DIR`, so
`build_text` needs only torch, transformers and tokenizers — nothing of aesenv or veRL).

- `build_text`: a 2-layer Qwen2 (head_dim 64, which vLLM's CPU attention supports) with a
  byte-level BPE tokenizer and a ChatML template that renders `tools` and `tool` messages, the
  shape vLLM's `hermes` tool-call parser expects; `<tool_call>` and `</tool_call>` are single
  tokens because that parser looks them up in the vocabulary and refuses to start without them.
- `build_vl`: a tiny Qwen2-VL (the same text stack under a 1-layer vision tower) with an
  image-only Qwen2-VL processor (train.qwen2_vl: transformers' own needs torchvision for its
  video half, and the only torchvision here is PyPI's CUDA build, which does not load against the
  CPU torch). vLLM cannot serve it for the same reason; veRL's trainer and the `aes_hf` rollout can.
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


# A smoke-sized picture: 4 to 64 image tokens (28x28 pixels each), so a reference costs the
# prompt at most 64 tokens and the vision tower little time on CPU.
SMOKE_VL_PIXELS = {"shortest_edge": 4 * 28 * 28, "longest_edge": 64 * 28 * 28}


def vl_tokenizer():
    """The tiny tokenizer with Qwen2-VL's vision tokens."""
    fast = tokenizer()
    fast.add_special_tokens({"additional_special_tokens": VL_TOKENS})
    return fast


def build_processor(pixels: dict[str, int] | None = None):
    """A Qwen2-VL processor over the tiny tokenizer, built in-process: transformers' PIL image
    processor (bounded by `pixels`, e.g. `QWEN25_VL_PIXELS`; default transformers' own) and a chat
    template that places each picture's tokens, in the image-only processor class (no video
    processor: it needs torchvision). The text tokenizer is the tiny byte-level one: it spends
    more tokens on a text than Qwen's 151k-token vocabulary."""
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    from train.qwen2_vl import Qwen2VLProcessor

    image_processor = Qwen2VLImageProcessorPil(**({"size": pixels} if pixels else {}))
    return Qwen2VLProcessor(image_processor=image_processor, tokenizer=vl_tokenizer(), chat_template=VL_CHAT_TEMPLATE)


def build_vl(path: Path, pixels: dict[str, int] | None = None) -> None:
    """The tiny Qwen2-VL and its processor in `path` (`pixels`: the image processor's bounds,
    default `SMOKE_VL_PIXELS`). The saved files name no `processor_class`: `AutoProcessor` then
    takes the class registered for Qwen2VLConfig (train.qwen2_vl.register, which veRL's
    processes run through train.plugin), where a named class would be transformers' own."""
    import json

    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    processor = build_processor(pixels or SMOKE_VL_PIXELS)
    fast = processor.tokenizer
    processor.save_pretrained(path)
    ids = {name: fast.convert_tokens_to_ids(token) for name, token in
           (("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    text = {"vocab_size": len(fast), "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 8192,
            "eos_token_id": fast.eos_token_id, "pad_token_id": fast.pad_token_id, "bos_token_id": None,
            # 3-D rope over head_dim 64: temporal, height and width sections sum to head_dim / 2
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [8, 12, 12]}}
    vision = {"depth": 1, "embed_dim": 64, "hidden_size": 128, "num_heads": 2, "mlp_ratio": 2,
              "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}
    config = Qwen2VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=True, **ids)
    config.eos_token_id, config.pad_token_id = fast.eos_token_id, fast.pad_token_id
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(path)
    for file in path.glob("*.json"):
        saved = json.loads(file.read_text())
        if isinstance(saved, dict) and saved.pop("processor_class", None) is not None:
            file.write_text(json.dumps(saved, indent=2))


def image_tokens_per_row(model_path: Path, parquet: Path) -> list[int]:
    """The image tokens each pictured row of a `train.data` parquet costs the VL policy in
    `model_path`, counted with the processor veRL loads (`hf_processor`): one per merged patch."""
    import io

    import pandas as pd
    from PIL import Image
    from verl.utils import hf_processor

    processor = hf_processor(str(model_path))
    if processor is None:
        raise RuntimeError(f"veRL loads no processor from {model_path}")
    merge = processor.image_processor.merge_size ** 2
    counts = []
    for images in pd.read_parquet(parquet)["images"].dropna():
        pictures = [Image.open(io.BytesIO(image["bytes"])).convert("RGB") for image in images]
        grid = processor.image_processor(images=pictures, return_tensors="pt")["image_grid_thw"]
        counts.append(int(grid.prod(dim=-1).sum()) // merge)
    return counts


if __name__ == "__main__":
    build_text(Path(sys.argv[1]))
