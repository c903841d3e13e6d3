"""`RepairPolicy`: a scripted refine agent, so the multi-turn loop runs without a model.

It writes a first draft (the template baselines' answer), renders it, and while the render
reports errors it views the file and applies a fix for the common ones it knows: a misspelt
name (`documnet is not defined`, Python's `NameError`) becomes the closest name the file
declares; a method called on a missing element (`Cannot read properties of null (reading
'addEventListener')`) gets optional chaining. It submits once a render is clean, when it has no
fix for what it sees, or after `max_fixes` edits. It is stateless: every decision is read from
the conversation, so one instance serves any number of episodes.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable

from aesenv.artifact import extract_artifact
from aesenv.envs.tools import ToolCall, parse_action
from aesenv.tasks import Task
from policies.base import message_text, register_policy, tool_call_message
from policies.plot_template import PlotTemplatePolicy
from policies.template import TemplatePolicy

Fix = tuple[str, str]  # (old, new) for edit_file
Fixer = Callable[[str, str], Fix | None]  # (render observation, file content) -> an edit, or None

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_DATA_FILE = re.compile(r"The file `([^`]+)` is in the working directory\. Its first lines:\n```\n(.*?)\n```", re.S)


def _unique_line_edit(source: str, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> Fix | None:
    """Rewrite the first line matching `pattern`, if that line occurs once (edit_file needs a unique `old`)."""
    for line in source.splitlines():
        if pattern.search(line) and source.count(line) == 1:
            return line, pattern.sub(replace, line)
    return None


def fix_undefined_name(observation: str, source: str) -> Fix | None:
    match = (re.search(r"NameError: name '(\w+)' is not defined", observation)
             or re.search(r"\b([A-Za-z_$][\w$]*) is not defined", observation))
    if match is None:
        return None
    name = match.group(1)
    known = {word for word in _IDENTIFIER.findall(source) if word != name} | {"document", "window", "console"}
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if not close:
        return None
    return _unique_line_edit(source, re.compile(rf"(?<![\w$.]){re.escape(name)}(?![\w$])"), lambda _: close[0])


def fix_method_on_missing_element(observation: str, source: str) -> Fix | None:
    match = re.search(r"Cannot read propert(?:y|ies) of null \(reading '(\w+)'\)", observation)
    if match is None:
        return None
    method = re.escape(match.group(1))
    lookup = re.compile(rf"((?:getElementById|querySelector)\([^()]*\))\.({method}\()")
    return _unique_line_edit(source, lookup, lambda m: f"{m.group(1)}?.{m.group(2)}")


FIXERS: tuple[Fixer, ...] = (fix_undefined_name, fix_method_on_missing_element)


def has_errors(render_observation: str) -> bool:
    counts = re.findall(r"(?:page errors|console errors/warnings) \((\d+)\)", render_observation)
    return any(int(n) for n in counts) or "traceback:\n" in render_observation


def _call(turn: int, name: str, **arguments: str) -> dict:
    return tool_call_message(f"repair-{turn}", name, **arguments)


def draft_task(messages: list[dict]) -> Task:
    """The task as the first turn states it (the data files' first lines, for plots)."""
    prompt = next(message_text(m) for m in messages if m["role"] == "user")
    if "main.py" in message_text(messages[0]):
        return Task(id="repair-draft", kind="plot", prompt=prompt,
                    data_files={name: head + "\n" for name, head in _DATA_FILE.findall(prompt)})
    return Task(id="repair-draft", prompt=prompt)


@register_policy("repair")
class RepairPolicy:
    name = "repair"

    def __init__(self, arg: str = "", *, max_fixes: int = 4) -> None:
        self.max_fixes = max_fixes

    async def generate(self, task: Task) -> str:
        """Single-turn, the repair baseline is its first draft."""
        drafter = PlotTemplatePolicy() if task.kind == "plot" else TemplatePolicy()
        return await drafter.generate(task)

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        entry = "main.py" if "main.py" in message_text(messages[0]) else "index.html"
        turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        if not turns:
            draft = extract_artifact(await self.generate(draft_task(messages))).code
            return _call(1, "write_file", path=entry, content=draft)
        last_calls = parse_action(messages[turns[-1]])
        last: ToolCall | None = last_calls[-1] if isinstance(last_calls, list) and last_calls else None
        observation = messages[turns[-1] + 1:]
        observed = "\n".join(message_text(m) for m in observation)
        failed = any(m["role"] == "tool" and message_text(m).startswith(("Error:", "Invalid")) for m in observation)
        turn = len(turns) + 1
        if last is None or failed:
            return _call(turn, "submit")
        if last.name in ("write_file", "edit_file"):
            return _call(turn, "render")
        edits = sum(1 for i in turns if '"edit_file"' in json.dumps(messages[i].get("tool_calls") or []))
        if last.name == "render":
            if not has_errors(observed) or edits >= self.max_fixes:
                return _call(turn, "submit")
            return _call(turn, "view_file", path=entry)
        if last.name == "view_file":
            renders = [i for i in turns if '"render"' in json.dumps(messages[i].get("tool_calls") or [])]
            render_seen = "\n".join(message_text(m) for m in messages[renders[-1] + 1: renders[-1] + 3]) if renders else ""
            for fixer in FIXERS:
                fix = fixer(render_seen, observed)
                if fix is not None:
                    return _call(turn, "edit_file", path=entry, old=fix[0], new=fix[1])
        return _call(turn, "submit")
