"""Refine envs (`AesWebRefine-v0`, `AesPlotRefine-v0`, one per kind): multi-turn episodes over a
persistent workspace.

The policy writes files, renders them, reads what went wrong, edits, and submits (WebCoder's
generate-inspect-repair loop). The env keeps the workspace between steps; what the workspace
starts with, its entry file, and what a `render` shows are the task kind's (`aesenv.kinds`: a
page renders from `index.html` with every other file served next to it; a plot task's `main.py`
runs in the sandbox beside the task's data files), through `RewardPipeline.inspect`. Actions are tool calls (`aesenv.envs.tools`): native OpenAI function calls or the
text form. Observations are chat messages: text, plus the screenshot or figures after a render
(and the task's reference with the first prompt, `AsyncKindEnv.with_reference`).

Untrusted input never escapes `step` as an exception: a malformed action is an `ActionError`
observation, a tool call that cannot be carried out a `ToolError` one. Every file name entering
the workspace passes one check (`tools.path_problem`): from a tool argument, and for what a `run`
leaves, at `Workspace.take`, where names that are not UTF-8, absolute or `..` paths, links and
other non-regular files, and files over the size and count bounds are skipped and listed with
the reason. A `run`'s stdout and stderr are kept up to `run_max_output_bytes` each and cut in
the observation (start and end kept, with a marker). Plot figures the sandbox hands back are
checked on the host as every sandbox run's are (`plots.evidence.screen`: a plotly figure 1e400 px
wide, or with unreadable JSON, is the answer's failed figure). Observations never hold lone surrogates.

Budgets: `RefineBudget` (turns, wall time, observation size). Reward is 0.0 until the episode
ends (submit, or a budget), then the workspace goes through `RewardPipeline.score` exactly like a
single-turn answer: NaN with `info["reward_valid"]` False when our infrastructure failed.

Per-step potential Φ (for credit assignment): after each render, the kind's cheap Φ of the
result (`Kind.reader.potential`); carried forward between renders, with ΔΦ, in `info`. If the workspace
changed after the last render, Φ is measured once more when the episode ends. Φ is 0 before the
first render; `info["start_potential"]` is what the starting workspace is worth, known at reset
(0 when it is empty; otherwise one look at it, taken once per distinct start and cached:
`StartPotentials`; None only when that look failed on our side), where segment credit starts.

Variants are composed, not subclassed: a `Toolset` (the tools, their handlers, the system prompt
that explains them), an `EndRule` (what `submit` does and whether a turn ends the episode), a
`Potential` (what Φ a look is worth), and flags for measuring Φ at the end and scoring at all.
The project env (`aesenv.envs.project.make_project_env`) is this env with the project's toolset
and requirement ledger; Webdev-Bench's session drives it with a delivery end rule and no final
score; the wall-budget penalty is a wrapper (`aesenv.envs.wrappers.WallBudgetPenalty`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, Field

from aesenv.artifact import MAX_ARTIFACT_BYTES
from aesenv.envs.base import AsyncKindEnv, EnvMaker, KindEnv, TaskSource, deterministic_view, utf8_clean
from aesenv.envs.spaces import UnicodeText
from aesenv.envs.tools import (REFINE_TOOL_SPECS, ActionError, Intake, ToolCall, ToolError, ToolSpecs, Workspace,
                               parse_action, parse_text_action, shown, text_form_help, tool_schemas)
from aesenv.kinds.base import Kind, Look
from aesenv.llm.client import image_part
from aesenv.memo import AsyncMemo, PerOwner
from aesenv.quoting import OBSERVATION_GUARD
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.sandbox import CommandRun, RunStatus, SandboxLimits
from aesenv.tasks import Task
from aesenv.text import MAX_LISTED, clip, listing, truncate

__all__ = ["REFINE_TOOLSET", "SUBMIT_ENDS", "AsyncRefineEnv", "EndRule", "KindPotential", "Potential", "RefineBudget",
           "RefineEnv", "Toolset", "ending", "parse_text_action", "refine_env", "truncate"]

log = logging.getLogger(__name__)


class RefineBudget(BaseModel):
    max_turns: int = Field(16, ge=1)
    max_wall_s: float = Field(900.0, gt=0)
    max_observation_chars: int = Field(12_000, ge=200)  # text of one observation; images counted apart
    max_images: int = Field(4, ge=0)  # per observation (a plot may draw several figures)
    run_timeout_s: float = Field(20.0, gt=0)  # the `run` tool's wall-clock limit
    # the `run` tool's stdout and stderr, each: what the sandbox keeps (the observation shows a
    # part of it); beyond it the command is stopped (its files up to then still come back)
    run_max_output_bytes: int = Field(4_000_000, gt=0)
    max_calls_per_turn: int = Field(16, ge=1)  # tool calls run per message; the rest are answered unrun


def refine_system_prompt(kind: Kind, specs: ToolSpecs) -> str:
    return (f"You build {kind.asking.workspace_brief}. Work in the workspace with tools: write {kind.entry}, render it to "
            "see the result (and any errors), fix problems with edit_file, and call submit when it is good. Only "
            "the workspace at submit is scored, and it must render.\n\nIf you cannot call tools natively, write "
            f"exactly one tool call per message in this form:\n\n{text_form_help(specs)}\n\n{OBSERVATION_GUARD}")


def _describe_run(run: CommandRun, intake: Intake, budget: int) -> str:
    """A `run` for the policy within about `budget` characters: how it ended, what came back and
    what did not (and why), then its output, each stream cut to an equal share of what is left
    (its start and end kept; the sandbox's own cut said too)."""
    status = f"{run.status.value}{': ' + run.reason if run.reason else ''}"
    lines = [f"exit code: {run.exit_code} ({status})", f"files changed: {listing(intake.changed) or 'none'}"]
    if intake.skipped:
        lines.append(f"files not copied back ({len(intake.skipped)}):")
        lines += [f"  '{s.name}': {s.why}" for s in intake.skipped[:MAX_LISTED]]
        if len(intake.skipped) > MAX_LISTED:
            lines.append(f"  … and {len(intake.skipped) - MAX_LISTED} more")
    share = max(200, (budget - sum(len(line) + 1 for line in lines) - 300) // 2)
    streams = (("stdout", run.stdout, run.stdout_truncated), ("stderr", run.stderr, run.stderr_truncated))
    for label, text, cut in streams:
        note = " (the sandbox kept only its start: the output went over the limit)" if cut else ""
        size = f" ({len(text)} characters, shown in part)" if len(text) > share else ""
        lines.append(f"{label}{size}{note}:\n{clip(text, share)}")
    return "\n".join(lines)


@dataclass
class Outcome:
    """What one tool call produced, before it becomes chat messages."""

    call: ToolCall | None
    text: str
    images: list[bytes] = field(default_factory=list)
    error: str = ""

    def summary(self) -> dict[str, Any]:
        return {"name": self.call.name if self.call else None, "ok": not self.error, "error": utf8_clean(self.error)}


Handler = Callable[["AsyncRefineEnv", ToolCall], Awaitable[Outcome]]


def ending(end: str, reward: float) -> str:
    """The line that closes an episode's last observation."""
    return f"[Episode ended ({end}). Final reward: {reward}]"


@dataclass(frozen=True)
class Toolset:
    """What an agent may call in a refine workspace: the tools' specs (names, descriptions,
    arguments), their handlers, the system prompt that explains them, and how the `run` tool
    treats the workspace (links it gets, which files it leaves are kept)."""

    specs: ToolSpecs
    handlers: Mapping[str, Handler]
    system_prompt: Callable[[Kind, ToolSpecs], str] = refine_system_prompt
    run_links: Callable[["AsyncRefineEnv"], dict[str, str]] = lambda env: {}
    run_keeps: Callable[[str], bool] = lambda path: True

    def __post_init__(self) -> None:
        missing = sorted(set(self.specs) - set(self.handlers) - {"submit"})
        if missing:
            raise ValueError(f"toolset: no handler for {missing}")

    def with_tools(self, specs: ToolSpecs, handlers: Mapping[str, Handler], **changes: Any) -> Toolset:
        """This toolset with other specs (their order is the order the model sees) and more handlers;
        a tool the new specs leave out loses its handler."""
        merged = {**self.handlers, **handlers}
        return dataclasses.replace(self, specs=specs, handlers={name: merged[name] for name in specs if name in merged},
                                   **changes)


@dataclass(frozen=True)
class EndRule:
    """What `submit` answers and whether a turn's outcomes end the episode."""

    name: str
    submit: Handler
    ends: Callable[[list[Outcome]], bool]


def accepted_submit(outcomes: list[Outcome]) -> bool:
    return any(o.call and o.call.name == "submit" and not o.error for o in outcomes)


async def _submit(env: AsyncRefineEnv, call: ToolCall) -> Outcome:
    """Always ends the episode (a trainer may force it): without the entry file the answer is
    empty and scores as a failure, like a single-turn answer with no code."""
    if env.entry not in env.workspace.files:
        return Outcome(call, f"Submitted without {env.entry}: there is nothing to render.")
    return Outcome(call, "Submitted.")


SUBMIT_ENDS = EndRule("submit", _submit, accepted_submit)


class Potential(Protocol):
    """Φ of what the agent saw: of the starting workspace (`start`, cached per start) and after
    each look (`after`); `info` is what the env adds to each step's info."""

    name: str

    def reset(self, task: Task) -> None: ...

    def start(self, task: Task, look: Look) -> float: ...

    def after(self, task: Task, look: Look) -> float: ...

    def info(self) -> dict[str, Any]: ...


class KindPotential:
    """The kind's own Φ of each look (`Look.potential`)."""

    name = "kind"

    def reset(self, task: Task) -> None:
        pass

    def start(self, task: Task, look: Look) -> float:
        return look.potential

    def after(self, task: Task, look: Look) -> float:
        return look.potential

    def info(self) -> dict[str, Any]:
        return {}


class StartPotentials(PerOwner):
    """Φ of starting workspaces, content-addressed (the kind, the task, the files) and kept per
    pipeline, so a task's start is looked at once however many rollouts and epochs reset to it;
    concurrent resets of one start wait for the same look. A failed look is not kept."""

    size = 4096

    def __init__(self) -> None:
        self._memo: AsyncMemo[float | None] = AsyncMemo(self.size, keep=lambda value: value is not None)

    @property
    def looks(self) -> int:
        """Looks taken (cache misses), for tests and reports."""
        return self._memo.computed

    @staticmethod
    def key(kind: str, task: Task, fingerprint: str, potential: str = KindPotential.name) -> str:
        return hashlib.sha256(f"{kind}\n{potential}\n{task.model_dump_json()}\n{fingerprint}".encode()).hexdigest()

    async def get(self, key: str, measure: Callable[[], Awaitable[float | None]]) -> float | None:
        return await self._memo.get(key, measure)


class AsyncRefineEnv(AsyncKindEnv):
    """The async core (for veRL agent loops): `await reset(task=...)`, `await step(action)`."""

    mode = "refine"

    def __init__(self, tasks: TaskSource | None = None, *, kind: str | Kind, pipeline: RewardPipeline | None = None,
                 config: PipelineConfig | None = None, budget: RefineBudget | None = None,
                 toolset: Toolset | None = None, end_rule: EndRule = SUBMIT_ENDS, potential: Potential | None = None,
                 opening: Callable[[Task], str] | None = None, measure_at_end: bool = True,
                 score_at_end: bool = True) -> None:
        """`toolset`: what the agent may call (`REFINE_TOOLSET`); `end_rule`: what submit does;
        `potential`: Φ of a look (the kind's); `opening`: the first user message (the kind's
        single-turn request); `measure_at_end`: look once more at the end when the workspace
        changed since the last look; `score_at_end`: score the final workspace (off: the reward is
        NaN, `status` "not scored", for a session that judges deliveries itself)."""
        super().__init__(tasks, kind=kind, pipeline=pipeline, config=config)
        self.entry = self.kind.entry
        self.budget = budget or RefineBudget()
        self.toolset = toolset or REFINE_TOOLSET
        self.end_rule = end_rule
        self.potential = potential or KindPotential()
        self.opening = opening or self.kind.request
        self.measure_at_end = measure_at_end
        self.score_at_end = score_at_end
        self.workspace = Workspace()
        self.last_image: bytes | None = None  # the latest screenshot or figure, for `render()`
        self._turn = 0
        self._potential = 0.0
        self._measured: str | None = None  # the workspace fingerprint Φ was last measured on
        self._start: tuple[str, float | None] = ("", 0.0)  # the starting workspace's fingerprint and Φ
        self._started = 0.0
        self._done = True
        self.tools: list[dict] = tool_schemas(self.toolset.specs)
        self._handlers: dict[str, Handler] = {**self.toolset.handlers, "submit": end_rule.submit}

    def first_turn(self, task: Task) -> list[dict]:
        """System prompt (tools and the text form) and the opening request as the user turn
        (`reset` attaches the task's reference to it)."""
        return [{"role": "system", "content": self.toolset.system_prompt(self.kind, self.toolset.specs)},
                {"role": "user", "content": self.opening(task)}]

    def screen(self) -> bytes | None:
        return self.last_image

    async def reset(self, *, task: Task | str | None = None, seed: int | None = None) -> tuple[list[dict], dict]:
        chosen = self.pick(np.random.default_rng(seed), None if task is None else {"task": task})
        self.task, self.last, self.last_image = chosen, None, None
        self.potential.reset(chosen)
        self.workspace = Workspace(self.kind.initial_files(chosen))
        self._turn, self._potential, self._measured, self._done = 0, 0.0, None, False
        self._sight = ""
        # An empty start is worth 0; a start with its entry file is worth what a look at it shows,
        # measured now, before the first action (once per distinct start: `StartPotentials`), so
        # segment credit always has Φ_0. None only when that look failed on our side; then the
        # agent's first look at the unchanged workspace still fills it in.
        start = await self._measure_start() if self.entry in self.workspace.files else 0.0
        self._start = (self.workspace.fingerprint(), start)
        messages = self.first_turn(chosen)
        messages[-1] = await self.with_reference(messages[-1], chosen)
        self._started = time.monotonic()  # after the start's look and the reference's render: our time
        return messages, {"task_id": chosen.id, "task": chosen.model_dump(mode="json"),
                          "potential": 0.0, "start_potential": self._start[1],
                          "tools": [t["function"]["name"] for t in self.tools], **self.potential.info()}

    async def _measure_start(self) -> float | None:
        """Φ of the starting workspace from the cache, or one look at it (not shown to the agent)."""
        task, files = self.task, dict(self.workspace.files)
        key = StartPotentials.key(self.kind.name, task, self.workspace.fingerprint(), self.potential.name)

        async def measure() -> float | None:
            code = files[self.entry].decode("utf-8", "replace")
            others = {p: b for p, b in files.items() if p != self.entry}
            try:
                look = await self.pipeline.inspect(task, code, others, budget_chars=self.budget.max_observation_chars)
            except Exception:  # noqa: BLE001 - our side failed: unknown, never a 0
                log.exception("refine env: measuring the starting workspace failed")
                return None
            return None if look.problem else self.potential.start(task, look)

        return await StartPotentials.of(self.pipeline).get(key, measure)

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        if self.task is None or self._done:
            raise gym.error.ResetNeeded("call reset() before step() (the episode has ended)")
        self._turn += 1
        before = self._potential
        try:
            calls = parse_action(action, self.toolset.specs)
        except Exception as exc:  # noqa: BLE001 - no action may take the episode down
            log.exception("refine env: parsing an action failed")
            calls = ActionError(f"the action could not be read ({type(exc).__name__})")
        outcomes: list[Outcome] = []
        if isinstance(calls, ActionError):
            outcomes.append(Outcome(None, f"Invalid action: {calls.message}", error=calls.message))
        else:
            cap = self.budget.max_calls_per_turn
            for index, call in enumerate(calls):
                if outcomes and outcomes[-1].call and outcomes[-1].call.name == "submit":
                    outcomes.append(Outcome(call, "Not run: the episode was submitted.", error="after submit"))
                    continue
                if index >= cap:
                    outcomes.append(Outcome(call, f"Not run: at most {cap} tool calls are run per message.",
                                            error="over the per-message call limit"))
                    continue
                outcomes.append(await self._execute(call))
        submitted = self.end_rule.ends(outcomes)
        truncated_by = None
        if not submitted:
            if self._turn >= self.budget.max_turns:
                truncated_by = "max_turns"
            elif time.monotonic() - self._started >= self.budget.max_wall_s:
                truncated_by = "max_wall_s"
        info: dict[str, Any] = {"turn": self._turn, "tool_results": [o.summary() for o in outcomes]}
        reward = 0.0
        if submitted or truncated_by:
            self._done = True
            reward, final_info = await self._final_score()
            info.update(final_info, end="submit" if submitted else truncated_by)
            outcomes.append(Outcome(None, ending(info["end"], reward)))
        info["potential"] = self._potential
        info["delta_potential"] = round(self._potential - before, 6)
        info["start_potential"] = self._start[1]
        info.update(self.potential.info())
        return self._messages(outcomes), reward, submitted, truncated_by is not None, info

    async def _execute(self, call: ToolCall) -> Outcome:
        if call.problem:
            return Outcome(call, f"Invalid tool call: {call.problem}", error=call.problem)
        try:
            return await self._handlers[call.name](self, call)
        except ToolError as exc:
            return Outcome(call, f"Error: {exc}", error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a tool call never takes the episode down
            log.exception("refine env: %s failed on our side", call.name)
            why = f"internal error: {type(exc).__name__}: {shown(str(exc), 300)}"
            return Outcome(call, f"Error: the env failed on its side while running {call.name} ({why}); "
                           "this is not caused by your call; try again", error=why)

    async def write_file(self, call: ToolCall) -> Outcome:
        name = self.workspace.write(call.arguments["path"], call.arguments["content"])
        return Outcome(call, f"Wrote {name} ({len(self.workspace.files[name])} bytes).")

    async def edit_file(self, call: ToolCall) -> Outcome:
        args = call.arguments
        name = self.workspace.edit(args["path"], args["old"], args["new"])
        return Outcome(call, f"Edited {name}: replaced 1 occurrence ({len(self.workspace.files[name])} bytes now).")

    async def view_file(self, call: ToolCall) -> Outcome:
        return Outcome(call, self.workspace.read(call.arguments["path"]))

    async def run(self, call: ToolCall) -> Outcome:
        limits = SandboxLimits(timeout_s=self.budget.run_timeout_s, max_output_bytes=self.budget.run_max_output_bytes)
        run = await self.pipeline.execute(["/bin/sh", "-c", call.arguments["command"]],
                                          dict(self.workspace.files), limits, links=self.toolset.run_links(self))
        if run.status is RunStatus.INFRA_ERROR:
            raise ToolError(f"the sandbox failed on our side ({run.reason}); try again")
        keeps = self.toolset.run_keeps
        intake = self.workspace.take({p: b for p, b in run.files_out.items() if keeps(p)},
                                     {p: w for p, w in run.files_skipped.items() if keeps(p)}, first=self.entry)
        text = _describe_run(run, intake, self.budget.max_observation_chars)
        return Outcome(call, text, error="" if run.ok else f"command {run.status.value}")

    async def look(self, call: ToolCall) -> Outcome:
        """`render` (a page or plot) or `webshot` (a built project): the workspace as the kind shows it."""
        text, images = await self._look()
        self._measured = self.workspace.fingerprint()
        return Outcome(call, text, images=images)

    async def _look(self) -> tuple[str, list[bytes]]:
        """Look at the workspace as the kind shows it; set Φ and `last_image`."""
        code = self.workspace.read(self.entry)
        others = {p: b for p, b in self.workspace.files.items() if p != self.entry}
        look = await self.pipeline.inspect(self.task, code, others, budget_chars=self.budget.max_observation_chars)
        if look.problem:
            raise ToolError(look.problem)
        # Φ measures what a person would see: a look that captured the very pixels of the last one
        # shows nothing new, whatever its code changed (ΔΦ = 0; an edit no one sees earns no credit).
        if not (look.sight and look.sight == self._sight):
            self._potential = self.potential.after(self.task, look)
        self._sight = look.sight
        if self._start[1] is None and self.workspace.fingerprint() == self._start[0]:
            self._start = (self._start[0], self._potential)
        self.last_image = look.images[0] if look.images else None
        return look.text, look.images

    async def _final_score(self) -> tuple[float, dict[str, Any]]:
        """The workspace through the one pipeline, like a single-turn answer."""
        if not self.score_at_end:
            return math.nan, {"record": None, "status": "not scored", "reward_valid": False, "failure": ""}
        entry = self.workspace.files.get(self.entry, b"")
        others = {p: b for p, b in self.workspace.files.items() if p != self.entry}
        if (self.measure_at_end and self._measured != self.workspace.fingerprint()
                and self.entry in self.workspace.files):
            try:
                await self._look()
            except ToolError:  # our render failed: Φ stays carried forward
                pass
            except Exception:  # noqa: BLE001 - the same, for a failure we did not foresee
                log.exception("refine env: measuring the final workspace failed")
        try:
            scored = await self.pipeline.score(self.task, entry, files=others)
        except Exception as exc:  # noqa: BLE001 - the pipeline never raises for an answer: this is ours
            log.exception("refine env: scoring the workspace failed")
            reason = f"scoring failed on our side: {type(exc).__name__}: {shown(str(exc), 300)}"
            return math.nan, {"record": None, "status": "infra_error", "reward_valid": False, "failure": "",
                              "error": reason}
        self.last = scored
        value = scored.record.selected_reward
        return (math.nan if value is None else float(value)), {
            "record": deterministic_view(scored.record), "status": scored.record.status,
            "reward_valid": value is not None, "failure": scored.record.failure}

    def _messages(self, outcomes: list[Outcome]) -> list[dict]:
        """Tool results as chat messages: a `tool` message answers each native call (by id); the
        rest (text-form results, errors, the episode's end) and any images (tool messages carry
        text only) follow in one user message."""
        limit = self.budget.max_observation_chars // max(1, len(outcomes))
        image_parts = [image_part(img) for o in outcomes for img in o.images][: self.budget.max_images]
        messages = [{"role": "tool", "tool_call_id": utf8_clean(o.call.id),
                     "content": utf8_clean(truncate(o.text, limit))} for o in outcomes if o.call and o.call.id]
        rest = [o for o in outcomes if not (o.call and o.call.id)]
        text = utf8_clean("\n\n".join(truncate(f"[{o.call.name}] {o.text}" if o.call else o.text, limit)
                                      for o in rest))
        if image_parts:
            messages.append({"role": "user", "content": [{"type": "text", "text": text or "Rendered result:"},
                                                         *image_parts]})
        elif text:
            messages.append({"role": "user", "content": text})
        return messages


REFINE_TOOLSET = Toolset(REFINE_TOOL_SPECS, {
    "write_file": AsyncRefineEnv.write_file, "edit_file": AsyncRefineEnv.edit_file,
    "view_file": AsyncRefineEnv.view_file, "render": AsyncRefineEnv.look, "run": AsyncRefineEnv.run})


def as_text(messages: list[dict]) -> str:
    """Chat messages flattened to text (images as `[image]`): the Gymnasium observation."""
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") if p.get("type") == "text" else "[image]" for p in content)
        parts.append(f"[{m['role']}]\n{content or ''}")
    return "\n\n".join(parts)


class RefineEnv(KindEnv):
    """Gymnasium facade: the observation is the new chat messages as text (images as `[image]`);
    the messages themselves, images included, are `info["messages"]`. The action is the
    assistant's message text in the text form."""

    mode = "refine"
    core_class = AsyncRefineEnv
    default_step_timeout_s = 1200.0
    max_observation_length = 300_000

    def __init__(self, tasks: TaskSource | None = None, *, kind: str, budget: RefineBudget | dict | None = None,
                 **options: Any) -> None:
        if isinstance(budget, dict):
            budget = RefineBudget(**budget)
        super().__init__(tasks, kind=kind, budget=budget, **options)
        self.observation_space = UnicodeText(max_length=self.max_observation_length)
        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        gym.Env.reset(self, seed=seed)
        task = self._core.pick(self.np_random, options)
        messages, info = self._run(self._core.reset(task=task))
        return self._observation(messages), {**info, "messages": messages}

    def step(self, action: str | dict):
        messages, reward, terminated, truncated, info = self._run(self._core.step(action))
        return self._observation(messages), reward, terminated, truncated, {**info, "messages": messages}

    def _observation(self, messages: list[dict]) -> str:
        return truncate(as_text(messages), self.max_observation_length)


refine_env = EnvMaker(RefineEnv)  # the `refine` ids' entry point
