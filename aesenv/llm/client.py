"""An OpenAI-compatible chat client for judges and agents that must answer in schema-checked JSON.

Works against OpenAI, vLLM and any gateway that speaks `POST {base_url}/chat/completions`.
Why it exists instead of a plain HTTP call: a reward computed from a VLM must be cheap to
repeat, reproducible and honest about failure, so every call here

- asks for JSON and still accepts servers that ignore the request (first JSON object in the text,
  fenced or bare), validates it with a pydantic schema plus an optional `validate` hook;
- retries transport failures (connect, timeout, dropped connection, 429, 5xx) and unusable answers
  with exponential backoff and jitter, honouring `Retry-After`; after `retries` re-attempts it
  raises `JudgeError`, which callers turn into an `infra_error` (never a score of 0);
- runs under a concurrency limit and an optional requests-per-minute limit;
- caches validated answers on disk, keyed by model, messages (images by hash), sampling params and
  schema, so re-scoring the same page costs no request;
- counts requests, tokens and (given prices) dollars.

The API key is read from the environment at request time and never stored in configs, records,
logs or the cache.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import json
import logging
import os
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, Field, ValidationError

from aesenv.paths import home

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CACHE_ENV = "AESENV_JUDGE_CACHE"  # a directory, or "off" to disable the cache
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_SECRET_LIKE = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}")


def _default_base_url() -> str:
    return os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def _default_cache_dir() -> Path | None:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return None if configured.lower() in ("off", "none", "0") else Path(configured)
    return home() / "judge-cache"


class ClientConfig(BaseModel):
    """Where and how to call the model. Holds the *name* of the key's env var, never the key."""

    model: str
    base_url: str = Field(default_factory=_default_base_url)
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    retries: int = Field(default=3, ge=0, description="re-attempts after the first try")
    backoff_s: float = 1.0
    max_wait_s: float = 60.0  # longest single wait between attempts, Retry-After included
    concurrency: int = Field(default=4, ge=1)
    requests_per_minute: int | None = Field(default=None, ge=1)
    cache_dir: Path | None = Field(default_factory=_default_cache_dir)
    price_per_mtok_in: float | None = None
    price_per_mtok_out: float | None = None

    @property
    def worst_case_s(self) -> float:
        """How long one call may take with every retry used: the deadline a caller should allow."""
        return (self.retries + 1) * self.timeout_s + self.retries * self.max_wait_s

    @property
    def public_base_url(self) -> str:
        """The base URL without user info or query (which may carry credentials), for records."""
        parts = urlsplit(self.base_url)
        return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class Usage(BaseModel):
    requests: int = 0  # HTTP requests sent, failed attempts included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cache_hits: int = 0
    retries: int = 0  # attempts that failed and were retried

    def add(self, other: "Usage") -> None:
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cache_hits += other.cache_hits
        self.retries += other.retries
        if other.cost_usd is not None:
            self.cost_usd = round((self.cost_usd or 0.0) + other.cost_usd, 8)


class Completion(BaseModel, Generic[T]):
    """`value` is the first sample; with `samples=k` all k are in `samples` (the caller aggregates)."""

    value: T
    samples: list[T]
    cached: bool
    usage: Usage
    raw_text: str


class JudgeError(RuntimeError):
    """The model could not be reached or gave no usable answer within the retry budget."""


