"""The simulated user at the end of each round: from the delivered app alone (the health check,
a full-page screenshot, the page text, the console) it decides whether the round's request looks
done, and answers pass, or return with a short critique in a user's words.

It is a gate, not a grader: it never sees the hidden checklist, and what it says is no score.
Two users, by spec (`make_user`):
- `offline`: deterministic, ours. It returns a round whose app does not start, serves a blank or
  failing page, did not change since the last delivery, or does not show the labels the request
  put in quotes; its critiques are fixed sentences of ours, so they can quote nothing hidden.
- `openai:<model>`: an LLM or VLM through the OpenAI-compatible client (OPENAI_BASE_URL).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from aesenv.llm.client import ChatClient, ClientConfig, image_part
from aesenv.quoting import GUARD, block, inline
from aesenv.models import WEBDEV_USER
from aesenv.text import clip
from aesenv.kinds.project.health import Delivery

MAX_CRITIQUE_CHARS = 600
MAX_PAGE_TEXT_CHARS = 12_000  # of the page's text in the user's prompt
# "double", “curly” or 'single' quotes; a single quote only outside a word, so "doesn't" quotes nothing
_QUOTED = re.compile(r"\"([^\"]{1,60})\"|“([^”]{1,60})”|(?<!\w)'([^']{1,60})'(?!\w)")


class Verdict(BaseModel):
    passed: bool
    critique: str = Field(default="", max_length=MAX_CRITIQUE_CHARS)  # a user's words; '' on a pass
    user: str  # which simulated user answered


@dataclass(frozen=True)
class Review:
    """What one round hands the user: the request in its own words and the delivered app."""

    brief: str
    request: str
    round: int
    delivery: Delivery
    previous_text: str | None = None  # the page text of the last delivery (None: nothing delivered yet)


class SimulatedUser(Protocol):
    name: str

    async def review(self, review: Review) -> Verdict: ...


USERS = WEBDEV_USER.backends  # the `webdev_user` role of `aesenv.models`


def make_user(spec: str) -> SimulatedUser:
    """`offline` or `openai:<model>`."""
    return WEBDEV_USER.build(spec)


def quoted_labels(request: str) -> list[str]:
    """The labels a request puts in quotes ("a button labelled 'Add'"): what a user looks for first."""
    return [label.strip() for groups in _QUOTED.findall(request) for label in groups if label.strip()]


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).casefold()


class OfflineUser:
    name = "offline"
    MIN_LABEL_SHARE = 0.5

    def __init__(self, argument: str = "") -> None:
        if argument:
            raise ValueError("the offline user takes no argument")

    async def review(self, review: Review) -> Verdict:
        return Verdict(passed=not (why := self.complaint(review)), critique=why, user=self.name)

    def complaint(self, review: Review) -> str:
        delivery = review.delivery
        if not delivery.health.built:
            return "I tried to start the app and it doesn't even build. Please make it build again."
        if not delivery.health.serving:
            return ("The app builds, but when I run the start script nothing answers where it should. "
                    "Please make `npm start` serve it again.")
        if not delivery.launched:
            return "The app starts, but the page I get is empty. I can't see anything to use."
        if delivery.rendering.page_errors:
            return "The page throws an error in the browser as it loads. Something is broken; please fix it."
        text = _fold(delivery.text)
        if review.previous_text is not None and text == _fold(review.previous_text):
            return "I don't see any change since the last version I looked at."
        labels = quoted_labels(review.request)
        if labels and sum(_fold(label) in text for label in labels) / len(labels) < self.MIN_LABEL_SHARE:
            return "I looked around the page, but I can't find what I asked for this time. Is it there?"
        return ""


USER_SYSTEM = """You play the client of a web developer. Each round you asked for one change to
your web app; the developer says it is done. You see only what you would see yourself: whether
the app starts, a full-page screenshot, the page's text and any errors the browser reports. Decide
whether the change you asked for this round looks done. If it does, pass it. If not, return it
with a short critique (one to three sentences, in your own words, as a client would write it:
what you expected and what you see instead). Do not invent requirements you did not ask for.
Reply with one JSON object: {"verdict": "pass" | "return", "critique": "<empty on pass>"}

""" + GUARD


class UserReply(BaseModel):
    verdict: Literal["pass", "return"]
    critique: str = Field(default="", max_length=4000)


def review_messages(review: Review) -> list[dict]:
    """The user's prompt: the request and the evidence, nothing else."""
    delivery = review.delivery
    # The health problem, the console and the page's text are the app's own words: quoted data.
    health = ("the app started and answered on its port" if delivery.health.serving
              else f"the app did not come up: {inline(delivery.health.problem, 400)}")
    console = block("\n".join(delivery.console), limit=3000, max_lines=40) if delivery.console else "(nothing)"
    page_text = block(delivery.text, limit=MAX_PAGE_TEXT_CHARS, max_lines=400) if delivery.text else "(none)"
    text = (f"What the app is: {clip(review.brief, 1500)}\n\nWhat you asked for this round (round "
            f"{review.round}): {review.request}\n\nStarting it: {health}.\n\nBrowser errors and warnings:\n{console}"
            f"\n\nThe page's text:\n{page_text}")
    shot = delivery.screenshot if delivery.launched else None
    content: Any = [{"type": "text", "text": text}, image_part(shot, "image/jpeg")] if shot else text
    return [{"role": "system", "content": USER_SYSTEM}, {"role": "user", "content": content}]


class ChatUser:
    def __init__(self, model: str = "", **options: Any) -> None:
        if not model:
            raise ValueError("the openai user needs a model: openai:<model>")
        self.client = ChatClient(ClientConfig(model=model, **{"max_tokens": 400, "cache_dir": None, **options}))
        self.name = f"openai:{model}"

    async def review(self, review: Review) -> Verdict:
        reply = await self.client.complete_json(review_messages(review), UserReply)
        passed = reply.value.verdict == "pass"
        critique = "" if passed else clip(reply.value.critique.strip() or "This doesn't look done yet.",
                                          MAX_CRITIQUE_CHARS)
        return Verdict(passed=passed, critique=critique, user=self.name)

    async def close(self) -> None:
        await self.client.close()
