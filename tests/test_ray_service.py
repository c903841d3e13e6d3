"""The reward service on a real local Ray cluster: two actors score a batch, one dies mid-batch and
every item still comes back exactly once; the records match the local path's; a run through the
runner on Ray resumes locally; Webdev-Bench runs whole tasks on Ray actors, and a dead actor's task
runs again elsewhere and is recorded once; a pool whose actors keep dying gives up after its retries.

Actors die by deterministic fault injection (tests/support/ray_faults.py: the pool's first actor
exits inside its first call), never by a kill after a sleep."""

import asyncio
import json

import pytest

from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.rewards.service import RayPool
from aesenv.runner import run_episodes
from aesenv.tasks import load_tasks
from benchmarks import webdev
from policies.repair import RepairPolicy
from policies.template import TemplatePolicy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, namespace="aesenv", include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def comparable(record) -> dict:
    """What must not depend on where a page was scored (timings and hosts aside)."""
    return {"reward": record.reward, "status": record.status, "failure": record.failure,
            "channels": {n: (c.status.value, c.score, c.raw) for n, c in record.channels.items()}}


async def test_a_dead_actors_items_are_scored_elsewhere_exactly_once(ray_cluster):
    from support.ray_faults import DyingScorer

    tasks = load_tasks("builtin:web")[:10]
    policy = TemplatePolicy()
    answers = [await policy.generate(t) for t in tasks]
    async with DyingScorer(PipelineConfig(), actors=2) as scorer:
        victim = scorer.actors[0]
        results = await asyncio.gather(*(scorer.score(t, a) for t, a in zip(tasks, answers)))
        # the least-loaded dispatch gave each actor five items at once; the first actor died inside
        # the first of its five, and each of them was sent again once, to a live actor
        assert scorer.retried == 5 and victim not in scorer.actors and len(scorer.actors) == 2
    assert [r.record.task_id for r in results] == [t.id for t in tasks]
    assert all(r.record.status == "ok" for r in results)
    async with RewardPipeline(PipelineConfig()) as local:
        for task, answer, remote in list(zip(tasks, answers, results))[:3]:
            assert comparable((await local.score(task, answer)).record) == comparable(remote.record)


async def test_a_pool_whose_actors_keep_dying_gives_up_after_its_retries(ray_cluster):
    from support.ray_faults import AlwaysDies

    async with RayPool(AlwaysDies, {}, actors=1, max_retries=2) as pool:
        first = pool.actors[0]
        with pytest.raises(RuntimeError, match=r"the probe failed on 3 actors in a row: .*"):
            await pool.call("work", label="the probe")
        assert pool.retried == 3 and pool.actors[0] is not first


async def test_a_run_on_ray_writes_each_record_once_and_resumes_locally(ray_cluster, tmp_path):
    tasks = load_tasks("builtin:web")[:6]
    records = await run_episodes(tasks[:4], TemplatePolicy(), tmp_path, progress=False, ray="local", ray_actors=2)
    assert [r.task_id for r in records] == [t.id for t in tasks[:4]]
    again = await run_episodes(tasks, TemplatePolicy(), tmp_path, progress=False)  # the same run, locally
    lines = [json.loads(line)["task_id"] for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert sorted(lines) == sorted(t.id for t in tasks) and len(again) == 6
    with pytest.raises(ValueError, match="runs locally"):
        await run_episodes(tasks, RepairPolicy(), tmp_path / "refine", progress=False, mode="refine", ray="local")


WEBDEV_TASKS = "desc-habits,ref-pricing"


def _webdev_args(out, *more: str):
    return webdev.build_parser().parse_args(["--policy", "webdev-reference", "--tasks", WEBDEV_TASKS,
                                             "--out", str(out), "--no-progress", *more])


def _graded(out) -> dict:
    """Each record's outcome by task, and how many lines the task has (a record written twice shows)."""
    lines = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return {r["task_id"]: (sum(x["task_id"] == r["task_id"] for x in lines), r["status"], r["metrics"], r["end"])
            for r in lines}


@pytest.mark.timeout(600)
async def test_webdev_tasks_run_whole_on_ray_and_a_dead_actors_task_runs_again_once(ray_cluster, tmp_path,
                                                                                   monkeypatch):
    from support.ray_faults import DyingWebdevWorker

    local = await webdev.run(_webdev_args(tmp_path / "local"))
    assert local["n"] == 2 and local["metrics"]["RS"] == 1.0, local["tasks"]
    pools: list = []

    class RecordedPool(webdev.RayPool):
        async def start(self) -> None:
            await super().start()
            pools.append(self)

    monkeypatch.setattr(webdev, "RayPool", RecordedPool)
    monkeypatch.setattr(webdev, "WebdevWorker", DyingWebdevWorker)
    on_ray = await webdev.run(_webdev_args(tmp_path / "ray", "--ray", "--ray-actors", "2"))
    assert pools[0].retried == 1  # the first actor's one task, run again once on a live actor
    assert _graded(tmp_path / "ray") == _graded(tmp_path / "local")
    assert on_ray["metrics"] == local["metrics"]
    again = await webdev.run(_webdev_args(tmp_path / "ray"))  # resumed here: nothing left to run
    assert _graded(tmp_path / "ray") == _graded(tmp_path / "local") and again["n"] == 2
