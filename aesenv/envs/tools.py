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
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from aesenv.text import shown

# name -> (description, {argument: description}); every argument is a required string.
REFINE_TOOL_SPECS: dict[str, tuple[str, dict[str, str]]] = {  # the refine envs' tools
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

ToolSpecs = dict[str, tuple[str, dict[str, str]]]


def tool_schemas(specs: ToolSpecs) -> list[dict[str, Any]]:
    """The OpenAI function schemas of `specs`."""
    return [{"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object",
                       "properties": {arg: {"type": "string", "description": text} for arg, text in args.items()},
                       "required": list(args), "additionalProperties": False}}}
            for name, (description, args) in specs.items()]


TOOL_NAMES = tuple(REFINE_TOOL_SPECS)
TOOLS: list[dict[str, Any]] = tool_schemas(REFINE_TOOL_SPECS)

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


def text_form_help(specs: ToolSpecs = REFINE_TOOL_SPECS) -> str:
    """How to write each tool in the text form (for system prompts)."""
    lines = []
    for name, (description, args) in specs.items():
        body = "".join(f"<{arg}>...</{arg}>\n" for arg in args)
        lines.append(f'<tool_call name="{name}">\n{body}</tool_call>\n  {description}')
    return "\n".join(lines)


_CALL = re.compile(r'<tool_call(?:\s+name\s*=\s*"([\w-]*)")?\s*>(.*?)</tool_call>', re.S)
_CLOSE = "</tool_call>"


def _strip_one_newline(text: str) -> str:
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def _element(body: str, arg: str) -> str | None:
    """The text between the first `<arg>` and the last `</arg>` after it (what the greedy
    `<arg>(.*)</arg>` matches, found in linear time: a body of many unclosed openings must not
    cost quadratic time)."""
    start = body.find(f"<{arg}>")
    end = body.rfind(f"</{arg}>")
    if start < 0 or end < start + len(arg) + 2:
        return None
    return body[start + len(arg) + 2:end]


def parse_text_action(text: str, specs: ToolSpecs = REFINE_TOOL_SPECS) -> dict[str, Any] | ActionError:
    """The first tool call written in `text`, as `{"name", "arguments"}`."""
    text = text if isinstance(text, str) else ""
    # Only the text up to the last closing tag can hold a complete call: searching beyond it
    # would scan to the end once per unclosed opening (quadratic in a hostile message).
    last_close = text.rfind(_CLOSE)
    match = _CALL.search(text, 0, last_close + len(_CLOSE)) if last_close >= 0 else None
    if match is None:
        if "<tool_call" in text:
            return ActionError("a <tool_call> was opened but never closed with </tool_call>")
        return ActionError('no tool call found. Call a tool, e.g. <tool_call name="render"></tool_call>, '
                           'or <tool_call name="submit"></tool_call> when done.')
    name, body = match.group(1), match.group(2)
    if not name:
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return ActionError('<tool_call> without name="..." must hold a JSON object {"name": ..., "arguments": {...}}')
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return ActionError('the JSON in <tool_call> needs a "name" string')
        return {"name": value["name"], "arguments": value.get("arguments") or {}}
    if name not in specs:
        return ActionError(f"unknown tool '{shown(name)}'; tools: {', '.join(specs)}")
    stripped = body.strip()
    if stripped.startswith("{"):
        try:
            return {"name": name, "arguments": json.loads(stripped)}
        except (ValueError, RecursionError):
            pass
    arguments = {}
    for arg in specs[name][1]:
        found = _element(body, arg)
        if found is not None:
            arguments[arg] = _strip_one_newline(found)
    return {"name": name, "arguments": arguments}


