"""The judge client over real HTTP against a stand-in: the scripted OpenAI-compatible server of
tests/support/openai_server.py, which answers from a script, not a model (tests/test_vllm_server.py
runs the client against a real vLLM server)."""

import asyncio
import io
import json
import logging

import pytest
from PIL import Image
from pydantic import BaseModel, Field

from aesenv.llm.client import ChatClient, ClientConfig, ModelError, extract_json_object, image_part, list_price
from support.openai_server import answer, choices, drop, http_error, slow

API_KEY = "sk-test-0123456789abcdefSECRET"


class Verdict(BaseModel):
    score: float = Field(ge=0, le=10)
    reason: str = ""


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, "PNG")
    return buf.getvalue()


def _messages(image: bytes | None = None, text: str = "Rate this page. Answer in JSON.") -> list[dict]:
    content: list[dict] = [{"type": "text", "text": text}]
    if image is not None:
        content.append(image_part(image))
    return [{"role": "system", "content": "You are a strict reviewer."}, {"role": "user", "content": content}]


@pytest.fixture
async def make_client(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    clients: list[ChatClient] = []

    def make(**overrides) -> ChatClient:
        settings = {"model": "test-model", "base_url": openai_server.url, "backoff_s": 0.01,
                    "timeout_s": 5.0, "cache_dir": tmp_path / "cache", **overrides}
        client = ChatClient(ClientConfig(**settings))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def test_valid_answer_with_image_over_the_real_protocol(openai_server, make_client):
    image = _png((200, 30, 30))
    openai_server.script({"score": 7, "reason": "clear"})
    result = await make_client(cache_dir=None).complete_json(_messages(image), Verdict)
    assert result.value == Verdict(score=7, reason="clear") and not result.cached
    (request,) = openai_server.completions
    assert request.images == [image] and request.image_mimes == ["image/png"]
    assert request.body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Verdict", "schema": Verdict.model_json_schema(), "strict": False}}
    assert request.body["model"] == "test-model" and request.body["temperature"] == 0.0
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert "n" not in request.body


@pytest.mark.parametrize("text", [
    '```json\n{"score": 4, "reason": "fenced"}\n```',
    'Sure! Here is my verdict: {"score": 4, "reason": "in prose"} Hope it helps.',
    '{"score": 4}',
])
async def test_servers_that_ignore_json_mode_still_parse(openai_server, make_client, text):
    openai_server.script(text)
    result = await make_client(cache_dir=None).complete_json(_messages(), Verdict)
    assert result.value.score == 4 and result.usage.retries == 0


def test_extract_json_object_rejects_text_without_an_object():
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("score: 5 [1, 2]")
    assert extract_json_object('noise {"a": {"b": 1}} {"c": 2}') == {"a": {"b": 1}}


async def test_transport_failures_are_retried_then_succeed(openai_server, make_client):
    openai_server.script(http_error(500), drop(), http_error(503), {"score": 9})
    client = make_client(cache_dir=None)
    result = await client.complete_json(_messages(), Verdict)
    assert result.value.score == 9
    assert len(openai_server.completions) == 4
    assert result.usage.requests == 4 and result.usage.retries == 3
    assert client.usage.requests == 4


async def test_garbage_after_all_retries_is_a_judge_error(openai_server, make_client):
    openai_server.default = lambda _: "I think the page is nice."
    client = make_client(cache_dir=None, retries=2)
    with pytest.raises(ModelError, match=r"no usable answer after 3 attempt\(s\).*no JSON object"):
        await client.complete_json(_messages(), Verdict)
    assert len(openai_server.completions) == 3
    assert client.usage.requests == 3 and client.usage.retries == 2


async def test_out_of_range_answer_is_retried_with_the_reason(openai_server, make_client):
    openai_server.script({"score": 14}, {"score": 6})
    result = await make_client(cache_dir=None).complete_json(_messages(), Verdict)
    assert result.value.score == 6 and result.usage.retries == 1
    retry = openai_server.completions[1]
    assert retry.messages[-2] == {"role": "assistant", "content": '{"score": 14}'}
    assert "less than or equal to 10" in retry.messages[-1]["content"]


async def test_validate_hook_failures_are_retried(openai_server, make_client):
    def needs_reason(v: Verdict) -> None:
        if not v.reason:
            raise ValueError("reason must not be empty")

    openai_server.script({"score": 3}, {"score": 3, "reason": "dense text"})
    result = await make_client(cache_dir=None).complete_json(_messages(), Verdict, validate=needs_reason)
    assert result.value.reason == "dense text"
    assert "reason must not be empty" in openai_server.completions[1].text


async def test_slow_server_times_out_and_is_retried(openai_server, make_client):
    openai_server.script(slow(3.0, then={"score": 1}), {"score": 8})
    result = await make_client(cache_dir=None, timeout_s=0.3).complete_json(_messages(), Verdict)
    assert result.value.score == 8 and result.usage.retries == 1


async def test_a_server_that_never_answers_in_time_is_a_judge_error(openai_server, make_client):
    openai_server.default = lambda _: slow(3.0, then={"score": 1})
    with pytest.raises(ModelError, match="no response within 0.2s"):
        await make_client(cache_dir=None, timeout_s=0.2, retries=1).complete_json(_messages(), Verdict)
    assert len(openai_server.completions) == 2


async def test_429_waits_for_retry_after(openai_server, make_client):
    openai_server.script(http_error(429, retry_after=0.5), {"score": 5})
    result = await make_client(cache_dir=None, backoff_s=0.001).complete_json(_messages(), Verdict)
    first, second = openai_server.completions
    assert result.value.score == 5
    assert second.received_at - first.received_at >= 0.45  # backoff alone would be ~1 ms


@pytest.mark.parametrize("key", [API_KEY, "opaque-gateway-credential-42"])
async def test_client_errors_are_not_retried_and_never_echo_the_key(openai_server, make_client, monkeypatch, key):
    monkeypatch.setenv("OPENAI_API_KEY", key)
    openai_server.script(http_error(401, message=f"Incorrect API key provided: {key}"))
    with pytest.raises(ModelError, match="HTTP 401") as info:
        await make_client(cache_dir=None).complete_json(_messages(), Verdict)
    assert key not in str(info.value) and "API key" in str(info.value)
    assert len(openai_server.completions) == 1


async def test_server_rejecting_response_format_is_asked_for_less_then_nothing(openai_server, make_client):
    openai_server.script(http_error(400, message="response_format json_schema is not supported"),
                         http_error(400, message="'response_format' of type 'json_object' is not supported"),
                         {"score": 2}, {"score": 3})
    client = make_client(cache_dir=None)
    assert (await client.complete_json(_messages(), Verdict)).value.score == 2
    first, second, third = openai_server.completions
    assert first.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {"type": "json_object"} and "response_format" not in third.body
    assert (await client.complete_json(_messages(text="again"), Verdict)).value.score == 3
    assert "response_format" not in openai_server.completions[3].body  # remembered for the client's life


async def test_cache_is_persistent_and_makes_no_request(openai_server, make_client, tmp_path):
    image = _png((10, 120, 200))
    openai_server.script({"score": 6, "reason": "first"})
    first = await make_client().complete_json(_messages(image), Verdict)
    assert not first.cached and len(openai_server.completions) == 1

    again = make_client()  # a new client (as in a new process) over the same cache directory
    second = await again.complete_json(_messages(image), Verdict)
    assert second.cached and second.value == first.value
    assert len(openai_server.completions) == 1
    assert again.usage.requests == 0 and again.usage.cache_hits == 1

    openai_server.script({"score": 2}, {"score": 3})
    other_image = await again.complete_json(_messages(_png((0, 0, 0))), Verdict)
    uncached = await again.complete_json(_messages(image), Verdict, cache=False)
    assert (other_image.value.score, uncached.value.score) == (2, 3) and not other_image.cached
    assert len(openai_server.completions) == 3
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert '"first"' in stored and API_KEY not in stored


async def test_k_samples_use_n_when_the_server_supports_it(openai_server, make_client):
    openai_server.script(choices({"score": 2}, {"score": 9}, {"score": 5}))
    result = await make_client(cache_dir=None).complete_json(_messages(), Verdict, samples=3)
    assert [s.score for s in result.samples] == [2, 9, 5] and result.value.score == 2
    (request,) = openai_server.completions
    assert request.n == 3


async def test_k_samples_fall_back_to_seeded_calls_when_n_is_ignored(openai_server, make_client):
    openai_server.honour_n = False
    openai_server.script({"score": 1}, "garbage", {"score": 4}, {"score": 7})
    result = await make_client(cache_dir=None).complete_json(_messages(), Verdict, samples=3)
    assert [s.score for s in result.samples] == [1, 4, 7]
    requests = openai_server.completions
    assert [r.n for r in requests] == [3, 2, 2, 1]
    seeds = [r.body.get("seed") for r in requests]
    assert seeds[0] is None and len(set(seeds[1:])) == 3
    assert result.usage.retries == 1


async def test_usage_and_cost_totals(openai_server, make_client):
    openai_server.script(answer({"score": 1}, usage=(1000, 200)), answer({"score": 2}, usage=(3000, 100)))
    client = make_client(cache_dir=None, price_per_mtok_in=2.5, price_per_mtok_out=10.0)
    one = await client.complete_json(_messages(), Verdict)
    await client.complete_json(_messages(text="another page"), Verdict)
    assert one.usage.cost_usd == pytest.approx(1000 / 1e6 * 2.5 + 200 / 1e6 * 10)
    assert (client.usage.prompt_tokens, client.usage.completion_tokens, client.usage.requests) == (4000, 300, 2)
    assert client.usage.cost_usd == pytest.approx(4000 / 1e6 * 2.5 + 300 / 1e6 * 10)
    unpriced = make_client(cache_dir=None)
    openai_server.script({"score": 3})
    assert (await unpriced.complete_json(_messages(), Verdict)).usage.cost_usd is None


async def test_concurrency_limit_holds(openai_server, make_client):
    openai_server.default = lambda _: slow(0.2, then={"score": 1})
    client = make_client(cache_dir=None, concurrency=2)
    await asyncio.gather(*(client.complete_json(_messages(text=f"page {i}"), Verdict) for i in range(6)))
    assert len(openai_server.completions) == 6 and openai_server.max_in_flight == 2


async def test_rate_limit_spaces_requests(openai_server, make_client):
    openai_server.default = lambda _: {"score": 1}
    client = make_client(cache_dir=None, requests_per_minute=600)  # one every 0.1 s
    await asyncio.gather(*(client.complete_json(_messages(text=f"page {i}"), Verdict) for i in range(4)))
    arrivals = sorted(r.received_at for r in openai_server.completions)
    assert arrivals[-1] - arrivals[0] >= 0.28


async def test_api_key_never_reaches_logs_errors_or_config(openai_server, make_client, caplog):
    caplog.set_level(logging.DEBUG)
    openai_server.script(http_error(500, message=f"upstream said {API_KEY}"), drop(), "nonsense")
    client = make_client(cache_dir=None, retries=2)
    with pytest.raises(ModelError) as info:
        await client.complete_json(_messages(), Verdict)
    assert caplog.records, "retries should have been logged"
    assert API_KEY not in caplog.text and API_KEY not in str(info.value)
    assert API_KEY not in client.config.model_dump_json() and API_KEY not in json.dumps(client.usage.model_dump())


def test_public_base_url_drops_credentials():
    config = ClientConfig(model="m", base_url="https://user:pw@gateway.example:8443/v1?key=abc", cache_dir=None)
    assert config.public_base_url == "https://gateway.example:8443/v1"


def test_defaults_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm.local:8000/v1")
    monkeypatch.setenv("AESENV_JUDGE_CACHE", str(tmp_path))
    config = ClientConfig(model="m")
    assert config.base_url == "http://vllm.local:8000/v1" and config.cache_dir == tmp_path
    monkeypatch.setenv("AESENV_JUDGE_CACHE", "off")
    assert ClientConfig(model="m").cache_dir is None


async def test_no_key_sends_no_authorization_header(openai_server, make_client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    openai_server.script({"score": 1})
    await make_client(cache_dir=None).complete_json(_messages(), Verdict)
    (request,) = openai_server.completions
    assert "authorization" not in request.headers


@pytest.mark.parametrize("model, reasoning", [("o3-mini", True), ("gpt-5", True), ("openai/o4-mini", True),
                                              ("gpt-5-chat-latest", False), ("gpt-4o", False),
                                              ("Qwen/Qwen2.5-VL-7B-Instruct", False)])
async def test_reasoning_models_get_max_completion_tokens_and_no_temperature(openai_server, make_client,
                                                                            model, reasoning):
    openai_server.script({"score": 1})
    await make_client(cache_dir=None, model=model, max_tokens=300).complete_json(_messages(), Verdict)
    body = openai_server.completions[0].body
    if reasoning:
        assert body["max_completion_tokens"] == 300 and "temperature" not in body and "max_tokens" not in body
    else:
        assert body["max_tokens"] == 300 and body["temperature"] == 0.0 and "max_completion_tokens" not in body


async def test_reasoning_can_be_forced_with_an_effort(openai_server, make_client):
    openai_server.script({"score": 1})
    await make_client(cache_dir=None, model="my-gateway-alias", reasoning=True,
                      reasoning_effort="low").complete_json(_messages(), Verdict)
    body = openai_server.completions[0].body
    assert body["reasoning_effort"] == "low" and "temperature" not in body


async def test_azure_deployments_are_addressed_the_azure_way(openai_server, make_client):
    openai_server.script({"score": 5})
    client = make_client(cache_dir=None, model="my-deployment", base_url=openai_server.url.removesuffix("/v1"),
                         azure_api_version="2024-10-21")
    assert (await client.complete_json(_messages(), Verdict)).value.score == 5
    (request,) = openai_server.completions
    assert request.path.startswith("/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21")
    assert request.headers["api-key"] == API_KEY


def test_list_prices_cover_dated_snapshots_and_yield_to_the_config():
    assert list_price("gpt-4o-2024-08-06") == list_price("gpt-4o") != list_price("gpt-4o-mini")
    assert list_price("gpt-4o-mini-2024-07-18") == list_price("gpt-4o-mini")
    assert list_price("Qwen/Qwen2.5-VL-7B-Instruct") is None
    assert ClientConfig(model="gpt-4.1-mini", cache_dir=None).prices == list_price("gpt-4.1-mini")
    assert ClientConfig(model="gpt-4.1-mini", cache_dir=None, price_per_mtok_out=9.0).prices == (
        list_price("gpt-4.1-mini")[0], 9.0)
    assert ClientConfig(model="my-local-model", cache_dir=None).prices is None


async def test_listed_models_are_priced_without_configuration(openai_server, make_client):
    openai_server.script(answer({"score": 1}, usage=(2000, 100)))
    result = await make_client(cache_dir=None, model="gpt-4o-mini").complete_json(_messages(), Verdict)
    price_in, price_out = list_price("gpt-4o-mini")
    assert result.usage.cost_usd == pytest.approx(2000 / 1e6 * price_in + 100 / 1e6 * price_out)


async def test_the_cache_key_names_the_endpoint(openai_server, make_client):
    openai_server.script({"score": 6}, {"score": 2})
    first = await make_client().complete_json(_messages(), Verdict)
    elsewhere = await make_client(base_url=openai_server.url.replace("127.0.0.1", "localhost")).complete_json(
        _messages(), Verdict)
    assert not elsewhere.cached and (first.value.score, elsewhere.value.score) == (6, 2)
