"""The answer cannot configure its own lint (issue 35): HTMLHint's inline config comments have no
effect, one answer's comments never change the rules for the next, and whatever a page does to the
linter is the page's −1, never `infra_error`."""

import asyncio
import json
import os
import shutil
import signal
from pathlib import Path
import subprocess

import pytest

from aesenv.artifact import extract_artifact
from aesenv.kinds.page import PageEvidence as Evidence
from aesenv.kinds.web.execution import ExecutionChannel
from aesenv.lint.htmlhint import AESCODER_RULES, LINT_FAILURE_RULE, HtmlHint, htmlhint_module_dir
from aesenv.paths import node_dir
from aesenv.rewards import ChannelStatus
from aesenv.tasks import Task

pytestmark = pytest.mark.skipif(not shutil.which("node") or not htmlhint_module_dir().is_dir(),
                                reason="HTMLHint not installed: run `aesenv setup`")

TASK = Task(id="lint-forgery", category="Website", prompt="A small page.")

HEAD = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8" />'
        '<meta name="viewport" content="width=device-width" /><title>Shop</title></head>\n')
# Line 4 has an unclosed <span> (tag-pair) and line 5 a duplicate id (id-unique): two violations.
BODY = '<body>{c3}\n<p><span>Open daily</p>{c4}\n<p id="a">x</p><p id="a">y</p>{c5}\n</body></html>\n'


def page(leading: str = "", c3: str = "", c4: str = "", c5: str = "") -> str:
    """The honest page, with a config comment spliced in where it leaves every line number (and
    the column of every violation) as it was."""
    return leading + HEAD + BODY.format(c3=c3, c4=c4, c5=c5)


HONEST = page()

# Every form HTMLHint 1.9.2's verify() honours (core.js: the leading `htmlhint` ruleset comment and
# parseDisableComments), with case and whitespace variants its case-insensitive patterns accept.
# Each with the rules upstream verify() then no longer reports.
BOTH = {"tag-pair", "id-unique"}
FORGED = {
    "disable-all": (page(c3=" <!-- htmlhint-disable -->"), BOTH),
    "disable-all-tight-upper": (page(c3="<!--HTMLHINT-DISABLE-->"), BOTH),
    "disable-rules": (page(c3=" <!-- htmlhint-disable tag-pair id-unique -->"), BOTH),
    "disable-next-line": (page(c3=" <!-- htmlhint-disable-next-line -->"), {"tag-pair"}),
    "disable-next-line-rule": (page(c3=" <!--\thtmlhint-Disable-Next-Line   tag-pair\t-->", c4="<!--htmlhint-disable-next-line id-unique-->"), BOTH),
    "disable-then-enable": (page(c3=" <!-- htmlhint-disable -->", c5=" <!-- htmlhint-enable -->"), {"tag-pair"}),
    "ruleset": (page(leading="<!-- htmlhint tag-pair:false,id-unique:false -->"), BOTH),
    "ruleset-spaced-upper": (page(leading="  \n<!--   HTMLHint  tag-pair:false,  id-unique:false   -->"), BOTH),
}


def shape(result) -> list[tuple[str, int, int]]:
    return sorted((m.rule, m.line, m.col) for m in result.messages)


@pytest.fixture
async def linter():
    h = HtmlHint()
    yield h
    await h.close()


def upstream_verify(html: str) -> list[dict]:
    """HTMLHint's own verify() on our rule set: what these pages did to the lint before."""
    script = ("const {HTMLHint}=require('htmlhint');let s='';process.stdin.on('data',d=>s+=d);"
              "process.stdin.on('end',()=>console.log(JSON.stringify(HTMLHint.verify(s,JSON.parse(process.argv[1]))"
              ".map(m=>m.rule.id))))")
    out = subprocess.run(["node", "-e", script, json.dumps(AESCODER_RULES)], input=html, capture_output=True,
                         text=True, timeout=60, env={"NODE_PATH": str(node_dir() / "node_modules"), "PATH": os.environ["PATH"]})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("form", sorted(FORGED))
