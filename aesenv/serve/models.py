"""What travels over the wire: OpenEnv's typed Action, Observation and State, specialised for
aesenv (pydantic, so `/schema` describes them and bad input is a typed validation error).

An action is one of: `text` (a single-turn answer, or a refine/project turn in the text form of
a tool call), `tool_calls` (OpenAI-native function calls, as an assistant message carries them),
or `message` (a whole assistant message: its `tool_calls`, else its text content).

An observation carries the chat messages the agent reads next (images as OpenAI `image_url`
parts with data: URLs), the env's own observation (a single-turn env's dict of texts, a refine
env's text), reward, done and truncated, and `info`: the env's info dict, the full reward record
(`info["record"]`: every channel's status, score, mask and payload) included. OpenEnv's wire
format leaves an Observation's `metadata` out, so everything a remote client needs is in fields;
`metadata` mirrors `info` for in-process users. Our own failures are never a number: `reward` is
None and `reward_valid` False (a local env's NaN), and `error` says what went wrong.
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from aesenv.artifact import MAX_ARTIFACT_BYTES

MAX_TOOL_CALLS = 64  # per action; the env itself runs at most `RefineBudget.max_calls_per_turn`


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=200)
    arguments: str | dict[str, Any] = Field(default="{}")  # OpenAI sends a JSON string; a dict is taken too


class NativeToolCall(BaseModel):
    """One OpenAI-native tool call: `{"id", "type": "function", "function": {"name", "arguments"}}`."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(default="", max_length=200)
    type: Literal["function"] = "function"
    function: FunctionCall


class AesAction(Action):
    """One turn of the agent (exactly one of `text`, `tool_calls`, `message`)."""

    text: str | None = Field(default=None, max_length=MAX_ARTIFACT_BYTES,
                             description="a single-turn answer, or one tool call in the text form")
    tool_calls: list[NativeToolCall] | None = Field(default=None, max_length=MAX_TOOL_CALLS,
                                                    description="OpenAI-native function calls")
    message: dict[str, Any] | None = Field(default=None, description="a whole assistant message")

    @model_validator(mode="after")
    def _one(self) -> AesAction:
        given = [name for name in ("text", "tool_calls", "message") if getattr(self, name) is not None]
        if len(given) != 1:
            # PydanticCustomError, not ValueError: OpenEnv sends `errors()` back as JSON, and a
            # ValueError in their context would not serialise (the session would end instead)
            raise PydanticCustomError("one_action", "give exactly one of text, tool_calls, message (got {given})",
                                      {"given": ", ".join(given) or "none"})
        return self

    def for_env(self) -> str | dict[str, Any]:
        """What an aesenv core's `step` takes (`aesenv.envs.tools.parse_action`)."""
        if self.text is not None:
            return self.text
        if self.tool_calls is not None:
            return {"role": "assistant", "content": None,
                    "tool_calls": [call.model_dump(mode="json") for call in self.tool_calls]}
        return {**self.message, "role": "assistant"}


class ErrorInfo(BaseModel):
    """A typed error: `code` is stable (clients branch on it), `message` is for people. `infra`:
    our side failed (never the agent's fault, never a score)."""

    model_config = ConfigDict(extra="forbid")
    code: Literal["no_episode", "episode_over", "bad_task", "bad_action", "step_timeout", "session_expired",
                  "session_closed", "infra"]
    message: str = Field(max_length=2000)
    infra: bool = False


class AesObservation(Observation):
    env_id: str = ""
    task_id: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list,
                                           description="chat messages to append to the conversation")
    observation: dict[str, str] | None = Field(default=None, description="a single-turn env's dict of texts")
    text: str | None = Field(default=None, description="a refine env's text observation (images as [image])")
    tools: list[dict[str, Any]] | None = Field(default=None, description="the tools (OpenAI schema), at reset")
    truncated: bool = False
    reward_valid: bool = True  # False: our infrastructure failed and `reward` is None (never a fake 0)
    info: dict[str, Any] = Field(default_factory=dict)
    error: ErrorInfo | None = None


class AesState(State):
    env_id: str = ""
    task_id: str | None = None
    turn: int = 0
    done: bool = True
    active_sessions: int = 0
