"""What travels over the wire between `aesenv serve` and its clients (`aesenv.envs.remote`), in
one module below both: OpenEnv's typed Action, Observation and State, specialised for aesenv
(pydantic, so `/schema` describes them and bad input is a typed validation error).

An action is one of: `text` (a single-turn answer, or a refine/project turn in the text form of
a tool call), `tool_calls` (OpenAI-native function calls, as an assistant message carries them),
or `message` (a whole assistant message: its `tool_calls`, else its text content).

An observation carries the chat messages the agent reads next (images as OpenAI `image_url`
parts with data: URLs), the env's own observation (a single-turn env's dict of texts, a refine
env's text), reward, done and truncated, and `info`: the env's info dict, the full reward record
(`info["record"]`: every channel's status, score, mask and payload) included. OpenEnv's wire
format leaves an Observation's `metadata` out, so everything a remote client needs is in fields;
`metadata` mirrors `info` for in-process users. Our own failures are never a number: `reward` is
None and `reward_valid` False (a local env's NaN), and `error` says what went wrong; an error that
does not end the episode (`no_episode`, `bad_task`, `bad_options`, `bad_action`) says `done` false.

What a reset takes (`ResetParams`: a task id, a whole task, or a seed, and the session's
`SessionOptions`), the stateless score call (`ScoreRequest` → `ScoreResponse`), a page of the
task list (`TaskPage`) and the session's state (`AesState`) are typed here too, so `/schema`
describes every message a client sends or reads.
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
    code: Literal["no_episode", "episode_over", "bad_task", "bad_options", "bad_action", "step_timeout",
                  "session_expired", "session_closed", "infra"]
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


ENDS_EPISODE = {"episode_over": True, "step_timeout": True, "session_expired": True, "session_closed": True,
                "infra": True, "no_episode": False, "bad_task": False, "bad_options": False, "bad_action": False}
"""Whether an error code means the episode is over (`done` true): the others leave the session as it was."""


class SessionOptions(BaseModel):
    """How a session's observations come back, chosen at reset (`options`). Defaults: the server's
    reward aggregate, images in full, the record's frames inline."""

    model_config = ConfigDict(extra="forbid")
    reward: Literal["paper", "normalized"] | None = Field(
        default=None, description="the scale of `reward`: `paper` (AesCoder's Eq. 1, 0-100 for a good page) or "
                                  "`normalized` (the weighted mean of the channels' [0, 1] scores); default: the "
                                  "server's configured aggregate")
    images: Literal["full", "thumbnail", "none"] = Field(
        default="full", description="images in `messages`: as rendered, a small JPEG (at most 320 px a side), or "
                                    "left out (a text part says so)")
    frames: Literal["inline", "reference"] = Field(
        default="inline", description="the record's interaction frames (base64 JPEGs): inline, or each replaced by "
                                      "`frames/<id>`, a path under the env's URL to fetch it from (GET, while the "
                                      "server keeps it)")


TaskRef = str | dict[str, Any]


class ResetParams(BaseModel):
    """What `reset` takes (the WebSocket message's `data`, or the body of POST /reset)."""

    model_config = ConfigDict(extra="forbid")
    task: TaskRef | None = Field(default=None, description="a task id from GET /<env>/tasks, or a whole task "
                                                          "({prompt, category, ...}; `id` optional)")
    seed: int | None = Field(default=None, ge=0, description="picks the task when `task` is not given")
    episode_id: str | None = Field(default=None, max_length=255)
    options: SessionOptions = Field(default_factory=SessionOptions)


class ScoreRequest(BaseModel):
    """POST /<env>/score (single-turn envs): one answer to one task, scored without a session."""

    model_config = ConfigDict(extra="forbid")
    task: TaskRef = Field(description="a task id from GET /<env>/tasks, or a whole task ({prompt, category, ...})")
    answer: str | None = Field(default=None, max_length=MAX_ARTIFACT_BYTES, description="the model's reply text")
    action: AesAction | None = Field(default=None, description="or the reply as a step action (any form)")
    options: SessionOptions = Field(default_factory=SessionOptions)

    @model_validator(mode="after")
    def _one(self) -> ScoreRequest:
        if (self.answer is None) == (self.action is None):
            raise PydanticCustomError("one_answer", "give exactly one of answer, action", {})
        return self


class ScoreResponse(BaseModel):
    """The record and the reward of one scored answer (`reward` null and `error` set when not scored)."""

    task_id: str | None = None
    reward: float | None = None
    reward_valid: bool = False
    reward_name: str | None = None
    record: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list, description="the rendered result, as a chat message")
    error: ErrorInfo | None = None


class TaskSummary(BaseModel):
    id: str
    category: str
    prompt: str = Field(description="the task's prompt (its first 500 characters)")


class TaskPage(BaseModel):
    """GET /<env>/tasks?offset=&limit=: the env's task ids, categories and prompts, a page at a time."""

    env_id: str
    total: int
    offset: int
    limit: int
    tasks: list[TaskSummary]


class AesState(State):
    """The session's state (`state` over the WebSocket, GET /state on a fresh session)."""

    env_id: str = ""
    task_id: str | None = None
    turn: int = Field(0, description="steps taken in this episode")
    max_turns: int | None = Field(None, description="the episode's turn budget (invalid calls count); None: one step")
    done: bool = Field(True, description="no episode is running (none yet, or it has ended)")
    options: SessionOptions = Field(default_factory=SessionOptions)
    active_sessions: int = 0
