"""The offline explorer: a deterministic stand-in for the VLM web agent.

It labels the page, picks up to N interactions by importance for the task's category, performs
them, and scores each 0/1 by the page's measured response (see `acting`). Importance:
games get their start control and arrow keys first; forms and search boxes are filled and
submitted (typing is not scored, the submit is); tabs, disclosures, modal openers, toggles and
listener-only controls are clicked, one of a kind before repeats; a dialog that opened is closed
next ("pop-ups closed after use"), which is how a modal that cannot close is caught. Links that
leave the page are not interactions with it and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aesenv.interact.acting import ActionFailed, Actor, Measured
from aesenv.interact.labeling import label
from aesenv.interact.models import Action, InteractionReport, Labeling, Mark, MarkKind, Response, Step, Verdict
from aesenv.render.live import LivePage, PageFault
from aesenv.tasks import Category, Task

START = re.compile(r"\b(start|play|begin|new game|restart|try again|launch|go!?)\b", re.I)
CLOSE = re.compile(r"^\s*(×|✕|✖|x|close|cancel|dismiss|got it|ok|okay|no thanks|back|done)\b|close", re.I)
OPENS = re.compile(r"\b(open|show|view|details|more|sign ?up|subscribe|menu|learn|contact|book|order)\b", re.I)
KEY_BURSTS = (("ArrowUp", "ArrowLeft"), ("ArrowDown", "ArrowRight"), ("Space",))
SAMPLE_TEXT = {"email": "test@example.com", "number": "42", "tel": "5551234", "url": "https://example.com",
               "password": "Passw0rd!", "textarea": "Hello, this is a test message."}
DEFAULT_TEXT = "test"


@dataclass(frozen=True)
class Candidate:
    """One interaction the explorer could do next. `key` names it across relabels."""

    key: str
    kind: str            # click | form | keys | close
    priority: float
    mark: int | None = None
    keys: tuple[str, ...] = ()
    fields: tuple[int, ...] = ()


@dataclass
class _Episode:
    done: set[str] = field(default_factory=set)
    kinds_done: list[str] = field(default_factory=list)
    scored: int = 0
    actions: int = 0
    current: str = ""  # the interaction under way


def _is_game(task: Task, labeling: Labeling) -> bool:
    has_canvas = any(m.kind is MarkKind.CANVAS for m in labeling.marks)
    return task.category is Category.GAME_DEV or (has_canvas and bool(labeling.key_listeners))


def _leaves_page(mark: Mark) -> bool:
    href = mark.href.strip()
    return mark.kind is MarkKind.LINK and not (href.startswith("#") or href.lower().startswith("javascript:"))


def _text_for(mark: Mark) -> str:
    """Plausible input for the field: by its type, else by what its placeholder asks for."""
    kind = "textarea" if mark.tag == "textarea" else mark.input_type
    if kind in SAMPLE_TEXT:
        return SAMPLE_TEXT[kind]
    return next((sample for name, sample in SAMPLE_TEXT.items() if name in mark.text.lower()), DEFAULT_TEXT)


def candidates(task: Task, labeling: Labeling, opened_overlay: bool = False) -> list[Candidate]:
    """Everything worth trying on the page as labeled now, with its importance. After an
    interaction opened an overlay with no close control, Escape is the way to close it."""
    game = _is_game(task, labeling)
    found: list[Candidate] = []
    # Fields that share a submit control are filled together; a field without one stands alone.
    forms: dict[tuple[int | None, int], list[int]] = {}
    for mark in labeling.marks:
        if mark.kind is MarkKind.FIELD:
            group = (mark.submit, -1) if mark.submit is not None else (None, mark.index)
            forms.setdefault(group, []).append(mark.index)
    submits = {submit for submit, _ in forms if submit is not None}
    for (submit, _), fields in forms.items():
        anchor = labeling.by_index(fields[0])
        search = "search" in f"{anchor.text} {anchor.path}".lower()
        found.append(Candidate(f"form:{anchor.path}", "form", 82 if search else 78, mark=submit, fields=tuple(fields)))
    for mark in labeling.marks:
        if mark.index in submits or mark.kind is MarkKind.FIELD or _leaves_page(mark):
            continue
        key = f"click:{mark.path}"
        if mark.in_overlay and CLOSE.search(mark.text or ""):
            found.append(Candidate(key, "close", 95, mark=mark.index))
            continue
        if START.search(mark.text) and mark.kind in (MarkKind.BUTTON, MarkKind.LISTENER, MarkKind.LINK):
            found.append(Candidate(key, "start", 100 if game else 62, mark=mark.index))
            continue
        base = {MarkKind.TAB: 70, MarkKind.TOGGLE: 66, MarkKind.BUTTON: 60, MarkKind.LISTENER: 56,
                MarkKind.CHOICE: 45, MarkKind.LINK: 35,
                MarkKind.CANVAS: 50 if (game or mark.listeners) else 15}[mark.kind]
        if mark.kind is MarkKind.BUTTON and OPENS.search(mark.text):
            base += 4
        if mark.selected and mark.kind in (MarkKind.TAB, MarkKind.LINK, MarkKind.LISTENER, MarkKind.BUTTON):
            base -= 40  # the tab already showing: clicking it changes nothing, by design
        if not mark.in_viewport:
            base -= 5
        found.append(Candidate(key, mark.kind.value, base, mark=mark.index))
    if opened_overlay and not any(c.kind == "close" for c in found):
        found.append(Candidate("keys:Escape", "close", 95, keys=("Escape",)))
    if game or labeling.key_listeners:
        for rank, burst in enumerate(KEY_BURSTS):
            found.append(Candidate("keys:" + "+".join(burst), "keys", (90 if game else 25) - 5 * rank, keys=burst))
    return found


def choose(options: list[Candidate], episode: _Episode) -> Candidate | None:
    """Highest importance first; each earlier interaction of the same kind costs 15, so a page
    with five tabs gets one tab, a button and a form rather than three tabs. Ties keep document order."""
    best: tuple[float, Candidate] | None = None
    for option in options:
        if option.key in episode.done:
            continue
        value = option.priority - 15 * episode.kinds_done.count(option.kind)
        if best is None or value > best[0]:
            best = (value, option)
    return best[1] if best else None


def measured_verdict(response: Response) -> Verdict:
    """0/1 from what the page did; the reason names the evidence (pixels: see `Response.responded`)."""
    if response.new_errors:
        return Verdict(score=0, reason=f"the page threw an error: {response.new_errors[0][:160]}")
    if response.reloaded:
        return Verdict(score=0, reason="the page reloaded and lost its state instead of responding in place")
    evidence = []
    if response.pixels_moved:
        evidence.append(f"{response.changed_px} px changed in the {response.region} (idle: {response.idle_changed_px})")
    if response.own_moved:
        evidence.append(f"{response.own_changed_px} px of the control itself changed (idle: {response.own_idle_px})")
    if response.dom_shown and not evidence:
        evidence.append(f"{response.mutations} DOM changes that show: {response.dom_changed_px} px changed where "
                        f"they are (idle: {response.dom_idle_px})")
    if evidence:
        return Verdict(score=1, reason="responded: " + ", ".join(evidence))
    dom = f"{response.mutations} DOM changes that did not show" if response.mutations else "no DOM change"
    alone = [what for what, happened in (("the location hash changed", response.hash_changed),
                                         ("the page scrolled", response.scrolled)) if happened]
    framed = (f"; {response.frame_px} px only drew a frame around the control (an outline or ring, as focus does)"
              if response.frame_px else "")
    return Verdict(score=0, reason=f"no response: {dom}, {response.changed_px} px changed in the "
                                   f"{response.region} (idle: {response.idle_changed_px}), {response.own_changed_px} px "
                                   f"of the control itself" + framed
                                   + (f"; {' and '.join(alone)}, which shows nothing by itself" if alone else ""))


def far_change(response: Response) -> list[int] | None:
    """The box of what a response changed when that lies away from its control (None when it
    did not respond, or changed the control's own surroundings): a change a click anywhere
    could have made. A control inside what changed (the close button of the dialog that
    closed) is part of the change, not away from it."""
    box, control = response.change_box, response.control_box
    if not response.responded or box is None:
        return None
    if control is not None and _overlap(box, control):
        return None
    return box if response.near_changed_px < 0.2 * max(response.changed_px, 1) else None


def _overlap(a: list[int], b: list[int]) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _page_changed(response: Response | None) -> bool:
    """Whether the page's document or scroll position changed since it was labeled."""
    return response is not None and bool(response.mutations or response.idle_mutations or response.reloaded
                                          or response.scrolled or response.hash_changed)


def step_record(action: Action, measured: Measured, verdict: Verdict, *, target: str = "", thought: str = "") -> Step:
    mark = measured.target
    return Step(action=action.describe(), target=target or (mark.path if mark else "page"),
                target_text=mark.text if mark else "", verdict=verdict, response=measured.response,
                before_jpeg_b64=measured.before.jpeg_b64, after_jpeg_b64=measured.after.jpeg_b64,
                thought=thought)


class OfflineExplorer:
    """`await OfflineExplorer(budget=3).explore(live, task)` → an `InteractionReport`."""

    name = "offline-explorer"

    def __init__(self, budget: int = 3) -> None:
        if budget < 1:
            raise ValueError("the interaction budget must be at least 1")
        self.budget = budget

    async def explore(self, live: LivePage, task: Task) -> InteractionReport:
        """The episode; a page that hangs or breaks our calls on it (`PageFault`, while labeling
        as much as while acting) ends it with a 0 for the interaction under way."""
        report = InteractionReport(agent=self.name, budget=self.budget)
        episode = _Episode()
        try:
            await self._episode(live, task, report, episode)
        except PageFault as exc:
            where = episode.current or "page"
            during = "on this interaction" if episode.current else "while the page was being read"
            report.steps.append(Step(action=where, target=where, verdict=Verdict(
                score=0, reason=f"{exc.stop} {during}: {exc}")))
            report.stopped = exc.stop
        return report

    async def _episode(self, live: LivePage, task: Task, report: InteractionReport, episode: _Episode) -> None:
        actor = Actor(live)
        try:
            await self._explore(actor, live, task, report, episode)
        finally:
            await actor.stop()

    async def _explore(self, actor: Actor, live: LivePage, task: Task, report: InteractionReport,
                       episode: _Episode) -> None:
        labeling = await label(live)
        report.labeled = len(labeling.marks)
        await actor.start()
        opened = False
        while episode.scored < self.budget and episode.actions < 4 * self.budget:
            option = choose(candidates(task, labeling, opened), episode)
            if option is None:
                report.stopped = "nothing left to try"
                break
            episode.done.add(option.key)
            report.plan.append(f"{option.kind}: {option.key}")
            episode.current = option.key
            try:
                steps = await self._interact(actor, labeling, option, episode)
            except ActionFailed:
                steps = []
            episode.current = ""
            if not steps:
                continue
            report.steps.extend(steps)
            if any(s.verdict.scored for s in steps):
                episode.scored += 1
                episode.kinds_done.append(option.kind)
            if episode.scored >= self.budget:
                continue  # the episode ends here: nothing to label for
            if not any(_page_changed(s.response) for s in steps):
                opened = False  # the page is as it was labeled: the labels still hold
                continue
            before = {m.path for m in labeling.marks if m.in_overlay}
            labeling = await label(live)
            opened = any(m.in_overlay and m.path not in before for m in labeling.marks)
        else:
            report.stopped = report.stopped or ("budget used" if episode.scored >= self.budget else "action limit")

    async def _interact(self, actor: Actor, labeling: Labeling, option: Candidate, episode: _Episode) -> list[Step]:
        if option.keys:
            action = Action(kind="key", keys=list(option.keys))
            episode.actions += 1
            measured = await actor.run(action, labeling)
            return [step_record(action, measured, measured_verdict(measured.response), target=option.key)]
        if option.kind == "form":
            return await self._fill_and_submit(actor, labeling, option, episode)
        action = Action(kind="click", mark=option.mark)
        episode.actions += 1
        measured = await actor.run(action, labeling)
        verdict = measured_verdict(measured.response)
        away = far_change(measured.response)
        if verdict.score == 1 and away is not None:
            verdict = await self._its_own(actor, away) or verdict
        return [step_record(action, measured, verdict)]

    @staticmethod
    async def _its_own(actor: Actor, away: list[int]) -> Verdict | None:
        """A click whose change lies away from its control is checked against a click on blank
        space (no control, outside that change): a page that makes the same change for it answers
        every click alike (a document-wide handler), so the control gets no credit for it. None
        when the control's change is its own, or there is no blank space to try."""
        stray = await actor.stray_click(away)
        if stray is None:
            return None
        point, response = stray
        if response.responded and response.change_box is not None and _overlap(response.change_box, away):
            return Verdict(score=0, reason=f"no response of its own: a click on blank space at {point} changed the "
                                           "same region (the page answers every click alike)")
        return None

    async def _fill_and_submit(self, actor: Actor, labeling: Labeling, option: Candidate,
                               episode: _Episode) -> list[Step]:
        """Type into every field of the form (not scored), then submit (scored on everything the
        typing and the submit changed outside the fields themselves). A form that fits one view
        is measured once, over the typing and the submit together; a taller one field by field."""
        lone = option.mark is None  # a field alone: typing ends with Enter and is the interaction
        fields = [labeling.by_index(index) for index in option.fields]
        typing = [Action(kind="type", mark=field.index, text=_text_for(field), enter=lone) for field in fields]
        if lone:
            episode.actions += 1
            measured = await actor.run(typing[0], labeling)
            return [step_record(typing[0], measured, measured_verdict(measured.response))]
        submit = Action(kind="click", mark=option.mark)
        measured = await actor.run_together([*typing, submit], labeling)
        if measured is not None:
            episode.actions += len(typing) + 1
            typed = Verdict(score=None, reason="typed; measured together with the submit")
            return [*(Step(action=action.describe(), target=field.path, target_text=field.text, verdict=typed,
                           before_jpeg_b64=measured.before.jpeg_b64) for action, field in zip(typing, fields)),
                    step_record(submit, measured, measured_verdict(measured.response))]
        steps: list[Step] = []
        combined: Response | None = None
        for action in [*typing, submit]:
            episode.actions += 1
            measured = await actor.run(action, labeling)
            combined = measured.response if combined is None else combined.merged(measured.response)
            verdict = (measured_verdict(combined) if action is submit
                       else Verdict(score=None, reason="typed; the submit is still to come"))
            steps.append(step_record(action, measured, verdict))
        return steps
