"""The `Task`: what a policy is asked to build, and what the rewards check it against."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aesenv.tasks.project import ProjectSpec
from aesenv.tasks.design import DesignTarget


class Category(str, Enum):
    """OpenDesign's five categories (plots and projects use their own kinds)."""

    WEBSITE = "Website"
    DESIGN_3D = "3D Design"
    GAME_DEV = "Game Dev"
    UI_COMPONENT = "UI Component"
    DATA_VISUALIZATION = "Data Visualization"

    @classmethod
    def parse(cls, value: str | "Category") -> "Category":
        """Case- and spacing-insensitive lookup (datasets write 'Game dev', '3d design', ...)."""
        if isinstance(value, Category):
            return value
        wanted = "".join(str(value).lower().split())
        for member in cls:
            if "".join(member.value.lower().split()) == wanted:
                return member
        names = ", ".join(m.value for m in cls)
        raise ValueError(f"unknown category {value!r}; expected one of: {names}")


class Canvas(BaseModel):
    """A fixed artboard (posters, slides); `None` on a task means a normal scrolling page."""

    model_config = ConfigDict(extra="forbid")
    width: int = Field(gt=0, le=10_000)
    height: int = Field(gt=0, le=50_000)


class TextExact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text_exact"] = "text_exact"
    text: str = Field(min_length=1)


class ChartData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["chart_data"] = "chart_data"
    chart: str
    labels: list[str]
    series: dict[str, list[float]] | list[float]


class TableData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["table_data"] = "table_data"
    header: list[str]
    rows: list[list[str]]


Requirement = Annotated[Union[TextExact, ChartData, TableData], Field(discriminator="type")]


class ChecklistItem(BaseModel):
    """One yes/no question for the VLM checklist, typed so the judge answers one dimension per
    call and bound to an element (a CSS selector or a plain description) or, when `element`
    is None, to the whole canvas. A plain string in task JSON is a content question."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    question: str = Field(min_length=1)
    category: Literal["content", "layout", "style"] = "content"
    element: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: object) -> object:
        return {"question": value} if isinstance(value, str) else value


class Task(BaseModel):
    """One generation task. Immutable so it can key caches and travel between processes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    # The artifact kind (`aesenv.kinds`: web, plot, or one a user registers); checked when an env
    # or the pipeline takes the task, so tasks of a kind registered later still load.
    kind: str = Field(default="web", pattern=r"^[a-z][a-z0-9_-]*$")
    category: Category = Category.WEBSITE
    prompt: str = Field(min_length=1)
    canvas: Canvas | None = None
    requirements: tuple[Requirement, ...] = ()
    checklist: tuple[ChecklistItem, ...] = ()
    data_files: dict[str, str] = Field(default_factory=dict)
    reference_image: str | None = None
    # A known-good page for verifiers that compare against a reference (text-block layout,
    # whitespace distribution); rendered at the task's canvas.
    reference_html: str | None = None
    # AesCode's target design graph and VGR predicates (`aesenv.tasks.design`); predicates the
    # requirements imply are added to these by the `vgr` channel.
    design: DesignTarget | None = None
    source: str = "user"
    project: ProjectSpec | None = None  # `project` tasks: how the project starts, weighted requirements

    def __init__(self, **data):
        if "category" in data and data["category"] is not None:
            data["category"] = Category.parse(data["category"])
        super().__init__(**data)

    @model_validator(mode="after")
    def _reproduction_has_a_reference(self) -> "Task":
        if self.project is not None and self.project.start == "reference" and not self.reference_html:
            raise ValueError(f"task {self.id}: a project that reproduces a reference needs reference_html")
        return self

    def __hash__(self) -> int:
        return hash((self.id, self.prompt, self.category))
