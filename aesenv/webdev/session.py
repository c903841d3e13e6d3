"""One Webdev-Bench task, round by round, in one session on one project.

Round j reveals requirement j; the agent works with the project env's tools and calls `submit`
to deliver. Submitting does not end the episode (`webdev_env`: the project env with the
`DELIVERY` end rule): the round's delivery gets the mechanical health check and the simulated
user's verdict; a returned round comes back to the agent with the critique, at most
`MAX_ATTEMPTS` deliveries per requirement, and then the next requirement is revealed in the same
conversation, on the same workspace. The whole task
has `SECONDS_PER_REQUIREMENT` per requirement of wall time, agent, tools and gate included.
After the last round (or when a budget runs out), terminal acceptance grades every item of
every requirement on the project as it stands, independently of the gate.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from aesenv.envs.project import make_project_env
from aesenv.envs.refine import AsyncRefineEnv, EndRule, Outcome, RefineBudget
from aesenv.envs.tools import ToolCall
from aesenv.policy import Agent
from aesenv.rewards import RewardPipeline
from aesenv.tasks import Task
from aesenv.tasks.project import ProjectSpec
from aesenv.trajectory import Trajectory
from aesenv.webdev.acceptance import ItemGrade
from aesenv.webdev.gate import Review, SimulatedUser, Verdict
from aesenv.webdev.graders import CheckGrader, Grader
from aesenv.kinds.project.health import Delivery, HealthCheck, deliver
from aesenv.webdev.metrics import task_metrics
from aesenv.webdev.tasks import CompositeTask

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3
SECONDS_PER_REQUIREMENT = 1200.0
# Ours, off by default (Webdev-Bench budgets a session by wall time alone): a turn cap of this many
# turns per requirement and attempt (`turns_per_requirement=TURNS_PER_REQUIREMENT`).
TURNS_PER_REQUIREMENT = 30
UNCAPPED_TURNS = 1_000_000  # no turn cap: the wall-clock budget ends the session
_STARTS = {"reference": "reference", "description": "scaffold", "project": "files"}
End = Literal["done", "time_budget", "turn_budget", "agent_error", "infra_error"]


class RoundRecord(BaseModel):
    """One delivery: which request, which attempt, what the check found and what the user said."""

    requirement: str
    attempt: int = Field(ge=1)
    passed: bool
    critique: str = ""
    user: str
    health: HealthCheck
    launched: bool
    turns: int = Field(ge=0)  # agent turns since the previous delivery
    at_s: float  # when the verdict came, since the task started
    screenshot: str | None = None  # file name of the delivered page's screenshot (the runner writes it)


class WebdevRecord(BaseModel):
    """One task's run: the timeline of rounds, the terminal acceptance and its metrics."""

    task_id: str
    title: str
    start: str
    policy: str
    user: str
    grader: str = "offline"
    status: Literal["ok", "policy_error", "infra_error"] = "ok"  # ok: graded; the others count in no metric
    end: End
    error: str = ""
    reached: int = 0  # requirements revealed
    rounds: list[RoundRecord] = Field(default_factory=list)
    delivered: bool = False  # the final project launches (DSR)
    launch: HealthCheck = Field(default_factory=HealthCheck)
    grades: list[ItemGrade] = Field(default_factory=list)
    metrics: dict[str, float | None] = Field(default_factory=dict)
    turns: int = 0
    wall_s: float = 0.0


@dataclass
class TaskRun:
    record: WebdevRecord
    trajectory: Trajectory
    screenshots: dict[str, bytes] = field(default_factory=dict)


def project_task(task: CompositeTask) -> Task:
    """The project env's view of a composite task: how it starts, no requirements (they come by round)."""
    return Task(id=task.id, kind="project", prompt=task.brief, reference_html=task.reference_html or None,
                project=ProjectSpec(start=_STARTS[task.start], files=task.files, defect=task.defect))


def opening(task: CompositeTask) -> str:
    first = task.requirements[0].text
    return (f"{task.brief}\n\nRound 1 of {len(task.requirements)}: {first}\n\nWhen a round's request is done, call "
            f"submit. I will build the app myself (Vite with the scaffold's settings, into dist/) and start it with "
            f"`npm start`, which must serve that dist/ on port {task.port}, as package.json's start script does now; "
            "then I try it and either tell you what is missing or give you the next request, and you keep working on "
            "the same project.")


def next_request(task: CompositeTask, j: int, passed: bool) -> str:
    lead = "Thanks, that works." if passed else "Let's leave that as it is and move on."
    return f"{lead} Round {j + 1} of {len(task.requirements)}: {task.requirements[j].text}"


