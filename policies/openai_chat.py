"""`OpenAIChatPolicy`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, a gateway) as a policy.

Single-turn it answers the task's prompt (`generate`); in a refine episode it is an agent
(`act`): the conversation so far in, one assistant message out, with native tool calls
(`tool_mode="native"`, the tools' schemas sent as `tools`) or the text form written in the
message (`tool_mode="text"`, for servers and models without tool calling). Transport, retries,
backoff, rate limits and token accounting are the judge client's (`ChatClient.complete_chat`).
"""

from __future__ import annotations

from typing import Any, Literal

from aesenv.envs.refine import task_request
from aesenv.judges.client import ChatClient, ClientConfig, Usage
from aesenv.tasks import Task
from policies.base import register_policy

ToolMode = Literal["native", "text"]


def without_images(messages: list[dict]) -> list[dict]:
    """The conversation for a text-only model: image parts become a short note."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") if p.get("type") == "text" else "[image omitted]" for p in content)
        out.append({**m, "content": content})
    return out


@register_policy("openai")
class OpenAIChatPolicy:
    """`openai:<model>`; the endpoint is `OPENAI_BASE_URL` (or `base_url=`), the key `OPENAI_API_KEY`."""

    def __init__(self, model: str = "", *, tool_mode: ToolMode = "native", images: bool = True,
                 **client_options: Any) -> None:
        if not model:
            raise ValueError("the openai policy needs a model: openai:<model>")
        options = {"max_tokens": 8192, "cache_dir": None, **client_options}
        self.client = ChatClient(ClientConfig(model=model, **options))
        self.tool_mode = tool_mode
        self.images = images
        self.name = f"openai:{model}"

    @property
    def usage(self) -> Usage:
        """Requests, retries, tokens (and dollars when priced) over every call so far."""
        return self.client.usage

    async def generate(self, task: Task) -> str:
        reply = await self.act([{"role": "user", "content": task_request(task)}])
        return reply.get("content") or ""

    async def act(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        sent = messages if self.images else without_images(messages)
        reply, _ = await self.client.complete_chat(sent, tools=tools if self.tool_mode == "native" else None)
        return reply

    async def close(self) -> None:
        await self.client.close()
