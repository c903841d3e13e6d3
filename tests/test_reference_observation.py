"""Reference-conditioned tasks: the task's reference reaches a vision-language policy as one image
in the first prompt of the single-turn and the refine env (`AsyncKindEnv.with_reference`), while
text-only policies keep reading text and a task without a reference is left as it was."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

import aesenv  # noqa: F401 - registers the envs
from aesenv.envs import make_core
from aesenv.envs.base import REFERENCE_NOT_RENDERED
from aesenv.envs.refine import as_text
from aesenv.kinds.web.kind import WEB
from aesenv.tasks import Task
from aesenv.trajectory import run_episode
from policies.base import message_text
from policies.hf import _as_chat
from policies.openai_chat import OpenAIChatPolicy
from support.openai_server import tool_calls

CANVAS = (640, 400)
BLUE = (31, 111, 235)
REFERENCE_PAGE = ('<!doctype html><html><body style="margin:0"><div style="width:640px;height:400px;'
                  'background:rgb(31,111,235);color:#fff;font:40px sans-serif">Jazz night {marker}</div>'
                  '</body></html>')


def _png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _images(message: dict) -> list[bytes]:
    """The inline images of a chat message, decoded."""
    content = message["content"]
    parts = [p for p in content if p["type"] == "image_url"] if isinstance(content, list) else []
    return [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in parts]


async def _first_prompts(pipeline, task: Task) -> tuple[dict, dict]:
    """The task's user turn as the single-turn env and the refine env first show it."""
    _, info = await make_core("AesWeb-v0", [task], pipeline=pipeline).reset(task)
    messages, _ = await make_core("AesWebRefine-v0", [task], pipeline=pipeline).reset(task=task)
    return info["messages"][-1], messages[-1]


