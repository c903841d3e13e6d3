"""What a design should be, as AesCode describes it: a target design graph and the VGR predicates
bound to it.

The vocabulary is closed so that the graph parsed from a candidate page (`aesenv.kinds.web.verifiers.graph`)
and the target a task states speak the same words: atomic elements, containers, and three or more
interchangeable siblings collapsed into a `group` with a count. A predicate is a yes/no question
bound to target nodes (or the canvas), typed by what it asks, carrying the answer that passes and,
when the parsed graph can decide it, the `test` that does (`aesenv.kinds.web.verifiers.vgr`); the rest need a
VLM looking at the rendering.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

NodeType = Literal["canvas", "heading", "text", "image", "icon", "chart", "table", "badge", "button", "input",
                   "link", "region", "card", "panel", "list", "group"]
EdgeType = Literal["contains", "before", "aligned", "adjacent", "connected"]
# How the parsed graph answers (`aesenv.kinds.web.verifiers.vgr.TESTS`, one entry each).
TestOp = Literal["present", "complete", "most_prominent", "before", "aligned", "labels", "last"]
CANVAS = "canvas"  # the id a predicate binds to for the whole page


class PredicateKind(str, Enum):
    STRUCTURE = "structure"        # a node is there
    COMPLETENESS = "completeness"  # it has all its parts (categories, rows, members)
    ATTRIBUTE = "attribute"        # how it looks (size, prominence, colour)
    RELATION = "relation"          # order, alignment, adjacency between nodes
    SUBGRAPH = "subgraph"          # nodes belong together (a title labels its chart)
    FORBIDDEN = "forbidden"        # something the brief rules out is absent
    GLOBAL = "global"              # the canvas as a whole


class TargetNode(BaseModel):
    """A node the design must (or, for forbidden content, must not) have, identified by what it
    shows: `text` (a substring of its text, case and spacing aside; for images their alt text,
    label or name), a chart's `labels`, a table's `header`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    type: NodeType
    text: str | None = None
    labels: tuple[str, ...] = ()
    header: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _identifiable(self) -> "TargetNode":
        if self.id == CANVAS or self.type == "canvas":
            raise ValueError("the canvas is implicit: bind predicates to 'canvas' instead of declaring it")
        if not (self.text or self.labels or self.header):
            raise ValueError(f"target node {self.id!r}: say what identifies it (text, labels or header)")
        return self


class TargetEdge(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: EdgeType
    source: str
    target: str
    detail: str = ""


class PredicateTest(BaseModel):
    """How the parsed graph decides a predicate: `op` names an entry of `vgr.TESTS`; `side` an
    edge to align on (top, bottom, left, right, center_x, center_y), `n` a count."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    op: TestOp
    side: str | None = None
    n: int | None = Field(default=None, ge=0)


class Predicate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    kind: PredicateKind
    question: str = Field(min_length=1)
    binds: tuple[str, ...] = Field(min_length=1)  # target node ids, or "canvas"
    passes: Literal["yes", "no"] = "yes"
    test: PredicateTest | None = None  # None: only a VLM can answer it


class DesignTarget(BaseModel):
    """A task's target graph and its predicates. Predicates may bind only declared nodes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nodes: tuple[TargetNode, ...] = ()
    edges: tuple[TargetEdge, ...] = ()
    predicates: tuple[Predicate, ...] = ()

    @model_validator(mode="after")
    def _bound_to_declared_nodes(self) -> "DesignTarget":
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            raise ValueError("target node ids must be unique")
        known = {*ids, CANVAS}
        for edge in self.edges:
            if {edge.source, edge.target} - known:
                raise ValueError(f"edge {edge.type} {edge.source}->{edge.target} names an undeclared node")
        pids = [p.id for p in self.predicates]
        if len(set(pids)) != len(pids):
            raise ValueError("predicate ids must be unique")
        for predicate in self.predicates:
            unknown = set(predicate.binds) - known
            if unknown:
                raise ValueError(f"predicate {predicate.id!r} binds undeclared nodes {sorted(unknown)}")
        return self

    def node(self, node_id: str) -> TargetNode:
        return next(n for n in self.nodes if n.id == node_id)
