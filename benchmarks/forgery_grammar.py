"""The grammar of the forgery search: hiding primitives x content kinds x honest bases.

A *mutation* puts one piece of content (`Content`: copy in the prompt's words, an AesCode required
string, a table, an ECharts chart, controls, headings, a project's sections, plot text) into an
honest artifact through one hiding primitive (`Primitive`: a CSS, HTML or script mechanism meant to
keep it unseen), delivered by one `Delivery` (inline, a shadow root, a script after load, ...) at
one `Slot` (a place on the page picked from the honest capture's pixels). Primitives are data: a
name, a family and the stylesheet, markup and script they emit, so a report can say what each did.
Plot mutations are the same over matplotlib: a text role added through one `PlotPrimitive`.

Nothing here decides whether a mutation is a forgery: `benchmarks.forgery_search` renders it, keeps
it only when its capture is pixel-identical to its honest twin's, and then compares the scores.
A primitive that does not hide on some page is simply not kept there.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from string import Template

from aesenv.tasks import Task
from aesenv.tasks.model import ChartData, TableData, TextExact

ECHARTS_URL = "https://cdn.jsdelivr.net/npm/echarts@5/dist/echarts.min.js"
CONTENT_FONT = "Arial,Helvetica,sans-serif"


# ------------------------------------------------------------------------------------------------
# Where the content goes
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A place for the content, in page pixels. `quiet`: a rectangle of one colour (`bg`) in the
    first screen; `quiet-below`: one below the first screen; `ink`: the busiest rectangle of the
    first screen (text, images: ink that is not the content's); `flow`: the end of the body, in
    flow (only primitives that take no room keep the page's pixels there)."""

    kind: str
    x: int = 0
    y: int = 0
    w: int = 480
    h: int = 240
    bg: tuple[int, int, int] = (255, 255, 255)

    @property
    def css_bg(self) -> str:
        return "#{:02x}{:02x}{:02x}".format(*self.bg)

    def wrap(self, markup: str) -> str:
        if self.kind == "flow":
            return f'<div data-fx-slot="flow">{markup}</div>'
        return (f'<div data-fx-slot="{self.kind}" style="position:absolute;left:{self.x}px;top:{self.y}px;'
                f'width:{self.w}px;height:{self.h}px;margin:0;padding:0">{markup}</div>')


SLOT_KINDS = ("quiet", "quiet-below", "ink", "flow")
POSITIONED = ("quiet", "quiet-below", "ink")
QUIET = ("quiet", "quiet-below")


# ------------------------------------------------------------------------------------------------
# What is hidden
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Content:
    """Markup to hide (no `<script>` in it), its text line by line (for primitives that carry
    only text: list-box options, SVG text), and a script that brings it to life (an ECharts
    instance, click handlers). The script is a function body of `ROOT`, the node holding the
    markup (the document, or a shadow root)."""

    kind: str
    label: str  # what it is, for the report (e.g. "2 required strings")
    markup: str
    lines: tuple[str, ...]
    script: str = ""
    libraries: tuple[str, ...] = ()  # script URLs it needs loaded first
    graphic: bool = False  # drawn (a canvas), not text: text-only primitives do not apply


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _box(inner: str, slot: Slot) -> str:
    size = 16 if slot.w >= 400 else 12
    return (f'<div class="fx-content" style="font:{size}px/1.4 {CONTENT_FONT};color:#1f2937;'
            f'width:{slot.w}px;text-align:left">{inner}</div>')


def _words(prompt: str) -> list[str]:
    return [w for w in re.findall(r"[^\W\d_][\w'&-]*", prompt) if len(w) > 3]


def title_of(prompt: str) -> str:
    """A title for a page about `prompt`: the title or name it gives, its first quoted phrase, or its first words."""
    named = re.search(r"\b(?:titled|called|named) [\"“]?([A-Z][\w&.' -]{2,40}?)[\"”]?(?:[,.;:]| with| for| that|$)", prompt)
    if named:
        return named.group(1).strip()
    quoted = re.findall(r"[\"“]([^\"”]{3,60})[\"”]", prompt)
    if quoted:
        return quoted[0]
    return " ".join(_words(prompt)[:5]).title() or "Overview"


def copy_content(task: Task, slot: Slot) -> Content:
    """Page copy in the task's own words (what the static judge's prompt coverage reads), in new
    sentences: a page that echoes its prompt verbatim is marked down for it, hidden or not."""
    seen: dict[str, None] = {}
    for word in _words(task.prompt):
        seen.setdefault(word.lower(), None)
    words = list(seen)[:36] or ["welcome"]
    sentences = [f"{words[i].capitalize()} with {words[(i + 1) % len(words)]} and {words[(i + 2) % len(words)]}."
                 for i in range(0, len(words), 3)]
    title, text = title_of(task.prompt), " ".join(sentences)
    inner = f'<h2 style="font-size:1.35em;margin:0 0 6px">{_esc(title)}</h2><p style="margin:0">{_esc(text)}</p>'
    return Content("copy", f"{len(words)} of the prompt's words in {len(sentences)} sentences", _box(inner, slot),
                   (title, *sentences))


def heading_content(task: Task, slot: Slot) -> Content:
    words = _words(task.prompt)
    lines = (title_of(task.prompt), " ".join(words[5:9]).title() or "Highlights", " ".join(words[9:12]).title() or "Details")
    inner = (f'<h1 style="font-size:2.4em;margin:0">{_esc(lines[0])}</h1><h2 style="margin:4px 0">{_esc(lines[1])}</h2>'
             f'<h3 style="margin:0">{_esc(lines[2])}</h3>')
    return Content("heading", "h1 + h2 + h3", _box(inner, slot), lines)


def text_exact_content(task: Task, slot: Slot) -> Content | None:
    wanted = [r.text for r in task.requirements if isinstance(r, TextExact)]
    if not wanted:
        return None
    inner = "".join(f'<p style="margin:0 0 6px">{_esc(t)}</p>' for t in wanted)
    return Content("text_exact", f"{len(wanted)} required strings", _box(inner, slot), tuple(wanted))


