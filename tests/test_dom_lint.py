"""The execution channel also lints the markup scripts write (issue 47): the DOM as the page's scripts
left it, serialised by the renderer from our own world (`aesenv/render/markup.js`), linted with the
rules that keep their meaning on serialised markup (`DOM_RULES`). Faulty markup written by
`document.write`, `innerHTML` or `appendChild`, or a `lang` or `<title>` removed at run time, fails
like the same fault in the source; correct markup written by script still passes. The paper's
config lints the source alone and records the DOM's result beside it. A page with no DOM to lint
because of itself fails; only our side failing leaves the DOM out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from aesenv.artifact import extract_artifact
from aesenv.kinds.page import PageEvidence
from aesenv.kinds.web.execution import ExecutionChannel, ExecutionOptions
from aesenv.lint.htmlhint import AESCODER_RULES, DOM_RULES, LINT_FAILURE_RULE, SOURCE_ONLY, HtmlHint, htmlhint_module_dir
from aesenv.render import RenderConfig, Rendering, RenderStatus
from aesenv.render.models import DomMarkup
from aesenv.rewards import ChannelStatus, PipelineConfig, RewardPipeline
from aesenv.tasks import Task

pytestmark = pytest.mark.skipif(not shutil.which("node") or not htmlhint_module_dir().is_dir(),
                                reason="HTMLHint not installed: run `aesenv setup`")

ROOT = Path(__file__).resolve().parents[1]
TASK = Task(id="dom-lint", category="Website", prompt="A small gallery page.")
HEAD = ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n<title>Gallery</title>\n</head>\n')
IMG = "data:image/gif;base64,R0lGODlhAQABAAAAACw="


def page(body: str) -> str:
    """A page whose source passes every one of AesCoder's rules, around `body`."""
    return HEAD + f"<body>\n<h1>Gallery</h1>\n{body}\n</body>\n</html>\n"


@pytest.fixture
async def linter():
    h = HtmlHint()
    yield h
    await h.close()


async def verdict(linter, html: str, rendering: Rendering | None, **options):
    channel = ExecutionChannel(linter, ExecutionOptions(**options))
    return await channel.score(PageEvidence(TASK, extract_artifact(html), rendering))


# -- the markup -----------------------------------------------------------------------------------


async def test_the_markup_is_the_dom_the_scripts_left_read_where_the_page_cannot_reach(renderer):
    # The page replaces every serialiser its own world has; ours are out of its reach.
    html = page(f"""<div id="g"></div><script>
XMLSerializer.prototype.serializeToString = () => "<p>clean</p>";
Object.defineProperty(Element.prototype, "outerHTML", {{ get() {{ return "<p>clean</p>"; }} }});
Object.defineProperty(Element.prototype, "innerHTML", {{ get() {{ return "<p>clean</p>"; }}, set(v) {{}} }});
Element.prototype.getHTML = () => "<p>clean</p>";
document.write('<img src="{IMG}" class="by-write">');
const img = document.createElement("img"); img.src = "{IMG}"; img.className = "by-append";
document.getElementById("g").appendChild(img);
</script>""")
    rendering = await renderer.render(html)
    markup = rendering.markup
    assert rendering.status is RenderStatus.OK and markup is not None and not markup.problem
    assert markup.html.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    assert 'class="by-write"' in markup.html and 'class="by-append"' in markup.html
    assert "clean" not in markup.html.replace('"<p>clean</p>"', "")  # only the page's own script text
    assert markup.chars == len(markup.html)


async def test_the_doctype_is_the_documents_own_and_fails_as_in_the_source(renderer, linter):
    legacy = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
              '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">')
    html = page("<p>Old school.</p>").replace("<!DOCTYPE html>", legacy)
    rendering = await renderer.render(html)
    assert rendering.markup.html.startswith(legacy + "\n")
    result = await verdict(linter, html, rendering)
    assert result.payload["dom"]["violations_by_rule"] == {"doctype-html5": 1}
    assert result.payload["source"]["violations_by_rule"] == {"doctype-html5": 1}