async def test_every_inline_config_form_is_inert(linter, form):
    forged, silenced = FORGED[form]
    honest = await linter.lint(HONEST)
    assert {r for r, _, _ in shape(honest)} == BOTH
    # The mechanism is real: HTMLHint's own verify() lets this comment silence the violations.
    assert not silenced & set(upstream_verify(forged)), form
    result = await linter.lint(forged)
    assert result.failure is None
    if form.startswith("ruleset-spaced"):  # its comment adds a line above the page
        assert [(r, line - 1, c) for r, line, c in shape(result)] == shape(honest)
    else:
        assert shape(result) == shape(honest)


async def test_an_inline_ruleset_does_not_change_the_rules_for_the_next_answer(linter):
    poisoned = await linter.lint(page(leading="<!-- htmlhint tag-pair:false,id-unique:false -->"))
    assert {m.rule for m in poisoned.messages} == {"tag-pair", "id-unique"}
    after = await linter.lint(HONEST)  # an unrelated answer on the same worker
    with_fresh = HtmlHint()
    try:
        assert shape(after) == shape(await with_fresh.lint(HONEST))
    finally:
        await with_fresh.close()
    assert {m.rule for m in after.messages} == {"tag-pair", "id-unique"}


@pytest.mark.parametrize("comment", [
    "<!-- htmlhint tag-pair:{oops -->",           # JSON.parse throws inside verify()
    "<!-- htmlhint tag-pair:[1,id-unique -->",
    "<!-- htmlhint __proto__:{\"tag-pair\":false} -->",
])
async def test_a_malformed_config_comment_is_just_a_comment(linter, comment):
    result = await linter.lint(page(leading=comment))
    assert result.failure is None
    assert shape(result) == shape(await linter.lint(HONEST))


async def measure(linter: HtmlHint, html: str, renderer=None):
    """The execution channel's verdict on `html`: its source alone, or with `renderer`, its source
    and the DOM its scripts leave."""
    rendering = await renderer.render(html) if renderer is not None else None
    return await ExecutionChannel(linter).score(Evidence(task=TASK, artifact=extract_artifact(html), rendering=rendering))


async def test_the_execution_channel_fails_forged_and_malformed_pages_like_their_twins(linter):
    honest = await measure(linter, HONEST)
    assert honest.status is ChannelStatus.FAILED and honest.raw == -1.0
    for html in [*(f for f, _ in FORGED.values()), page(leading="<!-- htmlhint tag-pair:{oops -->")]:
        forged = await measure(linter, html)
        assert forged.status is ChannelStatus.FAILED and forged.raw == -1.0
        assert forged.payload["violations_by_rule"] == honest.payload["violations_by_rule"]


# HTMLHint's tag regex backtracks exponentially on `<a x= x= x= ...` left unterminated: a ~250-byte
# page that would hold the linter for hours.
HANGS = '<!DOCTYPE html><html lang="en"><body><a' + " x= x" * 48 + '"'


@pytest.mark.timeout(180)  # a hang guard, far above the two 5-s attempts this costs
async def test_a_page_that_hangs_the_linter_is_its_own_lint_failure():
    h = HtmlHint(timeout_s=5)
    try:
        before = shape(await h.lint(HONEST))
        result = await h.lint(HANGS)
        assert result.failure and "no answer" in result.failure
        assert [m.rule for m in result.messages] == [LINT_FAILURE_RULE]
        verdict = await ExecutionChannel(h).score(Evidence(task=TASK, artifact=extract_artifact(HANGS)))
        assert verdict.status is ChannelStatus.FAILED and verdict.raw == -1.0
        assert "no answer" in verdict.payload["lint_failure"]
        # The shared process was replaced, and the next answer is linted normally.
        assert shape(await h.lint(HONEST)) == before
    finally:
        await h.close()


