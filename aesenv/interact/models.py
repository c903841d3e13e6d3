"""What the interaction agents see and record: labeled elements, actions, verdicts, steps."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field

from aesenv.quoting import inline


class MarkKind(str, Enum):
    """What a labeled element is for; the explorer's priorities and the agent's list use it."""

    BUTTON = "button"
    LINK = "link"
    FIELD = "field"        # text the user types into
    CHOICE = "choice"      # checkbox, radio, select, range: toggles its own state
    TAB = "tab"
    TOGGLE = "toggle"      # accordion/disclosure headers, aria-expanded, switches
    CANVAS = "canvas"      # drawn content: coordinate clicks and key presses
    LISTENER = "listener"  # a plain element with a click/key handler (often addEventListener-only)


class Box(BaseModel):
    """A rectangle in viewport pixels at the time the page was labeled."""

    x: float
    y: float
    w: float
    h: float

    def inflated(self, px: float) -> "Box":
        return Box(x=self.x - px, y=self.y - px, w=self.w + 2 * px, h=self.h + 2 * px)


class Mark(BaseModel):
    """One labeled interactable element. `path` is a CSS path that names it across relabels."""

    index: int
    kind: MarkKind
    tag: str
    role: str = ""
    text: str = ""
    path: str
    box: Box
    in_viewport: bool = True
    listeners: list[str] = Field(default_factory=list)
    href: str = ""
    input_type: str = ""            # an <input>'s type (email, password, search, ...)
    submit: int | None = None       # FIELD: the mark that submits it (button in its form, nearby)
    submits_form: bool = False      # BUTTON: a submit control of some form
    in_overlay: bool = False        # inside a dialog / fixed overlay
    selected: bool = False          # aria-selected / aria-pressed / checked / an "active" class
    object_id: str = Field(default="", exclude=True, repr=False)

    def describe(self) -> str:
        """One line of the element list an agent reads. The page chose the text, role, custom tag
        names and event names: they are quoted (`aesenv.quoting`), never bare words of ours."""
        tag = self.tag if _word(self.tag, 10) else inline(self.tag, 40)
        what = self.kind.value + (f" <{tag}>" if self.tag not in (self.kind.value, "") else "")
        if self.role:
            what += f" role={inline(self.role, 40)}"
        extras = []
        if self.listeners and self.kind is MarkKind.LISTENER:
            extras.append("listens: " + ",".join(name if _word(name, 20) else inline(name, 30)
                                                 for name in self.listeners[:4]))
        if self.submit is not None:
            extras.append(f"submitted by [{self.submit}]")
        if self.selected:
            extras.append("selected")
        if not self.in_viewport:
            extras.append("off-screen")
        b = self.box
        box = f"@({b.x:.0f},{b.y:.0f} {b.w:.0f}x{b.h:.0f})"
        text = f" {inline(self.text, 160)}" if self.text else ""
        return f"[{self.index}] {what}{text} {box}" + (f" ({'; '.join(extras)})" if extras else "")


def _word(name: str, longest: int) -> bool:
    """A short lowercase word (an HTML tag, a DOM event name) reads as itself; anything else the page
    made up is quoted."""
    return 0 < len(name) <= longest and name.isascii() and name.isalnum() and name == name.lower()


class Labeling(BaseModel):
    """The labeled page: marks in document order plus what listens to keys page-wide."""

    marks: list[Mark]
    key_listeners: list[str] = Field(default_factory=list)  # keydown/keyup on window/document/body

    def element_list(self) -> str:
        return "\n".join(m.describe() for m in self.marks) or "(no interactable elements found)"

    def by_index(self, index: int) -> Mark | None:
        return next((m for m in self.marks if m.index == index), None)


KEYS = {"up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight", "space": "Space"}
_ACTION = re.compile(r"^\s*(?P<verb>[a-z]+)\s*(?:\[\s*(?P<mark>\d+)\s*\])?\s*(?:[;:,]\s*(?P<text>.*))?$", re.S | re.I)


class Action(BaseModel):
    """One step of the published grammar: click [n], type [n]; text, wait, a game key, finish.
    The explorer may also press several keys in one step (`keys`). A click on a canvas hits its centre."""

    kind: Literal["click", "type", "wait", "key", "finish"]
    mark: int | None = None
    text: str = ""
    keys: list[str] = Field(default_factory=list)
    enter: bool = True  # `type` ends with Enter (the grammar's "with Enter")

    def describe(self) -> str:
        if self.kind == "click":
            return f"click [{self.mark}]"
        if self.kind == "type":
            return f"type [{self.mark}]; {self.text}" + ("" if self.enter else " (no Enter)")
        if self.kind == "key":
            names = {v: k for k, v in KEYS.items()}
            return " ".join(names.get(k, k) for k in self.keys)
        return self.kind

    @classmethod
    def parse(cls, text: str) -> "Action":
        """An agent's action string in the grammar; ValueError says what is wrong."""
        m = _ACTION.match(text.strip().splitlines()[0] if text.strip() else "")
        if not m:
            raise ValueError(f"not an action in the grammar: {text[:80]!r}")
        verb, mark, rest = m["verb"].lower(), m["mark"], (m["text"] or "").strip()
        if verb in ("click", "type"):
            if mark is None:
                raise ValueError(f"{verb} needs an element number: '{verb} [n]'")
            if verb == "type" and not rest:
                raise ValueError("type needs text: 'type [n]; text'")
            return cls(kind=verb, mark=int(mark), text=rest[:200])
        if verb in KEYS and mark is None:
            return cls(kind="key", keys=[KEYS[verb]])
        if verb in ("wait", "finish") and mark is None:
            return cls(kind=verb)
        raise ValueError(f"unknown action {verb!r}; use click [n], type [n]; text, wait, "
                         "up, down, left, right, space, finish")


