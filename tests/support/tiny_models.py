"""The tests' tiny random-weight models: train.tiny_models, the one builder (no downloads).

Also a script for the vLLM venv's Python (`python tiny_models.py DIR`, tests/support/vllm_server.py):
that venv has torch, transformers and tokenizers but not aesenv, so the script puts the
repository root on the path and imports only `train.tiny_models` (which needs nothing else).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from train.tiny_models import (  # noqa: E402
    CHATML_WITH_TOOLS,
    CORPUS,
    QWEN25_VL_PIXELS,
    SMOKE_VL_PIXELS,
    SPECIALS,
    TOOL_TAGS,
    VL_CHAT_TEMPLATE,
    VL_TOKENS,
    build_processor,
    build_text,
    build_vl,
    tokenizer,
    vl_tokenizer,
)

__all__ = ["CHATML_WITH_TOOLS", "CORPUS", "QWEN25_VL_PIXELS", "SMOKE_VL_PIXELS", "SPECIALS", "TOOL_TAGS",
           "VL_CHAT_TEMPLATE", "VL_TOKENS", "build_processor", "build_text", "build_vl", "tokenizer", "vl_tokenizer"]

if __name__ == "__main__":
    build_text(Path(sys.argv[1]))
