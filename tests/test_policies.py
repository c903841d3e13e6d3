"""The offline policies: the template baseline must give real, lint-clean, on-topic pages, and
replay must return saved answers (or say clearly why it cannot)."""

from __future__ import annotations

import html
import json
import re
from collections import Counter

import pytest
import pytest_asyncio

from aesenv.artifact import ArtifactKind, extract_artifact
from aesenv.lint.htmlhint import HtmlHint
from aesenv.tasks import Category, Task, load_tasks
from policies import ReplayPolicy, TemplatePolicy, make_policy
from policies.replay import MissingAnswer
from policies.template import ACCENTS, contrast

TASKS = load_tasks("builtin:web")

# The test's own idea of a key term, kept independent of the template's stopword list.
STOP = set("""
about after also because been before being below between both build called could create design does each
every from have into just like make named need other over please should show some such than that their them
then there these they this those through under until when where which while will with would your using
include includes including
""".split())

VOID = re.compile(r"<(meta|br|img|input|hr|link|source|area|col|embed|track|wbr)\b[^>]*>", re.I)
ADVERSARIAL = Task(id="adv-1", category="Website",
                   prompt='Build a site called "<script>alert(1)</script>" & "quotes" for <b>Bold</b> Corp\'s '
                          "weird ```fenced``` café, with a contact form.")


# Short, odd or hostile prompts: every category must still give a valid page.
ODD_PROMPTS = ("x", "Snake!!!", "Café für Kinder — 東京 & <Tokyo>", "Make a page. " * 150,
               "A dashboard (with) ((nested)) parens,,, and; semicolons: colons!", "named Q", "1234 5678")
ODD_TASKS = [Task(id=f"odd-{c.name}-{i}", category=c, prompt=p)
             for c in Category for i, p in enumerate(ODD_PROMPTS)]


def key_terms(prompt: str) -> list[str]:
    words = re.findall(r"[a-z]+", prompt.lower())
    return sorted({w for w in words if len(w) >= 4 and w not in STOP})


def visible_text(page: str) -> str:
    page = re.sub(r"<(script|style|title)\b.*?</\1\s*>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", page)).lower()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def answers() -> dict[str, str]:
    policy = TemplatePolicy()
    return {t.id: await policy.generate(t) for t in TASKS}


@pytest.fixture(scope="module")
def pages(answers) -> dict[str, str]:
    return {tid: extract_artifact(text).code for tid, text in answers.items()}


# --------------------------------------------------------------------------------------------
# Built-in suite
# --------------------------------------------------------------------------------------------


def test_builtin_suite_covers_every_category():
    assert len(TASKS) >= 25
    counts = Counter(t.category for t in TASKS)
    assert set(counts) == set(Category)
    assert min(counts.values()) >= 5
    assert len({t.id for t in TASKS}) == len(TASKS)
    assert all(t.kind == "web" and len(t.prompt) > 40 for t in TASKS)


# --------------------------------------------------------------------------------------------
# Template policy
# --------------------------------------------------------------------------------------------


def test_make_policy_builds_template():
    policy = make_policy("template")
    assert isinstance(policy, TemplatePolicy) and policy.name == "template"
    assert isinstance(make_policy("template:ignored"), TemplatePolicy)


async def test_template_is_deterministic(answers):
    fresh = TemplatePolicy()
    for task in TASKS:
        assert await fresh.generate(task) == answers[task.id], task.id


def test_answer_looks_like_a_model_answer(answers):
    for tid, text in answers.items():
        prose, fence, _ = text.partition("```html\n")
        assert fence, tid
        assert 0 < len(prose.strip()) < 300 and "\n" not in prose.strip(), tid
        artifact = extract_artifact(text)
        assert artifact.kind is ArtifactKind.HTML and not artifact.truncated, (tid, artifact.reason)


