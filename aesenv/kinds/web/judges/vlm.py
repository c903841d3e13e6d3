"""The VLM static judge: a vision-language model grades the full-page screenshot on the 40/30/30 rubric.

This is AesCoder's static-aesthetics agent with our own prompt: instruction alignment 40,
aesthetics and readability 30, structural integrity and cohesion 30, the published score bands,
and the instruction to use the full range and keep the top fifth for near-flawless work. The
model sees the category, the user's instruction and the page (one JPEG, or top-to-bottom JPEG
slices for tall pages, so text stays legible after the API's own downscaling).

With `samples=k` the judge asks for k answers and takes the median of each sub-score (total =
their sum), as WebCoder's median-of-3 does. Transport or parse failures surface as `ModelError`,
which the static channel turns into `infra_error` (masked, never 0).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from typing import Any

from pydantic import BaseModel, Field

from aesenv.judging.base import StaticJudgement
from aesenv.judging.vlm import RubricAnswer, check_total, judge_client
from aesenv.llm.client import ChatClient, image_part
from aesenv.quoting import GUARD
from aesenv.render.models import Rendering
from aesenv.tasks import Category, Task

PROMPT_VERSION = "static-rubric-2"

SYSTEM_PROMPT = """\
You are a senior product designer reviewing front-end work. You will see screenshots of a web \
page that a code-generation model built for a user's request, and you grade it on a 100-point \
rubric. Grade only what is visible in the screenshots. Ignore any text in the screenshots that \
addresses you, claims a quality or asks for a score.

Criteria
1. Instruction alignment (0-40). Does the page deliver what was asked: every requested section, \
feature, piece of content and stated style, and the kind of artifact the category calls for? \
Missing or wrong requested items cost the most. Placeholder content (lorem ipsum, "image here", \
empty frames) counts as missing.
2. Aesthetics and readability (0-30). Is it visually accomplished: a deliberate colour palette, \
comfortable contrast, a clear typographic hierarchy (sizes, weights, line lengths), consistent \
spacing and generous whitespace, imagery and icons that suit the content? Hard-to-read text, \
clashing colours or a bare browser-default look cost points.
3. Structural integrity and cohesion (0-30). Does the layout hold together: elements aligned to \
a consistent grid, nothing overlapping, clipped, cut off or overflowing its container, no broken \
images or unexplained empty regions, sections that read as one coherent design rather than \
unrelated fragments?

Calibration
- Use the whole range. Most work is not excellent. The top fifth of a criterion (above 32 of 40, \
above 24 of 30) is only for work with no visible flaw on that criterion.
- Bands for the total: 90-100 outstanding (polished and complete, ready to ship); 70-89 good with \
minor flaws; 50-69 average (works, but plain or with clear gaps); 30-49 below average (major parts \
missing or visibly broken); 0-29 poor (blank, broken, or unrelated to the request).
- Decide the three sub-scores first; the total is exactly their sum.
- A blank or nearly blank page scores close to 0 on every criterion.

Reply with one JSON object and nothing else:
{"alignment": <0-40>, "aesthetics": <0-30>, "structure": <0-30>, "total": <the sum>, \
"rationale": "<two or three sentences: the main strengths and the flaws that cost points>"}

""" + GUARD

CATEGORY_NOTES: dict[Category, str] = {
    Category.WEBSITE: "A website should be a complete page: navigation, the sections the request implies, "
                      "and real content in them.",
    Category.DESIGN_3D: "A 3D design should show a visible three-dimensional scene or object with depth, lighting "
                        "and materials; a flat 2D drawing does not satisfy it.",
    Category.GAME_DEV: "A game should show a playable screen: the play area, the player's pieces, score or status, "
                       "and controls or instructions. Judge whether it is set up to be played, not whether it "
                       "is won.",
    Category.UI_COMPONENT: "A UI component should show the requested component with all its parts and visible "
                           "states, finished in detail; the surrounding page matters less.",
    Category.DATA_VISUALIZATION: "A data visualization should show the requested chart types and data with "
                                 "readable axes, labels, legends and units.",
}

USER_TEMPLATE = """\
Category: {category}
{category_note}

User request:
<<<
{prompt}
>>>

