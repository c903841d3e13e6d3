"""`OpenAIChatPolicy`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, a gateway) as a policy.

Single-turn it answers the task's prompt (`generate`); in a refine episode it is an agent
(`act`): the conversation so far in, one assistant message out, with native tool calls
(`tool_mode="native"`, the tools' schemas sent as `tools`) or the text form written in the
message (`tool_mode="text"`, for servers and models without tool calling). Only the latest
`keep_images` images are sent each turn (0 for text-only models). A reference-conditioned task's
reference is an image in the env's first user turn; a single-turn env's chat prompt with it
(`info["messages"]` of its `reset`) is answered with `act` as well, since `generate` builds a
text prompt from the task alone. Transport, retries, backoff, rate limits and token accounting
are the judge client's (`ChatClient.complete_chat`).
"""

from __future__ import annotations

from typing import Any, Literal

from aesenv.kinds import kind_of
from aesenv.llm.client import ChatClient, ClientConfig, Usage
from aesenv.tasks import Task
from policies.base import register_policy

ToolMode = Literal["native", "text"]


def without_images(messages: list[dict], keep_last: int = 0) -> list[dict]:
    """The conversation with all but the last `keep_last` images replaced by a short note: a
    text-only model sees none, a VLM the recent screens (earlier ones cost tokens every turn)."""
    budget = keep_last
    out = []
    for m in reversed(messages):
        content = m.get("content")
        if isinstance(content, list) and any(p.get("type") != "text" for p in content):
            parts = []
            for part in reversed(content):
                if part.get("type") == "text" or budget > 0:
                    budget -= part.get("type") != "text"
                    parts.append(part)
                else:
                    parts.append({"type": "text", "text": "[image omitted]"})
            parts.reverse()
            content = parts if any(p.get("type") != "text" for p in parts) else "\n".join(p["text"] for p in parts)
        out.append({**m, "content": content})
    out.reverse()
    return out


@register_policy("openai")
class OpenAIChatPolicy:
    """`openai:<model>`; the endpoint is `OPENAI_BASE_URL` (or `base_url=`), the key `OPENAI_API_KEY`."""

    def __init__(self, model: str = "", *, tool_mode: ToolMode = "native", keep_images: int = 3,
                 **client_options: Any) -> None:
        if not model:
            raise ValueError("the openai policy needs a model: openai:<model>")
        options = {"max_tokens": 8192, "cache_dir": None, **client_options}
        self.client = ChatClient(ClientConfig(model=model, **options))
        self.tool_mode = tool_mode
        self.keep_images = keep_images  # the most recent images sent each turn; 0 for text-only models
        self.name = f"openai:{model}"

    @property
    def usage(self) -> Usage:
        """Requests, retries, tokens (and dollars when priced) over every call so far."""
        return self.client.usage

    async def generate(self, task: Task) -> str:
        reply = await self.act([{"role": "user", "content": kind_of(task).request(task)}])
        return reply.get("content") or ""

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        sent = without_images(messages, self.keep_images)
        reply, _ = await self.client.complete_chat(sent, tools=tools if self.tool_mode == "native" else None)
        return reply

    async def close(self) -> None:
        await self.client.close()
