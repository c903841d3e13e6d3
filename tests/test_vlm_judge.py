"""The VLM static judge over the scripted OpenAI-compatible server: prompt, images, medians,
retries, and a failing judge ending as a masked static channel."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from aesenv.kinds.web.judges import make_judge
from aesenv.llm.client import ChatClient, ClientConfig, ModelError
from aesenv.kinds.web.judges.vlm import VlmJudgeConfig, VlmStaticJudge
from aesenv.lint.htmlhint import HtmlHint
from aesenv.render.models import PageMetrics, Rendering, RenderStatus
from aesenv.rewards import ChannelStatus, PipelineConfig, RewardPipeline
from aesenv.tasks import Task
from support.openai_server import choices, http_error

API_KEY = "sk-vlm-test-key-9f8e7d6c5b4a"
GOOD_PAGE = Path(__file__).parent / "data" / "good_page.html"
# The rubric prompt's hash, pinned: every record names the prompt it was judged with, so an edit of
# the prompt (system text, user template, category notes) must change this value and the version.
PROMPT_SHA256 = "3e1d626e8e22fdc5ba7cbb7a9bebf71fe1b848896ac216d8370edd17f77d4832"

TASK = Task(id="roastery", category="Website",
            prompt="A landing page for a coffee roastery with a shop and a subscription plan.")


def answer(alignment=30.0, aesthetics=22.0, structure=21.0, total=None, rationale="solid page"):
    total = alignment + aesthetics + structure if total is None else total
    return {"alignment": alignment, "aesthetics": aesthetics, "structure": structure, "total": total,
            "rationale": rationale}


def rendering_of_height(height: int, page_height: float | None = None) -> Rendering:
    buf = io.BytesIO()
    Image.new("RGB", (1280, height), (240, 236, 228)).save(buf, "PNG")
    return Rendering(status=RenderStatus.OK, full_page_png=buf.getvalue(), captured_height=height,
                     metrics=PageMetrics(doc_height=page_height or height, text_chars=100))


@pytest.fixture
async def make_vlm(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    judges: list[VlmStaticJudge] = []

    def make(samples: int = 1, **client_settings) -> VlmStaticJudge:
        settings = {"model": "test-model", "base_url": openai_server.url, "backoff_s": 0.01, "timeout_s": 5.0,
                    "cache_dir": tmp_path / "judge-cache", **client_settings}
        judge = VlmStaticJudge(ChatClient(ClientConfig(**settings)), VlmJudgeConfig(samples=samples))
        judges.append(judge)
        return judge

    yield make
    for judge in judges:
        await judge.close()


async def test_judge_sends_rubric_category_instruction_and_a_jpeg(openai_server, make_vlm):
    openai_server.script(answer(31, 23, 20, rationale="clear hierarchy, shop section thin"))
    judge = make_vlm(cache_dir=None)
    judgement = await judge.judge(TASK, rendering_of_height(1500))
    (request,) = openai_server.completions
    assert len(request.images) == 1 and request.images[0][:3] == b"\xff\xd8\xff"
    assert Image.open(io.BytesIO(request.images[0])).size == (1280, 1500)
    assert request.image_mimes == ["image/jpeg"]
    assert TASK.prompt in request.text and "Category: Website" in request.text
    for phrase in ("Instruction alignment (0-40)", "Aesthetics and readability (0-30)",
                   "Structural integrity and cohesion (0-30)", "90-100 outstanding", "top fifth"):
        assert phrase in request.text
    assert (judgement.alignment, judgement.aesthetics, judgement.structure, judgement.total) == (31, 23, 20, 74)
    assert judgement.rationale == "clear hierarchy, shop section thin"
    assert judge.name == "openai:test-model" and judge.version == f"static-rubric-2+{PROMPT_SHA256[:12]}"
    ev = judgement.evidence
    assert ev["prompt_sha256"] == PROMPT_SHA256 and ev["cached"] is False
    assert ev["images"]["mode"] == "single" and ev["images"]["bytes"] == len(request.images[0])
    assert ev["usage"]["requests"] == 1 and ev["usage"]["prompt_tokens"] > 0


async def test_tall_pages_go_as_slices_and_the_record_says_what_was_sent(openai_server, make_vlm):
    openai_server.default = lambda _: answer()
    judge = make_vlm(cache_dir=None)
    tall = await judge.judge(TASK, rendering_of_height(5000))
    request = openai_server.completions[-1]
    assert [Image.open(io.BytesIO(i)).size for i in request.images] == [(1280, 1920), (1280, 1920), (1280, 1160)]
    assert tall.evidence["images"]["mode"] == "tiles" and tall.evidence["images"]["count"] == 3
    assert "3 consecutive slices" in request.text and "Only the top" not in request.text

    capped = await judge.judge(TASK, rendering_of_height(8000, page_height=12000))
    request = openai_server.completions[-1]
    sent = capped.evidence["images"]
    assert len(request.images) == 5 and sent["tiles_dropped"] == 0 and sent["shown_height"] == 8000
    assert "Only the top 8000 px of a 12000 px page" in request.text


async def test_k_samples_take_the_median_of_each_sub_score(openai_server, make_vlm):
    openai_server.script(choices(answer(20, 25, 10, rationale="low"), answer(36, 15, 28, rationale="high"),
                                 answer(30, 20, 22, rationale="middle")))
    judgement = await make_vlm(samples=3, cache_dir=None).judge(TASK, rendering_of_height(900))
    assert (judgement.alignment, judgement.aesthetics, judgement.structure) == (30, 20, 22)
    assert judgement.total == 72 and judgement.rationale == "middle"
    assert [s["total"] for s in judgement.evidence["samples"]] == [55, 79, 72]
    assert openai_server.completions[0].n == 3


async def test_sub_scores_on_the_wrong_scale_are_retried(openai_server, make_vlm):
    openai_server.script(answer(8, 7, 7, total=75), answer(alignment=45), answer(28, 20, 19))
    judgement = await make_vlm(cache_dir=None).judge(TASK, rendering_of_height(900))
    assert judgement.total == 67 and judgement.evidence["usage"]["retries"] == 2
    second, third = openai_server.completions[1:]
    assert "is not the sum of the sub-scores" in second.text
    assert "alignment" in third.text.splitlines()[-1] and "less than or equal to 40" in third.text


async def test_garbage_judge_raises_judge_error(openai_server, make_vlm):
    openai_server.default = lambda _: "The page looks great, 9/10!"
    with pytest.raises(ModelError, match="no usable answer after 2 attempt"):
        await make_vlm(cache_dir=None, retries=1).judge(TASK, rendering_of_height(900))


def test_make_judge_builds_the_vlm_judge_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm.internal:8000/v1")
    monkeypatch.setenv("AESENV_JUDGE_CACHE", str(tmp_path))
    judge = make_judge("openai:gpt-4o")
    assert isinstance(judge, VlmStaticJudge) and judge.name == "openai:gpt-4o"
    assert judge.client.config.base_url == "http://vllm.internal:8000/v1" and judge.client.config.temperature == 0
    three = make_judge("openai:qwen2.5-vl", base_url="http://other:1/v1", samples=3)
    assert three.config.samples == 3 and three.client.config.base_url == "http://other:1/v1"
    assert three.client.config.temperature > 0
    with pytest.raises(ValueError, match="needs a model name"):
        make_judge("openai:")
    with pytest.raises(ValueError, match="offline judge takes no options"):
        make_judge("offline", samples=3)


@pytest.fixture
async def vlm_pipeline(renderer, make_vlm):
    linter = HtmlHint()
    pipelines: list[RewardPipeline] = []

    def make(**judge_settings) -> RewardPipeline:
        config = PipelineConfig(channels=["execution", "static"])
        pipeline = RewardPipeline(config, renderer=renderer, judges={"web": make_vlm(**judge_settings)}, linter=linter)
        pipelines.append(pipeline)
        return pipeline

    yield make
    await linter.close()


async def test_failing_judge_masks_the_static_channel_and_voids_the_reward(openai_server, vlm_pipeline):
    openai_server.default = lambda _: "{not json"
    record = (await vlm_pipeline(retries=2).score(TASK, GOOD_PAGE.read_text())).record
    static = record.channels["static"]
    assert static.status is ChannelStatus.INFRA_ERROR and static.score is None and static.raw is None
    assert "judge openai:test-model failed: ModelError" in static.payload["reason"]
    assert "no usable answer after 3 attempt(s)" in static.payload["reason"]
    assert record.channels["execution"].status is ChannelStatus.OK
    assert record.status == "infra_error" and record.reward is None and record.normalized is None
    assert len(openai_server.completions) == 3
    assert API_KEY not in record.model_dump_json()


async def test_rescoring_a_page_is_served_from_the_cache(openai_server, vlm_pipeline):
    openai_server.script(answer(33, 24, 22))
    first = (await vlm_pipeline().score(TASK, GOOD_PAGE.read_text())).record
    static = first.channels["static"]
    assert static.status is ChannelStatus.OK and static.raw == 79 and static.payload["judge"] == "openai:test-model"
    assert first.reward == pytest.approx(0.1 * first.channels["execution"].raw + 0.8 * 79)
    assert len(openai_server.completions) == 1

    again = (await vlm_pipeline().score(TASK, GOOD_PAGE.read_text())).record  # new judge, same cache
    assert len(openai_server.completions) == 1
    assert again.channels["static"].payload["evidence"]["cached"] is True
    assert again.channels["static"].raw == 79 and again.reward == first.reward


@pytest.mark.slow
def test_cli_score_with_the_vlm_judge(openai_server, tmp_path):
    def is_static(request) -> bool:
        return "Instruction alignment (0-40)" in request.text

    def reply(request):
        if not is_static(request):  # the VLM web agent of the interactive channel: not scripted here
            return http_error(400, message="this test scripts only the static judge")
        assert len(request.images) >= 1 and "coffee roastery" in request.text
        return answer(34, 24, 23, rationale="scripted VLM verdict")

    def static_requests():
        return [r for r in openai_server.completions if is_static(r)]

    openai_server.default = reply
    env = {**os.environ, "OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": API_KEY,
           "AESENV_JUDGE_CACHE": str(tmp_path / "cache")}

    def score(*extra: str) -> tuple[dict, str]:
        out = subprocess.run([sys.executable, "-m", "aesenv.cli", "score", str(GOOD_PAGE), "--prompt", TASK.prompt,
                              "--judge", "openai:test-model", "--json", *extra],
                             capture_output=True, text=True, timeout=180, env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout), out.stdout + out.stderr

    record, output = score()
    static = record["channels"]["static"]
    assert static["status"] == "ok" and static["raw"] == 81 and static["payload"]["judge"] == "openai:test-model"
    assert static["payload"]["rationale"] == "scripted VLM verdict"
    assert static["payload"]["evidence"]["images"]["format"] == "jpeg"
    assert record["provenance"]["judge"] == "openai:test-model"
    assert len(static_requests()) == 1 and API_KEY not in output

    cached, _ = score()
    assert len(static_requests()) == 1 and cached["channels"]["static"]["payload"]["evidence"]["cached"]
    assert cached["reward"] == record["reward"]

    sampled, _ = score("--judge-samples", "3")
    assert len(static_requests()) == 2 and static_requests()[-1].n == 3
    assert len(sampled["channels"]["static"]["payload"]["evidence"]["samples"]) == 3
