"""Text blocks read from an image with a real OCR engine (RapidOCR on ONNX Runtime, whose wheel
ships its detection and recognition models, so nothing is downloaded).

AesCode compares a candidate with an image reference by the text blocks read from both images
(`layout`), and reads where the reference places its required strings (the `vgr` reading-order
template). Reading an image is a few seconds of CPU, so results are cached by the image's hash
and the engine runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass

from PIL import Image

MIN_CONFIDENCE = 0.5  # a block read with less confidence is left out
MAX_SIDE = 2400  # a taller or wider image is read at this size (its coordinates scaled back)
_CACHE_SIZE = 256


class OcrUnavailable(RuntimeError):
    """The OCR engine is not installed or failed to load: our side, never the answer's fault."""


@dataclass(frozen=True)
class TextBlock:
    """One line of text read from an image, its box in that image's pixels."""

    text: str
    x: float
    y: float
    w: float
    h: float


_engine = None
_engine_lock = threading.Lock()
_cache: OrderedDict[str, tuple[list[TextBlock], tuple[int, int]]] = OrderedDict()


def _load_engine():
    global _engine
    with _engine_lock:
        if _engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:  # pragma: no cover - the dependency is declared
                raise OcrUnavailable("rapidocr-onnxruntime is not installed (pip install rapidocr-onnxruntime)") from exc
            _engine = RapidOCR()
        return _engine


def read_blocks_sync(png: bytes) -> tuple[list[TextBlock], tuple[int, int]]:
    """The text blocks of `png` and its size (width, height), cached by content."""
    key = hashlib.sha256(png).hexdigest()
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    with Image.open(io.BytesIO(png)) as image:
        image = image.convert("RGB")
        size = image.size
        scale = min(1.0, MAX_SIDE / max(size))
        if scale < 1.0:
            image = image.resize((round(size[0] * scale), round(size[1] * scale)))
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
    engine = _load_engine()
    try:
        found, _ = engine(buffer.getvalue())
    except Exception as exc:  # noqa: BLE001 - the engine failing is ours
        raise OcrUnavailable(f"OCR failed: {type(exc).__name__}: {exc}") from exc
    blocks = []
    for corners, text, confidence in found or []:
        if float(confidence) < MIN_CONFIDENCE or not str(text).strip():
            continue
        xs = [p[0] / scale for p in corners]
        ys = [p[1] / scale for p in corners]
        blocks.append(TextBlock(str(text).strip(), min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)))
    result = (blocks, size)
    _cache[key] = result
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


async def read_blocks(png: bytes) -> tuple[list[TextBlock], tuple[int, int]]:
    return await asyncio.to_thread(read_blocks_sync, png)


def crop(png: bytes, width: int, height: int) -> bytes:
    """The top-left `width`×`height` of a capture (a canvas inside a full-page screenshot)."""
    with Image.open(io.BytesIO(png)) as image:
        if image.width <= width and image.height <= height:
            return png
        out = io.BytesIO()
        image.crop((0, 0, min(width, image.width), min(height, image.height))).save(out, "PNG")
        return out.getvalue()
