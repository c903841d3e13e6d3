"""`aesenv.stages`: a channel's time by kind of work, collected per channel for `timings_ms`."""

from __future__ import annotations

import asyncio

from aesenv.stages import collecting, stage


def test_a_stage_inside_another_counts_as_the_outer_one():
    with collecting() as totals:
        with stage("label"):
            with stage("script"):
                pass
        with stage("script"):
            pass
        with stage("script"):
            pass
    assert set(totals) == {"label", "script"}
    assert all(ms >= 0 for ms in totals.values())


def test_outside_collecting_nothing_is_recorded():
    with stage("screenshot"):
        pass
    with collecting() as totals:
        pass
    assert totals == {}


async def test_tasks_started_inside_collect_into_the_same_totals_and_others_do_not():
    async def work(name: str) -> None:
        with stage(name):
            await asyncio.sleep(0)

    with collecting() as mine:
        await asyncio.gather(work("a"), work("b"))
    with collecting() as other:
        await work("c")
    assert set(mine) == {"a", "b"} and set(other) == {"c"}
