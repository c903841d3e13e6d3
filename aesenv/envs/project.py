"""`AesWebProject-v0`: WebCoder's Webdev-World, a refine env over a multi-file React + Vite project.

The workspace starts from the project kind's scaffold with the task's files laid over it and
persists between steps in the env (its sources only: what the build, npm or Vite generate,
`node_modules` and `dist/` among them, never enters it). Every `run` and `webshot` gets a fresh
sandbox workspace holding those sources with `node_modules` linked to the read-only React + Vite
install, so nothing a command starts (a dev server, a watcher) survives its call.

Tools: list_files, view_file, write_file, edit_file, search_files, a bounded shell `run`,
`webshot` (build, serve, open in the hermetic browser), `skill` (our procedural guidance) and
`submit`. Φ is a ledger of per-requirement scores updated only by the agent's own `webshot`s (a
lower score replaces a higher one: the ledger records what the agent last saw), count checks
left out; Φ = Σ wᵢ φᵢ is in `info` after every step with the ledger. A reproduction task
without requirements uses the source-authoring score of the last webshot. The final workspace is
rebuilt and scored by the verifier independently of the conversation; an episode that ran out
of wall time loses 0.1 (`WallBudgetPenalty`).

The env is the refine env composed with the project's toolset (`PROJECT_TOOLSET`) and Φ
(`RequirementLedger`), wrapped in the wall-budget penalty: `make_project_env`. It is the one
piece of the project kind outside `aesenv/kinds/project/`: it composes `aesenv.envs.refine`,
which sits above the kinds (envs read the kind registry), so a kind package cannot import it
without a folder cycle (`tests/test_layering.py`); the kind names it by entry point (`Kind.envs`).
"""

from __future__ import annotations

from typing import Any

from aesenv.envs.base import EnvMaker, TaskSource
from aesenv.envs.refine import (REFINE_TOOLSET, SUBMIT_ENDS, AsyncRefineEnv, EndRule, Outcome, RefineBudget, RefineEnv)
from aesenv.envs.tools import REFINE_TOOL_SPECS, ToolCall, ToolError, ToolSpecs, text_form_help
from aesenv.envs.wrappers import WallBudgetPenalty
from aesenv.kinds.base import Kind, Look
from aesenv.kinds.project.kind import PROJECT, potential_of
from aesenv.kinds.project.build import generated
from aesenv.kinds.project.skills import SKILLS, skill_text
from aesenv.quoting import OBSERVATION_GUARD
from aesenv.tasks import Task
from aesenv.text import shown

WALL_BUDGET_PENALTY = 0.1
MAX_SEARCH_HITS = 100

PROJECT_TOOL_SPECS: ToolSpecs = {
    "list_files": ("List the project's files (sources only: node_modules and dist are not part of it) with sizes.",
                   {}),
    "view_file": REFINE_TOOL_SPECS["view_file"],
    "write_file": ("Create or overwrite a file in the project.",
                   {"path": "relative path, e.g. src/components/Nav.jsx", "content": "the whole file"}),
    "edit_file": REFINE_TOOL_SPECS["edit_file"],
    "search_files": ("Find a text (exact, case-sensitive) in the project's files: each matching line as "
                     "path:line: text.", {"pattern": "the text to find"}),
    "run": ("Run a shell command in a copy of the project (no network; `npm run build` works; node_modules is "
            "read-only and holds react, react-dom and vite). Source files it creates or changes are copied back; "
            "nothing it starts outlives the call.", {"command": "the shell command"}),
    "webshot": ("Build the project with Vite, serve the build and open it in a headless browser: a screenshot, DOM "
                "statistics, console and page errors, failed requests, in-page links without a target, and the "
                "tail of the build log.", {}),
    "skill": (f"Procedural guidance for one step of the work: {', '.join(SKILLS)}.", {"name": "the skill's name"}),
    "submit": REFINE_TOOL_SPECS["submit"],
}


# WebCoder's sessions run a median of 153 turns (its rollouts fill a 116,736-token window): the
# project budget leaves room for well over that, so the budget is not what ends a paper-length session.
PROJECT_MAX_TURNS = 400
PROJECT_MAX_WALL_S = 4 * 3600.0


def project_budget() -> RefineBudget:
    """More turns and time than a page: builds take seconds, and projects take many more edits."""
    return RefineBudget(max_turns=PROJECT_MAX_TURNS, max_wall_s=PROJECT_MAX_WALL_S, run_timeout_s=60.0)


