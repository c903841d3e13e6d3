"""`AesWebRefine-v0` and `AesPlotRefine-v0`: multi-turn episodes over a persistent workspace.

The policy writes files, renders them, reads what went wrong, edits, and submits (WebCoder's
generate-inspect-repair loop). The env keeps the workspace between steps; a page renders from
its `index.html` with every other workspace file served next to it on the virtual origin; a plot
task's `main.py` runs in the sandbox beside the task's data files (which start in the
workspace). Actions are tool calls (`aesenv.envs.tools`): native OpenAI function calls or the
text form. Observations are chat messages: text, plus the screenshot or figures after a render.

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

Per-step potential Φ (for credit assignment): after each render, the fraction of the task's
checkable requirements the rendering satisfies (`aesenv.verifiers.requirement_potential`, read
on the open page so charts and tables count), otherwise (no requirements) the structural score
below; carried forward between renders, with ΔΦ, in `info`. If the workspace changed after the
last render, Φ is measured once more when the episode ends.

Structural score (tasks without requirements), the mean of checks in [0, 1]:
- web: it rendered (status ok); no page/console errors (1/(1+n)); visible text (chars/400,
  capped at 1); visible structure (elements/30, capped); assets resolve (1/(1+blocked+missing+broken images)).
- plot: the script ran; it drew a figure; no traceback and nothing on stderr.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, Field

from aesenv.artifact import MAX_ARTIFACT_BYTES
from aesenv.envs.base import AesEnv, AsyncAesEnv, TaskSource, deterministic_view, utf8_clean
from aesenv.envs.spaces import UnicodeText
from aesenv.envs.tools import (TOOLS, ActionError, Intake, ToolCall, ToolError, Workspace, parse_action,
                               parse_text_action, shown, text_form_help)
from aesenv.llm.client import image_part
from aesenv.plots.plotly_png import with_plotly_pngs
from aesenv.plots.prompt import plot_request
from aesenv.render import LivePage, Rendering, RenderStatus, RequestOutcome
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.sandbox import CommandRun, PlotRun, RunStatus, SandboxLimits
from aesenv.tasks import Task
from aesenv.verifiers import requirement_potential

__all__ = ["REFINE_ENVS", "AesPlotRefineEnv", "AesWebRefineEnv", "AsyncAesPlotRefineEnv", "AsyncAesWebRefineEnv",
           "AsyncRefineEnv", "RefineBudget", "parse_text_action", "structural_score", "task_request"]

log = logging.getLogger(__name__)

TRUNCATION_MARKER = "\n…[truncated {n} characters]"
CUT_MARKER = "\n…[{n} characters cut here]…\n"
MAX_LISTED = 20  # file names listed per kind in a `run` observation



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


def task_request(task: Task) -> str:
    """The single-turn prompt (what a single-turn policy is asked), shared by the first turn."""
    return plot_request(task) if task.kind == "plot" else task.prompt


def _system_prompt(kind: str, entry: str) -> str:
    what = ("a web page: the entry file is index.html; other files you write (CSS, JS, images) are served "
            "next to it" if kind == "web" else
            "a Python plot script: main.py runs in the workspace next to the data files; the figures it "
            "leaves open are the result")
    return (f"You build {what}. Work in the workspace with tools: write {entry}, render it to see the result "
            "(and any errors), fix problems with edit_file, and call submit when it is good. Only the "
            "workspace at submit is scored, and it must render.\n\nIf you cannot call tools natively, write "
            f"exactly one tool call per message in this form:\n\n{text_form_help()}")


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    marker = TRUNCATION_MARKER.format(n=len(text) - limit)
    return text[: max(0, limit - len(marker))] + marker


def clip(text: str, limit: int) -> str:
    """`text` within `limit` characters, keeping its start and its end (where a command's last
    lines and a traceback's error are) around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    marker = CUT_MARKER.format(n=len(text) - limit)
    keep = max(0, limit - len(marker))
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head):]


def _names(names: list[str], limit: int = MAX_LISTED) -> str:
    more = f", … and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def structural_score(rendering: Rendering) -> float:
    """The documented cheap Φ for a page (see the module docstring)."""
    if rendering.status is not RenderStatus.OK:
        return 0.0
    errors = len(rendering.page_errors) + sum(c.type == "error" for c in rendering.console)
    unresolved = sum(r.outcome in (RequestOutcome.BLOCKED, RequestOutcome.MISSING) for r in rendering.requests)
    checks = [1.0, 1.0 / (1 + errors), min(1.0, rendering.metrics.text_chars / 400),
              min(1.0, len(rendering.elements) / 30), 1.0 / (1 + unresolved + rendering.metrics.images_broken)]
    return round(sum(checks) / len(checks), 4)


