"""A local OpenAI-compatible chat-completions server that answers from a script.

It stands in for a remote VLM endpoint (OpenAI, vLLM, a gateway) so that the judge client, the
VLM static judge and the VLM web agent are tested over real HTTP: real request bodies with
`image_url` data-URL parts, `n`, `response_format`, real status codes, `Retry-After`, timeouts
and dropped connections.

Scripting (the `openai_server` fixture gives a fresh server per test):

    server.script(                       # answers, consumed one per request, in order
        {"alignment": 30, ...},          # a dict -> its JSON as the answer text (all n choices)
        "not json at all",               # a str  -> that text
        answer({...}, usage=(1000, 200)),  # fixed token counts (default: estimated from lengths)
        choices("{...}", "{...}"),       # one text per choice (for n > 1)
        http_error(429, retry_after=1),  # an HTTP error status (+ Retry-After header)
        slow(5.0, then={...}),           # answer only after 5 s (longer than a client timeout)
        drop(),                          # close the connection without answering
        tool_calls(("render", {})),      # a native tool-call reply (content None, finish "tool_calls")
        lambda req: {...},               # a function of the parsed request -> any of the above
    )
    server.default = lambda req: {...}   # used once the script is empty (default: HTTP 500)
    server.honour_n = False              # behave like servers that ignore `n` (one choice)

Every request is recorded in `server.requests` as a `ChatRequest` (body, headers, decoded
images, text, arrival time), so tests can assert what arrived and that a cached call made no
request; `server.max_in_flight` is the most requests it was answering at once.
"""

from __future__ import annotations

import base64
import binascii
import collections
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union
from urllib.parse import urlsplit

import pytest


@dataclass
class ChatRequest:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]  # names lower-cased: HTTP header names are case-insensitive
    body: dict[str, Any]
    images: list[bytes] = field(default_factory=list)
    image_mimes: list[str] = field(default_factory=list)
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def n(self) -> int:
        return int(self.body.get("n") or 1)

    @property
    def text(self) -> str:
        """All text of all messages, joined (for asserting on prompts)."""
        parts = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [p.get("text", "") for p in content if p.get("type") == "text"]
        return "\n".join(parts)


@dataclass
class Reply:
    """What the server does for one request. Build it with the helpers below."""

    texts: list[str] | None = None  # None: repeat `text` for every requested choice
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); default: estimated
    tool_calls: list[dict[str, Any]] | None = None  # native tool calls in the assistant message


Scripted = Union[Reply, str, dict, Callable[[ChatRequest], Any]]


def answer(value: str | dict, usage: tuple[int, int] | None = None) -> Reply:
    return Reply(text=value if isinstance(value, str) else json.dumps(value), usage=usage)


def choices(*values: str | dict) -> Reply:
    return Reply(texts=[v if isinstance(v, str) else json.dumps(v) for v in values])


def http_error(status: int, retry_after: float | str | None = None, message: str = "scripted error") -> Reply:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, headers=headers, text=message)


def slow(seconds: float, then: Reply | str | dict = "{}") -> Reply:
    reply = then if isinstance(then, Reply) else answer(then)
    reply.delay_s = seconds
    return reply


def drop() -> Reply:
    return Reply(drop=True)