async def test_shadow_roots_are_serialised_inline_closed_ones_through_the_protocol(renderer):
    html = page("""<div id="host"></div><div id="shut"></div><script>
const outer = document.getElementById("host").attachShadow({ mode: "open" });
outer.innerHTML = '<p id="inner">outer root</p><div id="deep"></div>';
outer.getElementById("deep").attachShadow({ mode: "open" }).innerHTML = "<b>nested root</b>";
document.getElementById("shut").attachShadow({ mode: "closed" }).innerHTML = "<i>closed root</i>";
</script>""")
    markup = (await renderer.render(html)).markup
    assert markup.shadow_roots == 3
    assert '<div id="host"><template shadowrootmode="open"><p id="inner">outer root</p>' in markup.html
    assert '<template shadowrootmode="open"><b>nested root</b></template>' in markup.html
    assert '<template shadowrootmode="closed"><i>closed root</i></template>' in markup.html


async def test_a_dom_over_the_bound_is_the_pages_failure_and_is_never_serialised(renderer, linter):
    html = page("<pre id=\"p\"></pre><script>document.getElementById('p').textContent = 'x&'.repeat(2500000);</script>")
    rendering = await renderer.render(html)
    bound = renderer.config.max_markup_chars
    assert rendering.status is RenderStatus.OK
    assert rendering.markup.html == "" and rendering.markup.chars > bound
    assert f"more than {bound} characters" in rendering.markup.problem
    result = await verdict(linter, html, rendering)
    assert result.status is ChannelStatus.FAILED and result.raw == -1.0
    assert result.payload["source"]["passed"] and not result.payload["dom"]["passed"]
    assert "characters" in result.payload["dom"]["lint_failure"]
    assert result.payload["violations_by_rule"] == {LINT_FAILURE_RULE: 1}


async def test_a_page_that_removes_its_document_element_is_rendered_not_our_failure(renderer, linter):
    html = page("<script>document.documentElement.remove();</script>")
    rendering = await renderer.render(html)
    assert rendering.status is RenderStatus.OK, rendering.error
    assert rendering.markup.html == "<!DOCTYPE html>\n"
    assert (await verdict(linter, html, rendering)).payload["dom"]["passed"]


# -- which rules, and what the answer cannot change ----------------------------------------------


def test_the_dom_is_linted_with_the_semantic_rules_only():
    on = {rule for rule, value in DOM_RULES.items() if value}
    assert on == {rule for rule, value in AESCODER_RULES.items() if value} - set(SOURCE_ONLY)
    assert {"alt-require", "id-unique", "html-lang-require", "title-require", "meta-charset-require",
            "meta-charset-utf-8", "meta-viewport-require", "doctype-html5"} == on
    assert set(SOURCE_ONLY) == {"tagname-lowercase", "attr-lowercase", "attr-value-double-quotes", "tag-pair",
                                "tag-self-close"}


async def test_serialised_markup_would_fail_the_syntactic_rules_on_every_page(renderer, linter):
    """Why the split: the browser's serialisation of a lint-clean page fails tag-self-close (it never
    self-closes a void element), which says nothing about the answer."""
    html = page('<svg viewBox="0 0 10 10" width="40" height="40"><linearGradient id="fade"></linearGradient>'
                '<rect width="10" height="10" fill="url(#fade)" /></svg><p>Line<br />break</p>')
    rendering = await renderer.render(html)
    assert not (await linter.lint(html)).messages  # the source is clean
    every_rule = {m.rule for m in (await linter.lint(rendering.markup.html)).messages}
    assert "tag-self-close" in every_rule
    assert not (await linter.lint(rendering.markup.html, DOM_RULES)).messages


async def test_config_comments_a_script_writes_into_the_dom_are_inert(renderer, linter):
    html = page(f"""<script>
document.write('<!-- htmlhint alt-require:false,id-unique:false -->');
document.write('<!-- htmlhint-disable --><img src="{IMG}"><p id="twin">a</p><p id="twin">b</p>');
</script>""")
    result = await verdict(linter, html, await renderer.render(html))
    assert result.payload["source"]["passed"]
    assert result.payload["dom"]["violations_by_rule"] == {"alt-require": 1, "id-unique": 1}
    assert result.status is ChannelStatus.FAILED and result.raw == -1.0


# -- honest scripts pass, forged markup fails -----------------------------------------------------

