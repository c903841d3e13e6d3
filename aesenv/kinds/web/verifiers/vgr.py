"""VGR: typed yes/no predicates bound to the design graph, and the channels `vgr` and
`design_graph`.

A task's predicates are its own (`Task.design`) plus those its requirements imply (each required
chart and table is there and complete; whether a required string is shown is the `text`
channel's question) plus, when it has a reference (a page, or a picture whose text OCR reads),
the reading order of the required strings in that reference, asked through one fixed question
template: the reference reaches the predicates only as cues, and every predicate is answered
from the candidate's rendering alone (AesCode). Target nodes are bound to the candidate's parsed
graph by what they show. `s_vgr` is the share of predicates passed. `VgrOptions` holds our two
variants (text-presence predicates, and a judge shown the reference image), both off by default.

With a VLM judge every predicate is asked in one call over the rendering; a "yes" must cite the
region it read as a box in the image, and counts only when that box is a real region of the image
near where the rendering shows every part the statement names (bound in the graph) and any words
the answer says it read there (`aesenv.kinds.web.verifiers.citation`); a miscited "yes" fails its predicate.
The graph's own answers are kept beside the VLM's, and the prompt carries the artifact-text
guard. Offline, the predicates with a `test` are answered from the graph and the others are
masked, and the payload says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from aesenv.channels.base import ChannelContext, ChannelResult, ChannelStatus, Evidence, Need
from aesenv.llm.client import ChatClient, image_part
from aesenv.render.references import decode_reference
from aesenv.quoting import GUARD
from aesenv.registry import Registry
from aesenv.render.models import Rendering
from aesenv.tasks.design import CANVAS, DesignTarget, Predicate, PredicateKind, PredicateTest, TargetNode
from aesenv.tasks.model import ChartData, TableData, Task, TextExact
from aesenv.kinds.web.verifiers import citation
from aesenv.kinds.web.verifiers.channels import VerifierChannel, requirements_of
from aesenv.kinds.web.verifiers.checklist import MAX_PAGE_HEIGHT
from aesenv.kinds.web.verifiers.citation import image_size
from aesenv.kinds.web.verifiers.graph import ALIGN_PX, LABEL_GAP_PX, Box, DesignGraph, design_graph_of, parse_design_graph, \
    reading_order
from aesenv.kinds.web.verifiers.ocr import OcrUnavailable, read_blocks
from aesenv.kinds.web.verifiers.reference import ReferenceChannel

ALIGN_TOLERANCE_PX = 2 * ALIGN_PX  # relations read from a rendering allow sub-pixel layout noise
_TEXTUAL = {"heading", "text", "badge", "link", "button"}
_COMPATIBLE = {"text": _TEXTUAL, "heading": {"heading", "text"}, "badge": {"badge", "text"},
               "button": {"button", "link"}, "link": {"link", "button", "text"}, "image": {"image", "icon"},
               "icon": {"icon", "image"}, "card": {"card", "panel"}, "panel": {"panel", "card", "region"}}


@dataclass(frozen=True)
class Bound:
    """A target node found in the candidate graph: a node, or one member of a group."""

    node_id: str
    box: Box
    text: str
    font_size: float


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def bind(graph: DesignGraph, target: TargetNode, texts: dict[str, str] | None = None) -> list[Bound]:
    """Where `target` is in the candidate graph (every match, best first; empty when absent).
    `texts`: the graph's `full_texts()`, when the caller binds several targets."""
    texts = texts if texts is not None else graph.full_texts()
    wanted = _COMPATIBLE.get(target.type, {target.type})
    found: list[tuple[tuple, Bound]] = []
    for node in graph.nodes:
        if target.type == "chart" and node.type == "chart":
            categories = {_norm(str(c)) for c in node.data.get("categories") or []}
            labels = {_norm(label) for label in target.labels}
            if labels and labels <= categories:
                found.append(((0, 0), Bound(node.id, node.box, texts[node.id], node.font_size)))
            continue
        if target.type == "table" and node.type == "table":
            header = {_norm(str(c)) for c in node.data.get("header") or []}
            if {_norm(h) for h in target.header} <= header:
                found.append(((0, 0), Bound(node.id, node.box, texts[node.id], node.font_size)))
            continue
        if not target.text:
            continue
        needle = _norm(target.text)
        candidates = [(node.box, texts[node.id], None)] if node.type in wanted else []
        if node.type == "group" and node.of in wanted:
            candidates += [(m.box, m.text, i) for i, m in enumerate(node.members)]
        for box, text, member in candidates:
            hay = _norm(text) if node.type not in ("image", "icon") else _norm(f"{text} {node.name}")
            if needle in hay:
                exact = hay == needle
                found.append(((0 if exact else 1, box.w * box.h),
                              Bound(node.id if member is None else f"{node.id}[{member}]", box, text, node.font_size)))
    return [b for _, b in sorted(found, key=lambda pair: pair[0])]