async def test_an_exception_inside_a_rule_is_the_pages_lint_failure():
    # A rule option that makes attr-lowercase throw on any attribute stands in for a page that
    # trips a bug in a rule: the exception is reported, not raised, and the process lives on.
    h = HtmlHint({**AESCODER_RULES, "attr-lowercase": [None]})
    try:
        result = await h.lint(HONEST)
        assert result.failure and "TypeError" in result.failure
        verdict = await ExecutionChannel(h).score(Evidence(task=TASK, artifact=extract_artifact(HONEST)))
        assert verdict.status is ChannelStatus.FAILED and verdict.raw == -1.0 and "TypeError" in verdict.payload["lint_failure"]
        clean = await h.lint("<p></p>")  # no attribute: the rule never runs
        assert clean.failure is None
    finally:
        await h.close()


async def test_a_huge_attribute_gives_bounded_messages(linter):
    name = "DATA-" + "X" * 1_500_000
    result = await linter.lint(HEAD + f'<body><p {name}="1"><span>x</p></body></html>\n')
    assert result.failure is None
    assert "attr-lowercase" in {m.rule for m in result.messages}
    assert all(len(m.message) <= 301 and len(m.evidence) <= 161 for m in result.messages)


async def test_prototype_named_ids_still_have_to_be_unique(linter):
    result = await linter.lint(HEAD + '<body><p id="constructor">a</p><p id="constructor">b</p>'
                                      '<p id="__proto__">c</p><p id="__proto__">d</p></body></html>\n')
    assert [m.rule for m in result.messages] == ["id-unique", "id-unique"]


async def test_a_linter_killed_under_us_is_neither_infra_nor_the_pages_fault(linter):
    first = await linter.lint(HONEST)
    os.kill(linter._proc.pid, signal.SIGKILL)
    await asyncio.sleep(0)
    again = await linter.lint(HONEST)
    assert again.failure is None and shape(again) == shape(first)


async def test_a_broken_linter_is_infra(monkeypatch, tmp_path):
    from aesenv.lint.htmlhint import HtmlHintUnavailable

    monkeypatch.setenv("AESENV_HOME", str(tmp_path))  # no HTMLHint installed here
    h = HtmlHint()
    with pytest.raises(HtmlHintUnavailable, match="aesenv setup"):
        await h.lint(HONEST)
    verdict = await ExecutionChannel(h).score(Evidence(task=TASK, artifact=extract_artifact(HONEST)))
    assert verdict.status is ChannelStatus.INFRA_ERROR
    await h.close()


CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "forgeries"
LINT_CASES = sorted(p.name for p in CORPUS.glob("lint-*") if (p / "case.json").is_file())


def test_the_corpus_holds_the_lint_forgeries():
    assert len(LINT_CASES) >= 5
    # markup a script writes: by document.write, innerHTML, cloneNode, removal at run time, a shadow root
    assert len([c for c in LINT_CASES if "by-" in c or "run-time" in c or "shadow-root" in c]) >= 5


@pytest.mark.timeout(180)  # hang guard: the backtracking case costs two 5-s attempts
@pytest.mark.parametrize("case", LINT_CASES)
async def test_no_lint_forgery_in_the_corpus_gains_on_execution(case, renderer):
    h = HtmlHint(timeout_s=5)
    try:
        honest = await measure(h, (CORPUS / case / "honest.html").read_text(), renderer)
        forged = await measure(h, (CORPUS / case / "forged.html").read_text(), renderer)
    finally:
        await h.close()
    assert honest.status is ChannelStatus.FAILED and honest.raw == -1.0  # a page with real lint errors
    assert forged.status is ChannelStatus.FAILED and forged.raw == -1.0, forged.payload
    assert forged.payload["scored_on"] == honest.payload["scored_on"] == ["source", "dom"]
    if "lint_failure" not in forged.payload:
        assert forged.payload["violations_by_rule"] == honest.payload["violations_by_rule"]
