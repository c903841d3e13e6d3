"""The page's shown text and elements, assembled from the counterfactual's verdicts.

The snapshot (`snapshot.js`, through the first filter `seen.js`) lists the text that may be
seen, as runs, and the elements that may be; the counterfactual (`counterfactual.py`) takes each
away from the captured image and keeps only what changed its pixels, legibly. What fails is not
page text for anyone downstream (the judges, the verifiers, the census, Φ): the visible text,
each element's text and the headings are all assembled here, from the characters that showed.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 20000        # characters of visible text kept
MAX_ELEMENT_TEXT = 300  # characters of an element's own text kept
MAX_RECTS = 200         # line boxes kept per run


@dataclass
class Run:
    element: int
    text: str  # as written (an element's own text keeps it so)
    box: tuple[float, float, float, float]  # x, y, w, h in page pixels
    gap: bool
    case: str = ""  # the text-transform it shows in: uppercase, lowercase, capitalize
    item: int = -1  # what takes its glyphs away (`counterfactual.js`)
    node: int = -1  # its text node, for per-character boxes
    start: int = 0  # where its characters start in that node (UTF-16 units)
    rects: list[tuple[float, float, float, float]] = field(default_factory=list)  # line boxes: x0, y0, x1, y1
    atomic: bool = False  # measured whole (a select's option)

    @property
    def on_screen(self) -> str:
        """The text as the screen shows it (what a visitor reads, what `text_exact` matches)."""
        if self.case == "uppercase":
            return self.text.upper()
        if self.case == "lowercase":
            return self.text.lower()
        if self.case == "capitalize":
            return re.sub(r"(^|\s)(\S)", lambda m: m.group(1) + m.group(2).upper(), self.text)
        return self.text

    def part(self, start: int, end: int) -> "Run":
        """The run's characters [start, end): a stretch of it that showed."""
        return dataclasses.replace(self, text=self.text[start:end], gap=self.gap or start > 0,
                                   start=self.start + utf16_length(self.text[:start]))


def utf16_length(text: str) -> int:
    """Length in UTF-16 units (how the page counts characters)."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


@dataclass
class ShownText:
    """The page's shown text, assembled from the runs the pixels confirmed."""

    visible_text: str = ""
    element_text: dict[int, str] = field(default_factory=dict)
    headings: list[dict[str, Any]] = field(default_factory=list)
    runs: int = 0


def _finite(values: list[Any]) -> tuple[float, ...] | None:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        return None
    return out if all(math.isfinite(v) for v in out) else None


def parse_runs(raw: Any) -> list[Run]:
    """The snapshot's runs, each checked for shape; malformed ones are left out."""
    runs = []
    for item in raw if isinstance(raw, list) else []:
        if not (isinstance(item, list) and len(item) == 13 and isinstance(item[1], str)):
            continue
        box = _finite(item[2:6])
        numbers = _finite([item[0], item[8], item[9], item[10]])
        if box is None or numbers is None:
            continue
        rects = []
        for r in item[11] if isinstance(item[11], list) else []:
            one = _finite(r) if isinstance(r, list) and len(r) == 4 else None
            if one is not None and one[2] > 0 and one[3] > 0:
                rects.append((one[0], one[1], one[0] + one[2], one[1] + one[3]))
        case = item[7] if item[7] in ("uppercase", "lowercase", "capitalize") else ""
        element, it, node, start = (int(v) for v in numbers)
        runs.append(Run(element, item[1][:2000], box, bool(item[6]), case, it, node, max(0, start),  # type: ignore[arg-type]
                        rects[:MAX_RECTS], bool(item[12])))
    return runs


def painted(elements: list[Any], runs: list[Run], pictures: dict[int, bool]) -> tuple[list[Any], list[int]]:
    """The elements a person sees: those that paint by themselves (a visible background, border
    or shadow, unless the counterfactual took it away and found it unshown; an image, canvas or
    field that the counterfactual found shown: `pictures`, verdicts by item),
    hold shown text, or contain an element that does; a bare wrapper around nothing visible (a
    `<nav>` of transparent links) is not on the page. Returns them with `parent` renumbered to the
    nearest kept ancestor, and per old index its new one (-1 for those left out: their runs go to
    the nearest kept ancestor). `elements` are in flat-tree order, parents before children."""
    n = len(elements)
    content = [False] * n
    for run in runs:
        if 0 <= run.element < n:
            content[run.element] = True
    for i, e in enumerate(elements):
        measured = pictures.get(e.item) if e.item >= 0 else None  # the counterfactual's verdict, if it took it away
        if (e.paints == "style" and measured is not False) or (e.paints == "replaced" and measured):
            content[i] = True
    for i in range(n - 1, -1, -1):  # a child comes after its parent: fold content upwards
        parent = elements[i].parent
        if content[i] and 0 <= parent < i:
            content[parent] = True
    index = [-1] * n
    kept: list[Any] = []
    for i, e in enumerate(elements):
        if content[i]:
            index[i] = len(kept)
            kept.append(e)
    for i, e in enumerate(elements):
        if content[i]:
            parent = e.parent
            while 0 <= parent < i and index[parent] < 0:
                parent = elements[parent].parent
            e.parent = index[parent] if 0 <= parent < i else -1
    nearest = list(index)
    for i, e in enumerate(elements):
        if nearest[i] < 0 and 0 <= e.parent < i:
            nearest[i] = nearest[e.parent]
    return kept, nearest


def assemble(runs: list[Run], tags: list[str], parents: list[int]) -> ShownText:
    """The shown text from confirmed runs: the page's visible text in document order, each
    element's own text, and the headings."""
    out = ShownText(runs=len(runs))
    heading_of: dict[int, int] = {}

    def heading(index: int) -> int:
        if index in heading_of:
            return heading_of[index]
        found, node, seen = -1, index, 0
        while 0 <= node < len(tags) and seen < 10_000:
            if tags[node] in ("h1", "h2", "h3", "h4", "h5", "h6"):
                found = node
                break
            node, seen = parents[node], seen + 1
        heading_of[index] = found
        return found

    text: list[str] = []
    size = 0
    heading_text: dict[int, list[str]] = {}
    for run in runs:
        piece = (" " if run.gap and text else "") + run.on_screen
        if size < MAX_TEXT:
            text.append(piece)
            size += len(piece)
        if 0 <= run.element < len(tags):
            own = out.element_text.get(run.element, "")
            if len(own) < MAX_ELEMENT_TEXT:
                out.element_text[run.element] = own + (" " if run.gap and own else "") + run.text
            h = heading(run.element)
            if h >= 0:
                heading_text.setdefault(h, []).append((" " if run.gap else "") + run.on_screen)
    out.visible_text = " ".join("".join(text).split())[:MAX_TEXT]
    out.element_text = {i: " ".join(t.split())[:MAX_ELEMENT_TEXT] for i, t in out.element_text.items()}
    out.headings = [{"level": int(tags[i][1]), "text": " ".join("".join(parts).split())[:120]}
                    for i, parts in sorted(heading_text.items())][:50]
    return out