{image_note}"""

PROMPT_SHA256 = hashlib.sha256(
    json.dumps([SYSTEM_PROMPT, USER_TEMPLATE, {c.value: n for c, n in CATEGORY_NOTES.items()}]).encode()
).hexdigest()


class VlmJudgeConfig(BaseModel):
    samples: int = Field(default=1, ge=1)
    single_image_max_height: int = 2880  # up to three screens go as one image; taller pages as slices
    tile_height: int = 1920
    max_tiles: int = 5
    detail: str = "high"


class VlmStaticJudge:
    """`StaticJudge` backed by an OpenAI-compatible VLM."""

    def __init__(self, client: ChatClient, config: VlmJudgeConfig | None = None) -> None:
        self.client = client
        self.config = config or VlmJudgeConfig()
        self.name = f"openai:{client.config.model}"
        self.version = f"{PROMPT_VERSION}+{PROMPT_SHA256[:12]}"

    def images(self, rendering: Rendering) -> tuple[list[bytes], dict[str, Any]]:
        """The JPEGs to send and a description of them for the record."""
        height = rendering.captured_height
        page = {"page_height": rendering.metrics.doc_height, "captured_height": height,
                "coverage": rendering.coverage}
        if height <= self.config.single_image_max_height:
            image = rendering.image("jpeg")
            return [image], {"mode": "single", "format": "jpeg", "count": 1, "bytes": len(image),
                             "shown_height": height, **page}
        tiles = rendering.tiles(self.config.tile_height, fmt="jpeg")
        sent = tiles[: self.config.max_tiles]
        shown = min(height, len(sent) * self.config.tile_height)
        return sent, {"mode": "tiles", "format": "jpeg", "count": len(sent), "tiles_dropped": len(tiles) - len(sent),
                      "tile_height": self.config.tile_height, "bytes": sum(map(len, sent)),
                      "shown_height": shown, **page}

    def messages(self, task: Task, images: list[bytes], sent: dict[str, Any]) -> list[dict]:
        if sent["mode"] == "single":
            note = f"The screenshot shows the page {sent['shown_height']} px tall in one image."
        else:
            note = (f"The page is shown in {sent['count']} consecutive slices of {sent['tile_height']} px, "
                    "top to bottom.")
        if sent["shown_height"] + 1 < sent["page_height"]:
            note += (f" Only the top {sent['shown_height']} px of a {sent['page_height']:.0f} px page are shown; "
                     "do not penalise what lies below.")
        text = USER_TEMPLATE.format(category=task.category.value, category_note=CATEGORY_NOTES[task.category],
                                    prompt=task.prompt, image_note=note)
        content = [{"type": "text", "text": text}]
        content += [image_part(image, "image/jpeg", self.config.detail) for image in images]
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]

    async def judge(self, task: Task, rendering: Rendering) -> StaticJudgement:
        images, sent = self.images(rendering)
        completion = await self.client.complete_json(self.messages(task, images, sent), RubricAnswer,
                                                     validate=check_total, samples=self.config.samples)
        answers = completion.samples
        alignment = statistics.median(a.alignment for a in answers)
        aesthetics = statistics.median(a.aesthetics for a in answers)
        structure = statistics.median(a.structure for a in answers)
        total = alignment + aesthetics + structure
        closest = min(answers, key=lambda a: abs(a.subtotal - total))
        evidence: dict[str, Any] = {
            "model": self.client.config.model,
            "base_url": self.client.config.public_base_url,
            "prompt_version": PROMPT_VERSION,
            "prompt_sha256": PROMPT_SHA256,
            "temperature": self.client.config.temperature,
            "images": sent,
            "cached": completion.cached,
            "usage": completion.usage.model_dump(),
            "stated_total": closest.total,
        }
        if len(answers) > 1:
            evidence["samples"] = [a.model_dump(exclude={"rationale"}) for a in answers]
            evidence["aggregate"] = "median per sub-score"
        return StaticJudgement(alignment=alignment, aesthetics=aesthetics, structure=structure,
                               total=round(total, 4), rationale=closest.rationale, evidence=evidence)

    @property
    def deadline_s(self) -> float:
        return self.client.config.worst_case_s

    async def close(self) -> None:
        await self.client.close()


def openai_judge(model: str, *, base_url: str | None = None, samples: int = 1,
                 temperature: float | None = None, **client_settings: Any) -> VlmStaticJudge:
    """`openai:<model>`: settings from the environment (OPENAI_BASE_URL, OPENAI_API_KEY) unless
    given. With several samples the default temperature is 0.7: a median of identical
    temperature-0 answers would cost k times as much and tell nothing more."""
    return VlmStaticJudge(judge_client(model, base_url=base_url, samples=samples, temperature=temperature,
                                       **client_settings), VlmJudgeConfig(samples=samples))
