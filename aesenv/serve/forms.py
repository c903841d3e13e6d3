"""What a step's action means on each kind of served env, one reader per mode (a registry, so a
new mode adds a reader and a description, not a branch).

- `single` (AesWeb-v0, AesPlot-v0): the action is one answer, in any of the three forms: `text`
  (the reply), `message` (an assistant message: its text content, or its one `answer` tool call)
  or `tool_calls` (exactly one call of the `answer` tool, `{"content": <the reply>}`). Anything
  else is `BadAction`: the client's mistake, said as such, and the episode goes on (the one step
  is not used up).
- `refine` (the refine and project envs) and `webdev`: the action goes to the env as the core
  takes it (text form, or an assistant message with native calls); a malformed call is the env's
  own observation and counts against the turn budget, as it does locally.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aesenv.envs.tools import tool_schemas
from aesenv.kinds import mode_of
from aesenv.wire import AesAction
from aesenv.serve.webdev import WEBDEV_ENV_ID
from aesenv.text import shown

ANSWER_TOOL_NAME = "answer"
ANSWER_TOOL = tool_schemas({ANSWER_TOOL_NAME: (
    "Give your answer: the whole page (HTML) or plot script (Python), fenced or bare. It is rendered and scored; "
    "there is one answer per episode.", {"content": "the whole answer"})})[0]


@dataclass(frozen=True)
class BadAction:
    """Why an action cannot be used on this env (the client's fault; the episode goes on)."""

    message: str


def _message_text(content: Any) -> str | None:
    """An assistant message's text: a string, or its text parts joined; None when it has none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        texts = [t for t in texts if isinstance(t, str)]
        return "\n".join(texts) if texts else None
    return None


def _answer_call(calls: Any) -> str | BadAction:
    """The `content` of exactly one `answer` call (OpenAI-native spelling)."""
    if not isinstance(calls, list) or len(calls) != 1:
        count = len(calls) if isinstance(calls, list) else type(calls).__name__
        return BadAction(f"a single-turn env takes exactly one `{ANSWER_TOOL_NAME}` tool call, not {count}")
    call = calls[0] if isinstance(calls[0], dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = function.get("name")
    if name != ANSWER_TOOL_NAME:
        return BadAction(f"unknown tool {shown(str(name), 80)!r}: a single-turn env has one tool, "
                         f"`{ANSWER_TOOL_NAME}` with argument `content`")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            return BadAction(f"`{ANSWER_TOOL_NAME}`: arguments are not valid JSON ({shown(str(exc), 200)})")
    if not isinstance(arguments, dict) or not isinstance(arguments.get("content"), str):
        return BadAction(f"`{ANSWER_TOOL_NAME}` takes one string argument, `content` (the whole answer)")
    return arguments["content"]


def single_answer(action: AesAction) -> str | BadAction:
    """The answer text a single-turn env scores, from any of the three forms."""
    if action.text is not None:
        return action.text
    if action.tool_calls is not None:
        return _answer_call([call.model_dump(mode="json") for call in action.tool_calls])
    message = action.message or {}
    if message.get("tool_calls"):
        return _answer_call(message["tool_calls"])
    text = _message_text(message.get("content"))
    if text is None:
        return BadAction("the message holds no answer: give its text as `content` (a string or text parts), or "
                         f"one `{ANSWER_TOOL_NAME}` tool call")
    return text


def as_the_core_takes_it(action: AesAction) -> str | dict[str, Any]:
    """Multi-turn envs: the core reads every spelling itself (`aesenv.envs.tools.parse_action`)."""
    return action.for_env()


@dataclass(frozen=True)
class Forms:
    """How one mode reads an action, and what `/schema` says about it."""

    read: Callable[[AesAction], Any]
    described: dict[str, Any]


_SINGLE = {
    "text": {"means": "the reply: the page or plot script (fenced or bare)", "example": {"text": "```html\n...\n```"}},
    "message": {"means": "an assistant message: its text `content` (string or text parts) is the reply, or its "
                         f"one `{ANSWER_TOOL_NAME}` tool call",
                "example": {"message": {"role": "assistant", "content": "```html\n...\n```"}}},
    "tool_calls": {"means": f"exactly one call of `{ANSWER_TOOL_NAME}`, arguments {{\"content\": reply}}",
                   "example": {"tool_calls": [{"id": "c1", "type": "function", "function": {
                       "name": ANSWER_TOOL_NAME, "arguments": json.dumps({"content": "```html\n...\n```"})}}]}},
    "tools": [ANSWER_TOOL],
    "wrong_form": "error `bad_action`, `done` false: the episode goes on and the step is not used up",
}
_MULTI = {
    "text": {"means": "one tool call in the text form (`<tool_call name=\"render\"></tool_call>`, or Hermes JSON "
                      "inside <tool_call>)", "example": {"text": "<tool_call name=\"render\"></tool_call>"}},
    "message": {"means": "an assistant message: its native `tool_calls`, else its text content in the text form",
                "example": {"message": {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "render", "arguments": "{}"}}]}}},
    "tool_calls": {"means": "OpenAI-native calls of the tools listed at reset (`tools`); several per step run in order",
                   "example": {"tool_calls": [{"id": "c1", "type": "function",
                                               "function": {"name": "submit", "arguments": "{}"}}]}},
    "wrong_form": "the env's own observation (`Invalid action: ...`, or a tool message per bad call): it counts "
                  "as a turn, as it does locally",
}

def served_mode(env_id: str) -> str:
    """How a served env plays, the key of `FORMS`: `single`, `refine` or `webdev`."""
    return "webdev" if env_id == WEBDEV_ENV_ID else mode_of(env_id)[1]


FORMS: dict[str, Forms] = {"single": Forms(single_answer, _SINGLE), "refine": Forms(as_the_core_takes_it, _MULTI),
                           "webdev": Forms(as_the_core_takes_it, _MULTI)}

__all__ = ["ANSWER_TOOL", "ANSWER_TOOL_NAME", "FORMS", "BadAction", "Forms", "served_mode", "single_answer"]
