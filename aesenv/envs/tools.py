"""The refine envs' action grammar and the workspace the actions edit.

One grammar, two spellings: OpenAI function calls (`TOOLS` are their schemas), and a text form
for models without native tool calling, which is the same call written in the message:

    <tool_call name="edit_file">
    <path>index.html</path>
    <old>documnet.body</old>
    <new>document.body</new>
    </tool_call>

Each argument is an XML-like element holding raw text (no escaping, so whole files can be
written as they are; one newline right after the opening tag and before the closing tag is
dropped). The Hermes/Qwen spelling, a JSON object inside `<tool_call>...</tool_call>`
(`{"name": ..., "arguments": {...}}`), is read too, so models trained on it work unchanged.
Anything unusable is an `ActionError` that the env shows the policy, never an exception.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

# name -> (description, {argument: description}); every argument is a required string.
_TOOL_SPECS: dict[str, tuple[str, dict[str, str]]] = {
    "write_file": ("Create or overwrite a file in the workspace.",
                   {"path": "relative path, e.g. index.html", "content": "the whole file"}),
    "edit_file": ("Replace one exact occurrence of `old` with `new` in a file. `old` must occur exactly once; "
                  "include enough surrounding text to make it unique.",
                  {"path": "relative path", "old": "exact text to replace", "new": "replacement text"}),
    "view_file": ("Show a file's current content.", {"path": "relative path"}),
    "render": ("Render the current workspace and show the result: for a page, a screenshot, DOM statistics, "
               "console errors and blocked requests; for a plot script, its figures and any traceback.", {}),
    "run": ("Run a shell command in a fresh sandbox holding a copy of the workspace (no network, time-limited); "
            "files it creates or changes are copied back.", {"command": "the shell command"}),
    "submit": ("Finish: the workspace as it is now is scored. Call it when the result is good.", {}),
}

TOOL_NAMES = tuple(_TOOL_SPECS)

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object",
                       "properties": {arg: {"type": "string", "description": text} for arg, text in args.items()},
                       "required": list(args), "additionalProperties": False}}}
    for name, (description, args) in _TOOL_SPECS.items()
]

MAX_FILES = 64
MAX_FILE_BYTES = 1_000_000
MAX_WORKSPACE_BYTES = 8_000_000


@dataclass(frozen=True)
class ActionError:
    """Why an action could not be used; shown to the policy as the observation."""

    message: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, str]
    id: str = ""  # the native tool_call id, answered by a role "tool" message
    problem: str = ""  # a native call that cannot run: still answered (by id) with this error


class ToolError(ValueError):
    """A well-formed call that cannot be carried out (missing file, ambiguous edit, ...)."""


def text_form_help() -> str:
    """How to write each tool in the text form (for system prompts)."""
    lines = []
    for name, (description, args) in _TOOL_SPECS.items():
        body = "".join(f"<{arg}>...</{arg}>\n" for arg in args)
        lines.append(f'<tool_call name="{name}">\n{body}</tool_call>\n  {description}')
    return "\n".join(lines)


_CALL = re.compile(r'<tool_call(?:\s+name\s*=\s*"([\w-]*)")?\s*>(.*?)</tool_call>', re.S)


def _strip_one_newline(text: str) -> str:
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def parse_text_action(text: str) -> dict[str, Any] | ActionError:
    """The first tool call written in `text`, as `{"name", "arguments"}`."""
    match = _CALL.search(text or "")
    if match is None:
        if "<tool_call" in (text or ""):
            return ActionError("a <tool_call> was opened but never closed with </tool_call>")
        return ActionError('no tool call found. Call a tool, e.g. <tool_call name="render"></tool_call>, '
                           'or <tool_call name="submit"></tool_call> when done.')
    name, body = match.group(1), match.group(2)
    if not name:
        try:
            value = json.loads(body)
        except ValueError:
            return ActionError('<tool_call> without name="..." must hold a JSON object {"name": ..., "arguments": {...}}')
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return ActionError('the JSON in <tool_call> needs a "name" string')
        return {"name": value["name"], "arguments": value.get("arguments") or {}}
    if name not in _TOOL_SPECS:
        return ActionError(f"unknown tool {name!r}; tools: {', '.join(TOOL_NAMES)}")
    stripped = body.strip()
    if stripped.startswith("{"):
        try:
            return {"name": name, "arguments": json.loads(stripped)}
        except ValueError:
            pass
    arguments = {}
    for arg in _TOOL_SPECS[name][1]:
        found = re.search(rf"<{arg}>(.*)</{arg}>", body, re.S)
        if found is not None:
            arguments[arg] = _strip_one_newline(found.group(1))
    return {"name": name, "arguments": arguments}


def _checked(name: Any, arguments: Any, call_id: str = "") -> ToolCall | ActionError:
    if name not in _TOOL_SPECS:
        return ActionError(f"unknown tool {name!r}; tools: {', '.join(TOOL_NAMES)}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return ActionError(f"{name}: arguments are not valid JSON ({exc})")
    if not isinstance(arguments, dict):
        return ActionError(f"{name}: arguments must be an object")
    wanted = _TOOL_SPECS[name][1]
    missing = [a for a in wanted if a not in arguments]
    if missing:
        return ActionError(f"{name}: missing argument(s) {missing}; it takes {list(wanted) or 'none'}")
    wrong = [a for a in wanted if not isinstance(arguments[a], str)]
    if wrong:
        return ActionError(f"{name}: argument(s) {wrong} must be strings")
    return ToolCall(name=name, arguments={a: arguments[a] for a in wanted}, id=call_id)


def parse_action(action: Any) -> list[ToolCall] | ActionError:
    """Every spelling an env step accepts: assistant text (text form), `{"name", "arguments"}`,
    or an assistant message (native `tool_calls`, else its text content in the text form)."""
    if isinstance(action, str):
        parsed = parse_text_action(action)
        return parsed if isinstance(parsed, ActionError) else _as_list(_checked(parsed["name"], parsed["arguments"]))
    if not isinstance(action, dict):
        return ActionError(f"an action is a message text or a dict, not {type(action).__name__}")
    if "name" in action:
        return _as_list(_checked(action["name"], action.get("arguments", {})))
    native = action.get("tool_calls")
    if native:
        calls = []
        for raw in native:
            raw = raw if isinstance(raw, dict) else {}
            function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
            call_id = str(raw.get("id", ""))
            checked = _checked(function.get("name"), function.get("arguments", {}), call_id)
            if isinstance(checked, ActionError):
                checked = ToolCall(name=str(function.get("name")), arguments={}, id=call_id, problem=checked.message)
            calls.append(checked)
        return calls
    content = action.get("content")
    if isinstance(content, list):
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return parse_action(content if isinstance(content, str) else "")


def _as_list(call: ToolCall | ActionError) -> list[ToolCall] | ActionError:
    return call if isinstance(call, ActionError) else [call]


def clean_path(path: str) -> str:
    """A workspace-relative POSIX path, or `ToolError` (absolute, `..`, empty, odd characters)."""
    candidate = path.strip().replace("\\", "/")
    normal = posixpath.normpath(candidate) if candidate else ""
    if (not normal or normal in (".", "..") or normal.startswith(("/", "../")) or "\x00" in normal
            or len(normal) > 200):
        raise ToolError(f"bad path {path!r}: use a relative path inside the workspace, e.g. index.html")
    return normal


@dataclass
class Workspace:
    """The episode's files, kept by the env between steps (the sandbox gets a copy per run)."""

    files: dict[str, bytes] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """Changes whenever any file's path or content does."""
        digest = hashlib.sha256()
        for path, data in sorted(self.files.items()):
            digest.update(hashlib.sha256(path.encode()).digest() + hashlib.sha256(data).digest())
        return digest.hexdigest()

    def listing(self) -> str:
        return ", ".join(f"{p} ({len(b)} B)" for p, b in sorted(self.files.items())) or "(empty)"

    def read(self, path: str) -> str:
        name = clean_path(path)
        if name not in self.files:
            raise ToolError(f"no file {name!r}; the workspace has: {self.listing()}")
        return self.files[name].decode("utf-8", "replace")

    def write(self, path: str, content: str | bytes) -> str:
        name = clean_path(path)
        data = content.encode("utf-8") if isinstance(content, str) else content
        if len(data) > MAX_FILE_BYTES:
            raise ToolError(f"{name}: {len(data)} bytes is over the {MAX_FILE_BYTES}-byte file limit")
        if name not in self.files and len(self.files) >= MAX_FILES:
            raise ToolError(f"the workspace already holds {MAX_FILES} files (the limit)")
        total = sum(len(b) for p, b in self.files.items() if p != name) + len(data)
        if total > MAX_WORKSPACE_BYTES:
            raise ToolError(f"the workspace would hold {total} bytes, over the {MAX_WORKSPACE_BYTES}-byte limit")
        self.files[name] = data
        return name

    def edit(self, path: str, old: str, new: str) -> str:
        """Exact search/replace of one occurrence; the error says why when there is not exactly one."""
        text = self.read(path)
        if not old:
            raise ToolError("edit_file: `old` is empty; give the exact text to replace")
        count = text.count(old)
        if count == 0:
            raise ToolError(f"edit_file: `old` does not occur in {clean_path(path)} (it must match exactly, "
                            "whitespace included); view_file shows the current content")
        if count > 1:
            raise ToolError(f"edit_file: `old` occurs {count} times in {clean_path(path)}; "
                            "include more surrounding text so it occurs once")
        return self.write(path, text.replace(old, new, 1))