def table_content(task: Task, slot: Slot) -> Content:
    given = next((r for r in task.requirements if isinstance(r, TableData)), None)
    if given is not None:
        header, rows, label = list(given.header), [list(r) for r in given.rows], "the task's table_data"
    else:
        words = _words(task.prompt) or ["Item"]
        header = ["Item", "Value"]
        rows = [[words[i % len(words)].title(), str(10 * (i + 1))] for i in range(4)]
        label = "a table of the prompt's words"
    cell = "border:1px solid #888;padding:2px 6px"
    head = "".join(f'<th style="{cell}">{_esc(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{cell}">{_esc(c)}</td>' for c in row) + "</tr>" for row in rows)
    inner = (f'<table style="border-collapse:collapse;font-size:13px"><thead><tr>{head}</tr></thead>'
             f"<tbody>{body}</tbody></table>")
    lines = tuple(" ".join(r) for r in [header, *rows])
    return Content("table", label, _box(inner, slot), lines)


def _echarts_option(chart: ChartData | None, task: Task) -> dict:
    if chart is None:
        words = (_words(task.prompt) or ["A", "B", "C"])[:4]
        return {"animation": False, "xAxis": {"type": "category", "data": words}, "yAxis": {"type": "value"},
                "series": [{"type": "bar", "name": "Value", "data": [3, 5, 4, 6][:len(words)]}]}
    series = chart.series if isinstance(chart.series, dict) else {"Value": chart.series}
    if chart.chart == "pie":
        first = next(iter(series.values()))
        return {"animation": False, "series": [{"type": "pie", "data": [
            {"name": n, "value": v} for n, v in zip(chart.labels, first)]}]}
    kind = "line" if chart.chart == "line" else "bar"
    return {"animation": False, "legend": {}, "xAxis": {"type": "category", "data": list(chart.labels)},
            "yAxis": {"type": "value"},
            "series": [{"type": kind, "name": name, "data": list(values)} for name, values in series.items()]}


def chart_content(task: Task, slot: Slot) -> Content:
    given = next((r for r in task.requirements if isinstance(r, ChartData)), None)
    option = _echarts_option(given, task)
    w, h = max(slot.w, 240), max(slot.h, 160)
    markup = f'<div data-fx-chart="1" style="width:{w}px;height:{h}px"></div>'
    script = ("var el = ROOT.querySelector('[data-fx-chart]');"
              "if (el && window.echarts) { window.echarts.init(el, null, {renderer: 'canvas'}).setOption("
              + json.dumps(option) + "); }")
    label = "an ECharts chart of the task's chart_data" if given else "an ECharts bar chart of the prompt's words"
    return Content("chart", label, markup, tuple(str(x) for x in option.get("xAxis", {}).get("data", [])),
                   script=script, libraries=(ECHARTS_URL,), graphic=True)


def control_content(task: Task, slot: Slot) -> Content:
    words = [w.title() for w in _words(task.prompt)] or ["Start", "Menu", "More"]
    pick = lambda i: words[i % len(words)]  # noqa: E731
    inner = (f'<nav><a href="#fx-target-1">{_esc(pick(0))}</a> <a href="#fx-target-2">{_esc(pick(1))}</a></nav>'
             f'<div id="fx-target-1"><button type="button">{_esc(pick(2))}</button> '
             f'<input type="text" placeholder="{_esc(pick(3))}" /> '
             f'<select><option>{_esc(pick(4))}</option><option>{_esc(pick(5))}</option></select></div>'
             f'<form id="fx-target-2"><input type="email" placeholder="Email" /><button type="submit">Send</button></form>')
    script = ("ROOT.querySelectorAll('button').forEach(function (b) { b.addEventListener('click', function (e) {"
              " e.preventDefault(); b.setAttribute('data-clicked', String(Number(b.getAttribute('data-clicked') || 0) + 1));"
              " b.textContent = b.textContent + ' \\u2713'; }); });"
              "ROOT.querySelectorAll('form').forEach(function (f) { f.addEventListener('submit', function (e) {"
              " e.preventDefault(); f.setAttribute('data-sent', '1'); }); });")
    lines = (pick(0), pick(1), pick(2), pick(4), pick(5))
    return Content("control", "links, a button, inputs, a select and a form", _box(inner, slot), lines, script=script)


def _selector_markup(selector: str, count: int, words: list[str], anchors: list[str]) -> str:
    """Markup that matches a simple descendant selector (`nav a`, `button`, `footer`) `count` times."""
    parts = [p for p in selector.split() if p not in (">", "+", "~")]
    tags = []
    for part in parts:
        tag = re.match(r"[a-zA-Z][a-zA-Z0-9-]*", part)
        classes = re.findall(r"\.([\w-]+)", part)
        tags.append((tag.group(0).lower() if tag else "div", " ".join(classes)))
    *outer, (leaf, leaf_class) = tags or [("div", "")]
    items = []
    for i in range(max(count, 1)):
        text = _esc(words[i % len(words)] if words else f"Item {i + 1}")
        attrs = f' class="{leaf_class}"' if leaf_class else ""
        if leaf == "a":
            attrs += f' href="#{anchors[i % len(anchors)]}"' if anchors else ' href="#"'
        if leaf in ("input", "img"):
            items.append(f'<{leaf}{attrs} alt="{text}" placeholder="{text}" />')
        else:
            items.append(f"<{leaf}{attrs}>{text}</{leaf}>")
    markup = " ".join(items)
    for tag, cls in reversed(outer):
        attrs = f' class="{cls}"' if cls else ""
        markup = f"<{tag}{attrs}>{markup}</{tag}>"
    return markup


def section_content(task: Task, slot: Slot) -> Content | None:
    """A project's census requirements: each requirement's keywords and selector matches."""
    spec = task.project
    if spec is None or not spec.requirements:
        return None
    anchors = [f"fx-{r.id}" for r in spec.requirements]
    parts, lines = [], []
    for req in spec.requirements:
        words = list(req.keywords)
        inner = "".join(f"<p>{_esc(k)}</p>" for k in words)
        if req.selector and req.min_count:
            inner += _selector_markup(req.selector, req.min_count, words, anchors)
        parts.append(f'<section id="fx-{req.id}"><h2>{_esc(words[0] if words else req.id)}</h2>{inner}</section>')
        lines.extend(words)
    return Content("section", f"{len(spec.requirements)} requirement sections", _box("".join(parts), slot), tuple(lines))