def plot_structural_score(run: PlotRun) -> float:
    """The documented cheap Φ for a plot run (see the module docstring)."""
    drew = any(not f.meta.get("unusable") for f in run.figures)
    checks = [float(run.ok), float(drew), float(not run.traceback and not run.stderr.strip())]
    return round(sum(checks) / len(checks), 4)


def _describe_run(run: CommandRun, intake: Intake, budget: int) -> str:
    """A `run` for the policy within about `budget` characters: how it ended, what came back and
    what did not (and why), then its output, each stream cut to an equal share of what is left
    (its start and end kept; the sandbox's own cut said too)."""
    status = f"{run.status.value}{': ' + run.reason if run.reason else ''}"
    lines = [f"exit code: {run.exit_code} ({status})", f"files changed: {_names(intake.changed) or 'none'}"]
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


class AsyncRefineEnv(AsyncAesEnv):
    """The async core (for veRL agent loops): `await reset(task=...)`, `await step(action)`."""

    entry: ClassVar[str]
    tools: list[dict] = TOOLS

    def __init__(self, tasks: TaskSource | None = None, *, pipeline: RewardPipeline | None = None,
                 config: PipelineConfig | None = None, budget: RefineBudget | None = None) -> None:
        super().__init__(tasks, pipeline=pipeline, config=config)
        self.budget = budget or RefineBudget()
        self.workspace = Workspace()
        self.last_image: bytes | None = None  # the latest screenshot or figure, for `render()`
        self._turn = 0
        self._potential = 0.0
        self._measured: str | None = None  # the workspace fingerprint Φ was last measured on
        self._started = 0.0
        self._done = True
        self._handlers: dict[str, Callable[[ToolCall], Awaitable[Outcome]]] = {
            "write_file": self._write_file, "edit_file": self._edit_file, "view_file": self._view_file,
            "render": self._render, "run": self._run, "submit": self._submit}

    def first_turn(self, task: Task) -> list[dict]:
        """System prompt (tools and the text form) and the single-turn prompt as the user turn."""
        return [{"role": "system", "content": _system_prompt(task.kind, self.entry)},
                {"role": "user", "content": task_request(task)}]

    def initial_files(self, task: Task) -> dict[str, bytes]:
        return {}

    async def reset(self, *, task: Task | str | None = None, seed: int | None = None) -> tuple[list[dict], dict]:
        chosen = self.pick(np.random.default_rng(seed), None if task is None else {"task": task})
        self.task, self.last, self.last_image = chosen, None, None
        self.workspace = Workspace(self.initial_files(chosen))
        self._turn, self._potential, self._measured, self._done = 0, 0.0, None, False
        self._started = time.monotonic()
        return self.first_turn(chosen), {"task_id": chosen.id, "task": chosen.model_dump(mode="json"),
                                         "potential": 0.0, "tools": [t["function"]["name"] for t in self.tools]}

    async def step(self, action: str | dict) -> tuple[list[dict], float, bool, bool, dict[str, Any]]:
        if self.task is None or self._done:
            raise gym.error.ResetNeeded("call reset() before step() (the episode has ended)")
        self._turn += 1
        before = self._potential
        try:
            calls = parse_action(action)
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
        submitted = any(o.call and o.call.name == "submit" and not o.error for o in outcomes)
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
            outcomes.append(Outcome(None, f"[Episode ended ({info['end']}). Final reward: {reward}]"))
        info["potential"] = self._potential
        info["delta_potential"] = round(self._potential - before, 6)
        return self._messages(outcomes), reward, submitted, truncated_by is not None, info

    async def _execute(self, call: ToolCall) -> Outcome:
        if call.problem:
            return Outcome(call, f"Invalid tool call: {call.problem}", error=call.problem)
        try:
            return await self._handlers[call.name](call)
        except ToolError as exc:
            return Outcome(call, f"Error: {exc}", error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a tool call never takes the episode down
            log.exception("refine env: %s failed on our side", call.name)
            why = f"internal error: {type(exc).__name__}: {shown(str(exc), 300)}"
            return Outcome(call, f"Error: the env failed on its side while running {call.name} ({why}); "
                           "this is not caused by your call; try again", error=why)

    async def _write_file(self, call: ToolCall) -> Outcome:
        name = self.workspace.write(call.arguments["path"], call.arguments["content"])
        return Outcome(call, f"Wrote {name} ({len(self.workspace.files[name])} bytes).")

    async def _edit_file(self, call: ToolCall) -> Outcome:
        args = call.arguments
        name = self.workspace.edit(args["path"], args["old"], args["new"])
        return Outcome(call, f"Edited {name}: replaced 1 occurrence ({len(self.workspace.files[name])} bytes now).")

    async def _view_file(self, call: ToolCall) -> Outcome:
        return Outcome(call, self.workspace.read(call.arguments["path"]))

    async def _run(self, call: ToolCall) -> Outcome:
        limits = SandboxLimits(timeout_s=self.budget.run_timeout_s, max_output_bytes=self.budget.run_max_output_bytes)
        run = await self.pipeline.sandbox.run(["/bin/sh", "-c", call.arguments["command"]],
                                              dict(self.workspace.files), limits)
        if run.status is RunStatus.INFRA_ERROR:
            raise ToolError(f"the sandbox failed on our side ({run.reason}); try again")
        intake = self.workspace.take(run.files_out, run.files_skipped, first=self.entry)
        text = _describe_run(run, intake, self.budget.max_observation_chars)
        return Outcome(call, text, error="" if run.ok else f"command {run.status.value}")

    async def _submit(self, call: ToolCall) -> Outcome:
        """Always ends the episode (a trainer may force it): without the entry file the answer is
        empty and scores as a failure, like a single-turn answer with no code."""
        if self.entry not in self.workspace.files:
            return Outcome(call, f"Submitted without {self.entry}: there is nothing to render.")
        return Outcome(call, "Submitted.")

    async def _render(self, call: ToolCall) -> Outcome:
        text, images = await self._look()
        self._measured = self.workspace.fingerprint()
        return Outcome(call, text, images=images)

    async def _look(self) -> tuple[str, list[bytes]]:
        """Render the workspace; set Φ and `last_image`; describe the result for the policy."""
        raise NotImplementedError

    async def _final_score(self) -> tuple[float, dict[str, Any]]:
        """The workspace through the one pipeline, like a single-turn answer."""
        entry = self.workspace.files.get(self.entry, b"")
        others = {p: b for p, b in self.workspace.files.items() if p != self.entry}
        if self._measured != self.workspace.fingerprint() and self.entry in self.workspace.files:
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


class AsyncAesWebRefineEnv(AsyncRefineEnv):
    env_id = "AesWebRefine-v0"
    kind = "web"
    default_tasks = "builtin:web"
    entry = "index.html"

    async def _look(self) -> tuple[str, list[bytes]]:
        html = self.workspace.read(self.entry)
        site = {"files": {p: b for p, b in self.workspace.files.items() if p != self.entry}, "entry": self.entry,
                "viewport": (self.task.canvas.width, self.task.canvas.height) if self.task.canvas else None}
        if self.task.requirements or self.task.canvas:  # charts and tables are read from the open page
            async with self.pipeline.renderer.session(html, **site) as (rendering, live):
                potential = await self._potential_of(rendering, live)
        else:
            rendering = await self.pipeline.renderer.render(html, **site)
            potential = structural_score(rendering)
        if rendering.status is RenderStatus.INFRA_ERROR:
            raise ToolError(f"the renderer failed on our side ({rendering.error}); try again")
        self._potential, self.last_image = potential, rendering.viewport_png
        return _describe_rendering(rendering), [rendering.viewport_png] if rendering.viewport_png else []

    async def _potential_of(self, rendering: Rendering, live: LivePage | None) -> float:
        value = await requirement_potential(self.task, rendering, live)
        return structural_score(rendering) if value is None else round(float(value), 4)


def _describe_rendering(r: Rendering) -> str:
    m = r.metrics
    tags = ", ".join(f"{t}×{n}" for t, n in sorted(m.tag_counts.items(), key=lambda kv: -kv[1])[:12])
    console = [f"  {c.type}: {c.text[:500]}" for c in r.console if c.type in ("error", "warning")][:20]
    unresolved = [f"  {q.outcome.value}: {q.url[:200]}" for q in r.requests
                  if q.outcome in (RequestOutcome.BLOCKED, RequestOutcome.MISSING)][:20]
    lines = [f"status: {r.status.value}" + (f" ({r.error})" if r.error else ""),
             f"title: {m.title!r}; document {m.doc_width:.0f}×{m.doc_height:.0f}px, viewport {r.viewport[0]}×{r.viewport[1]}",
             f"DOM: {m.node_count} nodes, {len(r.elements)} visible elements, {m.text_chars} characters of visible text; "
             f"tags: {tags or 'none'}",
             f"images: {m.images_total} ({m.images_broken} broken); canvases: {len(m.canvases)}",
             f"page errors ({len(r.page_errors)}):", *[f"  {e[:500]}" for e in r.page_errors[:20]],
             f"console errors/warnings ({len(console)}):", *console,
             f"blocked or missing requests ({len(unresolved)}):", *unresolved,
             "The screenshot of the first screen follows." if r.viewport_png else "No screenshot."]
    return "\n".join(lines)


class AsyncAesPlotRefineEnv(AsyncRefineEnv):
    env_id = "AesPlotRefine-v0"
    kind = "plot"
    default_tasks = "builtin:plot"
    entry = "main.py"

    def initial_files(self, task: Task) -> dict[str, bytes]:
        return {name: data.encode("utf-8") for name, data in task.data_files.items()}

    async def _look(self) -> tuple[str, list[bytes]]:
        code = self.workspace.read(self.entry)
        run = await self.pipeline.sandbox.run_plot(code, dict(self.workspace.files))
        if run.status is RunStatus.INFRA_ERROR:
            raise ToolError(f"the sandbox failed on our side ({run.reason}); try again")
        run = await with_plotly_pngs(run, self.pipeline.renderer)
        self._potential = plot_structural_score(run)
        pictures = [f.png for f in run.figures if f.png]
        self.last_image = pictures[0] if pictures else None
        share = self.budget.max_observation_chars // 4
        problems = [f"  {shown(f.name)}: {f.meta.get('error') or f.meta.get('png_error')}" for f in run.figures
                    if f.meta.get("error") or f.meta.get("png_error")][:MAX_LISTED]
        lines = [f"status: {run.status.value}" + (f" ({run.reason})" if run.reason else ""),
                 f"figures: {len(run.figures)} ({_names([shown(f.name) for f in run.figures]) or 'none'})",
                 *([f"figure problems ({len(problems)}):", *problems] if problems else []),
                 f"traceback:\n{clip(run.traceback, share)}" if run.traceback else "no traceback",
                 f"stdout:\n{clip(run.stdout, share)}" if run.stdout else "",
                 f"stderr:\n{clip(run.stderr, share)}" if run.stderr else ""]
        return "\n".join(line for line in lines if line), pictures


def as_text(messages: list[dict]) -> str:
    """Chat messages flattened to text (images as `[image]`): the Gymnasium observation."""
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") if p.get("type") == "text" else "[image]" for p in content)
        parts.append(f"[{m['role']}]\n{content or ''}")
    return "\n\n".join(parts)


class RefineEnv(AesEnv):
    """Gymnasium facade: the observation is the new chat messages as text (images as `[image]`);
    the messages themselves, images included, are `info["messages"]`. The action is the
    assistant's message text in the text form."""

    core_class: ClassVar[type[AsyncRefineEnv]]
    observation_lengths: ClassVar[dict[str, int]] = {}
    max_observation_length = 300_000

    def __init__(self, tasks: TaskSource | None = None, *, config: PipelineConfig | dict | None = None,
                 sandbox: str | None = None, render_mode: str | None = None, step_timeout_s: float = 1200.0,
                 budget: RefineBudget | dict | None = None) -> None:
        super().__init__(tasks, config=config, sandbox=sandbox, render_mode=render_mode, step_timeout_s=step_timeout_s)
        if budget is not None:
            self._core.budget = budget if isinstance(budget, RefineBudget) else RefineBudget(**budget)
        self.observation_space = UnicodeText(max_length=self.max_observation_length)
        self.action_space = UnicodeText(max_length=MAX_ARTIFACT_BYTES)

    @property
    def core(self) -> AsyncRefineEnv:
        return self._core

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

    def frame(self, last) -> tuple[bytes | None, tuple[int, int]]:
        cfg = self._core.pipeline.config.render
        return self._core.last_image, (cfg.viewport_height, cfg.viewport_width)


class AesWebRefineEnv(RefineEnv):
    core_class = AsyncAesWebRefineEnv


class AesPlotRefineEnv(RefineEnv):
    core_class = AsyncAesPlotRefineEnv


REFINE_ENVS: dict[str, type[AsyncRefineEnv]] = {c.env_id: c for c in (AsyncAesWebRefineEnv, AsyncAesPlotRefineEnv)}
