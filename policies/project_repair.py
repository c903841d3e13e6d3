"""`ProjectRepairPolicy`: a scripted agent for `AesWebProject-v0`, so a project episode runs
without a model, and a check that the env's observations carry what a repair needs.

It webshots the project and diagnoses what it reads there, for the three faults it knows:
- a build that cannot resolve a local import (`Could not resolve "./components/Fotter.jsx"`):
  it lists the files and points the import at the closest existing file;
- a blank page whose page error says React's mount target is missing (a production build says
  `Minified React error #299`): it finds the `getElementById(...)` call and the ids in
  index.html, and mounts on the closest id there;
- in-page links without a target (`broken targets: #menu`): it finds the ids in the sources and
  renames the closest one to the link's target.
After each edit it webshots again; it submits once nothing it knows is wrong, when a diagnosis
repeats after its fix, or after `max_fixes` edits. Every decision is read from the conversation;
asked for a handover note (context compaction), it writes what its last webshot showed.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from uuid import uuid4

from aesenv.context import SUMMARY_HEADER, asks_for_summary
from aesenv.envs.project import PROJECT_TOOL_SPECS
from aesenv.envs.tools import ToolCall, parse_action
from aesenv.tasks import Task
from policies.base import message_text, register_policy, tool_call_message

_UNRESOLVED = re.compile(r'Could not resolve ["\'](\.{1,2}/[^"\']+)["\'] from ["\']([^"\']+)["\']')
_MOUNT = re.compile(r"Target container is not a DOM element|Minified React error #299\b")
_BROKEN = re.compile(r"broken targets: ([^\n]+)")
_ID = re.compile(r"""\bid=["']([^"']+)["']""")
_BY_ID = re.compile(r"""getElementById\((["'])([^"']+)\1\)""")
_HIT = re.compile(r"^([^:\n]+):(\d+): (.*)$", re.M)


def _call(turn: int, name: str, **arguments: str) -> dict:
    """A call whose id is unique even beside turns a compaction kept from a longer context."""
    return tool_call_message(f"project-repair-{turn}-{uuid4().hex[:6]}", name, **arguments)


def diagnose(webshot: str) -> str | None:
    """The fault a webshot shows that this agent knows how to repair, by name."""
    if _UNRESOLVED.search(webshot):
        return "import"
    if _MOUNT.search(webshot):
        return "mount"
    if _BROKEN.search(webshot):
        return "anchors"
    return None


def fix_import(webshot: str, listing: str) -> ToolCall | None:
    match = _UNRESOLVED.search(webshot)
    wanted, importer = match.group(1), match.group(2).split("/src/", 1)[-1]
    importer = importer if importer.startswith("src/") else f"src/{importer}"
    base = posixpath.dirname(importer)
    target = posixpath.normpath(posixpath.join(base, wanted))
    files = re.findall(r"^(\S+) \(\d+ B\)$", listing, re.M)
    close = difflib.get_close_matches(target, files, n=1, cutoff=0.6)
    if not close:
        return None
    fixed = posixpath.relpath(close[0], base)
    fixed = fixed if fixed.startswith(".") else f"./{fixed}"
    return ToolCall("edit_file", {"path": importer, "old": wanted, "new": fixed})


def fix_mount(search: str, index_html: str) -> ToolCall | None:
    hit = next(((path, line) for path, _, line in _HIT.findall(search) if _BY_ID.search(line)), None)
    ids = _ID.findall(index_html)
    if hit is None or not ids:
        return None
    quote, wrong = _BY_ID.search(hit[1]).groups()
    right = (difflib.get_close_matches(wrong, ids, n=1, cutoff=0.0) or ids)[0]
    return ToolCall("edit_file", {"path": hit[0], "old": f"getElementById({quote}{wrong}{quote})",
                                  "new": f"getElementById({quote}{right}{quote})"})


def fix_anchor(webshot: str, search: str) -> ToolCall | None:
    # The webshot quotes each target (`aesenv.quoting`): ⟦#name⟧.
    targets = [t.strip().strip("\u27e6\u27e7").lstrip("#") for t in _BROKEN.search(webshot).group(1).split(",")
               if t.strip().strip("\u27e6\u27e7")]
    found = [(path, m.group(0), m.group(1)) for path, _, line in _HIT.findall(search) for m in _ID.finditer(line)]
    spare = [item for item in found if item[2] not in targets]
    for target in targets:
        close = difflib.get_close_matches(target, [item[2] for item in spare], n=1, cutoff=0.4)
        if close:
            path, attribute, name = next(item for item in spare if item[2] == close[0])
            return ToolCall("edit_file", {"path": path, "old": attribute, "new": attribute.replace(name, target)})
    return None


def _history(messages: list[dict]) -> tuple[list[str | None], list[str]]:
    """The tool each assistant turn called (None: no call) and the text that came back to it."""
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    calls = [parse_action(messages[i], PROJECT_TOOL_SPECS) for i in turns]
    names = [c[-1].name if isinstance(c, list) and c else None for c in calls]
    seen = ["\n".join(message_text(m) for m in messages[i + 1:(turns[k + 1] if k + 1 < len(turns) else None)])
            for k, i in enumerate(turns)]
    return names, seen


def _last_webshot(names: list[str | None], seen: list[str], messages: list[dict]) -> str:
    """The latest webshot still readable in the context; once folded or compacted away, the
    handover note (which carries its fault lines), or "" when there is neither."""
    shots = [seen[k] for k, n in enumerate(names) if n == "webshot" and not seen[k].startswith("[folded")]
    if shots:
        return shots[-1]
    return next((message_text(m) for m in messages if message_text(m).startswith(SUMMARY_HEADER)), "")


@register_policy("project-repair")
class ProjectRepairPolicy:
    name = "project-repair"

    def __init__(self, arg: str = "", *, max_fixes: int = 4) -> None:
        self.max_fixes = max_fixes

    @staticmethod
    def note(messages: list[dict]) -> str:
        """What a fresh context needs to go on: the tools used, and the fault lines of the last webshot
        (read back by `act` when the webshot itself was compacted away)."""
        names, seen = _history(messages)
        webshot = _last_webshot(names, seen, messages)
        faults = [line for line in webshot.splitlines() if diagnose(line)]
        return (f"Tools used so far: {', '.join(n for n in names if n) or 'none'}. The last webshot showed "
                + ("these faults:\n" + "\n".join(faults) if faults else "no fault I know how to repair."))

    async def generate(self, task: Task) -> str:
        raise ValueError("project-repair is a multi-turn agent: run it in AesWebProject-v0 (`aesenv run`)")

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        if asks_for_summary(messages):
            return {"role": "assistant", "content": self.note(messages[:-1])}
        names, seen = _history(messages)
        turn = len(names) + 1
        if not names:
            return _call(turn, "webshot")
        last, observed = names[-1], seen[-1]
        if last is None or observed.lstrip().startswith(("Error:", "Invalid")):
            return _call(turn, "submit")
        shots = [k for k, n in enumerate(names) if n == "webshot"]
        webshot = _last_webshot(names, seen, messages)
        fault = diagnose(webshot)
        if last == "edit_file":
            return _call(turn, "webshot")
        if last == "webshot":
            earlier = diagnose(seen[shots[-2]]) if len(shots) > 1 else None
            if fault is None or names.count("edit_file") >= self.max_fixes or (earlier == fault and
                                                                              "edit_file" in names[shots[-2]:]):
                return _call(turn, "submit")
            if fault == "import":
                return _call(turn, "list_files")
            if fault == "mount":
                return _call(turn, "search_files", pattern="getElementById")
            return _call(turn, "search_files", pattern="id=")
        fix = None
        if fault == "import" and last == "list_files":
            fix = fix_import(webshot, observed)
        elif fault == "mount" and last == "search_files":
            return _call(turn, "view_file", path="index.html")
        elif fault == "mount" and last == "view_file":
            fix = fix_mount(seen[-2], observed)
        elif fault == "anchors" and last == "search_files":
            fix = fix_anchor(webshot, observed)
        if fix is None:
            return _call(turn, "submit")
        return _call(turn, fix.name, **fix.arguments)
