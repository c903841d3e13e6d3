"""The `checklist` channel: the task's yes/no questions answered by the VLM judge from the
rendering alone (no code, no prompt), one call per category (content / layout / style) so each
call looks at one dimension. Score = share of questions answered "yes" with grounding: a "yes"
counts only with a citation that points at a real region of the image, and at a place that shows
the words it says it read there (`aesenv.kinds.web.verifiers.citation`); an uncited or miscited "yes", a
"cannot tell" or a question left unanswered is a fail. The prompt carries the artifact-text guard
(`aesenv.quoting.GUARD`): what the page says in the image is data, not instructions.
Masked when the judge is offline (no VLM) or the task has no checklist; a judge that cannot be
reached or keeps answering garbage is our failure (`infra_error`), never a score."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, Field

from aesenv.llm.client import ChatClient, image_part
from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.quoting import GUARD
from aesenv.tasks.model import ChecklistItem, Task
from aesenv.kinds.web.verifiers import citation
from aesenv.kinds.web.verifiers.citation import Spot, image_size

# Long pages are cut here: the judge sees what a reviewer would scroll through first.
MAX_PAGE_HEIGHT = 4000

SYSTEM_PROMPT = """You inspect a screenshot of a rendered design and answer yes/no questions about it.
Judge only what the image shows; you have neither the code nor the brief. For every question,
answer "yes" only if you can point at what in the image makes it true: give its place as "box",
[left, top, right, bottom] in pixels of the image (its size is given with the questions), copy
into "text" the words you read there when words decide the answer (else leave it empty), and say
in "evidence" what it looks like. Answer "no" when the image shows it is false or missing, and
"cannot_tell" when the image does not let you decide. Reply with one JSON object:
{"answers": [{"id": <question id>, "answer": "yes" | "no" | "cannot_tell", "box": [<left>, <top>, <right>, <bottom>], \
"text": "<words read in the box, or empty>", "evidence": "<short>"}]}

""" + GUARD

_FOCUS = {
    "content": "what is shown: text, data, images, and whether they are complete and legible",
    "layout": "where things are: placement, alignment, spacing, grouping, and what fits the frame",
    "style": "how it looks: colour, type, contrast, consistency of the visual language",
}


class ChecklistAnswer(BaseModel):
    id: int
    answer: Literal["yes", "no", "cannot_tell"]
    # Any shape: `aesenv.kinds.web.verifiers.citation` checks them, so a malformed citation fails its item
    # rather than the whole reply (a reply that fails the schema is retried, then infra).
    box: Any = None
    text: Any = ""
    evidence: str = Field(default="", max_length=2000)


class ChecklistAnswers(BaseModel):
    answers: list[ChecklistAnswer]


def _question_line(number: int, item: ChecklistItem) -> str:
    where = f" [about: {item.element}]" if item.element else " [about: the whole canvas]"
    return f"{number}. {item.question}{where}"


def messages_for(category: str, items: list[ChecklistItem], image: bytes) -> list[dict]:
    questions = "\n".join(_question_line(i + 1, item) for i, item in enumerate(items))
    width, height = image_size(image)
    text = (f"These questions are about {category} ({_FOCUS[category]}).\n"
            f"The image is {width}x{height} pixels.\n"
            f"Questions (answer each by its id):\n{questions}")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": [{"type": "text", "text": text}, image_part(image, "image/jpeg")]}]


def grade(items: list[ChecklistItem], answers: ChecklistAnswers, size: tuple[int, int],
          spots: list[Spot]) -> list[dict]:
    """Per question: the judge's answer and whether it passes (a "yes" with a citation that
    holds: a region of the `size` image where the rendering shows what the answer read)."""
    by_id = {a.id: a for a in answers.answers}
    graded = []
    for i, item in enumerate(items, start=1):
        answer = by_id.get(i)
        row = {"question": item.question, "category": item.category, "element": item.element,
               "answer": answer.answer if answer else "missing", "evidence": answer.evidence if answer else "",
               "passed": False}
        if answer is not None and answer.answer == "yes":
            problem = citation.check(answer.box, size, spots, [answer.text])
            row.update(box=citation.recorded(answer.box), text=citation.quoted_text(answer.text),
                       passed=problem is None)
            if problem:
                row["citation"] = problem
        graded.append(row)
    return graded


class ChecklistChannel(Channel):
    name = "checklist"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING})

    def __init__(self, judge: object) -> None:
        """`judge`: the pipeline's static judge; a VLM judge lends its client, the offline one has none."""
        self.client: ChatClient | None = getattr(judge, "client", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "ChecklistChannel":
        cls.options_of(context)
        return cls(context.judge)

    def masked_for(self, task: Task) -> str | None:
        if not task.checklist:
            return f"task {task.id} has no checklist"
        if self.client is None:
            return "the checklist needs a VLM judge (--judge openai:<model>)"
        return None

    async def measure(self, evidence: Evidence) -> ChannelResult:
        task, rendering = evidence.task, evidence.rendering
        if not rendering.has_screenshot:
            return self.failed("nothing rendered to look at")
        image = rendering.image("jpeg", max_height=_height(task))
        groups = _by_category(task)
        try:
            replies = await asyncio.gather(*(
                self.client.complete_json(messages_for(cat, items, image), ChecklistAnswers) for cat, items in groups.items()))
        except Exception as exc:  # noqa: BLE001 - the judge failing is our failure, masked
            return ChannelResult.infra_error(f"checklist judge failed: {type(exc).__name__}: {exc}")
        size = image_size(image)
        spots = citation.rendering_spots(rendering, size)
        graded = {cat: grade(items, reply.value, size, spots) for (cat, items), reply in zip(groups.items(), replies)}
        flat = [g for rows in graded.values() for g in rows]
        score = round(sum(g["passed"] for g in flat) / len(flat), 6)
        dimensions = {cat: round(sum(g["passed"] for g in rows) / len(rows), 6) for cat, rows in graded.items()}
        return ChannelResult(
            status=ChannelStatus.OK if score == 1.0 else ChannelStatus.FAILED, score=score, raw=score,
            payload={"dimensions": dimensions, "items": flat, "model": self.client.config.model,
                     "calls": len(groups), "cached": [r.cached for r in replies]})


def _height(task: Task) -> int:
    return task.canvas.height if task.canvas else MAX_PAGE_HEIGHT


def _by_category(task: Task) -> dict[str, list[ChecklistItem]]:
    groups: dict[str, list[ChecklistItem]] = {}
    for item in task.checklist:
        groups.setdefault(item.category, []).append(item)
    return groups
