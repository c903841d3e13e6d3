"""The checklist channel over the scripted OpenAI-compatible server: one call per category,
grounded "yes" only, masks (offline judge, no checklist), judge failure as infra_error, and the
Visual number it feeds; a "yes" counts only with a citation that points at a real region showing
what it read, and the prompt carries the artifact-text guard."""

import io

import pytest
from PIL import Image

from aesenv.artifact import extract_artifact
from aesenv.kinds.web.judges import make_judge
from aesenv.llm.client import ChatClient, ClientConfig
from aesenv.render.models import PageMetrics, Rendering, RenderStatus
from aesenv.rewards import ChannelStatus
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.aescode import aescode_scores
from aesenv.tasks import Task, TextExact
from aesenv.kinds.web.verifiers.checklist import ChecklistChannel

TASK = Task(id="poster", prompt="A poster.", canvas={"width": 600, "height": 800}, checklist=[
    {"question": "Is the headline the largest text?", "category": "layout", "element": "headline"},
    {"question": "Is the date shown?", "category": "content"},
    {"question": "Is the text legible?", "category": "style"},
    {"question": "Are margins even?", "category": "layout"},
])
ARTIFACT = extract_artifact("<!DOCTYPE html><html><body><h1>Poster</h1></body></html>")


def shot(height=1000) -> Rendering:
    buf = io.BytesIO()
    Image.new("RGB", (600, height), (250, 250, 245)).save(buf, "PNG")
    return Rendering(status=RenderStatus.OK, full_page_png=buf.getvalue(), captured_height=height,
                     viewport=(600, 800), metrics=PageMetrics(doc_height=height, text_chars=10))


