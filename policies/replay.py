"""The replay policy: score answers that were generated elsewhere (a saved model run).

It reads OpenDesign's official `model_answer` rows
(`{"question_id" | "id", "choices": [{"turns": [{"content": ...}]}]}`) and a plain layout
(`{"id", "answer" | "response" | "text"}`), so existing answer files can be rescored with
aesenv's rewards without calling any model.
"""

from __future__ import annotations

from pathlib import Path

from aesenv.jsonl import read_jsonl
from aesenv.tasks import Task
from policies.base import register_policy

TEXT_KEYS = ("answer", "response", "text")


class MissingAnswer(KeyError):
    """The answers file has no row for a task."""

    def __str__(self) -> str:  # KeyError would repr() the message; keep it readable
        return str(self.args[0]) if self.args else ""


def _answer_text(row: dict, where: str) -> str:
    if "choices" in row:
        choices = row["choices"]
        try:
            turns = choices[0]["turns"]
            content = turns[-1]["content"] if isinstance(turns[-1], dict) else turns[-1]
        except (IndexError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: 'choices' must look like [{{\"turns\": [{{\"content\": ...}}]}}]") from exc
        if not isinstance(content, str):
            raise ValueError(f"{where}: answer content must be a string")
        return content
    for key in TEXT_KEYS:
        if key in row:
            if not isinstance(row[key], str):
                raise ValueError(f"{where}: {key!r} must be a string")
            return row[key]
    raise ValueError(f"{where}: row has no answer (expected 'choices' or one of {list(TEXT_KEYS)})")


def load_answers(path: str | Path) -> dict[str, str]:
    """Answers keyed by id as a string; later rows replace earlier ones (re-runs appended)."""
    if not str(path):
        raise ValueError("replay policy needs an answers file: use replay:PATH.jsonl")
    answers: dict[str, str] = {}
    for where, row in read_jsonl(path):
        key = row.get("question_id", row.get("id"))
        if key is None or key == "":
            raise ValueError(f"{where}: row has no 'question_id' or 'id'")
        answers[str(key)] = _answer_text(row, where)
    return answers


@register_policy("replay")
class ReplayPolicy:
    """Returns the saved answer for each task id; the argument is the answers file."""

    name = "replay"

    def __init__(self, path: str = "") -> None:
        self.path = str(path)
        self.answers = load_answers(self.path)

    async def generate(self, task: Task) -> str:
        try:
            return self.answers[str(task.id)]
        except KeyError:
            raise MissingAnswer(f"no answer for task id {task.id!r} in {self.path}") from None
