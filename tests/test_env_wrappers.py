"""Env variants by composition: a refine env takes a toolset, an end rule, a Φ and flags; the
wall-budget penalty is a wrapper. Each piece is shown changing what the plain env does, on the
real offline pipeline."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

from aesenv.envs import make_core
from aesenv.envs.project import PROJECT_TOOLSET, RequirementLedger
from aesenv.envs.refine import (REFINE_TOOLSET, SUBMIT_ENDS, AsyncRefineEnv, KindPotential, Outcome, RefineBudget,
                                Toolset, ending)
from aesenv.envs.tools import REFINE_TOOL_SPECS
from aesenv.envs.single import AsyncSingleTurnEnv
from aesenv.envs.wrappers import FORWARDED, AsyncCoreWrapper, WallBudgetPenalty
from aesenv.tasks import Task
from aesenv.webdev.session import DELIVERY, delivered

TASK = Task(id="hello", prompt="A page that greets visitors to Corner Cafe")
PAGE = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Corner Cafe</title></head><body>"
        "<h1>Welcome to Corner Cafe</h1><p>Fresh coffee on the corner since 1998, open every day.</p></body></html>")


def write(path: str, content: str) -> dict:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


SUBMIT = {"name": "submit", "arguments": {}}


async def episode(env, actions) -> list[tuple]:
    await env.reset(task=TASK.id)
    steps = []
    for action in actions:
        steps.append(await env.step(action))
        if steps[-1][2] or steps[-1][3]:
            break
    return steps


async def test_the_wall_budget_penalty_takes_its_share_of_a_timed_out_episode(pipeline):
    budget = RefineBudget(max_wall_s=1e-6)  # every step runs out of wall time
    plain = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, budget=budget)
    wrapped = WallBudgetPenalty(AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, budget=budget), 0.1)
    (_, reward, _, truncated, info), = await episode(plain, [write("index.html", PAGE)])
    (messages, penalized, _, wrapped_truncated, wrapped_info), = await episode(wrapped, [write("index.html", PAGE)])
    assert truncated and wrapped_truncated and info["end"] == wrapped_info["end"] == "max_wall_s"
    assert reward > 0 and penalized == pytest.approx(reward - 0.1)
    assert "end_penalty" not in info and wrapped_info["end_penalty"] == 0.1
    closing = messages[-1]["content"]
    assert ending("max_wall_s", penalized) in closing and ending("max_wall_s", reward) not in closing


async def test_the_penalty_spares_a_submitted_episode_and_a_nan(pipeline):
    wrapped = WallBudgetPenalty(AsyncRefineEnv([TASK], kind="web", pipeline=pipeline), 0.1)
    (*_, info), (_, reward, terminated, _, info) = await episode(wrapped, [write("index.html", PAGE), SUBMIT])
    assert terminated and info["end"] == "submit" and "end_penalty" not in info and reward > 0
    unscored = WallBudgetPenalty(AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, score_at_end=False,
                                                budget=RefineBudget(max_wall_s=1e-6)), 0.1)
    (_, reward, _, _, info), = await episode(unscored, [write("index.html", PAGE)])
    assert math.isnan(reward) and "end_penalty" not in info


async def test_a_wrapper_passes_attributes_both_ways(pipeline):
    core = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline)
    wrapped = WallBudgetPenalty(WallBudgetPenalty(core, 0.1), 0.2)
    assert wrapped.unwrapped is core and wrapped.kind is core.kind and wrapped.penalty == 0.2
    wrapped.budget = RefineBudget(max_turns=3)
    assert core.budget.max_turns == 3 and "budget" not in vars(wrapped)
    with pytest.raises(AttributeError):
        wrapped.not_the_cores  # noqa: B018 - only the core's interface is forwarded
    wrapped.note = "mine"
    assert not hasattr(core, "note")


async def test_a_wrapper_forwards_every_public_name_of_a_core(pipeline):
    """`FORWARDED` is written out; it must not fall behind what a core offers."""
    for core in (AsyncRefineEnv([TASK], kind="web", pipeline=pipeline), AsyncSingleTurnEnv([TASK], kind="web", pipeline=pipeline)):
        public = {name for name in dir(core) if not name.startswith("_")} - {"reset", "step"}
        assert public - set(FORWARDED) == set(), type(core).__name__


async def test_a_toolset_can_add_a_tool(pipeline):
    async def count_files(env: AsyncRefineEnv, call) -> Outcome:
        return Outcome(call, f"{len(env.workspace.files)} files")

    specs = {**REFINE_TOOL_SPECS, "count_files": ("How many files the workspace holds.", {})}
    toolset = REFINE_TOOLSET.with_tools(specs, {"count_files": count_files})
    env = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, toolset=toolset)
    messages, info = await env.reset(task=TASK.id)
    assert "count_files" in info["tools"] and "count_files" in messages[0]["content"]
    await env.step(write("index.html", PAGE))
    answer, *_ = await env.step({"name": "count_files", "arguments": {}})
    assert "1 files" in answer[-1]["content"]
    plain = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline)
    await plain.reset(task=TASK.id)
    refused, *_ = await plain.step({"name": "count_files", "arguments": {}})
    assert "unknown tool" in refused[-1]["content"]


def test_a_toolset_needs_a_handler_for_every_tool():
    with pytest.raises(ValueError, match="no handler for"):
        Toolset({**REFINE_TOOL_SPECS, "fly": ("Fly.", {})}, REFINE_TOOLSET.handlers)
    assert "render" not in PROJECT_TOOLSET.handlers and "webshot" in PROJECT_TOOLSET.handlers


async def test_the_delivery_end_rule_goes_on_and_nothing_is_scored(pipeline):
    env = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, end_rule=DELIVERY, score_at_end=False,
                         budget=RefineBudget(max_turns=2))
    await env.reset(task=TASK.id)
    await env.step(write("index.html", PAGE))
    messages, reward, terminated, truncated, info = await env.step(SUBMIT)
    assert delivered(info) and "Delivered" in messages[-1]["content"]
    assert truncated and not terminated and info["end"] == "max_turns"
    assert math.isnan(reward) and info["status"] == "not scored" and info["reward_valid"] is False
    submitting = AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, end_rule=SUBMIT_ENDS)
    *_, (_, _, terminated, _, info) = await episode(submitting, [write("index.html", PAGE), SUBMIT])
    assert terminated and info["end"] == "submit" and delivered(info)


async def test_a_potential_sets_phi(pipeline):
    class Halved(KindPotential):
        name = "halved"

        def after(self, task, look):
            return look.potential / 2

    render = {"name": "render", "arguments": {}}
    kind_phi = (await episode(AsyncRefineEnv([TASK], kind="web", pipeline=pipeline),
                              [write("index.html", PAGE), render]))[-1][-1]["potential"]
    halved = (await episode(AsyncRefineEnv([TASK], kind="web", pipeline=pipeline, potential=Halved()),
                            [write("index.html", PAGE), render]))[-1][-1]["potential"]
    assert kind_phi > 0 and halved == pytest.approx(kind_phi / 2)


def test_the_registered_project_env_is_composed():
    env = gym.make("AesWebProject-v0", disable_env_checker=True)
    try:
        core = env.unwrapped.core
        assert isinstance(core, AsyncCoreWrapper) and isinstance(core, WallBudgetPenalty) and core.penalty == 0.1
        assert core.toolset is PROJECT_TOOLSET and isinstance(core.potential, RequirementLedger)
        assert core.measure_at_end is False and core.end_rule is SUBMIT_ENDS
    finally:
        env.close()


async def test_make_core_builds_the_same_composition(pipeline):
    core = make_core("AesWebProject-v0", pipeline=pipeline)
    assert isinstance(core, WallBudgetPenalty) and core.toolset is PROJECT_TOOLSET
    plain = make_core("AesWebRefine-v0", pipeline=pipeline)
    assert isinstance(plain, AsyncRefineEnv) and plain.toolset is REFINE_TOOLSET


def test_make_with_remote_chooses_the_served_env_and_an_env_class_makes_itself():
    """`gym.make(id, remote=URL)` is decided by the registered `EnvMaker`, not by the env class's
    `__new__`: the class always makes an instance of itself (nothing is reached before a reset)."""
    from aesenv.envs.base import EnvMaker, KindEnv
    from aesenv.envs.remote import RemoteEnv

    maker = gym.envs.registration.load_env_creator(gym.spec("AesWebRefine-v0").entry_point)
    assert isinstance(maker, EnvMaker) and "__new__" not in vars(KindEnv)
    env = gym.make("AesWebRefine-v0", remote="http://127.0.0.1:9", disable_env_checker=True)
    try:
        assert isinstance(env.unwrapped, RemoteEnv) and env.unwrapped.env_id == "AesWebRefine-v0"
    finally:
        env.close()
