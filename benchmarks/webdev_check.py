"""Check a Webdev-Bench suite folder before anyone runs agents on it (for task authors).

For each task: the starting project must leave every requirement unsatisfied (so doing nothing
scores 0), and the reference state before each round its own requirement (so each round is
needed); the offline user must pass each round of the reference implementation (its files laid
over the start, round after round); and after the last round every item must grade 3 (so each
item can be met). Also the suite's shape: 4–5 requirements, at least `MIN_ITEMS` items,
at least one coverage item, every request naming what to look for in quotes.

    python -m benchmarks.webdev_check [SUITE_DIR] [--tasks ID,...]

Prints one line per problem and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from aesenv.kinds.project.kind import PROJECT
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.webdev.acceptance import accept
from aesenv.webdev.gate import OfflineUser, Review, quoted_labels
from aesenv.kinds.project.health import deliver
from aesenv.webdev.session import project_task
from aesenv.webdev.tasks import CompositeTask, load_suite

SUITE = Path(__file__).with_name("webdev_suite")
MIN_ITEMS = 20


def shape_problems(task: CompositeTask) -> list[str]:
    problems = []
    if len(task.items()) < MIN_ITEMS:
        problems.append(f"{len(task.items())} items, fewer than {MIN_ITEMS}")
    if not any(i.dimension == "coverage" for i in task.items()):
        problems.append("no coverage item")
    for r in task.requirements:
        if not quoted_labels(r.text):
            problems.append(f"{r.id}: the request puts nothing in quotes for the user to look for")
        if not r.solution:
            problems.append(f"{r.id}: no reference solution files (solution/r<j>/)")
    return problems


async def check_task(pipeline: RewardPipeline, task: CompositeTask) -> list[str]:
    problems = shape_problems(task)
    files = PROJECT.initial_files(project_task(task))  # what the session's env starts from
    delivery = await deliver(pipeline.backends, files, task.port)
    grades = await accept(pipeline.backends, task, delivery)
    for r in task.requirements:  # doing nothing must satisfy no requirement
        if all(g.grade == 3 for g in grades if g.requirement == r.id):
            problems.append(f"{r.id}: already satisfied by the starting project (doing nothing would score it)")
    previous = delivery.text if delivery.launched else None
    user = OfflineUser()
    for j, r in enumerate(task.requirements, 1):
        if j > 1:  # each round must be needed: the state before it leaves its requirement unsatisfied
            before = [g for g in await accept(pipeline.backends, task, delivery) if g.requirement == r.id]
            if all(g.grade == 3 for g in before):
                problems.append(f"{r.id}: already satisfied before its round, by the reference of round {j - 1}")
        files.update({p: t.encode("utf-8") for p, t in r.solution.items()})
        delivery = await deliver(pipeline.backends, files, task.port)
        verdict = await user.review(Review(task.brief, r.text, j, delivery, previous))
        if not verdict.passed:
            problems.append(f"{r.id}: the offline user returns the reference round: {verdict.critique} "
                            f"({delivery.health.problem or delivery.console[:3]})")
        previous = delivery.text
    for g in await accept(pipeline.backends, task, delivery):
        if g.grade != 3:
            problems.append(f"{g.requirement}/{g.id}: grade {g.grade} on the reference solution: "
                            f"{g.problem or g.parts}")
    return problems


async def check(suite: Path, only: list[str] | None) -> int:
    tasks = load_suite(suite, only)
    bad = 0
    async with RewardPipeline(PipelineConfig()) as pipeline:
        for task in tasks:
            t = time.perf_counter()
            problems = await check_task(pipeline, task)
            print(f"{task.id}: {len(task.items())} items, {len(problems)} problems ({time.perf_counter() - t:.0f} s)")
            for problem in problems:
                print(f"  - {problem}")
            bad += bool(problems)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.webdev_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", default=str(SUITE))
    ap.add_argument("--tasks", default="", help="comma-separated task ids")
    args = ap.parse_args(argv)
    return asyncio.run(check(Path(args.suite), [t for t in args.tasks.split(",") if t] or None))


if __name__ == "__main__":
    sys.exit(main())
