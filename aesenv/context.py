"""Keeping a long episode inside the policy's context (WebCoder's context management).

An episode that develops an artifact over many turns outgrows any context window. Three measures,
mildest first, each configured in `ContextConfig`:

- every tool output is already bounded by the env (`RefineBudget.max_observation_chars`);
- `fold`: tool results older than the most recent few become one-line stubs (the artifact itself
  stays in the env, so the agent can look again);
- `compact`: when the context would exceed `compact_at_tokens`, the policy writes a summary of its
  progress (`SUMMARY_REQUEST`), and the context is rebuilt from the system prompt, the task, that
  summary and the most recent turns. Each compaction ends a development segment: the unit that
  segment credit assignment (`train.credit`) rewards by the change in Φ it brought.

Pure functions over chat messages, shared by `aesenv.trajectory.run_episode` and the veRL agent loop.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

SUMMARY_REQUEST = (
    "Your context is nearly full and will be cleared. Write a handover note for yourself, in at most "
    "{words} words, that lets you continue without the conversation so far: what the task asks for, "
    "what you have built and which files hold it, what the last render or run showed (errors included), "
    "what is still missing or broken, and the next step you had planned. Reply with the note only; "
    "do not call a tool."
)
SUMMARY_HEADER = "Handover note from the earlier part of this episode (the files you wrote are still there):"
FOLDED = "[folded: an earlier result of {name}, {chars} characters; run the tool again to see it]"


class ContextConfig(BaseModel):
    """When and how the context is shortened. The defaults suit a 32k-token policy context."""

    fold_after: int = Field(default=4, ge=0, description="tool results kept whole; older ones become stubs")
    compact_at_tokens: int = Field(default=24_000, ge=256, description="rebuild once the context would pass this")
    keep_recent_turns: int = Field(default=2, ge=0, description="assistant turns (with their results) kept after a rebuild")
    summary_words: int = Field(default=300, ge=20)
    max_summary_chars: int = Field(default=4000, ge=200, description="a runaway summary is cut to this")


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A tokenizer-free estimate (4 characters a token, an image ~1k): for the recorder; the veRL
    loop counts real tokens instead."""
    total = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            for part in content:
                total += len(part.get("text", "")) // 4 if part.get("type") == "text" else 1000
        elif content:
            total += len(str(content)) // 4
        if m.get("tool_calls"):
            total += len(json.dumps(m["tool_calls"])) // 4
        total += 4
    return total


def _is_result(message: dict[str, Any]) -> bool:
    return message.get("role") == "tool"


def fold(messages: list[dict[str, Any]], config: ContextConfig) -> list[dict[str, Any]]:
    """The messages with all but the `fold_after` most recent tool results replaced by stubs.
    Images in older user messages (renders) go too: they cost the most and are the stalest."""
    results = [i for i, m in enumerate(messages) if _is_result(m)]
    renders = [i for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)]
    old = set(results[: max(0, len(results) - config.fold_after)])
    old_renders = set(renders[: max(0, len(renders) - config.fold_after)])
    out = []
    for i, m in enumerate(messages):
        if i in old and not str(m.get("content", "")).startswith("[folded"):
            out.append({**m, "content": FOLDED.format(name=_tool_name(messages, m), chars=len(str(m.get("content") or "")))})
        elif i in old_renders:
            text = "\n".join(p.get("text", "") for p in m["content"] if p.get("type") == "text")
            out.append({**m, "content": f"{text}\n[earlier screenshot folded]"})
        else:
            out.append(m)
    return out


def _tool_name(messages: list[dict[str, Any]], result: dict[str, Any]) -> str:
    for m in messages:
        for call in m.get("tool_calls") or []:
            if call.get("id") == result.get("tool_call_id"):
                return str(call.get("function", {}).get("name", "a tool"))
    return "a tool"


def asks_for_summary(messages: list[dict[str, Any]]) -> bool:
    """Whether the last message is the handover-note request (scripted agents answer it with a note)."""
    return bool(messages) and str(messages[-1].get("content") or "").startswith(SUMMARY_REQUEST.split("{", 1)[0])


def summary_request(messages: list[dict[str, Any]], config: ContextConfig) -> list[dict[str, Any]]:
    """The context in which the policy is asked for its handover note."""
    return [*messages, {"role": "user", "content": SUMMARY_REQUEST.format(words=config.summary_words)}]


def compact(messages: list[dict[str, Any]], summary: str, config: ContextConfig) -> list[dict[str, Any]]:
    """`rebuild` with older results folded, keeping fewer recent turns when they would leave the
    new context over half the threshold (a compaction that does not shrink the context would
    only be followed by another)."""
    folded = fold(messages, config)
    for keep in range(config.keep_recent_turns, -1, -1):
        rebuilt = rebuild(folded, summary, config.model_copy(update={"keep_recent_turns": keep}))
        if estimate_tokens(rebuilt) <= config.compact_at_tokens // 2:
            break
    return rebuilt


def rebuild(messages: list[dict[str, Any]], summary: str, config: ContextConfig) -> list[dict[str, Any]]:
    """System prompt and task (the first two messages), the handover note, then the most recent
    `keep_recent_turns` assistant turns with what followed them. A kept turn starts at an
    assistant message, so no tool result is left without the call it answers."""
    head = messages[:2]
    starts = [i for i, m in enumerate(messages) if i >= 2 and m.get("role") == "assistant"]
    recent = messages[starts[-min(config.keep_recent_turns, len(starts))]:] if config.keep_recent_turns and starts else []
    note = summary.strip()[: config.max_summary_chars] or "(the policy wrote no note)"
    return [*head, {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{note}"}, *recent]