class Judge:
    """What the pipeline hands a channel: a static judge that carries a ChatClient."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client


@pytest.fixture
async def channel(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-checklist-test-000000")
    client = ChatClient(ClientConfig(model="test-model", base_url=openai_server.url, backoff_s=0.01,
                                     timeout_s=5.0, retries=1, cache_dir=None))
    yield ChecklistChannel(judge=Judge(client))
    await client.close()


def answers(*rows):
    """(id, answer, evidence): an answer with evidence cites a box inside the image, one without cites none."""
    return {"answers": [{"id": i, "answer": a, "evidence": e, **({"box": [10, 10, 200, 100]} if e else {})}
                        for i, a, e in rows]}


def by_category(request) -> str:
    return next(c for c in ("content", "layout", "style") if f"about {c}" in request.text)


async def test_one_call_per_category_and_only_grounded_yes_passes(openai_server, channel):
    replies = {"layout": answers((1, "yes", "the headline spans the top third"), (2, "yes", "")),
               "content": answers((1, "cannot_tell", "too small")),
               "style": answers((1, "yes", "dark text on cream"))}
    openai_server.default = lambda req: replies[by_category(req)]
    result = await channel.score(PageEvidence(TASK, ARTIFACT, shot()))
    assert len(openai_server.completions) == 3
    layout_request = next(r for r in openai_server.completions if by_category(r) == "layout")
    assert "Is the headline the largest text? [about: headline]" in layout_request.text
    assert "Are margins even? [about: the whole canvas]" in layout_request.text
    assert "Is the date shown?" not in layout_request.text
    assert len(layout_request.images) == 1
    assert Image.open(io.BytesIO(layout_request.images[0])).size == (600, 800)  # cut to the canvas
    assert result.status is ChannelStatus.FAILED and result.score == 0.5
    assert result.payload["dimensions"] == {"layout": 0.5, "content": 0.0, "style": 1.0}
    ungrounded = next(i for i in result.payload["items"] if i["question"] == "Are margins even?")
    assert ungrounded["answer"] == "yes" and not ungrounded["passed"]
    # AesCode's Visual (§3.4): the mean of the three dimensions, not the share of all questions
    assert aescode_scores({"checklist": result})["visual"] == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert aescode_scores({"checklist": result}, report="channels")["visual"] is None  # ours: VGR there


async def test_an_unanswered_question_fails(openai_server, channel):
    openai_server.default = lambda req: answers((1, "yes", "visible at the top"))
    result = await channel.score(PageEvidence(TASK, ARTIFACT, shot()))
    missing = [i for i in result.payload["items"] if i["answer"] == "missing"]
    assert [i["question"] for i in missing] == ["Are margins even?"]
    assert result.score == 0.75


async def test_a_judge_that_answers_garbage_is_our_failure(openai_server, channel):
    openai_server.default = lambda req: "I think it looks lovely."
    result = await channel.score(PageEvidence(TASK, ARTIFACT, shot()))
    assert result.status is ChannelStatus.INFRA_ERROR and result.score is None
    assert "checklist judge failed" in result.payload["reason"]


async def test_masked_offline_or_without_checklist_and_nothing_rendered_fails(channel):
    offline = ChecklistChannel(judge=make_judge("offline"))
    assert (await offline.score(PageEvidence(TASK, ARTIFACT, shot()))).status is ChannelStatus.NOT_APPLICABLE
    bare = Task(id="bare", prompt="p")
    assert (await channel.score(PageEvidence(bare, ARTIFACT, shot()))).status is ChannelStatus.NOT_APPLICABLE
    no_page = await channel.score(PageEvidence(TASK, extract_artifact("just words, no code"), None))
    assert no_page.status is ChannelStatus.FAILED and no_page.score == 0
    lost = await channel.score(PageEvidence(TASK, ARTIFACT, Rendering(status=RenderStatus.INFRA_ERROR)))
    assert lost.status is ChannelStatus.INFRA_ERROR


async def test_the_pipeline_runs_the_checklist_with_its_vlm_judge(openai_server, monkeypatch, renderer):
    from aesenv.rewards import PipelineConfig, RewardPipeline

    monkeypatch.setenv("OPENAI_API_KEY", "sk-checklist-test-000000")
    openai_server.default = lambda req: answers(*[(i, "yes", "visible") for i in range(1, 5)])
    config = PipelineConfig(channels=["text", "checklist"], reward="aescode", judge="openai:test-model",
                            judge_options={"base_url": openai_server.url, "cache_dir": None})
    task = TASK.model_copy(update={"requirements": (TextExact(text="Poster"),)})
    pipeline = RewardPipeline(config, renderer=renderer)
    try:
        record = (await pipeline.score(task, ARTIFACT.code)).record
    finally:
        await pipeline.close_parts()
        await pipeline.judge("web").close()
    assert record.channels["checklist"].score == 1.0 and len(openai_server.completions) == 3
    assert record.aescode == {"rule": 1.0, "visual": 1.0, "overall": 1.0}  # the paper's report: Visual is the checklist
    assert record.selected_reward == 1.0 and record.rendering is not None
    assert json_round_trip(record)["aescode"]["overall"] == 1.0


def json_round_trip(record) -> dict:
    import json

    return json.loads(record.model_dump_json())


def shot_with_text() -> Rendering:
    """A 600x800 capture whose snapshot shows "Saturday 10:00" at (40, 300) - (340, 340)."""
    from aesenv.render.models import DomElement

    rendering = shot(800)
    rendering.elements = [DomElement(tag="body", x=0, y=0, w=600, h=800),
                          DomElement(tag="p", parent=0, x=40, y=300, w=300, h=40, text="Saturday 10:00")]
    return rendering


@pytest.mark.parametrize("box, text, passes", [
    ([30, 290, 360, 350], "Saturday 10:00", True),    # around the words it read
    ([30, 290, 360, 350], "saturday, 10:00", True),   # the same words, punctuation and case aside
    ([30, 290, 360, 350], "", True),                  # no words claimed: the region alone
    ([0, 0, 600, 800], "Saturday 10:00", False),      # the whole image for one line points at nothing
    ([30, 290, 360, 350], "Sunday 12:00", False),     # words the page does not show
    ([300, 600, 500, 700], "Saturday 10:00", False),  # shown, but not where it points
    ([-400, -400, -100, -100], "", False),            # outside the image
    ([100, 100, 900, 1200], "", False),               # larger than the image
    ([100, 100, 101, 300], "", False),                # degenerate
    ([100, 100, "wide", 300], "", False),             # not numbers
    (None, "", False),                                # no box
    ([1, 2, 3], "", False),                           # not a box
    ({"left": 30, "top": 290}, None, False),           # another shape: that item fails, the reply stands
])
async def test_a_yes_counts_only_with_a_citation_of_a_real_region(openai_server, channel, box, text, passes):
    task = Task(id="date", prompt="A poster.", canvas={"width": 600, "height": 800},
                checklist=[{"question": "Is the date shown?", "category": "content"}])
    openai_server.default = lambda req: {"answers": [{"id": 1, "answer": "yes", "box": box, "text": text,
                                                      "evidence": "the date line"}]}
    result = await channel.score(PageEvidence(task, ARTIFACT, shot_with_text()))
    (item,) = result.payload["items"]
    assert item["passed"] is passes and result.score == (1.0 if passes else 0.0)
    assert result.status is not ChannelStatus.INFRA_ERROR
    assert ("citation" in item) is (not passes)


async def test_the_prompt_carries_the_guard_and_the_image_size(openai_server, channel):
    from aesenv.quoting import GUARD

    openai_server.default = lambda req: answers((1, "no", ""))
    await channel.score(PageEvidence(TASK, ARTIFACT, shot()))
    for request in openai_server.completions:
        assert GUARD in request.messages[0]["content"]
        assert "The image is 600x800 pixels." in request.text
