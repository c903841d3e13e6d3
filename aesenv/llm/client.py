"""An OpenAI-compatible chat client for judges and agents that must answer in schema-checked JSON.

The transport is the official `openai` SDK (`AsyncOpenAI`, or `AsyncAzureOpenAI` given an Azure
API version), so it works against OpenAI, Azure, vLLM and any gateway the SDK speaks to, with the
SDK's request building, proxies and typed errors. What aesenv adds lives here, around it, because
a reward computed from a VLM must be cheap to repeat, reproducible and honest about failure:

- asks for JSON and still accepts servers that ignore the request (first JSON object in the text,
  fenced or bare), validates it with a pydantic schema plus an optional `validate` hook;
- retries transport failures (connect, timeout, dropped connection, 429, 5xx) and unusable answers
  with exponential backoff and jitter, honouring `Retry-After` (the SDK's own retries are off, so
  one budget covers both and `worst_case_s` is a deadline that fits every retry); after `retries`
  re-attempts it raises `ModelError`, which callers turn into an `infra_error` (never a score of 0);
- runs under a concurrency limit and an optional requests-per-minute limit;
- caches validated answers on disk, keyed by endpoint, model, messages (images by hash), sampling
  params and schema, so re-scoring the same page costs no request;
- counts requests, tokens and dollars (`LIST_PRICES` for common models, overridable per config);
- sends reasoning models (o-series, GPT-5) `max_completion_tokens` and no `temperature`.

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
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field, ValidationError

from aesenv.paths import home

if TYPE_CHECKING:  # the SDK (500-odd modules) loads when a client is first made, not with `image_part`
    import openai
    from openai.types.chat import ChatCompletion

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CACHE_ENV = "AESENV_JUDGE_CACHE"  # a directory, or "off" to disable the cache
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_SECRET_LIKE = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}")
_REASONING_MODEL = re.compile(r"^(o[1-9]|gpt-5(?!-chat))")

# USD per million tokens (input, output): list prices of common models as published in 2025; a
# config's `price_per_mtok_in/out` overrides them. A dated snapshot ("gpt-4o-2024-08-06") takes the
# price of its longest listed prefix; a model not listed is unpriced (cost None), never free.
LIST_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}


def list_price(model: str) -> tuple[float, float] | None:
    """The listed (input, output) price of `model` or of its longest listed prefix."""
    name = model.rpartition("/")[2]
    prefixes = [m for m in LIST_PRICES if name == m or name.startswith(m + "-")]
    return LIST_PRICES[max(prefixes, key=len)] if prefixes else None


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
    price_per_mtok_in: float | None = None  # overrides LIST_PRICES for this model
    price_per_mtok_out: float | None = None
    reasoning: bool | None = Field(default=None, description=(
        "a reasoning model (max_completion_tokens, no temperature); None: guessed from the name"))
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    azure_api_version: str | None = Field(default=None, description=(
        "set for Azure OpenAI: base_url is then the resource endpoint and model the deployment"))

    @property
    def is_reasoning(self) -> bool:
        if self.reasoning is not None:
            return self.reasoning
        return bool(_REASONING_MODEL.match(self.model.rpartition("/")[2]))

    @property
    def prices(self) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None when the model's price is unknown."""
        listed = list_price(self.model)
        if self.price_per_mtok_in is None and self.price_per_mtok_out is None:
            return listed
        fallback = listed or (0.0, 0.0)
        return (fallback[0] if self.price_per_mtok_in is None else self.price_per_mtok_in,
                fallback[1] if self.price_per_mtok_out is None else self.price_per_mtok_out)

    def sampling(self) -> dict[str, Any]:
        """The length and sampling parameters of one request, as this kind of model takes them."""
        if self.is_reasoning:
            params: dict[str, Any] = {"max_completion_tokens": self.max_tokens}
            if self.reasoning_effort is not None:
                params["reasoning_effort"] = self.reasoning_effort
            return params
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

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


class ModelError(RuntimeError):
    """The model (a judge, an agent, a simulated user) could not be reached or gave no usable answer
    within the retry budget: our failure, recorded as `infra_error`, never a score."""


class _Rejected(ModelError):
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