def project_system_prompt(kind: Kind, specs: ToolSpecs) -> str:
    return (f"You develop {kind.asking.workspace_brief}. Work with the tools: read the project, write and edit "
            "its files, call webshot to build it and see the served app (and any build or page errors), fix "
            "what is wrong, and call submit when every requirement is met. Only the project at submit is "
            "scored: it is rebuilt, served and checked, and it must build and render.\n\nIf you cannot call "
            f"tools natively, write exactly one tool call per message in this form:\n\n"
            f"{text_form_help(specs)}\n\n{OBSERVATION_GUARD}")


def project_modules(env: AsyncRefineEnv) -> dict[str, str]:
    """A `run` gets the read-only React + Vite install as its node_modules."""
    modules = env.pipeline.sandbox.runtime_path("project_modules")
    if modules is None:
        raise ToolError("the project packages are not installed on our side (run `aesenv setup`); "
                        "this is not caused by your call")
    return {"node_modules": modules}


async def list_files(env: AsyncRefineEnv, call: ToolCall) -> Outcome:
    return Outcome(call, "\n".join(f"{p} ({len(b)} B)" for p, b in sorted(env.workspace.files.items())) or "(empty)")


async def search_files(env: AsyncRefineEnv, call: ToolCall) -> Outcome:
    pattern = call.arguments["pattern"]
    if not pattern:
        raise ToolError("search_files: the pattern is empty")
    hits = []
    for path, data in sorted(env.workspace.files.items()):
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if pattern in line:
                hits.append(f"{path}:{number}: {shown(line.strip(), 200)}")
    more = f"\n… and {len(hits) - MAX_SEARCH_HITS} more" if len(hits) > MAX_SEARCH_HITS else ""
    return Outcome(call, "\n".join(hits[:MAX_SEARCH_HITS]) + more if hits else f"no file contains {pattern!r}")


async def skill(env: AsyncRefineEnv, call: ToolCall) -> Outcome:
    try:
        return Outcome(call, skill_text(call.arguments["name"].strip()))
    except KeyError:
        raise ToolError(f"no skill {shown(call.arguments['name'])!r}; skills: {', '.join(SKILLS)}") from None


# The refine tools minus `render`, plus the project's own; `webshot` is the project's look.
PROJECT_TOOLSET = REFINE_TOOLSET.with_tools(
    PROJECT_TOOL_SPECS, {"list_files": list_files, "search_files": search_files, "webshot": AsyncRefineEnv.look,
                         "skill": skill},
    system_prompt=project_system_prompt, run_links=project_modules, run_keeps=lambda path: not generated(path))


class RequirementLedger:
    """Φ = Σ wᵢ φᵢ over a ledger of per-requirement scores that only the agent's own webshots
    update (a lower score replaces a higher one: the ledger holds what the agent last saw); the
    ledger is in every step's info. A task without requirements uses the kind's Φ of the look
    (the source-authoring score)."""

    name = "requirement-ledger"

    def __init__(self) -> None:
        self.ledger: dict[str, float] = {}

    def reset(self, task: Task) -> None:
        self.ledger = {}

    def start(self, task: Task, look: Look) -> float:
        """Φ of the starting workspace: its requirements as a look measures them (the ledger
        itself stays empty: it holds what the agent's own webshots showed)."""
        if task.project is None or not task.project.requirements:
            return look.potential
        return potential_of(task, look.measures)

    def after(self, task: Task, look: Look) -> float:
        if task.project is None or not task.project.requirements:
            return look.potential
        self.ledger.update(look.measures)
        return potential_of(task, self.ledger)

    def info(self) -> dict[str, Any]:
        return {"ledger": dict(self.ledger)}


def make_project_env(tasks: TaskSource | None = None, *, kind: str = PROJECT.name, budget: RefineBudget | None = None,
                     end_rule: EndRule = SUBMIT_ENDS, wall_penalty: float = WALL_BUDGET_PENALTY,
                     **options: Any) -> WallBudgetPenalty:
    """The project env's async core: the refine env with the project's tools and requirement
    ledger, Φ from the agent's own webshots only (no look at the end), and the wall-budget
    penalty. `options` are the refine env's (pipeline, config, opening, score_at_end)."""
    core = AsyncRefineEnv(tasks, kind=kind, budget=budget or project_budget(), toolset=PROJECT_TOOLSET,
                          end_rule=end_rule, potential=RequirementLedger(), measure_at_end=False, **options)
    return WallBudgetPenalty(core, wall_penalty)


class ProjectEnv(RefineEnv):
    """The Gymnasium facade of the project env (as `RefineEnv` is of the refine core)."""

    core_class = staticmethod(make_project_env)


project_env = EnvMaker(ProjectEnv)  # the project id's entry point