HONEST_BY_SCRIPT = {
    "document.write": f"""<script>document.write('<img src="{IMG}" alt="Harbour at dawn">');</script>""",
    "innerHTML": f"""<div id="g"></div><script>
document.getElementById("g").innerHTML = ["Dawn", "Dusk"].map((t) => `<figure><img src="{IMG}" alt="${{t}}"><figcaption>${{t}}</figcaption></figure>`).join("");
</script>""",
    "appendChild-svg": """<div id="chart"></div><script>
const NS = "http://www.w3.org/2000/svg", svg = document.createElementNS(NS, "svg");
svg.setAttribute("viewBox", "0 0 100 40");
const grad = document.createElementNS(NS, "linearGradient"); grad.id = "bar-fill"; svg.appendChild(grad);
for (const [i, h] of [12, 30, 22].entries()) {
  const r = document.createElementNS(NS, "rect");
  r.setAttribute("x", 10 + i * 30); r.setAttribute("y", 40 - h); r.setAttribute("width", 20); r.setAttribute("height", h);
  r.setAttribute("fill", "url(#bar-fill)"); svg.appendChild(r);
}
document.getElementById("chart").appendChild(svg);
</script>""",
    # Each instance of a component has its own `#label` in its own shadow tree: not a duplicate.
    "web-component": """<photo-card caption="Dawn"></photo-card><photo-card caption="Dusk"></photo-card><script>
customElements.define("photo-card", class extends HTMLElement {
  connectedCallback() {
    this.attachShadow({ mode: "open" }).innerHTML = `<p id="label">${this.getAttribute("caption")}</p>`;
  }
});
</script>""",
    "template-clone": f"""<template id="row"><li><img src="{IMG}" alt="thumbnail" /><span class="name"></span></li></template>
<ul id="list"></ul><script>
for (const name of ["Dawn", "Dusk", "Noon"]) {{
  const row = document.getElementById("row").content.cloneNode(true);
  row.querySelector(".name").textContent = name;
  document.getElementById("list").appendChild(row);
}}
</script>""",
    "throws-after-writing": f"""<script>document.write('<img src="{IMG}" alt="Dawn">'); undefinedFunction();</script>""",
}


@pytest.mark.parametrize("name", sorted(HONEST_BY_SCRIPT))
async def test_a_page_whose_scripts_write_correct_markup_still_passes(renderer, linter, name):
    html = page(HONEST_BY_SCRIPT[name])
    rendering = await renderer.render(html)
    result = await verdict(linter, html, rendering)
    assert result.payload["scored_on"] == ["source", "dom"]
    assert result.status is ChannelStatus.OK and result.raw == 1.0, result.payload
    if name == "throws-after-writing":
        assert rendering.page_errors  # the page's own error, and its DOM is still linted
    if name == "web-component":
        assert rendering.markup.shadow_roots == 2
        assert all(f'<template shadowrootmode="open"><p id="label">{t}</p>' in rendering.markup.html for t in ("Dawn", "Dusk"))


FORGED_BY_SCRIPT = {
    "document.write": (f"""<script>document.write('<img src="{IMG}">');</script>""", "alt-require"),
    "innerHTML": (f"""<div id="g"></div><script>document.getElementById("g").innerHTML = '<img src="{IMG}">';</script>""",
                  "alt-require"),
    "duplicate-id": ("""<p id="note">a</p><script>document.body.appendChild(document.getElementById("note").cloneNode(true));</script>""",
                     "id-unique"),
    "lang-removed": ("""<script>document.documentElement.removeAttribute("lang");</script>""", "html-lang-require"),
    "title-removed": ("""<script>document.querySelector("title").remove();</script>""", "title-require"),
    "input-image": ("""<script>document.body.insertAdjacentHTML("beforeend", '<input type="image" src="go.png">');</script>""",
                    "alt-require"),
}


@pytest.mark.parametrize("name", sorted(FORGED_BY_SCRIPT))
async def test_faulty_markup_a_script_writes_fails_by_default_and_the_paper_switch_shows_the_gap(renderer, linter, name):
    script, rule = FORGED_BY_SCRIPT[name]
    html = page(script)
    rendering = await renderer.render(html)
    ours = await verdict(linter, html, rendering)
    assert ours.status is ChannelStatus.FAILED and ours.raw == -1.0
    assert ours.payload["source"] == {"passed": True, "violations_by_rule": {}}
    assert ours.payload["dom"]["violations_by_rule"] == {rule: 1}
    assert [v["in"] for v in ours.payload["violations"]] == ["dom"]
    paper = await verdict(linter, html, rendering, dom_lint=False)
    assert paper.status is ChannelStatus.OK and paper.raw == 1.0  # AesCoder's execution agent, as published
    assert paper.payload["scored_on"] == ["source"] and paper.payload["violations_by_rule"] == {}
    assert paper.payload["dom"]["violations_by_rule"] == {rule: 1}  # ... and the record shows the gap


