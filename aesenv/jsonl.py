"""Reading JSONL files with errors that name the file and line, and writing records safely."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def dumps(model: BaseModel, indent: int | None = None) -> str:
    """A model as JSON that never fails on what a page put in it: JavaScript strings may hold
    lone surrogates, which no UTF-8 writer takes (pydantic's own JSON refuses them); here they
    are escaped as \\uXXXX, so the record is written whole and reads back the same."""
    return json.dumps(model.model_dump(mode="json"), indent=indent)


class JsonlError(ValueError):
    pass


def read_jsonl(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (`path:line`, object) for each non-blank line; raise `JsonlError` on bad input."""
    p = Path(path)
    if not str(path) or not p.is_file():
        raise JsonlError(f"file not found: {path}")
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JsonlError(f"{where}: invalid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise JsonlError(f"{where}: expected a JSON object")
            yield where, row
