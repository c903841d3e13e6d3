"""AsyncMemo: one computation per key for concurrent requests, refused results computed again, and
at most `size` results kept (the oldest used goes first)."""

import asyncio

from aesenv.memo import AsyncMemo


async def test_concurrent_requests_for_one_key_share_one_computation():
    memo: AsyncMemo[int] = AsyncMemo(4)
    release = asyncio.Event()

    async def compute() -> int:
        await release.wait()
        return 7

    waiting = [asyncio.create_task(memo.get("k", compute)) for _ in range(5)]
    await asyncio.sleep(0)  # the others queue on the lock (one that came later would find the value)
    release.set()
    assert await asyncio.gather(*waiting) == [7] * 5 and memo.computed == 1
    assert await memo.get("k", compute) == 7 and memo.computed == 1


async def test_a_refused_result_is_handed_back_and_computed_again():
    memo: AsyncMemo[int | None] = AsyncMemo(4, keep=lambda value: value is not None)
    answers = iter([None, 3])

    async def compute() -> int | None:
        return next(answers)

    assert await memo.get("k", compute) is None and memo.peek("k") is None
    assert await memo.get("k", compute) == 3 and memo.computed == 2
    assert await memo.get("k", compute) == 3 and memo.computed == 2


async def test_the_least_recently_used_result_goes_first():
    memo: AsyncMemo[str] = AsyncMemo(2)

    def value(text: str):
        async def compute() -> str:
            return text
        return compute

    await memo.get("a", value("a"))
    await memo.get("b", value("b"))
    await memo.get("a", value("a"))  # a is now the most recent
    await memo.get("c", value("c"))
    assert memo.peek("a") == "a" and memo.peek("b") is None and memo.peek("c") == "c" and memo.computed == 3


def test_each_owner_has_its_own_table_and_it_goes_with_the_owner():
    import gc

    from aesenv.memo import PerOwner

    class Tables(PerOwner):
        pass

    class Other(PerOwner):
        pass

    class Owner:
        pass

    first, second = Owner(), Owner()
    assert Tables.of(first) is Tables.of(first) and Tables.of(first) is not Tables.of(second)
    assert type(Other.of(first)) is Other and len(Tables._owners) == 2 and len(Other._owners) == 1
    del first
    gc.collect()
    assert len(Tables._owners) == 1 and len(Other._owners) == 0