def tool_calls(*calls: tuple[str, dict], text: str | None = None) -> Reply:
    """An assistant message calling tools natively: `(name, arguments)` pairs, ids call-1, call-2, ..."""
    return Reply(text=text or "", tool_calls=[
        {"id": f"call-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls, 1)])


def _as_reply(item: Scripted, request: ChatRequest | None) -> Reply:
    if callable(item) and not isinstance(item, Reply):
        item = item(request)
    if isinstance(item, Reply):
        return item
    return answer(item)


class OpenAIServer:
    """Start with `start()` (or use as a context manager); `url` is the base URL (ends in /v1)."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []
        self.default: Scripted = lambda _: http_error(500, message="test server: script exhausted")
        self.honour_n = True
        self.max_in_flight = 0
        self._in_flight = 0
        self._script: collections.deque[Scripted] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *items: Scripted) -> "OpenAIServer":
        with self._lock:
            self._script.extend(items)
        return self

    @property
    def pending(self) -> int:
        """Scripted answers not yet consumed."""
        return len(self._script)

    @property
    def completions(self) -> list[ChatRequest]:
        return [r for r in self.requests if urlsplit(r.path).path.endswith("/chat/completions")]

    def start(self) -> "OpenAIServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in `slow` replies
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "OpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_reply(self, request: ChatRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            item = self._script.popleft() if self._script else self.default
        return _as_reply(item, request)

    def _track(self, delta: int) -> None:
        with self._lock:
            self._in_flight += delta
            self.max_in_flight = max(self.max_in_flight, self._in_flight)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: OpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout): nothing to deliver

    def _send_stream(self, request: ChatRequest, texts: list[str], reply: Reply, usage: tuple[int, int]) -> None:
        """A `stream: true` answer as server-sent events (what streaming clients such as verifiers'
        read): one content chunk per choice, a closing chunk with the finish reason, the usage
        chunk, then `[DONE]`."""
        base = {"id": f"chatcmpl-test-{len(self.owner.requests)}", "object": "chat.completion.chunk", "created": 0,
                "model": request.body.get("model", "")}
        events = []
        for i, text in enumerate(texts):
            delta: dict[str, Any] = {"role": "assistant", "content": text}
            if reply.tool_calls:
                delta["tool_calls"] = [{"index": k, **call} for k, call in enumerate(reply.tool_calls)]
            events.append({**base, "choices": [{"index": i, "delta": delta, "finish_reason": None}]})
            events.append({**base, "choices": [{"index": i, "delta": {},
                                                "finish_reason": "tool_calls" if reply.tool_calls else "stop"}]})
        events.append({**base, "choices": [], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                                        "total_tokens": sum(usage)}})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind = "rate_limit_error" if status == 429 else "invalid_request_error" if status < 500 else "server_error"
        self._send_json(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not urlsplit(self.path).path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            request = self._parse(raw)
        except ValueError as exc:
            self._error(400, str(exc))
            return
        self.owner._track(+1)
        try:
            self._reply(request, self.owner._next_reply(request))
        finally:
            self.owner._track(-1)

    def _reply(self, request: ChatRequest, reply: Reply) -> None:
        if reply.delay_s and self.owner._stopping.wait(reply.delay_s):
            return
        if reply.drop:
            self.close_connection = True
            return
        if reply.status != 200:
            self._error(reply.status, reply.text, reply.headers)
            return
        n = request.n if self.owner.honour_n else 1
        texts = reply.texts if reply.texts is not None else [reply.text] * n
        prompt_tokens, completion_tokens = reply.usage or (
            _estimate_tokens(request.text) + 85 * len(request.images), sum(_estimate_tokens(t) for t in texts))
        if request.body.get("stream"):
            self._send_stream(request, texts, reply, (prompt_tokens, completion_tokens))
            return
        self._send_json(200, {
            "id": f"chatcmpl-test-{len(self.owner.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": request.body.get("model", ""),
            "choices": [{"index": i, "message": _message(t, reply.tool_calls),
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
                        for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, reply.headers)

    def _parse(self, raw: bytes) -> ChatRequest:
        """Check the body the way a strict server would, and decode inline images."""
        try:
            body = json.loads(raw)
        except ValueError:
            raise ValueError("request body is not JSON") from None
        if not isinstance(body, dict) or not body.get("model"):
            raise ValueError("'model' is required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("'messages' must be a non-empty list")
        if "n" in body and (not isinstance(body["n"], int) or body["n"] < 1):
            raise ValueError("'n' must be a positive integer")
        response_format = body.get("response_format")
        if response_format is not None and response_format.get("type") not in ("text", "json_object", "json_schema"):
            raise ValueError("unsupported response_format")
        request = ChatRequest(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
        for message in messages:
            if message.get("role") not in ("system", "user", "assistant", "tool"):
                raise ValueError(f"bad role {message.get('role')!r}")
            if message.get("role") == "tool" and not message.get("tool_call_id"):
                raise ValueError("a tool message needs 'tool_call_id'")
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "image_url":
                    mime, data = _decode_data_url(part.get("image_url", {}).get("url", ""))
                    request.images.append(data)
                    request.image_mimes.append(mime)
                elif part.get("type") != "text":
                    raise ValueError(f"unsupported content part {part.get('type')!r}")
        return request


def _message(text: str, calls: list[dict[str, Any]] | None) -> dict[str, Any]:
    if not calls:
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": text or None, "tool_calls": calls}


def _decode_data_url(url: str) -> tuple[str, bytes]:
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError("image_url must be a base64 data: URL (the test server has no network)")
    header, _, data = url.partition(";base64,")
    try:
        return header[len("data:"):], base64.b64decode(data, validate=True)
    except binascii.Error:
        raise ValueError("image_url carries invalid base64") from None


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server