async def test_a_reference_page_is_one_image_of_the_canvas_rendered_once(pipeline, monkeypatch):
    task = Task(id="ref-page", prompt="A jazz night poster.", canvas={"width": CANVAS[0], "height": CANVAS[1]},
                reference_html=REFERENCE_PAGE.format(marker="once"))
    renders = []
    real_render = pipeline.renderer.render

    async def counted(html, **options):
        renders.append(html)
        return await real_render(html, **options)

    monkeypatch.setattr(pipeline.renderer, "render", counted)
    single, refine = await _first_prompts(pipeline, task)
    await _first_prompts(pipeline, task)

    for message in (single, refine):
        (png,) = _images(message)
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and image.size == CANVAS
        assert image.convert("RGB").getpixel((CANVAS[0] // 2, CANVAS[1] - 10)) == BLUE  # the reference, not a blank
        assert message_text(message).startswith(task.prompt) and WEB.asking.reference_caption in message_text(message)
    assert single["content"] == refine["content"]
    assert renders == [task.reference_html]  # one render for four resets of two envs


@pytest.mark.parametrize("as_data_uri", [True, False])
async def test_a_reference_image_is_passed_through_as_given(pipeline, as_data_uri):
    png = _png((30, 20), (200, 40, 40))
    encoded = base64.b64encode(png).decode()
    task = Task(id="ref-image", prompt="A landing page like this one.",
                reference_image=f"data:image/png;base64,{encoded}" if as_data_uri else encoded)
    for message in await _first_prompts(pipeline, task):
        assert _images(message) == [png]


async def test_a_task_without_a_reference_keeps_its_plain_text_prompt(pipeline):
    task = Task(id="plain", prompt="A landing page for a bakery.")
    single = make_core("AesWeb-v0", [task], pipeline=pipeline)
    observation, info = await single.reset(task)
    assert observation == {"prompt": task.prompt, "category": task.category.value}
    assert info["messages"] == WEB.chat_prompt(task)
    messages, _ = await make_core("AesWebRefine-v0", [task], pipeline=pipeline).reset(task=task)
    assert messages[-1] == {"role": "user", "content": task.prompt}


async def test_a_plot_reference_is_the_judges_ground_truth_and_stays_hidden(pipeline):
    task = Task(id="ppb-1", kind="plot", category="Data Visualization", prompt="Plot b against a.",
                data_files={"data.csv": "a,b\n1,2\n"}, reference_image=base64.b64encode(_png((8, 8), BLUE)).decode())
    _, info = await make_core("AesPlot-v0", [task], pipeline=pipeline).reset(task)
    messages, _ = await make_core("AesPlotRefine-v0", [task], pipeline=pipeline).reset(task=task)
    assert all(isinstance(m["content"], str) for m in [*info["messages"], *messages])


async def test_a_reference_our_renderer_failed_on_is_said_in_text(pipeline, monkeypatch):
    async def failed(backends, task):
        return None, ""

    monkeypatch.setattr(WEB, "reference", failed)
    task = Task(id="ref-broken", prompt="A poster.", reference_html="<p>reference</p>")
    for message in await _first_prompts(pipeline, task):
        assert message["content"] == task.prompt + REFERENCE_NOT_RENDERED


async def test_text_only_policies_read_the_text_of_a_reference_prompt(pipeline):
    task = Task(id="ref-text", prompt="A landing page like this one.",
                reference_image=base64.b64encode(_png((8, 8), BLUE)).decode())
    messages, _ = await make_core("AesWebRefine-v0", [task], pipeline=pipeline).reset(task=task)
    assert "[image]" in as_text(messages)  # the Gymnasium facade's text observation
    chat = _as_chat(messages)  # what the HF policy templates
    assert all(isinstance(m["content"], str) for m in chat)
    assert chat[-1]["content"].startswith(task.prompt) and "[image omitted]" in chat[-1]["content"]


async def test_the_chat_policy_sends_the_reference_in_its_first_request(openai_server, pipeline):
    png = _png((24, 16), (10, 160, 90))
    task = Task(id="ref-chat", prompt="A landing page like this one.", reference_image=base64.b64encode(png).decode())
    policy = OpenAIChatPolicy("test-model", base_url=openai_server.url, api_key_env="AESENV_TEST_NO_KEY",
                              backoff_s=0.01)
    openai_server.script(tool_calls(("submit", {})), "```html\n<p>hi</p>\n```")
    env = make_core("AesWebRefine-v0", [task], pipeline=pipeline)
    trajectory = await run_episode(env, policy, task=task)
    assert trajectory.end == "submit"
    _, info = await make_core("AesWeb-v0", [task], pipeline=pipeline).reset(task)
    reply = await policy.act(info["messages"])  # a single-turn chat prompt goes through `act` too
    assert "<p>hi</p>" in reply["content"]
    refine_request, single_request = openai_server.completions
    assert refine_request.images == [png] and single_request.images == [png]
    assert single_request.messages[0] == {"role": "system", "content": WEB.asking.system_prompt}
    await policy.close()


async def test_the_refine_agent_loop_gives_a_vl_policy_the_reference_with_the_prompt(pipeline):
    pytest.importorskip("verl")
    from train.agent_loop import AesRefineAgentLoop, for_policy

    task = Task(id="ref-loop", prompt="A landing page like this one.",
                reference_image=base64.b64encode(_png((24, 16), BLUE)).decode())
    messages, _ = await make_core("AesWebRefine-v0", [task], pipeline=pipeline).reset(task=task)
    built = {}

    async def build_initial_tokens(head, tools=None, images=None, **_):
        built.update(head=head, images=images)
        return [1, 2, 3]

    loop = object.__new__(AesRefineAgentLoop)  # only `_open`'s own logic runs: no worker, no server
    loop.ct_build_initial_tokens = build_initial_tokens
    loop._assert_mm_supported = lambda has_images: None
    path = await loop._open([for_policy(m, True)[0] for m in messages], [], True, {})
    assert [image.size for image in built["images"]] == [(24, 16)]
    assert path.images == built["images"] and path.prompt_length == 3
    assert [p["type"] for p in built["head"][-1]["content"]] == ["text", "image"]