def returned(verdict: Verdict, attempt: int) -> str:
    return (f"I tried it: {verdict.critique}\nPlease fix it and submit again (attempt {attempt + 1} of "
            f"{MAX_ATTEMPTS} for this request).")


async def _deliver(env: AsyncRefineEnv, call: ToolCall) -> Outcome:
    return Outcome(call, "Delivered: the user is trying this version now.")


# Submitting hands the project over for review and the episode goes on: only a budget ends it.
DELIVERY = EndRule("delivery", _deliver, lambda outcomes: False)


def delivered(info: dict[str, Any]) -> bool:
    """Whether a step's tool calls delivered the project (an accepted submit)."""
    return any(result["name"] == "submit" and result["ok"] for result in info.get("tool_results", []))


def session_budget(requirements: int, seconds_per_requirement: float = SECONDS_PER_REQUIREMENT,
                   turns_per_requirement: int | None = None) -> RefineBudget:
    """A session's budget: wall time per requirement, and no turn cap unless `turns_per_requirement`
    (ours) caps the turns per requirement and attempt."""
    turns = UNCAPPED_TURNS if turns_per_requirement is None else turns_per_requirement * requirements * MAX_ATTEMPTS
    return RefineBudget(max_turns=turns, max_wall_s=seconds_per_requirement * requirements, run_timeout_s=60.0)


def webdev_env(task: CompositeTask, *, pipeline: RewardPipeline,
               seconds_per_requirement: float = SECONDS_PER_REQUIREMENT,
               turns_per_requirement: int | None = None) -> AsyncRefineEnv:
    """The project env as a Webdev-Bench session drives it: the task's opening message, a submit
    that delivers, a wall-time budget per requirement (and, ours, a turn cap per requirement and
    attempt with `turns_per_requirement`), and no score of its own (the session's user and
    grader judge the deliveries)."""
    budget = session_budget(len(task.requirements), seconds_per_requirement, turns_per_requirement)
    return make_project_env([project_task(task)], pipeline=pipeline, budget=budget, end_rule=DELIVERY,
                            opening=lambda _: opening(task), score_at_end=False)


class _Stop(Exception):
    def __init__(self, end: End, error: str = "") -> None:
        super().__init__(error)
        self.end, self.error = end, error


