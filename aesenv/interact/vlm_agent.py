"""The VLM web agent (WebVoyager-style, as in AesCoder's interactive-aesthetics agent).

It sees the viewport screenshot with numbered set-of-marks boxes drawn on it and the list of the
labeled elements. First it writes a plan of the interactions that matter for this prompt and
category; then, one action per turn from the published grammar, it acts, and on the next turn
(seeing the screenshot before and after) scores the interaction it just made: 1 if the page
responded as it should, 0 if not, null (NaN) after a typing step whose submit is still to come.
The episode ends after N scored interactions, on `finish`, or at a turn limit; the score is the
number of 1s. A model that cannot be reached or keeps answering outside the schema raises
`ModelError`, which the channel reports as an infra error (masked), never as a 0.
"""

from __future__ import annotations

import io
from typing import Literal

from PIL import Image
from pydantic import BaseModel, Field

from aesenv.interact.acting import ActionFailed, Actor, Measured
from aesenv.interact.explorer import step_record
from aesenv.interact.labeling import draw_marks, label
from aesenv.interact.models import Action, InteractionReport, Labeling, Step, Verdict
from aesenv.llm.client import ChatClient, Usage, image_part
from aesenv.quoting import GUARD, inline
from aesenv.render.live import LivePage, PageFault
from aesenv.tasks import Category, Task

SYSTEM = """You test generated web pages the way a careful QA engineer would, by using them.
You see a screenshot of the browser viewport. Every element you can act on has a numbered box
drawn on the screenshot, and the same numbers appear in the element list.

Actions (exactly one per turn, written exactly like this):
  click [n]            click element n (for a canvas: its centre)
  type [n]; some text  click field n, replace its text, then press Enter
  wait                 let 1.5 s pass (for loading or animations)
  up | down | left | right | space    press a key (for games and keyboard widgets)
  finish               stop: nothing important is left to test

You judge interactions, not looks: did the page respond to what you did the way its purpose
requires? A button that should open a dialog must open it; a tab must switch its panel; a search
must filter or show results; a form must visibly accept the input; a game must react to its
controls. Something that silently does nothing, throws an error, reloads the page and loses its
state, or does the wrong thing scores 0. Close dialogs and pop-ups you opened once you have
judged them, and test that closing works. Prefer the interactions a user of this page would try
first; do not repeat one you already judged unless it is the only one left.

""" + GUARD

GAME_GUIDANCE = """This page is a game. Start it first (a start/play button, a click on the game
area, or space). Then use the arrow keys and space to play. Judge the mechanics: does the game
start, does the player respond to the keys, do the rules visibly work (movement, collisions,
score)? Do not judge whether you win or how well you play."""

PLAN_ASK = """Write the plan: the {budget} interactions that matter most for this page, given its
purpose and category, in the order you will try them (element numbers where you can).
Answer with JSON only: {{"plan": ["...", "..."]}}"""

TURN_ASK = """{previous}
Scored so far: {scored} of {budget}.
First score your previous interaction (if there was one): "previous_score" is 1 if the page
responded correctly, 0 if not, or null only if it was a typing step whose submit is still to come
(or if there was no previous action). Then choose the next action.
Answer with JSON only: {{"previous_score": 1 | 0 | null, "previous_reason": "...", "thought": "...", "action": "..."}}"""


class PlanAnswer(BaseModel):
    plan: list[str] = Field(min_length=1, max_length=12)


class TurnAnswer(BaseModel):
    previous_score: Literal[0, 1] | None = None
    previous_reason: str = Field(default="", max_length=2000)
    thought: str = Field(default="", max_length=2000)
    action: str = Field(min_length=1, max_length=300)


def _jpeg(png: bytes, quality: int = 80) -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()


def _evidence(measured: Measured) -> str:
    r = measured.response
    parts = [f"{r.mutations} DOM changes", f"{r.changed_px} px changed in the {r.region} (page idle: {r.idle_changed_px})",
             f"{r.own_changed_px} px of the control itself changed"]
    if r.scrolled:
        parts.append("the page scrolled")
    if r.reloaded:
        parts.append("the page reloaded")
    if r.new_errors:
        parts.append(f"page error: {inline(r.new_errors[0], 160)}")
    return "; ".join(parts)


