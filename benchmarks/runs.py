"""What the benchmark runners (`opendesign`, `pandasplotbench`) share: the judge arguments and a
policy that is closed when the run ends (an HTTP client, a loaded model)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aesenv.kinds.web.judges import default_judge, judge_setup_problem, offline_judge_warning
from policies import Policy, make_policy

log = logging.getLogger(__name__)


def add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--judge", default=default_judge(),
                   help="openai:<model> (a VLM judge; default $AESENV_JUDGE or %(default)s) or offline "
                        "(a deterministic proxy for tests and smoke runs)")
    p.add_argument("--judge-base-url", help="OpenAI-compatible endpoint for the judge (default OPENAI_BASE_URL)")
    p.add_argument("--judge-samples", type=int,
                   help="ask the VLM judge k times per item: median scores, and mean ± CI in the summary")


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    return {key: value for key, value in (("base_url", args.judge_base_url), ("samples", args.judge_samples))
            if value is not None}


def parse_checked(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse, then refuse a judge that cannot work here before any page is generated (a run whose
    every record is a masked judge failure is worse than no run), and warn about the offline one."""
    args = p.parse_args(argv)
    if problem := judge_setup_problem(args.judge, judge_options(args)):
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