def bind_all(graph: DesignGraph, target: DesignTarget) -> dict[str, list[Bound]]:
    texts = graph.full_texts()
    return {node.id: bind(graph, node, texts) for node in target.nodes}


# --- the graph's answers -------------------------------------------------------------------------

Answer = Literal["yes", "no"]
GraphTest = Callable[[DesignGraph, list[list[Bound]], PredicateTest], bool]
TESTS: Registry[GraphTest] = Registry("predicate test")


def _first(bound: list[list[Bound]]) -> list[Bound]:
    return [matches[0] for matches in bound if matches]


@TESTS.register("present")
def _present(graph, bound, test) -> bool:
    return all(bound)


@TESTS.register("complete")
def _complete(graph, bound, test) -> bool:
    """A bound chart shows every target category, a table every target header cell (binding
    already asks that), and a group has at least `n` members."""
    if not all(bound):
        return False
    if test.n is not None:
        return all(_members(graph, m[0]) >= test.n for m in bound)
    return True


def _members(graph: DesignGraph, bound: Bound) -> int:
    node = graph.node(bound.node_id.split("[")[0])
    return node.count if node is not None else 0


@TESTS.register("most_prominent")
def _most_prominent(graph, bound, test) -> bool:
    """Its text is the largest on the canvas."""
    mine = _first(bound)
    if len(mine) != len(bound):
        return False
    largest = max((n.font_size for n in graph.nodes if n.type in _TEXTUAL or n.type == "group"), default=0.0)
    return all(b.font_size >= largest - 0.5 for b in mine)


@TESTS.register("before")
def _before(graph, bound, test) -> bool:
    """Each bound node comes before the next in reading order (above it, or left of it in its row)."""
    mine = _first(bound)
    if len(mine) != len(bound) or len(mine) < 2:
        return False
    return all(_reads_before(a.box, b.box) for a, b in zip(mine, mine[1:]))


def _reads_before(a: Box, b: Box) -> bool:
    if a.bottom <= b.y + ALIGN_TOLERANCE_PX:
        return True
    same_row = a.y < b.bottom and b.y < a.bottom
    return same_row and a.x + ALIGN_TOLERANCE_PX < b.x


@TESTS.register("aligned")
def _aligned(graph, bound, test) -> bool:
    """All bound boxes (every member of a bound group) share `side` within the tolerance."""
    boxes = [b.box for matches in bound for b in _expand(graph, matches)]
    if not all(bound) or len(boxes) < 2 or test.side is None:
        return False
    values = [box.side(test.side) for box in boxes]
    return max(values) - min(values) <= ALIGN_TOLERANCE_PX


def _expand(graph: DesignGraph, matches: list[Bound]) -> list[Bound]:
    """A bound group stands for its members."""
    if not matches:
        return []
    node = graph.node(matches[0].node_id)
    if node is not None and node.type == "group":
        return [Bound(f"{node.id}[{i}]", m.box, m.text, node.font_size) for i, m in enumerate(node.members)]
    return matches[:1]


@TESTS.register("labels")
def _labels(graph, bound, test) -> bool:
    """The first bound node titles the second: right above it and overlapping it horizontally."""
    mine = _first(bound)
    if len(mine) != 2 or len(bound) != 2:
        return False
    title, subject = mine[0].box, mine[1].box
    return (0 <= subject.y - title.bottom <= LABEL_GAP_PX and title.x < subject.right and subject.x < title.right)


