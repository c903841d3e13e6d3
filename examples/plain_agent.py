"""An agent that plays an aesenv episode with nothing but a WebSocket (no aesenv, no OpenEnv):
one OpenDesign prompt on `AesWeb-v0`, answered by an OpenAI-compatible model when OPENAI_BASE_URL
is set, else by a fixed page. Protocol: send {"type": "reset"|"step", "data": ...}, read
{"type": "observation", "data": {"observation": {...}, "reward": r, "done": d}}.

    python examples/plain_agent.py http://127.0.0.1:8000 '{"id": "od-1", "prompt": "...", "category": "Website"}'
"""

import asyncio
import json
import os
import sys
import urllib.request

import websockets  # pip install websockets


def answer(messages: list[dict]) -> str:
    base = os.environ.get("OPENAI_BASE_URL")
    if not base:  # no model: a small, honest page
        return ("```html\n<!doctype html><html><head><title>Studio</title></head><body style='font-family:sans-serif;"
                "margin:40px'><h1>Studio</h1><p>We design calm, readable pages.</p><button>Contact us</button>"
                "</body></html>\n```")
    body = json.dumps({"model": os.environ.get("MODEL", "gpt-4o-mini"), "messages": messages}).encode()
    request = urllib.request.Request(f"{base.rstrip('/')}/chat/completions", data=body, headers={
        "content-type": "application/json", "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"})
    return json.loads(urllib.request.urlopen(request, timeout=600).read())["choices"][0]["message"]["content"]


async def main(url: str, task: dict) -> float | None:
    headers = {"Authorization": f"Bearer {os.environ['AESENV_SERVE_TOKEN']}"} if "AESENV_SERVE_TOKEN" in os.environ else None
    async with websockets.connect(url.replace("http", "ws", 1) + "/AesWeb-v0/ws", max_size=2**26,
                                  additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"task": task}}))
        first = json.loads(await ws.recv())["data"]["observation"]
        await ws.send(json.dumps({"type": "step", "data": {"text": answer(first["messages"])}}))
        last = json.loads(await ws.recv())["data"]
        record = last["observation"]["info"]["record"]
        print(json.dumps({"reward": last["reward"], "done": last["done"],
                          "channels": {k: v["score"] for k, v in record["channels"].items()}}))
        return last["reward"]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))
