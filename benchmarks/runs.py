"""What the benchmark runners (`opendesign`, `pandasplotbench`, `aescode`) share: the judge and run
arguments and a policy that is closed when the run ends (an HTTP client, a loaded model)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aesenv.kinds.web.judges import offline_judge_warning
from aesenv.models import JudgeSpec, add_judge_args as add_model_judge_args
from aesenv.rewards.service import add_ray_arguments
from policies import Policy, make_policy

log = logging.getLogger(__name__)


def add_judge_args(p: argparse.ArgumentParser) -> None:
    """The judge flags, defaulting to the VLM judge ($AESENV_JUDGE or `aesenv.models.DEFAULT_VLM_JUDGE`)."""
    add_model_judge_args(p, default=None)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """How a run goes, the same for every single-turn runner: pages at once, Ray, progress, output."""
    p.add_argument("--concurrency", type=int, default=2)
    add_ray_arguments(p)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", required=True)


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    return JudgeSpec.from_args(args).options()


def parse_checked(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse, then refuse a judge that cannot work here before any page is generated (a run whose
    every record is a masked judge failure is worse than no run), and warn about the offline one."""
    args = p.parse_args(argv)
    if problem := JudgeSpec.from_args(args).problem():
        p.error(problem)
    if args.judge == "offline":
        log.warning("%s", offline_judge_warning())
    return args


@asynccontextmanager
async def opened_policy(spec: str) -> AsyncIterator[Policy]:
    policy = make_policy(spec)
    try:
        yield policy
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            await close()
