import asyncio
import functools

import pytest

from aesenv.judging.base import StaticJudgement
from aesenv.lint.htmlhint import HtmlHint
from aesenv.rewards import ChannelStatus, RewardPipeline
from aesenv.tasks import Task

TASK = Task(id="bakery", category="Website",
            prompt="A landing page for a neighborhood bakery with a menu, opening hours and a contact form.")

CLEAN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8" /><meta name="viewport" content="width=device-width, initial-scale=1" />
<title>Crumb Bakery</title><style>body{font-family:sans-serif;margin:0;color:#222}main{max-width:900px;margin:auto;padding:24px}</style>
</head><body><main><h1>Crumb Bakery</h1><h2>Menu</h2><ul><li>Sourdough loaf</li><li>Croissant</li></ul>
<h2>Opening hours</h2><p>Tuesday to Sunday, 7am to 3pm.</p><h2>Contact</h2>
<form><label for="e">Email</label><input id="e" type="email" /><button type="submit">Send</button></form>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="" /></main></body></html>"""


async def test_clean_page_passes_execution_and_gets_full_record(pipeline):
    scored = await pipeline.score(TASK, f"```html\n{CLEAN}\n```")
    rec = scored.record
    assert rec.status == "ok", rec
    ex = rec.channels["execution"]
    assert ex.status is ChannelStatus.OK and ex.raw == 1.0, ex.payload.get("violations")
    st = rec.channels["static"]
    assert st.status is ChannelStatus.OK and 0 < st.raw <= 100
    inter = rec.channels["interactive"]
    # Its one interaction, the contact form, has no handler: submitting it changes nothing.
    assert inter.status is ChannelStatus.FAILED and inter.raw == 0.0, inter.payload.get("steps")
    assert rec.reward == pytest.approx(0.1 * 1 + 0.8 * st.raw + 0.1 * inter.raw)
    assert rec.provenance["htmlhint"] == "1.9.2" and rec.provenance["browser_version"]
    assert rec.artifact.sha256 == scored.artifact.sha256


async def test_lint_violations_give_minus_one_with_the_list(pipeline):
    sloppy = CLEAN.replace('<meta charset="utf-8" />', "<meta charset='latin1'>").replace(' lang="en"', "")
    rec = (await pipeline.score(TASK, sloppy)).record
    ex = rec.channels["execution"]
    assert ex.raw == -1.0 and ex.status is ChannelStatus.FAILED
    rules = set(ex.payload["violations_by_rule"])
    assert {"html-lang-require", "attr-value-double-quotes", "tag-self-close", "meta-charset-utf-8"} <= rules


@pytest.mark.parametrize("answer, expect", [
    ("", "empty"),
    ("I would build a lovely bakery site with warm colors.", "prose"),
    (bytes(range(256)) * 40, "binary"),
    ("<html><body>" + "<p>filler</p>" * 400_000 + "</body></html>", "limit"),
    ("```jsx\nimport React from 'react';\nexport default () => <div className={s}>x</div>;\n```", "React"),
])
async def test_bad_answers_give_failure_records_not_crashes(pipeline, answer, expect, monkeypatch):
    """A bad answer is scored without being rendered (what it costs is `aesenv bench deadlines`'
    to measure): the renderer is never called and no render time is recorded."""
    renders = []
    for method in ("render", "session"):
        original = getattr(pipeline.renderer, method)
        monkeypatch.setattr(pipeline.renderer, method,
                            lambda *a, _original=original, _method=method, **k: renders.append(_method) or _original(*a, **k))
    scored = await pipeline.score(TASK, answer)
    rec = scored.record
    assert renders == [] and scored.rendering is None
    assert set(rec.timings_ms) == {"extract", "channels", "total", *(f"channel.{name}" for name in rec.channels)}
    assert rec.status == "ok"  # a bad answer is the model's failure, scored, not an infra error
    assert expect in rec.failure
    assert rec.channels["execution"].raw == -1.0 and rec.channels["static"].raw == 0.0
    assert rec.reward == pytest.approx(-0.1)


async def test_invalid_utf8_still_renders_and_is_noted(pipeline):
    raw = CLEAN.encode().replace(b"Sourdough", b"Sour\xffdough")
    rec = (await pipeline.score(TASK, raw)).record
    assert rec.status == "ok" and "invalid UTF-8" in rec.artifact.reason
    assert rec.channels["static"].raw > 0


async def test_blank_page_is_a_semantic_failure_not_infra(pipeline):
    blank = CLEAN.split("<body>")[0] + "<body></body></html>"
    rec = (await pipeline.score(TASK, blank)).record
    st = rec.channels["static"]
    assert rec.status == "ok" and st.status is ChannelStatus.FAILED
    assert st.raw < 20 and "blank" in st.payload["reason"]


class _BrokenJudge:
    name, version = "broken", "0"

    async def judge(self, task, rendering) -> StaticJudgement:
        raise TimeoutError("judge endpoint did not answer")


class _SlowJudge:
    """Never answers: only the channel deadline can end it."""

    name, version = "slow", "0"

    async def judge(self, task, rendering) -> StaticJudgement:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.mark.parametrize("judge", [_BrokenJudge(), _SlowJudge()])
async def test_judge_failure_is_masked_and_voids_the_reward(renderer, judge):
    from aesenv.rewards import PipelineConfig

    p = RewardPipeline(PipelineConfig(channel_timeout_s=2), renderer=renderer, judges={"web": judge})
    try:
        rec = (await p.score(TASK, CLEAN)).record
    finally:
        await p.close_parts()
    assert rec.channels["static"].status is ChannelStatus.INFRA_ERROR
    assert rec.channels["static"].score is None
    assert rec.status == "infra_error" and rec.reward is None and rec.normalized is None
    assert rec.channels["execution"].raw == 1.0  # the other channels still report


async def test_missing_htmlhint_is_infra_error(renderer, tmp_path, monkeypatch):
    monkeypatch.setenv("AESENV_HOME", str(tmp_path))
    p = RewardPipeline(renderer=renderer, linter=HtmlHint())
    try:
        rec = (await p.score(TASK, CLEAN)).record
    finally:
        await p.close_parts()
    ex = rec.channels["execution"]
    assert ex.status is ChannelStatus.INFRA_ERROR and "aesenv setup" in ex.payload["reason"]
    assert rec.reward is None


async def test_the_first_screen_is_cut_only_when_asked_for_and_travels_pickled(pipeline, monkeypatch):
    import pickle

    from aesenv.render.models import Rendering
    cuts = []
    cut = Rendering.viewport_png.func

    def counted(rendering):
        cuts.append(1)
        return cut(rendering)

    monkeypatch.setattr(Rendering, "viewport_png", functools.cached_property(counted))
    Rendering.viewport_png.__set_name__(Rendering, "viewport_png")
    tall = CLEAN.replace("</main>", '<div style="height:3000px"></div></main>')
    scored = await pipeline.score(TASK, f"```html\n{tall}\n```")
    assert cuts == []  # scoring alone never cuts the screen out of the full-page capture
    sent = pickle.loads(pickle.dumps(scored))  # as a Ray actor returns it: the screen is made first
    assert len(cuts) == 1 and sent.make_screen is None
    assert sent.screen == scored.screen and sent.screen[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(cuts) == 1  # made once, then kept