class _Rejected(JudgeError):
    """The server refused the request for good (a 4xx other than rate limits)."""

    def __init__(self, status: int, detail: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None, bad_answer: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.bad_answer = bad_answer


def image_part(image: bytes, mime: str = "image/png", detail: str = "high") -> dict:
    """An OpenAI `image_url` content part carrying the image inline as a data: URL."""
    data = base64.b64encode(image).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}", "detail": detail}}


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: the whole text, a ```json fence, or embedded in prose."""
    stripped = text.strip()
    candidates = [stripped]
    candidates += re.findall(r"```(?:json|JSON)?\s*(.*?)```", text, flags=re.S)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("the answer contains no JSON object")


def _retry_after_s(header: str | None) -> float | None:
    if not header:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message_fingerprint(messages: list[dict]) -> list[Any]:
    """Messages with inline images replaced by their sha256, so cache keys stay small."""

    def part(p: Any) -> Any:
        if isinstance(p, dict) and p.get("type") == "image_url":
            url = p.get("image_url", {}).get("url", "")
            return {"image_sha256": hashlib.sha256(url.encode()).hexdigest(),
                    "detail": p.get("image_url", {}).get("detail")}
        return p

    out = []
    for m in messages:
        content = m.get("content")
        out.append({**m, "content": [part(p) for p in content] if isinstance(content, list) else content})
    return out


class _DiskCache:
    """One JSON file per key (sharded by prefix), written atomically: safe across processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.{random.getrandbits(32):08x}.tmp")
            tmp.write_text(json.dumps(entry, sort_keys=True), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("judge cache write failed (%s); continuing without caching this answer", exc)


class _RateLimiter:
    """Spaces request starts at least 60/rpm seconds apart."""

    def __init__(self, requests_per_minute: int) -> None:
        self.interval = 60.0 / requests_per_minute
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self.lock:
            now = time.monotonic()
            delay = self.next_start - now
            self.next_start = max(now, self.next_start) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


class _LoopState:
    """The HTTP client and limits of one event loop (asyncio primitives cannot cross loops)."""

    def __init__(self, config: ClientConfig) -> None:
        self.loop = asyncio.get_running_loop()
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(config.timeout_s),
                                      limits=httpx.Limits(max_connections=config.concurrency))
        self.semaphore = asyncio.Semaphore(config.concurrency)
        self.limiter = _RateLimiter(config.requests_per_minute) if config.requests_per_minute else None


class ChatClient:
    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.usage = Usage(cost_usd=0.0 if self._priced else None)
        self._cache = _DiskCache(config.cache_dir) if config.cache_dir is not None else None
        self._state: _LoopState | None = None
        self._json_mode = True  # switched off if the server rejects `response_format`

    @property
    def _priced(self) -> bool:
        return self.config.price_per_mtok_in is not None or self.config.price_per_mtok_out is not None

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if not self._priced:
            return None
        return round(prompt_tokens / 1e6 * (self.config.price_per_mtok_in or 0.0)
                     + completion_tokens / 1e6 * (self.config.price_per_mtok_out or 0.0), 8)

    def _loop_state(self) -> _LoopState:
        if self._state is None or self._state.loop is not asyncio.get_running_loop():
            self._state = _LoopState(self.config)
        return self._state

    def cache_key(self, messages: list[dict], schema: type[BaseModel], samples: int) -> str:
        material = {
            "model": self.config.model,
            "messages": _message_fingerprint(messages),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "samples": samples,
            "schema": schema.__name__,
            "schema_sha256": hashlib.sha256(json.dumps(schema.model_json_schema(), sort_keys=True).encode()).hexdigest(),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    async def complete_json(self, messages: list[dict], schema: type[T], *,
                            validate: Callable[[T], None] | None = None,
                            samples: int = 1, cache: bool = True) -> Completion[T]:
        """`samples` validated answers to `messages`, from the cache when possible."""
        if samples < 1:
            raise ValueError("samples must be >= 1")

        def parse(text: str) -> T:
            try:
                value = schema.model_validate(extract_json_object(text))
                if validate is not None:
                    validate(value)
            except (ValidationError, ValueError) as exc:
                raise _Retryable(f"unusable answer: {_one_line(exc)}", bad_answer=text) from None
            return value

        key = self.cache_key(messages, schema, samples) if cache and self._cache is not None else None
        if key is not None:
            hit = self._from_cache(key, parse, samples)
            if hit is not None:
                return hit
        values, texts, usage = await self._sample(messages, parse, samples)
        if key is not None:
            self._cache.put(key, {"model": self.config.model, "schema": schema.__name__,
                                  "samples": [v.model_dump(mode="json") for v in values]})
        return Completion[schema](value=values[0], samples=values, cached=False, usage=usage, raw_text=texts[0])

    def _from_cache(self, key: str, parse: Callable[[str], T], samples: int) -> Completion[T] | None:
        entry = self._cache.get(key)
        if not entry or len(entry.get("samples", [])) != samples:
            return None
        try:
            values = [parse(json.dumps(s)) for s in entry["samples"]]
        except _Retryable:
            return None  # written under an older schema or check: answer afresh
        usage = Usage(cache_hits=1, cost_usd=0.0 if self._priced else None)
        self.usage.add(usage)
        schema = type(values[0])
        return Completion[schema](value=values[0], samples=values, cached=True, usage=usage,
                                  raw_text=json.dumps(entry["samples"][0]))

    async def _sample(self, messages: list[dict], parse: Callable[[str], T],
                      samples: int) -> tuple[list[T], list[str], Usage]:
        """Collect `samples` valid answers. A request that yields at least one valid answer is
        progress; one that yields none (or fails) spends one retry."""
        usage = Usage()
        values: list[T] = []
        texts: list[str] = []
        failures = 0
        feedback: list[dict] = []
        try:
            while len(values) < samples:
                wanted = samples - len(values)
                seed = usage.requests if samples > 1 and usage.requests else None  # distinct per extra request
                try:
                    choices = await self._request(messages + feedback, wanted, seed, usage)
                    before, error = len(values), None
                    for text in choices[:wanted]:
                        try:
                            values.append(parse(text))
                            texts.append(text)
                        except _Retryable as exc:
                            error = exc
                    if len(values) == before and error is not None:
                        raise error
                except _Retryable as exc:
                    failures += 1
                    if exc.bad_answer is not None:
                        feedback = _correction(exc)
                    await self._wait_to_retry(exc, failures, usage)
        finally:
            usage.cost_usd = self._cost(usage.prompt_tokens, usage.completion_tokens)
            self.usage.add(usage)
        return values, texts, usage

    async def _wait_to_retry(self, exc: _Retryable, failures: int, usage: Usage) -> None:
        """Back off before re-attempt number `failures`, or raise `JudgeError` past the budget."""
        if failures > self.config.retries:
            raise JudgeError(f"{self.config.model} at {self.config.public_base_url}: no usable answer "
                             f"after {failures} attempt(s); last error: {exc}") from None
        usage.retries += 1
        wait = self._backoff(failures, exc.retry_after)
        log.warning("model %s attempt %d failed (%s); retrying in %.1fs", self.config.model, failures, exc, wait)
        await asyncio.sleep(wait)

    async def complete_chat(self, messages: list[dict], *, tools: list[dict] | None = None) -> tuple[dict, Usage]:
        """One assistant message (text and/or native `tool_calls`) for an agent's turn: the same
        transport, limits, retries and accounting as `complete_json`, without JSON checks or cache."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens}
        if tools:
            body["tools"] = tools
        usage = Usage()
        failures = 0
        try:
            while True:
                try:
                    payload = await self._post(body, usage)
                    message = payload["choices"][0]["message"]
                    if not isinstance(message, dict):
                        raise TypeError("message is not an object")
                    reply = {"role": "assistant", "content": message.get("content")}
                    if message.get("tool_calls"):
                        reply["tool_calls"] = message["tool_calls"]
                    return reply, usage
                except (KeyError, IndexError, TypeError):
                    exc = _Retryable("not a chat-completions response (no choices[0].message)")
                except _Retryable as retryable:
                    exc = retryable
                failures += 1
                await self._wait_to_retry(exc, failures, usage)
        finally:
            usage.cost_usd = self._cost(usage.prompt_tokens, usage.completion_tokens)
            self.usage.add(usage)

    def _backoff(self, failures: int, retry_after: float | None) -> float:
        if retry_after is not None:
            wait = retry_after + random.uniform(0, 0.1 * self.config.backoff_s)
        else:
            wait = self.config.backoff_s * 2 ** (failures - 1) * random.uniform(1.0, 1.5)
        return min(wait, self.config.max_wait_s)

    async def _request(self, messages: list[dict], n: int, seed: int | None, usage: Usage) -> list[str]:
        """One chat-completions request; returns the choices' texts. Transport trouble raises
        `_Retryable`; a request the server will never accept raises `JudgeError`."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens}
        if n > 1:
            body["n"] = n
        if seed is not None:
            body["seed"] = seed
        if self._json_mode:
            body["response_format"] = {"type": "json_object"}
        try:
            payload = await self._post(body, usage)
        except _Rejected as exc:
            if exc.status == 400 and self._json_mode and "response_format" in exc.detail:
                log.warning("%s rejects response_format; asking for JSON in the prompt only", self.config.public_base_url)
                self._json_mode = False
                return await self._request(messages, n, seed, usage)
            raise
        try:
            texts = [c["message"]["content"] or "" for c in payload["choices"]]
        except (KeyError, TypeError):
            raise _Retryable("not a chat-completions response (no choices[].message.content)") from None
        if not texts:
            raise _Retryable("the response has no choices")
        return texts

    async def _post(self, body: dict[str, Any], usage: Usage) -> dict[str, Any]:
        """POST one chat-completions body under the limits; count the request and its tokens.
        Transport trouble raises `_Retryable`; a request the server refuses for good, `_Rejected`."""
        state = self._loop_state()
        headers = {"Content-Type": "application/json"}
        api_key = os.environ.get(self.config.api_key_env)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        if state.limiter is not None:
            await state.limiter.wait()
        async with state.semaphore:
            usage.requests += 1
            try:  # httpx times each phase; wait_for bounds the whole exchange (a trickling reply too)
                response = await asyncio.wait_for(state.http.post(url, json=body, headers=headers),
                                                  self.config.timeout_s)
            except (httpx.TimeoutException, asyncio.TimeoutError):
                raise _Retryable(f"no response within {self.config.timeout_s}s") from None
            except httpx.TransportError as exc:
                raise _Retryable(f"transport error: {type(exc).__name__}: {_scrub(str(exc), api_key)}") from None
        if response.status_code != 200:
            detail = _scrub(response.text[:300], api_key)
            if response.status_code in _RETRYABLE_STATUS:
                raise _Retryable(f"HTTP {response.status_code}: {detail}",
                                 retry_after=_retry_after_s(response.headers.get("retry-after")))
            raise _Rejected(response.status_code, detail,
                            f"{self.config.model} at {self.config.public_base_url}: HTTP {response.status_code}: "
                            f"{detail}" + (" (is the API key set?)" if response.status_code in (401, 403) else ""))
        try:
            payload = response.json()
            if not isinstance(payload, dict):
                raise ValueError("not an object")
        except ValueError:
            raise _Retryable(f"not a chat-completions response: {_scrub(response.text[:200], api_key)}") from None
        tokens = payload.get("usage") or {}
        usage.prompt_tokens += int(tokens.get("prompt_tokens") or 0)
        usage.completion_tokens += int(tokens.get("completion_tokens") or 0)
        return payload

    async def close(self) -> None:
        if self._state is not None:
            state, self._state = self._state, None
            if state.loop is asyncio.get_running_loop():
                await state.http.aclose()


def _correction(exc: _Retryable) -> list[dict]:
    """Show the model its unusable answer and why, so a retry at temperature 0 can differ."""
    return [{"role": "assistant", "content": (exc.bad_answer or "")[:2000]},
            {"role": "user", "content": f"That answer could not be used ({exc}). "
                                        "Reply again with only the JSON object, every field within its range."}]


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())[:400]
    return str(exc).replace("\n", " ")[:400]


def _scrub(text: str, api_key: str | None) -> str:
    if api_key:
        text = text.replace(api_key, "***")
    return _SECRET_LIKE.sub("***", text)