@TESTS.register("last")
def _last(graph, bound, test) -> bool:
    """It closes the canvas: no text starts below it."""
    mine = _first(bound)
    if len(mine) != 1 or len(bound) != 1:
        return False
    texts = [n.box for n in graph.nodes if n.type in _TEXTUAL]
    return all(box.y <= mine[0].box.y + ALIGN_TOLERANCE_PX for box in texts)


def graph_answer(graph: DesignGraph, bindings: dict[str, list[Bound]], predicate: Predicate) -> Answer | None:
    """The graph's answer to `predicate`, or None when only a VLM can answer it."""
    if predicate.test is None:
        return None
    bound = [bindings.get(node_id, []) for node_id in predicate.binds if node_id != CANVAS]
    return "yes" if TESTS[predicate.test.op](graph, bound, predicate.test) else "no"


# --- the target --------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return f"\u201c{text}\u201d"


class VgrOptions(BaseModel):
    """`PipelineConfig.channel_options["vgr"]`. AesCode answers every predicate from the candidate
    alone, lets the reference in only through fixed questions (the reading order of the required
    strings there), and leaves whether a string is shown to the `text` channel. Both switches are
    ours and off in the AesCode config."""

    model_config = ConfigDict(extra="forbid")
    text_presence: bool = False  # ask "is the text X shown?" for each required string too
    show_reference: bool = False  # show the judge a reference image, asking if each string sits where it does there


def implied_target(task: Task, reference: Rendering | list | None = None,
                   options: VgrOptions | None = None) -> DesignTarget:
    """The task's own design target plus what its requirements imply (each required chart and
    table there and complete) and, from its reference (a rendered reference page, or the text
    blocks OCR read from a reference image), the reading order of the required strings there
    (one fixed template). `options` adds our variants (`VgrOptions`)."""
    options = options or VgrOptions()
    own = task.design or DesignTarget()
    nodes, predicates = list(own.nodes), list(own.predicates)
    texts = requirements_of(task, TextExact)
    for i, req in enumerate(texts, start=1):
        nodes.append(TargetNode(id=f"req-text-{i}", type="text", text=req.text))
        if options.text_presence:
            predicates.append(Predicate(id=f"req-text-{i}", kind=PredicateKind.STRUCTURE, binds=(f"req-text-{i}",),
                                        question=f"Is the text {_quote(req.text)} shown?",
                                        test=PredicateTest(op="present")))
    for i, chart in enumerate(requirements_of(task, ChartData), start=1):
        node = TargetNode(id=f"req-chart-{i}", type="chart", labels=tuple(chart.labels))
        nodes.append(node)
        predicates += [
            Predicate(id=f"req-chart-{i}", kind=PredicateKind.STRUCTURE, binds=(node.id,), test=PredicateTest(op="present"),
                      question=f"Is there a {chart.chart} chart with the categories {', '.join(chart.labels)}?"),
            Predicate(id=f"req-chart-{i}-legible", kind=PredicateKind.ATTRIBUTE, binds=(node.id,),
                      question=f"Are the category labels of the {chart.chart} chart readable, none cut off or overlapping?")]
    for i, table in enumerate(requirements_of(task, TableData), start=1):
        node = TargetNode(id=f"req-table-{i}", type="table", header=tuple(table.header))
        nodes.append(node)
        predicates.append(Predicate(id=f"req-table-{i}", kind=PredicateKind.COMPLETENESS, binds=(node.id,),
                                    test=PredicateTest(op="complete"),
                                    question=f"Is there a table with the columns {', '.join(table.header)}?"))
    if task.canvas is not None:
        predicates.append(Predicate(id="req-canvas", kind=PredicateKind.GLOBAL, binds=(CANVAS,),
                                    question=f"Is the design composed for its {task.canvas.width}x{task.canvas.height} "
                                             "canvas, with even margins and nothing cut off at the edges?"))
    required = [n for n in nodes if n.id.startswith("req-text-")]
    if isinstance(reference, Rendering) and len(texts) >= 2:
        predicates += _reference_order(reference, task, required)
    elif isinstance(reference, list) and len(texts) >= 2:
        predicates += _order_predicates(_placed_blocks(reference, required))
    if options.show_reference and task.reference_image and not task.reference_html:
        predicates += [Predicate(id=f"ref-place-{n.id}", kind=PredicateKind.RELATION, binds=(n.id,),
                                 question=f"Is {_quote(n.text or '')} in the same part of the canvas as in the "
                                          "reference image?") for n in required]
    return DesignTarget(nodes=tuple(nodes), edges=own.edges, predicates=tuple(predicates))


