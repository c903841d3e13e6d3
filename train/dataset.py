"""veRL's RLHFDataset, able to read a row's images where torchvision cannot be imported.

veRL takes a row's pictures out of its messages with `qwen_vl_utils.process_vision_info`, for
the overlong-prompt filter (which counts the prompt's tokens, image tokens included) and for the
rollout. `qwen_vl_utils` imports torchvision at module level, and a machine whose torch has no
matching torchvision (a CPU torch beside PyPI's CUDA torchvision) cannot import it: veRL's filter
then counts every row with an image as overlong and drops it, so AesCode would train on none of
its references. Here, only in that case and only for images, the pictures are handed to the VL
processor as they are: its own image processor resizes them (Qwen2/2.5/3-VL: to multiples of
patch × merge within its min/max pixels, the same bounds `qwen_vl_utils` applies by default), so
the token count is the one veRL computes with the processor. Videos still need torchvision.

Selected by `data.custom_cls` (veRL's `get_dataset_class`), so the trainer's datasets and the
agent loops' image handling (`dataset_cls.process_multi_modal_info`) both go through it.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from PIL import Image
from verl.utils.dataset.rl_dataset import RLHFDataset


_VISION_UTILS_LOCK = threading.Lock()
_vision_utils: bool | None = None


def vision_utils_importable() -> bool:
    """Whether veRL's own image path (`qwen_vl_utils`, which needs torchvision) can run here.

    Answered once, under a lock: veRL's agent loop processes several rows' pictures at once in
    executor threads, and a second thread importing `qwen_vl_utils` while the first is still
    failing on torchvision can be handed the half-imported module (and send its row to veRL's
    path, which then fails on `from qwen_vl_utils import process_vision_info`)."""
    global _vision_utils
    with _VISION_UTILS_LOCK:
        if _vision_utils is None:
            try:
                from qwen_vl_utils import process_vision_info  # noqa: F401
            except ImportError:
                _vision_utils = False
            else:
                _vision_utils = True
        return _vision_utils


def pictures(messages: list[dict[str, Any]]) -> list[Image.Image] | None:
    """The RGB pictures of a conversation's `image` parts, in order (None when it has none).
    Raises on a video: those need torchvision."""
    found: list[Image.Image] = []
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "video":
                raise RuntimeError("a video part needs qwen_vl_utils, which needs torchvision")
            if kind != "image":
                continue
            image = part.get("image")
            if isinstance(image, (str, os.PathLike)):
                image = Image.open(os.fspath(image))
            if not isinstance(image, Image.Image):
                raise TypeError(f"an image part holds {type(image).__name__}, not a picture or a path")
            found.append(image.convert("RGB"))
    return found or None


class AesRLHFDataset(RLHFDataset):
    """RLHFDataset whose images reach the processor without torchvision when it is missing."""

    @classmethod
    def _process_multi_modal_info(cls, messages: list[dict], image_patch_size: Any, config: Any):
        if vision_utils_importable():
            return super()._process_multi_modal_info(messages, image_patch_size=image_patch_size, config=config)
        return pictures(messages), None, cls._extract_audio_info(messages)
