"""Who grades terminal acceptance, by spec (`make_grader`): `offline`, the items' executable
checks (`aesenv.webdev.acceptance`, deterministic), or `openai:<model>`, a VLM acceptance agent
that operates the live application and grades each item 0–3 from what it saw.

The VLM agent takes one requirement at a time on a fresh page: it sees the viewport with the
interactable elements numbered (set-of-marks, `aesenv.interact.labeling`) and the items'
acceptance criteria, acts in the web agent's grammar (click [n], type [n]; text, a key, wait) up
to `max_actions` times, and then answers a grade and a reason for every item. It is independent
of the round's gate: it sees the hidden items, the gate never does. A model that cannot be
reached or keeps answering outside the schema is our failure (the client raises), never a 0.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from aesenv.interact.acting import ActionFailed, Actor
from aesenv.interact.labeling import draw_marks, label
from aesenv.interact.models import Action
from aesenv.kinds.base import Backends
from aesenv.llm.client import ChatClient, ClientConfig, Usage, image_part
from aesenv.quoting import GUARD
from aesenv.models import WEBDEV_GRADER
from aesenv.render.live import PageFault
from aesenv.webdev.acceptance import ItemGrade, accept, item_grade, not_delivered
from aesenv.kinds.project.health import Delivery, opened
from aesenv.webdev.tasks import CompositeTask, Requirement


class Grader(Protocol):
    name: str

    async def grade(self, backends: Backends, task: CompositeTask, delivery: Delivery) -> list[ItemGrade]: ...


GRADERS = WEBDEV_GRADER.backends  # the `webdev_grader` role of `aesenv.models`


def make_grader(spec: str) -> Grader:
    """`offline` or `openai:<model>`."""
    return WEBDEV_GRADER.build(spec)


class CheckGrader:
    name = "offline"

    def __init__(self, argument: str = "") -> None:
        if argument:
            raise ValueError("the offline grader takes no argument")

    async def grade(self, backends: Backends, task: CompositeTask, delivery: Delivery) -> list[ItemGrade]:
        return await accept(backends, task, delivery)


SYSTEM = """You are the acceptance tester of a web application a developer delivered. You get one
of the client's requests and its acceptance criteria, and the running application: a screenshot
of the browser viewport where every element you can act on has a numbered box, and the same
numbers in the element list. Use the application to find out whether each criterion holds: act,
look at the result, act again. Then grade every criterion: 3 fully met, 2 mostly met with a
minor flaw, 1 attempted but clearly not met, 0 missing or broken. Judge what the application
does, not its code.

Actions (one per turn): click [n] | type [n]; some text | wait | up | down | left | right | space
Answer with JSON only:
{"thought": "...", "action": "<an action, or grade>", "grades": [{"id": "<criterion id>", "grade": 0-3, "reason": "..."}]}
"grades" is read only with "action": "grade", and must then grade every criterion.

""" + GUARD


class Graded(BaseModel):
    id: str
    grade: int = Field(ge=0, le=3)
    reason: str = Field(default="", max_length=1000)


class Turn(BaseModel):
    thought: str = Field(default="", max_length=2000)
    action: str = Field(min_length=1, max_length=300)
    grades: list[Graded] = Field(default_factory=list)


class VlmGrader:
    def __init__(self, model: str = "", *, max_actions: int = 6, **options: Any) -> None:
        if not model:
            raise ValueError("the openai grader needs a model: openai:<model>")
        self.client = ChatClient(ClientConfig(model=model, **{"max_tokens": 1200, **options}))
        self.max_actions = max_actions
        self.name = f"openai:{model}"
        self.usage = Usage()

    async def close(self) -> None:
        await self.client.close()

    async def grade(self, backends: Backends, task: CompositeTask, delivery: Delivery) -> list[ItemGrade]:
        if not delivery.launched:
            return not_delivered(task, delivery)
        grades: list[ItemGrade] = []
        for requirement in task.requirements:
            async with opened(backends, delivery.dist) as (_, live):
                if live is None:
                    raise RuntimeError("the delivered application did not open for the acceptance agent")
                grades += await self._requirement(live, requirement)
        return grades

    async def _requirement(self, live, requirement: Requirement) -> list[ItemGrade]:
        ids = [item.id for item in requirement.items]
        criteria = "\n".join(f"- {item.id}: {item.criterion}" for item in requirement.items)
        brief = {"type": "text", "text": f"The client's request: {requirement.text}\n\nAcceptance criteria:\n{criteria}"}
        actor, note = Actor(live), "Nothing done yet."
        try:
            await actor.start()
            for turn in range(self.max_actions + 1):
                labeling = await label(live)
                shot = draw_marks(await live.screenshot(), labeling)
                last = turn == self.max_actions
                ask = note + (" You have no actions left: grade now." if last else "")
                answer = await self._ask([{"role": "system", "content": SYSTEM}, {"role": "user", "content": [
                    brief, image_part(shot), {"type": "text", "text": f"Labeled elements:\n{labeling.element_list()}"
                                                                      f"\n\n{ask}"}]}], ids, must_grade=last)
                if answer.action.strip().lower() == "grade":
                    return self._graded(requirement, answer)
                action = Action.parse(answer.action)
                try:
                    await actor.run(action, labeling)
                    note = f"You did: {action.describe()}. The screenshot shows the page now."
                except ActionFailed as exc:
                    note = f"Your action `{action.describe()}` could not be performed: {exc}."
        except PageFault as exc:  # the application hung, crashed or threw under the agent: its fault
            return [item_grade(i, requirement.id, {}, f"{exc.stop} under the acceptance agent: {exc}")
                    for i in requirement.items]
        raise AssertionError("unreachable: the last turn must grade")

    async def _ask(self, messages: list[dict], ids: list[str], *, must_grade: bool) -> Turn:
        def check(turn: Turn) -> None:
            if turn.action.strip().lower() == "grade":
                missing = set(ids) - {g.id for g in turn.grades}
                if missing:
                    raise ValueError(f"grade every criterion; missing: {sorted(missing)}")
            elif must_grade:
                raise ValueError('no actions are left: answer with "action": "grade"')
            else:
                Action.parse(turn.action)

        completion = await self.client.complete_json(messages, Turn, validate=check)
        self.usage.add(completion.usage)
        return completion.value

    @staticmethod
    def _graded(requirement: Requirement, turn: Turn) -> list[ItemGrade]:
        by_id = {g.id: g for g in turn.grades}
        return [ItemGrade(id=i.id, requirement=requirement.id, dimension=i.dimension, weight=i.weight,
                          grade=by_id[i.id].grade, score=round(by_id[i.id].grade / 3, 4),
                          parts={"reason": by_id[i.id].reason}) for i in requirement.items]

