"""A session's observation as its options ask (`SessionOptions`): the reward on the chosen scale,
images in full, as thumbnails or left out, and the record's interaction frames inline or by
reference (kept in a bounded `FrameStore`, fetched with GET /<env>/frames/<id>).

A training loop mostly wants the number: a single-turn reply with every frame inline is about
half a megabyte, with `images="none", frames="reference"` a few kilobytes.
"""

from __future__ import annotations

import base64
import binascii
import io
import secrets
import time
from collections import OrderedDict
from typing import Any

from aesenv.wire import SessionOptions

THUMBNAIL_PX = 320
FRAME_SUFFIX = "_b64"  # the record's frames: `before_jpeg_b64`, `after_jpeg_b64`, ...


def chosen_reward(reward: float | None, record: dict[str, Any] | None, options: SessionOptions) -> tuple[float | None, str | None]:
    """(reward, its name) on the session's scale; the env's own when no scale is chosen or there
    is no record (a refine turn before the end)."""
    if options.reward is None or not record:
        return reward, (record or {}).get("reward_name")
    value = (record.get("rewards") or {}).get(options.reward)
    if value is None:
        value = record.get("reward" if options.reward == "paper" else "normalized")
    return (None if value is None else float(value)), options.reward


def _thumbnail(url: str) -> str | None:
    """A data: URL image as a small JPEG data: URL; None when it is not one we can read."""
    from PIL import Image

    if not url.startswith("data:") or "," not in url:
        return None
    try:
        image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1], validate=False)))
        image = image.convert("RGB")
    except (OSError, ValueError, binascii.Error):
        return None
    image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=75)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def shape_images(messages: list[dict[str, Any]], images: str) -> list[dict[str, Any]]:
    """`messages` with their image parts as `images` says (`full`: unchanged)."""
    if images == "full":
        return messages
    shaped = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            shaped.append(message)
            continue
        parts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "image_url"):
                parts.append(part)
                continue
            small = _thumbnail((part.get("image_url") or {}).get("url", "")) if images == "thumbnail" else None
            if small is None:
                parts.append({"type": "text", "text": f"[image left out (images={images})]"})
            else:
                parts.append({"type": "image_url", "image_url": {"url": small, "detail": "low"}})
        shaped.append({**message, "content": parts})
    return shaped


class FrameStore:
    """The frames handed out by reference: bounded in bytes and age, oldest dropped first. An id is
    random (unguessable), and reading one still needs the server's token."""

    def __init__(self, max_bytes: int = 64 << 20, max_age_s: float = 3600.0) -> None:
        self.max_bytes, self.max_age_s = max_bytes, max_age_s
        self._frames: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._size = 0

    def put(self, data: bytes) -> str:
        ident = secrets.token_urlsafe(16)
        self._frames[ident] = (time.monotonic(), data)
        self._size += len(data)
        self._trim()
        return ident

    def get(self, ident: str) -> bytes | None:
        self._trim()
        found = self._frames.get(ident)
        return found[1] if found else None

    def _trim(self) -> None:
        now = time.monotonic()
        while self._frames:
            ident, (made, data) = next(iter(self._frames.items()))
            if self._size <= self.max_bytes and now - made <= self.max_age_s:
                break
            del self._frames[ident]
            self._size -= len(data)


def frames_by_reference(value: Any, store: FrameStore) -> Any:
    """`value` (a record as JSON) with every base64 frame (a `*_b64` string) put in `store` and
    replaced by its path, `frames/<id>`, relative to the env's URL."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and key.endswith(FRAME_SUFFIX) and isinstance(item, str) and item:
                try:
                    out[key] = f"frames/{store.put(base64.b64decode(item, validate=False))}"
                except (ValueError, binascii.Error):
                    out[key] = item
            else:
                out[key] = frames_by_reference(item, store)
        return out
    if isinstance(value, list):
        return [frames_by_reference(item, store) for item in value]
    return value


__all__ = ["FrameStore", "chosen_reward", "frames_by_reference", "shape_images"]
