"""Terminal acceptance: every item of every requirement graded 0–3 on the delivered application.

Offline the grade is deterministic: each item's `steps` run on the live page (clicks and key
presses at the element's place, as a user's; `ms` of page time after each), then its `Expect`
is read in one call. Each part the expectation sets scores in [0, 1]; the grade is 3 when every
part holds in full, 2 when they hold on average at least `GRADE_2`, 1 for anything above 0,
else 0. Items without steps share one fresh page; each item with steps (or a viewport of its
own, a phone's) gets its own, so no item sees what another one did. A step that finds nothing
to act on, or a page that hangs, throws or crashes under the check, grades 0 with the reason:
the application's fault, never ours. An undelivered application (the launch check failed) has
every item graded 0.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from aesenv.kinds.base import Backends
from aesenv.render.live import LivePage, PageFault
from aesenv.kinds.project.health import Delivery, opened
from aesenv.webdev.tasks import ChecklistItem, CompositeTask, Dimension, Expect, Step

GRADE_2 = 0.6
STEP_TIMEOUT_S = 5.0

# These run in our isolated world (`LivePage.evaluate`) and read the page through the natives `N`
# and the one definition of what a person sees (`N.seen`, aesenv/render/seen.js, with the
# counterfactual's verdicts): an element counts when it is shown, text when it is shown text. (A named form field or image can shadow
# `document.getElementById` or `form.id` in every world; the natives cannot be shadowed.)
_SEEN = """  const N = globalThis.__aesenv__, seen = N.seen({}), doc = N.document;
  const visible = (el) => seen.element(el).shown;
  const query = (sel) => seen.deepAll(sel);
  const shownText = (el) => seen.textIn(el, 200000);
  const fieldText = (el) => shownText(el) || N.String(N.prop(el, 'value') || '');
  const byId = (id) => { try { return N.all(doc, '#' + N.escapeCss(id))[0] || null; } catch (x) { return null; } };
"""

_TARGET_JS = """([selector, text]) => {
""" + _SEEN + """  let el;
  const has = (el) => !text || fieldText(el).replace(/\\s+/g, ' ').toLowerCase().includes(text.toLowerCase());
  try { el = query(selector).find((x) => visible(x) && has(x)); } catch (e) { return {error: 'invalid selector'}; }
  if (!el) return null;
  N.reveal(el);
  const b = N.box(el);
  return {x: b.left + b.width / 2, y: b.top + b.height / 2};
}"""

# Picks the option whose text contains `value` in the first visible match, as a user's choice
# does: the native value setter (which React's value tracking sees), then input and change.
_SELECT_JS = """([selector, text, value]) => {
""" + _SEEN + """  const has = (el) => !text || shownText(el).toLowerCase().includes(text.toLowerCase());
  let el;
  try { el = query(selector).find((x) => visible(x) && has(x) && N.prop(x, 'options')); } catch (e) { return false; }
  if (!el) return false;
  const option = N.list(N.prop(el, 'options')).find((o) => N.text(o).toLowerCase().includes(value.toLowerCase()));
  if (!option) return false;
  N.setProp(el, 'value', N.prop(option, 'value'));
  N.dispatch(el, 'input');
  N.dispatch(el, 'change');
  return true;
}"""

_EXPECT_JS = """(e) => {
""" + _SEEN + """  const fold = (t) => (t || '').replace(/\\s+/g, ' ').trim().toLowerCase();
  const all = (sel) => { try { return query(sel).filter(visible); } catch (x) { return null; } };
  const out = {};
  const scope = e.within ? all(e.within) : [N.body(doc)];
  const text = fold((scope || []).map((el) => el ? shownText(el) : '').join('\\n'));
  const scoped = !e.within || (scope && scope.length > 0);  // a scope that is not there holds nothing true
  if (!scoped) out.within = 'no visible match for ' + e.within;
  if (e.text.length) { const found = e.text.filter((t) => text.includes(fold(t)));
    out.text = {score: scoped ? found.length / e.text.length : 0, found}; }
  if (e.absent.length) { const present = e.absent.filter((t) => text.includes(fold(t)));
    out.absent = {score: scoped ? 1 - present.length / e.absent.length : 0, present}; }
  const matches = e.selector ? all(e.selector) : [];
  if (e.selector && matches === null) out.selector = 'invalid selector';
  const n = matches ? matches.length : 0;
  if (e.min_count) out.count = {score: Math.min(1, n / e.min_count), count: n};
  if (e.max_count !== null) out.max_count = {score: n <= e.max_count ? 1 : 0, count: n};
  if (e.columns) { const xs = new N.Set((matches || []).map((el) => Math.round(N.box(el).left / 8)));
    out.columns = {score: Math.min(1, xs.size / e.columns), columns: xs.size}; }
  const keys = Object.keys(e.style);
  if (keys.length) { const first = (matches || [])[0], values = {};
    let ok = 0;
    for (const k of keys) {
      const want = e.style[k], negate = want.startsWith('!'), exact = want.startsWith('=');
      const needle = (negate || exact ? want.slice(1) : want).toLowerCase();
      const value = first ? N.style(first)(k).trim().toLowerCase() : '';
      values[k] = value.slice(0, 120);
      if (first && (exact ? value === needle : value.includes(needle) !== negate)) ok += 1;
    }
    out.style = {score: ok / keys.length, values}; }
  if (e.links_resolve) { const hrefs = query('a[href^="#"]').filter(visible).map((a) => N.attr(a, 'href') || '').filter((h) => h.length > 1);
    const broken = hrefs.filter((h) => { try { return !byId(decodeURIComponent(h.slice(1))); } catch (x) { return true; } });
    out.links = {score: hrefs.length ? 1 - broken.length / hrefs.length : 0, links: hrefs.length, broken: [...new N.Set(broken)].slice(0, 10)}; }
  if (e.fits_width) { const root = N.root(doc), w = root ? N.scrollWidth(root) : 0, v = N.viewport().width;
    out.fits_width = {score: w <= v + 1 ? 1 : 0, width: w, viewport: v}; }
  return out;
}"""


class ItemGrade(BaseModel):
    """One item's grade, with what its check found."""

    id: str
    requirement: str
    dimension: Dimension
    weight: float
    grade: int = Field(ge=0, le=3)
    score: float = Field(ge=0, le=1)  # the mean of the check's parts
    parts: dict = Field(default_factory=dict)
    problem: str = ""  # why it could not be checked in full (a step found nothing, the page hung)