def test_pages_are_complete_single_file_documents(pages):
    for tid, page in pages.items():
        assert page.startswith("<!DOCTYPE html>"), tid
        assert '<html lang="en">' in page, tid
        assert '<meta charset="utf-8" />' in page and 'name="viewport"' in page, tid
        assert re.search(r"<title>[^<]+</title>", page), tid
        assert page.rstrip().endswith("</html>"), tid
        assert 6_000 <= len(page.encode()) <= 25_000, (tid, len(page.encode()))
        assert "@media (max-width" in page, tid  # a narrow-screen layout exists
        # No external resources: no remote URLs, imports or fonts.
        assert not re.search(r"(src|href)=\"(https?:)?//", page), tid
        assert "@import" not in page and "@font-face" not in page and "url(http" not in page, tid


def test_every_void_element_is_self_closed(pages):
    for tid, page in pages.items():
        tags = VOID.findall(page)
        assert tags, tid
        for m in VOID.finditer(page):
            assert m.group(0).endswith("/>"), (tid, m.group(0))


def test_ids_are_unique(pages):
    for tid, page in pages.items():
        ids = re.findall(r'\sid="([^"]+)"', page)
        assert len(ids) == len(set(ids)), (tid, [i for i, n in Counter(ids).items() if n > 1])


def test_prompt_key_terms_appear_in_visible_text(pages):
    coverage = []
    for task in TASKS:
        terms = key_terms(task.prompt)
        text = visible_text(pages[task.id])
        found = [w for w in terms if w in text]
        assert len(found) * 2 >= len(terms), (task.id, sorted(set(terms) - set(found)))
        coverage.append(len(found) / len(terms))
    assert sum(coverage) / len(coverage) >= 0.8


def test_category_components_are_present(pages):
    for task in TASKS:
        page = pages[task.id]
        low = page.lower()
        if task.category is Category.DATA_VISUALIZATION:
            svg = re.search(r"<svg class=\"chart\".*?</svg>", page, re.S)
            assert svg, task.id
            chart = svg.group(0)
            assert chart.count("grid-line") >= 4, task.id  # gridlines
            assert chart.count('class="axis-title"') == 2, task.id  # x and y axis titles
            assert "<rect class=\"bar\"" in chart or "<path d=\"M" in chart, task.id
            assert 'class="legend"' in page, task.id
        elif task.category is Category.GAME_DEV:
            assert "<canvas" in low and 'addeventlistener("keydown"' in low, task.id
            assert "requestanimationframe" in low and 'id="score"' in low, task.id
            assert re.search(r"<button[^>]*>(Start|Restart)", page), task.id
        elif task.category is Category.DESIGN_3D:
            assert "preserve-3d" in low and "perspective" in low, task.id
            assert "@keyframes" in low and "rotatey(" in low, task.id
            assert "pointerdown" in low and "data-rotate" in low, task.id
        elif task.category is Category.UI_COMPONENT:
            assert "<script>" in low and "addeventlistener(" in low, task.id
            assert "<button" in low, task.id
        elif task.category is Category.WEBSITE:
            assert "<header" in low and "<nav" in low and "<footer" in low, task.id
            assert low.count("<section") >= 3 and "<form" in low, task.id


@pytest.mark.parametrize("prompt, marker", [
    ("A settings panel with a toggle switch for dark mode and notifications.", 'role="switch"'),
    ("Tabs for a recipe: Ingredients, Steps and Notes.", 'role="tab"'),
    ("A modal dialog that confirms publishing a post.", 'role="dialog"'),
    ("An accordion of shipping questions.", "aria-expanded"),
    ("A login form with validation for email and password.", "<form"),
    ("A pricing table with a monthly/yearly switch.", "data-yearly"),
    ("A rating widget with stars and a comment box.", 'class="opt"'),
])
async def test_ui_component_picks_a_working_widget(prompt, marker):
    text = await TemplatePolicy().generate(Task(id="ui", category="UI Component", prompt=prompt))
    page = extract_artifact(text).code
    assert marker in page and "<script>" in page


async def test_different_prompts_give_different_pages(pages):
    assert len(set(pages.values())) == len(pages)
    policy = TemplatePolicy()
    a = await policy.generate(Task(id="a", category="Website", prompt="A website for a mountain bike repair shop."))
    b = await policy.generate(Task(id="b", category="Website", prompt="A website for a jazz club with live music."))
    assert a != b
    assert "bike" in visible_text(extract_artifact(a).code)
    assert "jazz" in visible_text(extract_artifact(b).code)


