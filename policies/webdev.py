"""Scripted agents for Webdev-Bench (`aesenv bench webdev`), so a whole suite runs without a model.

- `webdev-reference[:SUITE_DIR]`: the suite's own reference implementation, played as an agent.
  It reads the latest revealed request from the conversation ("Round j of n: …"), finds that
  requirement in the suite (default `benchmarks/webdev_suite`) and writes its reference files,
  one per turn, then submits; returned with a critique, it has nothing better and submits again.
  Its scores are the suite's ceiling: any item it misses is a bug of the suite, not of an agent.
- `do-nothing`: submits at once, every round: the floor (a project never touched scores 0 RS).
"""

from __future__ import annotations

import re
from pathlib import Path
from uuid import uuid4

from aesenv.envs.project import PROJECT_TOOL_SPECS
from aesenv.envs.tools import parse_action
from aesenv.tasks import Task
from aesenv.webdev.tasks import Requirement, load_suite
from policies.base import message_text, register_policy, tool_call_message

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "webdev_suite"
_ROUND = re.compile(r"Round (\d+) of (\d+): ")


def _call(name: str, **arguments: str) -> dict:
    return tool_call_message(f"webdev-{name}-{uuid4().hex[:8]}", name, **arguments)


def revealed(messages: list[dict]) -> tuple[int, str] | None:
    """The index of the latest user message revealing a request, and the request's text."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            text = message_text(messages[index])
            found = list(_ROUND.finditer(text))
            if found:
                return index, text[found[-1].end():]
    return None


def reference_step(messages: list[dict], requirements: list[Requirement]) -> tuple[str, dict[str, str]]:
    """The reference agent's next tool call, as (name, arguments), read from the conversation."""
    found = revealed(messages)
    if found is None:
        return "submit", {}
    index, text = found
    requirement = next((r for r in requirements if text.startswith(r.text)), None)
    if requirement is None:
        return "submit", {}
    written = set()
    for message in messages[index + 1:]:
        if message["role"] == "assistant":
            calls = parse_action(message, PROJECT_TOOL_SPECS)
            written |= {c.arguments.get("path") for c in calls if c.name == "write_file"} if isinstance(calls, list) else set()
    todo = [path for path in sorted(requirement.solution) if path not in written]
    if todo:
        return "write_file", {"path": todo[0], "content": requirement.solution[todo[0]]}
    return "submit", {}


@register_policy("webdev-reference")
class WebdevReferenceAgent:
    name = "webdev-reference"

    def __init__(self, suite: str = "") -> None:
        self.requirements = [r for task in load_suite(suite or DEFAULT_SUITE) for r in task.requirements]

    async def generate(self, task: Task) -> str:
        raise ValueError("webdev-reference is a Webdev-Bench agent: run it with `aesenv bench webdev`")

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        name, arguments = reference_step(messages, self.requirements)
        return _call(name, **arguments)


@register_policy("do-nothing")
class DoNothingAgent:
    name = "do-nothing"

    def __init__(self, argument: str = "") -> None:
        pass

    async def generate(self, task: Task) -> str:
        return ""

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        return _call("submit")
