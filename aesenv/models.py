"""Every model-backed role, chosen by one spec string: `offline` (deterministic, free, no server)
or `openai:<model>` (a model behind an OpenAI-compatible endpoint).

Six roles take such a spec (who judges a page, a plot, a project; who acts on a page; who plays
the Webdev user and grades its acceptance). They used to be six registries with six factories;
here they are one table, `ROLES`, whose backends are string entry points imported on first use, so
naming a role loads no kind, no browser and no SDK. A plugin adds a backend to a role with
`ROLES["page_judge"].backends.register("mine")(factory)`.

`JudgeSpec` is a judge's spec with its sampling and endpoint settings, parsed in one place for
the command line, the benchmark runners and the training config.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aesenv.registry import Registry
from aesenv.specs import build_from_spec, parse_spec

# An open VLM a user can serve with vLLM (`vllm serve Qwen/Qwen2.5-VL-7B-Instruct`) and reach
# through OPENAI_BASE_URL; any `openai:<model>` spec replaces it.
DEFAULT_VLM_JUDGE = "openai:Qwen/Qwen2.5-VL-7B-Instruct"
JUDGE_ENV = "AESENV_JUDGE"


@dataclass(frozen=True)
class ModelRole:
    """One job a model can do, and the backends that can do it: `backends[name](argument, *args,
    **options)` builds one from the spec `name:argument`."""

    name: str
    what: str
    backends: Registry[Callable[..., Any]]

    def build(self, spec: str, *args: Any, **options: Any) -> Any:
        """The `spec` backend of this role; an unknown backend is a `ValueError` naming the known ones."""
        return build_from_spec(self.backends, spec, *args, **options)


ROLES: Registry[ModelRole] = Registry("model role")


def model_role(name: str, what: str, **entry_points: str) -> ModelRole:
    """Register a role with its backends as `"module:attribute"` entry points (loaded on first use)."""
    backends: Registry[Callable[..., Any]] = Registry(what)
    for backend, target in entry_points.items():
        backends.register_lazy(backend, target)
    role = ModelRole(name, what, backends)
    ROLES.register(name)(role)
    return role


PAGE_JUDGE = model_role("page_judge", "page judge",
                        offline="aesenv.kinds.web.judges:offline_page_judge",
                        openai="aesenv.kinds.web.judges.vlm:openai_judge")
PLOT_JUDGE = model_role("plot_judge", "plot judge",
                        offline="aesenv.kinds.plot.judges:offline_plot_judge",
                        openai="aesenv.kinds.plot.vlm:openai_plot_judge")
PROJECT_JUDGE = model_role("project_judge", "project judge",
                           offline="aesenv.kinds.project.judge:offline_project_judge",
                           openai="aesenv.kinds.project.judge:openai_project_judge")
INTERACTOR = model_role("interactor", "interaction agent",
                        offline="aesenv.interact.agents:offline_interactor",
                        openai="aesenv.interact.agents:openai_interactor")
WEBDEV_USER = model_role("webdev_user", "webdev user",
                         offline="aesenv.webdev.gate:OfflineUser",
                         openai="aesenv.webdev.gate:ChatUser")
WEBDEV_GRADER = model_role("webdev_grader", "webdev grader",
                           offline="aesenv.webdev.graders:CheckGrader",
                           openai="aesenv.webdev.graders:VlmGrader")


def default_judge() -> str:
    """The judge of training and benchmark configs: `$AESENV_JUDGE`, else `DEFAULT_VLM_JUDGE`."""
    return os.environ.get(JUDGE_ENV) or DEFAULT_VLM_JUDGE


class JudgeSpec(BaseModel):
    """A judge as a run names it: the spec, and for a model judge how many answers it samples
    (the median scores) and where it is served (else OPENAI_BASE_URL). `settings`: any other
    client setting (timeouts, the key's variable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = "offline"
    samples: int | None = Field(default=None, ge=1)
    base_url: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)

    @property
    def backend(self) -> str:
        return parse_spec(self.spec)[0]

    @property
    def offline(self) -> bool:
        return self.backend == "offline"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> JudgeSpec:
        """From the arguments `add_judge_args` declares."""
        return cls(spec=args.judge, samples=getattr(args, "judge_samples", None),
                   base_url=getattr(args, "judge_base_url", None))

    def options(self) -> dict[str, Any]:
        """The keyword options the judge's backend is built with (what `PipelineConfig.judge_options` holds)."""
        given = {"samples": self.samples, "base_url": self.base_url or None}  # "" is unset, as None is
        return {**self.settings, **{key: value for key, value in given.items() if value is not None}}

    def problem(self, role: ModelRole = PAGE_JUDGE) -> str | None:
        """Why this judge cannot work on this machine as configured (None when it can): a model
        judge with no endpoint and no key would send every item to api.openai.com and mask them all."""
        name, model = parse_spec(self.spec)
        if name not in role.backends:
            return f"unknown {role.what} {self.spec!r}; available: {list(role.backends)}"
        if name != "openai":
            return None
        if not model:
            return f"a model {role.what} needs a model: openai:<model>"
        if self.base_url or self.settings.get("base_url") or os.environ.get("OPENAI_BASE_URL") \
                or os.environ.get("OPENAI_API_KEY"):
            return None
        return (f"judge {self.spec} has no endpoint: set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for "
                f"`vllm serve {model}`) or OPENAI_API_KEY, pass --judge-base-url, or choose another judge "
                f"with --judge / ${JUDGE_ENV} (`offline` only for tests and smoke runs)")


def add_judge_args(parser: argparse.ArgumentParser, *, default: str | None = "offline") -> None:
    """`--judge`, `--judge-base-url`, `--judge-samples`: one set of flags for every command that judges
    (`JudgeSpec.from_args` reads them back). `default=None`: the training/benchmark default, a VLM."""
    chosen = default if default is not None else default_judge()
    parser.add_argument("--judge", default=chosen,
                        help="offline (a deterministic proxy for tests and smoke runs) or openai:<model> "
                             "(a VLM over the OpenAI-compatible API); default %(default)s")
    parser.add_argument("--judge-base-url", help="OpenAI-compatible endpoint for openai:<model> "
                                                 "(default OPENAI_BASE_URL; e.g. a vLLM server)")
    parser.add_argument("--judge-samples", type=int,
                        help="ask the VLM judge k times per item: median scores, and mean ± CI in summaries")


__all__ = ["DEFAULT_VLM_JUDGE", "INTERACTOR", "JUDGE_ENV", "PAGE_JUDGE", "PLOT_JUDGE", "PROJECT_JUDGE", "ROLES",
           "WEBDEV_GRADER", "WEBDEV_USER", "JudgeSpec", "ModelRole", "add_judge_args", "default_judge",
           "model_role"]