async def test_prompt_text_is_escaped():
    page = extract_artifact(await TemplatePolicy().generate(ADVERSARIAL)).code
    assert "<script>alert" not in page and "<b>Bold" not in page
    assert "&lt;script&gt;" in page or "alert" not in page
    assert page.count("<script>") <= 1  # only the page's own script


def test_accent_colours_keep_text_readable(pages):
    assert len(ACCENTS) >= 6
    for name, colour in ACCENTS:
        assert contrast(colour, "#ffffff") >= 4.5, name
    used = set()
    for tid, page in pages.items():
        m = re.search(r"--accent:(#[0-9a-f]{6})", page)
        assert m and m.group(1) in {c for _, c in ACCENTS}, tid
        used.add(m.group(1))
    assert len(used) >= 4  # the hash spreads prompts over the palette


async def test_odd_prompts_still_give_whole_pages():
    policy = TemplatePolicy()
    for task in ODD_TASKS:
        artifact = extract_artifact(await policy.generate(task))
        assert artifact.kind is ArtifactKind.HTML and not artifact.truncated, task.id
        assert artifact.code.startswith("<!DOCTYPE html>") and artifact.code.rstrip().endswith("</html>"), task.id


async def test_all_template_pages_pass_htmlhint(pages):
    linter = HtmlHint()
    policy = TemplatePolicy()
    extra = [(t.id, extract_artifact(await policy.generate(t)).code) for t in [ADVERSARIAL, *ODD_TASKS]]
    try:
        for tid, page in [*pages.items(), *extra]:
            messages = (await linter.lint(page)).messages
            assert messages == [], (tid, [(m.rule, m.line, m.evidence[:80]) for m in messages[:5]])
    finally:
        await linter.close()


# --------------------------------------------------------------------------------------------
# Replay policy
# --------------------------------------------------------------------------------------------


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


async def test_replay_reads_the_official_model_answer_layout(tmp_path):
    f = _write(tmp_path / "answers.jsonl", [
        {"question_id": 7, "answer_id": "x", "model_id": "m",
         "choices": [{"index": 0, "turns": [{"content": "```html\n<!DOCTYPE html><p>seven</p>\n```"}]}]},
        {"id": "web-2", "choices": [{"turns": [{"content": "two"}]}]},
    ])
    policy = make_policy(f"replay:{f}")
    assert isinstance(policy, ReplayPolicy) and policy.name == "replay"
    assert "seven" in await policy.generate(Task(id="7", prompt="p"))
    assert await policy.generate(Task(id="web-2", prompt="p")) == "two"


async def test_replay_reads_the_plain_layout(tmp_path):
    f = _write(tmp_path / "plain.jsonl", [
        {"id": "a", "answer": "A"}, "", {"id": 2, "response": "B"}, {"id": "c", "text": "C"},
    ])
    policy = ReplayPolicy(str(f))
    assert [await policy.generate(Task(id=i, prompt="p")) for i in ("a", "2", "c")] == ["A", "B", "C"]


async def test_replay_missing_answer_names_id_and_file(tmp_path):
    f = _write(tmp_path / "few.jsonl", [{"id": "a", "answer": "A"}])
    policy = ReplayPolicy(str(f))
    with pytest.raises(MissingAnswer) as info:
        await policy.generate(Task(id="zzz-404", prompt="p"))
    assert isinstance(info.value, KeyError)
    assert "zzz-404" in str(info.value) and str(f) in str(info.value)


@pytest.mark.parametrize("rows, line", [
    ([{"id": "a", "answer": "A"}, "{not json"], 2),
    ([{"id": "a", "answer": "A"}, {"id": "b"}], 2),
    ([{"answer": "no id"}], 1),
    (["[1, 2]"], 1),
    ([{"id": "a", "choices": []}], 1),
    ([{"id": "a", "answer": 5}], 1),
])
def test_replay_bad_file_names_file_and_line(tmp_path, rows, line):
    f = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ValueError) as info:
        ReplayPolicy(str(f))
    assert f"{f}:{line}" in str(info.value)


def test_replay_needs_an_existing_file(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        ReplayPolicy(str(tmp_path / "nope.jsonl"))
    with pytest.raises(ValueError, match="replay:PATH"):
        make_policy("replay")
