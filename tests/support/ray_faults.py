"""Actors that fail on cue, for the Ray tests (deterministic fault injection instead of a kill
after a sleep): the first actor of a pool exits in the middle of its first call; a replacement
(a fresh name) works normally. Pickled by value, so Ray's workers need not import the tests."""

from __future__ import annotations

import os
import sys
from typing import Any

import ray
import ray.cloudpickle

from aesenv.rewards.service import RayScorer, ScoringActor
from benchmarks.webdev import WebdevWorker

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _first_of_its_pool() -> bool:
    """This actor is a pool's first one as started (`<pool>-0`), not a replacement (`<pool>-0-r1`)."""
    return ray.get_runtime_context().get_actor_name().endswith("-0")


def _exit_now() -> None:
    os._exit(17)  # as a crash or an OOM kill would: no clean-up, the calls in flight are lost


class DyingScoringActor(ScoringActor):
    """A `ScoringActor` that, as its pool's first actor, dies inside its first `score` call."""

    async def score(self, task: Any, answer: Any, files: Any = None) -> Any:
        if _first_of_its_pool():
            _exit_now()
        return await super().score(task, answer, files)


class DyingScorer(RayScorer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.actor_class = DyingScoringActor


class DyingWebdevWorker(WebdevWorker):
    """A Webdev-Bench worker that, as its pool's first actor, dies as its first task reaches it."""

    async def run(self, task: Any) -> Any:
        if _first_of_its_pool():
            _exit_now()
        return await super().run(task)


class AlwaysDies:
    """Every actor of this class dies in every call: a pool of them runs out of retries."""

    def __init__(self, init: dict[str, Any]) -> None:
        self.init = init

    async def work(self) -> None:
        _exit_now()

    async def close(self) -> None:
        pass