class VlmAgent:
    """`await VlmAgent(client, budget=3).explore(live, task)` → an `InteractionReport`."""

    def __init__(self, client: ChatClient, budget: int = 3) -> None:
        if budget < 1:
            raise ValueError("the interaction budget must be at least 1")
        self.client = client
        self.budget = budget
        self.name = f"vlm-agent:{client.config.model}"

    @property
    def deadline_s(self) -> float:
        """A plan, then up to two turns per scored interaction, each a full client call."""
        return (2 * self.budget + 2) * self.client.config.worst_case_s

    async def close(self) -> None:
        await self.client.close()

    def _intro(self, task: Task) -> str:
        category = Category.parse(task.category)
        text = f"Category: {category.value}\nThe page was built for this request:\n{task.prompt[:3000]}"
        if category is Category.GAME_DEV:
            text += "\n\n" + GAME_GUIDANCE
        return text

    def _view(self, labeling: Labeling, som_png: bytes) -> list[dict]:
        return [image_part(_jpeg(som_png), "image/jpeg"),
                {"type": "text", "text": "Labeled elements:\n" + labeling.element_list()}]

    async def _ask(self, usage: Usage, messages: list[dict], schema, validate=None):
        completion = await self.client.complete_json(messages, schema, validate=validate)
        usage.add(completion.usage)
        return completion.value

    async def explore(self, live: LivePage, task: Task) -> InteractionReport:
        report = InteractionReport(agent=self.name, budget=self.budget)
        usage = Usage()
        try:
            return await self._episode(live, task, report, usage)
        except PageFault as exc:  # while the page was being read (labeling, a screenshot)
            report.steps.append(Step(action="page", target="page", verdict=Verdict(
                score=0, reason=f"{exc.stop} while the page was being read: {exc}")))
            report.stopped = exc.stop
            return report
        finally:
            report.usage = usage.model_dump()

    async def _episode(self, live: LivePage, task: Task, report: InteractionReport, usage: Usage) -> InteractionReport:
        actor = Actor(live)
        try:
            return await self._turns(actor, live, task, report, usage)
        finally:
            await actor.stop()

    async def _turns(self, actor: Actor, live: LivePage, task: Task, report: InteractionReport,
                     usage: Usage) -> InteractionReport:
        labeling = await label(live)
        report.labeled = len(labeling.marks)
        await actor.start()
        shot = await live.screenshot()
        system = {"role": "system", "content": SYSTEM}
        intro = {"type": "text", "text": self._intro(task)}
        plan = await self._ask(usage, [system, {"role": "user", "content": [
            intro, *self._view(labeling, draw_marks(shot, labeling)),
            {"type": "text", "text": PLAN_ASK.format(budget=self.budget)}]}], PlanAnswer)
        report.plan = [p[:300] for p in plan.plan]
        previous: tuple[Action, Measured] | None = None
        note = "This is your first turn: there is no previous action."
        scored = 0
        for _ in range(3 * self.budget + 2):
            view = [intro, {"type": "text", "text": "Your plan:\n" + "\n".join(f"- {p}" for p in report.plan)}]
            if previous is not None:
                view += [{"type": "text", "text": "The viewport before your previous action:"},
                         image_part(_jpeg(previous[1].before.png), "image/jpeg"),
                         {"type": "text", "text": "The viewport now:"}]
            view += self._view(labeling, draw_marks(shot, labeling))
            view.append({"type": "text", "text": TURN_ASK.format(previous=note, scored=scored, budget=self.budget)})
            answer = await self._ask(usage, [system, {"role": "user", "content": view}], TurnAnswer,
                                     validate=self._checker(labeling, previous))
            if previous is not None:
                verdict = Verdict(score=answer.previous_score, reason=answer.previous_reason[:500])
                report.steps.append(step_record(previous[0], previous[1], verdict, thought=answer.thought[:500]))
                scored += verdict.scored
            action = Action.parse(answer.action)
            if scored >= self.budget or action.kind == "finish":
                report.stopped = "budget used" if scored >= self.budget else "the agent finished"
                return report
            try:
                measured = await actor.run(action, labeling)
            except ActionFailed as exc:
                previous, note = None, f"Your previous action `{action.describe()}` could not be performed: {exc}."
            except PageFault as exc:
                report.steps.append(Step(action=action.describe(), verdict=Verdict(
                    score=0, reason=f"{exc.stop} on this interaction: {exc}")))
                report.stopped = exc.stop
                return report
            else:
                previous = (action, measured)
                note = (f"Your previous action: {action.describe()}. Measured after it: {_evidence(measured)}.")
            labeling = await label(live)
            shot = await live.screenshot()
        report.stopped = "turn limit"
        return report

    @staticmethod
    def _checker(labeling: Labeling, previous: tuple[Action, Measured] | None):
        """Reject answers the episode cannot use, so the client asks again (and fails loudly)."""

        def check(answer: TurnAnswer) -> None:
            action = Action.parse(answer.action)
            if action.mark is not None and labeling.by_index(action.mark) is None:
                raise ValueError(f"there is no element [{action.mark}] in the list")
            if previous is not None and answer.previous_score is None and previous[0].kind != "type":
                raise ValueError("previous_score may be null only after a typing step")

        return check