def _placed_blocks(blocks: list, text_nodes: list[TargetNode]) -> list[tuple[Box, TargetNode]]:
    """Where each required string is in a reference image's OCR blocks (the tightest block whose
    text holds it), top to bottom."""
    placed = []
    for node in text_nodes:
        needle = _norm(node.text or "")
        hits = [b for b in blocks if needle and needle in _norm(b.text)]
        if hits:
            b = min(hits, key=lambda b: b.w * b.h)
            placed.append((Box(x=b.x, y=b.y, w=b.w, h=b.h), node))
    return sorted(placed, key=lambda pair: (pair[0].y, pair[0].x))


def _order_predicates(placed: list[tuple[Box, TargetNode]]) -> list[Predicate]:
    """Template: "Is A above B?" for each pair of required strings that follow each other down
    the reference (same-row pairs say nothing about order)."""
    out = []
    for (a_box, a), (b_box, b) in zip(placed, placed[1:]):
        if a_box.bottom <= b_box.y:
            out.append(Predicate(id=f"ref-order-{a.id}-{b.id}", kind=PredicateKind.RELATION, binds=(a.id, b.id),
                                 test=PredicateTest(op="before"),
                                 question=f"Is {_quote(a.text or '')} placed above {_quote(b.text or '')}?"))
    return out


def _reference_order(reference: Rendering, task: Task, text_nodes: list[TargetNode]) -> list[Predicate]:
    """The reading-order template over a rendered reference page's design graph."""
    canvas = (task.canvas.width, task.canvas.height) if task.canvas else None
    ref_graph = parse_design_graph(reference, canvas=canvas)
    texts = ref_graph.full_texts()
    placed = [(bind(ref_graph, n, texts), n) for n in text_nodes]
    return _order_predicates(sorted([(b[0].box, n) for b, n in placed if b], key=lambda pair: (pair[0].y, pair[0].x)))


# --- the VLM's answers -------------------------------------------------------------------------

SYSTEM_PROMPT = """You check a screenshot of a rendered design against a list of yes/no statements
about its parts and how they relate. Judge only what the image shows. For every statement give
"yes" or "no" (or "cannot_tell" when the image does not let you decide). With a "yes", cite where
you saw it: "box" is [left, top, right, bottom] in pixels of the design's image (its size is given
with the statements), around the parts the statement is about, and "text" the words you read
there when words decide it (else empty); a "yes" without a box that holds counts as "no".
Reply with one JSON object:
{"answers": [{"id": "<statement id>", "answer": "yes" | "no" | "cannot_tell", \
"box": [<left>, <top>, <right>, <bottom>], "text": "<words read in the box, or empty>"}]}

""" + GUARD


class VgrAnswer(BaseModel):
    id: str
    answer: Literal["yes", "no", "cannot_tell"]
    # Any shape: `aesenv.kinds.web.verifiers.citation` checks them, so a malformed citation fails its "yes"
    # rather than the whole reply (a reply that fails the schema is retried, then infra).
    box: Any = None
    text: Any = ""


class VgrAnswers(BaseModel):
    answers: list[VgrAnswer]


def _about(predicate: Predicate, target: DesignTarget) -> str:
    parts = []
    for node_id in predicate.binds:
        if node_id == CANVAS:
            parts.append("the whole canvas")
            continue
        node = target.node(node_id)
        shown = node.text or ", ".join(node.labels or node.header)
        parts.append(f"the {node.type} {_quote(shown)}")
    return "; ".join(parts)


