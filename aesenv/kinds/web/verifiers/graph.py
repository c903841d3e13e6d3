"""The design graph Ψ(code, rendering) AesCode reasons over: a canvas root, nodes of a closed
vocabulary (`aesenv.tasks.design`), attributes for content, geometry and appearance, and typed
edges for containment, reading order, alignment, adjacency and semantic connection.

It is parsed deterministically from what the renderer already measured (the DOM snapshot's
visible elements with their boxes and computed styles) plus three reads of the open page: the
live ECharts instances and HTML tables as the `chart` and `table` verifiers read them, and the
names of pictures (alt text, labels). Elements that only wrap others pass through to their
nearest kept ancestor, so markup style does not change the graph; three or more
interchangeable siblings become one `group` node with a count and its members' boxes and text.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import BaseModel, Field

from aesenv.channels.base import Evidence
from aesenv.render.live import LivePage
from aesenv.render.models import DomElement, Rendering
from aesenv.tasks.design import EdgeType, NodeType
from aesenv.kinds.web.verifiers.probes import read_charts, read_tables

MAX_NODES = 400
MAX_TEXT = 200
GROUP_MIN = 3           # interchangeable siblings collapsed into one group
SAME_SIZE = 0.15        # siblings within this share of each other's size are interchangeable
ALIGN_PX = 2.0          # edges this close are aligned
ADJACENT_PX = 16.0      # boxes this close are adjacent
LABEL_GAP_PX = 80.0     # a title this far above a chart, table or picture labels it
ICON_PX = 48.0          # pictures no larger than this on both sides are icons
BADGE_MAX_CHARS = 24
BADGE_MAX_W = 240.0
CARD_MAX_SHARE = 0.15   # boxed containers up to this share of the canvas are cards, larger ones panels

_REGIONS = {"header", "footer", "nav", "main", "section", "aside", "article", "form"}
_PICTURES = {"img", "svg", "picture", "video"}
_INPUTS = {"input", "select", "textarea"}

# The shown pictures' names as a visitor (or a screen reader) gets them; boxes match the
# snapshot's. In our isolated world, through the natives and `N.seen`.
_MEDIA_JS = """(maxItems) => {
  const N = globalThis.__aesenv__, seen = N.seen({});
  return seen.deepAll("img, svg, picture, video, canvas, [role=img]").filter((el) => seen.element(el).shown)
    .slice(0, maxItems).map((el) => { const b = seen.element(el).box;
      const src = N.String(N.attr(el, "src") || "").split(/[?#]/)[0].split("/").pop();
      const titled = N.all(el, "title")[0];
      const name = N.attr(el, "alt") || N.attr(el, "aria-label") || N.attr(el, "title") || (titled ? N.text(titled) : "") || "";
      return { box: [b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0], name: N.String(name).trim().slice(0, 200),
               src: src.startsWith("data:") ? "" : src.slice(0, 200) }; });
}"""


class Box(BaseModel):
    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def side(self, name: str) -> float:
        return {"top": self.y, "bottom": self.bottom, "left": self.x, "right": self.right,
                "center_x": self.x + self.w / 2, "center_y": self.y + self.h / 2}[name]


class Member(BaseModel):
    """One of a group's interchangeable siblings."""

    box: Box
    text: str = ""


class GraphNode(BaseModel):
    id: str
    type: NodeType
    parent: str | None = None
    box: Box
    text: str = Field(default="", description="what it says: own and inline text; a picture's name")
    name: str = Field(default="", description="the element's id and classes, as authored")
    tag: str = ""
    level: int | None = Field(default=None, description="a heading's level")
    font_size: float = 0.0
    font_weight: int = 400
    color: str = ""
    background: str = ""
    count: int = Field(default=1, description="a group's number of members")
    of: NodeType | None = Field(default=None, description="what a group's members are")
    members: list[Member] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict, description="a chart's kind, categories and series; "
                                                                    "a table's header and rows")


class GraphEdge(BaseModel):
    type: EdgeType
    source: str
    target: str
    detail: str = ""


class DesignGraph(BaseModel):
    canvas: dict[str, Any]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool = False
    parse_ms: float = 0.0

    def node(self, node_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def full_texts(self) -> dict[str, str]:
        """Each node's text with its descendants' (a card says what its pieces say)."""
        return _descendant_texts(self.nodes)

    def summary(self) -> dict[str, Any]:
        types: dict[str, int] = {}
        for node in self.nodes:
            types[node.type] = types.get(node.type, 0) + 1
        edges: dict[str, int] = {}
        for edge in self.edges:
            edges[edge.type] = edges.get(edge.type, 0) + 1
        return {"nodes": len(self.nodes), "edges": len(self.edges), "node_types": types, "edge_types": edges,
                "parse_ms": self.parse_ms}


def _box(el: DomElement) -> Box:
    return Box(x=round(el.x, 1), y=round(el.y, 1), w=round(el.w, 1), h=round(el.h, 1))


def _close(a: Box, b: tuple | list, px: float = 2.0) -> bool:
    return all(abs(u - v) <= px for u, v in zip((a.x, a.y, a.w, a.h), b))


def _boxed(el: DomElement, parent: DomElement | None) -> bool:
    own = bool(el.own_background) and (parent is None or el.own_background != parent.background)
    return own or el.border or el.shadow


def _classify(el: DomElement, parent: DomElement | None, canvas_area: float, charts: list[Box]) -> NodeType | None:
    """The node type an element stands for, or None when it only wraps others."""
    tag, box = el.tag, _box(el)
    label = " ".join([el.id, *el.classes]).lower()
    if tag == "table":
        return "table"
    if any(_close(box, (c.x, c.y, c.w, c.h)) for c in charts):
        return "chart"
    if tag in _PICTURES or tag == "canvas" or (el.background_image and not el.text_len and el.w * el.h >= 64):
        return "icon" if (el.w <= ICON_PX and el.h <= ICON_PX) else "image"
    if "icon" in label and el.w <= ICON_PX and el.h <= ICON_PX:
        return "icon"
    if tag in _INPUTS:
        return "input"
    if tag == "button":
        return "button"
    if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
        return "heading"
    if tag == "a":
        return "button" if el.own_background else "link"
    if el.text_len:
        if (el.own_background and el.text_len <= BADGE_MAX_CHARS and el.w <= BADGE_MAX_W
                and (el.radius > 0 or any(p > 0 for p in el.padding))):
            return "badge"
        return "text"
    if tag in ("ul", "ol"):
        return "list"
    if _boxed(el, parent):
        return "card" if el.w * el.h <= CARD_MAX_SHARE * canvas_area else "panel"
    if tag in _REGIONS:
        return "region"
    return None


# Leaves that own everything inside them, and leaves whose inline pieces are part of their text.
_OWNS_INSIDE = {"chart", "table", "image", "icon", "button", "input"}
_INLINE_HOSTS = {"heading", "text", "badge", "link"}


def parse_design_graph(rendering: Rendering, *, charts: list[dict] | None = None,
                       tables: list[list[list[str]]] | None = None, media: list[dict] | None = None,
                       canvas: tuple[int, int] | None = None) -> DesignGraph:
    """Ψ from a rendering's snapshot and the page reads (each optional: without them charts
    are pictures and tables carry no cells)."""
    started = time.perf_counter()
    elements = rendering.elements
    width, height = canvas or rendering.viewport
    chart_boxes = [Box(x=c["box"][0], y=c["box"][1], w=c["box"][2], h=c["box"][3]) for c in charts or []]
    root_el = elements[0] if elements else None
    canvas_attrs = {"width": width, "height": height, "background": root_el.background if root_el else "",
                    "title": rendering.metrics.title, "lang": rendering.metrics.lang,
                    "doc_width": rendering.metrics.doc_width, "doc_height": rendering.metrics.doc_height}

    kept: dict[int, GraphNode] = {}
    owner: dict[int, int] = {}      # element -> the kept element it belongs to (-1: the canvas)
    swallowed: dict[int, int] = {}  # element inside a leaf -> that leaf
    truncated = False
    for i, el in enumerate(elements[1:], start=1):
        parent_el = elements[el.parent] if 0 <= el.parent < len(elements) else None
        kind = _classify(el, parent_el, float(width * height), chart_boxes)
        leaf = swallowed.get(el.parent, el.parent if el.parent in kept else None)
        if leaf is not None:
            host = kept[leaf]
            if host.type in _OWNS_INSIDE or (host.type in _INLINE_HOSTS and kind in (None, "text", "link")):
                swallowed[i] = leaf
                if el.text and host.type not in ("chart", "table"):
                    host.text = f"{host.text} {el.text}".strip()[:MAX_TEXT]
                continue
        up = leaf if leaf is not None else owner.get(el.parent, -1)
        if kind is None:
            owner[i] = up
            continue
        if len(kept) >= MAX_NODES:
            truncated = True
            break
        kept[i] = GraphNode(id=f"n{len(kept) + 1}", type=kind, parent=None if up < 0 else kept[up].id,
                            box=_box(el), text=el.text[:MAX_TEXT], name=" ".join([el.id, *el.classes]).strip(),
                            tag=el.tag, level=int(el.tag[1]) if kind == "heading" else None,
                            font_size=el.font_size, font_weight=el.font_weight, color=el.color,
                            background=el.background)
        owner[i] = i
    nodes = list(kept.values())
    _attach_data(nodes, charts or [], tables or [], media or [])
    nodes = _collapse_groups(nodes)
    edges = _edges(nodes)
    return DesignGraph(canvas=canvas_attrs, nodes=nodes, edges=edges, truncated=truncated or rendering.elements_truncated,
                       parse_ms=round((time.perf_counter() - started) * 1000, 2))


def _attach_data(nodes: list[GraphNode], charts: list[dict], tables: list[list[list[str]]], media: list[dict]) -> None:
    for node in nodes:
        if node.type == "chart":
            found = next((c for c in charts if _close(node.box, c.get("box") or ())), None)
            if found:
                series = found.get("series") or []
                node.data = {"kind": next((s.get("type") for s in series if s.get("type")), ""),
                             "categories": (found.get("categories") or [[]])[0] or
                                           next((s.get("names") for s in series if any(s.get("names") or [])), []),
                             "series": {s.get("name") or f"series {i + 1}": s.get("values") for i, s in enumerate(series)}}
        elif node.type in ("image", "icon"):
            found = next((m for m in media if _close(node.box, m.get("box") or (), 1.5)), None)
            if found:
                node.text = (found.get("name") or node.text)[:MAX_TEXT]
                if found.get("src"):
                    node.name = f"{node.name} {found['src']}".strip()
    for node, cells in zip([n for n in nodes if n.type == "table"], tables):
        node.data = {"header": cells[0] if cells else [], "rows": cells[1:]}
        node.text = " ".join(" ".join(row) for row in cells)[:MAX_TEXT]


def _interchangeable(a: GraphNode, b: GraphNode, nodes: list[GraphNode]) -> bool:
    """Same type, markup and kinds of children, and about the same size."""
    def kids(node: GraphNode) -> list[str]:
        return sorted(n.type for n in nodes if n.parent == node.id)

    same_size = (abs(a.box.w - b.box.w) <= SAME_SIZE * max(a.box.w, b.box.w)
                 and abs(a.box.h - b.box.h) <= SAME_SIZE * max(a.box.h, b.box.h))
    return same_size and (a.type, a.tag, a.name) == (b.type, b.tag, b.name) and kids(a) == kids(b)


def _holding_data(nodes: list[GraphNode]) -> set[str]:
    """Charts and tables, and the nodes holding one: each is its own content, never a group member."""
    parent = {n.id: n.parent for n in nodes}
    out: set[str] = set()
    for node in nodes:
        if node.type in ("chart", "table"):
            at: str | None = node.id
            while at is not None and at not in out:
                out.add(at)
                at = parent.get(at)
    return out


def _collapse_groups(nodes: list[GraphNode]) -> list[GraphNode]:
    """Runs of GROUP_MIN or more interchangeable siblings (same type, markup and children, about
    the same size) become one group node; the members' own children go with them."""
    by_parent: dict[str | None, list[GraphNode]] = {}
    for node in nodes:
        by_parent.setdefault(node.parent, []).append(node)
    unique = _holding_data(nodes)
    runs: list[list[GraphNode]] = []
    for siblings in by_parent.values():
        run: list[GraphNode] = []
        for node in [*siblings, None]:
            if node is not None and node.id not in unique and run and _interchangeable(node, run[0], nodes):
                run.append(node)
                continue
            if len(run) >= GROUP_MIN:
                runs.append(run)
            run = [node] if node is not None and node.id not in unique else []
    if not runs:
        return nodes
    texts = _descendant_texts(nodes)
    groups = {run[0].id: _group(run, texts) for run in runs}
    dropped = {m.id for run in runs for m in run}
    for node in nodes:  # document order: a parent comes before its children
        if node.parent in dropped:
            dropped.add(node.id)
    return [groups.get(n.id, n) for n in nodes if n.id not in dropped or n.id in groups]


def _group(run: list[GraphNode], texts: dict[str, str]) -> GraphNode:
    first = run[0]
    left, top = min(m.box.x for m in run), min(m.box.y for m in run)
    right, bottom = max(m.box.right for m in run), max(m.box.bottom for m in run)
    members = [Member(box=m.box, text=texts.get(m.id, m.text)[:MAX_TEXT]) for m in run]
    return GraphNode(id=f"g{first.id[1:]}", type="group", parent=first.parent, of=first.type, count=len(run),
                     tag=first.tag, name=first.name, box=Box(x=left, y=top, w=right - left, h=bottom - top),
                     text=" | ".join(m.text for m in members)[:MAX_TEXT], font_size=first.font_size,
                     font_weight=first.font_weight, color=first.color, background=first.background, members=members)


def _descendant_texts(nodes: list[GraphNode]) -> dict[str, str]:
    """Each node's text followed by its descendants' (in document order)."""
    parent = {n.id: n.parent for n in nodes}
    texts: dict[str, list[str]] = {n.id: [] for n in nodes}
    for node in nodes:
        at: str | None = node.id
        while node.text and at is not None:
            texts[at].append(node.text)
            at = parent.get(at)
    return {k: " ".join(" ".join(v).split()) for k, v in texts.items()}


def reading_order(nodes: list[GraphNode]) -> list[GraphNode]:
    """Top to bottom, then left to right, rows formed by overlapping vertical extents."""
    ordered = sorted(nodes, key=lambda n: (n.box.y, n.box.x))
    rows: list[list[GraphNode]] = []
    for node in ordered:
        if rows and node.box.y < min(m.box.bottom for m in rows[-1]) - 1:
            rows[-1].append(node)
        else:
            rows.append([node])
    return [n for row in rows for n in sorted(row, key=lambda n: n.box.x)]


def _edges(nodes: list[GraphNode]) -> list[GraphEdge]:
    edges: list[GraphEdge] = []
    by_parent: dict[str | None, list[GraphNode]] = {}
    for node in nodes:
        edges.append(GraphEdge(type="contains", source=node.parent or "canvas", target=node.id))
        by_parent.setdefault(node.parent, []).append(node)
    for siblings in by_parent.values():
        ordered = reading_order(siblings)
        for a, b in zip(ordered, ordered[1:]):
            below = b.box.y >= a.box.bottom - 1
            edges.append(GraphEdge(type="before", source=a.id, target=b.id, detail="down" if below else "right"))
            for side in ("top", "left", "center_x"):
                if abs(a.box.side(side) - b.box.side(side)) <= ALIGN_PX:
                    edges.append(GraphEdge(type="aligned", source=a.id, target=b.id, detail=side))
            gap = (b.box.y - a.box.bottom) if below else (b.box.x - a.box.right)
            if -1 <= gap <= ADJACENT_PX:
                edges.append(GraphEdge(type="adjacent", source=a.id, target=b.id, detail=f"{gap:.0f}px"))
    edges += _labels(nodes)
    return edges


def _labels(nodes: list[GraphNode]) -> list[GraphEdge]:
    """A heading or text right above a chart, table or picture, overlapping it horizontally and
    in the same container (or the container's parent), labels it."""
    out = []
    titles = [n for n in nodes if n.type in ("heading", "text")]
    for subject in nodes:
        if subject.type not in ("chart", "table", "image", "list", "group"):
            continue
        near = [t for t in titles if t.parent in (subject.parent, _parent_of(nodes, subject.parent))
                and 0 <= subject.box.y - t.box.bottom <= LABEL_GAP_PX
                and t.box.x < subject.box.right and subject.box.x < t.box.right]
        if near:
            title = max(near, key=lambda t: t.box.bottom)
            out.append(GraphEdge(type="connected", source=title.id, target=subject.id, detail="labels"))
    return out


def _parent_of(nodes: list[GraphNode], node_id: str | None) -> str | None:
    node = next((n for n in nodes if n.id == node_id), None)
    return node.parent if node else None


async def read_page(live: LivePage) -> tuple[list[dict], list[list[list[str]]], list[dict]]:
    """The three page reads the graph uses: the charts the pixels confirm, the shown tables,
    the shown pictures' names; only well-formed entries are kept."""
    charts = (await read_charts(live)).get("charts")
    tables = await read_tables(live)
    media = await live.evaluate(_MEDIA_JS, 200)
    return ([c for c in charts or [] if _well_formed(c)],
            [t for t in tables or [] if isinstance(t, list) and all(isinstance(r, list) for r in t)],
            [m for m in media or [] if _well_formed(m)] if isinstance(media, list) else [])


def _well_formed(entry: object) -> bool:
    box = entry.get("box") if isinstance(entry, dict) else None
    return isinstance(box, list) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box)


async def design_graph_of(evidence: Evidence) -> DesignGraph:
    """Ψ for this answer, parsed once and shared by the channels that read it (`vgr`,
    `design_graph`) through `evidence.shared`."""
    pending = evidence.shared.get("design_graph")
    if pending is None:
        pending = evidence.shared["design_graph"] = asyncio.ensure_future(_parse(evidence))
    return await asyncio.shield(pending)


async def _parse(evidence: Evidence) -> DesignGraph:
    charts, tables, media = await read_page(evidence.live) if evidence.live is not None else ([], [], [])
    canvas = (evidence.task.canvas.width, evidence.task.canvas.height) if evidence.task.canvas else None
    return parse_design_graph(evidence.rendering, charts=charts, tables=tables, media=media, canvas=canvas)