def grade_of(score: float) -> int:
    return 3 if score >= 1.0 else 2 if score >= GRADE_2 else 1 if score > 0 else 0


def _part_score(part: object) -> float:
    """A part's score as the page reported it, in [0, 1] (anything else the page made of it: 0)."""
    try:
        return min(1.0, max(0.0, float(part["score"])))  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return 0.0


def item_grade(item: ChecklistItem, requirement: str, parts: dict, problem: str = "") -> ItemGrade:
    """`item`'s grade from the parts its check read; 0 when it could not be checked (`problem`)."""
    scores = [_part_score(parts.get(name)) for name in item.expect.parts()]
    score = round(sum(scores) / len(scores), 4) if scores and not problem else 0.0
    return ItemGrade(id=item.id, requirement=requirement, dimension=item.dimension, weight=item.weight,
                     grade=grade_of(score), score=score, parts=parts, problem=problem)


async def read_expect(live: LivePage, expect: Expect) -> dict:
    # The matches the expectation counts and reads inside count where taking them away changes the
    # pixels: measured first, then honoured by its reads (`N.seen`).
    await live.confirm_shown([sel for sel in (expect.selector, expect.within) if sel])
    parts = await live.evaluate(_EXPECT_JS, expect.model_dump(mode="json"), timeout_s=STEP_TIMEOUT_S)
    parts = parts if isinstance(parts, dict) else {}
    if expect.no_errors:
        errors = live.page_errors
        parts["no_errors"] = {"score": 0.0 if errors else 1.0, "errors": [e[:200] for e in errors[:5]]}
    return parts


async def perform(live: LivePage, step: Step) -> str:
    """Run one step; '' when done, else why it could not be (nothing visible to act on)."""
    if step.selector and step.action != "wait":
        target = await live.evaluate(_TARGET_JS, [step.selector, step.text], timeout_s=STEP_TIMEOUT_S)
        if not isinstance(target, dict) or "x" not in target:
            labelled = f" with the text {step.text!r}" if step.text else ""
            return (target or {}).get("error") or f"nothing visible matches {step.selector}{labelled}"
        async with live.settles_navigation():
            await live.bounded(live.page.mouse.click(float(target["x"]), float(target["y"])), STEP_TIMEOUT_S)
            if step.action == "fill":
                for key in ("Control+A", "Backspace"):
                    await live.bounded(live.page.keyboard.press(key), STEP_TIMEOUT_S)
                await live.bounded(live.page.keyboard.type(step.value), STEP_TIMEOUT_S)
            if step.action == "select":
                chosen = await live.evaluate(_SELECT_JS, [step.selector, step.text, step.value], timeout_s=STEP_TIMEOUT_S)
                if chosen is not True:
                    return f"{step.selector} has no option {step.value!r}"
    if step.action == "press":
        async with live.settles_navigation():
            await live.bounded(live.page.keyboard.press(step.value), STEP_TIMEOUT_S)
    if step.ms:
        await live.advance(step.ms)
    return ""


async def check_item(live: LivePage, item: ChecklistItem, requirement: str) -> ItemGrade:
    try:
        for number, step in enumerate(item.steps, 1):
            if problem := await perform(live, step):
                return item_grade(item, requirement, {}, f"step {number} ({step.action}): {problem}")
        return item_grade(item, requirement, await read_expect(live, item.expect))
    except PageFault as exc:
        return item_grade(item, requirement, {}, f"{exc.stop}: {exc}")


def not_delivered(task: CompositeTask, delivery: Delivery) -> list[ItemGrade]:
    """Every item graded 0: the application did not launch."""
    why = delivery.health.problem or "the served page is blank or did not render"
    return [item_grade(item, r.id, {}, f"not delivered: {why}") for r in task.requirements for item in r.items]


async def accept(backends: Backends, task: CompositeTask, delivery: Delivery) -> list[ItemGrade]:
    """Every item of `task` graded on the delivered application, in the task's order."""
    owners = {item.id: r.id for r in task.requirements for item in r.items}
    if not delivery.launched:
        return not_delivered(task, delivery)
    grades: dict[str, ItemGrade] = {}
    shared = [item for item in task.items() if not (item.steps or item.viewport)]
    async with opened(backends, delivery.dist) as (_, live):
        for item in shared:
            grades[item.id] = await _on(live, item, owners[item.id])
    for item in (i for i in task.items() if i.id not in grades):
        async with opened(backends, delivery.dist, viewport=item.viewport) as (_, live):
            grades[item.id] = await _on(live, item, owners[item.id])
    return [grades[item.id] for item in task.items()]


async def _on(live: LivePage | None, item: ChecklistItem, requirement: str) -> ItemGrade:
    if live is None:
        return item_grade(item, requirement, {}, "the page did not open for the check")
    return await check_item(live, item, requirement)