def vlm_messages(target: DesignTarget, image: bytes, reference: bytes | None = None) -> list[dict]:
    """One request: every statement, the design's screenshot, and the reference image (when the
    task has one) before it, said to be the reference."""
    lines = [f"{p.id}: {p.question} [about: {_about(p, target)}]" for p in target.predicates]
    width, height = image_size(image)
    text = (f"The design's image is {width}x{height} pixels.\n"
            "Statements (answer each by its id):\n" + "\n".join(lines))
    images = [image_part(image, "image/jpeg")]
    if reference is not None:
        text += "\nThe first image is the reference design; the second is the design to check."
        images.insert(0, image_part(reference))
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": [{"type": "text", "text": text}, *images]}]


def cited_problem(answer: VgrAnswer, predicate: Predicate, bindings: dict[str, list[Bound]],
                  spots: list[citation.Spot], size: tuple[int, int], scale: float) -> str | None:
    """Why a "yes" to `predicate` is not grounded (None when it is): its box must be a region of
    the image, any words it says it read must be shown there, and every part the statement names
    must be in the rendering (bound in the graph), one of them at or near the box."""
    problem = citation.check(answer.box, size, spots, [answer.text])
    if problem:
        return problem
    named = [node_id for node_id in predicate.binds if node_id != CANVAS]
    if not named:
        return None
    missing = [node_id for node_id in named if not bindings.get(node_id)]
    if missing:
        return f"the rendering does not show {', '.join(missing)}"
    box = citation.as_box(answer.box)
    places = [citation.Spot(b.box.x * scale, b.box.y * scale, b.box.right * scale, b.box.bottom * scale, b.text)
              for node_id in named for b in bindings[node_id]]
    best = [bindings[node_id][0].box for node_id in named]  # a relation is cited by a box around all its parts
    span = citation.Spot(min(b.x for b in best) * scale, min(b.y for b in best) * scale,
                         max(b.right for b in best) * scale, max(b.bottom for b in best) * scale, "")
    if not any(citation.cites(box, place, size) for place in [*citation.tightest(places), span]):
        return "the cited box is not where the rendering shows what the statement is about"
    return None


# --- channels ----------------------------------------------------------------------------------


