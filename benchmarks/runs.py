"""What the benchmark runners (`opendesign`, `pandasplotbench`) share: the judge arguments and a
policy that is closed when the run ends (an HTTP client, a loaded model)."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from policies import Policy, make_policy


def add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--judge", default="offline", help="offline (default) or openai:<model> (a VLM judge)")
    p.add_argument("--judge-base-url", help="OpenAI-compatible endpoint for the judge (default OPENAI_BASE_URL)")
    p.add_argument("--judge-samples", type=int,
                   help="ask the VLM judge k times per item: median scores, and mean ± CI in the summary")


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    return {key: value for key, value in (("base_url", args.judge_base_url), ("samples", args.judge_samples))
            if value is not None}


@asynccontextmanager
async def opened_policy(spec: str) -> AsyncIterator[Policy]:
    policy = make_policy(spec)
    try:
        yield policy
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            await close()