# -- whose fault ----------------------------------------------------------------------------------

CLEAN = page("<p>Nothing written by script.</p>")


@pytest.mark.parametrize("rendering, status, dom", [
    # No DOM because of the page: its DOM lint fails.
    (Rendering(status=RenderStatus.CRASHED, error="the page crashed its renderer"), ChannelStatus.FAILED, "crashed"),
    (Rendering(status=RenderStatus.TIMEOUT, error="page hung in: snapshot"), ChannelStatus.FAILED, "hung"),
    (Rendering(status=RenderStatus.OK, error="markup failed: Execution context was destroyed"), ChannelStatus.FAILED,
     "failed before its DOM could be read"),
    (Rendering(status=RenderStatus.OK, markup=DomMarkup(chars=9_000_000, problem="the DOM holds more than 2000000 "
                                                                                  "characters of markup")),
     ChannelStatus.FAILED, "more than 2000000"),
    # No DOM because of us (or no rendering at all): the DOM is left out, with a note.
    (Rendering(status=RenderStatus.INFRA_ERROR, error="browser error: Target closed"), ChannelStatus.OK, "our side"),
    (None, ChannelStatus.OK, "not rendered"),
])
async def test_no_dom_is_the_pages_failure_unless_it_is_ours(linter, rendering, status, dom):
    result = await verdict(linter, CLEAN, rendering)
    assert result.status is status
    assert result.payload["source"]["passed"]
    if status is ChannelStatus.FAILED:
        assert result.raw == -1.0 and result.payload["scored_on"] == ["source", "dom"]
        assert dom in result.payload["dom"]["lint_failure"]
        paper = await verdict(linter, CLEAN, rendering, dom_lint=False)
        assert paper.status is ChannelStatus.OK and dom in paper.payload["dom"]["lint_failure"]
    else:
        assert result.raw == 1.0 and result.payload["scored_on"] == ["source"]
        assert dom in result.payload["dom"]["skipped"]


async def test_a_hung_page_is_linted_as_far_as_its_dom_got(linter):
    from aesenv.render import Renderer

    config = RenderConfig(navigation_timeout_s=2, settle_timeout_s=1, snapshot_timeout_s=3, capture_timeout_s=5)
    html = page(f"""<script>document.write('<img src="{IMG}">'); while (true) {{}}</script>""")
    async with Renderer(config) as hanging:
        rendering = await hanging.render(html)
    assert rendering.status is RenderStatus.TIMEOUT and "navigate" in rendering.stages_timed_out
    result = await verdict(linter, html, rendering)
    assert result.status is ChannelStatus.FAILED and result.payload["dom"]["violations_by_rule"] == {"alt-require": 1}


# -- the configs ----------------------------------------------------------------------------------


def _reward_kwargs(name: str) -> dict:
    return yaml.safe_load((ROOT / "train" / "config" / f"{name}.yaml").read_text())["reward"]["custom_reward_function"][
        "reward_kwargs"]


async def test_the_paper_config_lints_the_source_only_and_records_the_dom(renderer):
    """AesCoder's config (grpo_ar_single_turn) scores the source alone: the forgery that writes its
    `<img>` by script earns +1 there, and the record shows its DOM failing; the default config, and
    ours that are not a paper's, score the DOM too."""
    forged = (ROOT / "benchmarks" / "forgeries" / "lint-img-without-alt-by-document-write" / "forged.html").read_text()
    paper_options = _reward_kwargs("grpo_ar_single_turn")["channel_options"]
    assert paper_options == {"execution": {"dom_lint": False}}
    assert not ExecutionOptions(**paper_options["execution"]).dom_lint and ExecutionOptions().dom_lint
    for ours in ("gdpo_single_turn", "grpo_multi_turn"):
        assert _reward_kwargs(ours)["channel_options"]["execution"] == {"dom_lint": True}
    results = {}
    for name, config in [("paper", PipelineConfig(channels=["execution"], channel_options=paper_options)),
                         ("default", PipelineConfig(channels=["execution"]))]:
        async with RewardPipeline(config, renderer=renderer) as pipeline:
            results[name] = (await pipeline.score(TASK, forged)).record.channels["execution"]
    assert results["paper"].raw == 1.0 and results["paper"].payload["scored_on"] == ["source"]
    assert results["paper"].payload["dom"]["violations_by_rule"] == {"alt-require": 3}
    assert results["default"].raw == -1.0 and results["default"].payload["violations_by_rule"] == {"alt-require": 3}