class Verdict(BaseModel):
    """0 or 1 for a scored interaction; None (NaN) for a typing step whose submit is to come."""

    score: Literal[0, 1] | None
    reason: str = ""

    @property
    def scored(self) -> bool:
        return self.score is not None


NEAR_PX = 160  # how far from a control a change still reads as its own


OWN_FLOOR_PX = 10  # changed pixels on the control itself that make a visible change of its own
GLYPH_PX = 20      # changed pixels elsewhere that make a visible change: part of one small glyph


class Response(BaseModel):
    """What changed when an action ran, net of what changed while the page idled as long.

    Every pixel count is of the change between two screenshots taken in the same pointer and focus
    state (see `aesenv.interact.acting`): the control's own hover, focus and active restyle is in
    both, so it is in neither count. `frame_px` are changed pixels left out as a thin frame
    drawn around the control (an outline, ring or border, whoever draws it)."""

    mutations: int = 0            # DOM mutations on nodes that did not change while idle (where to look, no evidence)
    idle_mutations: int = 0
    changed_px: int = 0           # changed pixels in the measured region (the control left out)
    idle_changed_px: int = 0
    own_changed_px: int = 0       # changed pixels on the control itself (its box)
    own_idle_px: int = 0          # the same while the page idled
    own_px: int = 0               # the control's own pixels
    frame_px: int = 0             # changed pixels that only frame the control, counted nowhere
    dom_changed_px: int = 0       # changed pixels inside the elements the action's DOM changes touched
    dom_idle_px: int = 0          # the same while the page idled
    near_changed_px: int = 0      # changed pixels of the region within NEAR_PX of the control
    change_box: list[int] | None = None  # where the region changed: [x0, y0, x1, y1] (viewport)
    control_box: list[int] | None = None  # where the control was: [x0, y0, x1, y1] (viewport)
    region_px: int = 0
    region: str = "viewport"
    scrolled: bool = False
    hash_changed: bool = False
    reloaded: bool = False
    new_errors: list[str] = Field(default_factory=list)

    @property
    def pixels_moved(self) -> bool:
        """A clear change in the measured region beyond what idling changed there: as much as a
        count going up by one changes in small type, anywhere on the page; in a canvas, which
        draws everything itself, a share of it."""
        floor = max(GLYPH_PX, int(0.0003 * self.region_px)) if self.region == "canvas" else GLYPH_PX
        return self.changed_px > 1.3 * self.idle_changed_px + floor

    @property
    def own_moved(self) -> bool:
        """A visible change of the control's own look beyond its pointer and focus restyle: a
        label that counts up, a knob that moves, a check mark, a pressed fill."""
        return self.own_changed_px > 1.3 * self.own_idle_px + OWN_FLOOR_PX

    @property
    def dom_shown(self) -> bool:
        """The elements the action changed in the DOM changed on screen, beyond what idling changed
        there: a score reset to 0 on a game that keeps moving, which the whole region's count
        drowns. Pixels decide; the DOM only says where to look."""
        return self.mutations > 0 and self.dom_changed_px > 1.3 * self.dom_idle_px + GLYPH_PX

    @property
    def responded(self) -> bool:
        """A visible change: in the measured region, of the control itself, or where the action
        changed the DOM. Pixels only: a DOM change that does not show (an attribute no CSS reads,
        an ARIA state, a title) is no response, nor is a changed location hash or a scroll that
        shows nothing new."""
        return self.pixels_moved or self.own_moved or self.dom_shown

    def merged(self, later: "Response") -> "Response":
        """Two actions that form one interaction (type, then submit) respond together."""
        return Response(mutations=self.mutations + later.mutations, idle_mutations=self.idle_mutations + later.idle_mutations,
                        changed_px=max(self.changed_px, later.changed_px),
                        idle_changed_px=max(self.idle_changed_px, later.idle_changed_px),
                        own_changed_px=max(self.own_changed_px, later.own_changed_px),
                        own_idle_px=max(self.own_idle_px, later.own_idle_px),
                        own_px=max(self.own_px, later.own_px),
                        frame_px=max(self.frame_px, later.frame_px),
                        dom_changed_px=max(self.dom_changed_px, later.dom_changed_px),
                        dom_idle_px=max(self.dom_idle_px, later.dom_idle_px),
                        near_changed_px=max(self.near_changed_px, later.near_changed_px),
                        change_box=later.change_box or self.change_box,
                        control_box=later.control_box or self.control_box,
                        region_px=later.region_px, region=later.region, scrolled=self.scrolled or later.scrolled,
                        hash_changed=self.hash_changed or later.hash_changed, reloaded=later.reloaded,
                        new_errors=self.new_errors + later.new_errors)


class Step(BaseModel):
    """One performed action with its evidence: what a user reads to see why a page scored."""

    action: str
    target: str = ""             # the element's CSS path, "keys", "page" (wait)
    target_text: str = ""
    verdict: Verdict
    response: Response | None = None
    before_jpeg_b64: str = ""
    after_jpeg_b64: str = ""
    thought: str = ""


class InteractionReport(BaseModel):
    """An agent's whole episode on one page."""

    agent: str
    budget: int
    plan: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    labeled: int = 0
    stopped: str = ""            # why the episode ended
    usage: dict[str, Any] = Field(default_factory=dict)  # model requests and tokens (VLM agent)

    @property
    def scored(self) -> list[Step]:
        return [s for s in self.steps if s.verdict.scored]

    @property
    def raw(self) -> int:
        return sum(1 for s in self.scored if s.verdict.score == 1)