class _Session:
    """The state of one task's run: the env, the conversation, the recording and the budget."""

    def __init__(self, task: CompositeTask, agent: Agent, pipeline: RewardPipeline, user: SimulatedUser,
                 grader: Grader, seconds_per_requirement: float, turns_per_requirement: int | None = None) -> None:
        self.task, self.agent, self.pipeline, self.user, self.grader = task, agent, pipeline, user, grader
        self.started = time.monotonic()
        self.deadline = self.started + seconds_per_requirement * len(task.requirements)
        self.env = webdev_env(task, pipeline=pipeline, seconds_per_requirement=seconds_per_requirement,
                              turns_per_requirement=turns_per_requirement)
        self.record = WebdevRecord(task_id=task.id, title=task.title, start=task.start, policy=agent.name,
                                   user=user.name, grader=grader.name, end="done")
        self.trajectory = Trajectory(env_id="webdev", task=project_task(task).model_dump(mode="json"),
                                     policy=agent.name, first_turn=[])
        self.conversation: list[dict] = []
        self.screenshots: dict[str, bytes] = {}
        self.last: tuple[Delivery, dict[str, bytes]] | None = None  # the latest delivery, and the files it had
        self.start: dict[str, bytes] = {}  # the workspace as the task handed it over

    def say(self, text: str) -> None:
        """A user message between rounds (recorded after the step it follows)."""
        message = {"role": "user", "content": text}
        self.conversation.append(message)
        self.trajectory.steps[-1].observation.append(message)

    async def deliver(self) -> Delivery:
        """The workspace's health check and page; a failure on our side gets one more try, then
        stops the task as ours to answer for."""
        files = dict(self.env.workspace.files)
        if self.last is not None and self.last[1] == files:
            return self.last[0]
        delivery = await deliver(self.pipeline.backends, files, self.task.port)
        if delivery.infra:
            delivery = await deliver(self.pipeline.backends, files, self.task.port)
            if why := delivery.infra:
                raise _Stop("infra_error", why)
        self.last = (delivery, files)
        return delivery

    async def work_until_delivered(self) -> int:
        """Agent turns until one delivers; how many it took."""
        turns = 0
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise _Stop("time_budget")
            t = time.perf_counter()
            try:
                action = await asyncio.wait_for(self.agent.act(self.conversation, self.env.tools), remaining)
            except asyncio.TimeoutError:
                raise _Stop("time_budget") from None
            except Exception as exc:  # noqa: BLE001 - the agent failing ends its task, not the run
                raise _Stop("agent_error", f"agent {self.agent.name} failed: {type(exc).__name__}: {exc}") from exc
            agent_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            observation, _, _, truncated, info = await self.env.step(action)
            self.conversation.extend([action, *observation])
            turns += 1
            self.trajectory.record_step(action, list(observation), None, False, truncated, info, agent_ms=agent_ms,
                                        env_ms=(time.perf_counter() - t) * 1000)
            if delivered(info):
                return turns
            if truncated:
                raise _Stop("time_budget" if info.get("end") == "max_wall_s" else "turn_budget")

    async def rounds(self) -> None:
        task, previous_text = self.task, None
        for j, requirement in enumerate(task.requirements):
            self.record.reached = j + 1
            for attempt in range(1, MAX_ATTEMPTS + 1):
                turns = await self.work_until_delivered()
                delivery = await self.deliver()
                if previous_text is None and delivery.launched and self.env.workspace.files == self.start:
                    previous_text = delivery.text  # the user knows the project they started from
                review = Review(task.brief, requirement.text, j + 1, delivery, previous_text)
                try:
                    verdict = await self.user.review(review)
                except Exception as exc:  # noqa: BLE001 - the simulated user is ours (an LLM that cannot answer)
                    raise _Stop("infra_error", f"the simulated user failed: {type(exc).__name__}: {exc}") from exc
                shot = f"r{j + 1}-a{attempt}.jpg" if delivery.screenshot else None
                if shot:
                    self.screenshots[shot] = delivery.screenshot
                self.record.rounds.append(RoundRecord(
                    requirement=requirement.id, attempt=attempt, passed=verdict.passed, critique=verdict.critique,
                    user=verdict.user, health=delivery.health, launched=delivery.launched, turns=turns,
                    at_s=round(time.monotonic() - self.started, 1), screenshot=shot))
                if delivery.launched:
                    previous_text = delivery.text
                if verdict.passed:
                    break
                if attempt < MAX_ATTEMPTS:
                    self.say(returned(verdict, attempt))
            if j + 1 < len(task.requirements):
                self.say(next_request(task, j + 1, verdict.passed))

    async def run(self) -> TaskRun:
        record = self.record
        try:
            messages, _ = await self.env.reset(task=self.task.id)
            self.trajectory.first_turn, self.conversation = messages, list(messages)
            self.start = dict(self.env.workspace.files)
            try:
                await self.rounds()
            except _Stop as stop:
                record.end, record.error = stop.end, stop.error
                record.status = {"agent_error": "policy_error", "infra_error": "infra_error"}.get(stop.end, "ok")
            if record.status == "ok":  # graded also when a budget ran out: the project as it stands
                final = await self.deliver()
                record.delivered, record.launch = final.launched, final.health
                record.grades = await self.grader.grade(self.pipeline.backends, self.task, final)
                record.metrics = task_metrics(record.grades, record.delivered)
        except _Stop as stop:  # our side failed delivering the final project
            record.status, record.error = "infra_error", stop.error
        except Exception as exc:  # noqa: BLE001 - ours (the browser, the sandbox): this task, not the run
            log.exception("webdev: task %s failed on our side", self.task.id)
            record.status, record.end, record.error = "infra_error", "infra_error", f"{type(exc).__name__}: {exc}"
        finally:
            await self.env.close()
        record.turns = len(self.trajectory.steps)
        record.wall_s = round(time.monotonic() - self.started, 1)
        self.trajectory.end = record.end
        usage = getattr(self.agent, "usage", None)
        self.trajectory.usage = usage.model_dump() if isinstance(usage, BaseModel) else None
        return TaskRun(record, self.trajectory, self.screenshots)


async def run_task(task: CompositeTask, agent: Agent, pipeline: RewardPipeline, user: SimulatedUser, *,
                   grader: Grader | None = None, seconds_per_requirement: float = SECONDS_PER_REQUIREMENT,
                   turns_per_requirement: int | None = None) -> TaskRun:
    """The rounds, then terminal acceptance (by the items' checks unless `grader` says otherwise).
    Never raises: what the agent or its project does is in the record, and so is our failure."""
    return await _Session(task, agent, pipeline, user, grader or CheckGrader(),
                          seconds_per_requirement, turns_per_requirement).run()
