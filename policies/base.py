"""The policy contract and registry are the library's (`aesenv.policy`); policies here register
into it and are found by the `aesenv.policies` entry points."""

import json

from aesenv.policy import POLICIES, Agent, Policy, PolicyFactory, make_policy, register_policy

__all__ = ["POLICIES", "Agent", "Policy", "PolicyFactory", "make_policy", "message_text", "register_policy",
           "tool_call_message"]


def message_text(message: dict) -> str:
    """A chat message's text (its text parts, for a message with images)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def tool_call_message(call_id: str, name: str, **arguments: str) -> dict:
    """An assistant message making one native tool call (what scripted agents answer with)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
