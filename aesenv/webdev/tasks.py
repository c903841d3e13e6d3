"""Webdev-Bench composite tasks (WebCoder, App. B.2): one project, 4–5 requirements revealed one
round at a time, each decomposed into a hidden checklist the agent never sees.

Every item has a parent requirement, a dimension (functional, interaction, visual, or coverage:
it re-checks behaviour an earlier requirement promised), a weight (1.5 core, 1.0 otherwise), an
acceptance criterion in words, and an executable check of ours: scripted `steps` on the live
page, then what the page must show (`Expect`). A suite is a folder with one sub-folder per task:

    <task>/task.json           the task without its files (`CompositeTask` minus `files`,
                               `reference_html` and each requirement's `solution`)
    <task>/start/...           the existing project (start "project")
    <task>/reference.html      the page whose screenshot is to be rebuilt (start "reference")
    <task>/solution/r<j>/...   the files the reference implementation writes in round j (never
                               shown; they check that every item can be met, and drive the
                               reference agent)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Dimension = Literal["functional", "interaction", "visual", "coverage"]
Start = Literal["reference", "description", "project"]
CORE_WEIGHT, OTHER_WEIGHT = 1.5, 1.0
MIN_REQUIREMENTS, MAX_REQUIREMENTS = 4, 5
DEFAULT_PORT = 4173
_ID = r"^[a-z0-9][a-z0-9_-]*$"


class Step(BaseModel):
    """One scripted user action before the check reads the page; `ms` of page time pass after it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: Literal["click", "fill", "select", "press", "wait"]
    selector: str | None = None  # click / fill / select: the first visible match; press: what to click first
    text: str = ""  # only matches whose visible text contains this (case-insensitive): "the button 'Add'"
    value: str = ""  # fill: the text typed (replacing what is there); select: the option's text; press: the key
    ms: int = Field(default=400, ge=0, le=10_000)

    @model_validator(mode="after")
    def _complete(self) -> "Step":
        if self.action in ("click", "fill", "select") and not self.selector:
            raise ValueError(f"a {self.action} step needs a selector")
        if self.action in ("press", "select") and not self.value:
            raise ValueError(f"a {self.action} step needs a value (the key, the option)")
        return self


class Expect(BaseModel):
    """What the page must show. Each field that is set is one part of the check, scored in [0, 1];
    texts are matched case-insensitively with whitespace folded."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: tuple[str, ...] = ()  # the visible text (of `within`, else the page) contains each
    absent: tuple[str, ...] = ()  # ... and none of these
    within: str | None = None  # a selector: its visible matches' text is read instead of the page's
    selector: str | None = None
    min_count: int = Field(default=0, ge=0)  # at least this many visible matches of `selector`
    max_count: int | None = Field(default=None, ge=0)  # at most this many (0: it is gone)
    columns: int = Field(default=0, ge=0)  # `selector`'s visible matches stand side by side in ≥ n columns
    style: dict[str, str] = Field(default_factory=dict)  # computed style of `selector`'s first visible
    # match: property -> a text the value contains ("!text": must not contain; "=text": is exactly)
    links_resolve: bool = False  # every in-page link (href="#…") has a target, and there is one
    fits_width: bool = False  # no horizontal overflow at the desktop viewport
    no_errors: bool = False  # no uncaught page error since the page loaded

    @model_validator(mode="after")
    def _checks_something(self) -> "Expect":
        needs_selector = self.min_count or self.max_count is not None or self.columns or self.style
        if needs_selector and not self.selector:
            raise ValueError("min_count, max_count, columns and style need a selector")
        if not self.parts():
            raise ValueError("an expectation must check something")
        return self

    def parts(self) -> list[str]:
        """The names of the parts it sets, in the order they are scored."""
        named = {"text": bool(self.text), "absent": bool(self.absent), "count": bool(self.min_count),
                 "max_count": self.max_count is not None, "columns": bool(self.columns),
                 "style": bool(self.style), "links": self.links_resolve, "fits_width": self.fits_width,
                 "no_errors": self.no_errors}
        return [name for name, on in named.items() if on]


class ChecklistItem(BaseModel):
    """One hidden item: graded 0–3 at terminal acceptance, never shown to the agent or the gate."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=_ID)
    dimension: Dimension
    core: bool = False
    criterion: str = Field(min_length=1)  # the acceptance criterion, as a human grader reads it
    covers: str | None = None  # coverage items: the earlier requirement whose behaviour it re-checks
    viewport: tuple[int, int] | None = None  # checked at this size (a phone: 390, 844); default the desktop's
    steps: tuple[Step, ...] = ()
    expect: Expect

    @property
    def weight(self) -> float:
        return CORE_WEIGHT if self.core else OTHER_WEIGHT

    @model_validator(mode="after")
    def _coverage_names_what(self) -> "ChecklistItem":
        if (self.dimension == "coverage") != (self.covers is not None):
            raise ValueError(f"item {self.id!r}: a coverage item (and only one) names the requirement it covers")
        return self


