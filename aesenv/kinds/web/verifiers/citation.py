"""Citations a VLM judge gives for its "yes": a box in the image it was sent, checked against the
image and the rendering before the "yes" counts.

A judge that was talked into "yes" by text on the page (or that guesses) tends to cite vaguely or
cite what is not there; any non-empty string used to pass as a citation. Now a citation is
`[left, top, right, bottom]` in the pixels of the image as sent (the prompt states its size) and
counts only when it
- is four finite numbers, inside the image (a small tolerance for rounding), and not degenerate;
- overlaps, where the answer quotes text it read there or the question names a text, a place where
  the rendering actually shows that text.
A failing citation turns the answer into the failing answer for its question, never into an
infrastructure error: the judge was reached and answered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from aesenv.render.models import Rendering

MIN_SIDE_PX = 4.0       # a box narrower or lower than this cites nothing
EDGE_TOLERANCE = 0.02   # share of the image a box may stick out by (rounding, a model's imprecision)
NEAR_SHARE = 0.03       # how far (share of the image width) a box may miss a shown text and still cite it
NEAR_MIN_PX = 16.0
# A box may be this much larger than what it cites (or take this share of the image, whichever is
# more): citing the whole page for one heading points at nothing in particular.
LOOSE_FACTOR = 6.0
LOOSE_SHARE = 0.5

BOX_FIELD_DOC = "[left, top, right, bottom] in pixels of the image"


@dataclass(frozen=True)
class Spot:
    """A place the rendering shows text: a box in image pixels and what it says."""

    left: float
    top: float
    right: float
    bottom: float
    text: str

    @property
    def area(self) -> float:
        return max(0.0, self.right - self.left) * max(0.0, self.bottom - self.top)

    def within(self, other: "Spot") -> bool:
        return (other.left <= self.left and other.top <= self.top and self.right <= other.right
                and self.bottom <= other.bottom and (self.left, self.top, self.right, self.bottom)
                != (other.left, other.top, other.right, other.bottom))

    def near(self, box: tuple[float, float, float, float], margin: float) -> bool:
        left, top, right, bottom = box
        return (left - margin < self.right and self.left < right + margin
                and top - margin < self.bottom and self.top < bottom + margin)


def fold(text: str) -> str:
    """Text as compared: case folded, letters and digits only, one space between runs (a judge
    copying "7am–3pm" as "7am-3pm" or dropping a comma still quotes the same words)."""
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def box_problem(box: object, size: tuple[int, int]) -> str | None:
    """Why `box` is not a region of an image of `size` (width, height), or None when it is."""
    if not isinstance(box, (list, tuple)) or len(box) != 4:
        return "no box: expected [left, top, right, bottom]"
    try:
        left, top, right, bottom = (float(v) for v in box)
    except (TypeError, ValueError):
        return "the box is not four numbers"
    if not all(math.isfinite(v) for v in (left, top, right, bottom)):
        return "the box is not four finite numbers"
    if right - left < MIN_SIDE_PX or bottom - top < MIN_SIDE_PX:
        return f"the box is degenerate ({right - left:g}x{bottom - top:g} px)"
    width, height = size
    slack_x, slack_y = EDGE_TOLERANCE * width, EDGE_TOLERANCE * height
    if left < -slack_x or top < -slack_y or right > width + slack_x or bottom > height + slack_y:
        return f"the box lies outside the {width}x{height} image"
    return None


def quoted_text(text: object) -> str:
    """What an answer says it read, as text (a judge may answer null or a number), bounded."""
    return "" if text is None else str(text)[:500]


def recorded(box: object) -> object:
    """A cited box as the payload keeps it: the list when it is a short list of numbers, else a
    short description of what came instead."""
    if isinstance(box, (list, tuple)) and len(box) <= 4 and all(isinstance(v, (int, float)) for v in box):
        return list(box)
    return None if box is None else repr(box)[:100]


def as_box(box: object) -> tuple[float, float, float, float]:
    left, top, right, bottom = (float(v) for v in box)  # type: ignore[union-attr]
    return left, top, right, bottom


def shown_near(box: tuple[float, float, float, float], wanted: str, spots: Iterable[Spot],
               size: tuple[int, int]) -> bool:
    """Whether the rendering shows `wanted` (folded substring) at or near `box`."""
    needle = fold(wanted)
    if not needle:
        return True
    return any(cites(box, spot, size) for spot in tightest([spot for spot in spots if needle in fold(spot.text)]))


def cites(box: tuple[float, float, float, float], spot: Spot, size: tuple[int, int]) -> bool:
    """Whether `box` points at `spot`: at or near it, and not so much larger that it points at
    everything around it too."""
    margin = max(NEAR_MIN_PX, NEAR_SHARE * size[0])
    area = (box[2] - box[0]) * (box[3] - box[1])
    allowed = max(LOOSE_SHARE * size[0] * size[1], LOOSE_FACTOR * spot.area)
    return spot.near(box, margin) and area <= allowed


def tightest(spots: list[Spot]) -> list[Spot]:
    """The places among `spots` that hold no other: a section (or the body) that shows some words
    somewhere inside it is not where they are, or any box on the page would cite them."""
    return [a for a in spots if not any(b is not a and b.within(a) for b in spots)]


def check(box: object, size: tuple[int, int], spots: list[Spot], texts: Iterable[str] = ()) -> str | None:
    """Why the citation fails (None when it counts): `box` must be a region of the image and
    every one of `texts` (what the answer says it read, what the question names) shown near it."""
    problem = box_problem(box, size)
    if problem:
        return problem
    region = as_box(box)
    for text in texts:
        text = quoted_text(text)
        if text and not shown_near(region, text, spots, size):
            return f"the image shows no {text[:80]!r} in or near the cited box"
    return None


def rendering_spots(rendering: Rendering, size: tuple[int, int]) -> list[Spot]:
    """The rendering's shown elements with text, in pixels of an image of `size` cut from the
    top of its full-page capture. An element's text includes its descendants' (a card says what
    its pieces say), so a box around a whole card cites the words inside it."""
    scale = size[0] / max(1.0, float(rendering.viewport[0]))
    elements = rendering.elements
    children: list[list[int]] = [[] for _ in elements]
    for i, el in enumerate(elements):
        if 0 <= el.parent < i:
            children[el.parent].append(i)
    texts = [""] * len(elements)
    for i in range(len(elements) - 1, -1, -1):  # children come after their parents
        parts = [elements[i].text, *(texts[c] for c in children[i])]
        texts[i] = " ".join(p for p in parts if p)[:2000]
    spots = []
    for el, text in zip(elements, texts):
        if not text:
            continue
        top = el.y * scale
        if top >= size[1]:
            continue
        spots.append(Spot(el.x * scale, top, (el.x + el.w) * scale, (el.y + el.h) * scale, text))
    return spots


def image_size(image: bytes) -> tuple[int, int]:
    import io

    from PIL import Image

    with Image.open(io.BytesIO(image)) as picture:
        return picture.size
