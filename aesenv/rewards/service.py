"""The reward service on Ray: actors that each hold a started `RewardPipeline` (its browser pool,
sandbox and judges), behind the same `score(task, answer)` a local pipeline has; `RayPool`, the
same pool for any actor class (Webdev-Bench's task workers).

veRL already runs on Ray, so a cluster a trainer uses can score rewards and benchmark runs
without another scheduler. Work goes to the actor with the fewest items in flight; an item
whose actor dies is scored again on a replacement, and only the caller's one awaited result
counts, so an item is never lost and never counted twice. Actors are named (`pool`-`i`) in one
namespace, so several processes (veRL's reward workers) that open the same named pool share its
actors instead of each starting its own.

    async with RayScorer(PipelineConfig(), actors=2) as scorer:
        scored = await scorer.score(task, answer)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from aesenv.rewards.config import PipelineConfig
from aesenv.rewards.pipeline import RewardPipeline, Scored
from aesenv.tasks import Task

NAMESPACE = "aesenv"
MAX_RETRIES = 3  # replacements an item may go through before its failure is raised


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - ray ships with the verl extra
        raise RuntimeError("--ray needs Ray: pip install 'aesenv[ray]' (or the verl extra)") from exc
    return ray


class ScoringActor:
    """One actor's pipeline, started on its first item (an actor's constructor cannot await)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = PipelineConfig.model_validate(config)
        self.pipeline: RewardPipeline | None = None
        self._starting = asyncio.Lock()

    async def _started(self) -> RewardPipeline:
        async with self._starting:
            if self.pipeline is None:
                pipeline = RewardPipeline(self.config).validate()
                await pipeline.start()
                self.pipeline = pipeline
        return self.pipeline

    async def score(self, task: Task, answer: str | bytes, files: dict[str, bytes] | None = None) -> Scored:
        return await (await self._started()).score(task, answer, files=files)

    async def pid(self) -> int:
        return os.getpid()

    async def pin(self, cores: list[int]) -> list[int]:
        """Run this actor on `cores` only, every thread of it and what it starts later (its
        browser, the driver): a node of that many cores, simulated on a bigger machine (`bench
        scale --pin`). Before the first score, so the browser is launched inside the set."""
        for thread in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(thread), cores)
        return sorted(os.sched_getaffinity(0))

    async def close(self) -> None:
        if self.pipeline is not None:
            await self.pipeline.close()
            self.pipeline = None


class RayPool:
    """A pool of `actors` Ray actors of one class, each built from `init` (see the module).
    `call(method, ...)` goes to the actor with the fewest calls in flight; a call whose actor
    died goes to a replacement, up to `max_retries` times. `address`: a running cluster (`auto`,
    `ray://host:10001`), else a local one is started with `num_cpus`. `pool` names a pool several
    processes share (each opens it, none closes it: its actors live as long as the process that
    started them); without one the pool is this object's own, closed with it. Actors close with
    their own `close()`."""

    def __init__(self, actor_class: type, init: dict[str, Any], *, actors: int = 2, address: str | None = None,
                 pool: str | None = None, num_cpus: int | None = None, cpus_per_actor: float = 1.0,
                 max_retries: int = MAX_RETRIES) -> None:
        if actors < 1:
            raise ValueError("a Ray pool needs at least one actor")
        self.actor_class, self.init = actor_class, init
        self.actors_wanted, self.address, self.num_cpus = actors, address, num_cpus
        self.cpus_per_actor, self.max_retries = cpus_per_actor, max_retries
        self.shared = pool is not None
        self.pool = pool or f"aesenv-{actor_class.__name__.lower()}-{os.getpid()}-{id(self):x}"
        self._actors: list[Any] = []
        self._in_flight: list[int] = []
        self._generation = 0  # replacement actors get fresh names
        self.retried = 0
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> "RayPool":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        ray = _ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"namespace": NAMESPACE, "include_dashboard": False, "log_to_driver": False}
            if self.address:
                options["address"] = self.address
            elif self.num_cpus is not None:
                options["num_cpus"] = self.num_cpus
            ray.init(**options)
        self._actors = [self._actor(f"{self.pool}-{i}") for i in range(self.actors_wanted)]
        self._in_flight = [0] * len(self._actors)

    def _actor(self, name: str) -> Any:
        ray = _ray()
        remote = ray.remote(self.actor_class).options(name=name, namespace=NAMESPACE, get_if_exists=True,
                                                      num_cpus=self.cpus_per_actor, max_concurrency=64)
        return remote.remote(self.init)

    @property
    def actors(self) -> list[Any]:
        """The live actor handles (a test kills one to see its calls go elsewhere)."""
        return list(self._actors)

    async def call(self, method: str, *args: Any, label: str = "a call") -> Any:
        """`method(*args)` on the least-loaded actor, on a replacement if that one dies."""
        ray = _ray()
        last: Exception | None = None
        for _ in range(self.max_retries + 1):
            slot = min(range(len(self._actors)), key=self._in_flight.__getitem__)
            actor = self._actors[slot]
            self._in_flight[slot] += 1
            try:
                return await getattr(actor, method).remote(*args)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                last = exc
                self.retried += 1
                await self._replace(slot, actor)
            finally:
                self._in_flight[slot] = max(0, self._in_flight[slot] - 1)
        raise RuntimeError(f"{label} failed on {self.max_retries + 1} actors in a row: {last}")

    async def _replace(self, slot: int, dead: Any) -> None:
        """A fresh actor where `dead` was (once, however many of its calls noticed)."""
        async with self._lock:
            if self._actors[slot] is dead:
                self._generation += 1
                self._actors[slot] = self._actor(f"{self.pool}-{slot}-r{self._generation}")

    async def close(self) -> None:
        ray = _ray()
        for actor in [] if self.shared else self._actors:
            try:
                await actor.close.remote()
            except ray.exceptions.RayError:
                pass  # already gone
            ray.kill(actor)
        self._actors = []


class RayScorer(RayPool):
    """`score` on a pool of `ScoringActor`s, the local pipeline's call on Ray; `pool_options`
    are `RayPool`'s (actors, address, pool, ...)."""

    def __init__(self, config: PipelineConfig | None = None, **pool_options: Any) -> None:
        self.config = config or PipelineConfig()
        super().__init__(ScoringActor, self.config.model_dump(mode="json"), **pool_options)

    async def score(self, task: Task, answer: str | bytes, *, files: dict[str, bytes] | None = None) -> Scored:
        return await self.call("score", task, answer, files, label=f"scoring {task.id}")


def add_ray_arguments(parser: Any) -> None:
    """`--ray [ADDRESS]` and `--ray-actors N`, as every runner takes them."""
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="score on Ray actors: a local cluster, or the one at ADDRESS (auto, ray://host:10001)")
    parser.add_argument("--ray-actors", type=int, default=2, help="actors in the --ray pool (each holds a pipeline)")


def ray_address(option: str) -> str | None:
    """The cluster a `--ray` / `ray` option names: None (start a local one) for "local"."""
    return None if option == "local" else option


def scorer(config: PipelineConfig, ray: str | None = None, actors: int = 2) -> RewardPipeline | RayScorer:
    """The local pipeline, or with `ray` ("local" or a cluster address) a Ray pool of `actors`."""
    if ray is None:
        return RewardPipeline(config).validate()  # a run's bad config fails before its first answer
    return RayScorer(config, actors=actors, address=ray_address(ray))