# The content kinds of a page (web and project answers), in the order the sampler cycles them.
WEB_CONTENT: dict[str, Callable[[Task, Slot], Content | None]] = {
    "copy": copy_content, "heading": heading_content, "text_exact": text_exact_content, "table": table_content,
    "chart": chart_content, "control": control_content, "section": section_content,
}


# ------------------------------------------------------------------------------------------------
# How it is hidden
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """What a primitive emits around the content: a stylesheet, markup, a script (a function
    body of `ROOT`), and `frame`: visible markup the honest twin carries too (a striped band the
    content hides in), drawn under the content at the slot's origin."""

    css: str
    markup: str
    script: str = ""
    frame: str = ""


@dataclass(frozen=True)
class Primitive:
    """One hiding mechanism, as data. The templates take `$content` (the content's markup),
    `$quoted` (it escaped for an attribute), `$uid` (unique to the mutation), `$bg` (the slot's
    colour; `$bgurl` for a data: URL), `$w`/`$h` (the slot's size; `$half` and `$rest` split it
    for an outline), `$options` (the content's lines as hidden `<option>`s), `$svgtext` (as SVG
    `<text>`), `$textline` (as one line) and `$font`/`$zerofont` (data: URLs of blank fonts).
    Family `control` is not a hiding primitive: it must never be kept."""

    name: str
    family: str
    markup: str = "<div class=\"fx-$uid\">$content</div>"
    css: str = ""
    script: str = ""
    frame: str = ""
    slots: tuple[str, ...] = POSITIONED
    text_only: bool = False  # it hides text, not drawn graphics (a chart's canvas)
    note: str = ""

    def emit(self, content: Content, slot: Slot, uid: str) -> Piece:
        values = {
            "content": content.markup, "quoted": _esc(content.markup), "uid": uid,
            "bg": slot.css_bg, "bgurl": urllib.parse.quote(slot.css_bg),
            "w": str(slot.w), "h": str(slot.h), "half": str(slot.h // 2), "rest": str(max(slot.w - 2 * (slot.h // 2), 0)),
            "options": "".join(f'<option style="display:none">{_esc(line)}</option>' for line in content.lines),
            "svgtext": "".join(f'<text x="0" y="{18 * (i + 1)}">{_esc(line)}</text>' for i, line in enumerate(content.lines)),
            "textline": _esc(" ".join(content.lines)[:400]),
            "font": blank_font_url(advance=550), "zerofont": blank_font_url(advance=0),
        }
        fill = lambda t: Template(t).substitute(values)  # noqa: E731
        return Piece(css=fill(self.css), markup=fill(self.markup), script=fill(self.script), frame=fill(self.frame))


def _styled(name: str, family: str, style: str, **kw) -> Primitive:
    """A primitive that is one inline style on a wrapper around the content."""
    return Primitive(name, family, markup=f'<div class="fx-$uid" style="{style}">$content</div>', **kw)


def _ruled(name: str, family: str, rules: str, **kw) -> Primitive:
    """A primitive that is a rule on the wrapper and everything in it (`!important` beats the content's own)."""
    return Primitive(name, family, css=".fx-$uid, .fx-$uid * { " + rules + " }", **kw)


def _nested(depth: int, clip_at: int, clip: str) -> str:
    """`depth` plain wrappers with the clip at level `clip_at` (1: the outermost)."""
    opens = "".join(f'<div style="{clip}">' if level == clip_at else "<div>" for level in range(1, depth + 1))
    return opens + "$content" + "</div>" * depth


_EMPTY_SVG = urllib.parse.quote("<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'></svg>")
_BG_SVG = "data:image/svg+xml," + urllib.parse.quote(
    "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10' fill='BG'/></svg>")
_STRIPES = "repeating-linear-gradient(90deg, #5470c6 0 6px, #ffffff 6px 12px)"
_ZERO_ALPHA = "1 0 0 0 0  0 1 0 0 0  0 0 1 0 0  0 0 0 0 0"

PRIMITIVES: list[Primitive] = [
    # --- paint: colour, fill, opacity -------------------------------------------------------
    _ruled("color-transparent", "paint", "color: transparent !important; border-color: transparent !important;"
           " background: transparent !important", text_only=True),
    _ruled("color-alpha-0.001", "paint", "color: rgba(0, 0, 0, 0.001) !important; border-color: transparent !important;"
           " background: transparent !important", text_only=True, note="alpha that rounds to 0 in 8 bits"),
    _ruled("text-fill-transparent", "paint", "-webkit-text-fill-color: transparent !important;"
           " border-color: transparent !important; background: transparent !important", text_only=True,
           note="color stays opaque; only the fill is transparent"),
    _ruled("text-fill-background", "paint", "-webkit-text-fill-color: $bg !important; border-color: $bg !important;"
           " background: transparent !important", slots=QUIET, text_only=True),
    _ruled("color-background-exact", "paint", "color: $bg !important; border-color: $bg !important;"
           " background: transparent !important", slots=QUIET, text_only=True),
    _ruled("text-shadow-far-transparent-glyphs", "paint", "color: transparent !important;"
           " text-shadow: 0 -9000px 0 #000 !important; border-color: transparent !important;"
           " background: transparent !important", text_only=True, note="the only ink is a shadow 9000 px above"),
    _ruled("text-stroke-background", "paint", "-webkit-text-fill-color: transparent !important;"
           " -webkit-text-stroke: 1px $bg !important; border-color: $bg !important; background: transparent !important",
           slots=QUIET, text_only=True),
    _ruled("background-clip-text-background", "paint", "color: transparent !important; background-color: $bg !important;"
           " -webkit-background-clip: text !important; background-clip: text !important; border-color: $bg !important",
           slots=QUIET, text_only=True, note="glyphs filled by a background the colour of the slot"),
    _styled("opacity-0", "paint", "opacity:0"),
    _styled("opacity-0.001", "paint", "opacity:0.001", note="opacity that rounds to 0 in 8 bits"),
    Primitive("opacity-on-grandparent", "paint",
              markup='<div style="opacity:0.001"><div><div class="fx-$uid">$content</div></div></div>'),
    _styled("filter-opacity-0", "paint", "filter:opacity(0)"),
    _styled("filter-opacity-0.1pc", "paint", "filter:opacity(0.1%)"),
    _styled("filter-brightness-white", "paint", "filter:brightness(0) invert(1)", slots=QUIET,
            note="everything painted white: unseen on a white slot"),
    _styled("filter-contrast-zero-grey", "paint", "filter:contrast(0) brightness(0) invert(1)", slots=QUIET),
    # --- masking --------------------------------------------------------------------------
    _styled("mask-transparent-gradient", "masking",
            "-webkit-mask-image:linear-gradient(transparent,transparent);mask-image:linear-gradient(transparent,transparent)"),
    _styled("mask-empty-svg", "masking",
            f"-webkit-mask-image:url(&quot;data:image/svg+xml,{_EMPTY_SVG}&quot;);mask-image:url(&quot;data:image/svg+xml,{_EMPTY_SVG}&quot;)"),
    _styled("mask-positioned-away", "masking",
            "-webkit-mask-image:linear-gradient(#000,#000);-webkit-mask-size:1px 1px;-webkit-mask-repeat:no-repeat;"
            "-webkit-mask-position:-50px -50px;mask-image:linear-gradient(#000,#000);mask-size:1px 1px;"
            "mask-repeat:no-repeat;mask-position:-50px -50px"),
    _styled("mask-alpha-luminance-black", "masking",
            "-webkit-mask-image:linear-gradient(#000,#000);mask-image:linear-gradient(#000,#000);mask-mode:luminance"),
    # --- SVG filters ----------------------------------------------------------------------
    Primitive("svg-filter-zero-alpha", "filter",
              markup=f'<svg width="0" height="0" style="position:absolute"><filter id="fxf$uid"><feColorMatrix type="matrix" '
                     f'values="{_ZERO_ALPHA}"/></filter></svg><div style="filter:url(#fxf$uid)">$content</div>'),
    Primitive("svg-filter-flood-background", "filter", slots=QUIET,
              markup='<svg width="0" height="0" style="position:absolute"><filter id="fxf$uid" x="0" y="0" width="1" height="1">'
                     '<feFlood flood-color="$bg"/></filter></svg><div style="filter:url(#fxf$uid)">$content</div>',
              note="the filter paints the slot's colour over the whole box"),
    Primitive("svg-filter-offset-away", "filter",
              markup='<svg width="0" height="0" style="position:absolute"><filter id="fxf$uid"><feOffset dx="9000" dy="0"/>'
                     '</filter></svg><div style="filter:url(#fxf$uid)">$content</div>'),
    Primitive("svg-filter-component-transfer", "filter",
              markup='<svg width="0" height="0" style="position:absolute"><filter id="fxf$uid"><feComponentTransfer>'
                     '<feFuncA type="table" tableValues="0 0"/></feComponentTransfer></filter></svg>'
                     '<div style="filter:url(#fxf$uid)">$content</div>'),
    # --- compositing ----------------------------------------------------------------------
    _ruled("blend-multiply-white", "compositing", "color: #fff !important; border-color: #fff !important;"
           " background: transparent !important; mix-blend-mode: multiply", text_only=True,
           note="white multiplied over anything leaves it as it was"),
    _ruled("blend-screen-black", "compositing", "color: #000 !important; border-color: #000 !important;"
           " background: transparent !important; mix-blend-mode: screen", text_only=True),
    _ruled("blend-darken-white", "compositing", "color: #fff !important; border-color: #fff !important;"
           " background: transparent !important; mix-blend-mode: darken", text_only=True),
    _ruled("blend-lighten-black", "compositing", "color: #000 !important; border-color: #000 !important;"
           " background: transparent !important; mix-blend-mode: lighten", text_only=True),
    _ruled("blend-difference-black", "compositing", "color: #000 !important; border-color: #000 !important;"
           " background: transparent !important; mix-blend-mode: difference", text_only=True),
    _styled("blend-isolated-multiply-white-box", "compositing",
            "background:#fff;mix-blend-mode:multiply;isolation:isolate;filter:brightness(0) invert(1)",
            note="the group is flattened to white, then multiplied away"),
    # --- clipping -------------------------------------------------------------------------
    _styled("clip-path-inset-50pc", "clipping", "clip-path:inset(50%)"),
    _styled("clip-path-circle-0", "clipping", "clip-path:circle(0)"),
    _styled("clip-path-path-empty", "clipping", "clip-path:path('M0 0')"),
    _styled("clip-path-path-outside", "clipping", "clip-path:path('M-20 -20 L-10 -20 L-10 -10 Z')"),
    _styled("clip-path-polygon-line", "clipping", "clip-path:polygon(0 0, 100% 100%, 0 0)"),
    _styled("clip-path-polygon-outside", "clipping", "clip-path:polygon(-30px -30px, -10px -30px, -10px -10px)"),
    Primitive("clip-path-url-empty", "clipping",
              markup='<svg width="0" height="0" style="position:absolute"><clipPath id="fxc$uid"><rect width="0" height="0"/>'
                     '</clipPath></svg><div style="clip-path:url(#fxc$uid)">$content</div>'),
    _styled("clip-rect-zero", "clipping", "position:absolute;clip:rect(0 0 0 0)"),
    _styled("clip-rect-outside", "clipping", "position:absolute;clip:rect(-40px -10px -20px -40px)"),
    _styled("overflow-zero-height", "clipping", "height:0;overflow:hidden", slots=(*POSITIONED, "flow")),
    # an overflow clip at every ancestor depth: the clipping box is `at` levels above the content of `depth`
    *(Primitive(f"overflow-{how}-depth-{depth}-at-{at}", "clipping", markup=_nested(depth, at, f"{size}:0;overflow:{how}"),
                slots=(*POSITIONED, "flow"))
      for depth, at, how, size in ((1, 1, "hidden", "height"), (2, 1, "clip", "height"), (2, 2, "hidden", "width"),
                                   (4, 1, "hidden", "height"), (4, 3, "clip", "width"), (4, 4, "auto", "height"))),
    Primitive("overflow-pushed-below", "clipping",
              markup='<div style="height:${h}px;overflow:hidden"><div style="padding-top:4000px">$content</div></div>'),
    Primitive("overflow-scrolled-away", "clipping",
              markup='<div class="fx-$uid" style="height:${h}px;overflow:hidden"><div style="height:${h}px"></div>'
                     '<div>$content</div><div style="height:6000px"></div></div>',
              script="var s = ROOT.querySelector('.fx-$uid'); if (s) s.scrollTop = 100000;",
              note="the box is scrolled by script until its content is out of view"),
    _styled("line-height-tiny-clip", "clipping", "line-height:0.1px;height:0.1px;overflow:hidden", slots=(*POSITIONED, "flow")),
    _styled("contain-paint-zero", "clipping", "contain:paint;height:0", slots=(*POSITIONED, "flow")),
    _styled("contain-strict-zero", "clipping", "contain:strict;width:0;height:0", slots=(*POSITIONED, "flow")),
    # --- transform and position -----------------------------------------------------------
    _styled("scale-0", "transform", "transform:scale(0)"),
    _styled("scale-y-0", "transform", "transform:scaleY(0)"),
    _styled("translate-off-left", "transform", "transform:translateX(-9000px)"),
    _styled("translate-off-top", "transform", "transform:translateY(-9000px)"),
    _styled("rotate-y-90", "transform", "transform:rotateY(90deg)", note="seen edge-on"),
    _styled("backface-hidden", "transform", "transform:rotateY(180deg);backface-visibility:hidden"),
    Primitive("behind-the-camera", "transform",
              markup='<div style="perspective:100px"><div style="transform:translateZ(200px)">$content</div></div>'),
    _styled("matrix-singular", "transform", "transform:matrix(0,0,0,0,0,0)"),
    _styled("absolute-off-left", "position", "position:absolute;left:-9999px;top:0"),
    _styled("absolute-off-top", "position", "position:absolute;top:-9999px;left:0"),
    _styled("fixed-off-left", "position", "position:fixed;left:-9999px;top:0"),
    _styled("relative-off-left", "position", "position:relative;left:-9999px"),
    _styled("margin-off-left", "position", "margin-left:-9999px"),
    # --- stacking and covers --------------------------------------------------------------
    Primitive("z-index-under-parent-background", "stacking", slots=QUIET,
              markup='<div style="background:$bg"><div style="position:relative;z-index:-1">$content</div></div>',
              note="a negative layer under its parent's background (the parent is no stacking context)"),
    _styled("z-index-negative", "stacking", "position:relative;z-index:-1", slots=QUIET),
    Primitive("cover-sibling", "cover", slots=QUIET,
              markup='<div style="position:relative"><div style="position:relative;z-index:1">$content</div>'
                     '<div style="position:absolute;inset:0;z-index:2;background:$bg"></div></div>'),
    Primitive("cover-pointer-events-none", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<div style="position:absolute;inset:0;background:$bg;'
                     'pointer-events:none"></div></div>'),
    Primitive("cover-after", "cover", slots=QUIET, css=".fx-$uid{position:relative}.fx-$uid::after{content:'';"
              "position:absolute;inset:0;background:$bg;z-index:5}"),
    Primitive("cover-before-z", "cover", slots=QUIET, css=".fx-$uid{position:relative}.fx-$uid::before{content:'';"
              "position:absolute;inset:0;background:$bg;z-index:5}"),
    Primitive("cover-inset-shadow", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<div style="position:absolute;inset:0;'
                     'box-shadow:inset 0 0 0 3000px $bg"></div></div>', note="the cover's paint is an inset shadow"),
    Primitive("cover-outline", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<div style="position:absolute;left:${half}px;top:${half}px;'
                     'width:${rest}px;height:0;outline:${half}px solid $bg"></div></div>',
              note="a box of no height whose outline covers the slot"),
    Primitive("cover-gradient-image", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<div style="position:absolute;inset:0;background-color:transparent;'
                     'background-image:linear-gradient($bg,$bg)"></div></div>'),
    Primitive("cover-background-blend", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<div style="position:absolute;inset:0;background-color:$bg;'
                     'background-image:linear-gradient(#000,#000);background-blend-mode:lighten"></div></div>',
              note="the cover's declared image is black; blended, it paints the slot's colour"),
    Primitive("cover-svg-rect", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<svg style="position:absolute;left:0;top:0" width="100%" '
                     'height="100%"><rect width="100%" height="100%" fill="$bg"/></svg></div>'),
    Primitive("cover-canvas", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<canvas class="fxcv-$uid" width="$w" height="$h" '
                     'style="position:absolute;left:0;top:0;width:100%;height:100%"></canvas></div>',
              script="var c = ROOT.querySelector('.fxcv-$uid'); if (c) { var g = c.getContext('2d');"
                     " g.fillStyle = '$bg'; g.fillRect(0, 0, c.width, c.height); }"),
    Primitive("cover-image", "cover", slots=QUIET,
              markup='<div style="position:relative">$content<img alt="" src="' + _BG_SVG.replace("BG", "$bgurl") +
                     '" style="position:absolute;left:0;top:0;width:100%;height:100%"></div>'),
    # --- ink that is not the content's ----------------------------------------------------
    Primitive("striped-band-transparent-text", "ink", slots=QUIET, text_only=True,
              frame='<div style="position:absolute;left:0;top:0;width:${w}px;height:${h}px;background:' + _STRIPES + '"></div>',
              css=".fx-$uid, .fx-$uid * { color: transparent !important; border-color: transparent !important;"
                  " background: transparent !important }",
              markup='<div class="fx-$uid" style="position:relative">$content</div>',
              note="a striped band both twins carry; the content in it has no ink of its own"),
    Primitive("striped-band-masked", "ink", slots=QUIET,
              frame='<div style="position:absolute;left:0;top:0;width:${w}px;height:${h}px;background:' + _STRIPES + '"></div>',
              markup='<div style="position:relative;-webkit-mask-image:linear-gradient(transparent,transparent);'
                     'mask-image:linear-gradient(transparent,transparent)">$content</div>'),
    Primitive("under-striped-band", "ink", slots=QUIET,
              frame='<div style="position:absolute;left:0;top:0;width:${w}px;height:${h}px;z-index:3;background:'
                    + _STRIPES + '"></div>',
              markup='<div style="position:relative;z-index:1">$content</div>',
              note="under an opaque striped band both twins carry: the band is ink in the content's box"),
    Primitive("under-textured-box", "ink", slots=QUIET,
              frame='<div style="position:absolute;left:0;top:0;width:${w}px;height:${h}px;z-index:3;background:'
                    '#ffffff radial-gradient(#333333 1px, #ffffff 1.5px) 0 0/6px 6px"></div>',
              markup='<div style="position:relative;z-index:1">$content</div>'),
    Primitive("dotted-texture-opacity", "ink", slots=QUIET,
              frame='<div style="position:absolute;left:0;top:0;width:${w}px;height:${h}px;background:'
                    'radial-gradient(#333 1px, transparent 1.5px) 0 0/6px 6px"></div>',
              markup='<div style="position:relative;opacity:0">$content</div>'),
    # --- skipped or never rendered --------------------------------------------------------
    _styled("display-none", "skipping", "display:none", slots=(*POSITIONED, "flow")),
    _styled("visibility-hidden", "skipping", "visibility:hidden"),
    Primitive("visibility-hidden-visible-child", "skipping",
              markup='<div style="visibility:hidden">$content<span style="visibility:visible"></span></div>'),
    _styled("visibility-collapse", "skipping", "visibility:collapse"),
    _styled("content-visibility-hidden", "skipping", "content-visibility:hidden", slots=(*POSITIONED, "flow")),
    Primitive("hidden-until-found", "skipping", markup='<div hidden="until-found">$content</div>', slots=(*POSITIONED, "flow")),
    Primitive("details-closed", "skipping", slots=(*POSITIONED, "flow"),
              markup='<details><summary style="display:block;list-style:none;height:0;overflow:hidden"></summary>$content</details>'),
    Primitive("details-closed-no-summary-box", "skipping", slots=(*POSITIONED, "flow"),
              markup='<details><summary style="display:none"></summary>$content</details>'),
    Primitive("listbox-hidden-options", "skipping", text_only=True,
              markup='<select size="4" aria-label="$textline" style="appearance:none;-webkit-appearance:none;border:0;'
                     'background:transparent;padding:0;margin:0;width:${w}px;height:${h}px;outline:0;overflow:hidden">$options</select>'),
    Primitive("template", "skipping", markup="<template>$content</template>", slots=(*POSITIONED, "flow")),
    Primitive("noscript", "skipping", markup="<noscript>$content</noscript>", slots=(*POSITIONED, "flow")),
    Primitive("dialog-closed", "skipping", markup="<dialog>$content</dialog>", slots=(*POSITIONED, "flow")),
    Primitive("popover-closed", "skipping", markup="<div popover>$content</div>", slots=(*POSITIONED, "flow")),
    Primitive("iframe-zero-size", "skipping", slots=(*POSITIONED, "flow"),
              markup='<iframe title="x" style="width:0;height:0;border:0" srcdoc="$quoted"></iframe>'),
    Primitive("svg-foreignobject-clipped", "skipping",
              markup='<svg width="0" height="0" style="display:block"><foreignObject width="$w" height="$h">'
                     '<div xmlns="http://www.w3.org/1999/xhtml">$content</div></foreignObject></svg>',
              slots=(*POSITIONED, "flow")),
    Primitive("svg-text-fill-none", "skipping", text_only=True,
              markup='<svg width="$w" height="$h" style="display:block" font-size="16" fill="none">$svgtext</svg>'),
    # --- fonts ----------------------------------------------------------------------------
    _ruled("font-size-0", "font", "font-size: 0 !important", text_only=True),
    _ruled("font-size-0.1px", "font", "font-size: 0.1px !important; line-height: 0.1px !important", text_only=True),
    Primitive("font-blank-glyphs", "font", text_only=True,
              css="@font-face { font-family: 'fxblank$uid'; src: url($font) format('truetype'); }"
                  " .fx-$uid, .fx-$uid * { font-family: 'fxblank$uid' !important; border-color: transparent !important;"
                  " background: transparent !important }",
              note="a font whose glyphs have advances and no outlines"),
    Primitive("font-zero-width-glyphs", "font", text_only=True,
              css="@font-face { font-family: 'fxzero$uid'; src: url($zerofont) format('truetype'); }"
                  " .fx-$uid, .fx-$uid * { font-family: 'fxzero$uid' !important; border-color: transparent !important;"
                  " background: transparent !important }"),
    _ruled("letter-spacing-collapse-clip", "font", "letter-spacing: -200px !important; overflow: hidden; max-width: 0;"
           " border-color: transparent !important; background: transparent !important", text_only=True),
    _styled("text-indent-away-clip", "font", "text-indent:-9999px;overflow:hidden;white-space:nowrap", text_only=True),
    _ruled("text-indent-away", "font", "text-indent: -9999px !important; border-color: transparent !important;"
           " background: transparent !important", text_only=True),
    # --- scripting and animation ----------------------------------------------------------
    Primitive("script-hides-after-timeout", "scripting",
              markup='<div class="fx-$uid">$content</div>',
              script="setTimeout(function () { var e = ROOT.querySelector('.fx-$uid'); if (e) e.style.opacity = '0'; }, 50);",
              note="shown at load, made transparent 50 ms later (the clock runs before capture)"),
    Primitive("animation-fades-out", "scripting",
              css="@keyframes fxa$uid { to { opacity: 0 } } .fx-$uid { animation: fxa$uid 1ms forwards }"),
    Primitive("animation-paused-at-hidden", "scripting",
              css="@keyframes fxa$uid { from { opacity: 0 } to { opacity: 1 } } .fx-$uid { animation: fxa$uid 10s paused }"),
    # --- the control: visible on purpose, so the oracle must never keep it -------------------
    Primitive("control-visible", "control", markup='<div class="fx-$uid" style="background:#fff;color:#000">$content</div>',
              note="not a hiding primitive: it checks that the pixel oracle tells shown from unseen"),
]


@dataclass(frozen=True)
class Delivery:
    """How the primitive's output reaches the page: inline, inside a shadow root (open, closed or
    declarative), or written by a script (after load, by `document.write`, on a timer)."""

    name: str
    build: Callable[[Piece, str, str], str]  # (piece, content script, uid) -> markup for the slot


def _whole(piece: Piece) -> str:
    """The piece's stylesheet and markup, as one fragment."""
    return (f"<style>{piece.css}</style>" if piece.css else "") + piece.markup


def _script(code: str, root: str) -> str:
    return f"<script>(function (ROOT) {{ {code} }})({root});</script>" if code.strip() else ""


# A piece's scripts reach only the piece (ROOT is the element holding it): a script that wired up
# the whole document would give the honest page's own controls a new, visible behaviour, which
# is a change to the page, not a way of hiding one.
def _inline(piece: Piece, script: str, uid: str) -> str:
    return (f'<div id="fxh{uid}">{_whole(piece)}</div>'
            + _script(piece.script + script, f"document.getElementById('fxh{uid}')"))


def _shadow(mode: str) -> Callable[[Piece, str, str], str]:
    def build(piece: Piece, script: str, uid: str) -> str:
        inner = json.dumps(_whole(piece))
        code = (f"var host = document.getElementById('fxh{uid}'); var ROOT = host.attachShadow({{mode: '{mode}'}});"
                f" ROOT.innerHTML = {inner}; (function (ROOT) {{ {piece.script} {script} }})(ROOT);")
        return f'<div id="fxh{uid}"></div><script>(function () {{ {code} }})();</script>'
    return build


def _declarative(piece: Piece, script: str, uid: str) -> str:
    code = piece.script + script
    tail = (f"<script>(function (ROOT) {{ if (ROOT) {{ {code} }} }})(document.getElementById('fxh{uid}').shadowRoot);</script>"
            if code.strip() else "")
    return f'<div id="fxh{uid}"><template shadowrootmode="open">{_whole(piece)}</template></div>{tail}'


def _scripted(when: str) -> Callable[[Piece, str, str], str]:
    def build(piece: Piece, script: str, uid: str) -> str:
        inner = json.dumps(_whole(piece))
        run = (f"var host = document.getElementById('fxh{uid}'); host.innerHTML = {inner};"
               f" (function (ROOT) {{ {piece.script} {script} }})(host);")
        wrapped = {"load": f"window.addEventListener('load', function () {{ {run} }});",
                   "timeout": f"setTimeout(function () {{ {run} }}, 30);",
                   "frame": f"requestAnimationFrame(function () {{ {run} }});"}[when]
        return f'<div id="fxh{uid}"></div><script>{wrapped}</script>'
    return build


def _written(piece: Piece, script: str, uid: str) -> str:
    written = json.dumps('<div id="fxh' + uid + '">' + _whole(piece) + "</div>")
    return f"<script>document.write({written});</script>" + _script(piece.script + script, f"document.getElementById('fxh{uid}')")


DELIVERIES: dict[str, Delivery] = {d.name: d for d in [
    Delivery("inline", _inline), Delivery("shadow-open", _shadow("open")), Delivery("shadow-closed", _shadow("closed")),
    Delivery("shadow-declarative", _declarative), Delivery("script-after-load", _scripted("load")),
    Delivery("script-timeout", _scripted("timeout")), Delivery("script-animation-frame", _scripted("frame")),
    Delivery("document-write", _written),
]}


def inject(page: str, addition: str) -> str:
    """`addition` at the end of the page's body (before its last `</body>`, else at the end)."""
    at = page.lower().rfind("</body>")
    return page[:at] + addition + page[at:] if at >= 0 else page + addition


@dataclass(frozen=True)
class WebMutation:
    """The honest twin and the forgery as page text (the twin is the base, plus the primitive's
    frame when it has one)."""

    honest: str
    forged: str


def mutate_page(page: str, primitive: Primitive, delivery: Delivery, content: Content, slot: Slot,
                uid: str) -> WebMutation:
    piece = primitive.emit(content, slot, uid)
    libraries = "".join(f'<script src="{u}"></script>' for u in content.libraries if _library_name(u) not in page)
    hidden = delivery.build(piece, content.script, uid)
    frame = piece.frame
    honest = inject(page, slot.wrap(frame)) if frame else page
    return WebMutation(honest=honest, forged=inject(page, libraries + slot.wrap(frame + hidden)))


def _library_name(url: str) -> str:
    return url.split("/npm/")[-1].split("@")[0]


# ------------------------------------------------------------------------------------------------
# Blank fonts (built here, so the corpus carries no binary)
# ------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def blank_font(advance: int) -> bytes:
    """A TrueType font with Latin glyphs that have no outlines, each `advance` units wide (of
    1000): text in it lays out and paints nothing (`advance=0`: it also takes no room)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    codes = [*range(0x20, 0x7F), *range(0xA0, 0x250), 0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2026, 0x20AC]
    names = [".notdef", *(f"uni{c:04X}" for c in codes)]
    builder = FontBuilder(1000, isTTF=True)
    builder.font.recalcTimestamp = False
    builder.setupGlyphOrder(names)
    builder.setupCharacterMap({c: f"uni{c:04X}" for c in codes})
    builder.setupGlyf({n: TTGlyphPen(None).glyph() for n in names})
    builder.setupHorizontalMetrics({n: (advance, 0) for n in names})
    builder.setupHorizontalHeader(ascent=900, descent=-250)
    builder.setupNameTable({"familyName": f"FxBlank{advance}", "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=900, sTypoDescender=-250, usWinAscent=900, usWinDescent=250)
    builder.setupPost()
    builder.setupHead(unitsPerEm=1000, created=0, modified=0)
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()


def blank_font_url(advance: int) -> str:
    return "data:font/ttf;base64," + base64.b64encode(blank_font(advance)).decode()


# ------------------------------------------------------------------------------------------------
# Plots: matplotlib text roles added through a hiding primitive
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlotPrimitive:
    """A way to add a text artist that stays unseen: `kwargs` go to the call that makes it
    (`$bg` is the figure's face colour), `after` runs on the artist (`A`) once made."""

    name: str
    family: str
    kwargs: str = ""
    after: str = ""
    place: str = ""  # extra positional override for texts placed by coordinates (x, y, transform)
    note: str = ""


PLOT_PRIMITIVES: list[PlotPrimitive] = [
    PlotPrimitive("alpha-0", "paint", kwargs="alpha=0"),
    PlotPrimitive("alpha-0.001", "paint", kwargs="alpha=0.001"),
    PlotPrimitive("colour-of-figure", "paint", kwargs="color=_fx_fig.get_facecolor()"),
    PlotPrimitive("colour-of-axes", "paint", kwargs="color=_fx_ax.get_facecolor()"),
    PlotPrimitive("fontsize-0.01", "font", kwargs="fontsize=0.01"),
    PlotPrimitive("fontsize-0.5", "font", kwargs="fontsize=0.5"),
    PlotPrimitive("zorder-under-axes", "stacking", kwargs="zorder=-10",
                  after="A.set_zorder(-10)", note="a figure-level text drawn before the axes' patch"),
    PlotPrimitive("outside-figure", "position", after="A.set_position((4.0, 4.0)); A.set_transform(_fx_fig.transFigure)"),
    PlotPrimitive("outside-axes-clipped", "clipping", after="A.set_position((3.0, 3.0)); A.set_transform(_fx_ax.transAxes);"
                  " A.set_clip_on(True); A.set_clip_box(_fx_ax.bbox)"),
    PlotPrimitive("clip-path-empty", "clipping",
                  after="import matplotlib.patches as _fx_p; A.set_clip_path(_fx_p.Rectangle((0, 0), 0, 0, transform=_fx_fig.transFigure))"),
    PlotPrimitive("set-visible-false", "skipping", after="A.set_visible(False)"),
    PlotPrimitive("control-visible", "control", note="not a hiding primitive: checks the pixel oracle"),
]

PLOT_ROLES = ("title", "suptitle", "xlabel", "ylabel", "legend", "annotation")


def _plot_words(task: Task) -> tuple[str, str, str]:
    words = _words(task.prompt)
    title = " ".join(words[:6]).capitalize() or "Overview"
    return title, " ".join(words[6:8]).capitalize() or "Category", " ".join(words[8:10]).capitalize() or "Value"


_PLOT_SNIPPET = """\
import matplotlib.pyplot as _fx_plt
from matplotlib.legend import Legend as _fx_Legend
from matplotlib.lines import Line2D as _fx_L
_fx_fig = _fx_plt.gcf()
_fx_ax = _fx_plt.gca()
_fx_kw = dict({kwargs})
_fx_loc = next((loc for loc in ("center", "left", "right") if not _fx_ax.get_title(loc=loc)), None)
_fx_free = {{"title": _fx_loc is not None, "xlabel": not _fx_ax.get_xlabel(), "ylabel": not _fx_ax.get_ylabel(),
            "suptitle": not (_fx_fig._suptitle is not None and _fx_fig._suptitle.get_text()),
            "legend": True, "annotation": True}}
_fx_role = next(r for r in ({role!r}, "title", "suptitle", "xlabel", "ylabel", "legend") if _fx_free[r])
_fx_text = {{"title": {title!r}, "suptitle": {title!r}, "xlabel": {xlabel!r}, "ylabel": {ylabel!r},
            "annotation": {note!r}}}
if _fx_role == "legend":
    A = _fx_Legend(_fx_ax, [_fx_L([], [], color="C0"), _fx_L([], [], color="C1")], [{xlabel!r}, {ylabel!r}],
                   title={title30!r})
    _fx_ax.add_artist(A)
    _fx_parts = [A, A.get_frame(), A.get_title(), *A.get_texts(), *A.legend_handles]
    for _fx_a in _fx_parts:
        for _fx_k, _fx_v in _fx_kw.items():
            try: getattr(_fx_a, "set_" + _fx_k)(_fx_v)
            except Exception: pass
else:
    if _fx_role == "title":
        A = _fx_ax.set_title(_fx_text["title"], loc=_fx_loc, **_fx_kw)
    elif _fx_role == "suptitle":
        A = _fx_fig.suptitle(_fx_text["suptitle"], **_fx_kw)
    elif _fx_role == "xlabel":
        A = _fx_ax.set_xlabel(_fx_text["xlabel"], **_fx_kw)
    elif _fx_role == "ylabel":
        A = _fx_ax.set_ylabel(_fx_text["ylabel"], **_fx_kw)
    else:
        A = _fx_fig.text(0.5, 0.5, _fx_text["annotation"], ha="center", **_fx_kw)
    _fx_parts = [A]
# Out of the layout engines and the tight bounding box, so the text cannot move what is there.
for _fx_a in _fx_parts:
    try: _fx_a.set_in_layout(False)
    except Exception: pass
"""


def plot_code(role: str, primitive: PlotPrimitive, task: Task) -> str:
    """The lines that add a text role to the current figure through `primitive`: `role` when the
    figure has none yet, else the first free one (title slots left and right count; a legend or
    an annotation always fits), so the mutation adds a role instead of replacing a visible one."""
    title, xlabel, ylabel = _plot_words(task)
    code = _PLOT_SNIPPET.format(kwargs=primitive.kwargs, role=role, title=title, xlabel=xlabel, ylabel=ylabel,
                                title30=title[:30], note=task.prompt[:160])
    if primitive.after:
        code += ("for A in _fx_parts:\n    try:\n        " + primitive.after.replace("; ", "\n        ") +
                 "\n    except Exception:\n        pass\n")
    return code


_SHOW = re.compile(r"^(?:plt|fig|_?fig\w*)\.(?:show|savefig)\(|^plt\.close\(", re.M)


def mutate_script(script: str, role: str, primitive: PlotPrimitive, task: Task) -> str:
    """The script with the role's text added before its first top-level show/savefig (else at the end)."""
    code = plot_code(role, primitive, task)
    found = _SHOW.search(script)
    if found:
        return script[:found.start()] + code + script[found.start():]
    return script.rstrip("\n") + "\n" + code
