"""What a `project` task (WebCoder's Webdev-World) asks for besides its prompt: how the project
starts, and its weighted requirements, each checked on the served page by the verifier's DOM
census (`aesenv.kinds.project.census`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

WEIGHT_TOLERANCE = 1e-6


class ProjectRequirement(BaseModel):
    """One requirement. Its score in [0, 1] is the mean of the checks it sets: the share of
    `keywords` present in the page's visible text (case-insensitive), the graded count of visible
    `selector` matches (count / `min_count`, capped), and with `links_resolve` the share of the
    page's in-page links (`href="#…"`) whose target exists."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    type: Literal["repair", "section", "content", "navigation", "interaction", "style"]
    weight: float = Field(gt=0, le=1)
    description: str = Field(min_length=1)  # what the agent is told (unless `hidden`)
    keywords: tuple[str, ...] = ()
    selector: str | None = None
    min_count: int = Field(default=0, ge=0)
    links_resolve: bool = False
    hidden: bool = False  # graded, never shown (a hidden checklist)

    @model_validator(mode="after")
    def _checks_something(self) -> "ProjectRequirement":
        if self.min_count and not self.selector:
            raise ValueError(f"requirement {self.id!r}: min_count needs a selector")
        if not (self.keywords or self.links_resolve or (self.selector and self.min_count)):
            raise ValueError(f"requirement {self.id!r} checks nothing: give keywords, links_resolve, "
                             "or a selector with min_count")
        return self

    @property
    def counted(self) -> bool:
        """Whether it sets a count check (left out of the potential ledger)."""
        return bool(self.selector and self.min_count)


class ProjectSpec(BaseModel):
    """How the project starts: the `scaffold` (React + Vite), shipped `files` (an existing project,
    laid over the scaffold, maybe with an injected `defect`), or a `reference` screenshot to
    reproduce (rendered from the task's `reference_html`). Requirement weights sum to 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    start: Literal["scaffold", "files", "reference"] = "scaffold"
    files: dict[str, str] = Field(default_factory=dict)
    defect: str = ""  # what was broken on purpose, for records and the scripted agent's tests; never shown
    requirements: tuple[ProjectRequirement, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> "ProjectSpec":
        if self.requirements:
            total = sum(r.weight for r in self.requirements)
            if abs(total - 1.0) > WEIGHT_TOLERANCE:
                raise ValueError(f"requirement weights sum to {total:.6f}, not 1")
            ids = [r.id for r in self.requirements]
            if len(set(ids)) != len(ids):
                raise ValueError(f"requirement ids repeat: {ids}")
        if self.start == "files" and not self.files:
            raise ValueError("a project that starts from files needs files")
        if self.defect and self.start != "files":
            raise ValueError("only a project that starts from files can carry an injected defect")
        return self