class Requirement(BaseModel):
    """One round's request, in the user's words, and its hidden items."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=_ID)
    text: str = Field(min_length=1)
    items: tuple[ChecklistItem, ...] = Field(min_length=1)
    solution: dict[str, str] = Field(default_factory=dict, repr=False)  # the reference implementation's files


class CompositeTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    start: Start
    brief: str = Field(min_length=1)  # the opening message: the product, the screenshot, the project
    reference_html: str = Field(default="", repr=False)
    files: dict[str, str] = Field(default_factory=dict, repr=False)  # the existing project
    defect: str = ""  # what was broken on purpose (start "project"); its repair is requirement 1
    port: int = Field(default=DEFAULT_PORT, ge=1024, le=65535)  # where `npm start` must serve the app
    requirements: tuple[Requirement, ...] = Field(min_length=MIN_REQUIREMENTS, max_length=MAX_REQUIREMENTS)

    @model_validator(mode="after")
    def _consistent(self) -> "CompositeTask":
        if (self.start == "reference") != bool(self.reference_html):
            raise ValueError(f"task {self.id!r}: reference_html comes with (and only with) start 'reference'")
        if (self.start == "project") != bool(self.files):
            raise ValueError(f"task {self.id!r}: files come with (and only with) start 'project'")
        if self.defect and self.start != "project":
            raise ValueError(f"task {self.id!r}: only an existing project can carry an injected defect")
        ids = [r.id for r in self.requirements]
        if len(set(ids)) != len(ids):
            raise ValueError(f"task {self.id!r}: requirement ids repeat: {ids}")
        items = [i.id for i in self.items()]
        if len(set(items)) != len(items):
            raise ValueError(f"task {self.id!r}: item ids repeat")
        for j, requirement in enumerate(self.requirements):
            for item in requirement.items:
                if item.covers is not None and item.covers not in ids[:j]:
                    raise ValueError(f"task {self.id!r}: coverage item {item.id!r} must cover an earlier "
                                     f"requirement, not {item.covers!r}")
        return self

    def items(self) -> list[ChecklistItem]:
        return [item for r in self.requirements for item in r.items]

    def parent(self, item_id: str) -> Requirement:
        return next(r for r in self.requirements if any(i.id == item_id for i in r.items))


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


def load_task(folder: str | Path) -> CompositeTask:
    """One task from its folder (see the module docstring for the layout)."""
    folder = Path(folder)
    data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    if "files" in data or "reference_html" in data:
        raise ValueError(f"{folder}/task.json: files and reference_html live beside it, not in it")
    reference = folder / "reference.html"
    data["reference_html"] = reference.read_text(encoding="utf-8") if reference.is_file() else ""
    data["files"] = _tree(folder / "start")
    for j, requirement in enumerate(data.get("requirements", []), 1):
        requirement["solution"] = _tree(folder / "solution" / f"r{j}")
    try:
        return CompositeTask.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"{folder}: {exc}") from exc


def load_suite(folder: str | Path, only: list[str] | None = None) -> list[CompositeTask]:
    """Every task of a suite folder, by id order (`only`: just these ids, refusing unknown ones)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"no webdev suite at {folder}")
    tasks = [load_task(d) for d in sorted(folder.iterdir()) if (d / "task.json").is_file()]
    if only:
        unknown = sorted(set(only) - {t.id for t in tasks})
        if unknown:
            raise ValueError(f"{folder} has no tasks {unknown}; it has {[t.id for t in tasks]}")
        tasks = [t for t in tasks if t.id in only]
    return tasks
