"""A text space for prompts and model answers, which use every Unicode character."""

from __future__ import annotations

from typing import Any

from gymnasium.spaces import Text


class UnicodeText(Text):
    """`Text` that accepts any string within the length bounds; samples from printable ASCII."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        charset = "".join(chr(c) for c in range(32, 127)) + "\n"
        super().__init__(max_length=max_length, min_length=min_length, charset=charset, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"