def _checked(name: Any, arguments: Any, call_id: str = "", specs: ToolSpecs = REFINE_TOOL_SPECS) -> ToolCall | ActionError:
    if not isinstance(name, str) or name not in specs:
        return ActionError(f"unknown tool '{shown(name)}'; tools: {', '.join(specs)}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            return ActionError(f"{name}: arguments are not valid JSON ({shown(str(exc), 200)})")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ActionError(f"{name}: arguments must be an object, not {type(arguments).__name__}")
    wanted = specs[name][1]
    missing = [a for a in wanted if a not in arguments]
    if missing:
        return ActionError(f"{name}: missing argument(s) {missing}; it takes {list(wanted) or 'none'}")
    wrong = [a for a in wanted if not isinstance(arguments[a], str)]
    if wrong:
        return ActionError(f"{name}: argument(s) {wrong} must be strings")
    return ToolCall(name=name, arguments={a: arguments[a] for a in wanted}, id=call_id)


def parse_action(action: Any, specs: ToolSpecs = REFINE_TOOL_SPECS) -> list[ToolCall] | ActionError:
    """Every spelling an env step accepts: assistant text (text form), `{"name", "arguments"}`,
    or an assistant message (native `tool_calls`, else its text content in the text form).
    Never raises: whatever the action holds, the answer is calls or an `ActionError`."""
    if isinstance(action, str):
        parsed = parse_text_action(action, specs)
        return parsed if isinstance(parsed, ActionError) else _as_list(
            _checked(parsed["name"], parsed["arguments"], specs=specs))
    if not isinstance(action, dict):
        return ActionError(f"an action is a message text or a dict, not {type(action).__name__}")
    if "name" in action:
        return _as_list(_checked(action["name"], action.get("arguments", {}), specs=specs))
    native = action.get("tool_calls")
    if native:
        if not isinstance(native, (list, tuple)):
            return ActionError(f"tool_calls must be a list of calls, not {type(native).__name__}")
        calls = []
        for raw in native:
            raw = raw if isinstance(raw, dict) else {}
            function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
            raw_id = raw.get("id", "")
            call_id = raw_id if isinstance(raw_id, str) else str(raw_id)
            checked = _checked(function.get("name"), function.get("arguments", {}), call_id, specs)
            if isinstance(checked, ActionError):
                name = function.get("name")
                checked = ToolCall(name=shown(name) if isinstance(name, str) else "?", arguments={}, id=call_id,
                                   problem=checked.message)
            calls.append(checked)
        return calls
    content = action.get("content")
    if isinstance(content, (list, tuple)):
        content = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return parse_action(content if isinstance(content, str) else "", specs)


def _as_list(call: ToolCall | ActionError) -> list[ToolCall] | ActionError:
    return call if isinstance(call, ActionError) else [call]


MAX_PATH_CHARS = 200


def path_problem(path: Any) -> tuple[str, str]:
    """(the workspace-relative POSIX path, "") or ("", why it cannot be one). Every name that
    enters the workspace passes here, from a tool argument or from a `run`: it must be text that
    is valid UTF-8 (no lone surrogates, which is how undecodable file-name bytes arrive), relative,
    inside the workspace, without control characters, and short."""
    if not isinstance(path, str):
        return "", "a path must be a string"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "", "the name is not valid UTF-8"
    candidate = path.strip().replace("\\", "/")
    if not candidate:
        return "", "the path is empty"
    if any(unicodedata.category(c) == "Cc" for c in candidate):
        return "", "the name holds control characters"
    if candidate.startswith("/"):
        return "", "an absolute path"
    normal = posixpath.normpath(candidate)
    if normal in (".", "..") or normal.startswith("../"):
        return "", "it leaves the workspace (..)" if ".." in normal else "not a file name"
    if len(normal) > MAX_PATH_CHARS:
        return "", f"longer than {MAX_PATH_CHARS} characters"
    return normal, ""


def clean_path(path: str) -> str:
    """A workspace-relative POSIX path, or `ToolError` (absolute, `..`, empty, odd characters)."""
    normal, problem = path_problem(path)
    if problem:
        raise ToolError(f"bad path '{shown(path)}' ({problem}): use a relative path inside the workspace, "
                        "e.g. index.html")
    return normal


@dataclass(frozen=True)
class Skipped:
    """A file a `run` left that did not enter the workspace, and why."""

    name: str  # as `shown` writes it
    why: str


@dataclass
class Intake:
    """What came of a `run`'s files: those copied into the workspace and those skipped."""

    changed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class Workspace:
    """The episode's files, kept by the env between steps (the sandbox gets a copy per run)."""

    files: dict[str, bytes] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """Changes whenever any file's path or content does."""
        digest = hashlib.sha256()
        for path, data in sorted(self.files.items()):
            digest.update(hashlib.sha256(path.encode("utf-8", "surrogatepass")).digest()
                          + hashlib.sha256(data).digest())
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
        if isinstance(content, str):
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ToolError(f"{name}: the content is not valid Unicode text (a lone surrogate at character "
                                f"{exc.start}); write it as UTF-8 text") from None
        else:
            data = bytes(content)
        problem = self._room_for(name, data)
        if problem:
            raise ToolError(f"{name}: {problem}")
        self.files[name] = data
        return name

    def _room_for(self, name: str, data: bytes) -> str:
        """Why `data` cannot be stored as `name` within the workspace's bounds ("" when it can).
        A file cannot also be a folder: the sandbox could not lay out such a workspace."""
        parts = name.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in self.files:
                return f"{'/'.join(parts[:i])} is a file in the workspace, so it cannot hold {name}"
        inside = next((p for p in self.files if p.startswith(name + "/")), None)
        if inside is not None:
            return f"{name} is a folder in the workspace (it holds {inside})"
        if len(data) > MAX_FILE_BYTES:
            return f"{len(data)} bytes is over the {MAX_FILE_BYTES}-byte file limit"
        if name not in self.files and len(self.files) >= MAX_FILES:
            return f"the workspace already holds {MAX_FILES} files (the limit)"
        total = sum(len(b) for p, b in self.files.items() if p != name) + len(data)
        if total > MAX_WORKSPACE_BYTES:
            return f"the workspace would hold {total} bytes, over the {MAX_WORKSPACE_BYTES}-byte limit"
        return ""

    def take(self, files: dict[str, bytes], not_copied: dict[str, str] | None = None, first: str = "") -> Intake:
        """Copy what a `run` left into the workspace: the one gate for file names and contents
        made by untrusted code. Each new or changed file, `first` (the entry file) and then in
        name order, either enters (a valid relative UTF-8 name, within the file, count and total
        bounds) or is skipped with the reason; `not_copied` (name -> why the sandbox did not copy
        it back: links, FIFOs, devices) is reported the same way. Never raises."""
        intake = Intake()
        seen: dict[str, str] = {}

        def order(name: object) -> tuple[bool, bytes]:
            text = name if isinstance(name, str) else ""
            return text != first, text.encode("utf-8", "surrogatepass")

        for raw in sorted(files, key=order):
            data = files[raw]
            name, problem = path_problem(raw)
            if not problem and not isinstance(data, (bytes, bytearray)):
                problem = "no file content came back"
            if not problem and name in seen and seen[name] != raw:
                problem = f"the same workspace path as '{shown(seen[name])}'"
            if problem:
                intake.skipped.append(Skipped(shown(raw), problem))
                continue
            seen[name] = raw
            if self.files.get(name) == data:
                continue
            problem = self._room_for(name, bytes(data))
            if problem:
                intake.skipped.append(Skipped(name, problem))
                continue
            self.files[name] = bytes(data)
            intake.changed.append(name)
        for raw, why in sorted((not_copied or {}).items()):
            intake.skipped.append(Skipped(shown(raw), f"{why}: only regular files are copied back"))
        return intake

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
