"""A session's tools through OpenEnv's MCP convention (`/mcp`: JSON-RPC `tools/list` and
`tools/call`, over HTTP or a WebSocket, or as a `/ws` message of type `mcp`).

OpenEnv looks for an env's `mcp_server` and, for a FastMCP-like one, lists `get_tools()` and calls
a tool's `fn(**arguments)`. `SessionTools` is that shape over the session itself, with no second
tool implementation: each call is a step of the session's env with one native tool call (so it
counts, is bounded and is scored exactly as a `/ws` step is), and `start_episode` is its reset
(the names `reset`, `step`, `state` and `close` are OpenEnv's own). A call returns the step's
result as `/ws` sends it: `{observation, reward, done}`.

Over HTTP without a session each call gets a fresh env (OpenEnv's rule), so a tool call there
answers `no_episode`: open a session (`openenv/session/create`, then pass `session_id`), or use
the `/ws` or `/mcp` WebSocket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from openenv.core.env_server.serialization import serialize_observation

from aesenv.serve.forms import ANSWER_TOOL
from aesenv.wire import AesAction, ResetParams

START_TOOL = "start_episode"


@dataclass
class McpTool:
    """One tool as OpenEnv's MCP handler reads it."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Awaitable[dict[str, Any]]] = field(repr=False)


class SessionTools:
    """The `mcp_server` of one served session (`AesServedEnv.mcp_server`)."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def schemas(self) -> list[dict[str, Any]]:
        """The env's tools (OpenAI schemas): the single-turn `answer`, or the refine tools."""
        return [ANSWER_TOOL] if self.env.mode == "single" else self.env.hub.tools(self.env.env_id)

    async def get_tools(self) -> dict[str, McpTool]:
        tools = {START_TOOL: McpTool(START_TOOL, "Start a new episode in this session: a task id (GET /tasks) or a "
                                                "whole task, or a seed; `options` as reset takes them.",
                                     _start_schema(), self._start)}
        for schema in self.schemas():
            function = schema["function"]
            tools[function["name"]] = McpTool(function["name"], function.get("description", ""),
                                              function.get("parameters") or {}, self._caller(function["name"]))
        return tools

    async def _start(self, **arguments: Any) -> dict[str, Any]:
        return serialize_observation(await self.env.reset_async(**arguments))

    def _caller(self, name: str) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def call(**arguments: Any) -> dict[str, Any]:
            action = AesAction(tool_calls=[{"id": f"mcp-{name}", "type": "function",
                                            "function": {"name": name, "arguments": arguments}}])
            return serialize_observation(await self.env.step_async(action))

        call.__name__ = name
        return call


def _start_schema() -> dict[str, Any]:
    schema = ResetParams.model_json_schema()
    schema.get("properties", {}).pop("episode_id", None)
    return schema


__all__ = ["START_TOOL", "McpTool", "SessionTools"]
