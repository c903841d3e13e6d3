"""Which chat-completions request features a served model accepts, as a Markdown table.

    python tests/support/vllm_server.py /tmp/vllm-probe    # prints the base URL; serves until stopped
    python tests/support/vllm_probe.py http://127.0.0.1:PORT/v1 tiny-qwen2

For deciding what the clients may send to vLLM (and which refusals they must handle); each row
is one request: the feature, HTTP status, and either a short look at the answer or the error text.
"""

from __future__ import annotations

import json
import sys

import urllib.error
import urllib.request

SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10},
                                           "reason": {"type": "string", "maxLength": 40}},
          "required": ["score", "reason"], "additionalProperties": False}
TOOL = {"type": "function", "function": {"name": "render", "description": "Render the page.",
                                         "parameters": {"type": "object", "properties": {}}}}
IMAGE = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
         "AAAABJRU5ErkJggg==")
USER = [{"role": "user", "content": "Rate the page from 0 to 10."}]

CASES: dict[str, dict] = {
    "baseline (temperature 0, max_tokens)": {},
    "temperature omitted": {"temperature": None},
    "max_completion_tokens instead of max_tokens": {"max_tokens": None, "max_completion_tokens": 16},
    "max_tokens larger than the context (8192)": {"max_tokens": 8192},
    "seed": {"seed": 7, "temperature": 1.0},
    "n=3 at temperature 1": {"n": 3, "temperature": 1.0},
    "n=3 at temperature 0": {"n": 3},
    "response_format json_object": {"response_format": {"type": "json_object"}, "max_tokens": 64},
    "response_format json_schema (strict)": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}},
        "max_tokens": 64},
    "response_format json_schema + n=3": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}},
        "max_tokens": 64, "n": 3, "temperature": 1.0},
    "structured_outputs {json: schema} (vLLM extra)": {"structured_outputs": {"json": SCHEMA}, "max_tokens": 64},
    "tools + tool_choice auto": {"tools": [TOOL], "tool_choice": "auto"},
    "tools, tool_choice omitted": {"tools": [TOOL]},
    "tools + tool_choice required": {"tools": [TOOL], "tool_choice": "required", "max_tokens": 64},
    "tools + tool_choice named function": {
        "tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "render"}}, "max_tokens": 64},
    "tools + tool_choice none": {"tools": [TOOL], "tool_choice": "none"},
    "history with assistant tool_calls and a tool message": {"tools": [TOOL], "messages": USER + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "render", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "rendered: 0 errors"}]},
    "image_url part in content (text-only model)": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Rate it."}, {"type": "image_url", "image_url": {"url": IMAGE, "detail": "high"}}]}]},
    "stream": {"stream": True},
    "stream with usage (stream_options)": {"stream": True, "stream_options": {"include_usage": True}},
    "logprobs + top_logprobs": {"logprobs": True, "top_logprobs": 2},
    "Authorization header with any key (server started without --api-key)": {"_headers": {"Authorization": "Bearer x"}},
}


def _post(url: str, body: dict, headers: dict) -> tuple[int, str]:
    """The raw exchange (no client in between: the probe is about what the server itself takes)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=180) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def probe(base_url: str, model: str, name: str, extra: dict) -> tuple[str, int, str]:
    extra = dict(extra)
    headers = extra.pop("_headers", {})
    body = {"model": model, "messages": USER, "temperature": 0.0, "max_tokens": 16, **extra}
    body = {k: v for k, v in body.items() if v is not None}
    status, text = _post(f"{base_url}/chat/completions", body, headers)
    if status != 200:
        try:
            detail = json.loads(text).get("error", {}).get("message") or text
        except ValueError:
            detail = text
        return name, status, "refused: " + " ".join(str(detail).split())[:300]
    if body.get("stream"):
        chunks = [line for line in text.splitlines() if line.startswith("data: ")]
        usage = [json.loads(c[6:]).get("usage") for c in chunks if c != "data: [DONE]"]
        return name, 200, f"{len(chunks)} SSE chunks, ends with [DONE]: {chunks[-1] == 'data: [DONE]'}, " \
                          f"usage chunk: {any(usage)}"
    payload = json.loads(text)
    shown = []
    for c in payload["choices"]:
        m = c["message"]
        calls = [f"{t['function']['name']}({t['function']['arguments']})" for t in m.get("tool_calls") or []]
        shown.append(f"finish={c['finish_reason']} content={(m.get('content') or '')[:60]!r}"
                     + (f" tool_calls={calls}" if calls else "") + (" logprobs" if c.get("logprobs") else ""))
    if "response_format" in body or "structured_outputs" in body:
        valid = []
        for c in payload["choices"]:
            try:
                valid.append(isinstance(json.loads(c["message"]["content"]), dict))
            except ValueError:
                valid.append(False)
        shown.append(f"parses as a JSON object: {valid}")
    return name, 200, f"{len(payload['choices'])} choice(s); " + "; ".join(shown)


def main() -> None:
    base_url, model = sys.argv[1].rstrip("/"), sys.argv[2]
    print("| request feature | status | result |\n|---|---|---|")
    for name, extra in CASES.items():
        row = probe(base_url, model, name, extra)
        print(f"| {row[0]} | {row[1]} | {row[2].replace('|', '/')} |", flush=True)


if __name__ == "__main__":
    main()
