"""What every `aesenv data` pipeline shares: stage files a rerun extends, and model clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aesenv.jsonl import read_jsonl
from aesenv.llm.client import ChatClient, ClientConfig, Usage


class Stage:
    """One stage's JSONL file: rows appended as they are made, read back on a rerun."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = [row for _, row in read_jsonl(path)] if path.is_file() else []

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row) + "\n" for row in rows)


def make_client(model: str, base_url: str | None, **settings: Any) -> ChatClient:
    options: dict[str, Any] = {"max_tokens": 4096, "temperature": 0.8, "cache_dir": None, **settings}
    if base_url:
        options["base_url"] = base_url
    return ChatClient(ClientConfig(model=model, **options))


def usage_summary(clients: list[ChatClient]) -> dict[str, Any]:
    """Requests, tokens and cost per model and in total, for a pipeline's `summary.json`."""
    total = Usage()
    for client in clients:
        total.add(client.usage)
    return {"usage": {c.config.model: c.usage.model_dump() for c in clients}, "usage_total": total.model_dump()}