def _sdk_client(config: ClientConfig) -> openai.AsyncOpenAI:
    """The SDK client for `config`, its own retries off (ours count them). The key is looked up
    on every request, so a rotated key is picked up and none is held in an object we log."""
    import openai

    async def api_key() -> str:
        return os.environ.get(config.api_key_env, "")

    common: dict[str, Any] = {"api_key": api_key, "timeout": config.timeout_s, "max_retries": 0}
    if config.azure_api_version:
        return openai.AsyncAzureOpenAI(azure_endpoint=config.base_url, api_version=config.azure_api_version, **common)
    return openai.AsyncOpenAI(base_url=config.base_url, **common)


class _LoopState:
    """The SDK client and limits of one event loop (asyncio primitives cannot cross loops)."""

    def __init__(self, config: ClientConfig) -> None:
        self.loop = asyncio.get_running_loop()
        self.api = _sdk_client(config)
        self.semaphore = asyncio.Semaphore(config.concurrency)
        self.limiter = _RateLimiter(config.requests_per_minute) if config.requests_per_minute else None


class ChatClient:
    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.usage = Usage(cost_usd=0.0 if config.prices else None)
        self._cache = _DiskCache(config.cache_dir) if config.cache_dir is not None else None
        self._state: _LoopState | None = None
        # How JSON is asked for, strongest first; a server that rejects one gets the next. A schema
        # lets vLLM (and OpenAI) constrain decoding to it; `json_object` only to some object.
        self._json_modes: list[str] = ["json_schema", "json_object"]

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        prices = self.config.prices
        if prices is None:
            return None
        return round(prompt_tokens / 1e6 * prices[0] + completion_tokens / 1e6 * prices[1], 8)

    def _loop_state(self) -> _LoopState:
        if self._state is None or self._state.loop is not asyncio.get_running_loop():
            self._state = _LoopState(self.config)
        return self._state

    def cache_key(self, messages: list[dict], schema: type[BaseModel], samples: int) -> str:
        material = {
            "base_url": self.config.public_base_url,
            "model": self.config.model,
            "reasoning_effort": self.config.reasoning_effort,
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
        values, texts, usage = await self._sample(messages, schema, parse, samples)
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
        usage = Usage(cache_hits=1, cost_usd=0.0 if self.config.prices else None)
        self.usage.add(usage)
        schema = type(values[0])
        return Completion[schema](value=values[0], samples=values, cached=True, usage=usage,
                                  raw_text=json.dumps(entry["samples"][0]))

    async def _sample(self, messages: list[dict], schema: type[T], parse: Callable[[str], T],
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
                    choices = await self._request(messages + feedback, schema, wanted, seed, usage)
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
        """Back off before re-attempt number `failures`, or raise `ModelError` past the budget."""
        if failures > self.config.retries:
            raise ModelError(f"{self.config.model} at {self.config.public_base_url}: no usable answer "
                             f"after {failures} attempt(s); last error: {exc}") from None
        usage.retries += 1
        wait = self._backoff(failures, exc.retry_after)
        log.warning("model %s attempt %d failed (%s); retrying in %.1fs", self.config.model, failures, exc, wait)
        await asyncio.sleep(wait)

    async def complete_chat(self, messages: list[dict], *, tools: list[dict] | None = None) -> tuple[dict, Usage]:
        """One assistant message (text and/or native `tool_calls`) for an agent's turn: the same
        transport, limits, retries and accounting as `complete_json`, without JSON checks or cache."""
        params: dict[str, Any] = {"messages": messages}
        if tools:
            params["tools"] = tools
        usage = Usage()
        failures = 0
        try:
            while True:
                try:
                    completion = await self._post(params, usage)
                    message = completion.choices[0].message
                    reply: dict[str, Any] = {"role": "assistant", "content": message.content}
                    if message.tool_calls:
                        reply["tool_calls"] = [call.model_dump(mode="json", exclude_none=True)
                                               for call in message.tool_calls]
                    return reply, usage
                except (IndexError, AttributeError, TypeError):
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

    async def _request(self, messages: list[dict], schema: type[BaseModel], n: int, seed: int | None,
                       usage: Usage) -> list[str]:
        """One chat-completions request; returns the choices' texts. Transport trouble raises
        `_Retryable`; a request the server will never accept raises `ModelError`."""
        params: dict[str, Any] = {"messages": messages}
        if n > 1:
            params["n"] = n
        if seed is not None:
            params["seed"] = seed
        if self._json_modes:
            params["response_format"] = _response_format(self._json_modes[0], schema)
        try:
            completion = await self._post(params, usage)
        except _Rejected as exc:
            if exc.status == 400 and self._json_modes and _names_response_format(exc.detail):
                refused = self._json_modes.pop(0)
                log.warning("%s rejects response_format %s; asking for %s", self.config.public_base_url, refused,
                            self._json_modes[0] if self._json_modes else "JSON in the prompt only")
                return await self._request(messages, schema, n, seed, usage)
            raise
        try:
            texts = [choice.message.content or "" for choice in completion.choices]
        except (AttributeError, TypeError):
            raise _Retryable("not a chat-completions response (no choices[].message.content)") from None
        if not texts:
            raise _Retryable("the response has no choices")
        return texts

    async def _post(self, params: dict[str, Any], usage: Usage) -> ChatCompletion:
        """Send one chat-completions request through the SDK under the limits; count the request
        and its tokens. Transport trouble raises `_Retryable`; a request the server refuses for
        good, `_Rejected`."""
        import openai
        from openai.types.chat import ChatCompletion

        state = self._loop_state()
        api_key = os.environ.get(self.config.api_key_env)
        # No key (a local vLLM): send no Authorization header rather than an empty one.
        headers = None if api_key else {"Authorization": openai.omit}
        if state.limiter is not None:
            await state.limiter.wait()
        async with state.semaphore:
            usage.requests += 1
            try:  # the SDK times each phase; wait_for bounds the whole exchange (a trickling reply too)
                completion = await asyncio.wait_for(
                    state.api.chat.completions.create(model=self.config.model, **self.config.sampling(), **params,
                                                      extra_headers=headers),
                    self.config.timeout_s)
            except (openai.APITimeoutError, asyncio.TimeoutError):
                raise _Retryable(f"no response within {self.config.timeout_s}s") from None
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise _Retryable(f"transport error: {type(cause).__name__}: {_scrub(str(cause), api_key)}") from None
            except openai.APIStatusError as exc:
                raise _status_error(exc, self.config, api_key) from None
            except openai.APIResponseValidationError as exc:
                raise _Retryable(f"not a chat-completions response: {_scrub(str(exc)[:200], api_key)}") from None
        if not isinstance(completion, ChatCompletion):  # a 200 whose body is not JSON comes back as text
            raise _Retryable(f"not a chat-completions response: {_scrub(str(completion)[:200], api_key)}")
        if completion.usage is not None:
            usage.prompt_tokens += int(completion.usage.prompt_tokens or 0)
            usage.completion_tokens += int(completion.usage.completion_tokens or 0)
        return completion

    async def close(self) -> None:
        if self._state is not None:
            state, self._state = self._state, None
            if state.loop is asyncio.get_running_loop():
                await state.api.close()


def _correction(exc: _Retryable) -> list[dict]:
    """Show the model its unusable answer and why, so a retry at temperature 0 can differ."""
    return [{"role": "assistant", "content": (exc.bad_answer or "")[:2000]},
            {"role": "user", "content": f"That answer could not be used ({exc}). "
                                        "Reply again with only the JSON object, every field within its range."}]


def _response_format(mode: str, schema: type[BaseModel]) -> dict[str, Any]:
    if mode == "json_schema":  # not strict: OpenAI's strict mode refuses ordinary pydantic schemas
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(),
                                                       "strict": False}}
    return {"type": mode}


def _names_response_format(detail: str) -> bool:
    return any(word in detail for word in ("response_format", "json_schema", "json_object"))


def _status_error(exc: openai.APIStatusError, config: ClientConfig, api_key: str | None) -> Exception:
    """A non-200 answer as ours: retryable (rate limits, overload) or refused for good."""
    detail = _scrub(exc.response.text[:300], api_key)
    status = exc.status_code
    if status in _RETRYABLE_STATUS:
        return _Retryable(f"HTTP {status}: {detail}", retry_after=_retry_after_s(exc.response.headers.get("retry-after")))
    hint = " (is the API key set?)" if status in (401, 403) else ""
    return _Rejected(status, detail, f"{config.model} at {config.public_base_url}: HTTP {status}: {detail}{hint}")


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())[:400]
    return str(exc).replace("\n", " ")[:400]


def _scrub(text: str, api_key: str | None) -> str:
    if api_key:
        text = text.replace(api_key, "***")
    return _SECRET_LIKE.sub("***", text)
