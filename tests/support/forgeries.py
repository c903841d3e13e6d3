"""The forgery corpus's project and Webdev-Bench cases (`benchmarks/forgeries/`) as tests read
them: each side's files laid over the task's starting workspace."""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "forgeries"


def case_names(prefix: str) -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.name.startswith(prefix) and (p / "case.json").is_file())


def case(name: str) -> dict:
    return json.loads((CORPUS / name / "case.json").read_text())


def side(name: str, which: str, start: dict[str, bytes]) -> dict[str, bytes]:
    """`which` ("honest" or "forged") of case `name`, laid over the starting workspace `start`."""
    folder = CORPUS / name / which
    return {**start, **{p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
                        if p.is_file()}}