class VgrChannel(ReferenceChannel):
    """s_vgr: the share of the task's predicates the candidate passes (see the module)."""

    name = "vgr"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    Options = VgrOptions

    def __init__(self, renderer, judge: object, options: dict | None = None) -> None:
        super().__init__(renderer, options)
        self.client: ChatClient | None = getattr(judge, "client", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "VgrChannel":
        return cls(context.renderer, context.judge, context.options)

    def subject(self, task: Task) -> DesignTarget | None:
        target = implied_target(task, options=self.options)
        ordered = (task.reference_html or task.reference_image) and len(requirements_of(task, TextExact)) >= 2
        return target if target.predicates or ordered else None

    async def prepare(self, task: Task) -> None:
        if task.reference_html:
            await super().prepare(task)

    async def check(self, evidence: Evidence, subject: DesignTarget) -> ChannelResult:
        task = evidence.task
        reference: Rendering | list | None = None
        if task.reference_html:
            reference = self.reference(task)
            if isinstance(reference, ChannelResult):
                return reference
        elif task.reference_image and len(requirements_of(task, TextExact)) >= 2:
            try:
                reference, _ = await read_blocks(decode_reference(task.reference_image))
            except OcrUnavailable as exc:
                return ChannelResult.infra_error(str(exc))
        target = implied_target(task, reference, self.options)
        if not target.predicates:
            return ChannelResult.not_applicable("the reference places none of the required strings to ask about")
        graph = await design_graph_of(evidence)
        bindings = bind_all(graph, target)
        from_graph = {p.id: graph_answer(graph, bindings, p) for p in target.predicates}
        if self.client is not None:
            return await self._ask_vlm(evidence, target, from_graph, bindings)
        rows = [{"id": p.id, "kind": p.kind.value, "question": p.question, "passes": p.passes,
                 "answer": from_graph[p.id], "answered_by": "graph" if from_graph[p.id] else "masked",
                 "passed": from_graph[p.id] == p.passes if from_graph[p.id] else None}
                for p in target.predicates]
        decided = [r for r in rows if r["passed"] is not None]
        payload = {"predicates": rows, "decided": len(decided), "masked": len(rows) - len(decided),
                   "offline_share": round(len(decided) / len(rows), 6), "bindings": _bindings(bindings)}
        if not decided:
            return ChannelResult.not_applicable("none of the task's predicates can be answered without a VLM")
        return _result([r["passed"] for r in decided], payload)

    async def _ask_vlm(self, evidence: Evidence, target: DesignTarget, from_graph: dict[str, Answer | None],
                       bindings: dict[str, list[Bound]]) -> ChannelResult:
        rendering = evidence.rendering
        if not rendering.has_screenshot:
            return self.failed("nothing rendered to look at")
        height = evidence.task.canvas.height if evidence.task.canvas else MAX_PAGE_HEIGHT
        image = rendering.image("jpeg", max_height=height)
        try:
            # AesCode's judge sees the candidate only; the reference image is our variant (`show_reference`).
            shown = self.options.show_reference and evidence.task.reference_image
            reference = decode_reference(evidence.task.reference_image) if shown else None
            reply = await self.client.complete_json(vlm_messages(target, image, reference), VgrAnswers)
        except Exception as exc:  # noqa: BLE001 - the judge failing is our failure, masked
            return ChannelResult.infra_error(f"vgr judge failed: {type(exc).__name__}: {exc}")
        size = image_size(image)
        spots = citation.rendering_spots(rendering, size)
        scale = size[0] / max(1.0, float(rendering.viewport[0]))
        by_id = {a.id: a for a in reply.value.answers}
        rows = []
        for p in target.predicates:
            answer = by_id.get(p.id)
            given = answer.answer if answer else "missing"
            row = {"id": p.id, "kind": p.kind.value, "question": p.question, "passes": p.passes,
                   "answer": given, "answered_by": "vlm", "graph_answer": from_graph[p.id]}
            problem = None
            if answer is not None and given == "yes":
                row.update(box=citation.recorded(answer.box), text=citation.quoted_text(answer.text))
                problem = cited_problem(answer, p, bindings, spots, size, scale)
                if problem:
                    row["citation"] = problem
            row["passed"] = given == p.passes and problem is None
            rows.append(row)
        payload = {"predicates": rows, "decided": len(rows), "masked": 0, "calls": 1,
                   "offline_share": round(sum(v is not None for v in from_graph.values()) / len(rows), 6),
                   "model": self.client.config.model, "cached": reply.cached}
        return _result([r["passed"] for r in rows], payload)


def _bindings(bindings: dict[str, list[Bound]]) -> dict[str, str | None]:
    return {node_id: matches[0].node_id if matches else None for node_id, matches in bindings.items()}


def _result(passed: list[bool], payload: dict) -> ChannelResult:
    score = round(sum(passed) / len(passed), 6)
    return ChannelResult(status=ChannelStatus.OK if all(passed) else ChannelStatus.FAILED, score=score, raw=score,
                         payload=payload)


class DesignGraphChannel(VerifierChannel):
    """Evidence: the parsed design graph in the payload. Its score is the share of the task's
    target nodes found in it (forbidden ones aside) (the graph's coverage of the target, not a verdict on the design):
    it never fails, and aggregates leave it out."""

    name = "design_graph"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    def subject(self, task: Task) -> bool:
        return True

    async def check(self, evidence: Evidence, subject: bool) -> ChannelResult:
        graph = await design_graph_of(evidence)
        target = implied_target(evidence.task)
        bindings = bind_all(graph, target)
        unwanted = ({n for p in target.predicates if p.passes == "no" for n in p.binds}
                    - {n for p in target.predicates if p.passes == "yes" for n in p.binds})
        wanted = [found for node_id, found in bindings.items() if node_id not in unwanted]
        coverage = round(sum(bool(b) for b in wanted) / len(wanted), 6) if wanted else 1.0
        return ChannelResult(status=ChannelStatus.OK, score=coverage, raw=coverage,
                             payload={"summary": graph.summary(), "graph": graph.model_dump(mode="json"),
                                      "bindings": _bindings(bindings),
                                      "reading_order": [n.id for n in reading_order(graph.nodes)]})
