"""Channels that compare a page with a reference: `layout` (text-block positions, read with OCR
from both images as AesCode reads them) and `whitespace` (where the canvas is occupied, at a
coarse and a fine grid; against a target band when the task has no reference). A reference is a
picture (`Task.reference_image`) or a page (`Task.reference_html`) rendered at the canvas.

The reference page (`Task.reference_html`) is rendered once per renderer, at the task's canvas,
in `prepare` — before the scored page takes a render slot, so a full renderer cannot deadlock.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from difflib import SequenceMatcher

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict

from aesenv.render import Renderer, Rendering
from aesenv.render.models import DomElement, RenderStatus
from aesenv.channels.base import ChannelContext, ChannelResult, Evidence
from aesenv.render.references import ReferenceRenderings, decode_reference
from aesenv.tasks.model import Task
from aesenv.kinds.web.verifiers.channels import VerifierChannel
from aesenv.kinds.web.verifiers.checks import Check, normalize_text
from aesenv.kinds.web.verifiers.ocr import OcrUnavailable, TextBlock, crop, read_blocks

# A text block within LAYOUT_TOLERANCE of its reference position (share of the canvas, either
# axis) gets full credit, one displaced by LAYOUT_MAX_SHIFT or more none, linearly in between.
LAYOUT_TOLERANCE = 0.02
LAYOUT_MAX_SHIFT = 0.15
LAYOUT_PASS = 0.75
LAYOUT_SIMILAR_TEXT = 0.6
OCR_WORD_GAP = 0.6  # pieces of one OCR line at most this many text heights apart are one block
_SPACES = re.compile(r"\s+")
# Grids (cells per side) for occupancy; a pixel is "ink" when it differs from the background
# colour by more than INK_DELTA (sum over RGB).
GRIDS = (8, 32)
INK_DELTA = 48
WHITESPACE_PASS = 0.80
# Without a reference: the share of occupied fine cells a composed canvas falls in (an empty
# artboard and one filled edge to edge both fail), and how fast the score falls outside it.
OCCUPANCY_BAND = (0.15, 0.85)
BAND_SOFTNESS = 0.25


def canvas_size(task: Task, rendering: Rendering) -> tuple[int, int]:
    return (task.canvas.width, task.canvas.height) if task.canvas else rendering.viewport


class ReferenceOptions(BaseModel):
    """`PipelineConfig.channel_options["layout"]`: AesCode reads text blocks from both images
    (the reference as a picture, given or rendered, and the candidate's capture) with OCR."""

    model_config = ConfigDict(extra="forbid")
    dom_blocks: bool = False  # ours: a reference page's text blocks from its DOM, not from OCR


class ReferenceChannel(VerifierChannel):
    Options = ReferenceOptions

    def __init__(self, renderer: Renderer, options: dict | None = None) -> None:
        self.renderer = renderer
        self.references = ReferenceRenderings.of(renderer)
        self.options = self.Options(**(options or {}))

    @classmethod
    def from_context(cls, context: ChannelContext) -> "ReferenceChannel":
        return cls(context.renderer, context.options)

    async def prepare(self, task: Task) -> None:
        """Render the task's reference ahead of the page (never raises: a failed reference is
        reported by `score` as our own failure)."""
        try:
            await self.references.prepare(task, self.renderer)
        except Exception:  # noqa: BLE001 - reported per sample as infra_error by `reference()`
            pass

    def reference_png(self, task: Task) -> tuple[bytes, tuple[int, int]] | ChannelResult:
        """The reference as a picture and the size of its canvas: `reference_image` as given,
        else the reference page's capture at the task's canvas."""
        if task.reference_image:
            png = decode_reference(task.reference_image)
            with Image.open(io.BytesIO(png)) as image:
                return png, image.size
        ref = self.reference(task)
        if isinstance(ref, ChannelResult):
            return ref
        width, height = canvas_size(task, ref)
        return crop(ref.full_page_png, width, height), (width, height)

    def reference(self, task: Task) -> Rendering | ChannelResult:
        ref = self.references.get(task)
        if ref is None:
            return ChannelResult.infra_error("the reference page was not rendered")
        if ref.status is not RenderStatus.OK or not ref.has_screenshot:
            return ChannelResult.infra_error(f"the reference page did not render cleanly: {ref.status.value} {ref.error}")
        return ref


def _text_blocks(rendering: Rendering) -> list[DomElement]:
    return [e for e in rendering.elements if normalize_text(e.text)]


def match_blocks(reference: list[DomElement], page: list[DomElement],
                 key: Callable[[str], str] = normalize_text) -> list[tuple[DomElement, DomElement | None]]:
    """Pair each reference text block with a page block: the same text first (in document
    order), then the most similar remaining text (ratio >= LAYOUT_SIMILAR_TEXT). Layout judges
    positions; whether the words are right is the text channel's question, so a reworded
    headline still counts as the headline."""
    unused = list(page)
    pairs: dict[int, DomElement | None] = {}
    for i, block in enumerate(reference):
        text = key(block.text)
        same = next((p for p in unused if key(p.text) == text), None)
        if same is not None:
            unused.remove(same)
        pairs[i] = same
    for i, block in enumerate(reference):
        if pairs[i] is not None or not unused:
            continue
        text = key(block.text)
        ratio, best = max(((SequenceMatcher(None, text, key(p.text)).ratio(), p) for p in unused),
                          key=lambda pair: pair[0])
        if ratio >= LAYOUT_SIMILAR_TEXT:
            unused.remove(best)
            pairs[i] = best
    return [(block, pairs[i]) for i, block in enumerate(reference)]


class LayoutChannel(ReferenceChannel):
    """Each text block of the reference is found in the page by its text, and credited by how
    close its centre is to the reference's, in shares of each image's canvas (full credit near
    it, none past LAYOUT_MAX_SHIFT). As AesCode: the blocks are read with OCR from both images
    (the reference picture and the candidate's capture at the canvas); `dom_blocks` (ours) takes
    a reference page's blocks from both DOMs instead."""

    name = "layout"

    def subject(self, task: Task) -> bool:
        return bool(task.reference_html or task.reference_image)

    async def check(self, evidence: Evidence, subject: bool) -> Check | ChannelResult:
        task, rendering = evidence.task, evidence.rendering
        if self.options.dom_blocks and task.reference_html:
            ref = self.reference(task)
            if isinstance(ref, ChannelResult):
                return ref
            width, height = canvas_size(task, rendering)
            return _layout(_text_blocks(ref), (width, height), _text_blocks(rendering), (width, height), "dom")
        if not rendering.has_screenshot:
            return Check(score=0.0, passed=False, payload={"reason": "the page produced no screenshot"})
        reference = self.reference_png(task)
        if isinstance(reference, ChannelResult):
            return reference
        ref_png, ref_size = reference
        width, height = canvas_size(task, rendering)
        try:
            ref_blocks, _ = await read_blocks(ref_png)
            page_blocks, _ = await read_blocks(crop(rendering.full_page_png, width, height))
        except OcrUnavailable as exc:
            return ChannelResult.infra_error(str(exc))
        return _layout(ocr_lines(ref_blocks), ref_size, ocr_lines(page_blocks), (width, height), "ocr")


def ocr_lines(blocks: list[TextBlock]) -> list[TextBlock]:
    """OCR blocks joined into lines: a detector may cut one line of text in two on one image and
    not on the other (a headline read as "Harbour City" + "Marathon"), so pieces that share a line
    (vertical overlap of at least half the smaller height) and sit a word space apart (a gap of at
    most OCR_WORD_GAP of that height) are one block, on both sides alike. Lines keep the order in
    which the engine read their first piece."""
    order = {id(b): i for i, b in enumerate(blocks)}
    lines: list[TextBlock] = []
    first: list[int] = []  # the engine's index of each line's first piece
    for block in sorted(blocks, key=lambda b: b.x):  # left to right, so a line grows rightwards
        for i, line in enumerate(lines):
            small = min(block.h, line.h)
            overlap = min(block.y + block.h, line.y + line.h) - max(block.y, line.y)
            gap = block.x - (line.x + line.w)
            if small > 0 and overlap >= small / 2 and -small <= gap <= OCR_WORD_GAP * small:
                x0, y0 = min(line.x, block.x), min(line.y, block.y)
                x1, y1 = max(line.x + line.w, block.x + block.w), max(line.y + line.h, block.y + block.h)
                lines[i] = TextBlock(f"{line.text} {block.text}", x0, y0, x1 - x0, y1 - y0)
                first[i] = min(first[i], order[id(block)])
                break
        else:
            lines.append(block)
            first.append(order[id(block)])
    return [line for _, line in sorted(zip(first, lines), key=lambda pair: pair[0])]


def _ocr_text(text: str) -> str:
    """OCR reads word spaces unreliably ("Collect yourmedal"): OCR text is compared without them."""
    return _SPACES.sub("", text)


def _layout(ref_blocks: list, ref_size: tuple[int, int], page_blocks: list, page_size: tuple[int, int],
            method: str) -> Check | ChannelResult:
    pairs = match_blocks([b for b in ref_blocks if normalize_text(b.text)],
                         [b for b in page_blocks if normalize_text(b.text)],
                         key=_ocr_text if method == "ocr" else normalize_text)
    credits, moved, missing = [], [], []
    for block, seen in pairs:
        text = normalize_text(block.text)
        if seen is None:
            credits.append(0.0)
            missing.append(text[:60])
            continue
        dx = abs((seen.x + seen.w / 2) / page_size[0] - (block.x + block.w / 2) / ref_size[0])
        dy = abs((seen.y + seen.h / 2) / page_size[1] - (block.y + block.h / 2) / ref_size[1])
        shift = max(dx, dy)
        credit = min(1.0, max(0.0, (LAYOUT_MAX_SHIFT - shift) / (LAYOUT_MAX_SHIFT - LAYOUT_TOLERANCE)))
        credits.append(credit)
        if credit < 1.0 and len(moved) < 20:
            moved.append({"text": text[:60], "shift": [round(dx, 4), round(dy, 4)]})
    if not credits:
        return ChannelResult.not_applicable("the reference shows no text blocks to compare")
    score = round(sum(credits) / len(credits), 6)
    return Check(score=score, passed=score >= LAYOUT_PASS, payload={
        "method": method, "reference_blocks": len(credits), "page_blocks": len(page_blocks),
        "missing": missing[:20], "moved": moved, "pass_threshold": LAYOUT_PASS})


def occupancy(png: bytes, width: int, height: int, cells: int) -> np.ndarray:
    """Share of "ink" pixels (not the dominant background colour) in each cell of a
    `cells`×`cells` grid over the top-left `width`×`height` of the capture."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.crop((0, 0, min(width, image.width), min(height, image.height)))
    pixels = np.asarray(image, dtype=np.int16)
    flat = pixels.reshape(-1, 3)
    quantized = (flat >> 3).astype(np.int32)
    codes = (quantized[:, 0] << 10) | (quantized[:, 1] << 5) | quantized[:, 2]
    background = flat[np.argmax(codes == np.bincount(codes).argmax())]
    ink = np.abs(pixels - background).sum(axis=2) > INK_DELTA
    rows = np.array_split(np.arange(ink.shape[0]), cells)
    cols = np.array_split(np.arange(ink.shape[1]), cells)
    return np.array([[ink[np.ix_(r, c)].mean() if r.size and c.size else 0.0 for c in cols] for r in rows])


class WhitespaceChannel(ReferenceChannel):
    """Where the canvas carries ink, compared with the reference cell by cell at a coarse and a
    fine grid (score = 1 − mean absolute difference), the reference being a picture (given, or
    the reference page's capture); with no reference, the share of occupied fine cells against
    OCCUPANCY_BAND. Applies to artboard tasks and tasks with a reference."""

    name = "whitespace"

    def subject(self, task: Task) -> bool:
        return bool(task.canvas or task.reference_html or task.reference_image)

    async def check(self, evidence: Evidence, subject: bool) -> Check | ChannelResult:
        rendering = evidence.rendering
        if not rendering.has_screenshot:
            return Check(score=0.0, passed=False, payload={"reason": "the page produced no screenshot"})
        width, height = canvas_size(evidence.task, rendering)
        grids = {n: occupancy(rendering.full_page_png, width, height, n) for n in GRIDS}
        if evidence.task.reference_html or evidence.task.reference_image:
            reference = self.reference_png(evidence.task)
            if isinstance(reference, ChannelResult):
                return reference
            ref_png, (ref_width, ref_height) = reference
            diffs = {n: float(np.abs(grids[n] - occupancy(ref_png, ref_width, ref_height, n)).mean())
                     for n in GRIDS}
            score = round(1.0 - sum(diffs.values()) / len(diffs), 6)
            return Check(score=score, passed=score >= WHITESPACE_PASS, payload={
                "mode": "reference", "mean_abs_difference": {str(n): round(d, 4) for n, d in diffs.items()},
                "pass_threshold": WHITESPACE_PASS})
        fine = grids[max(GRIDS)]
        occupied = {n: round(float((grids[n] > 0.02).mean()), 4) for n in GRIDS}
        share = occupied[max(GRIDS)]
        low, high = OCCUPANCY_BAND
        distance = max(low - share, share - high, 0.0)
        score = round(max(0.0, 1.0 - distance / BAND_SOFTNESS), 6)
        return Check(score=score, passed=distance == 0.0, payload={
            "mode": "band", "occupied_share": {str(n): s for n, s in occupied.items()},
            "ink_share": round(float(fine.mean()), 4), "band": list(OCCUPANCY_BAND)})
